//! One request's events after its `request_started`, as `ib-fetch` logs them against a fast
//! simulated provider: the response head, then each server-sent event with its arrival time,
//! then the terminal outcome. A pure function of its inputs and generator.
//!
//! The stream has the shape of ib-sim's (and of the providers it reproduces), in the grammar of
//! the provider's wire API (`crate::wire`): the response opened, the reasoning deltas, the
//! answer deltas, the finish, the usage and the terminal event (on chat completions: a role
//! chunk, the reasoning field's deltas, `content` deltas, `finish_reason`, the usage chunk when
//! the request asked for one, `[DONE]`). A failing request breaks that stream the way its class
//! does on the wire. The terminal outcome of
//! every stream that the events decide is the contract's stream judge's verdict over exactly
//! the events written (as `ib-fetch` reaches it while reading), so `ib-reconstruct`'s replay
//! agrees with the log by construction.
use crate::profiles::Shape;
use crate::shares::Class;
use crate::wire::{Step, Stream, Writer};
use inferbench_contract::event::{ErrorKind, Event, Outcome, RequestTerminal, ResponseHead, SseEvent};
use inferbench_contract::vocab::WireApi;
use inferbench_judge::rules::Rules;
use inferbench_judge::stream::{Judge, StreamEnd};
use inferbench_sim::answer::Chunks;
use inferbench_stats::rng::{normal_quantile, SplitMix64};
use std::collections::BTreeMap;

/// What `ib-fetch` logs when the server drops a chunked body.
pub const BROKEN_BODY: &str =
    "error decoding response body: error reading a body from connection: unexpected EOF during chunk size line";

/// Everything one request's events depend on besides the generator.
pub struct Request<'a> {
    pub request_id: &'a str,
    /// The provider's wire API: the grammar of the stream.
    pub api: WireApi,
    /// The provider's slug and request number: the response id of its events.
    pub slug: &'a str,
    pub counter: u64,
    /// The model id the chunks echo.
    pub model: &'a str,
    pub shape: &'a Shape,
    pub class: Class,
    pub answer: &'a Chunks,
    pub reasoning: &'a Chunks,
    pub prompt_tokens: usize,
    /// Chat completions: whether the request asked for a usage chunk
    /// (`stream_options.include_usage`); the other APIs always carry the usage.
    pub usage: bool,
    pub time_scale: f64,
    /// The spec's deadline: when a timeout ends.
    pub deadline_ns: u64,
}

/// A positive factor around 1 with the given spread (lognormal).
fn jitter(rng: &mut SplitMix64, sigma: f64) -> f64 {
    (sigma * normal_quantile(rng.next_f64())).exp()
}

/// The events after `request_started`, each with its offset in ns from the send.
pub fn plan(req: &Request, rng: &mut SplitMix64) -> Vec<(u64, Event)> {
    let scale = req.time_scale;
    let ttft_ns = (req.shape.ttft_ms * 1e6 * scale * jitter(rng, 0.5)).max(2_000.0);
    let per_token_ns = (1e9 / (req.shape.tokens_per_second * jitter(rng, 0.3))) * scale;
    let head_ns = (ttft_ns * 0.1).max(1_000.0) as u64;
    let cut_at = rng.below_modulo(req.answer.chunks.len().max(1));
    let stall_before_head = rng.below_modulo(2) == 0;
    let stem = format!("{}-{}", req.slug, req.counter);
    let id = match req.api {
        WireApi::ChatCompletions => format!("chatcmpl-{stem}"),
        WireApi::Responses => format!("resp_{stem}"),
        WireApi::Messages => format!("msg_{stem}"),
    };
    let status = match req.class {
        Class::Http429 => 429,
        Class::Http5xx => 503,
        _ => 200,
    };
    let mut out = Vec::new();
    let terminal = |outcome, status: Option<u16>, end: StreamEnd, bytes, done| RequestTerminal {
        request_id: req.request_id.to_string(),
        attempt: 1,
        outcome,
        http_status: status,
        error_type: end.error_type,
        error_message: end.message,
        error_body: end.error_body,
        bytes_received: bytes,
        done_seen: done,
    };
    if req.class == Class::Timeout && stall_before_head {
        let end = deadline_end(req.deadline_ns);
        out.push((req.deadline_ns, Event::RequestTerminal(terminal(Outcome::Timeout, None, end, 0, false))));
        return out;
    }
    let mut headers = BTreeMap::new();
    if status == 200 {
        headers.insert("content-type".to_string(), "text/event-stream".to_string());
        headers.insert("x-request-id".to_string(), id.clone());
    } else {
        headers.insert("content-type".to_string(), "application/json".to_string());
        if status == 429 {
            headers.insert("retry-after".to_string(), "2".to_string());
            headers.insert("x-ratelimit-remaining-requests".to_string(), "0".to_string());
        }
    }
    out.push((
        head_ns,
        Event::ResponseHead(ResponseHead {
            request_id: req.request_id.to_string(),
            attempt: 1,
            status,
            headers,
            http_version: Some("HTTP/1.1".to_string()),
        }),
    ));
    if status != 200 {
        let (kind, message) = if status == 429 {
            ("rate_limit_error", "rate limit reached, retry later")
        } else {
            ("server_error", "the model is overloaded, try again")
        };
        let body = serde_json::json!({"error": {"message": message, "type": kind, "code": status}}).to_string();
        let mut end = StreamEnd::failed(Outcome::HttpError, ErrorKind::HttpStatus, format!("HTTP {status}"));
        let bytes = body.len() as u64;
        end.error_body = Some(body);
        let t = head_ns + 20_000;
        out.push((t, Event::RequestTerminal(terminal(Outcome::HttpError, Some(status), end, bytes, false))));
        return out;
    }

    // The stream as the provider would send it, cut where the class cuts it.
    let mut w = Writer::new(Stream {
        api: req.api,
        stem: &stem,
        model: req.model,
        prompt_tokens: req.prompt_tokens,
        answer_tokens: req.answer.token_count,
        reasoning_tokens: req.reasoning.token_count,
        chat_usage: req.usage,
        chat_reasoning_field: &req.shape.reasoning_field,
    });
    w.step(head_ns + 500, Step::Open);
    let reasoning = &req.reasoning.chunks;
    let (lo, hi) = (ttft_ns * 0.3, ttft_ns * 0.9);
    for (i, (text, _)) in reasoning.iter().enumerate() {
        let at = lo + (hi - lo) * (i as f64 + 0.5) / reasoning.len() as f64;
        w.step((at as u64).max(head_ns + 1_000), Step::Reasoning(text));
    }
    let answer_at = |j: usize, tokens_before: usize| (ttft_ns + per_token_ns * tokens_before as f64) as u64 + j as u64;
    let mut tokens_before = 0;
    let mut last = ttft_ns as u64;
    let answers = &req.answer.chunks;
    let sent_answers = match req.class {
        Class::Timeout | Class::TransportError | Class::InvalidStream | Class::StreamError => cut_at,
        _ => answers.len(),
    };
    for (j, (text, end)) in answers.iter().enumerate().take(sent_answers) {
        last = answer_at(j, tokens_before).max(last);
        w.step(last, Step::Answer(text));
        tokens_before = *end;
    }
    let gap = ((20_000.0 * scale * 1000.0) as u64).clamp(1_000, 200_000);
    match req.class {
        Class::Completed => {
            last += gap;
            w.step(last, Step::Finish);
            last += gap / 4;
            w.step(last, Step::Usage);
            last += gap / 4;
            w.step(last, Step::Terminal);
        }
        Class::InvalidStream => {
            let text = answers.get(cut_at).map(|(t, _)| t.as_str()).unwrap_or("");
            last = answer_at(cut_at, tokens_before).max(last);
            w.step(last, Step::Half(text));
        }
        Class::StreamError => {
            last += gap;
            w.step(last, Step::Error);
        }
        _ => {}
    }

    let mut judge = Judge::on(Rules::Inferbench, req.api);
    let mut bytes = 0u64;
    let mut end = None;
    let mut done = false;
    for (index, sent) in w.sent.into_iter().enumerate() {
        bytes += sent.wire_bytes();
        let payload = judge.payload(sent.event, Some(&sent.data));
        let verdict = judge.observe(index as u32, sent.event, &payload);
        done = sent.data == "[DONE]" && verdict.is_some();
        out.push((
            sent.at,
            Event::SseEvent(SseEvent {
                request_id: req.request_id.to_string(),
                attempt: 1,
                index: index as u32,
                data: Some(sent.data),
                event: sent.event.map(str::to_string),
                id: None,
                retry: None,
                comment: None,
                redacted: false,
            }),
        ));
        last = last.max(sent.at);
        if let Some(v) = verdict {
            end = Some(v);
            break;
        }
    }
    let (t, end) = match req.class {
        Class::Timeout => (req.deadline_ns, deadline_end(req.deadline_ns)),
        Class::TransportError => {
            (last + gap, StreamEnd::failed(Outcome::TransportError, ErrorKind::Body, BROKEN_BODY.to_string()))
        }
        _ => (last + gap / 4, end.unwrap_or_else(|| judge.closed())),
    };
    let outcome = end.outcome;
    out.push((t, Event::RequestTerminal(terminal(outcome, Some(200), end, bytes, done))));
    out
}

fn deadline_end(deadline_ns: u64) -> StreamEnd {
    StreamEnd::failed(
        Outcome::Timeout,
        ErrorKind::Deadline,
        format!("no terminal response within {} ms", deadline_ns / 1_000_000),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_sim::answer;

    fn shape() -> Shape {
        Shape {
            ttft_ms: 500.0,
            tokens_per_second: 100.0,
            reasoning_mean: 8.0,
            reasoning_field: "reasoning".into(),
            tokens_per_chunk: 1,
            accuracy: 1.0,
        }
    }

    fn events(class: Class) -> Vec<(u64, Event)> {
        events_on(WireApi::ChatCompletions, class)
    }

    fn events_on(api: WireApi, class: Class) -> Vec<(u64, Event)> {
        let shape = shape();
        let text = answer::tokenize(r#"{"category":"bug","priority":"p1"}"#, 1);
        let thought = answer::reasoning(8, 1, false);
        let req = Request {
            request_id: "req-1",
            api,
            slug: "p",
            counter: 0,
            model: "m",
            shape: &shape,
            class,
            answer: &text,
            reasoning: &thought,
            prompt_tokens: 100,
            usage: true,
            time_scale: 0.001,
            deadline_ns: 20_000_000_000,
        };
        plan(&req, &mut SplitMix64::new(3))
    }

    fn terminal(events: &[(u64, Event)]) -> &RequestTerminal {
        match &events.last().unwrap().1 {
            Event::RequestTerminal(t) => t,
            other => panic!("{other:?}"),
        }
    }

    fn data(events: &[(u64, Event)]) -> Vec<&str> {
        events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::SseEvent(s) => s.data.as_deref(),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_completed_stream_has_reasoning_answer_finish_usage_and_done() {
        let ev = events(Class::Completed);
        let t = terminal(&ev);
        assert_eq!((t.outcome, t.http_status, t.done_seen), (Outcome::Completed, Some(200), true));
        let d = data(&ev);
        assert!(d[0].contains(r#""role":"assistant""#));
        assert!(d[1].contains(r#""reasoning":"The""#), "{}", d[1]);
        assert_eq!(d.iter().filter(|x| x.contains(r#""reasoning":"#)).count(), 8);
        let answer: String = d
            .iter()
            .filter_map(|x| serde_json::from_str::<serde_json::Value>(x).ok())
            .filter_map(|v| v.pointer("/choices/0/delta/content").and_then(|c| c.as_str()).map(str::to_string))
            .collect();
        assert_eq!(answer, r#"{"category":"bug","priority":"p1"}"#);
        assert!(d[d.len() - 3].contains(r#""finish_reason":"stop""#));
        assert!(d[d.len() - 2].contains(r#""usage":{"prompt_tokens":100"#));
        assert_eq!(d[d.len() - 1], "[DONE]");
        // Times never go back, and every event is the same request's.
        assert!(ev.windows(2).all(|w| w[0].0 <= w[1].0), "{:?}", ev.iter().map(|e| e.0).collect::<Vec<_>>());
    }

    #[test]
    fn each_failure_class_ends_as_the_judge_and_the_client_see_it() {
        let cases = [
            (Class::Http429, Outcome::HttpError, Some(ErrorKind::HttpStatus)),
            (Class::Http5xx, Outcome::HttpError, Some(ErrorKind::HttpStatus)),
            (Class::TransportError, Outcome::TransportError, Some(ErrorKind::Body)),
            (Class::InvalidStream, Outcome::InvalidStream, Some(ErrorKind::InvalidSse)),
            (Class::Truncated, Outcome::Truncated, Some(ErrorKind::NoDoneOrFinish)),
            (Class::StreamError, Outcome::StreamError, Some(ErrorKind::InBandError)),
            (Class::Timeout, Outcome::Timeout, Some(ErrorKind::Deadline)),
        ];
        for (class, outcome, kind) in cases {
            let ev = events(class);
            let t = terminal(&ev);
            assert_eq!((t.outcome, t.error_type), (outcome, kind), "{class:?}");
            assert!(!t.done_seen);
            let status = match class {
                Class::Http429 => Some(429),
                Class::Http5xx => Some(503),
                Class::Timeout => t.http_status,
                _ => Some(200),
            };
            assert_eq!(t.http_status, status, "{class:?}");
            if class == Class::Timeout {
                assert_eq!(ev.last().unwrap().0, 20_000_000_000);
            }
            assert!(!data(&ev).contains(&"[DONE]"), "{class:?}");
        }
        let head = events(Class::Http429);
        let Event::ResponseHead(h) = &head[0].1 else { panic!() };
        assert_eq!(h.headers["retry-after"], "2");
    }

    /// What the contract's reader of `api` takes from each event: its fields, and whether
    /// the whole stream is its grammar (every data line reads as an object, or is `[DONE]`).
    fn read_on(api: WireApi, ev: &[(u64, Event)]) -> Vec<inferbench_contract::chunk::ChunkFields> {
        ev.iter()
            .filter_map(|(_, e)| match e {
                Event::SseEvent(s) => Some(s),
                _ => None,
            })
            .filter(|s| s.data.as_deref() != Some("[DONE]"))
            .map(|s| {
                let chunk =
                    inferbench_contract::chunk::Chunk::read_on(api, s.event.as_deref(), s.data.as_deref().unwrap());
                chunk.unwrap_or_else(|_| panic!("{api}: not JSON: {:?}", s.data)).expect("an object").fields
            })
            .collect()
    }

    #[test]
    fn a_completed_stream_on_every_api_carries_the_same_answer_reasoning_and_usage() {
        for &api in WireApi::ALL {
            let ev = events_on(api, Class::Completed);
            let t = terminal(&ev);
            assert_eq!((t.outcome, t.http_status, t.error_type), (Outcome::Completed, Some(200), None), "{api}");
            assert_eq!(t.done_seen, api.is_chat_completions(), "{api}: [DONE] ends chat streams only");
            let fields = read_on(api, &ev);
            let answer: String = fields.iter().map(|f| f.answer.as_str()).collect();
            assert_eq!(answer, r#"{"category":"bug","priority":"p1"}"#, "{api}");
            let reasoning: Vec<&str> = fields.iter().map(|f| f.reasoning.as_str()).filter(|r| !r.is_empty()).collect();
            assert_eq!(reasoning.len(), 8, "{api}: one event per reasoning token");
            assert!(fields.iter().any(|f| f.usage.prompt_tokens == Some(100)), "{api}: the prompt's tokens");
            // The first answer byte comes after every reasoning byte, and the bytes counted are
            // the events' own.
            let first_answer = fields.iter().position(|f| !f.answer.is_empty()).unwrap();
            let last_reasoning = fields.iter().rposition(|f| !f.reasoning.is_empty()).unwrap();
            assert!(last_reasoning < first_answer, "{api}");
            let wire: u64 = ev
                .iter()
                .filter_map(|(_, e)| match e {
                    Event::SseEvent(s) => Some(
                        s.event.as_ref().map_or(0, |n| "event: \n".len() + n.len())
                            + "data: \n\n".len()
                            + s.data.as_ref().unwrap().len(),
                    ),
                    _ => None,
                })
                .sum::<usize>() as u64;
            assert_eq!(t.bytes_received, wire, "{api}");
            assert!(ev.windows(2).all(|w| w[0].0 <= w[1].0), "{api}: times never go back");
        }
        let responses = events_on(WireApi::Responses, Class::Completed);
        let names: Vec<&str> = responses
            .iter()
            .filter_map(|(_, e)| match e {
                Event::SseEvent(s) => s.event.as_deref(),
                _ => None,
            })
            .collect();
        assert_eq!(&names[..2], ["response.created", "response.in_progress"]);
        assert_eq!(names.last(), Some(&"response.completed"));
        let messages = events_on(WireApi::Messages, Class::Completed);
        let Event::SseEvent(first) = &messages[1].1 else { panic!() };
        assert_eq!(first.event.as_deref(), Some("message_start"));
    }

    #[test]
    fn each_failure_class_on_every_api_ends_in_the_class_its_grammar_gives_it() {
        for &api in &[WireApi::Responses, WireApi::Messages] {
            let cases = [
                (Class::Http429, Outcome::HttpError, ErrorKind::HttpStatus),
                (Class::TransportError, Outcome::TransportError, ErrorKind::Body),
                (Class::InvalidStream, Outcome::InvalidStream, ErrorKind::InvalidSse),
                (Class::Truncated, Outcome::Truncated, ErrorKind::NoTerminalEvent),
                (Class::StreamError, Outcome::StreamError, ErrorKind::ErrorEvent),
                (Class::Timeout, Outcome::Timeout, ErrorKind::Deadline),
            ];
            for (class, outcome, kind) in cases {
                let ev = events_on(api, class);
                let t = terminal(&ev);
                assert_eq!((t.outcome, t.error_type), (outcome, Some(kind)), "{api} {class:?}");
                let terminal_event = if api == WireApi::Responses { "response.completed" } else { "message_stop" };
                let sent_terminal = ev
                    .iter()
                    .any(|(_, e)| matches!(e, Event::SseEvent(s) if s.event.as_deref() == Some(terminal_event)));
                assert!(!sent_terminal, "{api} {class:?}: a failing stream never ends well");
            }
        }
    }
}
