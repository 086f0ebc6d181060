//! Credentials: read from the process environment, else from a `.env` file (process wins),
//! used only to build request headers, and scrubbed from everything that is logged.
use inferbench_contract::lenient_json;
use inferbench_contract::vocab::WireApi;
use inferbench_inputs::providers::{Auth, Provider};
use std::collections::BTreeMap;
use std::path::Path;

pub const REDACTED: &str = "<redacted>";

/// The `KEY=VALUE` pairs of a `.env` file (comments, blank lines and `export ` ignored;
/// values may be quoted; an unquoted value ends at ` #`). Only the names asked for are kept.
pub fn read_env_file(path: &Path, wanted: &[&str]) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(path) else { return BTreeMap::new() };
    let mut found = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim();
        if line.starts_with('#') || !wanted.contains(&key) {
            continue;
        }
        let value = value.trim();
        let quoted = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')));
        // An unquoted value ends at an inline comment (` # …`), as dotenv reads it.
        let value = quoted.unwrap_or_else(|| value.split(" #").next().unwrap_or(value).trim_end());
        if !value.is_empty() {
            found.insert(key.to_string(), value.to_string());
        }
    }
    found
}

/// The credential values of one provider, by variable name.
#[derive(Clone, Default)]
pub struct Credentials {
    values: BTreeMap<String, String>,
    /// False for the placeholder values of simulated providers: nothing to hide.
    secret: bool,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.values.keys()).finish()
    }
}

/// Shorter values are not redacted: replacing every `ab` in a stream would destroy it, and
/// a credential that short protects nothing.
const MIN_REDACTED_LEN: usize = 4;

impl Credentials {
    /// Looks up every variable the provider needs; returns the names that are missing.
    pub fn resolve(provider: &Provider, env_file: &BTreeMap<String, String>) -> (Credentials, Vec<String>) {
        let mut values = BTreeMap::new();
        let mut missing = Vec::new();
        for name in provider.credential_names() {
            let value = std::env::var(name).ok().filter(|v| !v.is_empty()).or_else(|| env_file.get(name).cloned());
            match value {
                Some(v) => {
                    values.insert(name.to_string(), v);
                }
                None => missing.push(name.to_string()),
            }
        }
        (Credentials { values, secret: true }, missing)
    }

    /// One secret credential, for unit tests.
    #[cfg(test)]
    pub fn for_tests(value: &str) -> Credentials {
        Credentials { values: BTreeMap::from([("K".to_string(), value.to_string())]), secret: true }
    }

    /// Placeholder credentials for simulated providers, used when none are set.
    pub fn simulated(provider: &Provider) -> Credentials {
        let values =
            provider.credential_names().into_iter().map(|n| (n.to_string(), "simulated".to_string())).collect();
        Credentials { values, secret: false }
    }

    /// The auth headers to send (real values) and to log (redacted) on `api`: a bearer
    /// credential is `Authorization: Bearer …` on OpenAI's APIs and `x-api-key` on Anthropic's.
    pub fn headers(&self, provider: &Provider, api: WireApi) -> Vec<(String, String)> {
        let get = |name: &str| self.values.get(name).cloned().unwrap_or_default();
        match (&provider.auth, api) {
            (Auth::Bearer { env }, WireApi::Messages) => vec![("x-api-key".to_string(), get(env))],
            (Auth::Bearer { env }, _) => vec![("Authorization".to_string(), format!("Bearer {}", get(env)))],
            (Auth::Headers { headers }, _) => headers.iter().map(|(h, env)| (h.clone(), get(env))).collect(),
        }
    }

    fn secrets(&self) -> impl Iterator<Item = &str> {
        self.values.values().map(String::as_str).filter(|v| self.secret && v.len() >= MIN_REDACTED_LEN)
    }

    /// Whether `text` holds a credential, in clear or behind encodings: JSON escapes
    /// (`\u0073k-…`), escapes of escapes (an answer whose text is JSON with escapes, inside an
    /// SSE payload), percent-encoding (`sk%2D…`, as a URL or a header may carry it), and any
    /// mix of them, up to [`DECODING_DEPTH`] decodings deep.
    pub fn found_in(&self, text: &str) -> bool {
        if self.secrets().next().is_none() {
            return false;
        }
        // The text itself is looked at in place: the decoded layers are the only copies.
        let mut layer: Vec<std::borrow::Cow<'_, str>> = vec![std::borrow::Cow::Borrowed(text)];
        for depth in 0..=DECODING_DEPTH {
            if layer.iter().any(|t| self.secrets().any(|v| t.contains(v))) {
                return true;
            }
            if depth == DECODING_DEPTH {
                break;
            }
            let mut next: Vec<std::borrow::Cow<'_, str>> = Vec::new();
            for t in &layer {
                if t.contains('\\') {
                    next.push(json_unescape(t).into());
                }
                if t.contains('%') {
                    next.push(percent_decode(t).into());
                }
            }
            next.retain(|t| !layer.contains(t));
            next.dedup();
            if next.is_empty() {
                return false;
            }
            layer = next;
        }
        false
    }

    /// `text` with every credential replaced by `<redacted>`; the flag says whether anything
    /// was. A credential hidden behind encodings is found too: a JSON text (read as the
    /// reference's parser reads it) is then re-serialised with its decoded strings (and keys)
    /// redacted (a string that still holds one behind escapes is replaced whole), and any other
    /// text is replaced whole, since its encoded form cannot be cut out reliably.
    pub fn redact(&self, text: String) -> (String, bool) {
        if !self.found_in(&text) {
            // Nearly every text: handed back as it came, not copied.
            return (text, false);
        }
        let out = self.clean(text);
        if !self.found_in(&out) {
            return (out, true);
        }
        if let Some(value) = lenient_json::parse(&out) {
            let json = serde_json::to_string(&self.redact_value(value)).unwrap_or_default();
            if !self.found_in(&json) {
                return (json, true);
            }
        }
        (format!("{REDACTED} (a credential behind escapes in a text that cannot be cut)"), true)
    }

    /// [`Credentials::redact`] of a text that was cut to a size cap: a credential the cut split
    /// leaves its start at the end of the text, which is masked too.
    pub fn redacted_capped(&self, text: &str) -> String {
        let mut out = self.redacted(text);
        if let Some(start) = self.secret_prefix_at_end(&out) {
            out.truncate(start);
            out.push_str(REDACTED);
        }
        out
    }

    /// Where a start of some credential (at least [`MIN_REDACTED_LEN`] characters of it) ends
    /// `text`, if one does: the text may be followed by the rest of the credential.
    pub fn secret_prefix_at_end(&self, text: &str) -> Option<usize> {
        self.secrets()
            .filter_map(|v| {
                (MIN_REDACTED_LEN..v.len())
                    .rev()
                    .filter(|&k| v.is_char_boundary(k))
                    .find(|&k| text.ends_with(&v[..k]))
                    .map(|k| text.len() - k)
            })
            .min()
    }

    /// Whether `text` holds a credential in clear.
    pub fn contains_clear(&self, text: &str) -> bool {
        self.secrets().any(|v| text.contains(v))
    }

    /// The length of the longest credential.
    pub fn longest(&self) -> usize {
        self.secrets().map(str::len).max().unwrap_or(0)
    }

    /// [`Credentials::redact`] without the flag.
    pub fn redacted(&self, text: &str) -> String {
        self.redact(text.to_string()).0
    }

    /// Every clear occurrence replaced.
    fn clean(&self, text: String) -> String {
        self.secrets().fold(text, |s, v| s.replace(v, REDACTED))
    }

    /// A decoded string redacted: clear occurrences cut out, and the whole string replaced
    /// when one still hides behind escapes.
    fn clean_string(&self, text: String) -> String {
        let out = self.clean(text);
        if self.found_in(&out) {
            REDACTED.to_string()
        } else {
            out
        }
    }

    fn redact_value(&self, value: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.clean_string(s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.redact_value(v)).collect()),
            Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (self.clean_string(k), self.redact_value(v))).collect())
            }
            other => other,
        }
    }
}

/// How many decodings (JSON unescaping, percent-decoding, in any order) are looked behind.
const DECODING_DEPTH: usize = 4;

/// Decodes `%XX` escapes (invalid ones are kept as they are; invalid UTF-8 becomes U+FFFD).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Decodes the JSON string escapes in `text` (`\n`, `\"`, `\uXXXX` with surrogate pairs, …),
/// leaving anything that is not a valid escape as it is.
fn json_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let simple = match chars.peek().copied() {
            Some(e @ ('"' | '\\' | '/')) => Some(e),
            Some('n') => Some('\n'),
            Some('t') => Some('\t'),
            Some('r') => Some('\r'),
            Some('b') => Some('\u{8}'),
            Some('f') => Some('\u{c}'),
            _ => None,
        };
        if let Some(decoded) = simple {
            chars.next();
            out.push(decoded);
            continue;
        }
        match chars.peek().copied() {
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16) {
                    Ok(unit) if hex.len() == 4 => {
                        chars.nth(4);
                        let low = (0xD800..0xDC00).contains(&unit).then(|| {
                            let rest: String = chars.clone().take(6).collect();
                            rest.strip_prefix("\\u").and_then(|h| u32::from_str_radix(h, 16).ok())
                        });
                        let code = match low.flatten() {
                            Some(l) if (0xDC00..0xE000).contains(&l) => {
                                chars.nth(5);
                                0x10000 + ((unit - 0xD800) << 10) + (l - 0xDC00)
                            }
                            _ => unit,
                        };
                        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                    _ => out.push('\\'),
                }
            }
            _ => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_file_parsing_keeps_only_wanted_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".env");
        std::fs::write(&path, "# c\nexport A_KEY=\"abc def\"\nB_KEY='x'\nOTHER=1\nEMPTY=\nC_KEY=sk-c # prod\n")
            .unwrap();
        let found = read_env_file(&path, &["A_KEY", "B_KEY", "EMPTY", "C_KEY"]);
        assert_eq!(found.get("C_KEY").map(String::as_str), Some("sk-c"), "an inline comment is no part of a value");
        assert_eq!(found.get("A_KEY").map(String::as_str), Some("abc def"));
        assert_eq!(found.get("B_KEY").map(String::as_str), Some("x"));
        assert!(!found.contains_key("OTHER") && !found.contains_key("EMPTY"));
    }

    #[test]
    fn redaction_removes_every_occurrence_and_debug_shows_names_only() {
        let creds = secret("sk-secret-123");
        assert_eq!(creds.redacted("Bearer sk-secret-123 / sk-secret-123"), "Bearer <redacted> / <redacted>");
        assert_eq!(creds.redact("nothing here".into()), ("nothing here".to_string(), false));
        assert!(!format!("{creds:?}").contains("sk-secret"));
    }

    fn secret(value: &str) -> Credentials {
        Credentials::for_tests(value)
    }

    #[test]
    fn escaped_credentials_are_found_and_json_is_redacted_in_its_decoded_strings() {
        let creds = secret("sk-abc1");
        let escaped = r#"{"id":"\u0073\u006b-abc1","k\u0073k-abc1":["x sk\u002dabc1 y"],"n":1}"#;
        assert!(creds.found_in(escaped));
        let (out, redacted) = creds.redact(escaped.into());
        assert!(redacted);
        assert_eq!(out, r#"{"id":"<redacted>","k<redacted>":["x <redacted> y"],"n":1}"#);
        let (out, _) = creds.redact(r#"not json sk\u002dabc1"#.into());
        assert!(!out.contains("abc1") && out.starts_with("<redacted>"), "{out}");
        assert!(creds.found_in("the answer is sk\\u002dabc1"), "an escape the model wrote in its text");
        // The model's escape inside an SSE payload: two layers.
        let doubly = r#"{"choices":[{"delta":{"content":"{\"k\":\"\\u0073k-abc1\"}"}}]}"#;
        assert!(creds.found_in(doubly));
        let (out, _) = creds.redact(doubly.into());
        assert!(!creds.found_in(&out), "{out}");
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "still JSON: {out}");
    }

    #[test]
    fn mixed_and_deep_encodings_are_found_and_lenient_json_stays_json() {
        let creds = secret("sk-abc1");
        assert!(creds.found_in("%5Cu0073k-abc1"), "a percent-encoded JSON escape");
        assert!(creds.found_in(r"\\\\u0073k-abc1"), "three layers of escaping");
        let (out, hit) = creds.redact(r#"{"choices":[{"delta":{"content":"\u0073k-abc1"}}],"lp":NaN}"#.into());
        assert!(hit && inferbench_contract::lenient_json::parse(&out).is_some(), "still JSON: {out}");
        assert!(!creds.found_in(&out), "{out}");
    }

    #[test]
    fn a_credential_cut_by_a_cap_is_masked_at_the_end() {
        let creds = secret("sk-abcdef1");
        assert_eq!(creds.redacted_capped("body sk-abcd"), "body <redacted>");
        assert_eq!(creds.redacted_capped("body sk-"), "body sk-", "three characters are no credential");
        assert_eq!(creds.secret_prefix_at_end("x sk-ab"), Some(2));
        assert_eq!(creds.secret_prefix_at_end("x sk-abcdef1"), None, "a whole one is redacted, not a prefix");
    }

    #[test]
    fn a_percent_encoded_credential_is_found() {
        let creds = secret("sk-abc1");
        assert!(creds.found_in("https://x/?key=sk%2Dabc1"));
        assert!(creds.found_in("%73%6B-abc1"));
        let (out, hit) = creds.redact("x-request-id: sk%2Dabc1".into());
        assert!(hit && !creds.found_in(&out), "{out}");
        assert_eq!(percent_decode("100% %zz %41"), "100% %zz A");
    }

    #[test]
    fn unescaping_decodes_pairs_and_leaves_broken_escapes() {
        assert_eq!(json_unescape(r#"a\n\"\u00e9\ud83d\ude00\x\u12"#), "a\n\"é😀\\x\\u12");
    }

    #[test]
    fn simulated_placeholders_and_short_values_are_not_redacted() {
        let p: Provider = serde_norway::from_str(
            "{name: p, endpoint: 'http://x', auth: {kind: bearer, env: K}, model_id: m, token_limit_field: max_tokens, price_usd_per_million_tokens: {input: 1, output: 1}}",
        )
        .unwrap();
        let creds = Credentials::simulated(&p);
        assert_eq!(creds.redact("a simulated stream".into()), ("a simulated stream".to_string(), false));
        assert_eq!(secret("ab").redact("abab".into()), ("abab".to_string(), false));
    }
}
