//! Typed reads from a reference JSON document, each failure a problem naming the file and the
//! field (`raw/full/req-….json: stream_events[3].monotonic_offset_ms: expected a finite
//! number ≥ 0, found "x"`). Problems are collected, so one import reports every defect of the
//! source at once.
use serde_json::Value;

/// The problems found so far, one line each.
#[derive(Debug, Default)]
pub struct Problems {
    pub lines: Vec<String>,
}

/// At most this many problems are listed; the rest are counted.
const LISTED: usize = 50;

impl Problems {
    pub fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The problems as the error a stage reports (exit 3).
    pub fn into_error(mut self) -> inferbench_contract::Error {
        let extra = self.lines.len().saturating_sub(LISTED);
        self.lines.truncate(LISTED);
        if extra > 0 {
            self.lines.push(format!("… and {extra} more"));
        }
        inferbench_contract::Error::Invalid(self.lines)
    }
}

/// One JSON document of the source, with the name it is reported under.
#[derive(Clone)]
pub struct Doc<'a> {
    pub file: &'a str,
    pub value: &'a Value,
    /// Where `value` sits in the document (`stream_events[3]`); empty at the top.
    pub path: String,
}

fn describe(value: Option<&Value>) -> String {
    match value {
        None => "nothing (the field is missing)".to_string(),
        Some(v) => {
            let text = v.to_string();
            if text.len() > 80 {
                format!("{}…", inferbench_judge::stream::cap(&text, 80))
            } else {
                text
            }
        }
    }
}

impl<'a> Doc<'a> {
    pub fn new(file: &'a str, value: &'a Value) -> Doc<'a> {
        Doc { file, value, path: String::new() }
    }

    /// `file: path.key` for messages.
    pub fn at(&self, key: &str) -> String {
        match (self.path.is_empty(), key.is_empty()) {
            (true, true) => self.file.to_string(),
            (true, false) => format!("{}: {key}", self.file),
            (false, true) => format!("{}: {}", self.file, self.path),
            (false, false) => format!("{}: {}.{key}", self.file, self.path),
        }
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.value.get(key)
    }

    fn wrong(&self, p: &mut Problems, key: &str, expected: &str) {
        p.push(format!("{}: expected {expected}, found {}", self.at(key), describe(self.get(key))));
    }

    pub fn string(&self, p: &mut Problems, key: &str) -> Option<&'a str> {
        match self.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            _ => {
                self.wrong(p, key, "a non-empty string");
                None
            }
        }
    }

    /// A string or null.
    pub fn opt_string(&self, p: &mut Problems, key: &str) -> Option<Option<&'a str>> {
        match self.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s)),
            _ => {
                self.wrong(p, key, "a string or null");
                None
            }
        }
    }

    pub fn u64(&self, p: &mut Problems, key: &str) -> Option<u64> {
        match self.get(key).and_then(Value::as_u64) {
            Some(n) => Some(n),
            None => {
                self.wrong(p, key, "a non-negative integer");
                None
            }
        }
    }

    pub fn bool(&self, p: &mut Problems, key: &str) -> Option<bool> {
        match self.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => {
                self.wrong(p, key, "true or false");
                None
            }
        }
    }

    /// A finite number ≥ 0.
    pub fn offset(&self, p: &mut Problems, key: &str) -> Option<f64> {
        match self.get(key).and_then(Value::as_f64) {
            Some(x) if x.is_finite() && x >= 0.0 => Some(x),
            _ => {
                self.wrong(p, key, "a finite number ≥ 0");
                None
            }
        }
    }

    pub fn object(&self, p: &mut Problems, key: &str) -> Option<Doc<'a>> {
        match self.get(key) {
            Some(v @ Value::Object(_)) => Some(self.child(key, v)),
            _ => {
                self.wrong(p, key, "an object");
                None
            }
        }
    }

    pub fn array(&self, p: &mut Problems, key: &str) -> Option<&'a Vec<Value>> {
        match self.get(key) {
            Some(Value::Array(items)) => Some(items),
            _ => {
                self.wrong(p, key, "a list");
                None
            }
        }
    }

    /// An object whose values are all strings (headers).
    pub fn string_map(&self, p: &mut Problems, key: &str) -> Option<Vec<(String, String)>> {
        match self.get(key) {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(Value::Object(map)) => {
                let mut out = Vec::with_capacity(map.len());
                for (name, value) in map {
                    match value {
                        Value::String(s) => out.push((name.clone(), s.clone())),
                        _ => {
                            p.push(format!(
                                "{}.{name}: expected a string, found {}",
                                self.at(key),
                                describe(Some(value))
                            ));
                            return None;
                        }
                    }
                }
                Some(out)
            }
            _ => {
                self.wrong(p, key, "an object of strings");
                None
            }
        }
    }

    /// The document at `key` of this one.
    pub fn child(&self, key: &str, value: &'a Value) -> Doc<'a> {
        let path = if self.path.is_empty() { key.to_string() } else { format!("{}.{key}", self.path) };
        Doc { file: self.file, value, path }
    }

    /// The `index`-th element of the list at `key`.
    pub fn element(&self, key: &str, index: usize, value: &'a Value) -> Doc<'a> {
        self.child(&format!("{key}[{index}]"), value)
    }
}
