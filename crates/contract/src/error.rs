//! Typed errors of the contract crate. Binaries add context with `anyhow`.
//!
//! The variant decides the exit code (`cli::exit_for`), so it is chosen where the failure is
//! understood: a function that *reads* an input reports a missing, unreadable or corrupt file
//! as bad input (exit 3: the user gave a wrong path or a damaged file, and nothing was
//! written); a function that *writes* an output reports its I/O failure as [`Error::Io`]
//! (exit 1: the stage failed).
use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file is malformed; the message names the file, line or row, and field.
    #[error("{0}")]
    BadInput(String),
    /// Several input violations, all reported at once (one per line).
    #[error("{} problem(s) found:\n{}", .0.len(), .0.join("\n"))]
    Invalid(Vec<String>),
    /// A bound input of the run differs from what `lock.json` recorded, or a derived file
    /// was not derived from the run's current files (stale, or from another run).
    #[error("{0}")]
    LockMismatch(String),
    /// Another process holds the run's writer lock.
    #[error("{0}")]
    Busy(String),
    /// An input file could not be read (missing, a directory, no permission): bad input.
    #[error("{path}: cannot read: {source}")]
    Unreadable { path: PathBuf, source: std::io::Error },
    /// Writing an output failed (disk full, permission, missing directory): the stage failed.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Encoding a table for writing failed: a bug or an unrepresentable row, never the input.
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

impl Error {
    /// An I/O failure while writing `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    /// An input `path` that could not be read.
    pub fn unreadable(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Unreadable { path: path.into(), source }
    }
    pub fn bad(message: impl Into<String>) -> Self {
        Error::BadInput(message.into())
    }
    /// Whether this error means the user's input is wrong (exit 3), as opposed to the stage
    /// failing (exit 1) or the run's lock disagreeing (exit 4).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Error::BadInput(_) | Error::Invalid(_) | Error::Unreadable { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_failures_are_bad_input_and_writing_failures_are_not() {
        let gone = || std::io::Error::from(std::io::ErrorKind::NotFound);
        assert!(Error::unreadable("spec.yaml", gone()).is_bad_input());
        assert!(Error::bad("x").is_bad_input());
        assert!(Error::Invalid(vec!["a".into()]).is_bad_input());
        assert!(!Error::io("out.json", gone()).is_bad_input());
        assert!(!Error::Parquet { path: "t".into(), message: "m".into() }.is_bad_input());
        assert!(!Error::LockMismatch("l".into()).is_bad_input());
        let text = Error::unreadable("spec.yaml", gone()).to_string();
        assert!(text.starts_with("spec.yaml: cannot read: "), "{text}");
    }
}
