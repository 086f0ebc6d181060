//! The stream events a terminal record embeds: each event's payload as its classification
//! names it, its channel texts checked against that payload, the events in the order the
//! reference accumulates them, and the per-event files it wrote at arrival, when it kept them.
use super::json::{opt_text, read_json, sorted_json_files};
use super::model::{EventBody, RefEvent};
use crate::fields::{Doc, Problems};
use inferbench_judge::timing::deltas;
use serde_json::Value;
use std::path::Path;

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

pub fn events(doc: &Doc, request_id: &str, p: &mut Problems) -> Option<Vec<RefEvent>> {
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
pub fn check_durable_events(dir: &Path, partition: &str, request_id: &str, record: &Value, p: &mut Problems) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fixture::put;
    use serde_json::json;

    fn events_of(list: Value) -> (Option<Vec<RefEvent>>, Vec<String>) {
        let value = json!({ "stream_events": list });
        let mut p = Problems::default();
        let events = events(&Doc::new("r.json", &value), "req-1", &mut p);
        (events, p.lines)
    }

    fn body_of(event: Value) -> (Option<EventBody>, Vec<String>) {
        let mut p = Problems::default();
        let classification = event["classification"].as_str().unwrap_or_default().to_string();
        let body = event_body(&Doc::new("e.json", &event), &classification, &mut p);
        (body, p.lines)
    }

    #[test]
    fn events_are_numbered_and_taken_by_offset_then_index() {
        let (events, lines) = events_of(json!([
            {"event_index": 0, "classification": "role", "monotonic_offset_ms": 5.0,
             "redacted_payload": {"choices": [{"delta": {"role": "assistant"}}]}, "sse_id": 7},
            {"event_index": 1, "classification": "sse_comment", "monotonic_offset_ms": 2.0,
             "redacted_payload": {"comment": "keep-alive"}, "sse_event": "ping"},
            {"event_index": 2, "classification": "done", "monotonic_offset_ms": 2.0, "redacted_payload": "[DONE]"},
        ]));
        assert!(lines.is_empty(), "{lines:?}");
        let events = events.unwrap();
        let bodies: Vec<&EventBody> = events.iter().map(|e| &e.body).collect();
        assert_eq!(
            bodies,
            [
                &EventBody::Comment("keep-alive".into()),
                &EventBody::Data("[DONE]".into()),
                &EventBody::Data("{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}".into()),
            ]
        );
        assert_eq!(events[0].sse_event.as_deref(), Some("ping"));
        assert_eq!(events[2].sse_id.as_deref(), Some("7"));
        assert_eq!(events_of(Value::Null).0.unwrap().len(), 0);

        let (events, lines) = events_of(json!([
            {"event_index": 1, "request_id": "req-2", "classification": "done", "monotonic_offset_ms": -1,
             "redacted_payload": "[DONE]"},
            "text",
        ]));
        assert!(events.is_none());
        assert_eq!(
            lines[0],
            "r.json: stream_events[0].event_index: expected 0 (events are numbered in order), found 1"
        );
        assert_eq!(lines[1], "r.json: stream_events[0].request_id: req-2 is another request's");
        assert!(lines[2].starts_with("r.json: stream_events[0].monotonic_offset_ms: expected "), "{}", lines[2]);
        assert_eq!(lines[3], "r.json: stream_events[1]: expected an event object");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn each_classification_has_the_payload_it_names() {
        let data = |text: &str| Some(EventBody::Data(text.into()));
        let chunk = json!({"choices": [{"delta": {"content": "Hi"}}]});
        let accepted = [
            (json!({"classification": "sse_metadata"}), data("")),
            (json!({"classification": "malformed_sse", "redacted_payload": "data: {"}), data("data: {")),
            (json!({"classification": "malformed_sse", "redacted_payload": [1, 2]}), data("[1,2]")),
            (
                json!({"classification": "answer", "redacted_payload": chunk, "answer_content": "Hi"}),
                data("{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}"),
            ),
            (
                json!({"classification": "usage", "redacted_payload": {"usage": {}}, "reasoning_content": null}),
                data("{\"usage\":{}}"),
            ),
        ];
        for (event, body) in accepted {
            let (got, lines) = body_of(event.clone());
            assert!(lines.is_empty(), "{event}: {lines:?}");
            assert_eq!(got, body, "{event}");
        }
        let refused = [
            (
                json!({"classification": "sse_comment", "redacted_payload": "x"}),
                "e.json: redacted_payload: a comment's payload must be {\"comment\": <text>}",
            ),
            (
                json!({"classification": "done", "redacted_payload": "DONE"}),
                "e.json: redacted_payload: a `done` event's payload must be \"[DONE]\"",
            ),
            (json!({"classification": "malformed_sse"}), "e.json: redacted_payload: missing"),
            (
                json!({"classification": "finish", "redacted_payload": "stop"}),
                "e.json: redacted_payload: a `finish` event's payload must be a JSON object",
            ),
            (
                json!({"classification": "answer", "redacted_payload": chunk}),
                "e.json: answer_content: missing differs from the text its payload carries (\"Hi\")",
            ),
            (
                json!({"classification": "tool_call", "redacted_payload": {}}),
                "e.json: classification: `tool_call` is not a classification the reference writes",
            ),
        ];
        for (event, message) in refused {
            let (got, lines) = body_of(event.clone());
            assert_eq!(lines, [message], "{event}");
            if !message.contains("differs") {
                assert_eq!(got, None, "{event}");
            }
        }
    }

    #[test]
    fn the_durable_event_files_must_be_the_embedded_events() {
        let embedded = json!([{"classification": "role", "x": 1}, {"classification": "done", "x": 2}]);
        let record = json!({"stream_events": embedded});
        let durable = |i: usize| {
            let mut e = embedded[i].clone();
            e["request_id"] = json!("req-1");
            e["event_index"] = json!(i);
            e["durability"] = json!({"fsync": true});
            serde_json::to_vec(&e).unwrap()
        };
        let check = |dir: &Path| {
            let mut p = Problems::default();
            check_durable_events(dir, "attempt-1", "req-1", &record, &mut p);
            p.lines
        };
        let events = "raw/stream-events/attempt-1/req-1";
        let dir = tempfile::tempdir().unwrap();
        assert!(check(dir.path()).is_empty(), "no per-event files: nothing to check");
        put(dir.path(), &format!("{events}/00000000.json"), &durable(0));
        assert_eq!(
            check(dir.path()),
            [format!("{events}: 1 event files, but raw/attempt-1/req-1.json embeds 2 events")]
        );
        put(dir.path(), &format!("{events}/00000001.json"), &durable(1));
        assert!(check(dir.path()).is_empty());
        put(dir.path(), &format!("{events}/00000001.json"), &durable(0));
        assert_eq!(
            check(dir.path()),
            [format!("{events}/00000001.json: differs from stream_events[1] of raw/attempt-1/req-1.json")]
        );
    }
}
