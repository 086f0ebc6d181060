//! The partition's terminal records, each checked against itself, its plan unit and its
//! embedded stream events (and the per-event files, when the reference kept them), and the
//! reference's evaluations of them.
use super::{read_json, sorted_json_files, EventBody, Kind, Record, RefEvent, Terminal, Unit};
use crate::fields::{Doc, Problems};
use inferbench_schemas::lenient_json;
use inferbench_schemas::timing::deltas;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The runner error the reference scores as a transport error (§5.9).
const HISTORICAL_TYPE: &str = "AttributeError";
const HISTORICAL_MESSAGE: &str = "'NoneType' object has no attribute 'read'";

pub fn read_records(
    dir: &Path,
    kind: Kind,
    plan: &BTreeMap<&str, &Unit>,
    p: &mut Problems,
) -> BTreeMap<String, Record> {
    let partition = kind.partition();
    let mut records = BTreeMap::new();
    for name in sorted_json_files(&dir.join("raw").join(&partition)) {
        let rel = format!("raw/{partition}/{name}");
        let Some((_, value)) = read_json(dir, &rel, p) else { continue };
        if let Some(record) = record(dir, &rel, &name, &value, &partition, plan, p) {
            records.insert(record.unit.request_id.clone(), record);
        }
    }
    records
}

/// What the reference's classification says the event's payload is.
fn event_body(ed: &Doc, classification: &str, p: &mut Problems) -> Option<EventBody> {
    let payload = ed.get("redacted_payload");
    let compact = |v: &Value| serde_json::to_string(v).unwrap_or_default();
    match classification {
        "sse_comment" => match payload.and_then(|v| v.get("comment")).and_then(Value::as_str) {
            Some(text) => Some(EventBody::Comment(text.to_string())),
            None => {
                p.push(format!("{}: a comment's payload must be {{\"comment\": <text>}}", ed.at("redacted_payload")));
                None
            }
        },
        "done" => match payload {
            Some(Value::String(s)) if s == "[DONE]" => Some(EventBody::Data(s.clone())),
            _ => {
                p.push(format!("{}: a `done` event's payload must be \"[DONE]\"", ed.at("redacted_payload")));
                None
            }
        },
        // An event whose data was empty: the payload is its SSE fields, already kept.
        "sse_metadata" => Some(EventBody::Data(String::new())),
        "malformed_sse" => match payload {
            Some(Value::String(raw)) => Some(EventBody::Data(raw.clone())),
            Some(other) => Some(EventBody::Data(compact(other))),
            None => {
                p.push(format!("{}: missing", ed.at("redacted_payload")));
                None
            }
        },
        "reasoning_and_answer" | "reasoning" | "answer" | "usage" | "finish" | "role" | "empty_delta" | "metadata" => {
            match payload {
                Some(object @ Value::Object(_)) => {
                    // The reference's channel check (§6.9): the saved channel texts are the
                    // payload's, or the figures it derived from them are not the payload's.
                    let (reasoning, answer) = deltas(object);
                    for (key, expected) in [("reasoning_content", &reasoning), ("answer_content", &answer)] {
                        match ed.get(key) {
                            Some(Value::String(saved)) if saved == expected => {}
                            None | Some(Value::Null) if expected.is_empty() => {}
                            saved => p.push(format!(
                                "{}: {} differs from the text its payload carries ({:?})",
                                ed.at(key),
                                saved.map_or("missing".to_string(), |v| v.to_string()),
                                expected
                            )),
                        }
                    }
                    Some(EventBody::Data(compact(object)))
                }
                _ => {
                    p.push(format!(
                        "{}: a `{classification}` event's payload must be a JSON object",
                        ed.at("redacted_payload")
                    ));
                    None
                }
            }
        }
        other => {
            p.push(format!("{}: `{other}` is not a classification the reference writes", ed.at("classification")));
            None
        }
    }
}

fn status_text(status: Option<u16>) -> String {
    status.map_or_else(|| "null".to_string(), |s| s.to_string())
}

fn opt_text(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

fn record(
    dir: &Path,
    rel: &str,
    name: &str,
    value: &Value,
    partition: &str,
    plan: &BTreeMap<&str, &Unit>,
    p: &mut Problems,
) -> Option<Record> {
    let doc = Doc::new(rel, value);
    let before = p.lines.len();
    if !value.is_object() {
        p.push(format!("{rel}: expected a terminal record (a JSON object)"));
        return None;
    }
    let request_id = doc.string(p, "request_id")?;
    if name.strip_suffix(".json") != Some(request_id) {
        p.push(format!("{}: {request_id} is not the file's name", doc.at("request_id")));
    }
    let Some(unit) = plan.get(request_id).copied() else {
        p.push(format!("{}: {request_id} is not in the plan of raw/{partition}", doc.at("request_id")));
        return None;
    };
    for (key, expected) in [
        ("provider", Value::from(unit.provider.as_str())),
        ("round_id", Value::from(unit.round_id.as_str())),
        ("round_index", Value::from(unit.round_index)),
        ("task_family", Value::from(unit.task_family.as_str())),
        ("item_id", Value::from(unit.item_id.as_str())),
    ] {
        if doc.get(key) != Some(&expected) {
            p.push(format!(
                "{}: expected the plan's {expected}, found {}",
                doc.at(key),
                value.get(key).unwrap_or(&Value::Null)
            ));
        }
    }
    let outcome = doc.string(p, "terminal_outcome");
    let start_ns = doc.u64(p, "request_start_monotonic_ns");
    let http_status = match doc.get("http_status") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().filter(|s| (100..=599).contains(s)) {
            Some(s) => Some(s as u16),
            None => {
                p.push(format!("{}: expected null or an HTTP status 100–599, found {v}", doc.at("http_status")));
                None
            }
        },
    };
    let error = match doc.get("error") {
        None | Some(Value::Null) => None,
        Some(e @ Value::Object(_)) => {
            let ed = doc.child("error", e);
            Some((ed.string(p, "type").unwrap_or_default().to_string(), opt_text(e.get("message")).unwrap_or_default()))
        }
        Some(other) => {
            p.push(format!("{}: expected null or {{type, message}}, found {other}", doc.at("error")));
            None
        }
    };
    let two_xx = http_status.is_some_and(|s| (200..300).contains(&s));
    let terminal = match outcome? {
        "completed" if two_xx => Terminal::Completed,
        "completed" => {
            p.push(format!(
                "{}: `completed` with http_status {}; a completed record is a 2xx",
                doc.at("terminal_outcome"),
                status_text(http_status)
            ));
            return None;
        }
        "http_error" if http_status.is_some() && !two_xx => Terminal::HttpError,
        "http_error" => {
            p.push(format!(
                "{}: `http_error` with http_status {}; an HTTP error has a non-2xx status",
                doc.at("terminal_outcome"),
                status_text(http_status)
            ));
            return None;
        }
        "timeout" => Terminal::Timeout,
        "transport_error" if error.as_ref().is_some_and(|(t, _)| t == "invalid_sse") => Terminal::InvalidSse,
        "transport_error" => Terminal::TransportError,
        "runner_error"
            if http_status.is_none()
                && error.as_ref().is_some_and(|(t, m)| t == HISTORICAL_TYPE && m == HISTORICAL_MESSAGE) =>
        {
            Terminal::HistoricalRunnerError
        }
        "runner_error" => Terminal::RunnerError,
        other => {
            p.push(format!(
                "{}: `{other}` is not one of completed, timeout, http_error, transport_error, runner_error",
                doc.at("terminal_outcome")
            ));
            return None;
        }
    };
    let events = events(&doc, request_id, p);
    if events.is_some() {
        check_durable_events(dir, partition, request_id, value, p);
        let joined = |key: &str| -> String {
            value["stream_events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.get(key).and_then(Value::as_str))
                .collect()
        };
        for (saved, channel) in
            [("reconstructed_answer", "answer_content"), ("reconstructed_reasoning", "reasoning_content")]
        {
            if let Some(Value::String(text)) = doc.get(saved) {
                if *text != joined(channel) {
                    p.push(format!(
                        "{}: the stream events do not reconstruct it (their {channel} joined differs)",
                        doc.at(saved)
                    ));
                }
            }
        }
    }
    let request = doc.object(p, "request");
    let body = request.as_ref().and_then(|r| r.object(p, "body")).map(|b| b.value.clone());
    let headers = request.as_ref().and_then(|r| r.string_map(p, "headers"));
    let endpoint = doc.string(p, "endpoint").map(str::to_string);
    let started_at = doc.opt_string(p, "started_at").flatten().map(str::to_string);
    let ended_ns = doc.get("ended_monotonic_ns").and_then(Value::as_u64);
    let head_headers = doc.string_map(p, "rate_limit_headers").unwrap_or_default();
    let response = doc.get("response");
    let response_body = match (terminal, response.and_then(|r| r.get("body"))) {
        (Terminal::HttpError, Some(Value::String(text))) => Some(text.clone()),
        (Terminal::HttpError, Some(Value::Null) | None) => None,
        (Terminal::HttpError, Some(other)) => Some(serde_json::to_string(other).unwrap_or_default()),
        _ => None,
    };
    let done_marker = response.and_then(|r| r.get("done_marker_observed")).and_then(Value::as_bool);
    if p.lines.len() > before {
        return None;
    }
    let events = events?;
    let done_marker = done_marker.unwrap_or_else(|| events.iter().any(|e| e.body == EventBody::Data("[DONE]".into())));
    let mut kept = value.clone();
    if let Some(list) = kept.get_mut("stream_events").and_then(Value::as_array_mut) {
        for event in list {
            if let Some(map) = event.as_object_mut() {
                map.remove("redacted_payload");
            }
        }
    }
    Some(Record {
        unit: unit.clone(),
        start_ns: start_ns?,
        ended_ns,
        started_at,
        terminal,
        http_status,
        error_type: error.as_ref().map(|(t, _)| t.clone()),
        error_message: error.map(|(_, m)| m),
        endpoint: endpoint?,
        body: body?,
        headers: headers?,
        response_body,
        head_headers,
        provider_request_id: opt_text(doc.get("provider_request_id")),
        done_marker,
        events,
        kept,
    })
}

fn events(doc: &Doc, request_id: &str, p: &mut Problems) -> Option<Vec<RefEvent>> {
    let list = match doc.get("stream_events") {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(_) => doc.array(p, "stream_events")?,
    };
    let before = p.lines.len();
    let mut events = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let ed = doc.element("stream_events", i, item);
        if !item.is_object() {
            p.push(format!("{}: expected an event object", ed.at("")));
            continue;
        }
        if ed.get("event_index").and_then(Value::as_u64) != Some(i as u64) {
            p.push(format!(
                "{}: expected {i} (events are numbered in order), found {}",
                ed.at("event_index"),
                item.get("event_index").unwrap_or(&Value::Null)
            ));
        }
        if let Some(id) = ed.get("request_id").and_then(Value::as_str).filter(|id| *id != request_id) {
            p.push(format!("{}: {id} is another request's", ed.at("request_id")));
        }
        let offset = ed.offset(p, "monotonic_offset_ms");
        let Some(classification) = ed.string(p, "classification") else { continue };
        let body = event_body(&ed, classification, p);
        let (Some(offset_ms), Some(body)) = (offset, body) else { continue };
        let text = |key: &str| opt_text(item.get(key));
        events.push((
            i,
            RefEvent {
                offset_ms,
                body,
                sse_event: text("sse_event"),
                sse_id: text("sse_id"),
                sse_retry: text("sse_retry"),
            },
        ));
    }
    if p.lines.len() > before {
        return None;
    }
    // The reference's recompute sorts events by (offset, index) before accumulating them.
    events.sort_by(|a, b| a.1.offset_ms.total_cmp(&b.1.offset_ms).then(a.0.cmp(&b.0)));
    Some(events.into_iter().map(|(_, e)| e).collect())
}

/// The per-event files the reference wrote at arrival must be the embedded events (its own
/// materialisation check, §7.2).
fn check_durable_events(dir: &Path, partition: &str, request_id: &str, record: &Value, p: &mut Problems) {
    let events_dir = dir.join("raw/stream-events").join(partition).join(request_id);
    if !events_dir.is_dir() {
        return;
    }
    let embedded = record["stream_events"].as_array().map(Vec::as_slice).unwrap_or_default();
    let files = sorted_json_files(&events_dir);
    let rel_dir = format!("raw/stream-events/{partition}/{request_id}");
    if files.len() != embedded.len() {
        p.push(format!(
            "{rel_dir}: {} event files, but raw/{partition}/{request_id}.json embeds {} events",
            files.len(),
            embedded.len()
        ));
        return;
    }
    for (i, name) in files.iter().enumerate() {
        let rel = format!("{rel_dir}/{name}");
        let Some((_, mut durable)) = read_json(dir, &rel, p) else { return };
        if let Some(map) = durable.as_object_mut() {
            map.remove("durability");
        }
        let mut expected = embedded[i].clone();
        if let Some(map) = expected.as_object_mut() {
            map.insert("request_id".into(), Value::from(request_id));
            map.insert("event_index".into(), Value::from(i));
        }
        if name != &format!("{i:08}.json") || durable != expected {
            p.push(format!("{rel}: differs from stream_events[{i}] of raw/{partition}/{request_id}.json"));
            return;
        }
    }
}
pub fn read_evaluations(dir: &Path, kind: Kind, p: &mut Problems) -> BTreeMap<String, Value> {
    let partition = kind.partition();
    // Against the record files, not the records that checked: a defective record is reported
    // once, as itself.
    let records: BTreeSet<String> = sorted_json_files(&dir.join("raw").join(&partition))
        .into_iter()
        .map(|n| n.trim_end_matches(".json").to_string())
        .collect();
    let mut out = BTreeMap::new();
    let mut take = |file: &str, value: Value, p: &mut Problems| {
        let doc = Doc::new(file, &value);
        let Some(id) = doc.string(p, "request_id").map(str::to_string) else { return };
        if !records.contains(&id) {
            p.push(format!("{}: {id} has no terminal record in raw/{partition}/", doc.at("request_id")));
            return;
        }
        out.insert(id, value);
    };
    let per_request = dir.join("artifacts/evaluations").join(&partition);
    if per_request.is_dir() {
        for name in sorted_json_files(&per_request) {
            let rel = format!("artifacts/evaluations/{partition}/{name}");
            if let Some((_, value)) = read_json(dir, &rel, p) {
                take(&rel, value, p);
            }
        }
        return out;
    }
    let rel = format!("artifacts/evaluations{}.jsonl", kind.suffix());
    let Ok(bytes) = std::fs::read(dir.join(&rel)) else { return out };
    for (i, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
        let at = format!("{rel}:{}", i + 1);
        match serde_json::from_str(line).ok().or_else(|| lenient_json::parse(line)) {
            Some(value) => take(&at, value, p),
            None => p.push(format!("{at}: not valid JSON")),
        }
    }
    out
}
