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
//! Here: what is read (the partition, the plan's units and rounds, the checked records) and
//! the directory's walk; `lock` reads the lock and the selection, `plan` the plan and the
//! round artifacts, `records` the terminal records with their events, and the evaluations.
mod lock;
mod plan;
mod records;

use crate::fields::Problems;
use inferbench_schemas::vocab::TaskFamily;
use inferbench_schemas::{lenient_json, Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Which of the reference's partitions a run directory's records belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Smoke(u32),
    Full,
}

impl Kind {
    /// `attempt-N` or `full`: the directory name under `raw/`, `artifacts/rounds/`, ….
    pub fn partition(self) -> String {
        match self {
            Kind::Smoke(n) => format!("attempt-{n}"),
            Kind::Full => "full".to_string(),
        }
    }

    /// The suffix of the partition's derived files (`metrics-attempt-1.json`, `metrics.json`).
    pub fn suffix(self) -> String {
        match self {
            Kind::Smoke(n) => format!("-attempt-{n}"),
            Kind::Full => String::new(),
        }
    }

    pub fn plan_file(self) -> String {
        match self {
            Kind::Smoke(n) => format!("artifacts/smoke-plan-attempt-{n}.json"),
            Kind::Full => "artifacts/full-plan.json".to_string(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Smoke(_) => "smoke",
            Kind::Full => "full",
        }
    }

    pub fn attempt(self) -> Option<u32> {
        match self {
            Kind::Smoke(n) => Some(n),
            Kind::Full => None,
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        if text == "full" {
            return Some(Kind::Full);
        }
        let n: u32 = text.strip_prefix("attempt-")?.parse().ok()?;
        (n >= 1).then_some(Kind::Smoke(n))
    }
}

/// One scheduled request of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub request_id: String,
    pub round_id: String,
    pub round_index: u64,
    pub provider: String,
    pub launch_index: u64,
    pub task_family: TaskFamily,
    pub item_id: String,
}

/// One paired round of the plan, its requests in launch order.
#[derive(Debug, Clone)]
pub struct Round {
    pub round_id: String,
    pub round_index: u64,
    pub units: Vec<Unit>,
}

/// The reference's record of a finished round.
#[derive(Debug, Clone)]
pub struct RoundArtifact {
    pub launch_skew_ms: f64,
    pub resumed_partial_round: bool,
}

/// How the reference ended a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    Completed,
    Timeout,
    HttpError,
    /// A transport failure of the HTTP library (reset, chunked-encoding error, …).
    TransportError,
    /// `transport_error` with error type `invalid_sse`: data that was not a JSON object, or a
    /// type, value or tokenizer error while reading the stream.
    InvalidSse,
    /// The `runner_error` the reference itself scores as a transport error (§5.9).
    HistoricalRunnerError,
    /// Any other `runner_error`: the runner failed, not the provider.
    RunnerError,
}

/// What one reference stream event held.
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    Comment(String),
    Data(String),
}

#[derive(Debug, Clone)]
pub struct RefEvent {
    pub offset_ms: f64,
    pub body: EventBody,
    pub sse_event: Option<String>,
    pub sse_id: Option<String>,
    pub sse_retry: Option<String>,
}

/// One terminal record, checked.
#[derive(Debug, Clone)]
pub struct Record {
    pub unit: Unit,
    pub start_ns: u64,
    pub ended_ns: Option<u64>,
    pub started_at: Option<String>,
    pub terminal: Terminal,
    pub http_status: Option<u16>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub endpoint: String,
    pub body: Value,
    pub headers: Vec<(String, String)>,
    /// The body of a non-2xx response, as text.
    pub response_body: Option<String>,
    /// The rate-limit headers the reference captured (redacted by it).
    pub head_headers: Vec<(String, String)>,
    pub provider_request_id: Option<String>,
    pub done_marker: bool,
    /// In arrival order (the reference's offsets, stably sorted as its recompute sorts them).
    pub events: Vec<RefEvent>,
    /// The record as the reference wrote it, its events without their payloads (the log
    /// holds those): what the log has no field for, kept in the imported run.
    pub kept: Value,
}

/// The reference lock's facts the import binds or checks.
#[derive(Debug, Clone)]
pub struct RefLock {
    pub run_id: String,
    pub benchmark_slug: String,
    pub dataset_release_hash: String,
    pub selection_hash: String,
    pub execution_configuration_hash: Option<String>,
    pub resolved_adapters_sha256: Option<String>,
    /// The reference's keys are machine paths; these are their file names → SHA-256.
    pub input_hashes: BTreeMap<String, String>,
    pub execution_region: Option<String>,
    pub hostname_hash: Option<String>,
    pub sha256: String,
}

#[derive(Debug, Clone)]
pub struct RefSelection {
    pub algorithm_version: String,
    /// Family → (its full order, its seed as a decimal string).
    pub families: BTreeMap<TaskFamily, (Vec<String>, String)>,
}

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

/// Reads a JSON file as the reference's parser would (`NaN` and `Infinity` are accepted).
fn read_json(dir: &Path, rel: &str, p: &mut Problems) -> Option<(Vec<u8>, Value)> {
    let bytes = match std::fs::read(dir.join(rel)) {
        Ok(bytes) => bytes,
        Err(e) => {
            p.push(format!("{rel}: cannot read: {e}"));
            return None;
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(value) => Some((bytes, value)),
        Err(e) => match std::str::from_utf8(&bytes).ok().and_then(lenient_json::parse) {
            Some(value) => Some((bytes, value)),
            None => {
                p.push(format!("{rel}:{}: not valid JSON ({e})", e.line()));
                None
            }
        },
    }
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

fn sorted_json_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
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

/// The reference's derived figures for the partition, when it derived them (a full run's
/// `metrics.json` only when its manifest is the full run's: a passed smoke writes one too).
pub fn reference_figures(source: &Source) -> Option<(&[u8], &[u8])> {
    let sfx = source.kind.suffix();
    if source.kind == Kind::Full {
        let manifest = source.copied.get("artifacts/run-manifest.json")?;
        let value: Value = serde_json::from_slice(manifest).ok()?;
        if value.get("kind").and_then(Value::as_str) != Some("full") {
            return None;
        }
    }
    let metrics = source.copied.get(&format!("artifacts/metrics{sfx}.json"))?;
    let paired = source.copied.get(&format!("artifacts/paired-comparisons{sfx}.json"))?;
    Some((metrics, paired))
}
