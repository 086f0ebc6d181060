//! Golden files: two frozen event logs and everything the stages derive from them, compared
//! exactly, so a change to a rubric, a metric, the report's wording or the importer cannot
//! pass unnoticed. `IB_BLESS=1 cargo test golden` rewrites the expected files; review the diff.
//!
//! - `tests/golden/own/`: an event log of inferbench's own with every outcome class
//!   (`make-own-log.sh` fetched it once from ib-sim), scored under both rule sets.
//! - `tests/golden/imported/`: the reference's smoke run (`tests/fixtures/reference/smoke-run`)
//!   through `ib-import`, then scored: the imported log itself is golden too (by its SHA-256).
//!
//! The code version is stamped into every output (and so into the hashes of derived files);
//! it is replaced by a placeholder before comparing, and so is each derived file's hash.
use crate::support::{bin, ok, repo};
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::tables::Table;
use inferbench_contract::tables::{EvaluationRow, PooledRow, ResponseRow};
use inferbench_store::parquet_io::{self};
use inferbench_testkit::reference_run::{copy_tree, fixture};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The files whose bytes depend on the code version, by their name in the run.
const DERIVED: [&str; 13] = [
    "lock.json",
    "selection.parquet",
    "schedule.parquet",
    "events/0001.jsonl",
    "events/0001.jsonl.zst",
    "events/seal.json",
    "events.parquet",
    "responses.parquet",
    "evaluations.parquet",
    "metrics.json",
    "metrics.parquet",
    "pooled.parquet",
    "comparisons.json",
];

struct Golden {
    name: &'static str,
    spec: PathBuf,
    dataset: PathBuf,
}

impl Golden {
    fn expected(&self, file: &str) -> PathBuf {
        repo().join("tests/golden").join(self.name).join("expected").join(file)
    }

    fn rescore(&self, run: &Path, rules: &str) {
        crate::support::rescore(run, &self.spec, &self.dataset, rules);
    }

    /// Compares (or, blessing, writes) every output of `run`, under the suffix `tag`.
    fn check(&self, run: &Path, tag: &str, stale: &mut Vec<String>) {
        let normalize = |text: String| normalized(run, &text);
        let mut outputs = vec![
            (format!("responses{tag}.jsonl"), rows::<ResponseRow>(&run.join("responses.parquet"))),
            (format!("evaluations{tag}.jsonl"), rows::<EvaluationRow>(&run.join("evaluations.parquet"))),
            (format!("pooled{tag}.jsonl"), rows::<PooledRow>(&run.join("pooled.parquet"))),
        ];
        for file in ["metrics.json", "comparisons.json", "report.md"] {
            let (stem, ext) = file.split_once('.').unwrap();
            outputs.push((format!("{stem}{tag}.{ext}"), std::fs::read_to_string(run.join(file)).unwrap()));
        }
        for (name, text) in outputs {
            self.compare(&name, normalize(text), stale);
        }
    }

    fn compare(&self, name: &str, actual: String, stale: &mut Vec<String>) {
        let path = self.expected(name);
        if std::env::var_os("IB_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            let line = expected.lines().zip(actual.lines()).position(|(a, b)| a != b).map_or_else(
                || format!("{} lines expected, {} written", expected.lines().count(), actual.lines().count()),
                |i| {
                    format!(
                        "first difference at line {}:\n  expected: {}\n  actual:   {}",
                        i + 1,
                        expected.lines().nth(i).unwrap_or_default(),
                        actual.lines().nth(i).unwrap_or_default()
                    )
                },
            );
            stale.push(format!("tests/golden/{}/expected/{name}: {line}", self.name));
        }
    }
}

/// `text` with the code versions and the hashes of `run`'s derived files replaced.
fn normalized(run: &Path, text: &str) -> String {
    let mut text = code_versions_replaced(text);
    for file in DERIVED {
        // A sealed segment keeps its original's name and hash in provenance.
        let hash = match file {
            "events/0001.jsonl" => {
                inferbench_store::inventory::segment_sha256(&inferbench_store::run::RunDir::new(run), 1)
                    .ok()
                    .flatten()
                    .ok_or(())
            }
            _ => file_sha256(&run.join(file)).map_err(|_| ()),
        };
        if let Ok(hash) = hash {
            text = text.replace(&hash, &format!("<sha256 of {file}>"));
        }
    }
    text
}

/// `text` with every code version (`inferbench 0.1.0 (0123456789ab)`, of this build or of
/// the one that wrote a frozen input) replaced by a placeholder.
fn code_versions_replaced(text: &str) -> String {
    let prefix = concat!("inferbench ", env!("CARGO_PKG_VERSION"), " (");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at]);
        let after = &rest[at + prefix.len()..];
        match after.find(')') {
            Some(end) if end <= 40 && after[..end].chars().all(|c| c.is_ascii_alphanumeric() || c == '-') => {
                out.push_str("<code version>");
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(prefix);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A table's rows as JSON lines (reviewable in a diff, compared exactly).
fn rows<T: Table>(path: &Path) -> String {
    let mut out = String::new();
    for row in parquet_io::read::<T>(path).unwrap().rows {
        out.push_str(&serde_json::to_string(&row).unwrap());
        out.push('\n');
    }
    out
}

fn assert_fresh(stale: Vec<String>) {
    assert!(stale.is_empty(), "golden files differ (rerun with IB_BLESS=1 if intended):\n{}", stale.join("\n"));
}

#[test]
fn golden_own_log_with_every_outcome_class() {
    let golden = Golden {
        name: "own",
        spec: repo().join("tests/golden/own/pipeline/spec.yaml"),
        dataset: repo().join("tests/fixtures/micro-single-task"),
    };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("golden-own");
    copy_tree(&repo().join("tests/golden/own/run"), &run);
    let mut stale = Vec::new();
    golden.rescore(&run, "inferbench");
    golden.check(&run, "", &mut stale);
    golden.rescore(&run, "reference");
    golden.check(&run, "-reference-rules", &mut stale);
    assert_fresh(stale);
}

#[test]
fn golden_imported_reference_smoke_run() {
    let golden = Golden { name: "imported", spec: fixture("spec.yaml"), dataset: fixture("data/micro-single-task") };
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("golden-imported");
    ok(Command::new(bin("ib-import"))
        .arg("--from")
        .arg(fixture("smoke-run"))
        .arg("--run")
        .arg(&run)
        .arg("--spec")
        .arg(&golden.spec)
        .arg("--dataset")
        .arg(&golden.dataset));
    let mut stale = Vec::new();
    let log = crate::ops::segment_text(&run, 1);
    let log = normalized(&run, &log);
    let log_hash = inferbench_contract::canonical::sha256_hex(log.as_bytes());
    golden.compare("events-0001.jsonl.sha256", format!("{log_hash}\n"), &mut stale);
    golden.rescore(&run, "inferbench");
    golden.check(&run, "", &mut stale);
    assert_fresh(stale);
}
