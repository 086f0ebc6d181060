//! The one tokenizer every provider is measured with: o200k_base (tiktoken-rs, embedded
//! vocabulary, works offline). Special-token text such as `<|endoftext|>` is encoded as
//! ordinary text, so a response that contains it is scored rather than failing.
use inferbench_contract::canonical::hex;
use sha2::{Digest, Sha256};
use tiktoken_rs::CoreBPE;

pub const ENCODING: &str = "o200k_base";
pub const IMPLEMENTATION: &str = "tiktoken-rs 0.12";

fn bpe() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// Builds the tokenizer now (a tenth of a second: its vocabulary and its regex), so that a
/// stage can do it beside other work instead of in the first count.
pub fn warm() {
    bpe();
}

/// Number of o200k_base tokens in `text`, special-token text counted as ordinary text.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        bpe().encode_ordinary(text).len()
    }
}

/// Whether `text` contains the text of one of the encoding's special tokens: what Python
/// tiktoken's default `encode` refuses (the reference's tokenizer error, README
/// "Definitions"); only the reference's scoring rules act on it.
pub fn has_special_token_text(text: &str) -> bool {
    text.contains("<|") && bpe().special_tokens().iter().any(|s| text.contains(s))
}

/// Where each o200k_base token of `text` ends, as a byte offset into `text` (ordinary
/// encoding): the last is `text.len()`, and their number is [`count`]'s.
pub fn token_ends(text: &str) -> Vec<usize> {
    let mut end = 0;
    encode(text)
        .into_iter()
        .map(|token| {
            end += bpe().decode_bytes(&[token]).map_or(0, |b| b.len());
            end
        })
        .collect()
}

/// The token ids of `text` (ordinary encoding).
pub fn encode(text: &str) -> Vec<u32> {
    bpe().encode_ordinary(text)
}

/// The bytes of the given token ids.
pub fn decode_bytes(tokens: &[u32]) -> Vec<u8> {
    bpe().decode_bytes(tokens).unwrap_or_default()
}

/// SHA-256 over the vocabulary, as the reference runner defines it: mergeable ranks in rank
/// order, each as 8-byte big-endian length, the token bytes, 8-byte big-endian rank; then the
/// special tokens sorted by text, each as 8-byte big-endian length, UTF-8 bytes, rank.
pub fn vocabulary_sha256() -> String {
    let mut hasher = Sha256::new();
    // Asked once: the tokenizer builds the set anew on every call.
    let special_tokens = bpe().special_tokens();
    let mut rank: u32 = 0;
    while let Ok(bytes) = bpe().decode_bytes(&[rank]) {
        if special_tokens.iter().any(|s| s.as_bytes() == bytes.as_slice()) {
            break;
        }
        hasher.update((bytes.len() as u64).to_be_bytes());
        hasher.update(&bytes);
        hasher.update(u64::from(rank).to_be_bytes());
        rank += 1;
    }
    let mut specials: Vec<(&str, u32)> =
        special_tokens.into_iter().map(|s| (s, bpe().encode_with_special_tokens(s)[0])).collect();
    specials.sort();
    for (text, rank) in specials {
        hasher.update((text.len() as u64).to_be_bytes());
        hasher.update(text.as_bytes());
        hasher.update(u64::from(rank).to_be_bytes());
    }
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_known_o200k_values() {
        assert_eq!(encode("Hello, world!"), vec![13225, 11, 2375, 0]);
        assert_eq!(count(""), 0);
        assert_eq!(count("{\"answer\":\"Ada\"}"), encode("{\"answer\":\"Ada\"}").len());
    }

    #[test]
    fn token_ends_tile_the_text() {
        for text in ["", "{\"answer\":\"Ada Lovelace\"}", "naïve café — 東京 🚀", "<|endoftext|> plain"] {
            let ends = token_ends(text);
            assert_eq!(ends.len(), count(text), "{text}");
            assert!(ends.windows(2).all(|w| w[0] < w[1]), "{text}: {ends:?}");
            assert_eq!(ends.last().copied().unwrap_or(0), text.len(), "{text}");
        }
    }

    #[test]
    fn special_token_text_is_ordinary_text() {
        // Python tiktoken's default encode raises here; we count it as plain text.
        assert!(count("<|endoftext|>") > 1);
        assert!(has_special_token_text("a<|endoftext|>b") && has_special_token_text("<|endofprompt|>"));
        assert!(!has_special_token_text("<|im_start|>") && !has_special_token_text("a < b | c"));
    }
}
