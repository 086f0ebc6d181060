//! A JSON document with the exact text of each of its numbers, by RFC 6901 pointer.
//!
//! The page's `data-value` must be the number as the file spells it. Reading a number into an
//! f64 and printing it again does not always give that text back (serde_json's default float
//! parser may land one ulp away, and then prints the neighbour), so the literal is taken from
//! the file itself: a small scanner walks the (already parsed, so valid) JSON text and records
//! every number and null under its pointer.
use serde_json::Value;
use std::collections::HashMap;

/// A parsed document and the literal text of its numbers and nulls.
pub struct Doc {
    pub value: Value,
    literals: HashMap<String, String>,
}

impl Doc {
    pub fn parse(text: &str) -> serde_json::Result<Doc> {
        Doc::parse_keeping(text, "", &|_| true)
    }

    /// The document with only the entries of its top-level list `list` whose index `keep`
    /// accepts: each other entry is read and dropped, null in `value` and without literals, so
    /// that the list keeps its length and every kept entry its pointer. Memory then follows
    /// what the page shows, not the document: 1,000 providers have 499,500 pairs
    /// (comparisons.json 240 MB), of which the page shows a few hundred.
    pub fn parse_keeping(text: &str, list: &str, keep: &dyn Fn(usize) -> bool) -> serde_json::Result<Doc> {
        let value = if list.is_empty() {
            serde_json::from_str(text)?
        } else {
            let mut reader = serde_json::Deserializer::from_str(text);
            let value = serde::de::DeserializeSeed::deserialize(Pruned { list, keep }, &mut reader)?;
            reader.end()?;
            value
        };
        let mut literals = HashMap::new();
        let prefix = if list.is_empty() { String::new() } else { format!("/{}/", token(list)) };
        let mut scanner = Scanner { s: text.as_bytes(), i: 0, prefix: &prefix, keep };
        scanner.value(&mut String::new(), &mut literals);
        Ok(Doc { value, literals })
    }

    /// The document's own text of the number or null at `pointer`.
    pub fn literal(&self, pointer: &str) -> Option<&str> {
        self.literals.get(pointer).map(String::as_str)
    }
}

/// `key` escaped as one RFC 6901 reference token.
pub fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A top-level object whose list `list` keeps only the entries `keep` accepts (see
/// [`Doc::parse_keeping`]); any other top-level value is refused.
struct Pruned<'k> {
    list: &'k str,
    keep: &'k dyn Fn(usize) -> bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Pruned<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if key == self.list {
                map.next_value_seed(Entries { keep: self.keep })?
            } else {
                map.next_value::<Value>()?
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// A list whose entries `keep` refuses become null.
struct Entries<'k> {
    keep: &'k dyn Fn(usize) -> bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for Entries<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Entries<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON array")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(entry) = seq.next_element::<Value>()? {
            out.push(if (self.keep)(out.len()) { entry } else { Value::Null });
        }
        Ok(Value::Array(out))
    }
}

struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
    /// `/list/` of [`Doc::parse_keeping`] (empty: every literal is kept).
    prefix: &'a str,
    keep: &'a dyn Fn(usize) -> bool,
}

impl Scanner<'_> {
    /// Records the literal at `path` unless it is inside a dropped entry.
    fn record(&self, path: &str, literal: String, out: &mut HashMap<String, String>) {
        if !self.prefix.is_empty() {
            if let Some(rest) = path.strip_prefix(self.prefix) {
                let index = rest.split('/').next().and_then(|i| i.parse::<usize>().ok());
                if index.is_some_and(|i| !(self.keep)(i)) {
                    return;
                }
            }
        }
        out.insert(path.to_string(), literal);
    }

    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// The value at the cursor, recorded under `path` when it is a number or null.
    fn value(&mut self, path: &mut String, out: &mut HashMap<String, String>) {
        self.ws();
        let Some(&c) = self.s.get(self.i) else { return };
        match c {
            b'{' => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b'}') => {
                            self.i += 1;
                            return;
                        }
                        Some(b',') => self.i += 1,
                        Some(b'"') => {
                            let key = self.string();
                            self.ws();
                            self.i += 1; // ':'
                            let len = path.len();
                            path.push('/');
                            path.push_str(&token(&key));
                            self.value(path, out);
                            path.truncate(len);
                        }
                        _ => return,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut index = 0;
                loop {
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b']') => {
                            self.i += 1;
                            return;
                        }
                        Some(b',') => self.i += 1,
                        Some(_) => {
                            let len = path.len();
                            path.push('/');
                            path.push_str(&index.to_string());
                            self.value(path, out);
                            path.truncate(len);
                            index += 1;
                        }
                        None => return,
                    }
                }
            }
            b'"' => {
                self.string();
            }
            b't' => self.i += 4,
            b'f' => self.i += 5,
            b'n' => {
                self.i += 4;
                self.record(path, "null".to_string(), out);
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    self.i += 1;
                }
                let literal = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.record(path, literal, out);
            }
        }
    }

    /// The string at the cursor, decoded (keys only need their value).
    fn string(&mut self) -> String {
        let start = self.i;
        self.i += 1;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        let raw = std::str::from_utf8(&self.s[start..self.i.min(self.s.len())]).unwrap_or("\"\"");
        serde_json::from_str(raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_keeps_its_text_under_its_pointer() {
        let text = r#"{"a": [1.0, -2.5e-3, null, {"b/c~": 466.212315}], "s": "x\"]}", "t": true, "n": 12}"#;
        let doc = Doc::parse(text).unwrap();
        assert_eq!(doc.literal("/a/0"), Some("1.0"));
        assert_eq!(doc.literal("/a/1"), Some("-2.5e-3"));
        assert_eq!(doc.literal("/a/2"), Some("null"));
        assert_eq!(doc.literal("/a/3/b~1c~0"), Some("466.212315"));
        assert_eq!(doc.literal("/n"), Some("12"));
        assert_eq!(doc.literal("/s"), None);
        assert!(doc.value.pointer("/a/3/b~1c~0").is_some());
    }

    #[test]
    fn a_list_keeps_only_the_entries_asked_for_and_its_length() {
        let text = r#"{"pairs": [{"d": 1.50}, {"d": 2.50}, 7, {"d": null}], "pairs2": [3.0], "n": 4.0}"#;
        let doc = Doc::parse_keeping(text, "pairs", &|i| i % 2 == 1).unwrap();
        assert_eq!(doc.value["pairs"].as_array().map(Vec::len), Some(4));
        assert_eq!((doc.value["pairs"][0].clone(), doc.value["pairs"][2].clone()), (Value::Null, Value::Null));
        assert_eq!((doc.literal("/pairs/0/d"), doc.literal("/pairs/2")), (None, None));
        assert_eq!((doc.literal("/pairs/1/d"), doc.literal("/pairs/3/d")), (Some("2.50"), Some("null")));
        assert_eq!(doc.value["pairs"][1]["d"], 2.5);
        // Another list whose name starts the same, and the rest of the document, are whole.
        assert_eq!((doc.literal("/pairs2/0"), doc.literal("/n")), (Some("3.0"), Some("4.0")));
        assert_eq!(doc.value["pairs2"][0], 3.0);
        // Keeping every entry is the whole document.
        let all = Doc::parse_keeping(text, "pairs", &|_| true).unwrap();
        assert_eq!((all.value, all.literals), (Doc::parse(text).unwrap().value, Doc::parse(text).unwrap().literals));
        // A list that is not an array, or trailing text, is an error as in a whole parse.
        assert!(Doc::parse_keeping(r#"{"pairs": 3}"#, "pairs", &|_| true).is_err());
        assert!(Doc::parse_keeping(r#"{"pairs": []} x"#, "pairs", &|_| true).is_err());
    }
}
