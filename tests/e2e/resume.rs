//! A fetch killed mid-run resumes: exactly one final outcome per scheduled request, the
//! interrupted attempts kept in the log and closed as `interrupted`.
use crate::support::{ok, Sim, Workspace};
use inferbench_contract::event::{Envelope, Event, Outcome};
use inferbench_contract::tables::{ResponseRow, ScheduleRow};
use inferbench_store::jsonl;
use inferbench_store::parquet_io;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

fn run_id(run: &Path) -> String {
    inferbench_store::lock::read(&run.join("lock.json")).unwrap().run_id
}

fn events(run: &Path) -> Vec<Envelope> {
    let mut all = Vec::new();
    for segment in inferbench_store::event_log::read(&inferbench_store::run::RunDir::new(run), &run_id(run)).unwrap() {
        all.extend(segment.records);
    }
    all
}

/// True once a round has closed and a later request is in flight.
pub fn mid_run(run: &Path) -> bool {
    let Ok(segments) = inferbench_store::run::RunDir::new(run).segments() else { return false };
    let Some((_, path)) = segments.first() else { return false };
    let Ok(log) = jsonl::read::<Envelope>(path) else { return false };
    let closed = log.records.iter().any(|e| matches!(e.event, Event::RoundClosed(_)));
    let mut open = BTreeSet::new();
    for e in &log.records {
        match &e.event {
            Event::RequestStarted(s) if closed => {
                open.insert(s.request_id.clone());
            }
            Event::RequestTerminal(t) => {
                open.remove(&t.request_id);
            }
            _ => {}
        }
    }
    closed && !open.is_empty()
}

/// A locked and scheduled run whose fetch against `sim` is running and has reached its second
/// round (returned while requests are in flight).
fn fetch_mid_run(ws: &Workspace, sim: &Sim, name: &str) -> (std::path::PathBuf, std::process::Child) {
    let run = ws.run(name);
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    let mut child = ws
        .stage("ib-fetch", &run)
        .args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.0"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !mid_run(&run) {
        assert!(started.elapsed() < Duration::from_secs(30), "fetch never reached its second round");
        assert!(child.try_wait().unwrap().is_none(), "fetch finished before it could be stopped");
        std::thread::sleep(Duration::from_millis(10));
    }
    (run, child)
}

#[test]
fn killed_fetch_resumes_with_one_outcome_per_request() {
    let _beside_others = crate::support::shared_section();
    let ws = Workspace::new();
    let sim = Sim::start(&ws);
    let (run, mut child) = fetch_mid_run(&ws, &sim, "run-resume");
    let fetch = || {
        let mut cmd = ws.stage("ib-fetch", &run);
        cmd.args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.0"]);
        cmd
    };
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(!run.join("events.parquet").exists(), "a killed fetch does not seal");

    ok(&mut fetch());
    let log = events(&run);
    let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..log.len() as u64).collect::<Vec<_>>(), "seq is gap-free across segments");
    let interrupted: Vec<&str> = log
        .iter()
        .filter_map(|e| match &e.event {
            Event::RequestTerminal(t) if t.outcome == Outcome::Interrupted => Some(t.request_id.as_str()),
            _ => None,
        })
        .collect();
    assert!(!interrupted.is_empty(), "the in-flight attempts were closed as interrupted");
    let mut finals: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &log {
        if let Event::RequestTerminal(t) = &e.event {
            if t.outcome != Outcome::Interrupted {
                *finals.entry(t.request_id.as_str()).or_default() += 1;
            }
        }
    }
    let schedule = parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows;
    assert_eq!(finals.len(), schedule.len(), "every scheduled request has a final outcome");
    assert!(finals.values().all(|n| *n == 1), "exactly one final outcome each: {finals:?}");

    ok(&mut ws.stage("ib-reconstruct", &run));
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), schedule.len());
    for id in interrupted {
        let row = responses.iter().find(|r| r.request_id == id).unwrap();
        assert!(row.attempt >= 2 && row.outcome != Outcome::Interrupted, "{id} was re-sent: {row:?}");
    }
}

#[test]
fn sigterm_stops_fetch_cleanly_and_records_what_finished() {
    let _beside_others = crate::support::shared_section();
    let ws = Workspace::new();
    let sim = Sim::start(&ws);
    let (run, mut child) = fetch_mid_run(&ws, &sim, "run-sigterm");
    let kill = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    assert_eq!(child.wait().unwrap().code(), Some(5), "SIGTERM exits 5 (interrupted)");
    let log = events(&run);
    let finals = log
        .iter()
        .filter(|e| matches!(&e.event, Event::RequestTerminal(t) if t.outcome != Outcome::Interrupted))
        .count() as u64;
    match &log.last().unwrap().event {
        Event::SegmentClosed(closed) => {
            assert_eq!(closed.status, inferbench_contract::vocab::SegmentStatus::Interrupted);
            assert_eq!(closed.terminal_requests, finals, "the count matches the terminal events logged");
        }
        other => panic!("the segment ends with segment_closed, not {other:?}"),
    }
    ok(ws.stage("ib-fetch", &run).args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.0"]));
    assert!(run.join("events.parquet").exists(), "the resumed fetch completes and seals");
}

#[test]
fn a_run_never_mixes_simulated_and_real_segments() {
    let _beside_others = crate::support::shared_section();
    let ws = Workspace::new();
    let sim = Sim::start(&ws);
    let (run, mut child) = fetch_mid_run(&ws, &sim, "run-mixed");
    child.kill().unwrap();
    child.wait().unwrap();
    let before = crate::bad_input::snapshot(&run);
    // The same run resumed against the provider table's real endpoints is refused.
    let out = ws
        .stage("ib-fetch", &run)
        .args(["--deadline-seconds", "1.0", "--env-file", "/nonexistent"])
        .envs(crate::pipeline::SECRETS)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("this run was fetched from simulated providers"), "{stderr}");
    assert!(crate::bad_input::snapshot(&run) == before, "nothing was written or sent");
}
