//! `ib-synth`: a synthetic run of 2,010 requests, written without a network, is read by the
//! checked log reader and re-scored by the real stages (reconstruct → report), and what the
//! stages find is exactly what ib-synth was asked to produce and says it produced.
use crate::support::{bin, ok, repo};
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::tables::{EvaluationRow, ResponseRow};
use inferbench_store::parquet_io;
use inferbench_store::run::RunDir;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const PER_FAMILY: &str = "67";

fn spec() -> String {
    repo().join("pipelines/micro-single-task/spec.yaml").display().to_string()
}

fn dataset() -> String {
    repo().join("data/micro-single-task").display().to_string()
}

/// Selects and schedules a run of 67 items per family (201 rounds × 10 providers).
fn scheduled(run: &Path) {
    ok(Command::new(bin("ib-select"))
        .args(["--spec", &spec(), "--dataset", &dataset(), "--per-family", PER_FAMILY])
        .arg("--run")
        .arg(run));
    ok(Command::new(bin("ib-schedule")).args(["--spec", &spec()]).arg("--run").arg(run));
}

fn synth(run: &Path, extra: &[&str]) -> Value {
    let out = ok(Command::new(env!("CARGO_BIN_EXE_ib-synth"))
        .args(["--spec", &spec(), "--dataset", &dataset(), "--seed", "5"])
        .args(["--profiles", &repo().join("pipelines/micro-single-task/sim-profiles.yaml").display().to_string()])
        .args(extra)
        .arg("--run")
        .arg(run));
    serde_json::from_slice(&out.stdout).expect("ib-synth prints its summary as JSON")
}

/// The log's lines (through the checked reader, sealed or not), without the two facts that
/// are measured rather than derived: the wall clock when the segment opened and the writer's
/// peak memory.
fn derived_lines(run: &Path) -> Vec<Value> {
    let segments = inferbench_store::event_log::read(&RunDir::new(run), "run-synth").unwrap();
    segments
        .iter()
        .flat_map(|s| &s.records)
        .map(|env| {
            let mut v = serde_json::to_value(env).unwrap();
            let data = v["data"].as_object_mut().unwrap();
            data.remove("wall_clock_unix_ns");
            data.remove("peak_rss_bytes");
            v
        })
        .collect()
}

#[test]
fn a_synthetic_run_is_rescored_and_holds_what_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("a/run-synth");
    scheduled(&run);
    // A copy of the scheduled run under the same name: the same run id, the same inputs.
    let twin = dir.path().join("b/run-synth");
    std::fs::create_dir_all(&twin).unwrap();
    for name in ["lock.json", "selection.parquet", "schedule.parquet"] {
        std::fs::copy(run.join(name), twin.join(name)).unwrap();
    }
    let shares = [
        "--timeout",
        "0.01",
        "--http-429",
        "0.02",
        "--http-5xx",
        "0.01",
        "--transport-error",
        "0.01",
        "--invalid-stream",
        "0.01",
        "--truncated",
        "0.01",
        "--stream-error",
        "0.01",
        "--accuracy",
        "0.9",
    ];
    let summary = synth(&run, &shares);
    assert_eq!(summary["requests"], 2010);
    assert_eq!(summary["rounds"], 201);
    assert_eq!(summary["sealed_rows"], summary["events"], "the seal tables every line: {summary}");

    // Same seed, same inputs: the same log.
    let again = synth(&twin, &[&shares[..], &["--no-seal"]].concat());
    assert_eq!(again["outcomes"], summary["outcomes"]);
    assert_eq!(derived_lines(&run), derived_lines(&twin), "the same seed writes the same log");
    // Another seed: another log.
    let other = dir.path().join("c/run-synth");
    std::fs::create_dir_all(&other).unwrap();
    for name in ["lock.json", "selection.parquet", "schedule.parquet"] {
        std::fs::copy(run.join(name), other.join(name)).unwrap();
    }
    let out = ok(Command::new(env!("CARGO_BIN_EXE_ib-synth"))
        .args(["--spec", &spec(), "--dataset", &dataset(), "--seed", "6", "--no-seal"])
        .args(shares)
        .arg("--run")
        .arg(&other));
    assert!(out.status.success());
    assert_ne!(derived_lines(&run), derived_lines(&other));

    // The checked reader accepts the log: gap-free seq, one run id, one segment.
    let segments = inferbench_store::event_log::read(&RunDir::new(&run), "run-synth").unwrap();
    let records: Vec<&Envelope> = segments.iter().flat_map(|s| &s.records).collect();
    assert_eq!(records.len() as u64, summary["events"].as_u64().unwrap());
    let starts = records.iter().filter(|e| matches!(e.event, Event::RequestStarted(_))).count();
    let terminals = records.iter().filter(|e| matches!(e.event, Event::RequestTerminal(_))).count();
    let rounds = records.iter().filter(|e| matches!(e.event, Event::RoundClosed(_))).count();
    assert_eq!((starts, terminals, rounds), (2010, 2010, 201));
    assert!(records.windows(2).all(|w| w[0].t_ns <= w[1].t_ns), "the run clock never goes back");

    // The real stages re-score it.
    let r = run.display().to_string();
    ok(Command::new(bin("ib-reconstruct")).args(["--run", &r]));
    ok(Command::new(bin("ib-evaluate")).args(["--run", &r, "--spec", &spec(), "--dataset", &dataset()]));
    ok(Command::new(bin("ib-aggregate")).args(["--run", &r, "--spec", &spec()]));
    ok(Command::new(bin("ib-report")).args(["--run", &r, "--spec", &spec()]));
    assert!(run.join("report.md").exists() && run.join("report.html").exists());

    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 2010);
    let mut found: BTreeMap<String, u64> = BTreeMap::new();
    for r in &responses {
        *found.entry(r.operational_outcome.to_string()).or_insert(0) += 1;
    }
    let asked: BTreeMap<String, u64> =
        summary["outcomes"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect();
    assert_eq!(found, asked, "reconstruct judges every request as ib-synth made it");
    // 201 requests per provider, within the first block of 1,000: each class's share, of
    // every class asked for, is there (20 of 1,000 per block for 429s, 10 for the others,
    // laid out at random positions of the block).
    for class in ["timeout", "429", "5xx", "transport_error", "invalid_stream", "truncated", "stream_error"] {
        let n = found.get(class).copied().unwrap_or(0);
        assert!(n > 0, "no {class} among {found:?}");
    }
    let failures: u64 = found.iter().filter(|(k, _)| *k != "2xx").map(|(_, v)| v).sum();
    assert!((60..=250).contains(&failures), "{failures} failures of an expected 8% of 2,010");

    let evaluations = parquet_io::read::<EvaluationRow>(&run.join("evaluations.parquet")).unwrap().rows;
    let valid = evaluations.iter().filter(|e| e.classification.to_string() == "valid_result").count() as u64;
    let incorrect = evaluations.iter().filter(|e| e.classification.to_string() == "incorrect_result").count() as u64;
    assert_eq!(valid, summary["correct_answers"].as_u64().unwrap(), "the gold answers are scored correct");
    assert_eq!(valid + incorrect, found["2xx"], "every completed answer is schema-valid, right or wrong");
    assert!(incorrect > 100, "about 10% of {} completed answers are wrong: {incorrect}", found["2xx"]);
}

/// The same on a fleet whose providers speak chat completions, Responses and Messages: every
/// request is judged by its API's grammar as ib-synth wrote it, failures included, and the
/// answers are scored alike.
#[test]
fn a_synthetic_run_over_every_wire_api_is_rescored_as_it_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    ok(Command::new(bin("ib-sim"))
        .args(["generate-fleet", "--providers", "3", "--apis", "chat-completions,responses,messages"])
        .args(["--spec", &spec()])
        .arg("--out")
        .arg(&fleet));
    let fleet_spec = fleet.join("spec.yaml").display().to_string();
    let run = dir.path().join("run-apis");
    ok(Command::new(bin("ib-select"))
        .args(["--spec", &fleet_spec, "--dataset", &dataset(), "--per-family", "20"])
        .arg("--run")
        .arg(&run));
    ok(Command::new(bin("ib-schedule")).args(["--spec", &fleet_spec]).arg("--run").arg(&run));
    let out = ok(Command::new(env!("CARGO_BIN_EXE_ib-synth"))
        .args(["--spec", &fleet_spec, "--dataset", &dataset(), "--seed", "7"])
        .args(["--profiles", &fleet.join("sim-profiles.yaml").display().to_string()])
        .args(["--invalid-stream", "0.05", "--truncated", "0.05", "--stream-error", "0.05", "--accuracy", "0.9"])
        .arg("--run")
        .arg(&run));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["requests"], 180);

    let r = run.display().to_string();
    ok(Command::new(bin("ib-reconstruct")).args(["--run", &r]));
    ok(Command::new(bin("ib-evaluate")).args(["--run", &r, "--spec", &fleet_spec, "--dataset", &dataset()]));
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let mut found: BTreeMap<String, u64> = BTreeMap::new();
    for r in &responses {
        *found.entry(r.operational_outcome.to_string()).or_insert(0) += 1;
    }
    let asked: BTreeMap<String, u64> =
        summary["outcomes"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect();
    assert_eq!(found, asked, "reconstruct judges every request as ib-synth made it");
    // Each grammar's own failure kinds: an in-band error object on chat, an `error` event on
    // the others; a stream without its terminal event truncated as its grammar says.
    let kinds = |provider: &str| -> Vec<String> {
        let mut k: Vec<String> = responses
            .iter()
            .filter(|r| r.provider == provider)
            .filter_map(|r| r.error_type.map(|e| e.to_string()))
            .collect();
        k.sort();
        k.dedup();
        k
    };
    let (chat, responses_api, messages) = (kinds("sim-0001"), kinds("sim-0002"), kinds("sim-0003"));
    assert!(chat.contains(&"in_band_error".to_string()) && chat.contains(&"no_done_or_finish".to_string()), "{chat:?}");
    for other in [&responses_api, &messages] {
        assert!(other.contains(&"error_event".to_string()), "{other:?}");
        assert!(other.contains(&"no_terminal_event".to_string()), "{other:?}");
        assert!(other.contains(&"invalid_sse".to_string()), "{other:?}");
    }
    let evaluations = parquet_io::read::<EvaluationRow>(&run.join("evaluations.parquet")).unwrap().rows;
    let valid = evaluations.iter().filter(|e| e.classification.to_string() == "valid_result").count() as u64;
    assert_eq!(valid, summary["correct_answers"].as_u64().unwrap(), "the gold answers are scored correct on every API");
    // The figures are there on every API: a first answer token for each completed request.
    for r in responses.iter().filter(|r| r.operational_outcome.to_string() == "2xx") {
        assert!(r.ttfa_ms.is_some_and(|t| t > 0.0), "{}: no TTFA", r.request_id);
    }
}
