//! The reference's JSON files, read as its own parser reads them, and the folders that hold
//! them listed in a fixed order.
use crate::fields::Problems;
use inferbench_contract::lenient_json;
use serde_json::Value;
use std::path::Path;

/// Reads a JSON file as the reference's parser would (`NaN` and `Infinity` are accepted).
pub fn read_json(dir: &Path, rel: &str, p: &mut Problems) -> Option<(Vec<u8>, Value)> {
    let bytes = match std::fs::read(dir.join(rel)) {
        Ok(bytes) => bytes,
        Err(e) => {
            p.push(format!("{rel}: cannot read: {e}"));
            return None;
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => Some((bytes, value)),
        Err(e) => match std::str::from_utf8(&bytes).ok().and_then(lenient_json::parse) {
            Some(value) => Some((bytes, value)),
            None => {
                p.push(format!("{rel}:{}: not valid JSON ({e})", e.line()));
                None
            }
        },
    }
}

/// A field that is text or a number, as text (`sse_id: 7` is `"7"`); anything else is none.
pub fn opt_text(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

pub fn sorted_json_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fixture::put;

    #[test]
    fn json_is_read_as_the_reference_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "nan.json", b"{\"x\": NaN, \"y\": 1}");
        put(dir.path(), "bad.json", b"{\n  \"x\": \n}");
        let mut p = Problems::default();
        let (bytes, value) = read_json(dir.path(), "nan.json", &mut p).expect("NaN is the reference's JSON");
        assert_eq!(bytes, b"{\"x\": NaN, \"y\": 1}");
        assert_eq!((value["x"].clone(), value["y"].clone()), (Value::Null, Value::from(1)));
        assert!(p.is_empty(), "{:?}", p.lines);
        assert!(read_json(dir.path(), "bad.json", &mut p).is_none());
        assert!(read_json(dir.path(), "absent.json", &mut p).is_none());
        assert_eq!(p.lines.len(), 2, "{:?}", p.lines);
        assert!(p.lines[0].starts_with("bad.json:3: not valid JSON ("), "{}", p.lines[0]);
        assert!(p.lines[1].starts_with("absent.json: cannot read: "), "{}", p.lines[1]);
    }

    #[test]
    fn only_visible_json_files_are_listed_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.json", "a.json", ".hidden.json", "notes.txt", "c.json.tmp"] {
            put(dir.path(), name, b"{}");
        }
        std::fs::create_dir_all(dir.path().join("folder.json")).unwrap();
        assert_eq!(sorted_json_files(dir.path()), ["a.json", "b.json"]);
        assert!(sorted_json_files(&dir.path().join("absent")).is_empty());
    }
}
