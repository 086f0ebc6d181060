//! `make bench`: how fast inferbench's hot paths are, on this machine.
//!
//! - SSE framing: synthetic `chat.completion.chunk` streams fed in 1 KiB reads;
//! - the timing function over one request's events;
//! - re-scoring a full-size run: a synthetic event log of 6,000 requests (the reference
//!   benchmark's size) through the real `ib-reconstruct` binary;
//! - importing a full-size reference run: 6,000 reference terminal records (copies of the
//!   reference's own smoke records, `inferbench_testkit::reference_run`) through the real `ib-import`.
//!
//! - issue 9's targets (`targets` below): the offline rescore of a 6,000-request run made by
//!   `ib-synth` (each stage's wall time and peak RSS), a run of `BENCH_REQUESTS` requests
//!   (default 1,000,000; `0` skips it) made the same way (dataset, select, schedule,
//!   `ib-synth`, the seal, then every rescore stage with its peak RSS), and the run
//!   directory's bytes per request of both.
//!
//! Each figure of the first table is the best of several repetitions; the run prints Markdown
//! tables.

use inferbench_contract::canonical::file_sha256;
use inferbench_contract::event::{Envelope, Event, Outcome, RequestStarted, RequestTerminal, SegmentOpened};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::testutil;
use inferbench_contract::vocab::TaskFamily;
use inferbench_judge::sse;
use inferbench_judge::stream::StreamEnd;
use inferbench_judge::timing::{self, TimedEvent};
use inferbench_store::jsonl::AppendWriter;
use inferbench_store::parquet_io;
use inferbench_testkit::reference_run;
use std::time::{Duration, Instant};

fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..reps)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .min()
        .expect("at least one repetition")
}

fn chunk(content: &str) -> String {
    format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"m","choices":[{{"index":0,"delta":{{"content":{}}}}}]}}"#,
        serde_json::to_string(content).unwrap()
    )
}

fn sse_stream(events: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..events {
        out.push_str("data: ");
        out.push_str(&chunk(&format!("tok{i} ")));
        out.push_str("\n\n");
    }
    out.push_str("data: [DONE]\n\n");
    out.into_bytes()
}

fn bench_sse() -> (f64, f64) {
    let stream = sse_stream(50_000);
    let elapsed = best_of(5, || {
        let mut parser = sse::Parser::new(1 << 20);
        let mut frames = 0;
        for piece in stream.chunks(1024) {
            let (completed, oversized) = parser.feed(piece);
            assert!(oversized.is_none(), "no event exceeds the cap");
            frames += completed.len();
        }
        frames
    });
    let secs = elapsed.as_secs_f64();
    (stream.len() as f64 / secs / 1e6, 50_001.0 / secs)
}

fn bench_timing() -> f64 {
    let payloads: Vec<String> = (0..60).map(|i| chunk(&format!("\"f{i}\":{i},"))).collect();
    let mut events: Vec<TimedEvent> = payloads.iter().enumerate().map(|(i, p)| TimedEvent::data(i as f64, p)).collect();
    events.push(TimedEvent::data(60.0, "[DONE]"));
    let reps = 2_000;
    let closed = StreamEnd::completed();
    let elapsed = best_of(3, || {
        (0..reps).map(|_| timing::compute(&events, &closed, Some(200)).visible_answer_tokens).sum::<i64>()
    });
    reps as f64 / elapsed.as_secs_f64()
}

/// Writes a full-size synthetic run: a lock, a schedule and a log of 6,000 requests of 40
/// answer events and `[DONE]` each.
fn synthetic_run(dir: &std::path::Path) -> usize {
    let run = inferbench_store::run::RunDir::new(dir.join("run-bench"));
    std::fs::create_dir_all(run.events_dir()).unwrap();
    let lock = serde_json::json!({
        "v": 1, "run_id": "run-bench", "workflow": "bench", "benchmark_slug": "bench", "code_version": "bench",
        "inputs": {}, "dataset_release_hash": "0", "providers": (0..10).map(|p| format!("p{p}")).collect::<Vec<_>>(),
        "selection": {"algorithm_version": "v", "selected_items_per_task_family": 200, "sample": false, "seeds": {}},
        "tokenizer": {"encoding": "o200k_base", "implementation": "bench", "vocabulary_sha256": "0"},
    });
    inferbench_store::atomic::write_json(&run.lock(), &lock).unwrap();
    let schedule: Vec<ScheduleRow> = (0..6_000i64)
        .map(|r| {
            let (round_id, item_id) = (format!("round-{}", r / 10), format!("item-{}", r / 10));
            let (provider, request_id) = (format!("p{}", r % 10), format!("req-{r:06}"));
            ScheduleRow::new(r / 10, round_id, TaskFamily::TicketTriage, item_id, provider, r % 10, request_id)
        })
        .collect();
    let provenance = [("lock.json".to_string(), file_sha256(&run.lock()).unwrap())].into();
    parquet_io::write(&run.schedule(), &schedule, &provenance).unwrap();
    let mut log = AppendWriter::open(&run.segment(1)).unwrap();
    let (mut seq, mut t) = (0u64, 0u64);
    let mut emit = |event: Event, dt: u64| {
        t += dt;
        log.append(&Envelope { run_id: "run-bench".into(), t_ns: t, ..testutil::envelope(seq, event) }).unwrap();
        seq += 1;
    };
    let opened = SegmentOpened {
        schedule_sha256: file_sha256(&run.schedule()).unwrap(),
        scheduled_requests: 6_000,
        deadline_ms: 20_000,
        max_event_bytes: 1 << 20,
        max_response_bytes: 16 << 20,
        ..testutil::segment_opened(1)
    };
    emit(Event::SegmentOpened(opened), 0);
    for r in 0..6_000u64 {
        let request_id = format!("req-{r:06}");
        let started = RequestStarted {
            provider: format!("p{}", r % 10),
            item_id: format!("item-{}", r / 10),
            body: serde_json::json!({"model": "m", "stream": true}),
            intended_t_ns: r * 10_000_000,
            ..testutil::request_started(&request_id, r / 10)
        };
        emit(Event::RequestStarted(started), 1_000);
        for i in 0..=40u32 {
            // 40 answer chunks, then [DONE].
            let data = if i < 40 { chunk(&format!("\"k{i}\":\"v{i}\",")) } else { "[DONE]".to_string() };
            emit(Event::SseEvent(testutil::sse_event(&request_id, i, &data)), 5_000_000);
        }
        let completed = testutil::request_terminal(&request_id, Outcome::Completed);
        let terminal = RequestTerminal { http_status: Some(200), bytes_received: 8_000, done_seen: true, ..completed };
        emit(Event::RequestTerminal(terminal), 1_000);
    }
    seq as usize
}

fn bench_reconstruct() -> (usize, u64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let events = synthetic_run(dir.path());
    let run = dir.path().join("run-bench");
    let bytes = std::fs::metadata(run.join("events/0001.jsonl")).unwrap().len();
    let elapsed = best_of(3, || {
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_ib-reconstruct"))
            .arg("--run")
            .arg(&run)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    });
    (events, bytes, elapsed.as_secs_f64())
}

/// `ib-import` of a 600-round full reference run; returns (records, MB of records, seconds),
/// and the directory holding the imported runs (`imported-1` …), kept for the report bench.
fn bench_import() -> (usize, f64, f64, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("reference-full");
    let run = reference_run::full_run(&from, 200);
    let records = run.ids().len();
    let bytes: u64 = run.ids().iter().map(|id| std::fs::metadata(run.record_path(id)).unwrap().len()).sum();
    let mut attempt = 0;
    let elapsed = best_of(3, || {
        attempt += 1;
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_ib-import"))
            .arg("--from")
            .arg(&from)
            .arg("--run")
            .arg(dir.path().join(format!("imported-{attempt}")))
            .arg("--spec")
            .arg(reference_run::fixture("spec.yaml"))
            .arg("--dataset")
            .arg(reference_run::fixture("data/micro-single-task"))
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    });
    (records, bytes as f64 / 1e6, elapsed.as_secs_f64(), dir)
}

fn stage(binary: &str, args: &[&std::ffi::OsStr]) {
    let status = std::process::Command::new(binary).args(args).stderr(std::process::Stdio::null()).status().unwrap();
    assert!(status.success(), "{binary} failed");
}

/// `ib-report` (report.md, report.html, manifest) and `ib-watch --once --json` on a full-size
/// imported run, re-scored first; returns (report seconds, report.html MB, watch seconds).
fn bench_report(imported: &std::path::Path) -> (f64, f64, f64) {
    let run = imported.join("imported-1");
    let spec = reference_run::fixture("spec.yaml");
    let dataset = reference_run::fixture("data/micro-single-task");
    let (run_arg, spec_arg, dataset_arg) = (run.as_os_str(), spec.as_os_str(), dataset.as_os_str());
    let (r, s, d) = (std::ffi::OsStr::new("--run"), std::ffi::OsStr::new("--spec"), std::ffi::OsStr::new("--dataset"));
    stage(env!("CARGO_BIN_EXE_ib-reconstruct"), &[r, run_arg]);
    stage(env!("CARGO_BIN_EXE_ib-evaluate"), &[r, run_arg, s, spec_arg, d, dataset_arg]);
    stage(env!("CARGO_BIN_EXE_ib-aggregate"), &[r, run_arg, s, spec_arg]);
    let report = best_of(3, || stage(env!("CARGO_BIN_EXE_ib-report"), &[r, run_arg, s, spec_arg]));
    let html = std::fs::metadata(run.join("report.html")).unwrap().len() as f64 / 1e6;
    let watch = best_of(3, || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ib-watch"))
            .args([r, run_arg, std::ffi::OsStr::new("--once"), std::ffi::OsStr::new("--json")])
            .output()
            .unwrap();
        assert!(out.status.success(), "ib-watch failed");
    });
    (report.as_secs_f64(), html, watch.as_secs_f64())
}

#[path = "pipeline/targets.rs"]
mod targets;

fn main() {
    let (mb_s, events_s) = bench_sse();
    let timing_rate = bench_timing();
    let (events, bytes, reconstruct_secs) = bench_reconstruct();
    let (records, record_mb, import_secs, imported) = bench_import();
    let (report_secs, html_mb, watch_secs) = bench_report(imported.path());
    println!("| what | figure |");
    println!("|---|---|");
    println!("| SSE framing, 1 KiB reads | {mb_s:.0} MB/s ({:.2} M events/s) |", events_s / 1e6);
    println!("| timing function, 60-event request | {:.0} requests/s |", timing_rate);
    println!(
        "| `ib-reconstruct`, 6,000 requests ({events} events, {:.0} MB of JSONL) | {reconstruct_secs:.2} s |",
        bytes as f64 / 1e6
    );
    println!("| `ib-import`, a full reference run ({records} records, {record_mb:.0} MB) | {import_secs:.2} s |");
    println!("| `ib-report` of that run, report.md + report.html ({html_mb:.2} MB) + manifest | {report_secs:.2} s |");
    println!("| `ib-watch --once --json` of that run | {watch_secs:.2} s |");
    println!();
    targets::run();
}
