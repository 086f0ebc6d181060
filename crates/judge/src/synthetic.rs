//! Synthetic text of an exact length in o200k_base tokens: a load workflow's prompts
//! (`ib-schedule`) and, asked to ignore its end of sequence, the simulated model's answers
//! (`ib-sim`).
//!
//! The text is words of [`WORDS`], separated by single spaces. Each word is one o200k_base
//! token both on its own (the text's first word) and after a space (every other word), and
//! o200k_base's pre-tokenizer splits text before each space-led run of letters, so no token
//! ever spans two words: the text of n words is exactly n tokens, whatever the words, and the
//! first k words of it are exactly its first k tokens (a shared prefix stays a prefix of the
//! tokens too). [`check_words`] verifies the words with the tokenizer; the tests encode
//! texts of many lengths.
use crate::tokenizer;
use inferbench_stats::rng::SplitMix64;

/// Common English words, each one o200k_base token with and without a leading space (checked
/// by [`check_words`]). 256 of them: a word is 8 bits of the generator's draw.
pub const WORDS: [&str; 256] = [
    "with", "that", "this", "from", "your", "have", "will", "more", "part", "they", "their", "self", "time", "over",
    "about", "work", "which", "else", "also", "some", "data", "when", "other", "year", "like", "name", "need", "just",
    "been", "true", "there", "them", "real", "what", "value", "would", "false", "type", "were", "into", "make",
    "result", "list", "than", "first", "back", "start", "only", "form", "look", "best", "under", "most", "find",
    "person", "help", "people", "want", "long", "final", "read", "test", "every", "should", "know", "well", "hand",
    "then", "through", "user", "right", "pass", "very", "these", "product", "case", "good", "down", "where", "post",
    "high", "after", "even", "file", "mark", "many", "much", "could", "while", "said", "used", "number", "event",
    "here", "play", "print", "item", "last", "program", "word", "text", "current", "great", "does", "sign", "because",
    "home", "such", "free", "before", "process", "online", "take", "child", "view", "break", "size", "show", "model",
    "using", "design", "check", "world", "week", "book", "think", "business", "again", "system", "call", "cent",
    "point", "being", "made", "each", "place", "found", "open", "support", "create", "super", "line", "order",
    "service", "method", "state", "next", "life", "request", "those", "follow", "care", "expect", "same", "local",
    "site", "style", "really", "main", "must", "game", "object", "direct", "fact", "around", "rest", "between",
    "market", "term", "error", "still", "plus", "without", "month", "offer", "going", "both", "project", "page",
    "report", "build", "love", "client", "come", "color", "cost", "second", "content", "path", "port", "full",
    "access", "effect", "company", "message", "stand", "head", "feel", "level", "document", "team", "health", "sure",
    "invest", "field", "things", "small", "table", "protect", "response", "always", "consider", "present", "change",
    "perform", "range", "during", "keep", "review", "little", "three", "water", "input", "interest", "better", "room",
    "website", "link", "power", "school", "hard", "code", "catch", "plan", "family", "double", "success", "within",
    "date", "account", "left", "group", "might", "control", "services", "special", "provide", "count", "total", "base",
    "another", "image", "area", "since", "body", "give",
];

/// Words drawn for `tokens` tokens of text, appended to `out`. `first` says the words begin the
/// text (the first is written without a leading space); otherwise every word is written after
/// a space, continuing whatever words of this module `out` already ends with.
pub fn push_words(out: &mut String, tokens: usize, first: bool, rng: &mut SplitMix64) {
    out.reserve(tokens * 7);
    for index in 0..tokens {
        if index > 0 || !first {
            out.push(' ');
        }
        out.push_str(WORDS[rng.below(WORDS.len())]);
    }
}

/// A text of exactly `tokens` o200k_base tokens, its words drawn from `rng`.
pub fn text(tokens: usize, rng: &mut SplitMix64) -> String {
    let mut out = String::new();
    push_words(&mut out, tokens, true, rng);
    out
}

/// A text of exactly `tokens` tokens that begins with `prefix` (a [`text`] of `prefix_tokens`
/// tokens, `prefix_tokens < tokens`), the rest drawn from `rng`.
pub fn with_prefix(prefix: &str, prefix_tokens: usize, tokens: usize, rng: &mut SplitMix64) -> String {
    let mut out = String::with_capacity(prefix.len() + (tokens - prefix_tokens) * 7);
    out.push_str(prefix);
    push_words(&mut out, tokens - prefix_tokens, prefix_tokens == 0, rng);
    out
}

/// Checks that every word is one token with and without a leading space, and that words
/// joined by spaces encode to one token each: what the exact lengths rest on. `Err` names
/// the first word that is not.
pub fn check_words() -> Result<(), String> {
    for word in WORDS {
        for form in [word.to_string(), format!(" {word}")] {
            let n = tokenizer::count(&form);
            if n != 1 {
                return Err(format!("the synthetic word `{form}` is {n} o200k_base tokens, not 1"));
            }
        }
    }
    let all = WORDS.join(" ");
    let n = tokenizer::count(&all);
    if n != WORDS.len() {
        return Err(format!("the {} synthetic words joined by spaces are {n} o200k_base tokens", WORDS.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_single_tokens_distinct_and_merge_with_nothing() {
        check_words().unwrap();
        let distinct: std::collections::BTreeSet<&str> = WORDS.iter().copied().collect();
        assert_eq!(distinct.len(), WORDS.len());
        assert!(WORDS.iter().all(|w| w.bytes().all(|b| b.is_ascii_lowercase())));
    }

    #[test]
    fn every_text_encodes_to_exactly_its_length() {
        let mut rng = SplitMix64::new(7);
        let lengths = (0..=64).chain([100, 127, 128, 129, 255, 256, 512, 1000, 1024, 2048, 4095, 8000, 8192]);
        for tokens in lengths {
            let t = text(tokens, &mut rng);
            assert_eq!(tokenizer::count(&t), tokens, "{tokens} tokens: {t:.80}");
            assert!(!t.starts_with(' ') && !t.ends_with(' '), "{tokens}");
        }
        assert_eq!(text(1, &mut rng).split(' ').count(), 1);
        assert_eq!(text(0, &mut rng), "");
    }

    #[test]
    fn a_shared_prefix_is_the_first_tokens_of_every_text_that_has_it() {
        let mut prefix_rng = SplitMix64::new(1);
        for (prefix_tokens, tokens) in [(0, 1), (1, 2), (1, 1000), (2, 3), (100, 101), (100, 512), (4000, 8000)] {
            let prefix = text(prefix_tokens, &mut prefix_rng);
            let mut rng = SplitMix64::new(tokens as u64);
            let a = with_prefix(&prefix, prefix_tokens, tokens, &mut rng);
            let b = with_prefix(&prefix, prefix_tokens, tokens, &mut rng);
            for t in [&a, &b] {
                assert_eq!(tokenizer::count(t), tokens, "{prefix_tokens} + {tokens}");
                assert!(t.starts_with(&prefix));
                let ids = tokenizer::encode(t);
                assert_eq!(ids[..prefix_tokens], tokenizer::encode(&prefix)[..], "the prefix's tokens lead");
            }
            assert_ne!(a, b, "the rest is drawn");
        }
    }

    #[test]
    fn the_words_are_a_function_of_the_generator() {
        assert_eq!(text(300, &mut SplitMix64::new(3)), text(300, &mut SplitMix64::new(3)));
        assert_ne!(text(300, &mut SplitMix64::new(3)), text(300, &mut SplitMix64::new(4)));
    }
}
