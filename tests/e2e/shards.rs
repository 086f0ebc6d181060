//! One run driven by two shards (`ib-fetch --shard i/2`) on one machine, against `ib-sim`: the
//! closed-loop workflow and a load step, each beside the same run fetched by one process.
//! Every later stage reads the shards' segments as one log: every scheduled request answered
//! exactly once, the figures that do not depend on timing equal to the unsharded run's, a
//! missing shard named, and the load step's arrivals on one clock across the shards.
use crate::load::{load_workspace, metrics, table, TABLE};
use crate::support::{ok, timed_section, Sim, Workspace};
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_store::parquet_io;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A `--start-at` a little in the future, so that both shards start from it.
fn soon() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    format!("{:.3}", now.as_secs_f64() + 1.5)
}

fn shard(ws: &Workspace, run: &Path, sim: &Sim, which: &str, start_at: &str) -> Command {
    let mut cmd = ws.stage("ib-fetch", run);
    cmd.args(["--endpoint-base", &sim.url, "--shard", which, "--start-at", start_at]);
    cmd
}

/// The log's lines with their segment, from the sealed table.
fn segment_openings(run: &Path) -> Vec<(u32, Envelope)> {
    let run_dir = inferbench_store::run::RunDir::new(run);
    let lock = inferbench_store::lock::read(&run_dir.lock()).unwrap();
    inferbench_store::event_log::read(&run_dir, &lock.run_id)
        .unwrap()
        .into_iter()
        .flat_map(|s| {
            let number = s.number;
            s.records.into_iter().filter(|e| matches!(e.event, Event::SegmentOpened(_))).map(move |e| (number, e))
        })
        .collect()
}

/// Every scheduled request has exactly one response, and its row is the schedule's.
fn every_request_once(run: &Path) -> Vec<ResponseRow> {
    let schedule: Vec<ScheduleRow> = table(&run.join("schedule.parquet"));
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &responses {
        *seen.entry(r.request_id.as_str()).or_default() += 1;
    }
    assert!(seen.values().all(|n| *n == 1), "a request answered twice: {seen:?}");
    let scheduled: BTreeMap<&str, (&str, i64)> =
        schedule.iter().map(|s| (s.request_id.as_str(), (s.provider.as_str(), s.round_index))).collect();
    assert_eq!(seen.keys().copied().collect::<Vec<_>>(), scheduled.keys().copied().collect::<Vec<_>>());
    for r in &responses {
        assert_eq!(scheduled[r.request_id.as_str()], (r.provider.as_str(), r.round_index));
    }
    responses
}

/// What does not depend on when a request was sent: each request's outcome and verdict.
fn verdicts(run: &Path) -> BTreeMap<String, (String, String)> {
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    let evaluations: Vec<EvaluationRow> = table(&run.join("evaluations.parquet"));
    let classes: BTreeMap<&str, String> =
        evaluations.iter().map(|e| (e.request_id.as_str(), format!("{:?}", e.classification))).collect();
    responses
        .iter()
        .map(|r| (r.request_id.clone(), (format!("{:?}", r.outcome), classes[r.request_id.as_str()].clone())))
        .collect()
}

#[test]
fn two_shards_drive_one_closed_loop_run_and_every_stage_reads_them_as_one_log() {
    let timed = timed_section();
    let ws = Workspace::with_table(TABLE, "sim-profiles.yaml", |spec| spec);
    let (sharded, whole) = (ws.run("sharded"), ws.run("whole"));
    ok(ws.stage("ib-select", &sharded).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &sharded));
    inferbench_testkit::reference_run::copy_tree(&sharded, &whole);
    let sim = Sim::start(&ws);
    let start_at = soon();

    // Shard 1 alone: it sends its share (provider 1 of the lock's two) and says the log waits.
    let out = ok(&mut shard(&ws, &sharded, &sim, "1/2", &start_at));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("shard 1/2 is done; the log is sealed once every shard is"), "{said}");
    assert!(said.contains("shard 0/2 has no segment here (segments 1, 3, …)"), "{said}");
    assert!(!sharded.join("events.parquet").exists());
    assert!(sharded.join("events/0002.jsonl").exists() && !sharded.join("events/0001.jsonl").exists());
    // Nothing reads half a run as the run, and nothing seals it.
    let refused = ws.stage("ib-reconstruct", &sharded).output().unwrap();
    assert_eq!(refused.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no segment of shard 0/2"));
    let seal = ws.stage("ib-fetch", &sharded).arg("--seal-only").output().unwrap();
    assert_eq!(seal.status.code(), Some(3), "{}", String::from_utf8_lossy(&seal.stderr));
    assert!(String::from_utf8_lossy(&seal.stderr).contains("shard 0/2 has no segment here"));
    // A shard given another origin than the log's is refused.
    let other = shard(&ws, &sharded, &sim, "0/2", "1764615600").output().unwrap();
    assert_eq!(other.status.code(), Some(4), "{}", String::from_utf8_lossy(&other.stderr));

    // Shard 0, the last to finish, seals the log.
    let out = ok(&mut shard(&ws, &sharded, &sim, "0/2", &start_at));
    assert!(String::from_utf8_lossy(&out.stderr).contains("log sealed: 2 segment(s)"));
    assert!(sharded.join("events/0001.jsonl.zst").exists() && sharded.join("events/seal.json").exists());
    let openings = segment_openings(&sharded);
    assert_eq!(openings.len(), 2);
    let mut origins = Vec::new();
    for (number, env) in &openings {
        let Event::SegmentOpened(s) = &env.event else { unreachable!() };
        let shard = s.shard.as_ref().expect("a shard's segment names its shard");
        assert_eq!((shard.index + 1, shard.count, shard.requests), (*number, 2, 6), "segment {number}");
        assert_eq!(env.seq, 0, "each shard numbers its own lines");
        // Each segment's t_ns counts from the origin: its wall clock less its t_ns (the line is
        // stamped a moment after the wall clock is read).
        let anchor = s.wall_clock_unix_ns - env.t_ns;
        assert!(anchor <= shard.origin_unix_ns && shard.origin_unix_ns - anchor < 1_000_000, "{anchor}");
        origins.push(shard.origin_unix_ns);
    }
    assert_eq!(origins[0], origins[1]);

    ok(ws.stage("ib-fetch", &whole).args(["--endpoint-base", &sim.url]));
    drop(sim);
    drop(timed);
    ws.derive(&sharded);
    ws.derive(&whole);
    let responses = every_request_once(&sharded);
    every_request_once(&whole);
    // Each provider's requests came from one shard: one request at a time per provider, as
    // in the unsharded run.
    let providers: BTreeMap<&str, usize> = responses.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.provider.as_str()).or_default() += 1;
        m
    });
    assert_eq!(providers.values().copied().collect::<Vec<_>>(), [6, 6]);
    assert_eq!(verdicts(&sharded), verdicts(&whole), "the same outcome and verdict for every request");
    let (a, b) = (metrics(&sharded), metrics(&whole));
    let counts = |m: &inferbench_contract::documents::MetricsDocument| -> Vec<String> {
        m.task_family_metrics
            .iter()
            .chain(m.combined_provider_metrics.iter().map(|p| &p.metrics))
            .map(|g| {
                let counts = (g.scheduled_count, g.submitted_count, g.correct_count, g.failed_request_count);
                format!("{} {} {counts:?} {:?}", g.provider, g.task_family, g.task_success_rate)
            })
            .collect()
    };
    assert_eq!(counts(&a), counts(&b), "requests, task success and failure rates per provider");
    // The manifest names each segment's shard.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(sharded.join("manifest.json")).unwrap()).unwrap();
    let segments = &manifest["execution"]["segments"];
    assert_eq!(segments[1]["shard"], serde_json::json!({"index": 1, "count": 2}), "{segments}");
    // Rescoring a sharded run gives the same bytes.
    let before = std::fs::read(sharded.join("responses.parquet")).unwrap();
    ws.derive(&sharded);
    assert_eq!(std::fs::read(sharded.join("responses.parquet")).unwrap(), before);
}

#[test]
fn two_shards_send_one_load_step_on_one_clock() {
    let timed = timed_section();
    let ws = load_workspace(
        "  mode: open_loop\n  arrivals: constant\n  rates: [4]\n  step_seconds: 2\n  warmup_seconds: 0\n  \
         cooldown_seconds: 0\n  objectives: {e2e_ms: 5000, correct: false, goodput_target: 0.9}\n",
    );
    let (sharded, whole) = (ws.run("sharded-load"), ws.run("whole-load"));
    ok(ws.stage("ib-select", &sharded).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &sharded));
    inferbench_testkit::reference_run::copy_tree(&sharded, &whole);
    let sim = Sim::start(&ws);
    let start_at = soon();
    // Both shards at once, as a job runner starts them.
    let mut children: Vec<std::process::Child> = ["0/2", "1/2"]
        .iter()
        .map(|which| {
            shard(&ws, &sharded, &sim, which, &start_at)
                .args(["--deadline-seconds", "5"])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<std::process::Output> = children.drain(..).map(|c| c.wait_with_output().unwrap()).collect();
    for out in &outputs {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(sharded.join("events/seal.json").exists(), "the last shard to finish sealed the log");
    ok(ws.stage("ib-fetch", &whole).args(["--endpoint-base", &sim.url]));
    drop(sim);
    drop(timed);
    ws.derive(&sharded);
    ws.derive(&whole);

    let schedule: Vec<ScheduleRow> = table(&sharded.join("schedule.parquet"));
    let responses = every_request_once(&sharded);
    assert_eq!(responses.len(), 16, "8 arrivals to each of 2 providers");
    // Every arrival's providers were sent by one shard at one intended time, and every shard's
    // arrivals count from one planned opening of the step: one clock for both.
    let offsets: BTreeMap<&str, i64> =
        schedule.iter().map(|s| (s.request_id.as_str(), s.intended_offset_ns.unwrap())).collect();
    let zeros: std::collections::BTreeSet<i64> =
        responses.iter().map(|r| r.intended_t_ns - offsets[r.request_id.as_str()]).collect();
    assert_eq!(zeros.len(), 1, "one step opening across the shards: {zeros:?}");
    assert_eq!(*zeros.iter().next().unwrap(), 1_000_000_000, "the first step opens 1 s after --start-at");
    let mut rounds: BTreeMap<i64, Vec<&ResponseRow>> = BTreeMap::new();
    for r in &responses {
        rounds.entry(r.round_index).or_default().push(r);
    }
    for round in rounds.values() {
        assert_eq!(round[0].intended_t_ns, round[1].intended_t_ns);
        assert!(round.iter().all(|r| r.started_t_ns >= r.intended_t_ns), "none sent before it was due");
    }
    let openings = segment_openings(&sharded);
    let shares: Vec<u64> = openings
        .iter()
        .map(|(_, e)| match &e.event {
            Event::SegmentOpened(s) => s.shard.as_ref().unwrap().requests,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(shares, [8, 8], "arrivals 0, 2, 4, 6 and 1, 3, 5, 7, each to both providers");
    // The step's figures that do not depend on timing are the unsharded run's.
    let (a, b) = (metrics(&sharded).load.unwrap(), metrics(&whole).load.unwrap());
    let figures = |l: &inferbench_contract::documents::LoadMetrics| -> Vec<(String, u64, u64, f64)> {
        l.steps.iter().map(|s| (s.provider.clone(), s.requests, s.completed, s.offered_rate)).collect()
    };
    assert_eq!(figures(&a), figures(&b));
    assert_eq!(a.steps.len(), 2);
    let responses_whole: Vec<ResponseRow> = table(&whole.join("responses.parquet"));
    assert_eq!(responses_whole.len(), 16);
    let _ = parquet_io::read::<ResponseRow>(&sharded.join("responses.parquet")).unwrap();
}

#[test]
fn a_shard_killed_mid_run_resumes_its_own_share_alone() {
    let _timed = timed_section();
    let ws = Workspace::new();
    let run = ws.run("sharded-killed");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    let sim = Sim::start(&ws);
    let start_at = soon();
    let fetch = |which: &str, start_at: Option<&str>| {
        let mut cmd = ws.stage("ib-fetch", &run);
        cmd.args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.0", "--shard", which]);
        if let Some(start_at) = start_at {
            cmd.args(["--start-at", start_at]);
        }
        cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
        cmd
    };
    let mut first = fetch("0/2", Some(&start_at)).stderr(std::process::Stdio::null()).spawn().unwrap();
    let second = fetch("1/2", Some(&start_at)).stderr(std::process::Stdio::piped()).spawn().unwrap();
    // Shard 0's segment is events/0001.jsonl: killed once a round closed and another is in flight.
    let started = std::time::Instant::now();
    while !crate::resume::mid_run(&run) {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "shard 0 never reached its second round");
        assert!(first.try_wait().unwrap().is_none(), "shard 0 finished before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    // Rerun without --start-at: the log records the origin. It writes its next segment, 3.
    let resumed = fetch("0/2", None).output().unwrap();
    let other = second.wait_with_output().unwrap();
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
    if !run.join("events/seal.json").exists() {
        ok(ws.stage("ib-fetch", &run).arg("--seal-only"));
    }
    drop(sim);
    let numbers: Vec<u32> = segment_openings(&run).iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3], "shard 0's segments 1 and 3, shard 1's 2");
    let run_dir = inferbench_store::run::RunDir::new(&run);
    let lock = inferbench_store::lock::read(&run_dir.lock()).unwrap();
    let log = inferbench_store::event_log::read(&run_dir, &lock.run_id).unwrap();
    let interrupted: Vec<(u32, String)> = log
        .iter()
        .flat_map(|s| {
            s.records.iter().filter_map(move |e| match &e.event {
                Event::RequestTerminal(t) if t.outcome == inferbench_contract::vocab::Outcome::Interrupted => {
                    Some((s.number, t.request_id.clone()))
                }
                _ => None,
            })
        })
        .collect();
    assert!(!interrupted.is_empty(), "the killed shard's attempts in flight were closed");
    assert!(interrupted.iter().all(|(n, _)| *n == 3), "by its own next segment, never by the other shard");
    ws.derive(&run);
    let responses = every_request_once(&run);
    for (_, id) in &interrupted {
        let row = responses.iter().find(|r| &r.request_id == id).unwrap();
        assert!(row.attempt >= 2, "{id} was sent again: {row:?}");
    }
}
