//! A sealed run's record (`events/seal.json`, written by [`crate::sealed::seal`]) read back,
//! and each compressed segment checked against it: what the log reader, provenance and the
//! seal itself need to trust a sealed segment without decompressing it.
use crate::run::RunDir;
use inferbench_contract::seal::{SealRecord, SealedSegment};
use inferbench_contract::{Error, Result, FORMAT_VERSION};
use std::path::Path;

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
    Ok(Some(record))
}

/// The SHA-256 of segment `number`'s original JSONL: of the plain file while it exists, else
/// the one the seal record gives, once the compressed file is checked to be the one sealed.
/// `None` when the run has no such segment.
pub fn segment_sha256(run: &RunDir, number: u32) -> Result<Option<String>> {
    let plain = run.segment(number);
    if plain.exists() {
        return inferbench_contract::canonical::file_sha256(&plain).map(Some);
    }
    let sealed = run.sealed_segment(number);
    if !sealed.exists() {
        return Ok(None);
    }
    let record = read_record(run)?;
    let entry = record.as_ref().and_then(|r| r.segments.iter().find(|s| s.segment == number)).ok_or_else(|| {
        Error::bad(format!("{}: a sealed segment that {} does not list", sealed.display(), run.seal_record().display()))
    })?;
    check_compressed(&sealed, entry)?;
    Ok(Some(entry.original_sha256.clone()))
}

/// `path` is still the compressed file `entry` records.
pub fn check_compressed(path: &Path, entry: &SealedSegment) -> Result<()> {
    entry.check_compressed_sha256(path, &inferbench_contract::canonical::file_sha256(path)?)
}
