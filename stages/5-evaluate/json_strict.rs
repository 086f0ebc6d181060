//! The strict JSON parser of the reference evaluator (`seed-runner.md` §9.1).
//!
//! An answer scores only if it is exactly one JSON value, optionally surrounded by JSON
//! whitespace: no markdown fences, no repair, no coercion. On top of what `serde_json` already
//! refuses (`NaN`, `Infinity`, `-Infinity`, comments, trailing commas, control characters in
//! strings), duplicate object keys are refused at any depth: `serde_json::Value` would silently
//! keep the last one, so a model that answers `{"answer":"a","answer":"b"}` could score with
//! whichever value happens to win. Integers stay distinct from floats (`12` vs `12.0`), which
//! the contract rubric's type table needs.
//!
//! Where CPython's `json` reads a number or string differently from `serde_json`, the text is
//! first rewritten so that it scores as CPython's reading does
//! ([`inferbench_contract::lenient_json::python_numbers_and_strings`]): `-0` is the integer 0
//! (so it is a valid `int | null` contract field); an integer beyond 64 bits is an integer that
//! equals no gold (a wrong integer, `incorrect_result`, not a float); an overflowing exponent
//! (`1e400`, Python's infinity) is a float that equals no gold (`schema_invalid` in an integer
//! field); a lone UTF-16 surrogate escape is U+FFFD (a string that equals no gold). The
//! verdicts are CPython's; `parsed_output` shows the rewritten value for the last three.
//!
//! One departure is left, on an input no real answer contains: nesting deeper than 128 levels
//! is malformed here (Python raises `RecursionError`).
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Why an answer is not exactly one JSON value. The message is for diagnostics only: every
/// variant classifies as `invalid_result` / `malformed_json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// Nothing but JSON whitespace.
    Empty,
    /// Not a JSON value, or an invalid one (syntax error, `NaN`, duplicate key, …).
    Invalid(String),
    /// A valid value followed by anything other than JSON whitespace.
    Trailing,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::Empty => f.write_str("assistant content is empty"),
            Malformed::Invalid(why) => write!(f, "not valid JSON: {why}"),
            Malformed::Trailing => f.write_str("more than one JSON value"),
        }
    }
}

/// JSON's own whitespace (RFC 8259 `ws`); Unicode spaces such as NBSP are not whitespace here.
fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Parses `text` as exactly one strict JSON value.
pub fn parse(text: &str) -> Result<Value, Malformed> {
    let text = text.trim_start_matches(is_json_whitespace);
    if text.is_empty() {
        return Err(Malformed::Empty);
    }
    let rewritten = inferbench_contract::lenient_json::python_numbers_and_strings(text);
    let text = rewritten.as_deref().unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(text);
    let value = StrictValue.deserialize(&mut de).map_err(|e| Malformed::Invalid(e.to_string()))?;
    // `end` accepts only trailing JSON whitespace, the same set we skipped in front.
    de.end().map_err(|_| Malformed::Trailing)?;
    Ok(value)
}

/// A `serde_json::Value` seed that refuses duplicate object keys.
#[derive(Clone, Copy)]
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // serde_json never yields a non-finite float (it rejects `NaN` and overflowing
        // exponents itself), but refuse one rather than invent a value if it ever did.
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("non-finite number"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        // Keys arrive decoded, so `"a"` and `"\u0061"` are the same key, as in CPython.
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate object key {key:?}")));
            }
            let value = map.next_value_seed(StrictValue)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invalid(text: &str) -> String {
        match parse(text) {
            Err(Malformed::Invalid(why)) => why,
            other => panic!("{text:?}: expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn surrounding_json_whitespace_is_accepted() {
        assert_eq!(parse(" \t\r\n{\"answer\": \"Ada\"}\n \r\t").unwrap(), json!({"answer": "Ada"}));
    }

    #[test]
    fn empty_and_whitespace_only_content_is_empty() {
        assert_eq!(parse(""), Err(Malformed::Empty));
        assert_eq!(parse(" \n\t\r"), Err(Malformed::Empty));
        assert_eq!(Malformed::Empty.to_string(), "assistant content is empty");
    }

    #[test]
    fn non_json_whitespace_is_not_skipped() {
        // NBSP before the value: CPython's decoder fails on it too.
        assert!(matches!(parse("\u{a0}{}"), Err(Malformed::Invalid(_))));
        // ... and after the value it is trailing data.
        assert_eq!(parse("{}\u{a0}"), Err(Malformed::Trailing));
    }

    #[test]
    fn markdown_fences_are_not_stripped() {
        invalid("```json\n{\"answer\": \"Ada\"}\n```");
    }

    #[test]
    fn two_values_are_trailing_data() {
        assert_eq!(parse("{\"a\":1} {\"a\":2}"), Err(Malformed::Trailing));
        assert_eq!(parse("1 2"), Err(Malformed::Trailing));
        assert_eq!(parse("{}x"), Err(Malformed::Trailing));
        assert_eq!(Malformed::Trailing.to_string(), "more than one JSON value");
    }

    #[test]
    fn non_standard_constants_are_refused() {
        for text in ["NaN", "Infinity", "-Infinity", "{\"renewal_term_months\": NaN}", "[Infinity]"] {
            invalid(text);
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert!(invalid(r#"{"answer":"a","answer":"b"}"#).contains("duplicate object key \"answer\""));
        assert!(invalid(r#"{"x":[{"k":1,"k":1}]}"#).contains("duplicate object key \"k\""));
        assert!(invalid(r#"{"x":{"y":{"k":1,"j":2,"k":3}}}"#).contains("duplicate"));
        // The same key spelled with an escape is still the same key.
        assert!(invalid(r#"{"a":1,"\u0061":2}"#).contains("duplicate"));
        // Equal keys in sibling objects are not duplicates.
        assert_eq!(parse(r#"[{"k":1},{"k":2}]"#).unwrap(), json!([{"k": 1}, {"k": 2}]));
    }

    #[test]
    fn integers_stay_distinct_from_floats() {
        let v = parse(r#"{"i":12,"f":12.0,"e":1e2,"n":-3,"big":18446744073709551615}"#).unwrap();
        assert!(v["i"].is_i64() || v["i"].is_u64());
        assert!(v["f"].is_f64());
        assert!(v["e"].is_f64());
        assert_eq!(v["n"].as_i64(), Some(-3));
        assert_eq!(v["big"].as_u64(), Some(u64::MAX));
    }

    #[test]
    fn any_value_type_parses() {
        assert_eq!(parse("null").unwrap(), Value::Null);
        assert_eq!(parse(" \"Ada\" ").unwrap(), json!("Ada"));
        assert_eq!(parse("[true, false]").unwrap(), json!([true, false]));
    }

    #[test]
    fn syntax_errors_are_invalid() {
        invalid("{\"answer\": \"Ada\",}");
        invalid("{'answer': 'Ada'}");
        invalid("\"unterminated");
    }

    #[test]
    fn numbers_and_strings_read_as_cpython_reads_them() {
        let v = parse(r#"{"zero":-0,"big":123456789012345678901234567890,"inf":1e400,"s":"a\ud800"}"#).unwrap();
        assert!(v["zero"].is_i64() && v["zero"].as_i64() == Some(0), "-0 is the integer 0");
        assert!(v["big"].is_u64(), "a huge integer is still an integer");
        assert!(v["inf"].is_f64(), "an overflowing exponent is a float");
        assert_eq!(v["s"], "a\u{fffd}");
    }
}
