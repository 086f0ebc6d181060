//! The reference runner's own spec, unchanged (`tests/fixtures/reference/`), through every
//! stage against the simulated providers; and its selection reproduced from its run lock.
use crate::support::{ok, Sim, Workspace};
use inferbench_contract::tables::{ResponseRow, SelectionRow};
use inferbench_store::parquet_io;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(rel: &str) -> PathBuf {
    crate::support::repo().join("tests/fixtures/reference").join(rel)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

/// A workspace of the reference spec as written, its prompt templates beside it, its
/// dataset, and the bundled simulated profiles (keyed by the providers' slugs).
fn reference_workspace() -> Workspace {
    let dir = tempfile::tempdir().expect("temp dir");
    let pipeline = dir.path().join("pipeline");
    copy_dir(&fixture("prompt_templates"), &pipeline.join("prompt_templates"));
    std::fs::copy(fixture("spec.yaml"), pipeline.join("spec.yaml")).unwrap();
    let profiles = crate::support::repo().join("pipelines/micro-single-task/sim-profiles.yaml");
    std::fs::copy(profiles, pipeline.join("sim-profiles.yaml")).unwrap();
    copy_dir(&fixture("data/micro-single-task"), &dir.path().join("data"));
    Workspace { dir }
}

/// §5.2 for each provider: the keys in the reference's order (the common settings, the
/// token-limit field, the output mode, the reasoning fields, Baseten's top_k, the usage
/// option) with their values.
fn expected_body(provider: &str) -> Vec<(&'static str, Value)> {
    let (model, limit) = match provider {
        "Z.AI" => ("glm-5.3-flash", "max_tokens"),
        "fireworks" => ("accounts/fireworks/models/glm-5p3-flash", "max_completion_tokens"),
        "novita" => ("zai-org/glm-5.3-flash", "max_tokens"),
        "modal" | "nebius" | "parasail" => ("zai-org/GLM-5.3-Flash", "max_completion_tokens"),
        _ => ("zai-org/GLM-5.3-Flash", "max_tokens"),
    };
    let mut body = vec![
        ("model", json!(model)),
        ("messages", Value::Null),
        ("stream", json!(true)),
        ("temperature", json!(0)),
        ("top_p", json!(1)),
        ("presence_penalty", json!(0)),
        ("frequency_penalty", json!(0)),
        (limit, json!(256)),
        ("response_format", json!({"type": "json_object"})),
    ];
    if provider == "Z.AI" {
        body.push(("thinking", json!({"type": "enabled"})));
    }
    body.push(("reasoning_effort", json!("low")));
    if provider == "baseten" {
        body.push(("top_k", json!(-1)));
    }
    if ["baseten", "nebius", "novita", "deepinfra"].contains(&provider) {
        body.push(("stream_options", json!({"include_usage": true})));
    }
    body
}

/// Every `request_started` record of the run's log.
fn requests_sent(run: &Path) -> Vec<Value> {
    let mut sent = Vec::new();
    for (number, _) in inferbench_store::run::RunDir::new(run).segments().unwrap() {
        let text = crate::ops::segment_text(run, number);
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            if record["type"] == "request_started" {
                sent.push(record["data"].clone());
            }
        }
    }
    sent
}

fn check_bodies(run: &Path, sim_url: &str) {
    let sent = requests_sent(run);
    assert_eq!(sent.len(), 30, "3 rounds × 10 providers, none re-sent");
    for request in &sent {
        let provider = request["provider"].as_str().unwrap();
        let body = request["body"].as_object().unwrap();
        let expected = expected_body(provider);
        let keys: Vec<&str> = body.keys().map(String::as_str).collect();
        let expected_keys: Vec<&str> = expected.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, expected_keys, "{provider}: the body's fields, in §5.2's order");
        for (key, value) in expected.iter().filter(|(_, v)| !v.is_null()) {
            assert_eq!(&body[*key], value, "{provider}: {key}");
        }
        let messages = body["messages"].as_array().unwrap();
        assert_eq!((messages[0]["role"].as_str(), messages[1]["role"].as_str()), (Some("system"), Some("user")));
        assert_eq!(
            request["endpoint"],
            inferbench_inputs::providers::simulated_endpoint(
                sim_url,
                provider,
                inferbench_contract::vocab::WireApi::ChatCompletions
            )
        );
        let headers = request["headers"].as_object().unwrap();
        let auth: Vec<&str> =
            if provider == "modal" { vec!["Modal-Key", "Modal-Secret"] } else { vec!["Authorization"] };
        for header in auth {
            assert!(headers.contains_key(header), "{provider}: {header} in {headers:?}");
        }
    }
    let system = std::fs::read_to_string(fixture("prompt_templates/ticket-triage.system.txt")).unwrap();
    let ticket = sent.iter().find(|r| r["task_family"] == "ticket-triage").unwrap();
    assert_eq!(ticket["body"]["messages"][0]["content"], system.strip_suffix('\n').unwrap(), "§4: the template");
}

#[test]
fn the_reference_spec_runs_unchanged_through_every_stage() {
    let _beside_others = crate::support::shared_section();
    let ws = reference_workspace();
    let listed = ok(Command::new(crate::support::bin("ib-select"))
        .args(["--list-inputs", "--spec"])
        .arg(ws.spec())
        .arg("--dataset")
        .arg(ws.dataset()));
    let listed = String::from_utf8(listed.stdout).unwrap();
    let names: Vec<&str> = listed.lines().map(|l| l.rsplit('/').next().unwrap()).collect();
    assert_eq!(listed.lines().count(), 8, "{listed}");
    for name in ["spec.yaml", "manifest.json", "ticket-triage.jsonl", "contract-terms.system.txt"] {
        assert!(names.contains(&name), "{name} in {listed}");
    }
    assert!(!listed.contains("providers.yaml"), "the providers are in the spec: {listed}");

    let sim = Sim::start(&ws);
    let run = ws.run("reference");
    ok(ws.stage("ib-select", &run).args(["--per-family", "1"]));
    let lock: Value = serde_json::from_slice(&std::fs::read(run.join("lock.json")).unwrap()).unwrap();
    let inputs = lock["inputs"].as_object().unwrap();
    assert!(inputs.contains_key("providers.vendors") && !inputs.contains_key("providers.yaml"), "{inputs:?}");
    assert!(inputs.contains_key("prompt_templates/meeting-notes.system.txt"), "{inputs:?}");
    assert_eq!(lock["providers"].as_array().unwrap().len(), 10);
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--endpoint-base", &sim.url, "--deadline-seconds", "3"])
        .args(["--env-file", "/nonexistent"]));
    ws.derive(&run);
    check_bodies(&run, &sim.url);
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 30);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    for label in ["Z.AI", "Together AI", "Fireworks AI", "Modal", "DeepInfra"] {
        assert!(report.contains(label), "the report names {label}");
    }
    let manifest: Value = serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "complete", "{manifest:#}");

    // The selection is part of the lock: another release-hash convention is another run.
    let again = ws.stage("ib-select", &run).args(["--per-family", "1", "--release-hash", "reference"]).output();
    let again = again.unwrap();
    assert_eq!(again.status.code(), Some(4), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(String::from_utf8_lossy(&again.stderr).contains("the dataset release hash"));
}

/// The reference run's selection, from the binary: its 600 items in its order, per family.
#[test]
fn the_reference_runs_selection_is_reproduced_from_its_run_lock() {
    let ws = reference_workspace();
    let run = ws.run("recorded");
    let reference_lock = fixture("run-lock.json");
    ok(ws.stage("ib-select", &run).args(["--release-hash", "recorded", "--reference-lock"]).arg(&reference_lock));
    let lock: Value = serde_json::from_slice(&std::fs::read(run.join("lock.json")).unwrap()).unwrap();
    let reference: Value = serde_json::from_slice(&std::fs::read(fixture("selection.json")).unwrap()).unwrap();
    assert_eq!(lock["dataset_release_hash"], reference["dataset_release_hash"]);
    assert_eq!(lock["release_hash"]["convention"], "recorded");
    assert_eq!(lock["release_hash"]["keys"].as_object().unwrap().len(), 7);
    let rows = parquet_io::read::<SelectionRow>(&run.join("selection.parquet")).unwrap().rows;
    for (family, expected) in reference["families"].as_object().unwrap() {
        assert_eq!(lock["selection"]["seeds"][family], expected["seed"], "{family}");
        let order: Vec<&str> =
            rows.iter().filter(|r| r.task_family.as_str() == family).map(|r| r.item_id.as_str()).collect();
        assert_eq!(json!(order), expected["full_family_order"], "{family}");
        let selected: Vec<&str> = rows
            .iter()
            .filter(|r| r.task_family.as_str() == family && r.selected)
            .map(|r| r.item_id.as_str())
            .collect();
        assert_eq!(json!(selected), expected["selected_prefix"], "{family}");
    }
    // Its own keys do not give the hash it records: refused, saying why, nothing created.
    let run = ws.run("keys");
    let out = ws
        .stage("ib-select", &run)
        .args(["--release-hash", "reference", "--reference-lock"])
        .arg(&reference_lock)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("records dataset_release_hash 4463dc834810…"));
    assert!(!run.exists());
}
