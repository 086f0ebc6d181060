//! `ib-import` on reference run directories: the reference's own smoke run re-scored to its
//! figures; records turned into failures of every class, scored by inferbench's rules (each
//! difference named by its deviation) and by the reference's (no difference at all); partial
//! and full runs; and invalid or inconsistent sources refused with the file and field named.
use crate::support::{bin, files};
use inferbench_contract::tables::{EvaluationRow, ResponseRow};
use inferbench_contract::vocab::{EvaluationError, Outcome};
use inferbench_store::parquet_io;
use inferbench_testkit::reference_run::{self as rr, RefRun, Verdict};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn spec() -> PathBuf {
    rr::fixture("spec.yaml")
}

fn dataset() -> PathBuf {
    rr::fixture("data/micro-single-task")
}

fn import(from: &Path, run: &Path) -> std::process::Output {
    Command::new(bin("ib-import"))
        .arg("--from")
        .arg(from)
        .arg("--run")
        .arg(run)
        .arg("--spec")
        .arg(spec())
        .arg("--dataset")
        .arg(dataset())
        .output()
        .unwrap()
}

/// Every stage after the fetch, as `make rescore` runs them.
fn rescore(run: &Path, rules: &str) {
    crate::support::rescore(run, &spec(), &dataset(), rules);
}

/// Relative path → SHA-256 of every file under `dir` but the hidden ones (the writer lock).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    files(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap().to_path_buf())
        .filter(|p| !p.components().any(|c| c.as_os_str().to_string_lossy().starts_with('.')))
        .map(|p| (p.clone(), inferbench_contract::canonical::file_sha256(&dir.join(&p)).unwrap()))
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn evaluations(run: &Path) -> BTreeMap<String, EvaluationRow> {
    parquet_io::read::<EvaluationRow>(&run.join("evaluations.parquet"))
        .unwrap()
        .rows
        .into_iter()
        .map(|e| (e.request_id.clone(), e))
        .collect()
}

/// Equal as the reference's JSON reads: numbers within 1e-9 relative (an integer 10 is 10.0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
        }
        (Value::Object(a), Value::Object(b)) => b.iter().all(|(k, v)| a.get(k).is_some_and(|x| same(x, v))),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
        (a, b) => a == b,
    }
}

/// The figures of two documents at the same keys (rows matched by provider and family).
fn assert_same_figures(ours: &Value, theirs: &Value, list: &str, keys: &[&str]) {
    let key = |row: &Value| keys.iter().map(|k| row[*k].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let by_key: BTreeMap<Vec<String>, &Value> = ours[list].as_array().unwrap().iter().map(|r| (key(r), r)).collect();
    for row in theirs[list].as_array().unwrap() {
        let mine = by_key[&key(row)];
        for (name, value) in row.as_object().unwrap() {
            assert!(same(&mine[name], value), "{list} {:?}: {name}: ours {} theirs {value}", key(row), mine[name]);
        }
    }
}

#[test]
fn the_references_smoke_run_imports_and_rescores_to_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let from = rr::fixture("smoke-run");
    let before = snapshot(&from);
    let run = dir.path().join("runs/imported");
    let out = import(&from, &run);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(snapshot(&from), before, "the source is never modified");
    let lock = read_json(&run.join("lock.json"));
    assert_eq!(lock["imported_from"]["run_id"], "run-20261129-145326");
    assert_eq!(lock["imported_from"]["partition"], "attempt-1");
    assert_eq!(lock["dataset_release_hash"], "4463dc834810f34956c6a2af023496591877845f2e61ced1de0c12563efd7b36");
    assert_eq!(lock["release_hash"]["convention"], "recorded");
    // What the log has no field for is kept: the classification labels, the adapter metadata.
    let kept = std::fs::read_to_string(run.join("reference/records.jsonl")).unwrap();
    assert_eq!(kept.lines().count(), 30);
    assert!(kept.contains("\"classification\":\"reasoning\"") && kept.contains("\"reasoning_wire_mapping\""));
    assert!(!kept.contains("redacted_payload"), "the payloads are in the log, not twice");

    rescore(&run, "inferbench");
    let theirs: BTreeMap<String, Value> = std::fs::read_dir(from.join("artifacts/evaluations/attempt-1"))
        .unwrap()
        .map(|e| read_json(&e.unwrap().path()))
        .map(|v| (v["request_id"].as_str().unwrap().to_string(), v))
        .collect();
    let ours = evaluations(&run);
    assert_eq!(ours.len(), 30);
    for (id, t) in &theirs {
        let o = &ours[id];
        assert_eq!(o.classification.as_str(), t["classification"], "{id}");
        assert_eq!(o.correct, t["correct"], "{id}");
        assert_eq!(o.correct_field_count, t["correct_field_count"].as_i64(), "{id}");
    }
    let metrics = read_json(&run.join("metrics.json"));
    let reference = read_json(&from.join("artifacts/metrics-attempt-1.json"));
    assert_same_figures(&metrics, &reference, "task_family_metrics", &["provider", "task_family"]);
    assert_same_figures(&metrics, &reference, "combined_provider_metrics", &["provider"]);
    assert_eq!(metrics["ranking"], reference["ranking"]);
    let comparisons = read_json(&run.join("comparisons.json"));
    let paired = read_json(&from.join("artifacts/paired-comparisons-attempt-1.json"));
    assert_same_figures(&comparisons, &paired, "fastest_provider_wins", &["provider"]);
    assert_same_figures(&comparisons, &paired, "pairwise_e2e_latency_differences", &["provider_a", "provider_b"]);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("Imported from the reference runner's run `run-20261129-145326`"), "{report}");
    assert!(report.contains("Requests scored by both: 30; scored as the reference scored them: 30."));
    assert!(report.contains("different because of the deviations above: 0; different for no documented reason: 0."));

    // A second re-score writes the same bytes.
    let first = snapshot(&run);
    rescore(&run, "inferbench");
    assert_eq!(snapshot(&run), first, "re-scoring is byte-identical");
    // The fetch never runs again on an imported run.
    let out = Command::new(bin("ib-fetch"))
        .arg("--run")
        .arg(&run)
        .arg("--spec")
        .arg(spec())
        .arg("--dataset")
        .arg(dataset())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("imported from a reference run"));
}

/// The smoke run with one record of each failure class the reference records.
struct Failures {
    dir: tempfile::TempDir,
    ids: BTreeMap<&'static str, String>,
}

fn failures() -> Failures {
    let dir = tempfile::tempdir().unwrap();
    let r = RefRun::smoke(&dir.path().join("ref"));
    let mut pool = r.ids_of("meeting-notes-lookup");
    pool.extend(r.ids_of("ticket-triage"));
    let mut ids = BTreeMap::new();
    let mut take = |name: &'static str| {
        let id = pool.remove(0);
        ids.insert(name, id.clone());
        id
    };
    r.change(&take("truncated"), rr::without_done_or_finish, Some(Verdict::Unchanged));
    r.change(&take("after_done"), |x| rr::with_text_after_done(x, " extra"), Some(Verdict::Invalid("malformed_json")));
    r.change(&take("in_band"), rr::with_in_band_error, Some(Verdict::Unchanged));
    r.change(&take("empty"), rr::as_empty_stream, Some(Verdict::Invalid("malformed_json")));
    r.change(&take("429"), |x| rr::as_http_error(x, 429), Some(Verdict::Failed("rate_limited_http_429")));
    r.change(&take("500"), |x| rr::as_http_error(x, 503), Some(Verdict::Failed("http_5xx")));
    r.change(&take("404"), |x| rr::as_http_error(x, 404), Some(Verdict::Failed("other_http_4xx")));
    r.change(&take("timeout"), |x| rr::as_timeout(x, 4), Some(Verdict::Failed("timeout")));
    r.change(&take("held_open"), rr::as_timeout_after_done, Some(Verdict::Failed("timeout")));
    r.change(&take("malformed"), |x| rr::as_malformed(x, 3), Some(Verdict::Failed("transport_error")));
    r.change(&take("special"), rr::as_special_token_reasoning, Some(Verdict::Failed("transport_error")));
    r.change(&take("reset"), rr::as_transport_error, Some(Verdict::Failed("transport_error")));
    r.change(&take("historical"), rr::as_historical_runner_error, Some(Verdict::Failed("transport_error")));
    r.change(&take("runner"), rr::as_runner_error, None);
    r.drop_figures();
    Failures { dir, ids }
}

#[test]
fn failures_of_every_class_differ_only_by_the_named_deviations() {
    let f = failures();
    let from = f.dir.path().join("ref");
    let run = f.dir.path().join("runs/failures");
    let out = import(&from, &run);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 reference runner errors (missing, not provider failures)"));

    rescore(&run, "inferbench");
    let ours = evaluations(&run);
    let responses: BTreeMap<String, ResponseRow> = parquet_io::read::<ResponseRow>(&run.join("responses.parquet"))
        .unwrap()
        .rows
        .into_iter()
        .map(|r| (r.request_id.clone(), r))
        .collect();
    let id = |name: &str| f.ids[name].clone();
    let outcome = |name: &str| responses[&id(name)].outcome;
    let error = |name: &str| ours[&id(name)].evaluation_error_type;
    assert_eq!(ours.len(), 29, "the runner error is missing, not a failure");
    assert!(!ours.contains_key(&id("runner")));
    assert_eq!(outcome("truncated"), Outcome::Truncated);
    assert_eq!(outcome("in_band"), Outcome::StreamError);
    assert_eq!(error("empty"), Some(EvaluationError::InvalidStream));
    assert_eq!(error("malformed"), Some(EvaluationError::InvalidStream));
    assert_eq!(error("429"), Some(EvaluationError::RateLimitedHttp429));
    assert_eq!(error("500"), Some(EvaluationError::Http5xx));
    assert_eq!(error("404"), Some(EvaluationError::OtherHttp4xx));
    assert_eq!(error("timeout"), Some(EvaluationError::Timeout));
    assert_eq!(error("reset"), Some(EvaluationError::TransportError));
    assert_eq!(error("historical"), Some(EvaluationError::TransportError));
    for name in ["after_done", "held_open", "special"] {
        assert!(ours[&id(name)].correct, "{name}: inferbench scores the answer");
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    for (count, text) in [
        (1, "their stream ended with neither `[DONE]` nor a `finish_reason`"),
        (1, "their 2xx body held no server-sent event"),
        (1, "text arrived after `[DONE]`"),
        (1, "the provider reported an error inside the stream"),
        (1, "their stream carried data that is not a JSON object"),
        (1, "the provider sent `[DONE]` and then held the connection open"),
        (1, "their text contains special-token text"),
    ] {
        assert!(
            report.contains(&format!("  - {count} request(s) scored differently because {text}")),
            "{text}\n{report}"
        );
    }
    assert!(report.contains("Requests scored by both: 29; scored as the reference scored them: 22."), "{report}");
    assert!(!report.contains("for no documented reason: a defect"), "{report}");
    assert!(report.contains("1 request(s) ended in a reference `runner_error`"), "{report}");
    assert!(
        report.contains(
            "- Figures: not compared: the reference run holds no `metrics-attempt-1.json` and \
             `paired-comparisons-attempt-1.json` for these records"
        ),
        "{report}"
    );
    assert!(report.contains("of its reference records fail the reference's record-level check"), "{report}");

    // Under the reference's rules every request is scored as the reference scored it.
    rescore(&run, "reference");
    let theirs = std::fs::read_to_string(run.join("reference/evaluations.jsonl")).unwrap();
    let ours = evaluations(&run);
    for line in theirs.lines() {
        let t: Value = serde_json::from_str(line).unwrap();
        let o = &ours[t["request_id"].as_str().unwrap()];
        assert_eq!(o.classification.as_str(), t["classification"], "{t}");
        assert_eq!(
            o.evaluation_error_type.map(|e| e.as_str().to_string()),
            t["error_type"].as_str().map(str::to_string),
            "{t}"
        );
        assert_eq!(o.correct, t["correct"], "{t}");
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("scored under the reference's rules (`--rules reference`)"), "{report}");
    assert!(report.contains("Requests scored by both: 29; scored as the reference scored them: 29."), "{report}");
    let comparisons = read_json(&run.join("comparisons.json"));
    let provider = responses[&id("429")].provider.clone();
    let elig =
        comparisons["provider_eligibility"].as_array().unwrap().iter().find(|e| e["provider"] == provider.as_str());
    assert_eq!(elig.unwrap()["eligible"], false, "the reference's record-level check leaves it out");
}

#[test]
fn a_partial_and_a_full_run_import_with_unfinished_requests_missing() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("full");
    let r = rr::full_run(&from, 2);
    // The run was stopped during its last round: four of its ten requests never finished.
    let plan = read_json(&from.join("artifacts/full-plan.json"));
    let last = &plan["rounds"][5];
    for unit in last["requests"].as_array().unwrap().iter().take(4) {
        std::fs::remove_file(r.record_path(unit["request_id"].as_str().unwrap())).unwrap();
    }
    std::fs::remove_file(
        from.join("artifacts/rounds/full").join(format!("{}.json", last["round_id"].as_str().unwrap())),
    )
    .unwrap();
    let run = dir.path().join("runs/partial");
    let out = import(&from, &run);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("(full full): 56 of 60 scheduled requests") && stderr.contains("4 never finished"),
        "{stderr}"
    );
    let log = crate::ops::segment_text(&run, 1);
    assert_eq!(log.matches("\"type\":\"round_closed\"").count(), 5, "the unfinished round is not closed");
    assert!(
        log.trim_end().ends_with("\"status\":\"interrupted\",\"terminal_requests\":56}}"),
        "{}",
        log.lines().last().unwrap()
    );
    rescore(&run, "inferbench");
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 56);
    let metrics = read_json(&run.join("metrics.json"));
    let missing: i64 = metrics["combined_provider_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["missing_response_count"].as_i64().unwrap())
        .sum();
    assert_eq!(missing, 4, "missing, not failures");
    let failed: i64 = metrics["combined_provider_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["failed_request_count"].as_i64().unwrap())
        .sum();
    assert_eq!(failed, 0);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains(
            "- Figures: not compared: the reference run is incomplete (56 of its 60 planned requests have a \
             terminal record), and the reference derives figures only from a complete run."
        ),
        "{report}"
    );
}

/// The line of the report on the reference's figures.
fn figures_line(run: &Path) -> String {
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    report
        .lines()
        .find(|l| l.starts_with("- Figures"))
        .unwrap_or_else(|| panic!("no figures line:\n{report}"))
        .to_string()
}

#[test]
fn a_complete_full_run_without_its_manifest_is_compared_with_the_references_figures() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("full");
    // One item per family: the smoke run's own thirty records as a full run, so the smoke's
    // figures are the full run's, left where a full run's go, with no `run-manifest.json`
    // (the reference does not always write one).
    rr::full_run(&from, 1);
    for name in ["metrics", "paired-comparisons"] {
        std::fs::copy(
            from.join(format!("artifacts/{name}-attempt-1.json")),
            from.join(format!("artifacts/{name}.json")),
        )
        .unwrap();
    }
    assert!(!from.join("artifacts/run-manifest.json").exists());
    let run = dir.path().join("runs/complete");
    let out = import(&from, &run);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_json(&run.join("reference/import.json"))["reference_figures"], true);
    rescore(&run, "inferbench");
    let line = figures_line(&run);
    assert!(
        line.starts_with("- Figures of `metrics.json` and `comparisons.json` compared with the reference's: "),
        "{line}"
    );
    assert!(line.ends_with("different for no documented reason: 0."), "{line}");

    // The same files as a passed smoke leaves them, its manifest beside them: not this run's.
    std::fs::copy(from.join("artifacts/run-manifest-attempt-1.json"), from.join("artifacts/run-manifest.json"))
        .unwrap();
    let run = dir.path().join("runs/smoke-copies");
    let out = import(&from, &run);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_json(&run.join("reference/import.json"))["reference_figures"], false);
    rescore(&run, "inferbench");
    let line = figures_line(&run);
    assert!(line.contains("not compared") && line.contains("copies from a run of kind `smoke`"), "{line}");
}

fn refused(from: &Path, expect: &[&str], code: i32) {
    let run = from.parent().unwrap().join("runs/refused");
    let before = snapshot(from);
    let out = import(from, &run);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    for text in expect {
        assert!(stderr.contains(text), "`{text}` not in:\n{stderr}");
    }
    assert!(!run.exists(), "nothing is written");
    assert!(std::fs::read_dir(run.parent().unwrap()).map_or(true, |mut d| d.next().is_none()), "no staging left");
    assert_eq!(snapshot(from), before);
}

#[test]
fn invalid_or_inconsistent_sources_are_refused_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("ref");
    let r = RefRun::smoke(&from);
    let ids = r.ids();
    let at = |id: &str| format!("raw/attempt-1/{id}.json");

    let mut rec = r.record(&ids[0]);
    rec["http_status"] = Value::from(429);
    r.save(&ids[0], &rec);
    let mut rec = r.record(&ids[1]);
    rec["stream_events"][2]["monotonic_offset_ms"] = Value::from(-3.0);
    r.save(&ids[1], &rec);
    let mut rec = r.record(&ids[2]);
    rec["reconstructed_answer"] = Value::from("{\"answer\": \"someone else\"}");
    r.save(&ids[2], &rec);
    let mut rec = r.record(&ids[3]);
    rec["stream_events"][1]["reasoning_content"] = Value::from("not what the payload says");
    r.save(&ids[3], &rec);
    let mut rec = r.record(&ids[4]);
    rec["provider"] = Value::from("together");
    r.save(&ids[4], &rec);
    refused(
        &from,
        &[
            &format!("{}: terminal_outcome: `completed` with http_status 429", at(&ids[0])),
            &format!("{}: stream_events[2].monotonic_offset_ms: expected a finite number ≥ 0, found -3.0", at(&ids[1])),
            &format!("{}: reconstructed_answer: the stream events do not reconstruct it", at(&ids[2])),
            &format!("{}: stream_events[1].reasoning_content:", at(&ids[3])),
            &format!("{}: provider: expected the plan's", at(&ids[4])),
            "nothing was written",
        ],
        3,
    );

    // A record the plan does not schedule, and not a reference directory at all.
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("ref");
    let r = RefRun::smoke(&from);
    let id = &r.ids()[0];
    let mut rec = r.record(id);
    rec["request_id"] = Value::from("req-000000000000000000000000");
    std::fs::remove_file(r.record_path(id)).unwrap();
    r.save("req-000000000000000000000000", &rec);
    refused(&from, &["request_id: req-000000000000000000000000 is not in the plan of raw/attempt-1"], 3);
    std::fs::remove_file(from.join("run-lock.json")).unwrap();
    refused(&from, &["not a reference run directory (no run-lock.json)"], 3);

    // A dataset other than the one the reference ran on.
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("ref");
    RefRun::smoke(&from);
    let mut lock = read_json(&from.join("run-lock.json"));
    let key = lock["human_input_hashes"]
        .as_object()
        .unwrap()
        .keys()
        .find(|k| k.ends_with("ticket-triage.jsonl"))
        .unwrap()
        .clone();
    lock["human_input_hashes"][&key] = Value::from("0".repeat(64));
    std::fs::write(from.join("run-lock.json"), serde_json::to_vec_pretty(&lock).unwrap()).unwrap();
    refused(&from, &["not the dataset the reference run used: ticket-triage.jsonl is sha256"], 4);
}
