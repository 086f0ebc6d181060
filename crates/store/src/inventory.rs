//! The event log's inventory, taken once: the segments a run holds, each with the file that
//! holds it (its live `NNNN.jsonl` while that exists, else the sealed `NNNN.jsonl.zst`), what
//! `events/seal.json` records of the sealed ones, and, when asked, each segment's size and
//! hash: those of its JSONL, by which provenance names it.
//!
//! The log reader, provenance and the seal all take the log through here, so a sealed segment
//! is trusted by one rule everywhere: its compressed file still hashes to what the seal
//! recorded (the seal compared the two byte for byte), so its JSONL is the one the record
//! names, and it need not be decompressed to be hashed.
use crate::run::{is_sealed_segment, RunDir};
use inferbench_contract::canonical::{file_digest, file_sha256};
use inferbench_contract::seal::{SealRecord, SealedSegment};
use inferbench_contract::{Error, Result, FORMAT_VERSION};
use std::path::{Path, PathBuf};

/// The log's segments as they stand.
#[derive(Debug, Clone)]
pub struct Inventory {
    run: RunDir,
    listed: Vec<(u32, PathBuf)>,
    record: Option<SealRecord>,
}

/// One segment's JSONL, hashed: its size and SHA-256, and the file it was established from.
#[derive(Debug, Clone, PartialEq)]
pub struct HashedSegment {
    pub number: u32,
    /// The file listed: `NNNN.jsonl`, or `NNNN.jsonl.zst` when sealed.
    pub path: PathBuf,
    pub bytes: u64,
    pub sha256: String,
}

impl Inventory {
    /// Reads the run's seal record, if it has one (it is what vouches for the sealed segments),
    /// and lists its segments.
    pub fn take(run: &RunDir) -> Result<Inventory> {
        let record = read_record(run)?;
        let listed = run.segments().map_err(|e| Error::unreadable(run.events_dir(), e))?;
        Ok(Inventory { run: run.clone(), listed, record })
    }

    pub fn run(&self) -> &RunDir {
        &self.run
    }

    /// Every segment, in order, with the file to read it from.
    pub fn listed(&self) -> &[(u32, PathBuf)] {
        &self.listed
    }

    /// The seal record, when the run has one.
    pub fn record(&self) -> Option<&SealRecord> {
        self.record.as_ref()
    }

    /// What the seal record says of segment `number`, if it lists it.
    pub fn sealed(&self, number: u32) -> Option<&SealedSegment> {
        self.record.as_ref()?.segments.iter().find(|s| s.segment == number)
    }

    /// What the seal record says of sealed segment `number` (whose file is `path`); one it does
    /// not list is refused: nothing vouches for its JSONL.
    pub fn recorded(&self, number: u32, path: &Path) -> Result<&SealedSegment> {
        self.sealed(number).ok_or_else(|| {
            Error::bad(format!(
                "{}: a sealed segment that {} does not list",
                path.display(),
                self.run.seal_record().display()
            ))
        })
    }

    /// Every segment's JSONL, hashed: a live segment over its bytes, a sealed one as its record
    /// gives it once the compressed file is checked to be the one sealed (a sealed segment the
    /// record does not list is refused).
    pub fn hashes(&self) -> Result<Vec<HashedSegment>> {
        let mut hashed = Vec::with_capacity(self.listed.len());
        for (number, path) in &self.listed {
            let (bytes, sha256) = if is_sealed_segment(path) {
                let entry = self.recorded(*number, path)?;
                check_compressed(path, entry)?;
                (entry.original_bytes, entry.original_sha256.clone())
            } else {
                file_digest(path)?
            };
            hashed.push(HashedSegment { number: *number, path: path.clone(), bytes, sha256 });
        }
        Ok(hashed)
    }
}

/// The SHA-256 of segment `number`'s JSONL, by the rule of [`Inventory::hashes`], without
/// listing the rest of the log. `None` when the run has no such segment.
pub fn segment_sha256(run: &RunDir, number: u32) -> Result<Option<String>> {
    let plain = run.segment(number);
    let path = if plain.exists() { plain } else { run.sealed_segment(number) };
    if !path.exists() {
        return Ok(None);
    }
    let record = if is_sealed_segment(&path) { read_record(run)? } else { None };
    let one = Inventory { run: run.clone(), listed: vec![(number, path)], record };
    Ok(one.hashes()?.pop().map(|segment| segment.sha256))
}

/// The run's seal record, if it has been sealed.
pub fn read_record(run: &RunDir) -> Result<Option<SealRecord>> {
    let path = run.seal_record();
    if !path.exists() {
        return Ok(None);
    }
    let record: SealRecord = crate::atomic::read_json(&path)?;
    if record.v != FORMAT_VERSION {
        return Err(Error::bad(format!("{}: v: format version {} is not supported", path.display(), record.v)));
    }
    // Every reader of a sealed log checks the chain: a dropped or reordered entry is refused
    // before any segment is trusted by it.
    record.check_chain(&path)?;
    Ok(Some(record))
}

/// `path` is still the compressed file `entry` records.
pub fn check_compressed(path: &Path, entry: &SealedSegment) -> Result<()> {
    entry.check_compressed_sha256(path, &file_sha256(path)?)
}
