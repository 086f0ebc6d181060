//! The whole pipeline against simulated providers, one fault per provider.
use crate::support::{files, ok, Sim, Workspace};
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_contract::vocab::{ErrorKind, Outcome};
use inferbench_store::parquet_io;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Credential values the run uses; none may appear in any file of the run.
pub const SECRETS: [(&str, &str); 8] = [
    ("IB_TEST_STEADY_KEY", "sk-steady-5f0c1e9a7b"),
    ("IB_TEST_REASONER_ID", "id-reasoner-83d1c4"),
    ("IB_TEST_REASONER_SECRET", "sec-reasoner-a9e2f7"),
    ("IB_TEST_LIMITED_KEY", "sk-limited-2b7d90"),
    ("IB_TEST_BROKEN_KEY", "sk-broken-c41e88"),
    ("IB_TEST_STALLER_KEY", "sk-staller-7e3a51"),
    ("IB_TEST_GARBLED_KEY", "sk-garbled-0d6b2c"),
    ("IB_TEST_IMPOSTOR_KEY", "sk-impostor-95f4aa"),
];

#[test]
fn simulated_run_end_to_end() {
    let one_at_a_time = crate::support::timed_section();
    let ws = Workspace::new();
    let sim = Sim::start(&ws);
    let run = ws.run("run-e2e");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.5", "--env-file", "/nonexistent"])
        .arg("--send-credentials-to-simulator")
        .envs(SECRETS));
    // The rest reads and re-derives the files (the simulator's log is a file too).
    drop(one_at_a_time);
    ws.derive(&run);

    let schedule = parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows;
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let evaluations = parquet_io::read::<EvaluationRow>(&run.join("evaluations.parquet")).unwrap().rows;
    check_one_row_per_scheduled_request(&schedule, &responses, &evaluations);
    check_outcomes(&responses, &evaluations);
    check_timing(&responses, &sim);
    check_transport(&run, &responses);
    check_metrics_and_report(&run);
    check_no_secret_in_any_file(&run);
    check_manifest_inventories_the_run(&run);
    check_rescore_is_byte_identical(&ws, &run);
    check_parquet_opens_in_polars(&run);
}

fn check_one_row_per_scheduled_request(
    schedule: &[ScheduleRow],
    responses: &[ResponseRow],
    evaluations: &[EvaluationRow],
) {
    assert_eq!(schedule.len(), 6 * 7, "2 items × 3 families × 7 providers");
    let scheduled: BTreeSet<&str> = schedule.iter().map(|r| r.request_id.as_str()).collect();
    let answered: Vec<&str> = responses.iter().map(|r| r.request_id.as_str()).collect();
    assert_eq!(answered.len(), scheduled.len());
    assert_eq!(answered.iter().copied().collect::<BTreeSet<_>>(), scheduled);
    let evaluated: Vec<&str> = evaluations.iter().map(|r| r.request_id.as_str()).collect();
    assert_eq!(evaluated, answered, "evaluations follow responses one to one, in order");
}

fn by_provider<'a>(responses: &'a [ResponseRow], provider: &str) -> Vec<&'a ResponseRow> {
    let rows: Vec<&ResponseRow> = responses.iter().filter(|r| r.provider == provider).collect();
    assert_eq!(rows.len(), 6, "{provider} answered every round");
    rows
}

fn check_outcomes(responses: &[ResponseRow], evaluations: &[EvaluationRow]) {
    let class: BTreeMap<&str, &str> =
        evaluations.iter().map(|e| (e.request_id.as_str(), e.classification.as_str())).collect();
    let steady_speeds =
        by_provider(responses, "steady").into_iter().filter(|r| r.output_tokens_per_second.is_some()).count();
    assert!(steady_speeds > 0, "steady streams its answers");
    for r in by_provider(responses, "steady") {
        assert_eq!((r.outcome.as_str(), r.http_status, r.done_seen), ("completed", Some(200), true));
        assert_eq!(class[r.request_id.as_str()], "valid_result", "steady answers from gold: {}", r.answer);
        assert!(r.complete && r.e2e_latency_ms.is_some());
        // A client that stalls longer than an answer's span reads it at once, and then it is
        // buffered, as a flush would be: no speed sample, but flagged.
        assert_eq!(r.output_tokens_per_second.is_some(), !r.answer_buffered, "{r:?}");
        assert_eq!(r.ttfo_ms, r.ttfa_ms, "no reasoning: TTFO == TTFA");
        assert_eq!(r.pre_answer_reasoning_tokens, Some(0));
    }
    for r in by_provider(responses, "Reasoner.AI") {
        assert_eq!(r.outcome, Outcome::Completed);
        assert!(r.pre_answer_reasoning_tokens.unwrap() > 0, "reasoning arrives before the answer");
        assert!(r.ttfo_ms.unwrap() < r.ttfa_ms.unwrap());
        assert!(!r.reasoning.is_empty() && !r.answer.contains(&r.reasoning));
        assert!(r.usage_completion_tokens.is_some(), "stream_usage asked for a usage chunk");
    }
    for r in by_provider(responses, "limited") {
        assert_eq!(
            (r.outcome.as_str(), r.operational_outcome.as_str(), r.http_status),
            ("http_error", "429", Some(429))
        );
        assert!(r.retry_after.is_some(), "Retry-After is captured");
        assert_eq!(class[r.request_id.as_str()], "failed_request");
    }
    for r in by_provider(responses, "broken") {
        assert_eq!((r.operational_outcome.as_str(), r.http_status.map(|s| s / 100)), ("5xx", Some(5)));
    }
    for r in by_provider(responses, "staller") {
        assert_eq!((r.outcome.as_str(), r.operational_outcome.as_str()), ("timeout", "timeout"));
        assert_eq!(r.error_type, Some(ErrorKind::Deadline));
    }
    for r in by_provider(responses, "garbled") {
        assert_eq!((r.outcome.as_str(), r.operational_outcome.as_str()), ("invalid_stream", "invalid_stream"));
    }
    for r in by_provider(responses, "impostor") {
        assert_eq!(r.outcome, Outcome::Completed);
        assert_ne!(r.response_model.as_deref(), Some("m-impostor"));
    }
}

/// The simulator logs when it wrote each answer event; the client's offsets are measured
/// from just before its send, so they must be at least the server's and within a band.
fn check_timing(responses: &[ResponseRow], sim: &Sim) {
    let log = std::fs::read_to_string(&sim.log).expect("ib-sim log");
    let steady: Vec<Value> =
        log.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|v| v["provider"] == "steady").collect();
    assert_eq!(steady.len(), 6);
    // Each write is never early and at most a scheduling stall late (a loaded 2-core machine
    // can hold one back for hundreds of ms); the median lateness stays small.
    let mut late = Vec::new();
    for v in &steady {
        let drawn = v["ttft_ms"].as_f64().unwrap() * v["time_scale"].as_f64().unwrap();
        let written = v["answer_event_offsets_ms"][0].as_f64().unwrap();
        assert!((250.0..=350.0).contains(&drawn), "profile draws TTFT near its 300 ms median: {drawn}");
        assert!(
            written >= drawn && written <= drawn + 1000.0,
            "the simulator keeps its drawn TTFT: {written} vs {drawn}"
        );
        late.push(written - drawn);
    }
    late.sort_by(f64::total_cmp);
    assert!(late[late.len() / 2] <= 100.0, "median simulator lateness {late:?}");
    // Steady answers each of the six items once: pair the two sides by item.
    let server_first: BTreeMap<&str, f64> = steady
        .iter()
        .map(|v| (v["item_id"].as_str().unwrap(), v["answer_event_offsets_ms"][0].as_f64().unwrap()))
        .collect();
    // The band is loose at the tail (a loaded 2-core CI machine can stall one request) and
    // tight at the median, which no single scheduling hiccup moves.
    let mut diffs: Vec<f64> = by_provider(responses, "steady")
        .iter()
        .map(|r| {
            let (server, client) = (server_first[r.item_id.as_str()], r.ttfa_ms.unwrap());
            assert!(
                client >= server - 1.0 && client <= server + 1000.0,
                "{}: client TTFA {client} vs server {server}",
                r.item_id
            );
            client - server
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    assert!(diffs[diffs.len() / 2] <= 100.0, "median client−server TTFA gap {diffs:?}");
}

/// The bundled spec's transport (HTTP/1.1) is recorded per segment and per response.
fn check_transport(run: &Path, responses: &[ResponseRow]) {
    let log = inferbench_store::jsonl::parse::<Envelope>(
        Path::new("0001.jsonl"),
        crate::ops::segment_text(run, 1).as_bytes(),
    )
    .unwrap()
    .records;
    let Event::SegmentOpened(opened) = &log[0].event else { panic!("the log opens with its segment") };
    assert_eq!(opened.http_version.as_deref(), Some("1.1"));
    let heads: Vec<&str> = log
        .iter()
        .filter_map(|e| if let Event::ResponseHead(h) = &e.event { h.http_version.as_deref() } else { None })
        .collect();
    assert!(!heads.is_empty() && heads.iter().all(|v| *v == "HTTP/1.1"), "{heads:?}");
    for r in responses {
        let expected = r.http_status.map(|_| "HTTP/1.1");
        assert_eq!(r.http_version.as_deref(), expected, "{}: {:?}", r.request_id, r.outcome);
    }
}

fn check_metrics_and_report(run: &Path) {
    let metrics: Value = serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    let ranking: Vec<&str> = metrics["ranking"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(ranking.iter().copied().collect::<BTreeSet<_>>(), BTreeSet::from(["steady", "Reasoner.AI"]));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    for provider in ["steady", "Reasoner.AI", "limited", "broken", "staller", "garbled", "impostor"] {
        assert!(report.contains(provider), "report names {provider}");
    }
    let spec =
        inferbench_inputs::spec::Spec::load(&crate::support::repo().join("pipelines/micro-single-task/spec.yaml"))
            .unwrap();
    for column in &spec.required_columns {
        assert!(report.contains(column.as_str()), "report has column {column}");
    }
    assert!(report.ends_with('\n') && !report.ends_with("\n\n"));
}

fn check_no_secret_in_any_file(run: &Path) {
    let secrets: Vec<&str> = SECRETS.iter().map(|(_, value)| *value).collect();
    crate::support::assert_no_secret(run, &secrets);
}

fn check_manifest_inventories_the_run(run: &Path) {
    let manifest: inferbench_contract::manifest::Manifest =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest.status, "complete");
    assert_eq!(manifest.scheduled_requests, Some(42));
    let all: BTreeSet<String> =
        files(run).iter().map(|p| p.strip_prefix(run).unwrap().to_string_lossy().into_owned()).collect();
    // The only hidden file is the writer lock: no temporary file or commit journal is left.
    let hidden: Vec<&String> = all.iter().filter(|p| p.starts_with('.')).collect();
    assert_eq!(hidden, [".writer.lock"]);
    let on_disk: BTreeSet<String> =
        all.iter().filter(|p| *p != "manifest.json" && !p.starts_with('.')).cloned().collect();
    assert_eq!(manifest.files.keys().cloned().collect::<BTreeSet<_>>(), on_disk);
    for (rel, entry) in &manifest.files {
        assert_eq!(entry.sha256, inferbench_contract::canonical::file_sha256(&run.join(rel)).unwrap(), "{rel}");
    }
    let segment = &manifest.execution.segments[0];
    assert_eq!(
        (segment.endpoint_mode, segment.deadline_ms),
        (inferbench_contract::vocab::EndpointMode::Simulated, 1500)
    );
    assert_eq!(segment.host_sha256_16.len(), 16);
}

fn check_rescore_is_byte_identical(ws: &Workspace, run: &Path) {
    let names = [
        "responses.parquet",
        "evaluations.parquet",
        "metrics.json",
        "metrics.parquet",
        "pooled.parquet",
        "comparisons.json",
        "report.md",
    ];
    let before: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(run.join(n)).unwrap()).collect();
    ws.derive(run);
    for (name, old) in names.iter().zip(before) {
        assert!(std::fs::read(run.join(name)).unwrap() == old, "{name} differs when re-derived");
    }
    // The sealed log is read from the events table its seal recorded; read from the
    // compressed JSONL instead, it gives the same responses, byte for byte.
    let from_table = ok(&mut ws.stage("ib-reconstruct", run));
    assert!(String::from_utf8_lossy(&from_table.stderr).contains("read from its events table"));
    let responses = std::fs::read(run.join("responses.parquet")).unwrap();
    let from_jsonl = ok(ws.stage("ib-reconstruct", run).arg("--read-jsonl"));
    assert!(!String::from_utf8_lossy(&from_jsonl.stderr).contains("events table"));
    assert!(std::fs::read(run.join("responses.parquet")).unwrap() == responses, "the JSONL gives other responses");
}

fn check_parquet_opens_in_polars(run: &Path) {
    let script = crate::support::repo().join("tests/check_parquet.py");
    let out = std::process::Command::new("python3").arg(script).arg(run).output().expect("python3");
    assert!(
        out.status.success(),
        "polars check failed (install polars with: python3 -m pip install polars)\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
