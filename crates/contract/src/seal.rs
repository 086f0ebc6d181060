//! `events/seal.json`: what sealing a run's log compressed, and the events table it wrote.
//! Sealing and reading it are the store's (`inferbench_store::sealed`).
use crate::{canonical, Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `events/seal.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SealRecord {
    pub v: u32,
    pub run_id: String,
    /// How to get the original bytes back without inferbench.
    pub recover_with: String,
    /// Every sealed segment, in order.
    pub segments: Vec<SealedSegment>,
    /// `events.parquet` as this seal wrote it from exactly these segments: readers of a sealed
    /// log take its rows instead of parsing the JSONL again, once its hash is checked (absent
    /// in seals written before it was recorded, whose log is read from the JSONL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<SealedTable>,
}

/// The events table a seal wrote, and how many lines of each segment it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SealedTable {
    /// `events.parquet`, beside `events/`.
    pub file: String,
    pub bytes: u64,
    pub sha256: String,
    /// Rows: the log's complete lines.
    pub rows: u64,
    /// Per segment, in order: its complete lines (one row each) and the bytes of an
    /// unterminated last line the table does not hold.
    pub segments: Vec<TableSegment>,
}

/// One segment's share of [`SealedTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TableSegment {
    pub segment: u32,
    pub lines: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torn_tail_bytes: Option<u64>,
}

/// One sealed segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SealedSegment {
    pub segment: u32,
    /// The original file's name, `NNNN.jsonl` (removed once sealed).
    pub original: String,
    pub original_bytes: u64,
    pub original_sha256: String,
    /// The compressed file's name, `NNNN.jsonl.zst`.
    pub compressed: String,
    pub compressed_bytes: u64,
    pub compressed_sha256: String,
}

impl SealedSegment {
    /// Whether `now`, the SHA-256 of the compressed file at `path`, is the one this segment was
    /// sealed with; refused as bad input, naming the file, when it is not.
    pub fn check_compressed_sha256(&self, path: &Path, now: &str) -> Result<()> {
        if now == self.compressed_sha256 {
            return Ok(());
        }
        Err(self.modified(path, now))
    }

    /// The compressed file at `path`, which hashes to `now` or does not decompress to the
    /// original this segment records, is not the one sealed.
    pub fn modified(&self, path: &Path, now: &str) -> Error {
        Error::bad(format!(
            "{}: sha256 {}… is not the {}… it was sealed with; the sealed log was modified",
            path.display(),
            canonical::short_hash(now),
            canonical::short_hash(&self.compressed_sha256)
        ))
    }
}
