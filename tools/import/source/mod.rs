//! A reference run directory (seed-runner.md §7), read and checked before anything is
//! written: its lock, selection, plan, round artifacts and the terminal records of one
//! partition (`attempt-N` for a smoke attempt, `full` for the full run), each with its embedded
//! stream events, plus what it derived (evaluations, metrics, paired comparisons), which the
//! import keeps for the comparison with inferbench's figures.
//!
//! Every defect is collected with the file and the field it is in, and the import refuses the
//! source when there is any: a record that contradicts itself (`completed` with a 4xx status,
//! stream events that do not concatenate to the saved answer, an event whose channel text is
//! not its payload's), a record the plan does not schedule, or a plan that contradicts itself.
//!
//! Here: the partition's choice and the directory's walk. `lock` reads the lock and the
//! selection, `plan` the plan and the round artifacts, `records` the terminal records and the
//! evaluations, `events` the stream events a record embeds; `model` is what they read into,
//! `json` how a file is read.
mod events;
#[cfg(test)]
mod fixture;
mod json;
mod lock;
mod model;
mod plan;
mod records;

pub use model::{EventBody, Kind, Record, Round, RoundArtifact, Terminal};

use crate::fields::Problems;
use inferbench_contract::{Error, Result};
use json::sorted_json_files;
use model::{RefLock, RefSelection, Unit};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Everything the import reads from a reference run directory.
pub struct Source {
    pub dir: PathBuf,
    pub kind: Kind,
    pub lock: RefLock,
    pub selection: RefSelection,
    pub rounds: Vec<Round>,
    pub round_artifacts: BTreeMap<String, RoundArtifact>,
    /// By request id.
    pub records: BTreeMap<String, Record>,
    /// The reference's evaluations, by request id.
    pub evaluations: BTreeMap<String, Value>,
    /// Files copied into the imported run unchanged: source-relative path → bytes.
    pub copied: BTreeMap<String, Vec<u8>>,
}

/// The partitions under `raw/` that hold terminal records.
fn partitions(dir: &Path) -> Vec<Kind> {
    let mut found: Vec<Kind> = std::fs::read_dir(dir.join("raw"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_dir())
                .filter_map(|e| Kind::parse(&e.file_name().to_string_lossy()))
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|k| match k {
        Kind::Smoke(n) => *n,
        Kind::Full => u32::MAX,
    });
    found
}

/// Picks the partition: the one asked for, else the full run when the directory has one,
/// else its last smoke attempt.
pub fn choose(dir: &Path, asked: Option<&str>) -> Result<Kind> {
    if !dir.join("run-lock.json").is_file() {
        return Err(Error::bad(format!(
            "{}: not a reference run directory (no run-lock.json); give the directory that holds run-lock.json, \
             plan.json, raw/ and artifacts/",
            dir.display()
        )));
    }
    let found = partitions(dir);
    let names = || found.iter().map(|k| k.partition()).collect::<Vec<_>>().join(", ");
    match asked {
        Some(text) => {
            let kind = Kind::parse(text)
                .ok_or_else(|| Error::bad(format!("--partition {text}: expected `full` or `attempt-N` (N ≥ 1)")))?;
            if found.contains(&kind) || dir.join(kind.plan_file()).is_file() && kind == Kind::Full {
                Ok(kind)
            } else {
                Err(Error::bad(format!(
                    "--partition {text}: {} has no raw/{text}/ (it has: {})",
                    dir.display(),
                    if found.is_empty() { "none".to_string() } else { names() }
                )))
            }
        }
        None => found.last().copied().ok_or_else(|| {
            Error::bad(format!("{}: no terminal records: neither raw/full/ nor raw/attempt-N/ exists", dir.display()))
        }),
    }
}

impl Source {
    pub fn read(dir: &Path, kind: Kind) -> Result<Source> {
        let mut p = Problems::default();
        let mut copied = BTreeMap::new();
        let lock = lock::read_lock(dir, &mut p, &mut copied);
        let selection = lock::read_selection(dir, &mut p, &mut copied, lock.as_ref());
        let rounds = plan::read_plan(dir, kind, &mut p, &mut copied);
        let plan_units: BTreeMap<&str, &Unit> =
            rounds.iter().flat_map(|r| &r.units).map(|u| (u.request_id.as_str(), u)).collect();
        let records = records::read_records(dir, kind, &plan_units, &mut p);
        let round_artifacts = plan::read_round_artifacts(dir, kind, &rounds, &mut p, &mut copied);
        let evaluations = records::read_evaluations(dir, kind, &mut p);
        copy_small_files(dir, kind, &mut copied, &mut p);
        if !p.is_empty() {
            return Err(p.into_error());
        }
        Ok(Source {
            dir: dir.to_path_buf(),
            kind,
            lock: lock.expect("no problems means a lock"),
            selection: selection.expect("no problems means a selection"),
            rounds,
            round_artifacts,
            records,
            evaluations,
            copied,
        })
    }
}

/// The reference's own small files that belong to the partition, kept byte for byte: its
/// plan, events, report, manifests, metrics, paired comparisons, budget and checkpoints.
fn copy_small_files(dir: &Path, kind: Kind, copied: &mut BTreeMap<String, Vec<u8>>, p: &mut Problems) {
    let sfx = kind.suffix();
    let mut wanted = vec![
        "plan.json".to_string(),
        "events.jsonl".to_string(),
        "report.md".to_string(),
        "peer-timings.json".to_string(),
        format!("artifacts/run-manifest{sfx}.json"),
        format!("artifacts/metrics{sfx}.json"),
        format!("artifacts/paired-comparisons{sfx}.json"),
        format!("artifacts/failures{sfx}.jsonl"),
    ];
    match kind {
        Kind::Smoke(n) => {
            wanted.push("artifacts/smoke-budget.json".into());
            wanted.push(format!("checkpoints/smoke-attempt-{n}.json"));
            wanted.push(format!("artifacts/generated-code-amendment-attempt-{n}.json"));
        }
        Kind::Full => {
            wanted.push("checkpoints/full-run.json".into());
            wanted.push("artifacts/full-run-approval.json".into());
            for name in sorted_json_files(&dir.join("artifacts")) {
                if name.starts_with("post-processing-provenance-") {
                    wanted.push(format!("artifacts/{name}"));
                }
            }
        }
    }
    for rel in wanted {
        let path = dir.join(&rel);
        if !path.is_file() {
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => {
                copied.insert(rel, bytes);
            }
            Err(e) => p.push(format!("{rel}: cannot read: {e}")),
        }
    }
}

/// The reference's derived figures for the partition, when they are of its records. A full
/// run's `metrics.json` is when its manifest is the full run's, or, with no manifest (the
/// reference does not always leave one), when every request of the plan has a terminal
/// record; never when the manifest is a passed smoke's, which leaves copies of its own figures
/// there. `ib-report` applies the same rule when it compares them.
pub fn reference_figures(source: &Source) -> Option<(&[u8], &[u8])> {
    let sfx = source.kind.suffix();
    if source.kind == Kind::Full {
        let complete =
            || source.rounds.iter().flat_map(|r| &r.units).all(|u| source.records.contains_key(&u.request_id));
        let manifest_kind = source
            .copied
            .get("artifacts/run-manifest.json")
            .and_then(|m| serde_json::from_slice::<Value>(m).ok())
            .and_then(|m| m.get("kind").and_then(Value::as_str).map(str::to_string));
        match manifest_kind.as_deref() {
            Some("full") => {}
            Some(_) => return None,
            None if complete() => {}
            None => return None,
        }
    }
    let metrics = source.copied.get(&format!("artifacts/metrics{sfx}.json"))?;
    let paired = source.copied.get(&format!("artifacts/paired-comparisons{sfx}.json"))?;
    Some((metrics, paired))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixture::{put, smoke_run};

    fn error_text(result: Result<Kind>) -> String {
        result.expect_err("an error").to_string()
    }

    #[test]
    fn the_partition_is_the_asked_one_else_the_full_run_else_the_last_attempt() {
        assert_eq!(choose(&smoke_run(), None).unwrap(), Kind::Smoke(1));
        assert_eq!(choose(&smoke_run(), Some("attempt-1")).unwrap(), Kind::Smoke(1));
        let missing = error_text(choose(&smoke_run(), Some("full")));
        assert!(missing.contains("has no raw/full/ (it has: attempt-1)"), "{missing}");
        let bad = error_text(choose(&smoke_run(), Some("attempt-0")));
        assert!(bad.contains("expected `full` or `attempt-N` (N ≥ 1)"), "{bad}");

        let dir = tempfile::tempdir().unwrap();
        let not_a_run = error_text(choose(dir.path(), None));
        assert!(not_a_run.contains("not a reference run directory (no run-lock.json)"), "{not_a_run}");
        put(dir.path(), "run-lock.json", b"{}");
        let empty = error_text(choose(dir.path(), None));
        assert!(empty.contains("no terminal records"), "{empty}");
        // Attempts in number order, not name order; a file or a stray folder is no partition.
        for name in ["attempt-2", "attempt-10", "attempt-9", "stream-events"] {
            std::fs::create_dir_all(dir.path().join("raw").join(name)).unwrap();
        }
        put(dir.path(), "raw/attempt-11", b"");
        assert_eq!(partitions(dir.path()), [Kind::Smoke(2), Kind::Smoke(9), Kind::Smoke(10)]);
        assert_eq!(choose(dir.path(), None).unwrap(), Kind::Smoke(10));
        std::fs::create_dir_all(dir.path().join("raw/full")).unwrap();
        assert_eq!(choose(dir.path(), None).unwrap(), Kind::Full);
        assert_eq!(choose(dir.path(), Some("attempt-9")).unwrap(), Kind::Smoke(9));
    }

    #[test]
    fn the_smoke_run_reads_whole_with_the_files_it_keeps() {
        let source = Source::read(&smoke_run(), Kind::Smoke(1)).expect("the reference's own run checks");
        assert_eq!(source.rounds.len(), 3);
        assert!(source.rounds.iter().all(|r| r.units.len() == 10));
        assert_eq!((source.records.len(), source.round_artifacts.len(), source.evaluations.len()), (30, 3, 30));
        let planned: BTreeMap<&str, &Unit> =
            source.rounds.iter().flat_map(|r| &r.units).map(|u| (u.request_id.as_str(), u)).collect();
        for (id, record) in &source.records {
            assert_eq!(planned.get(id.as_str()), Some(&&record.unit));
        }
        let kept: Vec<&str> = source.copied.keys().map(String::as_str).collect();
        let mut expected = vec![
            "artifacts/failures-attempt-1.jsonl",
            "artifacts/metrics-attempt-1.json",
            "artifacts/paired-comparisons-attempt-1.json",
            "artifacts/run-manifest-attempt-1.json",
            "artifacts/selection.json",
            "artifacts/smoke-budget.json",
            "artifacts/smoke-plan-attempt-1.json",
            "checkpoints/smoke-attempt-1.json",
            "events.jsonl",
            "peer-timings.json",
            "plan.json",
            "report.md",
            "run-lock.json",
        ];
        let rounds = sorted_json_files(&smoke_run().join("artifacts/rounds/attempt-1"));
        let round_files: Vec<String> = rounds.iter().map(|n| format!("artifacts/rounds/attempt-1/{n}")).collect();
        expected.extend(round_files.iter().map(String::as_str));
        expected.sort();
        assert_eq!(kept, expected);
        for (rel, bytes) in &source.copied {
            assert_eq!(bytes, &std::fs::read(smoke_run().join(rel)).unwrap(), "{rel} is kept byte for byte");
        }
        let (metrics, paired) = reference_figures(&source).expect("a smoke attempt's own figures");
        assert_eq!(metrics, std::fs::read(smoke_run().join("artifacts/metrics-attempt-1.json")).unwrap());
        assert_eq!(paired, std::fs::read(smoke_run().join("artifacts/paired-comparisons-attempt-1.json")).unwrap());
    }
}
