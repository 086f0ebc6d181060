//! JSON as the reference runner's parser (Python's `json.loads`) accepts it.
//!
//! Python accepts a few things strict JSON does not: the literals `NaN`, `Infinity` and
//! `-Infinity`, numbers too large for an f64 (`1e999` becomes infinity), and `\u` escapes of
//! lone UTF-16 surrogates. A provider that puts such a value in a field the timing never reads
//! (a log probability, a debug id) has still sent a valid stream, so those payloads must not
//! end the request as invalid. They are parsed here by rewriting just those tokens (to `null`,
//! and lone surrogates to U+FFFD) and parsing again; the raw text in the log is never changed.
use serde_json::Value;

/// Parses `text`; `None` when even the tolerant reading finds no JSON value.
pub fn parse(text: &str) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        Err(_) => serde_json::from_str(&repair(text)?).ok(),
    }
}

/// The non-standard literals Python's parser accepts (outside strings).
const PYTHON_LITERALS: [&str; 3] = ["NaN", "Infinity", "-Infinity"];

/// `text` with the Python-only tokens rewritten, or `None` when there is nothing to rewrite.
fn repair(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                changed |= repair_string(&text[i..end], &mut out);
                i = end;
            }
            _ if PYTHON_LITERALS.iter().any(|l| text[i..].starts_with(l)) => {
                let literal = PYTHON_LITERALS.iter().find(|l| text[i..].starts_with(*l)).map_or(1, |l| l.len());
                out.push_str("null");
                i += literal;
                changed = true;
            }
            b'-' | b'0'..=b'9' => {
                let end = number_end(bytes, i);
                let token = &text[i..end];
                // An integer of any size parses (as an f64 when it exceeds 64 bits); only a
                // float whose exponent overflows is refused by the strict parser.
                if token.parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push_str("null");
                    changed = true;
                } else {
                    out.push_str(token);
                }
                i = end.max(i + 1);
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                out.push(ch);
                i += ch.len_utf8().max(1);
            }
        }
    }
    changed.then_some(out)
}

/// `text` with the numbers and strings that Python's parser reads differently from
/// `serde_json`'s rewritten to values that score as Python's do, or `None` when there is
/// nothing to rewrite (the strict evaluator's reading, `seed-runner.md` §9.1):
/// - `-0` is Python's integer 0 (serde_json reads the float −0.0);
/// - an integer beyond 64 bits is a Python integer (serde_json reads a float): it becomes the
///   64-bit integer of its sign's extreme, an integer that equals no gold value;
/// - a float whose exponent overflows is Python's infinity (serde_json refuses it): it becomes
///   the largest finite float of its sign, a float that equals no gold value;
/// - a `\u` escape of a lone UTF-16 surrogate is a Python string character (a Rust string
///   cannot hold one): it becomes U+FFFD.
///
/// `NaN`, `Infinity` and `-Infinity` are left alone: the strict evaluator refuses them.
pub fn python_numbers_and_strings(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                changed |= repair_string(&text[i..end], &mut out);
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = number_end(bytes, i);
                let token = &text[i..end];
                let integer = !token.contains(['.', 'e', 'E']);
                let negative = token.starts_with('-');
                let replacement = if token == "-0" {
                    Some("0")
                } else if integer && token.parse::<i64>().is_err() && token.parse::<u64>().is_err() && token.len() > 1 {
                    token[usize::from(negative)..].bytes().all(|b| b.is_ascii_digit()).then_some(if negative {
                        "-9223372036854775808"
                    } else {
                        "18446744073709551615"
                    })
                } else if !integer && token.parse::<f64>().is_ok_and(f64::is_infinite) {
                    Some(if negative { "-1.7976931348623157e308" } else { "1.7976931348623157e308" })
                } else {
                    None
                };
                match replacement {
                    Some(r) => {
                        out.push_str(r);
                        changed = true;
                    }
                    None => out.push_str(token),
                }
                i = end.max(i + 1);
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                out.push(ch);
                i += ch.len_utf8().max(1);
            }
        }
    }
    changed.then_some(out)
}

/// The index just past the string literal that starts at `start` (or the end of the text).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
        i += 1;
    }
    i
}

/// Copies a string literal, replacing `\u` escapes of lone surrogates with `\ufffd`; returns
/// whether anything was replaced.
fn repair_string(literal: &str, out: &mut String) -> bool {
    let mut changed = false;
    let mut rest = literal;
    while let Some(at) = rest.find("\\u") {
        // An escaped backslash (`\\u…`) is not an escape: count the backslashes before it.
        let backslashes = rest[..at].bytes().rev().take_while(|b| *b == b'\\').count();
        let unit = rest.get(at + 2..at + 6).and_then(|h| u16::from_str_radix(h, 16).ok());
        out.push_str(&rest[..at]);
        match unit {
            Some(u) if backslashes % 2 == 0 && (0xD800..0xDC00).contains(&u) => {
                let low = rest.get(at + 6..at + 12).filter(|n| n.starts_with("\\u"));
                let paired = low
                    .and_then(|n| u16::from_str_radix(&n[2..], 16).ok())
                    .is_some_and(|l| (0xDC00..0xE000).contains(&l));
                if paired {
                    out.push_str(&rest[at..at + 12]);
                    rest = &rest[at + 12..];
                } else {
                    out.push_str("\\ufffd");
                    rest = &rest[at + 6..];
                    changed = true;
                }
            }
            Some(u) if backslashes % 2 == 0 && (0xDC00..0xE000).contains(&u) => {
                out.push_str("\\ufffd");
                rest = &rest[at + 6..];
                changed = true;
            }
            _ => {
                out.push_str("\\u");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_json_parses_unchanged() {
        assert_eq!(parse(r#"{"a":[1,2.5,"x"]}"#), Some(json!({"a": [1, 2.5, "x"]})));
        assert_eq!(repair(r#"{"a":"NaN"}"#), None, "inside a string NaN is text");
    }

    #[test]
    fn python_literals_and_overflowing_numbers_become_null() {
        let v = parse(r#"{"logprob":NaN,"hi":Infinity,"lo":-Infinity,"big":1e999,"n":-2e400,"x":1}"#).unwrap();
        assert_eq!(v, json!({"logprob": null, "hi": null, "lo": null, "big": null, "n": null, "x": 1}));
        let v = parse(r#"{"id":123456789012345678901234567890,"choices":[{"delta":{"content":"NaN"}}]}"#).unwrap();
        assert!(v["id"].is_f64(), "a huge integer parses as a float");
        assert_eq!(v["choices"][0]["delta"]["content"], "NaN");
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let v = parse(r#"{"a":"x\ud800y","b":"\udc00","c":"\ud83d\ude00","d":"\\ud800"}"#).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "\u{fffd}");
        assert_eq!(v["c"], "😀", "a valid pair is kept");
        assert_eq!(v["d"], "\\ud800", "an escaped backslash is not an escape");
    }

    #[test]
    fn numbers_and_strings_are_rewritten_to_score_as_pythons() {
        let rewrite = |t: &str| python_numbers_and_strings(t);
        assert_eq!(
            rewrite(r#"{"a":-0,"b":-0.0,"c":0,"d":"-0"}"#).as_deref(),
            Some(r#"{"a":0,"b":-0.0,"c":0,"d":"-0"}"#)
        );
        assert_eq!(rewrite("[123456789012345678901234567890]").as_deref(), Some("[18446744073709551615]"));
        assert_eq!(rewrite("[-123456789012345678901234567890]").as_deref(), Some("[-9223372036854775808]"));
        assert_eq!(rewrite("[1e400,-2E999]").as_deref(), Some("[1.7976931348623157e308,-1.7976931348623157e308]"));
        assert_eq!(rewrite(r#"["\ud800"]"#).as_deref(), Some(r#"["\ufffd"]"#));
        for unchanged in [r#"{"a":12,"b":12.5,"c":-3}"#, "NaN", "[Infinity]", "[1e308]", "18446744073709551615"] {
            assert_eq!(rewrite(unchanged), None, "{unchanged}");
        }
    }

    #[test]
    fn what_python_refuses_stays_refused() {
        for bad in ["{\"a\":1,}", "{'a':1}", "not json", "{\"a\":", "nan", ""] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}

/// Property tests: any text, and JSON mangled the ways a provider mangles it. The reader never
/// panics; strict JSON reads as `serde_json` reads it; a Python-only literal in place of a
/// value keeps the document readable (as `null`); and each rewrite keeps the text it was given
/// when there is nothing to rewrite. `PROPTEST_CASES` sets the number of cases.
#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn config(cases: u32) -> proptest::test_runner::Config {
        let mut config = proptest::test_runner::Config::default();
        if std::env::var_os("PROPTEST_CASES").is_none() {
            config.cases = cases;
        }
        config.failure_persistence = None;
        config
    }

    /// JSON-ish text: the tokens that matter to the rewrites, glued at random.
    fn jsonish() -> impl Strategy<Value = String> {
        let token = prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("\\u".to_string()),
            Just("\\ud800".to_string()),
            Just("\\udc00".to_string()),
            Just("NaN".to_string()),
            Just("-Infinity".to_string()),
            Just("1e999".to_string()),
            Just("-0".to_string()),
            Just("123456789012345678901234567890".to_string()),
            Just("é".to_string()),
            Just("😀".to_string()),
            "[a-z0-9.eE+-]{1,4}",
        ];
        prop::collection::vec(token, 0..24).prop_map(|t| t.concat())
    }

    /// A JSON value with strings, numbers and nesting.
    fn value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            (-1e300f64..1e300).prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map("[a-z]{0,3}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(config(256))]

        #[test]
        fn any_text_is_read_without_a_panic(text in prop_oneof![any::<String>(), jsonish()]) {
            let _ = parse(&text);
            let _ = python_numbers_and_strings(&text);
        }

        #[test]
        fn strict_json_reads_as_serde_json_reads_it(v in value()) {
            let text = serde_json::to_string(&v).unwrap();
            prop_assert_eq!(parse(&text), serde_json::from_str::<serde_json::Value>(&text).ok());
        }

        #[test]
        fn a_python_literal_in_place_of_a_value_reads_as_null(
            v in value(),
            literal in prop_oneof![Just("NaN"), Just("Infinity"), Just("-Infinity"), Just("1e999")],
        ) {
            let text = serde_json::json!({"x": v, "lp": "LITERAL"}).to_string().replace("\"LITERAL\"", literal);
            let read = parse(&text);
            prop_assert!(read.is_some(), "{}", text);
            prop_assert_eq!(&read.unwrap()["lp"], &serde_json::Value::Null);
        }
    }
}
