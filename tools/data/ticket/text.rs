//! Touches to a ticket's text: sentence starts capitalised after the templates are filled, a
//! verb's -ing form for a workflow, and the one typing slip a hurried user makes.
use inferbench_stats::rng::SplitMix64;

/// Sentence starts upper-cased after template filling ("the app is..." at a start), but
/// not inside e-mail addresses or file names ("acme.com").
pub(super) fn fix_caps(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut start = true;
    let mut prev = ' ';
    for c in text.chars() {
        if start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
            start = false;
        } else {
            out.push(c);
            if !c.is_whitespace() && !matches!(c, '"' | '(') {
                start = false;
            }
        }
        if c.is_whitespace() && matches!(prev, '.' | '!' | '?') {
            start = true;
        }
        prev = c;
    }
    out
}

/// One common typing slip in a word that never decides the triage.
pub(super) fn add_typo(text: &str, seed: u64) -> String {
    const SLIPS: &[(&str, &str)] = &[
        (" the ", " teh "),
        ("don't", "dont"),
        ("can't", "cant"),
        ("doesn't", "doesnt"),
        ("I'm", "Im"),
        (" receive", " recieve"),
        ("really", "realy"),
        ("because", "becuase"),
        ("which", "wich"),
        ("definitely", "definately"),
        (" until", " untill"),
        ("separate", "seperate"),
        ("colleagues", "collegues"),
        ("there's", "theres"),
        ("it's", "its"),
    ];
    let mut rng = SplitMix64::new(seed);
    let mut options: Vec<&(&str, &str)> = SLIPS.iter().filter(|(a, _)| text.contains(a)).collect();
    if options.is_empty() {
        return text.to_string();
    }
    rng.shuffle(&mut options);
    let (from, to) = options[0];
    text.replacen(from, to, 1)
}

/// "send invoices" as "sending invoices".
pub(super) fn gerund(phrase: &str) -> String {
    let (verb, rest) = phrase.split_once(' ').unwrap_or((phrase, ""));
    let ing = match verb {
        "log" => "logging".to_string(),
        "run" => "running".to_string(),
        "submit" => "submitting".to_string(),
        "enrol" => "enrolling".to_string(),
        "fulfil" => "fulfilling".to_string(),
        v if v.ends_with('e') && !v.ends_with("ee") => format!("{}ing", &v[..v.len() - 1]),
        v => format!("{v}ing"),
    };
    format!("{ing} {rest}").trim_end().to_string()
}
