//! The provenance chain: each derived file records the SHA-256 of the files it was derived
//! from (Parquet metadata `inferbench.inputs`, or a document's `provenance.inputs`), and each
//! must be the hash of that file in this run: a run file's as `manifest.json` lists it (its
//! bytes checked before), a log segment's original JSONL as the seal records it, and an
//! input outside the run (spec, provider table, dataset file) as `lock.json` binds it. A file
//! derived from the log must name every segment of it.
use crate::failure::Failure;
use inferbench_contract::canonical::short_hash;
use inferbench_contract::lock::Lock;
use inferbench_contract::manifest::Manifest;
use inferbench_contract::provenance::Inputs;
use inferbench_contract::tables::{EvaluationRow, EventRow, MetricRow, PooledRow, ResponseRow, ScheduleRow, SelectionRow};
use inferbench_store::parquet_io::read_inputs;
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;

/// The derived files in pipeline order, each with how to read what it records.
const DERIVED: [(&str, fn(&std::path::Path) -> anyhow::Result<Inputs>); 9] = [
    (RunDir::SELECTION, |p| Ok(read_inputs::<SelectionRow>(p)?)),
    (RunDir::SCHEDULE, |p| Ok(read_inputs::<ScheduleRow>(p)?)),
    (RunDir::EVENTS_TABLE, |p| Ok(read_inputs::<EventRow>(p)?)),
    (RunDir::RESPONSES, |p| Ok(read_inputs::<ResponseRow>(p)?)),
    (RunDir::EVALUATIONS, |p| Ok(read_inputs::<EvaluationRow>(p)?)),
    (RunDir::METRICS_PARQUET, |p| Ok(read_inputs::<MetricRow>(p)?)),
    (RunDir::POOLED, |p| Ok(read_inputs::<PooledRow>(p)?)),
    (RunDir::METRICS_JSON, document_inputs),
    (RunDir::COMPARISONS, document_inputs),
];

/// A document's `provenance.inputs`.
fn document_inputs(path: &std::path::Path) -> anyhow::Result<Inputs> {
    let value: serde_json::Value = inferbench_store::atomic::read_json(path)?;
    let inputs = value.pointer("/provenance/inputs").cloned().unwrap_or_default();
    serde_json::from_value(inputs)
        .map_err(|e| anyhow::Error::new(Failure::new(path.display().to_string(), format!("provenance.inputs: {e}"))))
}

/// Checks every derived file the run has; returns how many were checked.
pub fn check(
    run: &RunDir,
    manifest: &Manifest,
    lock: &Lock,
    originals: &BTreeMap<String, String>,
) -> anyhow::Result<usize> {
    let log: Vec<&String> = manifest.files.keys().filter(|n| RunDir::is_log_file(n)).collect();
    let segments: Vec<String> = log
        .iter()
        .filter_map(|n| RunDir::segment_number(n.trim_end_matches(".zst")))
        .map(RunDir::segment_name)
        .collect();
    let mut checked = 0;
    for (file, read) in DERIVED {
        if !manifest.files.contains_key(file) {
            continue;
        }
        let recorded = read(&run.root().join(file)).map_err(|e| match e.downcast::<Failure>() {
            Ok(f) => Failure::new(file, f.what),
            Err(e) => Failure::new(file, format!("its provenance cannot be read: {e}")),
        })?;
        if !recorded.contains_key(RunDir::LOCK) {
            return Err(Failure::new(file, format!("records no {} among its inputs", RunDir::LOCK)).into());
        }
        for (name, hash) in &recorded {
            let now = if let Some(original) = originals.get(name) {
                Some(original)
            } else if RunDir::is_log_file(name) || manifest.files.contains_key(name) || run_file(name) {
                manifest.files.get(name).map(|entry| &entry.sha256)
            } else if let Some(bound) = lock.inputs.get(name) {
                Some(bound)
            } else {
                // Not a file (e.g. `scoring_rules`): the re-derivation checks it.
                continue;
            };
            match now {
                Some(now) if now == hash => {}
                Some(now) => {
                    return Err(Failure::new(
                        file,
                        format!(
                            "was derived from {name} sha256 {}…, but the run's {name} is {}…",
                            short_hash(hash),
                            short_hash(now)
                        ),
                    )
                    .into())
                }
                None => {
                    return Err(
                        Failure::new(file, format!("was derived from {name}, which the run does not have")).into()
                    )
                }
            }
        }
        if recorded.keys().any(|k| RunDir::is_log_file(k)) {
            if let Some(missing) = segments.iter().find(|s| !recorded.contains_key(*s)) {
                return Err(Failure::new(
                    file,
                    format!("does not name {missing} among its inputs: it was derived from a shorter log"),
                )
                .into());
            }
        }
        checked += 1;
    }
    Ok(checked)
}

/// A file of the run itself (as opposed to an input outside it that the lock binds).
fn run_file(name: &str) -> bool {
    [RunDir::LOCK, RunDir::SELECTION, RunDir::SCHEDULE, RunDir::RESPONSES, RunDir::EVALUATIONS].contains(&name)
}
