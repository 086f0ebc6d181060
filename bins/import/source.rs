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
use crate::fields::{Doc, Problems};
use inferbench_contract::vocab::TaskFamily;
use inferbench_contract::{lenient_json, Error, Result};
use inferbench_judge::timing::deltas;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
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

/// The runner error the reference scores as a transport error (§5.9).
const HISTORICAL_TYPE: &str = "AttributeError";
const HISTORICAL_MESSAGE: &str = "'NoneType' object has no attribute 'read'";

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
        let lock = read_lock(dir, &mut p, &mut copied);
        let selection = read_selection(dir, &mut p, &mut copied, lock.as_ref());
        let rounds = read_plan(dir, kind, &mut p, &mut copied);
        let plan_units: BTreeMap<&str, &Unit> =
            rounds.iter().flat_map(|r| &r.units).map(|u| (u.request_id.as_str(), u)).collect();
        let records = read_records(dir, kind, &plan_units, &mut p);
        let round_artifacts = read_round_artifacts(dir, kind, &rounds, &mut p, &mut copied);
        let evaluations = read_evaluations(dir, kind, &mut p);
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

fn read_lock(dir: &Path, p: &mut Problems, copied: &mut BTreeMap<String, Vec<u8>>) -> Option<RefLock> {
    let rel = "run-lock.json";
    let (bytes, value) = read_json(dir, rel, p)?;
    let doc = Doc::new(rel, &value);
    let before = p.lines.len();
    let run_id = doc.string(p, "run_id");
    let slug = doc.string(p, "benchmark_slug");
    let release = doc.string(p, "dataset_release_hash");
    let selection_hash = doc.string(p, "selection_hash");
    let inputs = doc.string_map(p, "human_input_hashes");
    let runtime = doc.get("runtime");
    let text = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_string);
    if let Some(hash) = release.filter(|h| !is_sha256(h)) {
        p.push(format!("{rel}: dataset_release_hash: expected 64 lower-case hex digits, found {hash:?}"));
    }
    if p.lines.len() > before {
        return None;
    }
    let mut input_hashes = BTreeMap::new();
    for (path, hash) in inputs.unwrap_or_default() {
        // `/home/bench/data/micro-single-task/manifest.json` → `manifest.json`.
        let name = path.rsplit(['/', '\\']).next().unwrap_or(&path).to_string();
        input_hashes.insert(name, hash);
    }
    copied.insert(rel.to_string(), bytes.clone());
    Some(RefLock {
        run_id: run_id?.to_string(),
        benchmark_slug: slug?.to_string(),
        dataset_release_hash: release?.to_string(),
        selection_hash: selection_hash?.to_string(),
        execution_configuration_hash: text("execution_configuration_hash"),
        resolved_adapters_sha256: text("resolved_adapters_sha256"),
        input_hashes,
        execution_region: runtime.and_then(|r| r.get("execution_region")).and_then(Value::as_str).map(str::to_string),
        hostname_hash: runtime.and_then(|r| r.get("hostname_hash")).and_then(Value::as_str).map(str::to_string),
        sha256: inferbench_contract::canonical::sha256_hex(&bytes),
    })
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn family(doc: &Doc, p: &mut Problems, key: &str) -> Option<TaskFamily> {
    let text = doc.string(p, key)?;
    match text.parse() {
        Ok(family) => Some(family),
        Err(_) => {
            p.push(format!("{}: `{text}` is not a task family of this benchmark", doc.at(key)));
            None
        }
    }
}

fn read_selection(
    dir: &Path,
    p: &mut Problems,
    copied: &mut BTreeMap<String, Vec<u8>>,
    lock: Option<&RefLock>,
) -> Option<RefSelection> {
    let rel = "artifacts/selection.json";
    let (bytes, value) = read_json(dir, rel, p)?;
    let doc = Doc::new(rel, &value);
    let algorithm_version = doc.string(p, "algorithm_version")?.to_string();
    if let Some(lock) = lock {
        if doc.get("dataset_release_hash").and_then(Value::as_str) != Some(&lock.dataset_release_hash) {
            p.push(format!("{rel}: dataset_release_hash: differs from run-lock.json's"));
        }
        if doc.get("benchmark_slug").and_then(Value::as_str) != Some(&lock.benchmark_slug) {
            p.push(format!("{rel}: benchmark_slug: differs from run-lock.json's"));
        }
        let content_hash = inferbench_contract::canonical::hash(&value);
        if content_hash != lock.selection_hash {
            p.push(format!(
                "{rel}: its content hash {}… differs from run-lock.json's selection_hash {}…",
                &content_hash[..12],
                inferbench_contract::canonical::short_hash(&lock.selection_hash)
            ));
        }
    }
    let families = doc.object(p, "families")?;
    let mut out = BTreeMap::new();
    for (name, entry) in families.value.as_object().into_iter().flatten() {
        let fam_doc = families.child(name, entry);
        let Ok(family) = name.parse::<TaskFamily>() else {
            p.push(format!("{}: `{name}` is not a task family of this benchmark", families.at(name)));
            continue;
        };
        let order: Option<Vec<String>> = fam_doc
            .array(p, "full_family_order")
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect::<Vec<_>>());
        let seed = fam_doc.string(p, "seed");
        if let (Some(order), Some(seed)) = (order, seed) {
            let unique: BTreeSet<&String> = order.iter().collect();
            if unique.len() != order.len()
                || order.len() != fam_doc.get("full_family_order").map_or(0, |v| v.as_array().map_or(0, Vec::len))
            {
                p.push(format!("{}: full_family_order: expected distinct item id strings", fam_doc.at("")));
            }
            out.insert(family, (order, seed.to_string()));
        }
    }
    copied.insert(rel.to_string(), bytes);
    Some(RefSelection { algorithm_version, families: out })
}

fn read_plan(dir: &Path, kind: Kind, p: &mut Problems, copied: &mut BTreeMap<String, Vec<u8>>) -> Vec<Round> {
    let rel = kind.plan_file();
    let Some((bytes, value)) = read_json(dir, &rel, p) else { return Vec::new() };
    copied.insert(rel.clone(), bytes);
    let doc = Doc::new(&rel, &value);
    if doc.get("kind").and_then(Value::as_str) != Some(kind.name()) {
        p.push(format!("{}: expected `{}`, found {}", doc.at("kind"), kind.name(), value["kind"]));
    }
    if let Kind::Smoke(n) = kind {
        if doc.get("attempt").and_then(Value::as_u64) != Some(u64::from(n)) {
            p.push(format!("{}: expected {n}, found {}", doc.at("attempt"), value["attempt"]));
        }
    }
    let Some(items) = doc.array(p, "rounds") else { return Vec::new() };
    let mut rounds = Vec::with_capacity(items.len());
    let mut seen = BTreeSet::new();
    let mut providers: Option<BTreeSet<String>> = None;
    for (i, item) in items.iter().enumerate() {
        let rd = doc.element("rounds", i, item);
        let (Some(round_id), Some(round_index), Some(fam), Some(item_id), Some(requests)) = (
            rd.string(p, "round_id"),
            rd.u64(p, "round_index"),
            family(&rd, p, "task_family"),
            rd.string(p, "item_id"),
            rd.array(p, "requests"),
        ) else {
            continue;
        };
        if round_index != i as u64 {
            p.push(format!("{}: expected {i} (rounds are in index order), found {round_index}", rd.at("round_index")));
        }
        let mut units = Vec::with_capacity(requests.len());
        for (j, request) in requests.iter().enumerate() {
            let ud = rd.element("requests", j, request);
            let (Some(request_id), Some(provider), Some(launch_index)) =
                (ud.string(p, "request_id"), ud.string(p, "provider"), ud.u64(p, "provider_launch_index"))
            else {
                continue;
            };
            let unit = Unit {
                request_id: request_id.to_string(),
                round_id: round_id.to_string(),
                round_index,
                provider: provider.to_string(),
                launch_index,
                task_family: fam,
                item_id: item_id.to_string(),
            };
            let same = |key: &str, expected: &Value| ud.get(key) == Some(expected);
            for (key, expected) in [
                ("round_id", Value::from(round_id)),
                ("round_index", Value::from(round_index)),
                ("task_family", Value::from(fam.as_str())),
                ("item_id", Value::from(item_id)),
            ] {
                if !same(key, &expected) {
                    p.push(format!("{}: differs from its round's {key} {expected}", ud.at(key)));
                }
            }
            if launch_index != j as u64 {
                p.push(format!(
                    "{}: expected {j} (its place in the round), found {launch_index}",
                    ud.at("provider_launch_index")
                ));
            }
            if !seen.insert(unit.request_id.clone()) {
                p.push(format!("{}: {request_id} is scheduled twice", ud.at("request_id")));
            }
            units.push(unit);
        }
        if let Some(order) = rd.get("provider_launch_order").and_then(Value::as_array) {
            let named: Vec<&str> = order.iter().filter_map(Value::as_str).collect();
            let actual: Vec<&str> = units.iter().map(|u| u.provider.as_str()).collect();
            if named != actual {
                p.push(format!(
                    "{}: differs from the order of its requests' providers",
                    rd.at("provider_launch_order")
                ));
            }
        }
        let set: BTreeSet<String> = units.iter().map(|u| u.provider.clone()).collect();
        if set.len() != units.len() {
            p.push(format!("{}: a provider appears twice in the round", rd.at("requests")));
        }
        match &providers {
            None => providers = Some(set),
            Some(first) if *first != set => {
                p.push(format!("{}: its providers differ from round 0's", rd.at("requests")))
            }
            _ => {}
        }
        rounds.push(Round { round_id: round_id.to_string(), round_index, units });
    }
    let total: usize = rounds.iter().map(|r| r.units.len()).sum();
    for (key, actual) in [("expected_rounds", rounds.len()), ("expected_requests", total)] {
        if let Some(n) = doc.get(key).and_then(Value::as_u64).filter(|n| *n != actual as u64) {
            p.push(format!("{}: {n}, but the plan holds {actual}", doc.at(key)));
        }
    }
    rounds
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

fn read_records(dir: &Path, kind: Kind, plan: &BTreeMap<&str, &Unit>, p: &mut Problems) -> BTreeMap<String, Record> {
    let partition = kind.partition();
    let mut records = BTreeMap::new();
    for name in sorted_json_files(&dir.join("raw").join(&partition)) {
        let rel = format!("raw/{partition}/{name}");
        let Some((_, value)) = read_json(dir, &rel, p) else { continue };
        if let Some(record) = record(dir, &rel, &name, &value, &partition, plan, p) {
            records.insert(record.unit.request_id.clone(), record);
        }
    }
    records
}

/// What the reference's classification says the event's payload is.
fn event_body(ed: &Doc, classification: &str, p: &mut Problems) -> Option<EventBody> {
    let payload = ed.get("redacted_payload");
    let compact = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    match classification {
        "sse_comment" => match payload.and_then(|v| v.get("comment")).and_then(Value::as_str) {
            Some(text) => Some(EventBody::Comment(text.to_string())),
            None => {
                p.push(format!("{}: a comment's payload must be {{\"comment\": <text>}}", ed.at("redacted_payload")));
                None
            }
        },
        "done" => match payload {
            Some(Value::String(s)) if s == "[DONE]" => Some(EventBody::Data(s.clone())),
            _ => {
                p.push(format!("{}: a `done` event's payload must be \"[DONE]\"", ed.at("redacted_payload")));
                None
            }
        },
        // An event whose data was empty: the payload is its SSE fields, already kept.
        "sse_metadata" => Some(EventBody::Data(String::new())),
        "malformed_sse" => match payload {
            Some(Value::String(raw)) => Some(EventBody::Data(raw.clone())),
            Some(other) => Some(EventBody::Data(compact(other))),
            None => {
                p.push(format!("{}: missing", ed.at("redacted_payload")));
                None
            }
        },
        "reasoning_and_answer" | "reasoning" | "answer" | "usage" | "finish" | "role" | "empty_delta" | "metadata" => {
            match payload {
                Some(object @ Value::Object(_)) => {
                    // The reference's channel check (§6.9): the saved channel texts are the
                    // payload's, or the figures it derived from them are not the payload's.
                    let (reasoning, answer) = deltas(object);
                    for (key, expected) in [("reasoning_content", &reasoning), ("answer_content", &answer)] {
                        match ed.get(key) {
                            Some(Value::String(saved)) if saved == expected => {}
                            None | Some(Value::Null) if expected.is_empty() => {}
                            saved => p.push(format!(
                                "{}: {} differs from the text its payload carries ({:?})",
                                ed.at(key),
                                saved.map_or("missing".to_string(), |v| v.to_string()),
                                expected
                            )),
                        }
                    }
                    Some(EventBody::Data(compact(object)))
                }
                _ => {
                    p.push(format!(
                        "{}: a `{classification}` event's payload must be a JSON object",
                        ed.at("redacted_payload")
                    ));
                    None
                }
            }
        }
        other => {
            p.push(format!("{}: `{other}` is not a classification the reference writes", ed.at("classification")));
            None
        }
    }
}

fn status_text(status: Option<u16>) -> String {
    status.map_or_else(|| "null".to_string(), |s| s.to_string())
}

fn opt_text(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

fn record(
    dir: &Path,
    rel: &str,
    name: &str,
    value: &Value,
    partition: &str,
    plan: &BTreeMap<&str, &Unit>,
    p: &mut Problems,
) -> Option<Record> {
    let doc = Doc::new(rel, value);
    let before = p.lines.len();
    if !value.is_object() {
        p.push(format!("{rel}: expected a terminal record (a JSON object)"));
        return None;
    }
    let request_id = doc.string(p, "request_id")?;
    if name.strip_suffix(".json") != Some(request_id) {
        p.push(format!("{}: {request_id} is not the file's name", doc.at("request_id")));
    }
    let Some(unit) = plan.get(request_id).copied() else {
        p.push(format!("{}: {request_id} is not in the plan of raw/{partition}", doc.at("request_id")));
        return None;
    };
    for (key, expected) in [
        ("provider", Value::from(unit.provider.as_str())),
        ("round_id", Value::from(unit.round_id.as_str())),
        ("round_index", Value::from(unit.round_index)),
        ("task_family", Value::from(unit.task_family.as_str())),
        ("item_id", Value::from(unit.item_id.as_str())),
    ] {
        if doc.get(key) != Some(&expected) {
            p.push(format!(
                "{}: expected the plan's {expected}, found {}",
                doc.at(key),
                value.get(key).unwrap_or(&Value::Null)
            ));
        }
    }
    let outcome = doc.string(p, "terminal_outcome");
    let start_ns = doc.u64(p, "request_start_monotonic_ns");
    let http_status = match doc.get("http_status") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().filter(|s| (100..=599).contains(s)) {
            Some(s) => Some(s as u16),
            None => {
                p.push(format!("{}: expected null or an HTTP status 100–599, found {v}", doc.at("http_status")));
                None
            }
        },
    };
    let error = match doc.get("error") {
        None | Some(Value::Null) => None,
        Some(e @ Value::Object(_)) => {
            let ed = doc.child("error", e);
            Some((ed.string(p, "type").unwrap_or_default().to_string(), opt_text(e.get("message")).unwrap_or_default()))
        }
        Some(other) => {
            p.push(format!("{}: expected null or {{type, message}}, found {other}", doc.at("error")));
            None
        }
    };
    let two_xx = http_status.is_some_and(|s| (200..300).contains(&s));
    let terminal = match outcome? {
        "completed" if two_xx => Terminal::Completed,
        "completed" => {
            p.push(format!(
                "{}: `completed` with http_status {}; a completed record is a 2xx",
                doc.at("terminal_outcome"),
                status_text(http_status)
            ));
            return None;
        }
        "http_error" if http_status.is_some() && !two_xx => Terminal::HttpError,
        "http_error" => {
            p.push(format!(
                "{}: `http_error` with http_status {}; an HTTP error has a non-2xx status",
                doc.at("terminal_outcome"),
                status_text(http_status)
            ));
            return None;
        }
        "timeout" => Terminal::Timeout,
        "transport_error" if error.as_ref().is_some_and(|(t, _)| t == "invalid_sse") => Terminal::InvalidSse,
        "transport_error" => Terminal::TransportError,
        "runner_error"
            if http_status.is_none()
                && error.as_ref().is_some_and(|(t, m)| t == HISTORICAL_TYPE && m == HISTORICAL_MESSAGE) =>
        {
            Terminal::HistoricalRunnerError
        }
        "runner_error" => Terminal::RunnerError,
        other => {
            p.push(format!(
                "{}: `{other}` is not one of completed, timeout, http_error, transport_error, runner_error",
                doc.at("terminal_outcome")
            ));
            return None;
        }
    };
    let events = events(&doc, request_id, p);
    if events.is_some() {
        check_durable_events(dir, partition, request_id, value, p);
        let joined = |key: &str| -> String {
            value["stream_events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.get(key).and_then(Value::as_str))
                .collect()
        };
        for (saved, channel) in
            [("reconstructed_answer", "answer_content"), ("reconstructed_reasoning", "reasoning_content")]
        {
            if let Some(Value::String(text)) = doc.get(saved) {
                if *text != joined(channel) {
                    p.push(format!(
                        "{}: the stream events do not reconstruct it (their {channel} joined differs)",
                        doc.at(saved)
                    ));
                }
            }
        }
    }
    let request = doc.object(p, "request");
    let body = request.as_ref().and_then(|r| r.object(p, "body")).map(|b| b.value.clone());
    let headers = request.as_ref().and_then(|r| r.string_map(p, "headers"));
    let endpoint = doc.string(p, "endpoint").map(str::to_string);
    let started_at = doc.opt_string(p, "started_at").flatten().map(str::to_string);
    let ended_ns = doc.get("ended_monotonic_ns").and_then(Value::as_u64);
    let head_headers = doc.string_map(p, "rate_limit_headers").unwrap_or_default();
    let response = doc.get("response");
    let response_body = match (terminal, response.and_then(|r| r.get("body"))) {
        (Terminal::HttpError, Some(Value::String(text))) => Some(text.clone()),
        (Terminal::HttpError, Some(Value::Null) | None) => None,
        (Terminal::HttpError, Some(other)) => Some(serde_json::to_string(other).unwrap_or_default()),
        _ => None,
    };
    let done_marker = response.and_then(|r| r.get("done_marker_observed")).and_then(Value::as_bool);
    if p.lines.len() > before {
        return None;
    }
    let events = events?;
    let done_marker = done_marker.unwrap_or_else(|| events.iter().any(|e| e.body == EventBody::Data("[DONE]".into())));
    let mut kept = value.clone();
    if let Some(list) = kept.get_mut("stream_events").and_then(Value::as_array_mut) {
        for event in list {
            if let Some(map) = event.as_object_mut() {
                map.remove("redacted_payload");
            }
        }
    }
    Some(Record {
        unit: unit.clone(),
        start_ns: start_ns?,
        ended_ns,
        started_at,
        terminal,
        http_status,
        error_type: error.as_ref().map(|(t, _)| t.clone()),
        error_message: error.map(|(_, m)| m),
        endpoint: endpoint?,
        body: body?,
        headers: headers?,
        response_body,
        head_headers,
        provider_request_id: opt_text(doc.get("provider_request_id")),
        done_marker,
        events,
        kept,
    })
}

fn events(doc: &Doc, request_id: &str, p: &mut Problems) -> Option<Vec<RefEvent>> {
    let list = match doc.get("stream_events") {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(_) => doc.array(p, "stream_events")?,
    };
    let before = p.lines.len();
    let mut events = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let ed = doc.element("stream_events", i, item);
        if !item.is_object() {
            p.push(format!("{}: expected an event object", ed.at("")));
            continue;
        }
        if ed.get("event_index").and_then(Value::as_u64) != Some(i as u64) {
            p.push(format!(
                "{}: expected {i} (events are numbered in order), found {}",
                ed.at("event_index"),
                item.get("event_index").unwrap_or(&Value::Null)
            ));
        }
        if let Some(id) = ed.get("request_id").and_then(Value::as_str).filter(|id| *id != request_id) {
            p.push(format!("{}: {id} is another request's", ed.at("request_id")));
        }
        let offset = ed.offset(p, "monotonic_offset_ms");
        let Some(classification) = ed.string(p, "classification") else { continue };
        let body = event_body(&ed, classification, p);
        let (Some(offset_ms), Some(body)) = (offset, body) else { continue };
        let text = |key: &str| opt_text(item.get(key));
        events.push((
            i,
            RefEvent {
                offset_ms,
                body,
                sse_event: text("sse_event"),
                sse_id: text("sse_id"),
                sse_retry: text("sse_retry"),
            },
        ));
    }
    if p.lines.len() > before {
        return None;
    }
    // The reference's recompute sorts events by (offset, index) before accumulating them.
    events.sort_by(|a, b| a.1.offset_ms.total_cmp(&b.1.offset_ms).then(a.0.cmp(&b.0)));
    Some(events.into_iter().map(|(_, e)| e).collect())
}

/// The per-event files the reference wrote at arrival must be the embedded events (its own
/// materialisation check, §7.2).
fn check_durable_events(dir: &Path, partition: &str, request_id: &str, record: &Value, p: &mut Problems) {
    let events_dir = dir.join("raw/stream-events").join(partition).join(request_id);
    if !events_dir.is_dir() {
        return;
    }
    let embedded = record["stream_events"].as_array().map(Vec::as_slice).unwrap_or_default();
    let files = sorted_json_files(&events_dir);
    let rel_dir = format!("raw/stream-events/{partition}/{request_id}");
    if files.len() != embedded.len() {
        p.push(format!(
            "{rel_dir}: {} event files, but raw/{partition}/{request_id}.json embeds {} events",
            files.len(),
            embedded.len()
        ));
        return;
    }
    for (i, name) in files.iter().enumerate() {
        let rel = format!("{rel_dir}/{name}");
        let Some((_, mut durable)) = read_json(dir, &rel, p) else { return };
        if let Some(map) = durable.as_object_mut() {
            map.remove("durability");
        }
        let mut expected = embedded[i].clone();
        if let Some(map) = expected.as_object_mut() {
            map.insert("request_id".into(), Value::from(request_id));
            map.insert("event_index".into(), Value::from(i));
        }
        if name != &format!("{i:08}.json") || durable != expected {
            p.push(format!("{rel}: differs from stream_events[{i}] of raw/{partition}/{request_id}.json"));
            return;
        }
    }
}

fn read_round_artifacts(
    dir: &Path,
    kind: Kind,
    rounds: &[Round],
    p: &mut Problems,
    copied: &mut BTreeMap<String, Vec<u8>>,
) -> BTreeMap<String, RoundArtifact> {
    let partition = kind.partition();
    let by_id: BTreeMap<&str, &Round> = rounds.iter().map(|r| (r.round_id.as_str(), r)).collect();
    let mut out = BTreeMap::new();
    for name in sorted_json_files(&dir.join("artifacts/rounds").join(&partition)) {
        let rel = format!("artifacts/rounds/{partition}/{name}");
        let Some((bytes, value)) = read_json(dir, &rel, p) else { continue };
        let doc = Doc::new(&rel, &value);
        let (Some(round_id), Some(skew), Some(resumed)) =
            (doc.string(p, "round_id"), doc.offset(p, "launch_skew_ms"), doc.bool(p, "resumed_partial_round"))
        else {
            continue;
        };
        let Some(round) = by_id.get(round_id) else {
            p.push(format!("{}: {round_id} is not a round of the plan", doc.at("round_id")));
            continue;
        };
        if name.strip_suffix(".json") != Some(round_id) {
            p.push(format!("{}: {round_id} is not the file's name", doc.at("round_id")));
        }
        if let Some(ids) = value.get("terminal_request_ids").and_then(Value::as_array) {
            let listed: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
            let planned: Vec<&str> = round.units.iter().map(|u| u.request_id.as_str()).collect();
            if listed != planned {
                p.push(format!("{}: differs from the plan's requests of the round", doc.at("terminal_request_ids")));
            }
        }
        copied.insert(rel.clone(), bytes);
        out.insert(round_id.to_string(), RoundArtifact { launch_skew_ms: skew, resumed_partial_round: resumed });
    }
    out
}

fn read_evaluations(dir: &Path, kind: Kind, p: &mut Problems) -> BTreeMap<String, Value> {
    let partition = kind.partition();
    // Against the record files, not the records that checked: a defective record is reported
    // once, as itself.
    let records: BTreeSet<String> = sorted_json_files(&dir.join("raw").join(&partition))
        .into_iter()
        .map(|n| n.trim_end_matches(".json").to_string())
        .collect();
    let mut out = BTreeMap::new();
    let mut take = |file: &str, value: Value, p: &mut Problems| {
        let doc = Doc::new(file, &value);
        let Some(id) = doc.string(p, "request_id").map(str::to_string) else { return };
        if !records.contains(&id) {
            p.push(format!("{}: {id} has no terminal record in raw/{partition}/", doc.at("request_id")));
            return;
        }
        out.insert(id, value);
    };
    let per_request = dir.join("artifacts/evaluations").join(&partition);
    if per_request.is_dir() {
        for name in sorted_json_files(&per_request) {
            let rel = format!("artifacts/evaluations/{partition}/{name}");
            if let Some((_, value)) = read_json(dir, &rel, p) {
                take(&rel, value, p);
            }
        }
        return out;
    }
    let rel = format!("artifacts/evaluations{}.jsonl", kind.suffix());
    let Ok(bytes) = std::fs::read(dir.join(&rel)) else { return out };
    for (i, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
        let at = format!("{rel}:{}", i + 1);
        match serde_json::from_str(line).ok().or_else(|| lenient_json::parse(line)) {
            Some(value) => take(&at, value, p),
            None => p.push(format!("{at}: not valid JSON")),
        }
    }
    out
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
