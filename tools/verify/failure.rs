//! A check that does not hold: the first file of the run that is not what it should be, and
//! what differs. `main` maps it to exit 4.
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The file, by its path relative to the run directory.
    pub file: String,
    pub what: String,
}

impl Failure {
    pub fn new(file: impl Into<String>, what: impl Into<String>) -> Failure {
        Failure { file: file.into(), what: what.into() }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.what)
    }
}

impl std::error::Error for Failure {}
