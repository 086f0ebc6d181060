//! The run's bytes: every file against `manifest.json`, and the sealed log against
//! `events/seal.json` (each compressed segment's hash, what it decompresses to, the chain of
//! the entries, and the events table the seal recorded).
use crate::failure::Failure;
use anyhow::Context;
use inferbench_contract::canonical::{digest, file_digest, short_hash};
use inferbench_contract::manifest::{FileEntry, Manifest};
use inferbench_contract::seal::SealRecord;
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;

/// Every file the manifest lists has its size and SHA-256, and the run holds no file that it
/// does not cover (`inferbench_store::manifest::covered`, what `ib-report` lists).
pub fn check_manifest(run: &RunDir, manifest: &Manifest) -> anyhow::Result<()> {
    for (name, entry) in &manifest.files {
        let path = run.root().join(name);
        if !path.is_file() {
            return Err(Failure::new(name, "listed in manifest.json, but the run has no such file").into());
        }
        let (bytes, sha256) = file_digest(&path)?;
        if (bytes, &sha256) != (entry.bytes, &entry.sha256) {
            return Err(Failure::new(
                name,
                format!(
                    "{bytes} bytes, sha256 {}…; manifest.json records {} bytes, sha256 {}…",
                    short_hash(&sha256),
                    entry.bytes,
                    short_hash(&entry.sha256)
                ),
            )
            .into());
        }
    }
    for name in inferbench_store::manifest::covered(run)?.into_keys() {
        if !manifest.files.contains_key(&name) {
            return Err(Failure::new(name, "in the run, but manifest.json does not list it").into());
        }
    }
    Ok(())
}

/// The relative name of the seal record.
pub fn seal_name() -> String {
    format!("{}/{}", RunDir::EVENTS, RunDir::SEAL)
}

/// What the sealed log's check found.
#[derive(Debug, Default)]
pub struct SealFacts {
    /// The sealed segments' JSONL hashes, by the name provenance gives them
    /// (`events/NNNN.jsonl`).
    pub originals: BTreeMap<String, String>,
    pub segments: usize,
    /// Whether the seal record carries the chain (one written before it does not).
    pub chained: bool,
}

/// The sealed log against its record: the record's chain; every sealed file it lists there,
/// hashing to what it records and decompressing to the original's size and SHA-256; no
/// sealed file it does not list; and the events table it recorded. `None` when the run's log
/// is not sealed.
pub fn check_seal(run: &RunDir) -> anyhow::Result<Option<SealFacts>> {
    let seal = seal_name();
    if !run.seal_record().exists() {
        return Ok(None);
    }
    let record: SealRecord = inferbench_store::inventory::read_record(run)
        .map_err(|e| Failure::new(&seal, e.to_string()))?
        .context("seal")?;
    let mut facts = SealFacts { chained: record.is_chained(), segments: record.segments.len(), ..SealFacts::default() };
    for entry in &record.segments {
        let name = format!("{}/{}", RunDir::EVENTS, entry.compressed);
        let path = run.sealed_segment(entry.segment);
        if path.file_name().map(|n| n.to_string_lossy().into_owned()) != Some(entry.compressed.clone()) {
            return Err(Failure::new(&seal, format!("segment {} is named {}", entry.segment, entry.compressed)).into());
        }
        if !path.is_file() {
            return Err(Failure::new(name, format!("{seal} lists it, but the run has no such file")).into());
        }
        let (bytes, sha256) = file_digest(&path)?;
        if (bytes, &sha256) != (entry.compressed_bytes, &entry.compressed_sha256) {
            return Err(Failure::new(
                name,
                format!(
                    "{bytes} bytes, sha256 {}…; {seal} records {} bytes, sha256 {}…",
                    short_hash(&sha256),
                    entry.compressed_bytes,
                    short_hash(&entry.compressed_sha256)
                ),
            )
            .into());
        }
        let file = std::fs::File::open(&path).with_context(|| format!("{}: cannot read", path.display()))?;
        let decoder =
            zstd::stream::read::Decoder::new(file).with_context(|| format!("{}: cannot read", path.display()))?;
        let original = digest(decoder, &path).map_err(|e| Failure::new(&name, format!("does not decompress: {e}")))?;
        if original != (entry.original_bytes, entry.original_sha256.clone()) {
            return Err(Failure::new(
                name,
                format!(
                    "decompresses to {} bytes, sha256 {}…; {seal} records the original {} as {} bytes, sha256 {}…",
                    original.0,
                    short_hash(&original.1),
                    entry.original,
                    entry.original_bytes,
                    short_hash(&entry.original_sha256)
                ),
            )
            .into());
        }
        facts.originals.insert(RunDir::segment_name(entry.segment), entry.original_sha256.clone());
    }
    let segments = run.segments().with_context(|| format!("{}: cannot list", run.events_dir().display()))?;
    for (number, path) in segments {
        if inferbench_store::run::is_sealed_segment(&path) && !record.segments.iter().any(|s| s.segment == number) {
            let name = format!("{}/{}", RunDir::EVENTS, path.file_name().unwrap_or_default().to_string_lossy());
            return Err(Failure::new(name, format!("a sealed segment that {seal} does not list")).into());
        }
    }
    if let Some(table) = &record.table {
        let path = run.root().join(&table.file);
        let now: Option<FileEntry> = file_digest(&path).ok().map(|(bytes, sha256)| FileEntry { bytes, sha256 });
        match now {
            Some(now) if (now.bytes, &now.sha256) == (table.bytes, &table.sha256) => {}
            Some(now) => {
                return Err(Failure::new(
                    &table.file,
                    format!(
                        "sha256 {}…; {seal} records the table it wrote as sha256 {}…",
                        short_hash(&now.sha256),
                        short_hash(&table.sha256)
                    ),
                )
                .into())
            }
            None => return Err(Failure::new(&table.file, format!("{seal} records it, but the run has none")).into()),
        }
    }
    Ok(Some(facts))
}
