//! The reference's own smoke run, and files written for a test, for the tests of the source.
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The reference's own smoke run (attempt 1: 3 rounds of 10 requests, every one completed).
pub fn smoke_run() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference/smoke-run")
}

/// A JSON file of the smoke run.
pub fn smoke_json(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(smoke_run().join(rel)).unwrap()).unwrap()
}

/// Writes `bytes` at `rel` under `dir`, making its folders.
pub fn put(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}
