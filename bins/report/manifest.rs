//! `manifest.json`: the run's inventory (every file with its size and SHA-256), its status,
//! and where and when it ran, taken from the fetch segments' own records (execution region,
//! a hash of the host name, OS, architecture, wall-clock anchors). Written last, after the
//! report, so the inventory covers everything; deterministic for the same run directory.
use crate::inputs::ReportInputs;
use inferbench_schemas::canonical::sha256_hex;
use inferbench_schemas::manifest::{FileEntry, Manifest};
use inferbench_schemas::provenance::{self, Current};
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::tables::EventRow;
use inferbench_schemas::{parquet_io, CODE_VERSION, FORMAT_VERSION};
use std::collections::BTreeMap;
use std::path::Path;

/// Every non-hidden file under `root` except the manifest itself, by relative path.
fn inventory(root: &Path) -> anyhow::Result<BTreeMap<String, FileEntry>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
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
            if rel != "manifest.json" {
                let bytes = std::fs::metadata(&path)?.len();
                files.insert(rel, FileEntry { bytes, sha256: file_sha256(&path)? });
            }
        }
    }
    Ok(files)
}

/// The run's `manifest.json`, as it will be once `report` (the new `report.md`'s bytes) is
/// published with it.
pub fn build(run: &RunDir, inputs: &ReportInputs, report: &[u8]) -> anyhow::Result<Manifest> {
    let mut files = inventory(run.root())?;
    files.insert("report.md".to_string(), FileEntry { bytes: report.len() as u64, sha256: sha256_hex(report) });
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
        responses: Some(inputs.responses.len()),
        written_by: CODE_VERSION.to_string(),
        locked_by: lock.code_version.clone(),
        execution: inputs.execution.clone(),
        files,
    })
}

/// What keeps the run from being complete. The report's own inputs were checked before it was
/// rendered; the sealed log is checked here, since no stage reads it.
fn incomplete_because(run: &RunDir, inputs: &ReportInputs, files: &BTreeMap<String, FileEntry>) -> Vec<String> {
    let mut reasons = Vec::new();
    let missing = inputs.scheduled_requests.saturating_sub(inputs.responses.len());
    if missing > 0 {
        reasons.push(format!("{missing} of {} scheduled requests have no response", inputs.scheduled_requests));
    }
    for name in [
        "events.parquet",
        "evaluations.parquet",
        "metrics.json",
        "metrics.parquet",
        "pooled.parquet",
        "comparisons.json",
    ] {
        if !files.contains_key(name) {
            reasons.push(format!("{name} is missing"));
        }
    }
    if files.contains_key("events.parquet") {
        let sealed = parquet_io::read_inputs::<EventRow>(&run.events_parquet()).and_then(|recorded| {
            provenance::verify(run, &mut Current::default(), "events.parquet", "ib-fetch", &recorded, &BTreeMap::new())
        });
        if let Err(e) = sealed {
            reasons.push(format!("events.parquet is not the sealed copy of the current log: {e}"));
        }
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventory_skips_hidden_files_and_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("events")).unwrap();
        std::fs::write(dir.path().join("events/0001.jsonl"), "x\n").unwrap();
        std::fs::write(dir.path().join("manifest.json"), "{}").unwrap();
        std::fs::write(dir.path().join(".tmp"), "").unwrap();
        let files = inventory(dir.path()).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), vec!["events/0001.jsonl"]);
        assert_eq!(files["events/0001.jsonl"].bytes, 2);
    }
}
