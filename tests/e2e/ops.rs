//! Helpers of the operator and kill tests (`operator.rs`, `kills.rs`): small runs against a
//! fast `ib-sim`, signals, bounded child processes, and the checks that a run directory is
//! whole (one final outcome per request, a gap-free log, no leftover temporaries, groups of
//! outputs from one run of their stage).
use crate::support::{files, ok, Sim, Workspace};
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::event::{Envelope, Event, Outcome};
use inferbench_contract::manifest::Manifest;
use inferbench_contract::tables::{MetricRow, PooledRow, ResponseRow, ScheduleRow};
use inferbench_store::parquet_io;
use inferbench_store::run::{RunDir, WRITER_LOCK};
use inferbench_store::{event_log, jsonl, stages};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A workspace whose simulated providers run at `scale` times the e2e profiles' speed: the
/// e2e profiles' one fault per provider, but rounds of a few hundred milliseconds, so a test
/// can afford many fetches (`staller` still outlasts any deadline these tests give).
pub fn fast_workspace(scale: f64) -> Workspace {
    let ws = Workspace::new();
    let path = ws.path("pipeline/sim-profiles.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let fast = text.replacen("time_scale: 1.0\n", &format!("time_scale: {scale}\n"), 1);
    assert_ne!(fast, text, "the e2e profiles no longer set time_scale: 1.0; update fast_workspace");
    std::fs::write(&path, fast).unwrap();
    ws
}

/// Locks and schedules `run` with `per_family` items of each family.
pub fn select_and_schedule(ws: &Workspace, run: &Path, per_family: usize) {
    ok(ws.stage("ib-select", run).args(["--per-family", &per_family.to_string(), "--sample"]));
    ok(&mut ws.stage("ib-schedule", run));
}

/// `ib-fetch` against `url` with a per-request deadline.
pub fn fetch(ws: &Workspace, run: &Path, url: &str, deadline: &str) -> Command {
    let mut cmd = ws.stage("ib-fetch", run);
    cmd.args(["--endpoint-base", url, "--deadline-seconds", deadline]);
    cmd
}

/// Starts `cmd` in the background with its output discarded.
pub fn spawn_quiet(cmd: &mut Command) -> Child {
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("spawn")
}

/// Sends `signal` (e.g. "-STOP") to `pid` with kill(1): the tests have no libc binding.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill").args([signal, &pid.to_string()]).status().expect("kill(1)");
    assert!(status.success(), "kill {signal} {pid} failed");
}

/// A child that is continued and killed when dropped, so a failing assertion never leaves a
/// stopped `ib-fetch` behind.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        // Only a child not yet reaped: its pid cannot have been reused.
        if let Ok(None) = self.0.try_wait() {
            let _ = Command::new("kill").args(["-CONT", &self.0.id().to_string()]).status();
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs `cmd` to completion, failing the test if it takes longer than `limit` (a stage that
/// waited for the writer lock instead of refusing would hang here).
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            signal(pid, "-KILL");
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

/// Waits until `ready` holds, failing after `limit` or when `child` exits first.
pub fn wait_for(child: &mut Child, what: &str, limit: Duration, ready: impl Fn() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(child.try_wait().unwrap().is_none(), "the process exited before {what}");
        assert!(started.elapsed() < limit, "no {what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The records of segment `n` read leniently (a live fetch may be writing its last line).
fn segment_records(run: &Path, n: u32) -> Vec<Envelope> {
    match jsonl::read::<Envelope>(&RunDir::new(run).segment(n)) {
        Ok(log) => log.records,
        Err(_) => Vec::new(),
    }
}

/// True once segment `n` has closed a round and has an attempt in flight after it: a fetch
/// stopped now leaves finished requests, open ones and unsent ones.
pub fn mid_run(run: &Path, n: u32) -> bool {
    let mut closed = false;
    let mut open = BTreeSet::new();
    for e in segment_records(run, n) {
        match e.event {
            Event::RoundClosed(_) => closed = true,
            Event::RequestStarted(s) if closed => {
                open.insert((s.request_id, s.attempt));
            }
            Event::RequestTerminal(t) => {
                open.remove(&(t.request_id, t.attempt));
            }
            _ => {}
        }
    }
    closed && !open.is_empty()
}

/// True once segment `n` has an attempt in flight.
pub fn in_flight(run: &Path, n: u32) -> bool {
    segment_records(run, n).iter().any(|e| matches!(e.event, Event::RequestStarted(_)))
}

/// What a completed fetch left, as checked by [`check_complete_log`].
pub struct LogFacts {
    pub segments: usize,
    /// Request ids with an attempt closed as `interrupted`.
    pub interrupted: BTreeSet<String>,
    /// Segments that end with a torn line (a kill in the middle of a write).
    pub torn: usize,
    pub events: Vec<Envelope>,
}

/// Checks a fetched run's log with the contract's reader and then line by line: `seq` runs
/// from 0 without a gap across segments, every line carries the lock's run id, every started
/// attempt has exactly one terminal event, and every scheduled request exactly one final
/// (non-`interrupted`) outcome; the log is sealed into `events.parquet`.
pub fn check_complete_log(run: &Path) -> LogFacts {
    let lock = inferbench_store::lock::read(&run.join("lock.json")).unwrap();
    let segments = event_log::read(&RunDir::new(run), &lock.run_id)
        .unwrap_or_else(|e| panic!("the contract's reader refuses the log: {e}"));
    let torn = segments.iter().filter(|s| s.torn_tail.is_some()).count();
    let count = segments.len();
    let events: Vec<Envelope> = segments.into_iter().flat_map(|s| s.records).collect();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>(), "seq is gap-free across segments");
    assert!(events.iter().all(|e| e.run_id == lock.run_id), "every line is the lock's run `{}`", lock.run_id);
    let mut started: BTreeMap<(String, u32), usize> = BTreeMap::new();
    let mut ended: BTreeMap<(String, u32), usize> = BTreeMap::new();
    let mut finals: BTreeMap<String, usize> = BTreeMap::new();
    let mut interrupted = BTreeSet::new();
    for e in &events {
        match &e.event {
            Event::RequestStarted(s) => *started.entry((s.request_id.clone(), s.attempt)).or_default() += 1,
            Event::RequestTerminal(t) => {
                *ended.entry((t.request_id.clone(), t.attempt)).or_default() += 1;
                if t.outcome == Outcome::Interrupted {
                    interrupted.insert(t.request_id.clone());
                } else {
                    *finals.entry(t.request_id.clone()).or_default() += 1;
                }
            }
            _ => {}
        }
    }
    assert!(started.values().all(|n| *n == 1), "an attempt was started twice");
    assert_eq!(
        started.keys().collect::<Vec<_>>(),
        ended.keys().collect::<Vec<_>>(),
        "every started attempt, and only those, has a terminal event"
    );
    assert!(ended.values().all(|n| *n == 1), "an attempt has two terminal events: {ended:?}");
    let scheduled: BTreeSet<String> = schedule(run).into_iter().map(|r| r.request_id).collect();
    assert_eq!(finals.keys().cloned().collect::<BTreeSet<_>>(), scheduled, "a final outcome per scheduled request");
    assert!(finals.values().all(|n| *n == 1), "exactly one final outcome per request: {finals:?}");
    assert!(run.join("events.parquet").exists(), "a completed fetch seals the log");
    LogFacts { segments: count, interrupted, torn, events }
}

pub fn schedule(run: &Path) -> Vec<ScheduleRow> {
    parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows
}

/// Responses are one per scheduled request; a request with an interrupted attempt was sent
/// again and its row is the later attempt's.
pub fn check_responses(run: &Path, interrupted: &BTreeSet<String>) {
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let ids: Vec<&str> = responses.iter().map(|r| r.request_id.as_str()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "one response per request");
    let scheduled = schedule(run);
    assert_eq!(unique, scheduled.iter().map(|r| r.request_id.as_str()).collect(), "a response per scheduled request");
    for r in responses.iter().filter(|r| interrupted.contains(&r.request_id)) {
        assert!(r.attempt >= 2 && r.outcome != Outcome::Interrupted, "{} was sent again: {r:?}", r.request_id);
    }
}

/// Files a killed writer may leave and the next writer must clear: temporaries (`*.tmp`)
/// anywhere in the run, and any hidden file (such as the commit journal `.commit.json`) but
/// the writer lock.
pub fn leftovers(run: &Path) -> Vec<String> {
    files(run)
        .iter()
        .map(|p| p.strip_prefix(run).unwrap().to_string_lossy().into_owned())
        .filter(|rel| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            (name.starts_with('.') && rel != WRITER_LOCK) || name.ends_with(".tmp")
        })
        .collect()
}

pub fn assert_no_leftovers(run: &Path, after: &str) {
    let left = leftovers(run);
    assert!(left.is_empty(), "{after}: left {left:?} in the run");
}

/// The bytes of every derived file of `run` (the files a rescore rewrites).
pub fn derived(run: &Path) -> BTreeMap<&'static str, Vec<u8>> {
    stages::derived_files().map(|name| (name, std::fs::read(run.join(name)).unwrap())).collect()
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `provenance.inputs` of a JSON document.
fn provenance_inputs(path: &Path) -> BTreeMap<String, String> {
    serde_json::from_value(json(path)["provenance"]["inputs"].clone()).unwrap()
}

/// The metrics group comes from one run of `ib-aggregate`: metrics.parquet's and
/// pooled.parquet's recorded inputs are metrics.json's and comparisons.json's.
pub fn check_metrics_group(run: &Path) {
    let parquet = parquet_io::read::<MetricRow>(&run.join("metrics.parquet")).unwrap().inputs;
    let metrics = provenance_inputs(&run.join("metrics.json"));
    assert_eq!(parquet, metrics, "metrics.parquet and metrics.json are from different runs of ib-aggregate");
    let pooled = parquet_io::read::<PooledRow>(&run.join("pooled.parquet")).unwrap().inputs;
    assert_eq!(pooled, metrics, "pooled.parquet and metrics.json are from different runs of ib-aggregate");
    assert_eq!(provenance_inputs(&run.join("comparisons.json")), metrics, "comparisons.json and metrics.json differ");
}

/// The report group comes from one run of `ib-report`: the manifest inventories this report.md
/// and this report.html.
pub fn check_report_group(run: &Path) {
    let manifest: Manifest = serde_json::from_value(json(&run.join("manifest.json"))).unwrap();
    for name in ["report.md", "report.html"] {
        let listed = &manifest.files[name];
        assert_eq!(listed.sha256, file_sha256(&run.join(name)).unwrap(), "manifest.json lists another {name}");
    }
}

/// A seeded generator (SplitMix64) of the kill delays: the same seed draws the same delays.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A delay drawn uniformly from [0, `max`].
    pub fn delay(&mut self, max: Duration) -> Duration {
        let micros = max.as_micros() as u64;
        Duration::from_micros(self.next() % (micros + 1))
    }
}

/// Path of the run's last log segment.
pub fn last_segment(run: &Path) -> PathBuf {
    RunDir::new(run).segments().unwrap().pop().expect("a log segment").1
}

/// Builds `run` (one item per family) in two fetch segments, the first stopped by SIGTERM
/// after its first round, and derives every later file from the first segment only: the run
/// is then complete, but each of its derived files is stale.
pub fn stale_run(ws: &Workspace, sim: &Sim, run: &Path) {
    select_and_schedule(ws, run, 1);
    let mut child = Guard(spawn_quiet(&mut fetch(ws, run, &sim.url, "0.3")));
    wait_for(&mut child.0, "a second round in flight", Duration::from_secs(30), || mid_run(run, 1));
    signal(child.0.id(), "-TERM");
    assert_eq!(child.0.wait().unwrap().code(), Some(5), "SIGTERM: interrupted");
    ws.derive(run);
    ok(&mut fetch(ws, run, &sim.url, "0.3"));
}

/// The text of segment `n` of `run`'s log, in whichever form it is (sealed or live).
pub fn segment_text(run: &Path, n: u32) -> String {
    let run = RunDir::new(run);
    let plain = run.segment(n);
    if plain.exists() {
        return std::fs::read_to_string(plain).unwrap();
    }
    let bytes = zstd::decode_all(std::fs::File::open(run.sealed_segment(n)).unwrap()).unwrap();
    String::from_utf8(bytes).unwrap()
}

/// Undoes the seal of `run`'s log, as `zstd -d` would (for tests that edit the plain
/// segments): every sealed segment decompressed back to `NNNN.jsonl`, the compressed files
/// and the seal record removed.
pub fn unseal(run: &Path) {
    let dir = RunDir::new(run);
    for (n, path) in dir.segments().unwrap() {
        if inferbench_store::run::is_sealed_segment(&path) {
            std::fs::write(dir.segment(n), segment_text(run, n)).unwrap();
            std::fs::remove_file(path).unwrap();
        }
    }
    let _ = std::fs::remove_file(dir.seal_record());
}
