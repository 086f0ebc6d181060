//! `manifest.json`: the run's inventory (every file with its size and SHA-256), its status,
//! and where and when it ran, taken from the fetch segments' own records (execution region,
//! a hash of the host name, OS, architecture, wall-clock anchors). Written last, after the
//! report, so the inventory covers everything; deterministic for the same run directory.
use crate::inputs::ReportInputs;
use anyhow::Context;
use inferbench_contract::canonical::{hex, sha256_hex};
use inferbench_contract::manifest::{FileEntry, Manifest};
use inferbench_contract::tables::EventRow;
use inferbench_contract::{CODE_VERSION, FORMAT_VERSION};
use inferbench_store::parquet_io;
use inferbench_store::provenance::{self, Current};
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;
use std::path::Path;

/// SHA-256 and size of a file, read in blocks (a sealed log may be several gigabytes).
pub fn hash_file(path: &Path) -> anyhow::Result<FileEntry> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(anyhow::Error::new(e).context(format!("{}: cannot read", path.display()))),
        };
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok(FileEntry { bytes, sha256: hex(&hasher.finalize()) })
}

/// Every non-hidden file under `root` except the manifest itself and its signature, by relative path, each
/// read once. Runs beside the rest of the report's work (see `report.rs`); the stage takes
/// the hashes it verifies provenance with from here rather than reading the files again.
pub fn inventory(root: &Path) -> anyhow::Result<BTreeMap<String, FileEntry>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("{}: cannot list", dir.display()))? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(root)?.to_string_lossy().replace('\\', "/");
            if ![RunDir::MANIFEST, RunDir::MANIFEST_SIG, RunDir::MANIFEST_PUB].contains(&rel.as_str()) {
                files.insert(rel, hash_file(&path)?);
            }
        }
    }
    Ok(files)
}

/// The run's `manifest.json`, as it will be once `report` (the new `report.md`'s bytes) is
/// published with it.
pub fn build(run: &RunDir, inputs: &ReportInputs, report: &[u8]) -> anyhow::Result<Manifest> {
    let mut files = inputs.files.clone();
    files.insert(RunDir::REPORT_MD.to_string(), FileEntry { bytes: report.len() as u64, sha256: sha256_hex(report) });
    let reasons = incomplete_because(run, inputs, &files);
    let lock = &inputs.lock;
    Ok(Manifest {
        v: FORMAT_VERSION,
        run_id: lock.run_id.clone(),
        workflow: lock.workflow.clone(),
        benchmark_slug: lock.benchmark_slug.clone(),
        status: (if reasons.is_empty() { "complete" } else { "incomplete" }).to_string(),
        status_reasons: reasons,
        scheduled_requests: Some(inputs.scheduled_requests),
        responses: Some(inputs.responses.total()),
        written_by: CODE_VERSION.to_string(),
        locked_by: lock.code_version.clone(),
        execution: inputs.execution.clone(),
        files,
    })
}

/// The run's files as provenance checks see them, from the inventory.
pub fn current(files: &BTreeMap<String, FileEntry>) -> Current {
    let mut current = Current::default();
    for (name, entry) in files {
        current.insert(name, &entry.sha256);
    }
    current
}

/// What keeps the run from being complete. The report's own inputs were checked before it was
/// rendered; the sealed log is checked here, since no stage reads it.
fn incomplete_because(run: &RunDir, inputs: &ReportInputs, files: &BTreeMap<String, FileEntry>) -> Vec<String> {
    let mut reasons = Vec::new();
    let missing = inputs.scheduled_requests.saturating_sub(inputs.responses.total());
    if missing > 0 {
        reasons.push(format!("{missing} of {} scheduled requests have no response", inputs.scheduled_requests));
    }
    for name in [
        RunDir::EVENTS_TABLE,
        RunDir::EVALUATIONS,
        RunDir::METRICS_JSON,
        RunDir::METRICS_PARQUET,
        RunDir::POOLED,
        RunDir::COMPARISONS,
    ] {
        if !files.contains_key(name) {
            reasons.push(format!("{name} is missing"));
        }
    }
    if files.contains_key(RunDir::EVENTS_TABLE) {
        let sealed = parquet_io::read_inputs::<EventRow>(&run.events_parquet()).and_then(|recorded| {
            // The segments' hashes are the inventory's: the log is not read again.
            provenance::verify(run, &mut current(files), RunDir::EVENTS_TABLE, "ib-fetch", &recorded, &BTreeMap::new())
        });
        if let Err(e) = sealed {
            reasons.push(format!("{} is not the sealed copy of the current log: {e}", RunDir::EVENTS_TABLE));
        }
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_skips_hidden_files_the_manifest_and_its_signature() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("events")).unwrap();
        std::fs::write(dir.path().join("events/0001.jsonl"), "x\n").unwrap();
        std::fs::write(dir.path().join("manifest.json"), "{}").unwrap();
        std::fs::write(dir.path().join("manifest.sig"), "00").unwrap();
        std::fs::write(dir.path().join("manifest.pub"), "00").unwrap();
        std::fs::write(dir.path().join(".tmp"), "").unwrap();
        let files = inventory(dir.path()).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), vec!["events/0001.jsonl"]);
        assert_eq!(files["events/0001.jsonl"].bytes, 2);
    }

    #[test]
    fn a_file_hashed_in_blocks_hashes_as_a_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        // Over two blocks, not a multiple of one.
        let bytes: Vec<u8> = (0..(2 << 20) + 12_345).map(|i: u32| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let entry = hash_file(&path).unwrap();
        assert_eq!(entry.bytes, bytes.len() as u64);
        assert_eq!(entry.sha256, sha256_hex(&bytes));
    }
}
