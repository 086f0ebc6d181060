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
        let value: Value = serde_json::from_str(text)?;
        let mut literals = HashMap::new();
        let mut scanner = Scanner { s: text.as_bytes(), i: 0 };
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

struct Scanner<'a> {
    s: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
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
                out.insert(path.clone(), "null".to_string());
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && matches!(self.s[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    self.i += 1;
                }
                out.insert(path.clone(), String::from_utf8_lossy(&self.s[start..self.i]).into_owned());
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
}
