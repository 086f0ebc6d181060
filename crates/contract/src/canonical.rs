//! Canonical JSON and SHA-256: the hashing every lock, selection and provenance field uses.
//!
//! Canonical JSON = keys sorted recursively by code point, compact separators, raw UTF-8
//! (the reference runner's convention, so `{"b":1,"a":[1.5,"é"]}` hashes the same here).
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of any byte slice.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first 12 characters of a hash, for messages. Never panics, whatever a hand-edited
/// file put where a hash belongs.
pub fn short_hash(hash: &str) -> &str {
    hash.char_indices().nth(12).map_or(hash, |(end, _)| &hash[..end])
}

/// Returns `value` with every object's keys in sorted order.
pub fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                out.insert(key.clone(), sorted(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Canonical JSON text of `value`.
pub fn to_string(value: &Value) -> String {
    serde_json::to_string(&sorted(value)).expect("a serde_json::Value always serialises")
}

/// SHA-256 hex of the canonical JSON of `value`.
pub fn hash(value: &Value) -> String {
    sha256_hex(to_string(value).as_bytes())
}

/// SHA-256 of a file, for provenance (`inputs` maps).
pub fn file_sha256(path: &std::path::Path) -> crate::Result<String> {
    file_digest(path).map(|(_, sha256)| sha256)
}

/// Size and SHA-256 of a file.
pub fn file_digest(path: &std::path::Path) -> crate::Result<(u64, String)> {
    let file = std::fs::File::open(path).map_err(|e| crate::Error::unreadable(path, e))?;
    digest(file, path)
}

/// Length and SHA-256 of everything `reader` yields (the file at `path`, or what a decoder
/// makes of it): every hash of a file is taken here.
pub fn digest(mut reader: impl std::io::Read, path: &std::path::Path) -> crate::Result<(u64, String)> {
    // Streamed through a fixed buffer: an event log segment can be many gigabytes.
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                hasher.update(&buffer[..n]);
                total += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(crate::Error::unreadable(path, e)),
        }
    }
    Ok((total, hex(&hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_matches_the_reference_vector() {
        // seed-runner.md Appendix A, computed with CPython.
        let value = json!({"b": 1, "a": [1.5, "é"]});
        assert_eq!(to_string(&value), "{\"a\":[1.5,\"é\"],\"b\":1}");
        assert_eq!(hash(&value), "b3aa7c2c75e6eda68896ca65edd78b023f766c052f625885b86d88bfa1f1a585");
    }

    #[test]
    fn nested_keys_are_sorted() {
        let value = json!({"z": {"y": 1, "x": [{"b": 2, "a": 1}]}});
        assert_eq!(to_string(&value), r#"{"z":{"x":[{"a":1,"b":2}],"y":1}}"#);
    }

    #[test]
    fn short_hashes_cut_on_characters() {
        assert_eq!(short_hash(&"ab".repeat(32)), "abababababab");
        assert_eq!(short_hash("é".repeat(20).as_str()), "é".repeat(12));
        assert_eq!(short_hash("abc"), "abc");
    }

    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
