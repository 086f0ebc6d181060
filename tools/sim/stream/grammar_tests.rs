//! Unit tests of the Responses and Messages plans: each stream parses as its grammar (checked
//! by small checkers of each grammar's ordering rules), carries what the chat completions
//! plan of the same draw carries (the same answer and reasoning text at the same times, the
//! same usage), and each fault and dialect produces what it says.
use super::*;
use crate::profile::Profiles;
use crate::wire::{frames, Wire};
use inferbench_sim::answer::{reasoning, tokenize};
use inferbench_stats::rng::SplitMix64;
use std::collections::{BTreeMap, BTreeSet};
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

fn id(api: WireApi) -> &'static str {
    match api {
        WireApi::ChatCompletions => "chatcmpl-p-0",
        WireApi::Responses => "resp_p-0",
        WireApi::Messages => "msg_p-0",
    }
}

/// The plan of one draw on `api`; `usage`: whether the chat stream has its usage chunk.
fn plan_on(api: WireApi, p: &Profile, d: &Draw, usage: bool, echo: Option<&Echo>) -> Plan {
    let answer = match echo {
        Some(e) => e.answer(ANSWER, p.tokens_per_chunk),
        None => tokenize(ANSWER, p.tokens_per_chunk),
    };
    let normal = reasoning(d.reasoning_tokens, p.tokens_per_chunk, false);
    let r = match echo {
        Some(e) => e.reasoning(&normal),
        None => normal,
    };
    let req = Request {
        profile: p,
        draw: d,
        id: id(api),
        answer: &answer,
        reasoning: &r,
        prompt_tokens: 100,
        usage: usage || api != WireApi::ChatCompletions,
        echo,
    };
    plan_for(&req, api)
}

fn plan_of(api: WireApi, p: &Profile, d: &Draw) -> Plan {
    plan_on(api, p, d, true, None)
}

/// One SSE event as a client reads it.
#[derive(Debug, Clone)]
struct Ev {
    kind: Kind,
    at_ms: f64,
    /// The `event:` field, if any.
    name: Option<String>,
    /// The data (`None`: a comment-only event).
    data: Option<String>,
}

impl Ev {
    fn json(&self) -> Value {
        serde_json::from_str(self.data.as_deref().unwrap()).unwrap_or_else(|e| panic!("{e}: {:?}", self.data))
    }

    fn ty(&self) -> String {
        match self.data.as_deref() {
            Some("[DONE]") => "[DONE]".into(),
            Some(_) => self.json()["type"].as_str().unwrap_or("").to_string(),
            None => ":".into(),
        }
    }
}

/// The events of the finite payloads, as an SSE reader splits them.
fn events(plan: &Plan) -> Vec<Ev> {
    let mut out = Vec::new();
    for step in &plan.steps {
        let Payload::Lines(lines) = &step.payload else { continue };
        let mut ev = Ev { kind: step.kind, at_ms: step.at_ms, name: None, data: None };
        for line in lines {
            if let Some(name) = line.strip_prefix("event: ") {
                ev.name = Some(name.to_string());
            } else if let Some(data) = line.strip_prefix("data: ") {
                ev.data = Some(data.to_string());
            }
        }
        out.push(ev);
    }
    out
}

fn types(evs: &[Ev]) -> Vec<String> {
    evs.iter().map(Ev::ty).collect()
}

/// The Responses grammar's ordering rules: the first event is `response.created`; the
/// sequence numbers, when present, are 0, 1, 2…; every item event names an item added and not
/// yet done; text deltas come within an open content part; exactly one terminal event, after
/// which only a `[DONE]` may come; every item done by then, unless the response failed; the
/// `event:` name, when present, is the JSON type.
fn check_responses(evs: &[Ev]) -> Result<(), String> {
    let mut seq = 0;
    let mut open: BTreeSet<String> = BTreeSet::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut parts: BTreeSet<String> = BTreeSet::new();
    let mut terminal = 0;
    let mut failed = false;
    for (i, ev) in evs.iter().enumerate() {
        let Some(data) = &ev.data else { continue };
        if data == "[DONE]" {
            if terminal != 1 {
                return Err(format!("event {i}: [DONE] before the terminal event"));
            }
            continue;
        }
        let v = ev.json();
        let ty = v["type"].as_str().ok_or(format!("event {i}: no type"))?.to_string();
        if i == 0 && ty != "response.created" {
            return Err(format!("the first event is {ty}"));
        }
        if let Some(name) = &ev.name {
            if *name != ty {
                return Err(format!("event {i}: event name {name} for type {ty}"));
            }
        }
        if terminal > 0 {
            return Err(format!("event {i}: {ty} after the terminal event"));
        }
        if let Some(n) = v.get("sequence_number") {
            if n.as_u64() != Some(seq) {
                return Err(format!("event {i}: sequence_number {n}, expected {seq}"));
            }
            seq += 1;
        }
        let item = v["item_id"].as_str().map(str::to_string);
        match ty.as_str() {
            "response.created" | "response.in_progress" => {}
            "response.output_item.added" => {
                let id = v["item"]["id"].as_str().ok_or("an item without id")?.to_string();
                if !open.insert(id.clone()) || done.contains(&id) {
                    return Err(format!("event {i}: item {id} added twice"));
                }
            }
            "response.output_item.done" => {
                let id = v["item"]["id"].as_str().ok_or("an item without id")?.to_string();
                if !open.remove(&id) {
                    return Err(format!("event {i}: item {id} done but not open"));
                }
                done.insert(id);
            }
            "response.completed" | "response.incomplete" => terminal += 1,
            "response.failed" => {
                terminal += 1;
                failed = true;
            }
            "error" => return Err(format!("event {i}: an in-band error")),
            _ => {
                let id = item.ok_or(format!("event {i}: {ty} names no item"))?;
                if !open.contains(&id) {
                    return Err(format!("event {i}: {ty} for item {id}, which is not open"));
                }
                match ty.as_str() {
                    "response.content_part.added" => {
                        parts.insert(id);
                    }
                    "response.content_part.done" => {
                        parts.remove(&id);
                    }
                    "response.output_text.delta" | "response.output_text.done" if !parts.contains(&id) => {
                        return Err(format!("event {i}: {ty} outside a content part"));
                    }
                    _ => {}
                }
            }
        }
    }
    match (terminal, open.is_empty() || failed) {
        (1, true) => Ok(()),
        (1, false) => Err(format!("items still open at the end: {open:?}")),
        (n, _) => Err(format!("{n} terminal events")),
    }
}

/// The Messages grammar's ordering rules: `message_start` first (only `ping` before it) and
/// once; a delta or stop only for a block started and not stopped, a block started once;
/// every block stopped before `message_delta`; `message_delta` then `message_stop`, last;
/// the `event:` name, when present, is the JSON type.
fn check_messages(evs: &[Ev]) -> Result<(), String> {
    let (mut started, mut delta, mut stopped) = (false, false, false);
    let mut blocks: BTreeMap<u64, bool> = BTreeMap::new();
    for (i, ev) in evs.iter().enumerate() {
        if ev.data.is_none() {
            continue;
        }
        let v = ev.json();
        let ty = v["type"].as_str().ok_or(format!("event {i}: no type"))?.to_string();
        if let Some(name) = &ev.name {
            if *name != ty {
                return Err(format!("event {i}: event name {name} for type {ty}"));
            }
        }
        if stopped {
            return Err(format!("event {i}: {ty} after message_stop"));
        }
        if ty != "ping" && ty != "message_start" && !started {
            return Err(format!("event {i}: {ty} before message_start"));
        }
        let index = v["index"].as_u64();
        match ty.as_str() {
            "ping" => {}
            "message_start" if started => return Err(format!("event {i}: a second message_start")),
            "message_start" => started = true,
            "content_block_start" => {
                if delta || blocks.insert(index.ok_or("no index")?, true).is_some() {
                    return Err(format!("event {i}: block {index:?} started twice or after message_delta"));
                }
            }
            "content_block_delta" | "content_block_stop" => {
                let index = index.ok_or("no index")?;
                if blocks.get(&index) != Some(&true) {
                    return Err(format!("event {i}: {ty} for block {index}, which is not open"));
                }
                if ty == "content_block_stop" {
                    blocks.insert(index, false);
                }
            }
            "message_delta" => {
                if blocks.values().any(|open| *open) {
                    return Err(format!("event {i}: message_delta with a block open"));
                }
                delta = true;
            }
            "message_stop" if !delta => return Err(format!("event {i}: message_stop without message_delta")),
            "message_stop" => stopped = true,
            "error" => return Err(format!("event {i}: an in-band error")),
            other => return Err(format!("event {i}: unknown event {other}")),
        }
    }
    if stopped {
        Ok(())
    } else {
        Err("no message_stop".into())
    }
}

/// The answer and the reasoning deltas of a stream, each with its time.
type Texts = (Vec<(f64, String)>, Vec<(f64, String)>);

/// The chat plan's content and reasoning deltas, with their times.
fn chat_texts(plan: &Plan) -> Texts {
    let mut answer = Vec::new();
    let mut reasoning = Vec::new();
    for ev in events(plan) {
        match ev.kind {
            Kind::Answer => {
                answer.push((ev.at_ms, ev.json()["choices"][0]["delta"]["content"].as_str().unwrap().into()))
            }
            Kind::Reasoning => reasoning
                .push((ev.at_ms, ev.json()["choices"][0]["delta"]["reasoning_content"].as_str().unwrap().into())),
            _ => {}
        }
    }
    (answer, reasoning)
}

/// A Responses plan's answer and reasoning deltas, with their times.
fn responses_texts(evs: &[Ev]) -> Texts {
    let mut answer = Vec::new();
    let mut reasoning = Vec::new();
    for ev in evs.iter().filter(|e| e.data.is_some() && e.data.as_deref() != Some("[DONE]")) {
        let v = ev.json();
        let text = || v["delta"].as_str().unwrap().to_string();
        match v["type"].as_str().unwrap() {
            "response.output_text.delta" => answer.push((ev.at_ms, text())),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                reasoning.push((ev.at_ms, text()))
            }
            _ => {}
        }
    }
    (answer, reasoning)
}

fn messages_texts(evs: &[Ev]) -> Texts {
    let mut answer = Vec::new();
    let mut reasoning = Vec::new();
    for ev in evs.iter().filter(|e| e.data.is_some()) {
        let v = ev.json();
        match v["delta"]["type"].as_str() {
            Some("text_delta") => answer.push((ev.at_ms, v["delta"]["text"].as_str().unwrap().into())),
            Some("thinking_delta") => reasoning.push((ev.at_ms, v["delta"]["thinking"].as_str().unwrap().into())),
            _ => {}
        }
    }
    (answer, reasoning)
}

fn joined(parts: &[(f64, String)]) -> String {
    parts.iter().map(|(_, t)| t.as_str()).collect()
}

fn last_json(evs: &[Ev], ty: &str) -> Value {
    evs.iter().rev().find(|e| e.data.is_some() && e.ty() == ty).unwrap_or_else(|| panic!("no {ty}")).json()
}

const REASONING: &str = "    reasoning_tokens: {mean: 10}\n    tokens_per_chunk: 2\n";

#[test]
fn a_normal_responses_stream_follows_the_official_order() {
    let p = profile(REASONING);
    let plan = plan_of(WireApi::Responses, &p, &draw(Fault::None, 10));
    let evs = events(&plan);
    check_responses(&evs).unwrap();
    let n_reasoning = reasoning(10, 2, false).chunks.len();
    let n_answer = tokenize(ANSWER, 2).chunks.len();
    let mut want: Vec<&str> = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.reasoning_summary_part.added",
    ];
    want.extend(std::iter::repeat_n("response.reasoning_summary_text.delta", n_reasoning));
    want.extend([
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
    ]);
    want.extend(std::iter::repeat_n("response.output_text.delta", n_answer));
    want.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(types(&evs), want);
    // Every event is named by its `event:` line and numbered.
    assert!(evs.iter().all(|e| e.name.as_deref() == Some(e.ty().as_str())));
    let seqs: Vec<u64> = evs.iter().map(|e| e.json()["sequence_number"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (0..evs.len() as u64).collect::<Vec<_>>());
    let created = evs[0].json();
    let r = &created["response"];
    assert_eq!(
        (r["id"].as_str(), r["status"].as_str(), r["model"].as_str()),
        (Some("resp_p-0"), Some("in_progress"), Some("m-1"))
    );
    assert!(r["usage"].is_null());
    // The message item is the second output; its events say so.
    let delta = evs.iter().find(|e| e.ty() == "response.output_text.delta").unwrap().json();
    assert_eq!(
        (delta["item_id"].as_str(), delta["output_index"].as_u64(), delta["content_index"].as_u64()),
        (Some("msg_p-0"), Some(1), Some(0))
    );
    let completed = last_json(&evs, "response.completed");
    assert_eq!(completed["response"]["status"], "completed");
    assert_eq!(completed["response"]["output"][1]["content"][0]["text"], ANSWER);
    assert_eq!(completed["response"]["output"][0]["type"], "reasoning");
    // Only the answer deltas are answer events (the client's first token), one per chunk.
    assert_eq!(plan.steps.iter().filter(|s| s.kind == Kind::Answer).count(), n_answer);
    assert_eq!(plan.head.content_type, Some("text/event-stream"));
}

#[test]
fn a_normal_messages_stream_follows_the_official_order() {
    let p = profile(REASONING);
    let plan = plan_of(WireApi::Messages, &p, &draw(Fault::None, 10));
    let evs = events(&plan);
    check_messages(&evs).unwrap();
    let n_reasoning = reasoning(10, 2, false).chunks.len();
    let n_answer = tokenize(ANSWER, 2).chunks.len();
    let mut want: Vec<&str> = vec!["message_start", "ping", "content_block_start"];
    want.extend(std::iter::repeat_n("content_block_delta", n_reasoning + 1));
    want.extend(["content_block_stop", "content_block_start"]);
    want.extend(std::iter::repeat_n("content_block_delta", n_answer));
    want.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(types(&evs), want);
    assert!(evs.iter().all(|e| e.name.as_deref() == Some(e.ty().as_str())));
    let start = evs[0].json();
    assert_eq!((start["message"]["id"].as_str(), start["message"]["model"].as_str()), (Some("msg_p-0"), Some("m-1")));
    assert_eq!(start["message"]["usage"], json!({"input_tokens": 100, "output_tokens": 1}));
    assert_eq!(evs[2].json()["content_block"], json!({"type": "thinking", "thinking": ""}));
    let signature = &evs[3 + n_reasoning].json();
    assert_eq!(signature["delta"]["type"], "signature_delta");
    let text_start = &evs[5 + n_reasoning].json();
    assert_eq!(
        (text_start["index"].as_u64(), &text_start["content_block"]),
        (Some(1), &json!({"type": "text", "text": ""}))
    );
    let delta = last_json(&evs, "message_delta");
    assert_eq!(delta["delta"], json!({"stop_reason": "end_turn", "stop_sequence": null}));
    assert_eq!(plan.steps.iter().filter(|s| s.kind == Kind::Answer).count(), n_answer);
}

#[test]
fn every_api_carries_the_chat_answer_and_reasoning_at_the_same_times() {
    for extra in ["", REASONING, "    reasoning_tokens: {mean: 3}\n    tokens_per_chunk: 3\n"] {
        let p = profile(extra);
        let d = draw(Fault::None, if extra.is_empty() { 0 } else { 7 });
        let (answer, reasoning) = chat_texts(&plan_of(WireApi::ChatCompletions, &p, &d));
        assert_eq!(joined(&answer), ANSWER);
        let r = events(&plan_of(WireApi::Responses, &p, &d));
        let m = events(&plan_of(WireApi::Messages, &p, &d));
        check_responses(&r).unwrap();
        check_messages(&m).unwrap();
        assert_eq!(responses_texts(&r), (answer.clone(), reasoning.clone()), "responses {extra}");
        assert_eq!(messages_texts(&m), (answer.clone(), reasoning.clone()), "messages {extra}");
        // Without reasoning, no reasoning item or thinking block at all.
        if reasoning.is_empty() {
            assert!(!types(&r).iter().any(|t| t.contains("reasoning")));
            assert_eq!(m.iter().filter(|e| e.ty() == "content_block_start").count(), 1);
            assert_eq!(last_json(&r, "response.output_text.delta")["output_index"], 0);
        }
    }
}

#[test]
fn usage_is_the_chat_usage_on_every_api() {
    let p = profile(REASONING);
    for fault in [Fault::None, Fault::ResponseIncomplete] {
        let d = draw(fault, 10);
        let chat = events(&plan_of(WireApi::ChatCompletions, &p, &d));
        let usage = chat.iter().find(|e| e.kind == Kind::Usage).unwrap().json()["usage"].clone();
        let terminal = if fault == Fault::None { "response.completed" } else { "response.incomplete" };
        let r = last_json(&events(&plan_of(WireApi::Responses, &p, &d)), terminal);
        let ru = &r["response"]["usage"];
        assert_eq!(ru["input_tokens"], usage["prompt_tokens"]);
        assert_eq!(ru["input_tokens_details"]["cached_tokens"], 0);
        assert_eq!(ru["output_tokens"], usage["completion_tokens"]);
        assert_eq!(
            ru["output_tokens_details"]["reasoning_tokens"],
            usage["completion_tokens_details"]["reasoning_tokens"]
        );
        assert_eq!(ru["total_tokens"], usage["total_tokens"]);
        let m = events(&plan_of(WireApi::Messages, &p, &d));
        assert_eq!(m[0].json()["message"]["usage"]["input_tokens"], usage["prompt_tokens"]);
        assert_eq!(last_json(&m, "message_delta")["usage"]["output_tokens"], usage["completion_tokens"]);
    }
    // A chat stream without a usage chunk: the other APIs carry usage all the same.
    let d = draw(Fault::None, 10);
    let chat = plan_on(WireApi::ChatCompletions, &p, &d, false, None);
    assert!(!chat.steps.iter().any(|s| s.kind == Kind::Usage));
    let r = last_json(&events(&plan_of(WireApi::Responses, &p, &d)), "response.completed");
    assert!(r["response"]["usage"]["output_tokens"].as_u64().unwrap() > 10);
}

#[test]
fn response_failed_on_each_api() {
    let p = profile(REASONING);
    let d = draw(Fault::ResponseFailed, 10);
    let r = events(&plan_of(WireApi::Responses, &p, &d));
    let last = r.last().unwrap();
    assert_eq!(
        (last.kind, last.ty().as_str(), last.name.as_deref()),
        (Kind::Error, "response.failed", Some("response.failed"))
    );
    let failed = last.json();
    assert_eq!(failed["response"]["status"], "failed");
    assert_eq!(failed["response"]["error"]["code"], "server_error");
    assert!(failed["response"]["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    // It is the terminal event, after some of the answer.
    check_responses(&r).unwrap();
    let deltas = responses_texts(&r).0;
    assert!(!deltas.is_empty() && joined(&deltas) != ANSWER && ANSWER.starts_with(&joined(&deltas)));
    assert_eq!(types(&r).iter().filter(|t| t.starts_with("response.completed")).count(), 0);

    let m = events(&plan_of(WireApi::Messages, &p, &d));
    let last = m.last().unwrap();
    assert_eq!((last.name.as_deref(), last.data.as_deref()), (Some("error"), Some(messages::STREAM_ERROR)));
    assert_eq!(last.json()["error"]["type"], "overloaded_error");
    assert!(!types(&m).contains(&"message_stop".to_string()));

    let c = plan_of(WireApi::ChatCompletions, &p, &d);
    assert_eq!(c.steps.last().unwrap().payload, Payload::data(STREAM_ERROR));
}

/// `check_responses` with the in-band failure allowed as the terminal event.
fn responses_terminal(evs: &[Ev]) -> String {
    evs.iter().rev().find(|e| e.data.as_deref().is_some_and(|d| d != "[DONE]")).unwrap().ty()
}

#[test]
fn response_incomplete_on_each_api() {
    let p = profile(REASONING);
    let d = draw(Fault::ResponseIncomplete, 10);
    let full = tokenize(ANSWER, 2);
    let r = events(&plan_of(WireApi::Responses, &p, &d));
    check_responses(&r).unwrap();
    assert_eq!(responses_terminal(&r), "response.incomplete");
    let inc = last_json(&r, "response.incomplete");
    assert_eq!(inc["response"]["status"], "incomplete");
    assert_eq!(inc["response"]["incomplete_details"], json!({"reason": "max_output_tokens"}));
    let sent = joined(&responses_texts(&r).0);
    assert!(sent.len() < ANSWER.len() && ANSWER.starts_with(&sent), "{sent}");
    let half = full.chunks.len().div_ceil(2);
    assert_eq!(responses_texts(&r).0.len(), half);
    // Usage counts the tokens sent.
    assert_eq!(inc["response"]["usage"]["output_tokens"].as_u64().unwrap() as usize, full.chunks[half - 1].1 + 10);

    let m = events(&plan_of(WireApi::Messages, &p, &d));
    check_messages(&m).unwrap();
    assert_eq!(last_json(&m, "message_delta")["delta"]["stop_reason"], "max_tokens");
    assert_eq!(joined(&messages_texts(&m).0), sent);

    let c = events(&plan_of(WireApi::ChatCompletions, &p, &d));
    let finish = c.iter().find(|e| e.kind == Kind::Finish).unwrap().json();
    assert_eq!(finish["choices"][0]["finish_reason"], "length");
    assert_eq!(c.last().unwrap().data.as_deref(), Some("[DONE]"));
    assert_eq!(joined(&chat_texts(&plan_of(WireApi::ChatCompletions, &p, &d)).0), sent);
}

#[test]
fn cut_after_structure_on_each_api() {
    let p = profile(REASONING);
    let d = draw(Fault::CutAfterStructure, 10);
    let kinds_types = |api| {
        let plan = plan_of(api, &p, &d);
        assert_eq!(plan.steps.last().map(|s| (s.kind, &s.payload)), Some((Kind::End, &Payload::Nothing)));
        types(&events(&plan))
    };
    assert_eq!(kinds_types(WireApi::Responses), ["response.created", "response.in_progress"]);
    assert_eq!(kinds_types(WireApi::Messages), ["message_start", "ping"]);
    let chat = plan_of(WireApi::ChatCompletions, &p, &d);
    assert_eq!(chat.steps.iter().map(|s| s.kind).collect::<Vec<_>>(), [Kind::Role, Kind::End]);
}

#[test]
fn mid_stream_faults_in_each_grammar() {
    let p = profile("    faults: {oversized_bytes: 200000}\n");
    // in_band_error and error_event: each grammar's error event.
    for fault in [Fault::InBandError, Fault::ErrorEvent] {
        let r = events(&plan_of(WireApi::Responses, &p, &draw(fault, 0)));
        let last = r.last().unwrap();
        assert_eq!((last.name.as_deref(), last.ty().as_str()), (Some("error"), "error"));
        let v = last.json();
        assert_eq!(v["code"], "server_error");
        assert_eq!(v["sequence_number"].as_u64().unwrap() as usize, r.len() - 1);
        let m = events(&plan_of(WireApi::Messages, &p, &draw(fault, 0)));
        assert_eq!(m.last().unwrap().data.as_deref(), Some(messages::STREAM_ERROR));
    }
    // truncate: a clean end before any terminal event.
    for api in [WireApi::Responses, WireApi::Messages] {
        let plan = plan_of(api, &p, &draw(Fault::Truncate, 0));
        assert_eq!(plan.steps.last().unwrap().kind, Kind::End);
        let t = types(&events(&plan));
        assert!(!t.iter().any(|t| t == "response.completed" || t == "message_stop"), "{t:?}");
    }
    // malformed: one delta line cut in half, the rest of the stream complete.
    for api in [WireApi::Responses, WireApi::Messages] {
        let evs = events(&plan_of(api, &p, &draw(Fault::Malformed, 0)));
        let bad: Vec<&Ev> = evs.iter().filter(|e| e.kind == Kind::Malformed).collect();
        assert_eq!(bad.len(), 1);
        assert!(serde_json::from_str::<Value>(bad[0].data.as_deref().unwrap()).is_err());
        let good: Vec<Ev> = evs.iter().filter(|e| e.kind != Kind::Malformed).cloned().collect();
        match api {
            WireApi::Responses => {
                assert_eq!(joined(&responses_texts(&good).0), ANSWER);
                assert_eq!(responses_terminal(&good), "response.completed");
            }
            _ => {
                check_messages(&good).unwrap();
                assert_eq!(joined(&messages_texts(&good).0), ANSWER);
            }
        }
    }
    // oversized_line: the delta's data line is exactly oversized_bytes long and valid JSON.
    for (api, ty) in [(WireApi::Responses, "response.output_text.delta"), (WireApi::Messages, "content_block_delta")] {
        let plan = plan_of(api, &p, &draw(Fault::OversizedLine, 0));
        let step = plan.steps.iter().find(|s| s.kind == Kind::Oversized).unwrap();
        let bytes: Vec<u8> = frames(&step.payload, Wire::default()).flat_map(|b| b.to_vec()).collect();
        let text = String::from_utf8(bytes).unwrap();
        let (event, data) = text.split_once('\n').unwrap();
        assert_eq!(event, format!("event: {ty}"));
        assert!(data.ends_with("\n\n"));
        let line = data.trim_end_matches('\n');
        assert_eq!(line.len(), 200_000);
        let v: Value = serde_json::from_str(line.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(v["type"], ty);
        let evs = events(&plan);
        match api {
            // The oversized event has its own sequence number among the others'.
            WireApi::Responses => {
                let mut seqs: Vec<u64> = evs.iter().map(|e| e.json()["sequence_number"].as_u64().unwrap()).collect();
                seqs.push(v["sequence_number"].as_u64().unwrap());
                seqs.sort();
                assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
                assert_eq!(responses_terminal(&evs), "response.completed");
            }
            _ => check_messages(&evs).unwrap(),
        }
    }
    // unterminated_line: the delta's line begins and never ends.
    let plan = plan_of(WireApi::Responses, &p, &draw(Fault::UnterminatedLine, 0));
    let Payload::Unterminated { prefix } = &plan.steps.last().unwrap().payload else { panic!() };
    assert!(
        prefix.starts_with("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\""),
        "{prefix}"
    );
    assert!(prefix.ends_with("\"delta\":\""), "{prefix}");
    let plan = plan_of(WireApi::Messages, &p, &draw(Fault::UnterminatedLine, 0));
    let Payload::Unterminated { prefix } = &plan.steps.last().unwrap().payload else { panic!() };
    assert!(prefix.ends_with(r#""delta":{"type":"text_delta","text":""#), "{prefix}");
}

#[test]
fn stream_end_faults_in_each_grammar() {
    let p = profile("");
    // no_done: no terminal event.
    let r = events(&plan_of(WireApi::Responses, &p, &draw(Fault::NoDone, 0)));
    assert_eq!(r.last().unwrap().ty(), "response.output_item.done");
    let m = events(&plan_of(WireApi::Messages, &p, &draw(Fault::NoDone, 0)));
    assert_eq!(m.last().unwrap().ty(), "message_delta");
    // data_after_done: an answer delta after the terminal event.
    let r = events(&plan_of(WireApi::Responses, &p, &draw(Fault::DataAfterDone, 0)));
    assert_eq!(r[r.len() - 2].ty(), "response.completed");
    assert_eq!((r.last().unwrap().kind, r.last().unwrap().json()["delta"].as_str()), (Kind::Trailing, Some(TRAILING)));
    check_responses(&r).unwrap_err();
    let m = events(&plan_of(WireApi::Messages, &p, &draw(Fault::DataAfterDone, 0)));
    assert_eq!(m[m.len() - 2].ty(), "message_stop");
    assert_eq!(m.last().unwrap().json()["delta"]["text"], TRAILING);
    // done_then_hang: the terminal event, then nothing.
    for api in [WireApi::Responses, WireApi::Messages] {
        let plan = plan_of(api, &p, &draw(Fault::DoneThenHang, 0));
        assert_eq!(plan.steps.last().unwrap().kind, Kind::Hang);
        let evs = events(&plan);
        match api {
            WireApi::Responses => check_responses(&evs).unwrap(),
            _ => check_messages(&evs).unwrap(),
        }
    }
    // disconnect: an abort mid-answer.
    let plan = plan_of(WireApi::Messages, &p, &draw(Fault::Disconnect, 0));
    assert_eq!(plan.steps.last().unwrap().kind, Kind::Abort);
}

#[test]
fn keep_alives_in_each_grammar() {
    let p = profile("    reasoning_tokens: {mean: 4}\n");
    let r = plan_of(WireApi::Responses, &p, &draw(Fault::EmptyData, 4));
    let ka: Vec<&Payload> = r.steps.iter().filter(|s| s.kind == Kind::KeepAlive).map(|s| &s.payload).collect();
    assert!(ka.len() >= 3);
    assert_eq!((ka[0], ka[1]), (&Payload::Lines(vec![":".into()]), &Payload::Lines(vec![": keep-alive".into()])));
    check_responses(&events(&r)).unwrap();
    let m = plan_of(WireApi::Messages, &p, &draw(Fault::EmptyData, 4));
    let ka: Vec<&Step> = m.steps.iter().filter(|s| s.kind == Kind::KeepAlive).collect();
    assert!(ka.len() >= 3);
    assert!(ka
        .iter()
        .all(|s| s.payload == Payload::Lines(vec!["event: ping".into(), r#"data: {"type":"ping"}"#.into()])));
    let evs = events(&m);
    check_messages(&evs).unwrap();
    assert_eq!(joined(&messages_texts(&evs).0), ANSWER);
}

#[test]
fn model_faults_and_non_sse_in_each_grammar() {
    let p = profile("    reasoning_tokens: {mean: 4}\n");
    let r = events(&plan_of(WireApi::Responses, &p, &draw(Fault::WrongModel, 0)));
    assert_eq!(r[0].json()["response"]["model"], "m-1-fp8");
    let m = events(&plan_of(WireApi::Messages, &p, &draw(Fault::NoModel, 0)));
    assert!(m[0].json()["message"].get("model").is_none());
    check_messages(&m).unwrap();

    let plan = plan_of(WireApi::Responses, &p, &draw(Fault::NonSse, 4));
    assert!(plan.steps.is_empty());
    let HeadBody::Full(text) = &plan.head.body else { panic!("{:?}", plan.head) };
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!((v["object"].as_str(), v["status"].as_str()), (Some("response"), Some("completed")));
    assert_eq!(v["output"][1]["content"][0]["text"], ANSWER);
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() > 0);
    let plan = plan_of(WireApi::Messages, &p, &draw(Fault::NonSse, 4));
    let HeadBody::Full(text) = &plan.head.body else { panic!("{:?}", plan.head) };
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!((v["type"].as_str(), v["stop_reason"].as_str()), (Some("message"), Some("end_turn")));
    assert_eq!((v["content"][0]["type"].as_str(), v["content"][1]["text"].as_str()), (Some("thinking"), Some(ANSWER)));
    let p = profile("    faults: {non_sse_kind: no_content}\n");
    let plan = plan_of(WireApi::Messages, &p, &draw(Fault::NonSse, 0));
    assert_eq!((plan.head.status, plan.head.body), (204, HeadBody::Empty));
}

#[test]
fn credential_echo_in_each_grammar() {
    const KEY: &str = "sk-test-echo-0123456789";
    let echo = Echo { headers: vec!["x-api-key".into()], values: vec![KEY.into()] };
    let p = profile("    reasoning_tokens: {mean: 4}\n");
    for api in [WireApi::Responses, WireApi::Messages] {
        let plan = plan_on(api, &p, &draw(Fault::CredentialEcho, 4), true, Some(&echo));
        assert_eq!(plan.head.request_id, format!("req-{KEY}"));
        let Payload::Lines(first) = &plan.steps[0].payload else { panic!() };
        assert_eq!(first[..2], [format!(": {KEY}"), format!("id: {KEY}")]);
        let evs = events(&plan);
        assert!(evs.iter().any(|e| e.kind == Kind::Echo && e.name.as_deref() == Some(KEY)));
        // The ids, the escaped fingerprint, and the split deltas.
        let (answer, reasoning) = match api {
            WireApi::Responses => responses_texts(&evs),
            _ => messages_texts(&evs),
        };
        for deltas in [&answer, &reasoning] {
            assert!(deltas.iter().all(|(_, t)| !t.contains(KEY)));
            assert!(deltas.windows(2).any(|w| format!("{}{}", w[0].1, w[1].1).contains(KEY)), "{api:?}");
        }
        let finish = evs.iter().find(|e| e.kind == Kind::Finish).unwrap();
        let raw = finish.data.as_ref().unwrap().split("\"system_fingerprint\":").nth(1).unwrap();
        assert!(!raw.contains(KEY) && raw.starts_with("\"\\u0073\\u006b"), "{raw}");
        assert_eq!(finish.json()["system_fingerprint"], KEY);
        let start = evs[0].json();
        let id = start["response"]["id"].as_str().or(start["message"]["id"].as_str()).unwrap();
        assert!(id.ends_with(KEY), "{id}");
        // Besides the echo's event (whose name is not its type), the stream parses.
        let named: Vec<Ev> = evs.iter().filter(|e| e.kind != Kind::Echo).cloned().collect();
        match api {
            // (The echo's event took a sequence number.)
            WireApi::Responses => assert_eq!(responses_terminal(&named), "response.completed"),
            _ => check_messages(&named).unwrap(),
        }
    }
}

fn dialect(keys: &str) -> Profile {
    profile(&format!("{REASONING}    dialect: {{{keys}}}\n"))
}

#[test]
fn dialect_no_indices() {
    let p = dialect("no_indices: true");
    let evs = events(&plan_of(WireApi::Responses, &p, &draw(Fault::None, 10)));
    check_responses(&evs).unwrap();
    for e in &evs {
        let v = e.json();
        for key in ["sequence_number", "output_index", "content_index", "summary_index"] {
            assert!(v.get(key).is_none(), "{key} in {v}");
        }
    }
    assert!(evs.iter().any(|e| e.json().get("item_id").is_some()));
    // The official grammar has them.
    let evs = events(&plan_of(WireApi::Responses, &profile(REASONING), &draw(Fault::None, 10)));
    assert!(evs.iter().all(|e| e.json().get("sequence_number").is_some()));
}

#[test]
fn dialect_data_only_and_done_after_terminal() {
    let p = dialect("data_only: true, done_after_terminal: true");
    let plan = plan_of(WireApi::Responses, &p, &draw(Fault::None, 10));
    let evs = events(&plan);
    check_responses(&evs).unwrap();
    assert!(evs.iter().all(|e| e.name.is_none()));
    assert_eq!(evs.last().unwrap().data.as_deref(), Some("[DONE]"));
    assert_eq!(evs[evs.len() - 2].ty(), "response.completed");
    let m = events(&plan_of(WireApi::Messages, &p, &draw(Fault::None, 10)));
    check_messages(&m).unwrap();
    assert!(m.iter().all(|e| e.name.is_none()));
    // done_after_terminal is a Responses dialect: Messages ends with message_stop.
    assert_eq!(m.last().unwrap().ty(), "message_stop");
    // The official grammar has no [DONE].
    let evs = events(&plan_of(WireApi::Responses, &profile(REASONING), &draw(Fault::None, 10)));
    assert!(evs.iter().all(|e| e.data.as_deref() != Some("[DONE]")));
}

#[test]
fn dialect_reasoning_closed_late() {
    let p = dialect("reasoning_closed_late: true");
    let d = draw(Fault::None, 10);
    let m = events(&plan_of(WireApi::Messages, &p, &d));
    check_messages(&m).unwrap();
    let t = types(&m);
    // The text block (index 1) starts while the thinking block (index 0) is open; block 0's
    // signature and stop come after the last text delta, then block 1's stop.
    let starts: Vec<usize> = (0..m.len()).filter(|&i| t[i] == "content_block_start").collect();
    let stops: Vec<(usize, u64)> = (0..m.len())
        .filter(|&i| t[i] == "content_block_stop")
        .map(|i| (i, m[i].json()["index"].as_u64().unwrap()))
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(stops[0].0 > starts[1] && stops[0].1 == 0 && stops[1].1 == 1, "{t:?}");
    let last_text = m.iter().rposition(|e| e.kind == Kind::Answer).unwrap();
    assert_eq!(m[last_text + 1].json()["delta"]["type"], "signature_delta");
    assert_eq!(m[last_text + 1].json()["index"], 0);
    assert_eq!(messages_texts(&m), {
        let (a, r) = chat_texts(&plan_of(WireApi::ChatCompletions, &p, &d));
        (a, r)
    });
    // Responses: the reasoning item's done after the last text delta.
    let r = events(&plan_of(WireApi::Responses, &p, &d));
    check_responses(&r).unwrap();
    let last_text = r.iter().rposition(|e| e.kind == Kind::Answer).unwrap();
    let done = r.iter().position(|e| e.ty() == "response.output_item.done").unwrap();
    assert!(done > last_text);
    assert_eq!(r[done].json()["item"]["type"], "reasoning");
    // The official order closes it first.
    let r = events(&plan_of(WireApi::Responses, &profile(REASONING), &d));
    let first_text = r.iter().position(|e| e.kind == Kind::Answer).unwrap();
    assert!(r.iter().position(|e| e.ty() == "response.output_item.done").unwrap() < first_text);
}

#[test]
fn dialect_usage_at_end_and_no_ping() {
    let p = dialect("usage_at_end: true, no_ping: true");
    let m = events(&plan_of(WireApi::Messages, &p, &draw(Fault::None, 10)));
    check_messages(&m).unwrap();
    assert_eq!(m[0].json()["message"]["usage"], json!({"input_tokens": 0, "output_tokens": 0}));
    assert!(!types(&m).contains(&"ping".to_string()));
    let usage = last_json(&m, "message_delta")["usage"].clone();
    assert_eq!(usage["input_tokens"], 100);
    assert!(usage["output_tokens"].as_u64().unwrap() > 10);
}

#[test]
fn dialect_reasoning_text() {
    let p = dialect("reasoning_text: true");
    let d = draw(Fault::None, 10);
    let r = events(&plan_of(WireApi::Responses, &p, &d));
    check_responses(&r).unwrap();
    let t = types(&r);
    assert!(t.contains(&"response.reasoning_text.delta".to_string()));
    assert!(t.contains(&"response.reasoning_text.done".to_string()));
    assert!(!t.iter().any(|t| t.contains("summary")), "{t:?}");
    let (_, reasoning) = chat_texts(&plan_of(WireApi::ChatCompletions, &p, &d));
    assert_eq!(responses_texts(&r).1, reasoning);
}

#[test]
fn the_checkers_catch_broken_streams() {
    let p = profile(REASONING);
    let d = draw(Fault::None, 10);
    let r = events(&plan_of(WireApi::Responses, &p, &d));
    // Out of order, renumbered, a delta for an item not open, two terminals.
    let mut swapped = r.clone();
    swapped.swap(0, 1);
    assert!(check_responses(&swapped).is_err());
    let without_added: Vec<Ev> = r.iter().filter(|e| e.ty() != "response.output_item.added").cloned().collect();
    assert!(check_responses(&without_added).is_err());
    let mut twice = r.clone();
    twice.push(r.last().unwrap().clone());
    assert!(check_responses(&twice).is_err());
    let m = events(&plan_of(WireApi::Messages, &p, &d));
    let without_start: Vec<Ev> = m.iter().filter(|e| e.ty() != "content_block_start").cloned().collect();
    assert!(check_messages(&without_start).is_err());
    let without_stop: Vec<Ev> = m.iter().filter(|e| e.ty() != "message_stop").cloned().collect();
    assert!(check_messages(&without_stop).is_err());
    let mut late_delta = m.clone();
    let delta = late_delta.iter().position(|e| e.kind == Kind::Answer).unwrap();
    let moved = late_delta.remove(delta);
    late_delta.insert(late_delta.len() - 1, moved);
    assert!(check_messages(&late_delta).is_err());
}

#[test]
fn the_oversized_minimum_covers_every_grammar() {
    let chat = crate::chunk::oversized_line_min_bytes("p", "m");
    let r = crate::chunk::responses::oversized_line_min_bytes("p");
    let m = crate::chunk::messages::oversized_line_min_bytes();
    assert!(m < chat && r > m, "{chat} {r} {m}");
    let e = Profiles::parse(
        &format!(
            "providers:\n  p:\n    model: m\n    ttft_ms: {{median: 1000, p99: 4000}}\n    tokens_per_second: {{median: 100, p05: 40}}\n    faults: {{oversized_bytes: {}}}\n",
            r.max(chat) - 1
        ),
        Path::new("t.yaml"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("oversized_bytes"), "{e}");
}

#[test]
fn the_echo_fingerprint_is_on_the_answer_s_closing_event_in_every_dialect() {
    let echo = Echo { headers: vec!["authorization".into()], values: vec!["sk-fp".into()] };
    for keys in ["no_ping: true", "reasoning_closed_late: true"] {
        let p = dialect(keys);
        for (api, ty) in [(WireApi::Responses, "response.output_text.done"), (WireApi::Messages, "content_block_stop")]
        {
            let evs = events(&plan_on(api, &p, &draw(Fault::CredentialEcho, 10), true, Some(&echo)));
            let carriers: Vec<&Ev> =
                evs.iter().filter(|e| e.data.as_deref().is_some_and(|d| d.contains("system_fingerprint"))).collect();
            assert_eq!(carriers.len(), 1, "{keys} {api:?}");
            assert_eq!((carriers[0].ty(), carriers[0].kind), (ty.to_string(), Kind::Finish), "{keys} {api:?}");
            if api == WireApi::Messages {
                assert_eq!(carriers[0].json()["index"], 1);
            }
        }
    }
}
