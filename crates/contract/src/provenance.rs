//! What a derived file records of the files it was derived from: each one's logical name and
//! SHA-256 (Parquet metadata `inferbench.inputs`, or a document's `provenance.inputs`).
//! Checking them against a run's files is the store's (`inferbench_store::provenance`).
use std::collections::BTreeMap;

/// Logical name → SHA-256.
pub type Inputs = BTreeMap<String, String>;
