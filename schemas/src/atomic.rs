//! Atomic publication of derived files: temporary file in the same directory, fsync, rename.
//! A reader (or `make`) never sees a half-written output, and a failed stage leaves the
//! previous output untouched.
use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically. The parent directory must exist.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| Error::bad(format!("{}: not a file path", path.display())))?;
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
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::bad(format!("{}: {e}", path.display())))?;
    text.push('\n');
    write(path, text.as_bytes())
}

/// Reads a whole file, naming it in the error.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(path, e))
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
        let err = write(&path, b"x").unwrap_err().to_string();
        assert!(err.contains("missing/out.json"), "{err}");
    }
}
