//! JSON Lines: an append-only writer and a tolerant reader.
//!
//! The writer emits each record as one `write` of `line + "\n"`, so a killed process loses at
//! most the line being written. The reader accepts exactly that failure: an unterminated last
//! line is a torn write and is skipped; any other unparsable line is an error naming the file
//! and line, because it means the log was edited or corrupted.
use inferbench_contract::{Error, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Appends JSON records to a file, one per line.
pub struct AppendWriter {
    path: PathBuf,
    file: File,
}

impl AppendWriter {
    /// Opens `path` for appending, creating it if needed.
    pub fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::io(path, e))?;
        Ok(AppendWriter { path: path.to_path_buf(), file })
    }

    /// Writes one record as one line. The bytes reach the kernel before this returns.
    pub fn append<T: Serialize>(&mut self, record: &T) -> Result<()> {
        // Our own record failing to serialise is a failure of the stage (exit 1), not bad input.
        let mut line = serde_json::to_vec(record)
            .map_err(|e| Error::io(&self.path, std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(|e| Error::io(&self.path, e))
    }

    /// Writes lines already serialised (each ending in `\n`) with one `write`: a caller that
    /// must have many records in the kernel before it acts pays one system call, not one each.
    pub fn append_lines(&mut self, lines: &[u8]) -> Result<()> {
        if !lines.is_empty() && !lines.ends_with(b"\n") {
            let err = std::io::Error::new(std::io::ErrorKind::InvalidInput, "a batch of lines must end with a newline");
            return Err(Error::io(&self.path, err));
        }
        self.file.write_all(lines).map_err(|e| Error::io(&self.path, e))
    }

    /// A second handle on the file, to flush it to stable storage from another thread while
    /// this one keeps appending.
    pub fn sync_handle(&self) -> Result<File> {
        self.file.try_clone().map_err(|e| Error::io(&self.path, e))
    }

    /// Flushes the file to stable storage (fsync).
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io(&self.path, e))
    }
}

/// What a tolerant read found.
#[derive(Debug)]
pub struct ReadLog<T> {
    pub records: Vec<T>,
    /// The bytes of an unterminated last line that was skipped, if any.
    pub torn_tail: Option<usize>,
}

/// Reads every complete line of `path` as a `T`.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<ReadLog<T>> {
    let bytes = std::fs::read(path).map_err(|e| Error::unreadable(path, e))?;
    parse(path, &bytes)
}

/// Parses JSON Lines from memory; `path` is used in error messages only.
pub fn parse<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<ReadLog<T>> {
    let mut records = Vec::new();
    let mut rest = bytes;
    let mut line_no = 0;
    while let Some(end) = rest.iter().position(|&b| b == b'\n') {
        line_no += 1;
        let line = &rest[..end];
        rest = &rest[end + 1..];
        let record =
            serde_json::from_slice(line).map_err(|e| Error::bad(format!("{}:{line_no}: {e}", path.display())))?;
        records.push(record);
    }
    let torn_tail = (!rest.is_empty()).then_some(rest.len());
    Ok(ReadLog { records, torn_tail })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn appended_records_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut w = AppendWriter::open(&path).unwrap();
        w.append(&json!({"seq": 0})).unwrap();
        w.append(&json!({"seq": 1})).unwrap();
        drop(w);
        let mut w = AppendWriter::open(&path).unwrap();
        w.append(&json!({"seq": 2})).unwrap();
        let log: ReadLog<Value> = read(&path).unwrap();
        let seqs: Vec<_> = log.records.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, vec![0, 1, 2]);
        assert!(log.torn_tail.is_none());
    }

    #[test]
    fn torn_last_line_is_skipped_and_reported() {
        let log: ReadLog<Value> = parse(Path::new("x.jsonl"), b"{\"a\":1}\n{\"a\":").unwrap();
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.torn_tail, Some(5));
    }

    #[test]
    fn corrupt_middle_line_names_file_and_line() {
        let err = parse::<Value>(Path::new("x.jsonl"), b"{\"a\":1}\nnot json\n{\"a\":2}\n").unwrap_err();
        assert!(err.to_string().starts_with("x.jsonl:2:"), "{err}");
    }
}
