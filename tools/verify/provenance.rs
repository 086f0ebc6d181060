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
use inferbench_contract::tables::{
    EvaluationRow, EventRow, MetricRow, PooledRow, ResponseRow, ScheduleRow, SelectionRow,
};
use inferbench_store::parquet_io::read_inputs;
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;

/// How to read what a derived file records.
type ReadInputs = fn(&std::path::Path) -> anyhow::Result<Inputs>;

/// The derived files in pipeline order, each with how to read what it records.
const DERIVED: [(&str, ReadInputs); 9] = [
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

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::manifest::FileEntry;

    fn manifest(files: &[(&str, &str)]) -> Manifest {
        let mut manifest: Manifest = serde_json::from_value(serde_json::json!({
            "v": 1, "run_id": "r", "workflow": "w", "benchmark_slug": "b", "status": "complete",
            "status_reasons": [], "scheduled_requests": 0, "responses": 0, "written_by": "x", "locked_by": "x",
            "execution": {"segments": [], "wall_clock_period": null, "clock": "c", "endpoint_mode": null,
                          "resumed_rounds": 0, "resent_attempts": 0},
            "files": {}
        }))
        .unwrap();
        for (name, sha256) in files {
            manifest.files.insert(name.to_string(), FileEntry { bytes: 0, sha256: sha256.to_string() });
        }
        manifest
    }

    /// A run whose `responses.parquet` records `inputs`, with a two-segment sealed log.
    fn run_with_responses(dir: &std::path::Path, inputs: &[(&str, &str)]) -> RunDir {
        let run = RunDir::new(dir);
        let inputs: Inputs = inputs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        inferbench_store::parquet_io::write::<ResponseRow>(&run.responses(), &[], &inputs).unwrap();
        run
    }

    fn lock(spec: &str) -> Lock {
        let mut lock = inferbench_contract::testutil::lock();
        lock.inputs.insert("spec.yaml".into(), spec.into());
        lock
    }

    fn originals() -> BTreeMap<String, String> {
        [("events/0001.jsonl", "s1"), ("events/0002.jsonl", "s2")].map(|(k, v)| (k.to_string(), v.to_string())).into()
    }

    const FILES: [(&str, &str); 4] = [
        ("lock.json", "l"),
        ("responses.parquet", "r"),
        ("events/0001.jsonl.zst", "z1"),
        ("events/0002.jsonl.zst", "z2"),
    ];

    #[test]
    fn recorded_inputs_are_checked_against_the_manifest_the_seal_and_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let recorded = [
            ("lock.json", "l"),
            ("events/0001.jsonl", "s1"),
            ("events/0002.jsonl", "s2"),
            ("spec.yaml", "p"),
            ("scoring_rules", "reference"),
        ];
        let run = run_with_responses(dir.path(), &recorded);
        assert_eq!(check(&run, &manifest(&FILES), &lock("p"), &originals()).unwrap(), 1);

        let failure = |e: anyhow::Error| e.downcast::<Failure>().unwrap();
        let mut other_lock = FILES;
        other_lock[0].1 = "m";
        let f = failure(check(&run, &manifest(&other_lock), &lock("p"), &originals()).unwrap_err());
        assert_eq!(f.file, "responses.parquet");
        assert!(f.what.contains("was derived from lock.json"), "{f}");
        let f = failure(check(&run, &manifest(&FILES), &lock("q"), &originals()).unwrap_err());
        assert!(f.what.contains("spec.yaml"), "{f}");
        let mut edited = originals();
        edited.insert("events/0002.jsonl".into(), "s3".into());
        let f = failure(check(&run, &manifest(&FILES), &lock("p"), &edited).unwrap_err());
        assert!(f.what.contains("events/0002.jsonl sha256 s2"), "{f}");
    }

    #[test]
    fn a_file_derived_from_a_shorter_log_or_bound_to_nothing_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with_responses(dir.path(), &[("lock.json", "l"), ("events/0001.jsonl", "s1")]);
        let f = check(&run, &manifest(&FILES), &lock("p"), &originals()).unwrap_err().downcast::<Failure>().unwrap();
        assert!(f.what.contains("does not name events/0002.jsonl"), "{f}");
        let run = run_with_responses(dir.path(), &[("events/0001.jsonl", "s1")]);
        let f = check(&run, &manifest(&FILES), &lock("p"), &originals()).unwrap_err().downcast::<Failure>().unwrap();
        assert!(f.what.contains("records no lock.json"), "{f}");
    }
}
