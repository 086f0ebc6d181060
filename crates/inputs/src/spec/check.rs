//! The machinery behind the spec's validation: a declarative tree of every accepted key
//! ([`Rule`], [`Key`]; the tree itself is in `keys.rs`), a walker that reports every unknown,
//! missing or constrained-but-different key at once, and a [`Reader`] that extracts and checks
//! the values inferbench acts upon. Every problem is one line `file: key.path: what is wrong`.
use serde_json::Value;
use std::fmt;

/// What a key's value must be.
pub enum Rule {
    /// A mapping with exactly these keys; a key outside the list is an error.
    Map(&'static [Key]),
    /// Free text: any string. inferbench neither reads nor checks its meaning.
    Text,
    /// Free text: a list of strings.
    TextList,
    /// Informational, but constrained: inferbench implements exactly this value, and a spec
    /// asking for another one is refused (the `&str` says what inferbench does instead).
    Is(Const, &'static str),
    /// Informational: a boolean whose either value describes what inferbench does (the
    /// `&str` says why it changes nothing); anything but a boolean is refused.
    Flag(&'static str),
    /// Acted upon: `Spec::from_value` reads it with a [`Reader`] and checks its value.
    Acted,
}

/// One accepted key.
pub struct Key {
    pub name: &'static str,
    pub required: bool,
    pub rule: Rule,
}

/// A key that must be present.
pub const fn req(name: &'static str, rule: Rule) -> Key {
    Key { name, required: true, rule }
}

/// A key that may be absent (its value is then what inferbench does anyway).
pub const fn opt(name: &'static str, rule: Rule) -> Key {
    Key { name, required: false, rule }
}

/// A constant a constrained key must equal.
pub enum Const {
    Bool(bool),
    Int(i64),
    Str(&'static str),
    Strs(&'static [&'static str]),
    /// A structured value, as JSON text (mappings compare regardless of key order).
    Json(&'static str),
}

impl Const {
    fn value(&self) -> Value {
        match self {
            Const::Bool(b) => Value::Bool(*b),
            Const::Int(n) => Value::from(*n),
            Const::Str(s) => Value::from(*s),
            Const::Strs(list) => Value::from(list.to_vec()),
            Const::Json(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        }
    }
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Const::Str(s) => write!(f, "`{s}`"),
            Const::Strs(list) => write!(f, "[{}]", list.join(", ")),
            other => write!(f, "{}", other.value()),
        }
    }
}

/// Equality of YAML-read values where `1` and `1.0` are the same number (YAML writes both).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A value as it appears in a message: compact JSON, cut short.
pub fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

/// The problems found so far, each prefixed with the file.
pub struct Problems {
    file: String,
    pub list: Vec<String>,
}

impl Problems {
    pub fn new(file: String) -> Problems {
        Problems { file, list: Vec::new() }
    }

    pub fn push(&mut self, at: &str, what: impl fmt::Display) {
        let at = if at.is_empty() { "(top level)" } else { at };
        self.list.push(format!("{}: {at}: {what}", self.file));
    }
}

/// Checks `value` against `rule` at key path `at`, reporting every problem.
pub fn walk(value: &Value, at: &str, rule: &Rule, problems: &mut Problems) {
    match rule {
        Rule::Map(keys) => {
            let Some(map) = value.as_object() else {
                return problems.push(at, format!("expected a mapping, found {}", shown(value)));
            };
            for (name, v) in map {
                match keys.iter().find(|k| k.name == name) {
                    Some(key) => walk(v, &join(at, name), &key.rule, problems),
                    None => problems.push(&join(at, name), "unknown key"),
                }
            }
            for key in keys.iter().filter(|k| k.required && !map.contains_key(k.name)) {
                problems.push(&join(at, key.name), "missing");
            }
        }
        Rule::Text => {
            if !value.is_string() {
                problems.push(at, format!("expected a string, found {}", shown(value)));
            }
        }
        Rule::TextList => {
            if !value.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                problems.push(at, format!("expected a list of strings, found {}", shown(value)));
            }
        }
        Rule::Is(constant, why) => {
            if !same(value, &constant.value()) {
                problems.push(at, format!("must be {constant}, found {}: {why}", shown(value)));
            }
        }
        Rule::Flag(why) => {
            if !value.is_boolean() {
                problems.push(at, format!("expected true or false, found {}: {why}", shown(value)));
            }
        }
        Rule::Acted => {}
    }
}

/// Reads the values inferbench acts upon. A missing key reads as `None` without a problem
/// (the walker already reported a required one); a value of the wrong type or out of range is
/// reported and reads as `None`.
pub struct Reader<'a> {
    root: &'a Value,
    pub problems: Problems,
}

impl<'a> Reader<'a> {
    pub fn new(root: &'a Value, problems: Problems) -> Reader<'a> {
        Reader { root, problems }
    }

    /// The value at a dotted key path (the spec's own keys never contain dots; vendor names
    /// may, so the vendor reader takes their values in hand: [`Reader::string_of`]).
    pub fn get(&self, at: &str) -> Option<&'a Value> {
        at.split('.').try_fold(self.root, |v, key| v.as_object()?.get(key))
    }

    pub fn push(&mut self, at: &str, what: impl fmt::Display) {
        self.problems.push(at, what);
    }

    /// A non-empty string without surrounding whitespace.
    pub fn string(&mut self, at: &str) -> Option<String> {
        let value = self.get(at)?;
        self.string_of(at, value)
    }

    /// [`Reader::string`] of a value already in hand, reported at `at`: for keys that may
    /// contain dots themselves (a vendor named `Z.AI`), which a dotted path cannot reach.
    pub fn string_of(&mut self, at: &str, value: &Value) -> Option<String> {
        match value.as_str() {
            Some(s) if !s.trim().is_empty() && s.trim() == s => Some(s.to_string()),
            Some(_) => {
                self.push(
                    at,
                    format!("expected a non-empty string without surrounding spaces, found {}", shown(value)),
                );
                None
            }
            None => {
                self.push(at, format!("expected a string, found {}", shown(value)));
                None
            }
        }
    }

    /// A finite number, checked by `check` (which says what is wrong).
    pub fn number(&mut self, at: &str, check: impl Fn(f64) -> Result<(), String>) -> Option<f64> {
        let value = self.get(at)?;
        self.number_of(at, value, check)
    }

    /// [`Reader::number`] of a value already in hand, reported at `at`.
    pub fn number_of(&mut self, at: &str, value: &Value, check: impl Fn(f64) -> Result<(), String>) -> Option<f64> {
        // YAML's .nan and .inf reach serde_json as null: not a number to accept either way.
        let Some(x) = value.as_f64().filter(|x| x.is_finite()) else {
            self.push(at, format!("expected a finite number, found {}", shown(value)));
            return None;
        };
        match check(x) {
            Ok(()) => Some(x),
            Err(why) => {
                self.push(at, why);
                None
            }
        }
    }

    /// An integer in `min..=max`.
    pub fn integer(&mut self, at: &str, min: u64, max: u64) -> Option<u64> {
        let value = self.get(at)?;
        match value.as_u64() {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.push(at, format!("expected an integer from {min} to {max}, found {}", shown(value)));
                None
            }
        }
    }

    /// A list of strings.
    pub fn strings(&mut self, at: &str) -> Option<Vec<String>> {
        let value = self.get(at)?;
        match value.as_array().map(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()) {
            Some(Some(list)) => Some(list),
            _ => {
                self.push(at, format!("expected a list of strings, found {}", shown(value)));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TREE: Rule = Rule::Map(&[
        req("a", Rule::Map(&[req("b", Rule::Acted), opt("c", Rule::Is(Const::Int(1), "one only"))])),
        opt("note", Rule::Text),
        opt("list", Rule::TextList),
        opt("flag", Rule::Is(Const::Bool(true), "always")),
        opt("shape", Rule::Is(Const::Json(r#"{"x": "string", "y": [1, 2]}"#), "fixed")),
        opt("either", Rule::Flag("informational")),
    ]);

    fn problems(value: Value) -> Vec<String> {
        let mut p = Problems::new("s.yaml".into());
        walk(&value, "", &TREE, &mut p);
        p.list
    }

    #[test]
    fn unknown_and_missing_keys_are_named_by_their_path_all_at_once() {
        let found = problems(json!({"a": {"x": 1, "c": 1}, "b": 2}));
        assert_eq!(found, ["s.yaml: a.x: unknown key", "s.yaml: a.b: missing", "s.yaml: b: unknown key"]);
        assert_eq!(problems(json!([])), ["s.yaml: (top level): expected a mapping, found []"]);
    }

    #[test]
    fn constrained_keys_accept_their_value_and_say_why_otherwise() {
        assert!(problems(json!({"a": {"b": 0, "c": 1.0}, "flag": true})).is_empty(), "1.0 is 1");
        let found = problems(json!({"a": {"b": 0, "c": 2}, "flag": "yes"}));
        assert_eq!(found[0], "s.yaml: a.c: must be 1, found 2: one only");
        assert_eq!(found[1], r#"s.yaml: flag: must be true, found "yes": always"#);
        assert!(problems(json!({"a": {"b": 0}, "shape": {"y": [1, 2.0], "x": "string"}})).is_empty());
        assert_eq!(problems(json!({"a": {"b": 0}, "shape": {"x": "string"}})).len(), 1);
    }

    #[test]
    fn flags_take_either_boolean_and_nothing_else() {
        assert!(problems(json!({"a": {"b": 0}, "either": true})).is_empty());
        assert!(problems(json!({"a": {"b": 0}, "either": false})).is_empty());
        assert_eq!(
            problems(json!({"a": {"b": 0}, "either": 1})),
            ["s.yaml: either: expected true or false, found 1: informational"]
        );
    }

    #[test]
    fn free_text_must_still_be_text() {
        assert!(problems(json!({"a": {"b": 0}, "note": "anything", "list": ["x", "y"]})).is_empty());
        let found = problems(json!({"a": {"b": 0}, "note": 3, "list": ["x", 1]}));
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn the_reader_checks_types_and_ranges_and_ignores_absent_keys() {
        let root = json!({"s": " padded", "n": -1, "i": 7, "f": null, "l": ["a", 2]});
        let mut r = Reader::new(&root, Problems::new("s.yaml".into()));
        assert_eq!(r.string("s"), None);
        assert_eq!(r.number("n", |x| if x >= 0.0 { Ok(()) } else { Err("negative".into()) }), None);
        assert_eq!(r.integer("i", 1, 5), None);
        assert_eq!(r.number("f", |_| Ok(())), None);
        assert_eq!(r.strings("l"), None);
        assert_eq!(r.string("absent.key"), None);
        assert_eq!(r.problems.list.len(), 5, "{:?}", r.problems.list);
        assert_eq!(r.problems.list[1], "s.yaml: n: negative");
        assert!(r.problems.list[3].contains("f: expected a finite number, found null"));
    }
}
