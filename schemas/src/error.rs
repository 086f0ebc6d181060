//! Typed errors of the contract crate. Binaries add context with `anyhow`.
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
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
    pub fn bad(message: impl Into<String>) -> Self {
        Error::BadInput(message.into())
    }
}
