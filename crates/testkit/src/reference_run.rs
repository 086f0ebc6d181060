//! Reference-format run directories for the tests and the benchmark, built from the reference
//! runner's own smoke run (`tests/fixtures/reference/smoke-run`): copied whole, with records
//! turned into the failures the reference records (as its §5.7 and §7 describe them), or grown
//! into a full run of any size.
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub fn fixture(rel: &str) -> PathBuf {
    crate::repo().join("tests/fixtures/reference").join(rel)
}

/// Copies a directory tree (hidden files too, as `cp -a` would).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = serde_json::to_string_pretty(value).unwrap();
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// A reference run directory under construction.
pub struct RefRun {
    pub dir: PathBuf,
    pub partition: String,
}

impl RefRun {
    /// A copy of the reference's smoke run (attempt 1, 30 requests).
    pub fn smoke(dest: &Path) -> RefRun {
        copy_tree(&fixture("smoke-run"), dest);
        RefRun { dir: dest.to_path_buf(), partition: "attempt-1".into() }
    }

    pub fn record_path(&self, id: &str) -> PathBuf {
        self.dir.join("raw").join(&self.partition).join(format!("{id}.json"))
    }

    pub fn evaluation_path(&self, id: &str) -> PathBuf {
        self.dir.join("artifacts/evaluations").join(&self.partition).join(format!("{id}.json"))
    }

    pub fn record(&self, id: &str) -> Value {
        read(&self.record_path(id))
    }

    pub fn save(&self, id: &str, record: &Value) {
        write(&self.record_path(id), record);
    }

    /// Request ids of the partition's records, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(self.dir.join("raw").join(&self.partition))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".json").to_string())
            .collect();
        ids.sort();
        ids
    }

    /// Request ids of the records of one task family, sorted.
    pub fn ids_of(&self, family: &str) -> Vec<String> {
        self.ids().into_iter().filter(|id| self.record(id)["task_family"] == family).collect()
    }

    /// Applies `change` to a record and sets the evaluation the reference gives it afterwards
    /// (`None`: the reference evaluates nothing, as for a runner error).
    pub fn change(&self, id: &str, change: impl FnOnce(&mut Value), evaluation: Option<Verdict>) {
        let mut record = self.record(id);
        change(&mut record);
        reconcile(&mut record);
        self.save(id, &record);
        match evaluation {
            Some(verdict) => {
                let mut e = read(&self.evaluation_path(id));
                verdict.apply(&mut e);
                write(&self.evaluation_path(id), &e);
            }
            None => std::fs::remove_file(self.evaluation_path(id)).unwrap(),
        }
    }

    /// Removes the reference's derived figures (they no longer describe changed records).
    pub fn drop_figures(&self) {
        for name in ["metrics", "paired-comparisons", "run-manifest"] {
            let _ = std::fs::remove_file(self.dir.join(format!("artifacts/{name}-{}.json", self.partition)));
        }
    }
}

/// The reference's verdict on a request, as its evaluation file records it.
#[derive(Debug, Clone, Copy)]
pub enum Verdict {
    Unchanged,
    Invalid(&'static str),
    Failed(&'static str),
}

impl Verdict {
    fn apply(self, e: &mut Value) {
        let (classification, error_type) = match self {
            Verdict::Unchanged => return,
            Verdict::Invalid(t) => ("invalid_result", t),
            Verdict::Failed(t) => ("failed_request", t),
        };
        e["classification"] = json!(classification);
        e["error_type"] = json!(error_type);
        e["correct"] = json!(false);
        e["schema_valid"] = json!(false);
        e["parsed_output"] = Value::Null;
    }
}

/// One stream event as the reference records it.
pub fn event(
    record: &Value,
    offset_ms: f64,
    classification: &str,
    payload: Value,
    reasoning: &str,
    answer: &str,
) -> Value {
    json!({
        "answer_content": answer,
        "classification": classification,
        "content": if reasoning.is_empty() { answer } else { reasoning },
        "content_presence": {"answer": !answer.is_empty(), "reasoning": !reasoning.is_empty()},
        "event_index": 0,
        "monotonic_offset_ms": offset_ms,
        "reasoning_content": reasoning,
        "redacted_payload": payload,
        "request_id": record["request_id"],
        "sse_event": null,
        "sse_id": null,
        "sse_retry": null,
    })
}

fn events(record: &mut Value) -> &mut Vec<Value> {
    record["stream_events"].as_array_mut().unwrap()
}

fn last_offset(record: &Value) -> f64 {
    record["stream_events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["monotonic_offset_ms"].as_f64())
        .fold(0.0, f64::max)
}

/// Event indices, the reconstructed texts and the `[DONE]` marker, as the reference keeps them
/// consistent with its events.
fn reconcile(record: &mut Value) {
    let mut answer = String::new();
    let mut reasoning = String::new();
    let mut done = false;
    for (i, e) in events(record).iter_mut().enumerate() {
        e["event_index"] = json!(i);
        answer.push_str(e["answer_content"].as_str().unwrap_or_default());
        reasoning.push_str(e["reasoning_content"].as_str().unwrap_or_default());
        done |= e["classification"] == "done";
    }
    record["reconstructed_answer"] = json!(answer);
    record["reconstructed_reasoning"] = json!(reasoning);
    if record["terminal_outcome"] == "completed" {
        record["assistant_content"] = json!(answer);
        record["response"] = json!({"stream_captured": true, "done_marker_observed": done});
    }
}

fn fail(record: &mut Value, outcome: &str, status: Option<u16>, error_type: &str, message: &str) {
    // An HTTP error reports no model and fails its adapter check (§5.7); a timeout or transport
    // error keeps the identity its partial stream showed, if any, and has no adapter check.
    let map = record.as_object_mut().unwrap();
    map.remove("adapter_compatibility");
    if outcome == "http_error" {
        let requested = map["model_identity"]["requested"].clone();
        map.insert("model_identity".into(), json!({"requested": requested, "reported": null, "matches": null}));
        map.insert(
            "adapter_compatibility".into(),
            json!({"status": "request_failed", "reason": null, "exact_low_reasoning_evidenced": false}),
        );
    } else if map["stream_events"].as_array().is_none_or(|e| e.is_empty()) {
        map.remove("model_identity");
    }
    record["terminal_outcome"] = json!(outcome);
    record["http_status"] = json!(status);
    record["error"] = json!({"type": error_type, "message": message});
    record["response"] = Value::Null;
    record["failure_classification"] = json!(match outcome {
        "http_error" => match status {
            Some(429) => "http_429",
            Some(500..=599) => "http_5xx",
            _ => "other_http_4xx",
        },
        "runner_error" => "runner_error",
        other => other,
    });
}

/// A stream that ends with neither `[DONE]` nor a `finish_reason` (the reference: completed).
pub fn without_done_or_finish(record: &mut Value) {
    events(record).retain(|e| e["classification"] != "done" && e["classification"] != "finish");
    for e in events(record).iter_mut() {
        if let Some(choice) = e["redacted_payload"].pointer_mut("/choices/0") {
            choice["finish_reason"] = Value::Null;
        }
    }
}

/// Answer text after `[DONE]`, which the reference joins to the answer.
pub fn with_text_after_done(record: &mut Value, text: &str) {
    let at = last_offset(record) + 5.0;
    let payload = json!({"choices": [{"delta": {"content": text}, "finish_reason": null, "index": 0}], "id": "late"});
    let e = event(record, at, "answer", payload, "", text);
    events(record).push(e);
}

/// An error object inside the stream, before `[DONE]`: an ordinary event to the reference.
pub fn with_in_band_error(record: &mut Value) {
    let done = events(record).iter().position(|e| e["classification"] == "done").unwrap();
    let at = events(record)[done]["monotonic_offset_ms"].as_f64().unwrap();
    let payload = json!({"error": {"message": "upstream overloaded", "type": "server_error", "code": 500}});
    let e = event(record, at, "metadata", payload, "", "");
    events(record).insert(done, e);
}

pub fn as_http_error(record: &mut Value, status: u16) {
    events(record).clear();
    fail(record, "http_error", Some(status), "http_error", &format!("HTTP {status}"));
    record["response"] = json!({"body": {"error": {"message": "slow down", "code": status}}});
}

/// A deadline after `keep` events (the reference nulls the status of a timeout).
pub fn as_timeout(record: &mut Value, keep: usize) {
    events(record).truncate(keep);
    fail(record, "timeout", None, "timeout", "request exceeded the 20 s deadline");
}

/// `[DONE]` arrived, then the server held the connection open until the deadline.
pub fn as_timeout_after_done(record: &mut Value) {
    fail(record, "timeout", None, "timeout", "request exceeded the 20 s deadline");
}

/// Data that is not JSON after `keep` events: the reference's `invalid_sse`.
pub fn as_malformed(record: &mut Value, keep: usize) {
    events(record).truncate(keep);
    let at = last_offset(record) + 1.0;
    let e = event(record, at, "malformed_sse", json!("{\"choices\": [{\"delta\""), "", "");
    events(record).push(e);
    fail(record, "transport_error", Some(200), "invalid_sse", "malformed SSE JSON at event 3");
}

/// Special-token text in the reasoning before the answer: the reference's tokenizer raises
/// once the stream is over, so every event is recorded.
pub fn as_special_token_reasoning(record: &mut Value) {
    let first = events(record).iter().position(|e| e["classification"] == "reasoning").unwrap();
    let text = "<|endoftext|>";
    let at = events(record)[first]["monotonic_offset_ms"].as_f64().unwrap();
    let payload = json!({"choices": [{"delta": {"reasoning_content": text}, "finish_reason": null, "index": 0}]});
    let e = event(record, at, "reasoning", payload, text, "");
    events(record).insert(first + 1, e);
    fail(
        record,
        "transport_error",
        Some(200),
        "invalid_sse",
        "Encountered text corresponding to disallowed special token",
    );
}

/// The runner error the reference scores as a transport error.
pub fn as_historical_runner_error(record: &mut Value) {
    events(record).clear();
    fail(record, "runner_error", None, "AttributeError", "'NoneType' object has no attribute 'read'");
}

pub fn as_runner_error(record: &mut Value) {
    events(record).clear();
    fail(record, "runner_error", None, "EventSinkError", "event sink failed");
}

pub fn as_transport_error(record: &mut Value) {
    events(record).clear();
    fail(record, "transport_error", None, "transport_error", "Connection reset by peer");
}

/// A 2xx that closed without a single event (the reference: completed, an empty answer).
pub fn as_empty_stream(record: &mut Value) {
    events(record).clear();
}

fn short_hash(prefix: &str, parts: &[&str]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(parts.join("\0").as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{}", &hex[..24])
}

/// A full run (`raw/full/`) of `per_family` items per family and the smoke run's ten
/// providers, every record a copy of a smoke record of the same family and provider with its
/// identity and start time rewritten; no reference figures. The reference's lock and selection
/// are the smoke run's, so the dataset is still the fixture's.
pub fn full_run(dest: &Path, per_family: usize) -> RefRun {
    let smoke = RefRun::smoke(dest);
    let templates: Vec<Value> = smoke.ids().iter().map(|id| smoke.record(id)).collect();
    let selection = read(&dest.join("artifacts/selection.json"));
    let plan = read(&dest.join("artifacts/smoke-plan-attempt-1.json"));
    let providers: Vec<String> = plan["rounds"][0]["provider_launch_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    std::fs::remove_dir_all(dest.join("raw/attempt-1")).unwrap();
    std::fs::remove_dir_all(dest.join("artifacts/evaluations")).unwrap();
    std::fs::remove_dir_all(dest.join("artifacts/rounds")).unwrap();
    let families = ["meeting-notes-lookup", "ticket-triage", "contract-terms-extraction"];
    let version = "micro-single-task-paired-round-robin-sha256-v1";
    let mut rounds = Vec::new();
    let mut clock: u64 = 1_000_000_000_000;
    let run = RefRun { dir: dest.to_path_buf(), partition: "full".into() };
    for item_index in 0..per_family {
        for family in families {
            let round_index = rounds.len();
            let item = selection["families"][family]["full_family_order"][item_index].as_str().unwrap().to_string();
            let ri = round_index.to_string();
            let round_id = short_hash("round", &[version, &ri, family, &item, "0"]);
            let offset = round_index % providers.len();
            let order: Vec<&String> = providers[offset..].iter().chain(&providers[..offset]).collect();
            let mut units = Vec::new();
            for (launch, provider) in order.iter().enumerate() {
                let request_id = short_hash("req", &[version, provider, &ri, family, &item, "0"]);
                let mut record = templates
                    .iter()
                    .find(|r| r["task_family"] == family && r["provider"] == provider.as_str())
                    .unwrap()
                    .clone();
                for (key, value) in [
                    ("request_id", json!(request_id)),
                    ("round_id", json!(round_id)),
                    ("round_index", json!(round_index)),
                    ("provider_launch_index", json!(launch)),
                    ("item_id", json!(item)),
                    ("smoke_attempt", Value::Null),
                    ("request_start_monotonic_ns", json!(clock + launch as u64 * 1_000)),
                    ("started_monotonic_ns", json!(clock + launch as u64 * 1_000)),
                ] {
                    record[key] = value;
                }
                for e in events(&mut record).iter_mut() {
                    e["request_id"] = json!(request_id);
                }
                run.save(&request_id, &record);
                units.push(json!({
                    "request_id": request_id, "round_id": round_id, "round_index": round_index,
                    "provider": provider, "provider_launch_index": launch, "task_family": family,
                    "item_id": item, "smoke_attempt": null,
                }));
            }
            clock += 5_000_000_000;
            write(
                &dest.join("artifacts/rounds/full").join(format!("{round_id}.json")),
                &json!({"round_id": round_id, "launch_skew_ms": 0.009, "resumed_partial_round": false,
                        "terminal_request_ids": units.iter().map(|u| u["request_id"].clone()).collect::<Vec<_>>()}),
            );
            rounds.push(json!({"round_id": round_id, "round_index": round_index, "task_family": family,
                "item_id": item, "provider_launch_order": order, "requests": units}));
        }
    }
    let n = rounds.len();
    write(
        &dest.join("artifacts/full-plan.json"),
        &json!({"kind": "full", "expected_rounds": n, "expected_requests": n * providers.len(), "rounds": rounds}),
    );
    run
}
