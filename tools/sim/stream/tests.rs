//! Unit tests of `stream::plan`: each fault's planned wire format.
use super::*;
use crate::chunk::{oversized_line_min_bytes, Chunker};
use crate::profile::Profiles;
use crate::wire::{frames, Wire};
use inferbench_sim::answer::{reasoning, tokenize};
use inferbench_stats::rng::SplitMix64;
use std::path::Path;

fn profile(extra: &str) -> Profile {
    let text = format!(
        "providers:\n  p:\n    model: m-1\n    ttft_ms: {{median: 1000, p99: 4000}}\n    tokens_per_second: {{median: 100, p05: 40}}\n{extra}"
    );
    Profiles::parse(&text, Path::new("t.yaml")).unwrap().providers["p"].clone()
}

fn draw(fault: Fault, reasoning_tokens: usize) -> Draw {
    Draw { fault, correct: true, ttft_ms: 500.0, tokens_per_second: 50.0, reasoning_tokens, rng: SplitMix64::new(0) }
}

const ANSWER: &str = r#"{"category":"customer_support","priority":"p2"}"#;

struct Planned {
    plan: Plan,
    answer: Chunks,
}

fn plan_with(p: &Profile, d: &Draw, usage: bool, echo: Option<&Echo>) -> Planned {
    let answer = match echo {
        Some(e) => e.answer(ANSWER, p.tokens_per_chunk),
        None => tokenize(ANSWER, p.tokens_per_chunk),
    };
    let normal = reasoning(d.reasoning_tokens, p.tokens_per_chunk, false);
    let r = match echo {
        Some(e) => e.reasoning(&normal),
        None => normal,
    };
    let plan = plan(&Request {
        profile: p,
        draw: d,
        id: "chatcmpl-p-0",
        answer: &answer,
        reasoning: &r,
        prompt_tokens: 100,
        usage,
        echo,
    });
    Planned { plan, answer }
}

fn plan_for(p: &Profile, d: &Draw) -> Planned {
    plan_with(p, d, true, None)
}

fn kinds(steps: &[Step]) -> Vec<Kind> {
    let mut k: Vec<Kind> = steps.iter().map(|s| s.kind).collect();
    k.dedup();
    k
}

/// The data of a one-line `data:` event.
fn data(step: &Step) -> &str {
    match &step.payload {
        Payload::Lines(lines) if lines.len() == 1 => lines[0].strip_prefix("data: ").expect("a data line"),
        other => panic!("not a one-line data event: {other:?}"),
    }
}

fn json_of(step: &Step) -> Value {
    serde_json::from_str(data(step)).unwrap()
}

/// The body as written (every finite payload).
fn body(plan: &Plan, wire: Wire) -> Vec<u8> {
    plan.steps.iter().flat_map(|s| frames(&s.payload, wire)).flat_map(|b| b.to_vec()).collect()
}

fn content(plan: &Plan) -> String {
    plan.steps
        .iter()
        .filter(|s| s.kind == Kind::Answer)
        .map(|s| json_of(s)["choices"][0]["delta"]["content"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn clean_stream_sequence_and_timing() {
    let p = profile("    reasoning_tokens: {mean: 10}\n    tokens_per_chunk: 2\n");
    let Planned { plan, answer } = plan_for(&p, &draw(Fault::None, 10));
    let steps = &plan.steps;
    assert_eq!(kinds(steps), [Kind::Role, Kind::Reasoning, Kind::Answer, Kind::Finish, Kind::Usage, Kind::Done]);
    assert_eq!(
        plan.head,
        Head {
            status: 200,
            content_type: Some("text/event-stream"),
            request_id: "chatcmpl-p-0".into(),
            body: HeadBody::Stream
        }
    );
    let answers: Vec<&Step> = steps.iter().filter(|s| s.kind == Kind::Answer).collect();
    assert_eq!(answers[0].at_ms, 500.0);
    let n = answer.token_count as f64;
    let last = answers.last().unwrap().at_ms;
    assert!((last - (500.0 + (n - 1.0) * 20.0)).abs() < 1e-9);
    // The content reassembles; every event is a chunk with id, object, model.
    for s in &steps[..steps.len() - 1] {
        let v = json_of(s);
        assert_eq!(
            (v["id"].as_str(), v["object"].as_str(), v["model"].as_str()),
            (Some("chatcmpl-p-0"), Some("chat.completion.chunk"), Some("m-1"))
        );
    }
    assert_eq!(content(&plan), ANSWER);
    let usage = json_of(&steps[steps.len() - 2]);
    assert_eq!(usage["usage"]["completion_tokens"], answer.token_count + 10);
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(data(steps.last().unwrap()), "[DONE]");
    assert_eq!(json_of(&steps[steps.len() - 3])["choices"][0]["finish_reason"], "stop");
}

#[test]
fn usage_only_when_asked() {
    let p = profile("");
    let asked = plan_with(&p, &draw(Fault::None, 0), true, None).plan;
    let not = plan_with(&p, &draw(Fault::None, 0), false, None).plan;
    assert_eq!(asked.steps.iter().filter(|s| s.kind == Kind::Usage).count(), 1);
    assert_eq!(not.steps.iter().filter(|s| s.kind == Kind::Usage).count(), 0);
    assert_eq!(data(not.steps.last().unwrap()), "[DONE]");
}

#[test]
fn reasoning_field_is_configurable() {
    let p = profile("    reasoning_field: reasoning\n");
    let Planned { plan, .. } = plan_for(&p, &draw(Fault::None, 3));
    let v = json_of(&plan.steps[1]);
    assert!(v["choices"][0]["delta"]["reasoning"].is_string());
    assert!(v["choices"][0]["delta"].get("reasoning_content").is_none());
}

#[test]
fn model_faults() {
    let p = profile("");
    let s = plan_for(&p, &draw(Fault::WrongModel, 0)).plan.steps;
    assert_eq!(json_of(&s[1])["model"], "m-1-fp8");
    let s = plan_for(&p, &draw(Fault::NoModel, 0)).plan.steps;
    for step in &s[..s.len() - 1] {
        let v = json_of(step);
        assert!(v.get("model").is_none(), "{v}");
        assert_eq!(v["id"], "chatcmpl-p-0");
    }
    assert_eq!(data(s.last().unwrap()), "[DONE]");
}

#[test]
fn malformed_events_are_not_json() {
    let s = plan_for(&profile(""), &draw(Fault::Malformed, 0)).plan.steps;
    let bad: Vec<&Step> = s.iter().filter(|s| s.kind == Kind::Malformed).collect();
    assert_eq!(bad.len(), 1);
    assert!(serde_json::from_str::<Value>(data(bad[0])).is_err());
    assert_eq!(first_half("abéxy"), "ab");
    assert_eq!(first_half("東京"), "東");
}

#[test]
fn in_band_errors_end_the_body_after_half_the_answer() {
    let p = profile("");
    let clean = plan_for(&p, &draw(Fault::None, 0)).plan;
    let answers = clean.steps.iter().filter(|s| s.kind == Kind::Answer).count();
    let s = plan_for(&p, &draw(Fault::InBandError, 0)).plan.steps;
    let last = s.last().unwrap();
    assert_eq!(last.payload, Payload::Lines(vec![format!("data: {STREAM_ERROR}")]));
    let v: Value = serde_json::from_str(STREAM_ERROR).unwrap();
    assert_eq!((v["error"]["type"].as_str(), v["error"]["code"].as_u64()), (Some("server_error"), Some(500)));
    assert_eq!(s.iter().filter(|s| s.kind == Kind::Answer).count(), answers.div_ceil(2));
    assert!(!s.iter().any(|s| matches!(s.kind, Kind::Finish | Kind::Done | Kind::Usage)));

    let s = plan_for(&p, &draw(Fault::ErrorEvent, 0)).plan.steps;
    assert_eq!(s.last().unwrap().payload, Payload::Lines(vec!["event: error".into(), format!("data: {STREAM_ERROR}")]));
    let wire = body(&plan_for(&p, &draw(Fault::ErrorEvent, 0)).plan, Wire::default());
    assert!(String::from_utf8(wire).unwrap().ends_with(&format!("\n\nevent: error\ndata: {STREAM_ERROR}\n\n")));
}

#[test]
fn truncation_ends_cleanly_with_no_finish() {
    let s = plan_for(&profile(""), &draw(Fault::Truncate, 0)).plan.steps;
    assert_eq!((s.last().unwrap().kind, &s.last().unwrap().payload), (Kind::End, &Payload::Nothing));
    assert!(!s.iter().any(|s| matches!(s.kind, Kind::Finish | Kind::Done)));
}

#[test]
fn after_done_a_trailing_chunk_or_a_hang() {
    let p = profile("");
    let s = plan_for(&p, &draw(Fault::DataAfterDone, 0)).plan.steps;
    assert_eq!(data(&s[s.len() - 2]), "[DONE]");
    assert_eq!(json_of(&s[s.len() - 1])["choices"][0]["delta"]["content"], TRAILING);
    let s = plan_for(&p, &draw(Fault::DoneThenHang, 0)).plan.steps;
    assert_eq!(data(&s[s.len() - 2]), "[DONE]");
    assert_eq!((s[s.len() - 1].kind, &s[s.len() - 1].payload), (Kind::Hang, &Payload::Nothing));
}

#[test]
fn keep_alives_are_empty_data_and_the_answer_is_complete() {
    let p = profile("    reasoning_tokens: {mean: 4}\n");
    let plan = plan_for(&p, &draw(Fault::EmptyData, 4)).plan;
    let ka: Vec<&Payload> = plan.steps.iter().filter(|s| s.kind == Kind::KeepAlive).map(|s| &s.payload).collect();
    assert!(ka.len() >= 3);
    assert_eq!(ka[0], &Payload::Lines(vec!["data:".into()]));
    assert_eq!(ka[1], &Payload::Lines(vec!["data: ".into()]));
    let text = String::from_utf8(body(&plan, Wire::default())).unwrap();
    assert!(text.contains("\n\ndata:\n\n") && text.contains("\n\ndata: \n\n"), "{text}");
    // The first keep-alive is before the first token; another between two answer chunks.
    let first_answer = plan.steps.iter().position(|s| s.kind == Kind::Answer).unwrap();
    assert!(plan.steps[..first_answer].iter().any(|s| s.kind == Kind::KeepAlive));
    let k = kinds(&plan.steps);
    assert!(k.windows(3).any(|w| w == [Kind::Answer, Kind::KeepAlive, Kind::Answer]));
    assert_eq!(content(&plan), ANSWER);
    assert_eq!(data(plan.steps.last().unwrap()), "[DONE]");
}

#[test]
fn an_oversized_line_is_one_valid_chunk_of_the_given_length() {
    let p = profile("    faults: {oversized_bytes: 300000}\n");
    let plan = plan_for(&p, &draw(Fault::OversizedLine, 0)).plan;
    let step = plan.steps.iter().find(|s| s.kind == Kind::Oversized).unwrap();
    let bytes: Vec<u8> = frames(&step.payload, Wire::default()).flat_map(|b| b.to_vec()).collect();
    assert_eq!(bytes.len(), 300_000 + 2);
    assert!(bytes.ends_with(b"\n\n") && bytes.starts_with(b"data: "));
    let v: Value = serde_json::from_slice(&bytes[6..300_000]).unwrap();
    let filler = v["choices"][0]["delta"]["content"].as_str().unwrap();
    assert!(filler.len() > 299_000);
    assert_eq!((v["id"].as_str(), v["model"].as_str()), (Some("chatcmpl-p-0"), Some("m-1")));
    // The rest of the stream is a normal one.
    assert_eq!(content(&plan), ANSWER);
    assert_eq!(data(plan.steps.last().unwrap()), "[DONE]");
    // The shortest allowed line is exactly the chunk of the longest id.
    let min = oversized_line_min_bytes("p", "m-1");
    let long_id = format!("chatcmpl-p-{}", u64::MAX);
    assert_eq!(
        min as usize,
        format!("data: {}", Chunker { id: long_id, model: Some("m-1".into()), reasoning_field: "" }.content("")).len()
    );
}

#[test]
fn an_unterminated_line_starts_after_the_role_and_reasoning() {
    let p = profile("    reasoning_tokens: {mean: 4}\n");
    let s = plan_for(&p, &draw(Fault::UnterminatedLine, 4)).plan.steps;
    assert_eq!(kinds(&s), [Kind::Role, Kind::Reasoning, Kind::Unterminated]);
    assert_eq!(s.last().unwrap().payload, Payload::Unterminated { prefix: UNTERMINATED_PREFIX.into() });
    assert_eq!(UNTERMINATED_PREFIX, "data: {\"choices\":[{\"delta\":{\"content\":\"");
}

#[test]
fn non_sse_heads() {
    let json_plan = plan_for(&profile("    reasoning_tokens: {mean: 4}\n"), &draw(Fault::NonSse, 4)).plan;
    assert!(json_plan.steps.is_empty());
    assert_eq!((json_plan.head.status, json_plan.head.content_type), (200, Some("application/json")));
    let HeadBody::Full(text) = &json_plan.head.body else { panic!("{:?}", json_plan.head) };
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["content"], ANSWER);
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert!(v["choices"][0]["message"]["reasoning_content"].is_string());
    assert!(v["usage"]["completion_tokens"].as_u64().unwrap() > 0);
    assert!(json_plan.headers_at_ms > 500.0, "when the whole answer is generated");

    let head = |kind: &str| {
        let p = profile(&format!("    line_ending: crlf\n    faults: {{non_sse_kind: {kind}}}\n"));
        let plan = plan_for(&p, &draw(Fault::NonSse, 0)).plan;
        assert!(plan.steps.is_empty());
        assert_eq!(plan.headers_at_ms, 0.0);
        plan.head
    };
    let html = head("html");
    assert_eq!((html.status, html.content_type), (200, Some("text/html; charset=utf-8")));
    let HeadBody::Full(page) = html.body else { panic!() };
    assert!(page.starts_with("<!DOCTYPE html>\r\n") && page.ends_with("</html>\r\n"), "{page}");
    let empty = head("empty");
    assert_eq!((empty.status, empty.content_type, empty.body), (200, Some("text/event-stream"), HeadBody::Empty));
    let none = head("no_content");
    assert_eq!((none.status, none.content_type, none.body), (204, None, HeadBody::Empty));
}

#[test]
fn line_endings_apply_to_every_line() {
    let p = profile("    line_ending: cr\n");
    let plan = plan_for(&p, &draw(Fault::EmptyData, 0)).plan;
    let wire = Wire { line_ending: p.line_ending, split_utf8: false };
    let text = String::from_utf8(body(&plan, wire)).unwrap();
    assert!(!text.contains('\n'));
    assert!(text.ends_with("data: [DONE]\r\r") && text.contains("\rdata:\r\r"), "{text}");
}

#[test]
fn credential_echo_puts_the_key_in_every_logged_field() {
    const KEY: &str = "sk-test-echo-0123456789";
    let echo = Echo { headers: vec!["authorization".into()], values: vec![KEY.into()] };
    let p = profile("    reasoning_tokens: {mean: 4}\n");
    let Planned { plan, .. } = plan_with(&p, &draw(Fault::CredentialEcho, 4), true, Some(&echo));
    assert_eq!(plan.head.request_id, format!("req-{KEY}"));
    let s = &plan.steps;
    let Payload::Lines(role) = &s[0].payload else { panic!() };
    assert_eq!(role[..2], [format!(": {KEY}"), format!("id: {KEY}")]);
    let Payload::Lines(ev) = &s[1].payload else { panic!() };
    assert_eq!((s[1].kind, ev[0].as_str()), (Kind::Echo, format!("event: {KEY}").as_str()));
    // Every chunk's id.
    let chunks: Vec<Value> = s
        .iter()
        .filter(|s| s.kind != Kind::Done)
        .map(|s| match &s.payload {
            Payload::Lines(l) => serde_json::from_str(l.last().unwrap().strip_prefix("data: ").unwrap()).unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(chunks.iter().all(|c| c["id"] == format!("chatcmpl-{KEY}")));
    // The finish chunk's fingerprint: escaped in the bytes, the key once decoded.
    let finish = s.iter().find(|s| s.kind == Kind::Finish).unwrap();
    let raw = data(finish).split("\"system_fingerprint\":").nth(1).unwrap();
    assert!(!raw.contains(KEY) && raw.starts_with("\"\\u0073\\u006b"), "{raw}");
    assert_eq!(json_of(finish)["system_fingerprint"], KEY);
    // Split across two consecutive reasoning deltas and two consecutive answer deltas.
    for (kind, field) in [(Kind::Reasoning, "reasoning_content"), (Kind::Answer, "content")] {
        let texts: Vec<String> = s
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| json_of(s)["choices"][0]["delta"][field].as_str().unwrap().to_string())
            .collect();
        assert!(texts.iter().all(|t| !t.contains(KEY)), "{kind:?}: one delta holds the key");
        assert!(texts.windows(2).any(|w| format!("{}{}", w[0], w[1]).contains(KEY)), "{kind:?}: {texts:?}");
    }
    // The answer text, parsed as JSON, decodes the key from `\u` escapes it contains.
    let answer = content(&plan);
    let parsed: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(parsed["credentials"], KEY);
    assert!(answer.contains("\\u0073\\u006b"));
    // The stream otherwise completes.
    assert_eq!(data(s.last().unwrap()), "[DONE]");
}
