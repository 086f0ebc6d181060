//! The SSE stream of one request: first planned as a pure list of timed events (so timing and
//! fault placement are unit-testable without a network), then played against the clock.
use crate::answer::Chunks;
use crate::draw::Draw;
use crate::profile::{Fault, Profile};
use axum::body::Bytes;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Role,
    Reasoning,
    Answer,
    /// An event whose data is not JSON.
    Malformed,
    Finish,
    Usage,
    Done,
    /// Drop the connection without ending the body.
    Abort,
}

/// One event: when (profile-time ms from receipt), what, and its `data:` payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub at_ms: f64,
    pub kind: Kind,
    pub data: String,
}

impl Step {
    pub fn frame(&self) -> Bytes {
        Bytes::from(format!("data: {}\n\n", self.data))
    }
}

/// Everything the plan depends on besides the draw.
pub struct Request<'a> {
    pub profile: &'a Profile,
    pub draw: &'a Draw,
    /// `chatcmpl-…`, the same in every chunk.
    pub id: &'a str,
    pub answer: &'a Chunks,
    pub reasoning: &'a Chunks,
    pub prompt_tokens: usize,
    /// Whether the stream ends with a usage chunk.
    pub usage: bool,
}

/// The model id a `wrong_model` fault echoes: a plausible deployment mix-up.
pub fn wrong_model(model: &str) -> String {
    format!("{model}-fp8")
}

/// When headers go out (profile ms from receipt): at once, unless the request stalls first.
pub fn headers_at_ms(profile: &Profile, draw: &Draw) -> f64 {
    if draw.fault == Fault::StallBefore {
        profile.faults.stall_before_ms
    } else {
        0.0
    }
}

/// When an event goes out and which chunk it carries: the timing of a response without its
/// wire format (the calibration simulates thousands of runs with it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    pub at_ms: f64,
    pub kind: Kind,
    /// The reasoning or answer chunk (for `Malformed`: the answer chunk it garbles).
    pub index: usize,
}

/// The event times of a response with `reasoning_chunks` reasoning chunks and answer chunks
/// ending at the given token indices (exclusive); `usage`: whether a usage chunk follows the
/// finish.
///
/// Answer chunk 0 goes out at TTFT; chunk c > 0 when its last token is generated, at
/// TTFT + (last token index) / rate. The client therefore measures exactly the drawn rate,
/// (N - 1) / (t_last - t_first), and E2E = TTFT + (N - 1) / rate. Reasoning is spread evenly
/// over the profile's fraction window of the TTFT. Mid-stream faults strike after the first
/// half of the answer chunks (at least one).
pub fn schedule(
    profile: &Profile,
    draw: &Draw,
    reasoning_chunks: usize,
    answer_ends: &[usize],
    usage: bool,
) -> Vec<Slot> {
    let slot = |at_ms, kind, index| Slot { at_ms, kind, index };
    let t0 = headers_at_ms(profile, draw);
    let ttft = draw.ttft_ms;
    let mut slots = vec![slot(t0, Kind::Role, 0)];
    let (start, end) = (profile.reasoning.start_fraction, profile.reasoning.end_fraction);
    for j in 0..reasoning_chunks {
        let frac =
            if reasoning_chunks > 1 { start + (end - start) * j as f64 / (reasoning_chunks - 1) as f64 } else { start };
        slots.push(slot(t0 + ttft * frac, Kind::Reasoning, j));
    }
    let per_token_ms = 1000.0 / draw.tokens_per_second;
    let n = answer_ends.len();
    let mid = n.div_ceil(2).max(1);
    let mut shift = 0.0;
    let mut last_base = t0 + ttft;
    for (c, end) in answer_ends.iter().enumerate() {
        let base = t0 + ttft + if c == 0 { 0.0 } else { (*end - 1) as f64 * per_token_ms };
        let at = base + shift;
        if c == mid {
            match draw.fault {
                Fault::Disconnect => {
                    slots.push(slot(at, Kind::Abort, c));
                    return slots;
                }
                Fault::Malformed => slots.push(slot(at, Kind::Malformed, c)),
                _ => {}
            }
        }
        slots.push(slot(at, Kind::Answer, c));
        last_base = base;
        if c + 1 == mid && draw.fault == Fault::StallDuring {
            shift = profile.faults.stall_during_ms;
        }
    }
    let end_at = last_base + shift;
    // A one-chunk answer has no middle: its mid-stream fault strikes before the finish.
    if n <= 1 {
        match draw.fault {
            Fault::Disconnect => {
                slots.push(slot(end_at, Kind::Abort, 0));
                return slots;
            }
            Fault::Malformed => slots.push(slot(end_at, Kind::Malformed, 0)),
            _ => {}
        }
    }
    slots.push(slot(end_at, Kind::Finish, 0));
    if usage {
        slots.push(slot(end_at, Kind::Usage, 0));
    }
    if draw.fault != Fault::NoDone {
        slots.push(slot(end_at, Kind::Done, 0));
    }
    slots
}

/// The timed events of a streamed response: [`schedule`] in the OpenAI chunk format.
pub fn plan(req: &Request) -> Vec<Step> {
    let (profile, draw) = (req.profile, req.draw);
    let model = if draw.fault == Fault::WrongModel { wrong_model(&profile.model) } else { profile.model.clone() };
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": req.id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
        .to_string()
    };
    let answer = |i: usize| req.answer.chunks.get(i).map(|(t, _)| t.as_str()).unwrap_or("");
    let ends: Vec<usize> = req.answer.chunks.iter().map(|(_, end)| *end).collect();
    schedule(profile, draw, req.reasoning.chunks.len(), &ends, req.usage)
        .into_iter()
        .map(|slot| {
            let data = match slot.kind {
                Kind::Role => chunk(json!({"role": "assistant", "content": ""}), None),
                Kind::Reasoning => {
                    let mut delta = serde_json::Map::new();
                    delta.insert(
                        profile.reasoning_field.clone(),
                        Value::from(req.reasoning.chunks[slot.index].0.as_str()),
                    );
                    chunk(Value::Object(delta), None)
                }
                Kind::Answer => chunk(json!({"content": answer(slot.index)}), None),
                // A chunk cut short: what a proxy that truncates frames produces.
                Kind::Malformed => first_half(&chunk(json!({"content": answer(slot.index)}), None)).to_string(),
                Kind::Finish => chunk(json!({}), Some("stop")),
                Kind::Usage => {
                    let completion = req.answer.token_count + req.reasoning.token_count;
                    json!({
                        "id": req.id,
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": model,
                        "choices": [],
                        "usage": {
                            "prompt_tokens": req.prompt_tokens,
                            "completion_tokens": completion,
                            "total_tokens": req.prompt_tokens + completion,
                            "completion_tokens_details": {"reasoning_tokens": req.reasoning.token_count},
                        },
                    })
                    .to_string()
                }
                Kind::Done => "[DONE]".into(),
                Kind::Abort => String::new(),
            };
            Step { at_ms: slot.at_ms, kind: slot.kind, data }
        })
        .collect()
}

/// The first half of `s`, cut on a character boundary.
fn first_half(s: &str) -> &str {
    let mut cut = s.len() / 2;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

/// How a played stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Every planned event was handed to the connection.
    Completed,
    /// The connection was dropped on purpose (`disconnect` fault).
    Aborted,
    /// The client went away (e.g. its timeout) before the headers.
    ClientGoneBeforeHeaders,
    /// The client went away mid-stream.
    ClientGone,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Played {
    pub ending: Ending,
    /// Real ms from receipt at which each answer event was handed to the connection.
    pub answer_offsets_ms: Vec<f64>,
    pub events_sent: usize,
}

pub type Frame = Result<Bytes, std::io::Error>;

/// Plays `steps` against the clock: releases the headers at `headers_at_ms`, then sends each
/// event as its own body frame at its time (profile ms × `time_scale` after `received`).
/// Runs in its own task so its outcome is logged even when the client leaves early.
///
/// tokio's timer has millisecond granularity, so an event goes out up to about 1 ms after
/// its planned time (never before); the offsets returned are the actual send times, which
/// is what the log records.
pub async fn play(
    steps: Vec<Step>,
    headers_at_ms: f64,
    received: Instant,
    time_scale: f64,
    mut headers: oneshot::Sender<()>,
    body: mpsc::Sender<Frame>,
) -> Played {
    let at = |ms: f64| received + Duration::from_secs_f64((ms * time_scale / 1000.0).max(0.0));
    let mut played = Played { ending: Ending::Completed, answer_offsets_ms: Vec::new(), events_sent: 0 };
    // Waits also end when the client leaves (e.g. its timeout during a stall), so the log
    // line is written then, not 25 s later or never (if the simulator is stopped first).
    tokio::select! {
        _ = tokio::time::sleep_until(at(headers_at_ms)) => {}
        _ = headers.closed() => {}
    }
    if headers.send(()).is_err() {
        played.ending = Ending::ClientGoneBeforeHeaders;
        return played;
    }
    for step in steps {
        tokio::select! {
            _ = tokio::time::sleep_until(at(step.at_ms)) => {}
            _ = body.closed() => {
                played.ending = Ending::ClientGone;
                return played;
            }
        }
        if step.kind == Kind::Abort {
            // An error from the body stream makes hyper drop the connection without the
            // final chunk, which the client sees as a truncated response.
            let _ = body.send(Err(std::io::Error::other("simulated disconnect"))).await;
            played.ending = Ending::Aborted;
            return played;
        }
        let sent_at = Instant::now();
        if body.send(Ok(step.frame())).await.is_err() {
            played.ending = Ending::ClientGone;
            return played;
        }
        played.events_sent += 1;
        if step.kind == Kind::Answer {
            played.answer_offsets_ms.push(sent_at.duration_since(received).as_secs_f64() * 1000.0);
        }
    }
    played
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::{reasoning, tokenize};
    use crate::profile::Profiles;
    use crate::rng::SplitMix64;
    use std::path::Path;

    fn profile(extra: &str) -> Profile {
        let text = format!(
            "providers:\n  p:\n    model: m-1\n    ttft_ms: {{median: 1000, p99: 4000}}\n    tokens_per_second: {{median: 100, p05: 40}}\n{extra}"
        );
        Profiles::parse(&text, Path::new("t.yaml")).unwrap().providers["p"].clone()
    }

    fn draw(fault: Fault, reasoning_tokens: usize) -> Draw {
        Draw {
            fault,
            correct: true,
            ttft_ms: 500.0,
            tokens_per_second: 50.0,
            reasoning_tokens,
            rng: SplitMix64::new(0),
        }
    }

    const ANSWER: &str = r#"{"category":"customer_support","priority":"p2"}"#;

    fn plan_for(p: &Profile, d: &Draw) -> (Vec<Step>, Chunks) {
        let answer = tokenize(ANSWER, p.tokens_per_chunk);
        let r = reasoning(d.reasoning_tokens, p.tokens_per_chunk);
        let steps = plan(&Request {
            profile: p,
            draw: d,
            id: "chatcmpl-p-0",
            answer: &answer,
            reasoning: &r,
            prompt_tokens: 100,
            usage: true,
        });
        (steps, answer)
    }

    fn kinds(steps: &[Step]) -> Vec<Kind> {
        let mut k: Vec<Kind> = steps.iter().map(|s| s.kind).collect();
        k.dedup();
        k
    }

    #[test]
    fn clean_stream_sequence_and_timing() {
        let p = profile("    reasoning_tokens: {mean: 10}\n    tokens_per_chunk: 2\n");
        let d = draw(Fault::None, 10);
        let (steps, answer) = plan_for(&p, &d);
        assert_eq!(kinds(&steps), [Kind::Role, Kind::Reasoning, Kind::Answer, Kind::Finish, Kind::Usage, Kind::Done]);
        let answers: Vec<&Step> = steps.iter().filter(|s| s.kind == Kind::Answer).collect();
        assert_eq!(answers[0].at_ms, 500.0);
        let n = answer.token_count as f64;
        let last = answers.last().unwrap().at_ms;
        assert!((last - (500.0 + (n - 1.0) * 20.0)).abs() < 1e-9);
        // The client's measured speed is the drawn rate.
        assert!(((n - 1.0) / ((last - 500.0) / 1000.0) - 50.0).abs() < 1e-9);
        // Reasoning sits inside the TTFT window.
        let r: Vec<f64> = steps.iter().filter(|s| s.kind == Kind::Reasoning).map(|s| s.at_ms).collect();
        assert_eq!(r[0], 150.0);
        assert!((r.last().unwrap() - 450.0).abs() < 1e-9);
        // The content reassembles; every event is a chunk with id, object, model.
        let mut text = String::new();
        for s in &steps[..steps.len() - 1] {
            let v: Value = serde_json::from_str(&s.data).unwrap();
            assert_eq!(
                (v["id"].as_str(), v["object"].as_str(), v["model"].as_str()),
                (Some("chatcmpl-p-0"), Some("chat.completion.chunk"), Some("m-1"))
            );
            if let Some(c) = v["choices"][0]["delta"]["content"].as_str() {
                text.push_str(c);
            }
        }
        assert_eq!(text, ANSWER);
        let usage: Value = serde_json::from_str(&steps[steps.len() - 2].data).unwrap();
        assert_eq!(usage["usage"]["completion_tokens"], answer.token_count + 10);
        assert_eq!(steps.last().unwrap().data, "[DONE]");
        let finish: Value = serde_json::from_str(&steps[steps.len() - 3].data).unwrap();
        assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn reasoning_field_is_configurable() {
        let p = profile("    reasoning_field: reasoning\n");
        let (steps, _) = plan_for(&p, &draw(Fault::None, 3));
        let v: Value = serde_json::from_str(&steps[1].data).unwrap();
        assert!(v["choices"][0]["delta"]["reasoning"].is_string());
        assert!(v["choices"][0]["delta"].get("reasoning_content").is_none());
    }

    #[test]
    fn faults_shape_the_stream() {
        let p = profile("    faults: {stall_before_ms: 25000, stall_during_ms: 3000}\n");
        let (clean, _) = plan_for(&p, &draw(Fault::None, 0));

        let (s, _) = plan_for(&p, &draw(Fault::StallBefore, 0));
        assert_eq!(headers_at_ms(&p, &draw(Fault::StallBefore, 0)), 25_000.0);
        assert_eq!(s[1].at_ms, 25_500.0);

        let (s, _) = plan_for(&p, &draw(Fault::StallDuring, 0));
        assert_eq!(s.len(), clean.len());
        assert_eq!(s.last().unwrap().at_ms, clean.last().unwrap().at_ms + 3000.0);
        assert_eq!(s[1].at_ms, clean[1].at_ms);

        let (s, _) = plan_for(&p, &draw(Fault::Disconnect, 0));
        assert_eq!(s.last().unwrap().kind, Kind::Abort);
        assert!(!s.iter().any(|s| s.kind == Kind::Done || s.kind == Kind::Finish));
        assert!(s.iter().any(|s| s.kind == Kind::Answer));

        let (s, _) = plan_for(&p, &draw(Fault::Malformed, 0));
        let bad: Vec<&Step> = s.iter().filter(|s| s.kind == Kind::Malformed).collect();
        assert_eq!(bad.len(), 1);
        assert!(serde_json::from_str::<Value>(&bad[0].data).is_err());

        let (s, _) = plan_for(&p, &draw(Fault::NoDone, 0));
        assert_eq!(s.last().unwrap().kind, Kind::Usage);

        let (s, _) = plan_for(&p, &draw(Fault::WrongModel, 0));
        let v: Value = serde_json::from_str(&s[1].data).unwrap();
        assert_eq!(v["model"], "m-1-fp8");
    }

    #[test]
    fn malformed_events_cut_on_a_character_boundary() {
        assert_eq!(first_half("abcd"), "ab");
        // Byte 3 is inside "é" (bytes 2..4): the cut moves back to 2.
        assert_eq!(first_half("abéxy"), "ab");
        assert_eq!(first_half("東京"), "東");
    }

    #[test]
    fn one_chunk_answers_still_get_their_fault() {
        let p = profile("    tokens_per_chunk: 100\n");
        let (s, answer) = plan_for(&p, &draw(Fault::Disconnect, 0));
        assert_eq!(answer.chunks.len(), 1);
        assert_eq!(kinds(&s), [Kind::Role, Kind::Answer, Kind::Abort]);
        let (s, _) = plan_for(&p, &draw(Fault::Malformed, 0));
        assert_eq!(kinds(&s), [Kind::Role, Kind::Answer, Kind::Malformed, Kind::Finish, Kind::Usage, Kind::Done]);
    }

    #[test]
    fn usage_only_when_asked() {
        let p = profile("");
        let d = draw(Fault::None, 0);
        let asked = schedule(&p, &d, 0, &[2, 4, 6], true);
        let not = schedule(&p, &d, 0, &[2, 4, 6], false);
        assert_eq!(asked.iter().filter(|s| s.kind == Kind::Usage).count(), 1);
        assert_eq!(not.iter().filter(|s| s.kind == Kind::Usage).count(), 0);
        assert_eq!(not.last().unwrap().kind, Kind::Done);
    }

    #[tokio::test]
    async fn play_sends_frames_on_time() {
        let p = profile("");
        let d = draw(Fault::None, 0);
        let (steps, answer) = plan_for(&p, &d);
        let (htx, hrx) = oneshot::channel();
        let (btx, mut brx) = mpsc::channel(4);
        let received = Instant::now();
        // time_scale 0.05: the first answer 25 ms after receipt.
        let task = tokio::spawn(play(steps.clone(), 0.0, received, 0.05, htx, btx));
        hrx.await.unwrap();
        let mut frames = Vec::new();
        while let Some(f) = brx.recv().await {
            frames.push((f.unwrap(), received.elapsed()));
        }
        let played = task.await.unwrap();
        assert_eq!(played.ending, Ending::Completed);
        assert_eq!(frames.len(), steps.len());
        assert_eq!(played.answer_offsets_ms.len(), answer.chunks.len());
        let first = played.answer_offsets_ms[0];
        assert!((25.0..60.0).contains(&first), "{:?}", played.answer_offsets_ms);
        // No reasoning in this draw: frame 0 is the role chunk, frame 1 the first answer.
        assert_eq!(steps[1].kind, Kind::Answer);
        assert!(frames[1].1 >= Duration::from_millis(25), "{:?}", frames[1].1);
        assert_eq!(frames.last().unwrap().0, Bytes::from("data: [DONE]\n\n"));
    }

    #[tokio::test]
    async fn play_notices_a_client_that_left() {
        let p = profile("");
        let (steps, _) = plan_for(&p, &draw(Fault::None, 0));
        let (htx, hrx) = oneshot::channel();
        let (btx, brx) = mpsc::channel(1);
        drop(hrx);
        let played = play(steps.clone(), 0.0, Instant::now(), 0.001, htx, btx).await;
        assert_eq!(played.ending, Ending::ClientGoneBeforeHeaders);
        drop(brx);

        let (htx, _hrx) = oneshot::channel();
        let (btx, brx) = mpsc::channel(1);
        drop(brx);
        let played = play(steps.clone(), 0.0, Instant::now(), 0.001, htx, btx).await;
        assert_eq!(played.ending, Ending::ClientGone);

        // A client that leaves during a 25 s stall is noticed when it leaves.
        let (htx, hrx) = oneshot::channel();
        let (btx, _brx) = mpsc::channel(1);
        let started = Instant::now();
        let task = tokio::spawn(play(steps, 25_000.0, started, 1.0, htx, btx));
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(hrx);
        assert_eq!(task.await.unwrap().ending, Ending::ClientGoneBeforeHeaders);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
