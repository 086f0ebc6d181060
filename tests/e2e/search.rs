//! The capacity search end to end, against a server written apart from inferbench
//! (`tests/fixtures/slot-server.py`: a fixed number of slots, a fixed service time, a FIFO
//! queue), whose capacity is therefore known: `make load SEARCH=…` finds it within 10 %, past
//! it the latency from the intended send shows the queue, no request is dropped, every
//! probe's goodput is what `responses.parquet` gives, and a rescore rewrites the record
//! byte for byte.
use crate::support::{repo, timed_section};
use inferbench_contract::documents::{MetricsDocument, SearchDocument, SearchStatus, Verdict};
use inferbench_contract::tables::{ResponseRow, ScheduleRow};
use inferbench_contract::vocab::Outcome;
use inferbench_store::parquet_io;
use std::path::Path;
use std::process::{Child, Command};

const SLOTS: u32 = 4;
const SERVICE_MS: f64 = 100.0;
/// Requests per second the server can serve.
const CAPACITY: f64 = SLOTS as f64 * 1000.0 / SERVICE_MS;
const E2E_OBJECTIVE_MS: f64 = 150.0;

struct SlotServer {
    child: Child,
    url: String,
}

impl SlotServer {
    fn start(dir: &Path) -> SlotServer {
        let port_file = dir.join("slot-url");
        let mut child = Command::new("python3")
            .arg(repo().join("tests/fixtures/slot-server.py"))
            .args(["--slots", &SLOTS.to_string(), "--service-ms", &SERVICE_MS.to_string()])
            .arg("--port-file")
            .arg(&port_file)
            .spawn()
            .expect("python3");
        for _ in 0..200 {
            if let Ok(url) = std::fs::read_to_string(&port_file) {
                return SlotServer { child, url };
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the slot server did not start");
    }
}

impl Drop for SlotServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn make(args: &[String]) {
    let out = Command::new("make")
        .current_dir(repo())
        .args(["--no-print-directory", "CARGO=true"])
        .arg(format!("BIN={}", repo().join("target/debug").display()))
        .args(args)
        .env_remove("IB_LOAD_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "make {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

fn search_doc(dir: &Path) -> SearchDocument {
    serde_json::from_slice(&std::fs::read(dir.join("search.json")).unwrap()).unwrap()
}

/// A probe's goodput as anyone can recompute it from its tables: of the requests intended in
/// the step's window, the share that completed within the E2E objective measured from the
/// intended send (the send lag plus the latency from the actual send).
fn goodput_from_tables(probe: &Path, doc: &MetricsDocument) -> f64 {
    let load = doc.load.as_ref().unwrap();
    let (from, to) = (load.warmup_seconds * 1e9, (load.step_seconds - load.cooldown_seconds) * 1e9);
    let schedule = parquet_io::read::<ScheduleRow>(&probe.join("schedule.parquet")).unwrap().rows;
    let responses = parquet_io::read::<ResponseRow>(&probe.join("responses.parquet")).unwrap().rows;
    let in_window: Vec<&str> = schedule
        .iter()
        .filter(|s| s.intended_offset_ns.is_some_and(|o| (from..to).contains(&(o as f64))))
        .map(|s| s.request_id.as_str())
        .collect();
    let good = responses
        .iter()
        .filter(|r| in_window.contains(&r.request_id.as_str()) && r.outcome == Outcome::Completed)
        .filter(|r| r.send_lag_ms + r.e2e_latency_ms.unwrap_or(f64::INFINITY) <= E2E_OBJECTIVE_MS)
        .count();
    good as f64 / in_window.len() as f64
}

#[test]
fn a_capacity_search_finds_a_servers_known_capacity_within_ten_percent() {
    let one_at_a_time = timed_section();
    let scratch = tempfile::tempdir().unwrap();
    let server = SlotServer::start(scratch.path());
    let run = scratch.path().join("runs/workflow=load/run=search");
    make(&[
        "load".into(),
        format!("TARGET={}/v1", server.url),
        "MODEL=slot".into(),
        "SEARCH=8 128".into(),
        "TOLERANCE=0.1".into(),
        "DURATION=2".into(),
        "ARRIVALS=constant".into(),
        "TIMEOUT=30".into(),
        format!("OBJECTIVES=e2e_ms={E2E_OBJECTIVE_MS} ttfa_ms=off correct=false goodput_target=0.9"),
        format!("RUN={}", run.display()),
    ]);
    // What follows reads and re-derives files: no timing left to protect.
    drop(server);
    drop(one_at_a_time);
    let doc = search_doc(&run);
    let found = &doc.results[0];
    assert_eq!(found.status, SearchStatus::Found, "{}", std::fs::read_to_string(run.join("report.md")).unwrap());
    let (holds, fails) = (found.holds_at.unwrap(), found.fails_at.unwrap());
    assert!((holds - CAPACITY).abs() <= 0.1 * CAPACITY, "capacity {CAPACITY} req/s, found {holds} (fails at {fails})");
    assert!(fails <= holds * 1.1 && fails > holds, "{found:?}");

    for probe in &doc.probes {
        let dir = run.join(&probe.run);
        let metrics: MetricsDocument =
            serde_json::from_slice(&std::fs::read(dir.join("metrics.json")).unwrap()).unwrap();
        let step = &metrics.load.as_ref().unwrap().steps[0];
        let verdict = &probe.providers[0];
        // Nothing dropped: every scheduled request has its response, drained after the step.
        let scheduled = parquet_io::read::<ScheduleRow>(&dir.join("schedule.parquet")).unwrap().rows.len();
        let responses = parquet_io::read::<ResponseRow>(&dir.join("responses.parquet")).unwrap().rows;
        assert_eq!(responses.len(), scheduled, "{}: every request is answered", probe.run);
        assert!(
            responses.iter().all(|r| r.outcome == Outcome::Completed),
            "{}: a 30 s deadline drains the queue",
            probe.run
        );
        let recomputed = goodput_from_tables(&dir, &metrics);
        assert!((verdict.goodput.unwrap() - recomputed).abs() < 1e-9, "{}: {verdict:?} vs {recomputed}", probe.run);
        if probe.rate >= 1.5 * CAPACITY {
            // Past capacity the queue grows through the step, and the latency from the
            // intended send shows it while the client keeps its schedule.
            let e2e = step.e2e_ms.p99.unwrap();
            assert!(e2e > 2.0 * SERVICE_MS, "{}: E2E p99 {e2e} ms from the intended send", probe.run);
            assert!(step.send_lag_ms.p50.unwrap() < 5.0, "{}: {:?}", probe.run, step.send_lag_ms);
            assert_eq!(verdict.verdict, Verdict::Fails);
        }
    }

    // ib-compare over the runs skips the search's directory (no run), lists what it found, and
    // compares its probes, named, as the load runs they are: one step each, at the probe's rate.
    let out = scratch.path().join("compared");
    let compared = Command::new(crate::compare::ib_compare())
        .arg("--out")
        .arg(&out)
        .arg(scratch.path().join("runs/*/*"))
        .arg(run.join("probes/*"))
        .output()
        .unwrap();
    assert!(compared.status.success(), "{}", String::from_utf8_lossy(&compared.stderr));
    assert!(String::from_utf8_lossy(&compared.stderr).contains("a capacity search's directory"));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let listed = format!("| {} | {} | {holds:.2} | {fails:.2} | found |", doc.probes.len(), found.provider);
    assert!(summary.contains(&listed), "{listed}\n{summary}");
    assert!(summary.contains(&format!("## Workflow `load`: {} runs", doc.probes.len())), "{summary}");
    assert!(summary.contains(&format!("capacity across {} load runs", doc.probes.len())), "{summary}");

    // A rescore of the search re-scores every probe and rewrites the record byte for byte.
    let before = std::fs::read(run.join("search.json")).unwrap();
    make(&["rescore".into(), format!("RUN={}", run.display())]);
    assert_eq!(std::fs::read(run.join("search.json")).unwrap(), before, "search.json after a rescore");

    // The search's spec is many runs, not one: ib-select refuses it, locking nothing.
    let single = run.parent().unwrap().join("run=single");
    let out = Command::new(crate::support::bin("ib-select"))
        .current_dir(repo())
        .arg("--run")
        .arg(&single)
        .arg("--spec")
        .arg(run.join("pipeline/spec.yaml"))
        .args(["--dataset", "data/micro-single-task"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("make search") && !single.join("lock.json").exists(), "{stderr}");
}
