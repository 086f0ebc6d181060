//! The partition's terminal records, each checked against itself, its plan unit and its
//! embedded stream events (and the per-event files, when the reference kept them), and the
//! reference's evaluations of them.
use super::events::{check_durable_events, events};
use super::json::{opt_text, read_json, sorted_json_files};
use super::model::{EventBody, Kind, Record, Terminal, Unit};
use crate::fields::{Doc, Problems};
use inferbench_contract::lenient_json;
use inferbench_contract::vocab::ReferenceOutcome;
use inferbench_inputs::reference_records::{HISTORICAL_ERROR_MESSAGE, HISTORICAL_ERROR_TYPE};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

fn status_text(status: Option<u16>) -> String {
    status.map_or_else(|| "null".to_string(), |s| s.to_string())
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
    let outcome = outcome?;
    let terminal = match outcome.parse() {
        Ok(ReferenceOutcome::Completed) if two_xx => Terminal::Completed,
        Ok(ReferenceOutcome::Completed) => {
            p.push(format!(
                "{}: `completed` with http_status {}; a completed record is a 2xx",
                doc.at("terminal_outcome"),
                status_text(http_status)
            ));
            return None;
        }
        Ok(ReferenceOutcome::HttpError) if http_status.is_some() && !two_xx => Terminal::HttpError,
        Ok(ReferenceOutcome::HttpError) => {
            p.push(format!(
                "{}: `http_error` with http_status {}; an HTTP error has a non-2xx status",
                doc.at("terminal_outcome"),
                status_text(http_status)
            ));
            return None;
        }
        Ok(ReferenceOutcome::Timeout) => Terminal::Timeout,
        Ok(ReferenceOutcome::TransportError) if error.as_ref().is_some_and(|(t, _)| t == "invalid_sse") => {
            Terminal::InvalidSse
        }
        Ok(ReferenceOutcome::TransportError) => Terminal::TransportError,
        Ok(ReferenceOutcome::RunnerError)
            if http_status.is_none()
                && error.as_ref().is_some_and(|(t, m)| t == HISTORICAL_ERROR_TYPE && m == HISTORICAL_ERROR_MESSAGE) =>
        {
            Terminal::HistoricalRunnerError
        }
        Ok(ReferenceOutcome::RunnerError) => Terminal::RunnerError,
        Err(_) => {
            p.push(format!(
                "{}: `{outcome}` is not one of {}",
                doc.at("terminal_outcome"),
                ReferenceOutcome::NAMES.join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fixture::{put, smoke_json, smoke_run};
    use crate::source::plan::read_plan;
    use crate::source::Round;
    use serde_json::json;

    /// A completed record of the smoke run: 126 events (role, reasoning, answer, finish, done).
    const NAME: &str = "req-0abbe0a77b719de2092c544e.json";
    const REL: &str = "raw/attempt-1/req-0abbe0a77b719de2092c544e.json";

    fn smoke_plan() -> Vec<Round> {
        read_plan(&smoke_run(), Kind::Smoke(1), &mut Problems::default(), &mut BTreeMap::new())
    }

    /// The smoke record once `change` has been made to it, read as the import reads it.
    fn read(change: impl FnOnce(&mut Value)) -> (Option<Record>, Vec<String>) {
        let rounds = smoke_plan();
        let plan: BTreeMap<&str, &Unit> =
            rounds.iter().flat_map(|r| &r.units).map(|u| (u.request_id.as_str(), u)).collect();
        let mut value = smoke_json(REL);
        change(&mut value);
        let mut p = Problems::default();
        let record = record(&smoke_run(), REL, NAME, &value, "attempt-1", &plan, &mut p);
        (record, p.lines)
    }

    #[test]
    fn a_reference_record_reads_with_its_events_in_arrival_order() {
        let (record, lines) = read(|_| {});
        assert!(lines.is_empty(), "{lines:?}");
        let record = record.unwrap();
        let value = smoke_json(REL);
        assert_eq!(record.unit.request_id, "req-0abbe0a77b719de2092c544e");
        assert_eq!(record.unit.provider, "together");
        assert_eq!((record.terminal, record.http_status), (Terminal::Completed, Some(200)));
        assert_eq!(record.start_ns, value["request_start_monotonic_ns"].as_u64().unwrap());
        assert_eq!(record.ended_ns, value["ended_monotonic_ns"].as_u64());
        assert_eq!(record.endpoint, "http://127.0.0.1:18080/v1/chat/completions");
        assert_eq!(record.provider_request_id.as_deref(), Some("chatcmpl-ef9ba8471c6a46a7be973c94"));
        assert_eq!((record.error_type, record.response_body), (None, None));
        assert_eq!(record.body, value["request"]["body"]);
        assert!(record.done_marker);
        assert_eq!(record.events.len(), 126);
        assert!(record.events.windows(2).all(|w| w[0].offset_ms <= w[1].offset_ms));
        let first = &value["stream_events"][0];
        assert_eq!(record.events[0].offset_ms, first["monotonic_offset_ms"].as_f64().unwrap());
        assert_eq!(record.events[0].body, EventBody::Data(first["redacted_payload"].to_string()));
        assert_eq!(record.events[125].body, EventBody::Data("[DONE]".into()));
        // Kept as written, less the payloads the log holds.
        let kept = record.kept["stream_events"].as_array().unwrap();
        assert!(kept.iter().all(|e| e.get("redacted_payload").is_none()));
        assert_eq!(kept[5]["reasoning_content"], " JSON");
        assert_eq!(record.kept["ttfa_ms"], value["ttfa_ms"]);
    }

    #[test]
    fn how_a_record_ended_must_agree_with_its_status_and_error() {
        let historical = json!({"type": HISTORICAL_ERROR_TYPE, "message": HISTORICAL_ERROR_MESSAGE});
        let cases = [
            ("http_error", json!(503), Value::Null, Terminal::HttpError),
            ("timeout", Value::Null, Value::Null, Terminal::Timeout),
            ("transport_error", Value::Null, json!({"type": "invalid_sse", "message": "x"}), Terminal::InvalidSse),
            ("transport_error", Value::Null, json!({"type": "ChunkedEncodingError"}), Terminal::TransportError),
            ("runner_error", Value::Null, historical.clone(), Terminal::HistoricalRunnerError),
            ("runner_error", json!(200), historical, Terminal::RunnerError),
            ("runner_error", Value::Null, json!({"type": HISTORICAL_ERROR_TYPE, "message": 7}), Terminal::RunnerError),
        ];
        for (outcome, status, error, terminal) in cases {
            let (record, lines) = read(|v| {
                v["terminal_outcome"] = json!(outcome);
                v["http_status"] = status.clone();
                v["error"] = error.clone();
            });
            assert!(lines.is_empty(), "{outcome}: {lines:?}");
            let record = record.unwrap();
            assert_eq!(record.terminal, terminal, "{outcome} {status} {error}");
            assert_eq!(record.error_type.as_deref(), error.get("type").and_then(Value::as_str));
        }
        let (record, _) = read(|v| v["error"] = json!({"type": "X", "message": 7}));
        assert_eq!(record.unwrap().error_message.as_deref(), Some("7"));

        let refused = [
            ("completed", json!(429), "`completed` with http_status 429; a completed record is a 2xx"),
            ("http_error", json!(204), "`http_error` with http_status 204; an HTTP error has a non-2xx status"),
            ("http_error", Value::Null, "`http_error` with http_status null; an HTTP error has a non-2xx status"),
            (
                "cancelled",
                json!(200),
                "`cancelled` is not one of completed, timeout, http_error, transport_error, runner_error",
            ),
        ];
        for (outcome, status, message) in refused {
            let (record, lines) = read(|v| {
                v["terminal_outcome"] = json!(outcome);
                v["http_status"] = status.clone();
            });
            assert!(record.is_none());
            assert_eq!(lines, [format!("{REL}: terminal_outcome: {message}")]);
        }
        let (record, lines) = read(|v| v["http_status"] = json!(600));
        assert!(record.is_none());
        assert_eq!(lines[0], format!("{REL}: http_status: expected null or an HTTP status 100–599, found 600"));
        let (record, lines) = read(|v| v["error"] = json!("boom"));
        assert!(record.is_none());
        assert_eq!(lines, [format!("{REL}: error: expected null or {{type, message}}, found \"boom\"")]);
    }

    #[test]
    fn an_http_errors_body_is_kept_as_text() {
        for (body, kept) in [
            (json!("rate limited"), Some("rate limited")),
            (json!({"error": {"code": 429}}), Some("{\"error\":{\"code\":429}}")),
            (Value::Null, None),
        ] {
            let (record, lines) = read(|v| {
                v["terminal_outcome"] = json!("http_error");
                v["http_status"] = json!(429);
                v["response"]["body"] = body.clone();
            });
            assert!(lines.is_empty(), "{lines:?}");
            assert_eq!(record.unwrap().response_body.as_deref(), kept);
        }
        // A completed record's body is not an error's.
        let (record, _) = read(|v| v["response"]["body"] = json!("ignored"));
        assert_eq!(record.unwrap().response_body, None);
    }

    #[test]
    fn a_record_must_be_the_plans_and_named_by_its_request_id() {
        let (record, lines) = read(|v| v["provider"] = json!("fireworks"));
        assert!(record.is_none());
        assert_eq!(lines, [format!("{REL}: provider: expected the plan's \"together\", found \"fireworks\"")]);
        let (record, lines) = read(|v| v["request_id"] = json!("req-unplanned"));
        assert!(record.is_none());
        assert_eq!(
            lines,
            [
                format!("{REL}: request_id: req-unplanned is not the file's name"),
                format!("{REL}: request_id: req-unplanned is not in the plan of raw/attempt-1"),
            ]
        );
        let (record, lines) = read(|v| *v = json!([1, 2]));
        assert!(record.is_none());
        assert_eq!(lines, [format!("{REL}: expected a terminal record (a JSON object)")]);
    }

    #[test]
    fn the_saved_texts_are_what_the_events_carry() {
        let (record, lines) = read(|v| v["reconstructed_answer"] = json!("{}"));
        assert!(record.is_none());
        assert_eq!(
            lines,
            [format!(
                "{REL}: reconstructed_answer: the stream events do not reconstruct it (their answer_content joined \
                 differs)"
            )]
        );
        let (record, lines) = read(|v| v["stream_events"][5]["reasoning_content"] = json!(" YAML"));
        assert!(record.is_none());
        assert_eq!(
            lines,
            [format!(
                "{REL}: stream_events[5].reasoning_content: \" YAML\" differs from the text its payload carries \
                 (\" JSON\")"
            )]
        );
    }

    #[test]
    fn evaluations_are_read_per_request_or_from_the_partitions_jsonl() {
        let mut p = Problems::default();
        let evaluations = read_evaluations(&smoke_run(), Kind::Smoke(1), &mut p);
        assert!(p.is_empty(), "{:?}", p.lines);
        let records: Vec<String> = sorted_json_files(&smoke_run().join("raw/attempt-1"))
            .into_iter()
            .map(|n| n.trim_end_matches(".json").to_string())
            .collect();
        assert_eq!(evaluations.keys().cloned().collect::<Vec<_>>(), records);
        assert!(evaluations.iter().all(|(id, e)| e["request_id"] == id.as_str()));

        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "raw/full/req-a.json", b"{}");
        let lines = "{\"request_id\": \"req-a\", \"score\": NaN}\n{\"request_id\": \"req-b\"}\nnot json\n{}\n";
        put(dir.path(), "artifacts/evaluations.jsonl", lines.as_bytes());
        let mut p = Problems::default();
        let evaluations = read_evaluations(dir.path(), Kind::Full, &mut p);
        assert_eq!(evaluations.keys().collect::<Vec<_>>(), ["req-a"]);
        assert_eq!(evaluations["req-a"]["score"], Value::Null);
        assert_eq!(
            p.lines,
            [
                "artifacts/evaluations.jsonl:2: request_id: req-b has no terminal record in raw/full/",
                "artifacts/evaluations.jsonl:3: not valid JSON",
                "artifacts/evaluations.jsonl:4: request_id: expected a non-empty string, found nothing (the field is \
                 missing)",
            ]
        );
        assert!(read_evaluations(dir.path(), Kind::Smoke(1), &mut Problems::default()).is_empty());
    }

    #[test]
    fn the_partitions_records_are_read_by_request_id() {
        let rounds = smoke_plan();
        let plan: BTreeMap<&str, &Unit> =
            rounds.iter().flat_map(|r| &r.units).map(|u| (u.request_id.as_str(), u)).collect();
        let mut p = Problems::default();
        let records = read_records(&smoke_run(), Kind::Smoke(1), &plan, &mut p);
        assert!(p.is_empty(), "{:?}", p.lines);
        assert_eq!(records.len(), 30);
        assert!(records.iter().all(|(id, r)| *id == r.unit.request_id && plan.contains_key(id.as_str())));
        assert!(records.values().all(|r| r.terminal == Terminal::Completed && !r.events.is_empty()));
    }
}
