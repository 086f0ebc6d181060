//! Atomic publication of derived files: temporary file in the same directory, fsync, rename.
//! A reader (or `make`) never sees a half-written output, and a failed stage leaves the
//! previous output untouched.
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically. The parent directory must exist.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // A path without a file name is the caller's bug, not the user's input: a write failure.
    let name = path
        .file_name()
        .ok_or_else(|| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path")))?;
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Serialises `value` as pretty JSON with a trailing newline and writes it atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    // Our own value failing to serialise is a failure of the stage (exit 1), not bad input.
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    text.push('\n');
    write(path, text.as_bytes())
}

/// Reads a whole input file, naming it in the error. A file that cannot be read (missing, a
/// directory, no permission) is bad input: the caller was given a wrong path.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::unreadable(path, e))
}

/// Reads and parses a JSON file, naming the file, line and column of a syntax error.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::bad(format!("{}:{}: {e}", path.display(), e.line())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_content_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
    }

    #[test]
    fn write_into_missing_directory_fails_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/out.json");
        let err = write(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("missing/out.json"), "{err}");
        assert!(matches!(err, Error::Io { .. }), "a failed write is a failure of the stage, not bad input");
    }

    #[test]
    fn reading_a_missing_or_broken_input_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(&dir.path().join("absent.json")).unwrap_err();
        assert!(matches!(err, Error::Unreadable { .. }), "{err:?}");
        assert!(err.is_bad_input());
        assert!(read(dir.path()).unwrap_err().is_bad_input(), "a directory is not a readable file");
        std::fs::write(dir.path().join("torn.json"), b"{\"a\": [1,").unwrap();
        let err = read_json::<serde_json::Value>(&dir.path().join("torn.json")).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("torn.json:1:"), "{err}");
    }
}
