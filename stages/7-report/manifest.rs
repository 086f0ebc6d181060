//! `manifest.json`: the run's inventory (every file with its size and SHA-256), its status,
//! and where and when it ran, taken from the fetch segments' own records (execution region,
//! a hash of the host name, OS, architecture, wall-clock anchors). Written last, after the
//! report, so the inventory covers everything (`inferbench_store::manifest` takes it, beside the
//! rest of the report's work, see `report.rs`); deterministic for the same run directory.
use crate::inputs::ReportInputs;
use inferbench_contract::canonical::sha256_hex;
use inferbench_contract::manifest::{FileEntry, Manifest};
use inferbench_contract::tables::EventRow;
use inferbench_contract::{CODE_VERSION, FORMAT_VERSION};
use inferbench_store::parquet_io;
use inferbench_store::provenance::{self, Current};
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;

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
