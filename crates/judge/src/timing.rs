//! The one timing function: logged SSE events of one request attempt in, its judged outcome
//! and TTFO, TTFA, last answer token, E2E, pre-answer reasoning tokens, visible answer tokens
//! and tokens/s out.
//!
//! Definitions (reference runner §5.5 and §8.1, fixed where its §12.2 lists bugs):
//! - offsets are milliseconds from the actual send of the request to the arrival of the
//!   bytes that completed an event;
//! - the events are judged by [`crate::stream::Judge`]: only the events up to the one that
//!   ended the stream (`[DONE]`, an in-band error, invalid data) count; what follows was
//!   logged but never joins the answer;
//! - answer text is `choices[0].delta.content`; reasoning text is the first non-empty of
//!   `delta.reasoning_content`, `delta.reasoning`, `delta.reasoning_details` (a string, or a
//!   list of strings / objects with `text` or `content`);
//! - TTFA: first event whose answer delta is non-empty (with o200k_base every non-empty string
//!   is at least one token, so "cumulative count reaches 1" is "first non-empty delta");
//! - TTFO: first event with non-empty reasoning or answer, reported only when TTFA exists;
//! - pre-answer reasoning tokens: tokens of the reasoning received up to and including the
//!   first answer-bearing event; null without TTFA;
//! - E2E: the last non-empty answer delta's offset, only for complete requests (a `completed`
//!   2xx stream with a non-empty answer);
//! - tokens/s: (N − 1) / ((last − first) / 1000) over the visible answer's N tokens, only for
//!   complete requests with N ≥ 2 and last > first. Reasoning tokens are excluded.
//!
//! Role-only, empty, usage-only and finish-only chunks, comments and `[DONE]` never start a
//! clock. The function is pure: the same events always give the same figures.
use crate::rules::Rules;
use crate::stream::{Judge, Payload, StreamEnd};
use crate::tokenizer;
use inferbench_contract::chunk::Chunk;
use inferbench_contract::event::{RequestTerminal, SseEvent};
use inferbench_contract::vocab::{ErrorKind, Outcome, WireApi};

/// One logged event of an attempt, as the timing function needs it.
#[derive(Debug, Clone, Copy)]
pub struct TimedEvent<'a> {
    /// Milliseconds from the actual send to the arrival of the bytes that completed the event.
    pub offset_ms: f64,
    /// The event's `data` field; `None` for a comment or an event without data.
    pub data: Option<&'a str>,
    /// The event's `event` field (its type), if any.
    pub event: Option<&'a str>,
    /// A comment line, not a dispatched event.
    pub comment: bool,
}

impl<'a> TimedEvent<'a> {
    /// A dispatched event with only a `data` field.
    pub fn data(offset_ms: f64, data: &'a str) -> TimedEvent<'a> {
        TimedEvent { offset_ms, data: Some(data), event: None, comment: false }
    }

    /// A logged `sse_event` that arrived at `t_ns` (run clock) for an attempt actually sent at
    /// `sent_t_ns`: how `ib-reconstruct` (offline) and `ib-watch` (live) both read the log.
    pub fn logged(sent_t_ns: u64, t_ns: u64, event: &'a SseEvent) -> TimedEvent<'a> {
        TimedEvent {
            offset_ms: offset_ms(sent_t_ns, t_ns),
            data: event.data.as_deref(),
            event: event.event.as_deref(),
            comment: event.comment.is_some(),
        }
    }
}

/// Milliseconds from `from_ns` to `to_ns` on the run clock (negative if `to_ns` is earlier).
pub fn ms_between(from_ns: u64, to_ns: u64) -> f64 {
    (to_ns as f64 - from_ns as f64) / 1e6
}

/// An event's offset from its request's send, in milliseconds, never negative.
pub fn offset_ms(sent_t_ns: u64, t_ns: u64) -> f64 {
    ms_between(sent_t_ns, t_ns).max(0.0)
}

/// How a logged `request_terminal` recorded the end of the exchange: the `logged` argument of
/// [`compute`].
pub fn logged_end(terminal: &RequestTerminal) -> StreamEnd {
    StreamEnd {
        outcome: terminal.outcome,
        error_type: terminal.error_type,
        message: terminal.error_message.clone(),
        error_body: terminal.error_body.clone(),
    }
}

pub use crate::streaming::{answer_chunks, is_buffered, AnswerChunk};
pub use inferbench_contract::chunk::{deltas, ChunkFields, Usage};

/// Everything the stream says about one attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamTiming {
    /// How the attempt ended: the judge's verdict where the events ended the stream, else the
    /// logged terminal (a clean close of a 2xx body is judged `completed` or `truncated`).
    pub end: StreamEnd,
    /// How many of the events (from the first) count; the rest came after the stream ended.
    pub counted_events: usize,
    /// `[DONE]` arrived among the counted events.
    pub done_seen: bool,
    pub reasoning: String,
    pub answer: String,
    pub ttfo_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub last_answer_ms: Option<f64>,
    pub pre_answer_reasoning_tokens: Option<i64>,
    pub reasoning_emitted_before_answer: Option<bool>,
    /// Tokens of all reasoning text (before and after the first answer token).
    pub reasoning_tokens: i64,
    pub visible_answer_tokens: i64,
    /// Set only for complete requests (see [`StreamTiming::complete`]).
    pub e2e_latency_ms: Option<f64>,
    pub output_tokens_per_second: Option<f64>,
    /// A complete answer that arrived all at once ([`is_buffered`]): under inferbench's rules
    /// it is no tokens/s sample; the reference's rules keep its speed.
    pub buffered: bool,
    /// A `completed` 2xx stream with a non-empty answer.
    pub complete: bool,
    pub first_event_ms: Option<f64>,
    pub response_model: Option<String>,
    pub provider_request_id: Option<String>,
    pub finish_reason: Option<String>,
    pub usage: Usage,
    /// The answer's chunks (the events that carried answer text, counted ones only), in order:
    /// when each arrived and how many of the answer's tokens it completed (see
    /// [`answer_chunks`]). Their tokens add up to `visible_answer_tokens`.
    pub answer_chunks: Vec<AnswerChunk>,
}

/// The fields of one event of `api`'s stream, named `event_name`, parsed exactly as
/// [`compute_on`] parses it.
pub fn chunk_fields_on(api: WireApi, event_name: Option<&str>, data: Option<&str>) -> Option<ChunkFields> {
    match Payload::read(api, event_name, data) {
        Payload::Object(chunk) => Some(chunk.fields),
        _ => None,
    }
}

/// Computes the outcome and timing of one attempt from its events, in arrival order.
/// `logged` is how the terminal event recorded the end of the exchange and `http_status` the
/// response status (none when no head arrived).
pub fn compute(events: &[TimedEvent<'_>], logged: &StreamEnd, http_status: Option<u16>) -> StreamTiming {
    compute_with(Rules::Inferbench, events, logged, http_status)
}

/// Whether the reference would have read on to the close where the fetch stopped: past an
/// error the provider reported in the stream, and through a 2xx body that is not an event
/// stream (it reads any body line by line; one without `data:` lines is an empty answer).
fn read_to_the_close(logged: &StreamEnd) -> bool {
    logged.outcome == Outcome::StreamError || logged.error_type == Some(ErrorKind::NotEventStream)
}

/// The reference's tokenizer error: its `encode` raised on special-token text.
fn special_token_failure(index: usize, channel: &str) -> StreamEnd {
    StreamEnd::failed(
        Outcome::TransportError,
        ErrorKind::InvalidSse,
        format!("event {index}: the {channel} contains special-token text, which the reference's tokenizer refuses"),
    )
}

/// The answer-token ceiling a request's `body` sent on `api` (its own field: `max_output_tokens`
/// on Responses, `max_tokens` on Messages), if it sent one.
pub fn ceiling(api: WireApi, body: &serde_json::Value) -> Option<i64> {
    let field = match api {
        WireApi::ChatCompletions => return None,
        WireApi::Responses => "max_output_tokens",
        WireApi::Messages => "max_tokens",
    };
    body.get(field).and_then(serde_json::Value::as_i64)
}

/// A token ceiling reached is `length` whatever the server calls it: a Responses or Messages
/// stream that says it completed (`stop`) after as many output tokens as the request's
/// `ceiling` allowed stopped at the ceiling (llama.cpp ends such a Responses stream with
/// `response.completed`, where OpenAI sends `response.incomplete`). Chat completions servers
/// say `length` themselves, and the reference's runs are read as they were.
pub fn ceiling_reached(t: &mut StreamTiming, ceiling: Option<i64>) {
    let reached = ceiling.is_some_and(|c| t.usage.completion_tokens.is_some_and(|n| n >= c));
    if reached && t.finish_reason.as_deref() == Some("stop") {
        t.finish_reason = Some("length".to_string());
    }
}

/// Takes an event's model, provider id, usage and finish reason into `t`; returns its
/// reasoning and answer text.
fn absorb(t: &mut StreamTiming, chunk: Chunk) -> (String, String) {
    let Chunk { fields, provider_request_id, .. } = chunk;
    if t.response_model.is_none() {
        t.response_model = fields.model;
    }
    if t.provider_request_id.is_none() {
        t.provider_request_id = provider_request_id;
    }
    t.usage.merge(&fields.usage);
    if fields.finish_reason.is_some() {
        t.finish_reason = fields.finish_reason;
    }
    (fields.reasoning, fields.answer)
}

/// [`compute`] under the given scoring rules (see [`crate::rules`]).
pub fn compute_with(
    rules: Rules,
    events: &[TimedEvent<'_>],
    logged: &StreamEnd,
    http_status: Option<u16>,
) -> StreamTiming {
    compute_on(rules, WireApi::ChatCompletions, events, logged, http_status)
}

/// [`compute_with`] of a stream of `api`'s grammar: the same definitions on every API, the
/// events read by that API's grammar (docs/reference/wire-apis.md).
pub fn compute_on(
    rules: Rules,
    api: WireApi,
    events: &[TimedEvent<'_>],
    logged: &StreamEnd,
    http_status: Option<u16>,
) -> StreamTiming {
    let two_xx = http_status.is_some_and(|s| (200..300).contains(&s));
    // The reference runner spoke chat completions only; its rules have no other grammar.
    let reference = rules.is_reference() && api == WireApi::ChatCompletions;
    let mut judge = Judge::on(rules, api);
    let mut ended = None;
    let mut t = StreamTiming {
        end: logged.clone(),
        counted_events: events.len(),
        done_seen: false,
        reasoning: String::new(),
        answer: String::new(),
        ttfo_ms: None,
        ttfa_ms: None,
        last_answer_ms: None,
        pre_answer_reasoning_tokens: None,
        reasoning_emitted_before_answer: None,
        reasoning_tokens: 0,
        visible_answer_tokens: 0,
        e2e_latency_ms: None,
        output_tokens_per_second: None,
        buffered: false,
        complete: false,
        first_event_ms: None,
        response_model: None,
        provider_request_id: None,
        finish_reason: None,
        usage: Usage::default(),
        answer_chunks: Vec::new(),
    };
    let mut pre_answer_reasoning = String::new();
    let mut chunk_ends: Vec<(f64, usize)> = Vec::new();
    let mut first_output: Option<f64> = None;
    for (index, event) in events.iter().enumerate() {
        t.first_event_ms.get_or_insert(event.offset_ms);
        if event.comment {
            continue;
        }
        let payload = judge.payload(event.event, event.data);
        if two_xx {
            if let Some(end) = judge.observe(index as u32, event.event, &payload) {
                t.done_seen = payload == Payload::Done;
                t.counted_events = index + 1;
                ended = Some(end);
                // A grammar's terminal event (or failed response) carries the usage and the
                // finish reason; no text joins the answer after the stream ended.
                if let Payload::Object(chunk) = payload {
                    absorb(&mut t, *chunk);
                }
                break;
            }
        }
        let Payload::Object(chunk) = payload else { continue };
        let (reasoning, answer) = absorb(&mut t, *chunk);
        if !reasoning.is_empty() {
            t.reasoning.push_str(&reasoning);
            if t.ttfa_ms.is_none() {
                pre_answer_reasoning.push_str(&reasoning);
            }
            // The reference tokenizes the reasoning until it has a first output token.
            if reference && first_output.is_none() && tokenizer::has_special_token_text(&t.reasoning) {
                t.counted_events = index + 1;
                ended = Some(special_token_failure(index, "reasoning"));
                break;
            }
            first_output.get_or_insert(event.offset_ms);
        }
        if !answer.is_empty() {
            t.answer.push_str(&answer);
            chunk_ends.push((event.offset_ms, t.answer.len()));
            t.ttfa_ms.get_or_insert(event.offset_ms);
            first_output.get_or_insert(event.offset_ms);
            t.last_answer_ms = Some(event.offset_ms);
            // ... and the whole answer after every answer event.
            if reference && tokenizer::has_special_token_text(&t.answer) {
                t.counted_events = index + 1;
                ended = Some(special_token_failure(index, "answer"));
                break;
            }
        }
    }
    if reference {
        t.done_seen = judge.done_seen();
    }
    t.end = match ended {
        Some(end) => end,
        // The body ended cleanly: whether that completes the response is the judge's call
        // (also for a log whose writer judged it by older rules). The reference reads past
        // an error the provider reports in the stream, to the close.
        None if two_xx && (logged.ended_cleanly() || (reference && read_to_the_close(logged))) => judge.closed(),
        None => logged.clone(),
    };
    if reference
        && t.end.outcome == Outcome::Completed
        && t.ttfa_ms.is_some()
        && tokenizer::has_special_token_text(&pre_answer_reasoning)
    {
        t.end = special_token_failure(t.counted_events.saturating_sub(1), "reasoning before the answer");
    }
    t.answer_chunks = answer_chunks(&t.answer, &chunk_ends);
    t.visible_answer_tokens = t.answer_chunks.iter().map(|c| c.tokens).sum();
    t.reasoning_tokens = tokenizer::count(&t.reasoning) as i64;
    if t.ttfa_ms.is_some() {
        t.ttfo_ms = first_output;
        let tokens = tokenizer::count(&pre_answer_reasoning) as i64;
        t.pre_answer_reasoning_tokens = Some(tokens);
        t.reasoning_emitted_before_answer = Some(tokens > 0);
    }
    t.complete = two_xx && t.end.outcome == Outcome::Completed && !t.answer.is_empty();
    if t.complete {
        t.e2e_latency_ms = t.last_answer_ms;
        t.buffered = is_buffered(t.visible_answer_tokens, &t.answer_chunks);
        if let (Some(first), Some(last)) = (t.ttfa_ms, t.last_answer_ms) {
            // The reference times any answer with a span, buffered or not.
            if t.visible_answer_tokens >= 2 && last > first && (reference || !t.buffered) {
                t.output_tokens_per_second = Some((t.visible_answer_tokens - 1) as f64 / ((last - first) / 1000.0));
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(offset_ms: f64, data: &str) -> TimedEvent<'_> {
        TimedEvent::data(offset_ms, data)
    }

    /// A 2xx stream whose body ended cleanly.
    fn closed(events: &[TimedEvent<'_>]) -> StreamTiming {
        compute(events, &StreamEnd::completed(), Some(200))
    }

    /// A 2xx stream that the deadline ended.
    fn timed_out(events: &[TimedEvent<'_>]) -> StreamTiming {
        let end = StreamEnd::failed(Outcome::Timeout, inferbench_contract::vocab::ErrorKind::Deadline, "late".into());
        compute(events, &end, Some(200))
    }

    const ROLE: &str = r#"{"model":"glm","choices":[{"delta":{"role":"assistant","content":""}}]}"#;
    const THINK: &str = r#"{"choices":[{"delta":{"reasoning_content":"brief thought"}}]}"#;
    const A1: &str = r#"{"choices":[{"delta":{"content":"{\"answer\":"}}]}"#;
    const A2: &str = r#"{"choices":[{"delta":{"content":"\"Ada\"}"}}]}"#;
    const FINISH: &str =
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":7}}"#;

    #[test]
    fn reasoning_then_answer_gives_hand_computed_boundaries() {
        let events =
            [ev(5.0, ROLE), ev(115.0, THINK), ev(125.0, A1), ev(225.0, A2), ev(230.0, FINISH), ev(231.0, "[DONE]")];
        let t = closed(&events);
        assert_eq!(t.ttfo_ms, Some(115.0));
        assert_eq!(t.ttfa_ms, Some(125.0));
        assert_eq!(t.last_answer_ms, Some(225.0));
        assert_eq!(t.e2e_latency_ms, Some(225.0));
        assert_eq!(t.answer, "{\"answer\":\"Ada\"}");
        assert_eq!(t.reasoning, "brief thought");
        assert_eq!(t.pre_answer_reasoning_tokens, Some(tokenizer::count("brief thought") as i64));
        assert_eq!(t.reasoning_emitted_before_answer, Some(true));
        let n = tokenizer::count("{\"answer\":\"Ada\"}") as f64;
        assert_eq!(t.output_tokens_per_second, Some((n - 1.0) / 0.1));
        assert_eq!(t.response_model.as_deref(), Some("glm"));
        assert_eq!(t.finish_reason.as_deref(), Some("stop"));
        assert_eq!(t.usage.prompt_tokens, Some(20));
        assert_eq!(t.usage.completion_tokens, Some(7));
        assert_eq!(t.first_event_ms, Some(5.0));
    }

    #[test]
    fn each_answer_token_belongs_to_the_chunk_that_completed_it() {
        let t = closed(&[ev(5.0, ROLE), ev(115.0, THINK), ev(125.0, A1), ev(225.0, A2), ev(230.0, FINISH)]);
        // Tokenized whole, `:"` is one token that the second chunk completes.
        let first_end = "{\"answer\":".len();
        let first = tokenizer::token_ends(&t.answer).iter().filter(|&&end| end <= first_end).count() as i64;
        assert_eq!(first, 2);
        assert_eq!(
            t.answer_chunks,
            [
                AnswerChunk { offset_ms: 125.0, tokens: first },
                AnswerChunk { offset_ms: 225.0, tokens: t.visible_answer_tokens - first }
            ],
            "the reasoning and finish events carry no answer"
        );
        // " Lov" is split over two chunks: it arrives with the second.
        let text = "Ada Lovelace";
        let ends = tokenizer::token_ends(text);
        assert_eq!(ends, [3, 7, 9, 12], "Ada| Lov|el|ace");
        let split = answer_chunks(text, &[(1.0, 6), (2.0, 12)]);
        assert_eq!(split, [AnswerChunk { offset_ms: 1.0, tokens: 1 }, AnswerChunk { offset_ms: 2.0, tokens: 3 }]);
        let buffered = answer_chunks(text, &[(1.0, 1), (9.0, 12)]);
        assert_eq!(buffered.iter().map(|c| c.tokens).collect::<Vec<_>>(), [0, 4], "a chunk that only began a token");
        assert!(answer_chunks("", &[]).is_empty());
    }

    #[test]
    fn without_reasoning_ttfo_equals_ttfa_and_reasoning_tokens_are_zero() {
        let t = closed(&[ev(5.0, ROLE), ev(125.0, A1), ev(225.0, A2), ev(226.0, FINISH)]);
        assert_eq!(t.ttfo_ms, Some(125.0));
        assert_eq!(t.ttfa_ms, Some(125.0));
        assert_eq!(t.pre_answer_reasoning_tokens, Some(0));
        assert_eq!(t.reasoning_emitted_before_answer, Some(false));
    }

    #[test]
    fn reasoning_only_stream_reports_no_ttfo_and_no_e2e() {
        // The reference stored a TTFO here and then failed its own recomputation (§12.2 item 6).
        let t = closed(&[ev(5.0, THINK), ev(9.0, FINISH)]);
        assert_eq!(t.ttfo_ms, None);
        assert_eq!(t.ttfa_ms, None);
        assert_eq!(t.pre_answer_reasoning_tokens, None);
        assert!(!t.complete);
        assert_eq!(t.e2e_latency_ms, None);
    }

    #[test]
    fn failed_attempt_keeps_ttfa_but_has_no_e2e_or_speed() {
        let t = timed_out(&[ev(125.0, A1), ev(225.0, A2)]);
        assert_eq!(t.ttfa_ms, Some(125.0));
        assert_eq!(t.e2e_latency_ms, None);
        assert_eq!(t.output_tokens_per_second, None);
        assert!(!t.complete);
    }

    #[test]
    fn single_token_answer_or_single_event_has_no_speed() {
        let one = closed(&[ev(10.0, r#"{"choices":[{"delta":{"content":"7"}}]}"#), ev(11.0, "[DONE]")]);
        assert_eq!(one.visible_answer_tokens, 1);
        assert_eq!(one.output_tokens_per_second, None);
        assert_eq!(one.e2e_latency_ms, Some(10.0));
        let same_event = closed(&[ev(10.0, A1), ev(11.0, FINISH)]);
        assert!(same_event.visible_answer_tokens >= 2);
        assert_eq!(same_event.output_tokens_per_second, None, "last == first has no speed");
    }

    #[test]
    fn an_answer_flushed_at_once_is_buffered_and_no_speed_sample_under_inferbenchs_rules() {
        // Held back 500 ms, then flushed in two chunks 0.5 ms apart.
        let flushed = [ev(500.0, A1), ev(500.5, A2), ev(501.0, FINISH), ev(501.0, "[DONE]")];
        let t = closed(&flushed);
        assert!(t.complete && t.buffered, "{t:?}");
        assert_eq!(t.output_tokens_per_second, None);
        assert_eq!(t.e2e_latency_ms, Some(500.5), "its latency stays a sample");
        let reference = as_reference(&flushed, &StreamEnd::completed());
        assert!(reference.buffered);
        let tokens = reference.visible_answer_tokens as f64;
        assert_eq!(reference.output_tokens_per_second, Some((tokens - 1.0) / 0.0005), "the reference's speed");
        // One chunk bringing every token of a several-token answer.
        let one = closed(&[ev(10.0, A1), ev(11.0, FINISH)]);
        assert!(one.buffered && one.visible_answer_tokens >= 2);
        // A normal stream is not buffered, nor two chunks 2 ms per token of the larger apart.
        assert!(!closed(&[ev(125.0, A1), ev(225.0, A2), ev(230.0, FINISH)]).buffered);
        let larger = closed(&[ev(10.0, A1), ev(50.0, A2)]).answer_chunks.iter().map(|c| c.tokens).max().unwrap();
        let span = 2.0 * larger as f64;
        let at_the_span = closed(&[ev(10.0, A1), ev(10.0 + span, A2), ev(60.0, FINISH)]);
        assert!(!at_the_span.buffered && at_the_span.output_tokens_per_second.is_some());
        assert!(closed(&[ev(10.0, A1), ev(9.0 + span, A2), ev(60.0, FINISH)]).buffered, "1 ms short of it");
        // A one-token answer in one chunk has no span to judge.
        let single = closed(&[ev(10.0, r#"{"choices":[{"delta":{"content":"7"}}]}"#), ev(11.0, "[DONE]")]);
        assert!(!single.buffered);
        // An incomplete answer is not judged.
        assert!(!timed_out(&[ev(500.0, A1), ev(500.5, A2)]).buffered);
    }

    #[test]
    fn reasoning_in_the_first_answer_event_counts_as_pre_answer() {
        let both = r#"{"choices":[{"delta":{"reasoning":"hm","content":"{"}}]}"#;
        let t = closed(&[ev(50.0, both), ev(60.0, A2)]);
        assert_eq!(t.ttfo_ms, Some(50.0));
        assert_eq!(t.pre_answer_reasoning_tokens, Some(tokenizer::count("hm") as i64));
    }

    #[test]
    fn list_valued_reasoning_details_and_comments_are_handled() {
        let details = r#"{"choices":[{"delta":{"reasoning_details":[{"text":"a"},"b",{"content":"c"},3]}}]}"#;
        let comment = TimedEvent { offset_ms: 1.0, data: None, event: None, comment: true };
        let t = closed(&[comment, ev(20.0, details), ev(30.0, A1)]);
        assert_eq!(t.reasoning, "abc");
        assert_eq!(t.first_event_ms, Some(1.0));
        assert_eq!(t.ttfo_ms, Some(20.0));
    }

    #[test]
    fn nothing_after_done_joins_the_answer() {
        let t = closed(&[
            ev(10.0, A1),
            ev(20.0, A2),
            ev(21.0, "[DONE]"),
            ev(30.0, r#"{"choices":[{"delta":{"content":"X"}}]}"#),
        ]);
        assert_eq!((t.answer.as_str(), t.counted_events, t.done_seen), ("{\"answer\":\"Ada\"}", 3, true));
        assert_eq!((t.end.outcome, t.e2e_latency_ms), (Outcome::Completed, Some(20.0)));
        // A server that hangs after [DONE] is completed, whatever the deadline did later.
        let t = timed_out(&[ev(10.0, A1), ev(20.0, A2), ev(21.0, "[DONE]")]);
        assert!(t.complete && t.end.outcome == Outcome::Completed);
    }

    #[test]
    fn an_in_band_error_ends_the_request_without_latency_samples() {
        let error = r#"{"error":{"message":"boom","type":"server_error"}}"#;
        let t = closed(&[ev(10.0, A1), ev(20.0, A2), ev(30.0, error), ev(31.0, "[DONE]")]);
        assert_eq!(t.end.outcome, Outcome::StreamError);
        assert_eq!(t.ttfa_ms, Some(10.0), "the partial answer keeps its TTFA");
        assert_eq!((t.e2e_latency_ms, t.output_tokens_per_second, t.complete), (None, None, false));
    }

    #[test]
    fn a_clean_close_without_done_or_finish_is_truncated() {
        let t = closed(&[ev(10.0, A1), ev(20.0, A2)]);
        assert_eq!((t.end.outcome, t.e2e_latency_ms, t.done_seen), (Outcome::Truncated, None, false));
        let t = closed(&[]);
        assert_eq!(t.end.outcome, Outcome::InvalidStream);
    }

    #[test]
    fn a_clean_close_logged_as_truncated_or_empty_is_judged_again() {
        let truncated =
            StreamEnd::failed(Outcome::Truncated, inferbench_contract::vocab::ErrorKind::NoDoneOrFinish, "t".into());
        let t = compute(&[ev(10.0, A1), ev(20.0, A2), ev(21.0, FINISH)], &truncated, Some(200));
        assert_eq!(t.end, StreamEnd::completed(), "today's rules find the finish_reason");
        let deadline = StreamEnd::failed(Outcome::Timeout, inferbench_contract::vocab::ErrorKind::Deadline, "d".into());
        assert_eq!(compute(&[ev(10.0, A1)], &deadline, Some(200)).end.outcome, Outcome::Timeout);
    }

    #[test]
    fn keep_alives_and_python_json_do_not_break_a_stream() {
        let nan = r#"{"choices":[{"delta":{"content":"\"Ada\"}"},"logprobs":NaN}]}"#;
        let t = closed(&[ev(5.0, ""), ev(10.0, A1), ev(15.0, ""), ev(20.0, nan), ev(21.0, "[DONE]")]);
        assert!(t.complete, "{t:?}");
        assert_eq!(t.answer, "{\"answer\":\"Ada\"}");
    }

    #[test]
    fn a_non_2xx_attempt_is_never_judged_complete() {
        let end =
            StreamEnd::failed(Outcome::HttpError, inferbench_contract::vocab::ErrorKind::HttpStatus, "HTTP 500".into());
        let t = compute(&[ev(10.0, A1), ev(11.0, "[DONE]")], &end, Some(500));
        assert_eq!((t.end.outcome, t.complete), (Outcome::HttpError, false));
    }

    fn as_reference(events: &[TimedEvent<'_>], logged: &StreamEnd) -> StreamTiming {
        compute_with(Rules::Reference, events, logged, Some(200))
    }

    #[test]
    fn the_references_rules_reproduce_its_reading() {
        let x = r#"{"choices":[{"delta":{"content":"X"}}]}"#;
        // Content after [DONE] joins the answer; a close without [DONE] or finish completes.
        let t = as_reference(&[ev(10.0, A1), ev(20.0, A2), ev(21.0, "[DONE]"), ev(30.0, x)], &StreamEnd::completed());
        assert_eq!((t.answer.as_str(), t.done_seen, t.e2e_latency_ms), ("{\"answer\":\"Ada\"}X", true, Some(30.0)));
        assert_eq!(as_reference(&[ev(10.0, A1)], &StreamEnd::completed()).end, StreamEnd::completed());
        let empty = as_reference(&[], &StreamEnd::completed());
        assert_eq!((empty.end.outcome, empty.complete), (Outcome::Completed, false), "an empty answer");
        // [DONE] then a held-open connection is the deadline's timeout.
        let deadline = StreamEnd::failed(Outcome::Timeout, ErrorKind::Deadline, "d".into());
        assert_eq!(as_reference(&[ev(10.0, A1), ev(21.0, "[DONE]")], &deadline).end.outcome, Outcome::Timeout);
        // An in-band error is an ordinary event, even when the fetch stopped at it.
        let error = r#"{"error":{"message":"boom"}}"#;
        let stopped = StreamEnd::failed(Outcome::StreamError, ErrorKind::InBandError, "e".into());
        let t = as_reference(&[ev(10.0, A1), ev(20.0, A2), ev(30.0, error)], &stopped);
        assert!(t.complete && t.end.outcome == Outcome::Completed, "{t:?}");
        // A 2xx body that is not an event stream is read to the close: an empty answer.
        let not_sse = StreamEnd::failed(Outcome::InvalidStream, ErrorKind::NotEventStream, "n".into());
        let t = as_reference(&[], &not_sse);
        assert_eq!((t.end.outcome, t.answer.as_str()), (Outcome::Completed, ""));
        // Data that is not a JSON object is the reference's transport error.
        let t = as_reference(&[ev(10.0, A1), ev(20.0, "oops")], &StreamEnd::completed());
        assert_eq!(
            (t.end.outcome, t.end.error_type, t.counted_events),
            (Outcome::TransportError, Some(ErrorKind::InvalidSse), 2)
        );
    }

    #[test]
    fn under_the_references_rules_special_token_text_fails_the_request() {
        let special = r#"{"choices":[{"delta":{"content":"<|endoftext|>"}}]}"#;
        let t = as_reference(&[ev(10.0, A1), ev(20.0, special), ev(30.0, A2)], &StreamEnd::completed());
        assert_eq!((t.end.outcome, t.counted_events, t.complete), (Outcome::TransportError, 2, false));
        let think = r#"{"choices":[{"delta":{"reasoning_content":"x <|endofprompt|>"}}]}"#;
        let t = as_reference(&[ev(5.0, think), ev(10.0, A1), ev(20.0, A2)], &StreamEnd::completed());
        assert_eq!(t.end.outcome, Outcome::TransportError);
        // inferbench's rules count it as text.
        let t = closed(&[ev(10.0, A1), ev(20.0, special), ev(30.0, A2), ev(31.0, "[DONE]")]);
        assert!(t.complete);
    }

    /// One response (reasoning, then a two-event answer, then usage) in each grammar: the same
    /// text at the same offsets, the structural events of each grammar between them.
    fn on_every_api() -> [(WireApi, Vec<(f64, String)>); 3] {
        let chat = [ROLE, THINK, A1, A2, FINISH, "[DONE]"];
        let chat = [5.0, 115.0, 125.0, 225.0, 230.0, 231.0].into_iter().zip(chat.map(String::from)).collect();
        let delta = |t: &str, d: &str| serde_json::json!({"type": t, "delta": d}).to_string();
        let responses = vec![
            (1.0, r#"{"type":"response.created","response":{"id":"resp_1","model":"glm","usage":null}}"#.to_string()),
            (2.0, r#"{"type":"response.in_progress","response":{"id":"resp_1"}}"#.to_string()),
            (3.0, r#"{"type":"response.output_item.added","item":{"type":"reasoning","summary":[]}}"#.to_string()),
            (115.0, delta("response.reasoning_summary_text.delta", "brief thought")),
            (120.0, r#"{"type":"response.output_item.added","item":{"type":"message","content":[]}}"#.to_string()),
            (121.0, r#"{"type":"response.content_part.added","part":{"type":"output_text","text":""}}"#.to_string()),
            (125.0, delta("response.output_text.delta", "{\"answer\":")),
            (225.0, delta("response.output_text.delta", "\"Ada\"}")),
            (226.0, r#"{"type":"response.output_text.done","text":"{\"answer\":\"Ada\"}"}"#.to_string()),
            (
                230.0,
                r#"{"type":"response.completed","response":{"usage":{"input_tokens":20,"output_tokens":7}}}"#
                    .to_string(),
            ),
            (231.0, "[DONE]".to_string()),
        ];
        let block = |i: u32, t: &str, k: &str, text: &str| {
            serde_json::json!({"type": "content_block_delta", "index": i, "delta": {"type": t, k: text}}).to_string()
        };
        let messages = vec![
            (1.0, r#"{"type":"message_start","message":{"id":"msg_1","model":"glm","usage":{"input_tokens":20,"output_tokens":1}}}"#.to_string()),
            (2.0, r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#.to_string()),
            (3.0, r#"{"type":"ping"}"#.to_string()),
            (115.0, block(0, "thinking_delta", "thinking", "brief thought")),
            // The text block starts while the thinking block is still open (llama.cpp).
            (120.0, r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#.to_string()),
            (125.0, block(1, "text_delta", "text", "{\"answer\":")),
            (225.0, block(1, "text_delta", "text", "\"Ada\"}")),
            (226.0, block(0, "signature_delta", "signature", "")),
            (227.0, r#"{"type":"content_block_stop","index":0}"#.to_string()),
            (228.0, r#"{"type":"content_block_stop","index":1}"#.to_string()),
            (229.0, r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#.to_string()),
            (230.0, r#"{"type":"message_stop"}"#.to_string()),
        ];
        [(WireApi::ChatCompletions, chat), (WireApi::Responses, responses), (WireApi::Messages, messages)]
    }

    fn judged(api: WireApi, events: &[(f64, String)]) -> StreamTiming {
        let events: Vec<TimedEvent> = events.iter().map(|(t, d)| ev(*t, d)).collect();
        compute_on(Rules::Inferbench, api, &events, &StreamEnd::completed(), Some(200))
    }

    #[test]
    fn the_same_response_gives_the_same_figures_on_every_api_and_structure_never_starts_a_clock() {
        let [chat, rest @ ..] = on_every_api();
        let want = judged(chat.0, &chat.1);
        assert!(want.complete);
        for (api, events) in rest {
            let t = judged(api, &events);
            assert_eq!(t.end, StreamEnd::completed(), "{api}");
            assert_eq!(
                (t.ttfo_ms, t.ttfa_ms, t.last_answer_ms, t.e2e_latency_ms),
                (Some(115.0), Some(125.0), Some(225.0), Some(225.0)),
                "{api}"
            );
            assert_eq!((&t.answer, &t.reasoning), (&want.answer, &want.reasoning), "{api}");
            assert_eq!(
                (t.visible_answer_tokens, t.output_tokens_per_second),
                (want.visible_answer_tokens, want.output_tokens_per_second),
                "{api}"
            );
            assert_eq!((t.usage.prompt_tokens, t.usage.completion_tokens), (Some(20), Some(7)), "{api}");
            assert_eq!((t.finish_reason.as_deref(), t.response_model.as_deref()), (Some("stop"), Some("glm")), "{api}");
            assert_eq!(t.first_event_ms, Some(1.0), "{api}: the first event, structural, is no first token");
        }
        // A trailing [DONE] on Responses is read after the terminal event and never counted.
        let (_, responses) = &on_every_api()[1];
        assert_eq!(judged(WireApi::Responses, responses).counted_events, responses.len() - 1);
    }

    #[test]
    fn a_grammar_broken_errors_and_streams_cut_short_are_failures_that_time_nothing() {
        let [_, responses, messages] = on_every_api();
        let cut = |events: &[(f64, String)], keep: usize| events[..keep].to_vec();
        let without = |events: &[(f64, String)], drop: usize| {
            events.iter().enumerate().filter(|(i, _)| *i != drop).map(|(_, e)| e.clone()).collect::<Vec<_>>()
        };
        let end = |api, events: &[(f64, String)]| {
            let t = judged(api, events);
            assert!(!t.complete && t.e2e_latency_ms.is_none() && t.output_tokens_per_second.is_none(), "{api}: {t:?}");
            (t.end.outcome, t.end.error_type, t.end.message.unwrap_or_default())
        };
        // Cut before the terminal event: truncated, on both.
        let (o, k, m) = end(WireApi::Responses, &cut(&responses.1, 9));
        assert_eq!((o, k), (Outcome::Truncated, Some(ErrorKind::NoTerminalEvent)), "{m}");
        let (o, k, _) = end(WireApi::Messages, &cut(&messages.1, 11));
        assert_eq!((o, k), (Outcome::Truncated, Some(ErrorKind::NoTerminalEvent)));
        // [DONE] where the terminal event should be.
        let mut done = cut(&responses.1, 9);
        done.push((230.0, "[DONE]".into()));
        assert_eq!(end(WireApi::Responses, &done).1, Some(ErrorKind::NoTerminalEvent));
        // Rules broken: text before the opening; a delta for a block never started; a second opening.
        let (o, k, m) = end(WireApi::Messages, &without(&messages.1, 0));
        assert_eq!((o, k), (Outcome::InvalidStream, Some(ErrorKind::GrammarViolation)));
        assert_eq!(m, "event 0: `content_block_start` before `message_start`");
        let (_, k, m) = end(WireApi::Messages, &without(&messages.1, 4));
        assert_eq!(
            (k, m.as_str()),
            (Some(ErrorKind::GrammarViolation), "event 4: a delta for block 1, which is not open")
        );
        let mut twice = messages.1.clone();
        twice.insert(3, messages.1[0].clone());
        assert!(end(WireApi::Messages, &twice).2.ends_with("a second `message_start`"));
        let (_, k, m) = end(WireApi::Responses, &without(&responses.1, 0));
        assert_eq!(
            (k, m.as_str()),
            (Some(ErrorKind::GrammarViolation), "event 0: `response.in_progress` before `response.created`")
        );
        // In-band errors: the error event of each grammar, and a failed response.
        let mut overloaded = cut(&messages.1, 6);
        overloaded
            .push((200.0, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into()));
        let t = judged(WireApi::Messages, &overloaded);
        assert_eq!((t.end.outcome, t.end.error_type), (Outcome::StreamError, Some(ErrorKind::ErrorEvent)));
        assert_eq!(t.end.message.as_deref(), Some("event 6: the provider sent an `error` event: Overloaded"));
        assert_eq!(t.end.error_body.as_deref(), Some(r#"{"type":"overloaded_error","message":"Overloaded"}"#));
        let mut failed = cut(&responses.1, 7);
        failed.push((
            200.0,
            r#"{"type":"response.failed","response":{"error":{"code":"server_error","message":"boom"}}}"#.into(),
        ));
        let t = judged(WireApi::Responses, &failed);
        assert_eq!((t.end.outcome, t.end.error_type), (Outcome::StreamError, Some(ErrorKind::InBandError)));
        assert_eq!(t.end.message.as_deref(), Some("event 7: the provider failed the response: boom"));
        let mut error = cut(&responses.1, 7);
        error.push((200.0, r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down"}"#.into()));
        assert_eq!(
            judged(WireApi::Responses, &error).end.message.as_deref(),
            Some("event 7: the provider sent an `error` event: slow down")
        );
    }

    #[test]
    fn a_completed_stream_at_its_ceiling_is_length_on_the_apis_that_word_it_otherwise() {
        let [_, responses, _] = on_every_api();
        let mut t = judged(WireApi::Responses, &responses.1);
        let body = serde_json::json!({"max_output_tokens": 7});
        assert_eq!(ceiling(WireApi::Responses, &body), Some(7));
        assert_eq!(ceiling(WireApi::Messages, &serde_json::json!({"max_tokens": 9})), Some(9));
        assert_eq!(ceiling(WireApi::ChatCompletions, &serde_json::json!({"max_tokens": 7})), None);
        ceiling_reached(&mut t, Some(8));
        assert_eq!(t.finish_reason.as_deref(), Some("stop"), "7 output tokens of 8");
        ceiling_reached(&mut t, ceiling(WireApi::Responses, &body));
        assert_eq!(t.finish_reason.as_deref(), Some("length"), "7 output tokens of 7");
    }

    #[test]
    fn a_token_ceiling_is_length_however_the_server_words_it() {
        let [_, responses, messages] = on_every_api();
        let mut incomplete = responses.1.clone();
        incomplete[9].1 =
            r#"{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}"#.into();
        let t = judged(WireApi::Responses, &incomplete);
        assert_eq!((t.end.outcome, t.finish_reason.as_deref()), (Outcome::Completed, Some("length")));
        let mut max_tokens = messages.1.clone();
        max_tokens[10].1 =
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":7}}"#.into();
        assert_eq!(judged(WireApi::Messages, &max_tokens).finish_reason.as_deref(), Some("length"));
    }
}

/// Property tests: the verdict live and on replay. `ib-fetch` judges a stream as it reads it
/// (`read_stream` in `stages/3-fetch/client.rs`) and logs every frame; `ib-reconstruct` replays the
/// logged events and the logged terminal through [`compute_with`]. Both use this crate's
/// functions, so the live side is modelled here by [`live`], which calls them exactly as
/// `read_stream` does (the body and event caps, the judge per frame, the frames after the end
/// still logged, `finish` at the body's end, then `closed`); what it leaves out is the
/// transport, the clock and credential redaction (none of the generated streams holds a
/// credential, so redaction changes nothing). Checked on mangled realistic streams
/// ([`crate::streams`]) in arbitrary reads:
/// - the replayed end (outcome, error kind, message, body) equals the live one, and the replay
///   counts exactly the events up to the one that ended the stream live;
/// - the live verdict, the logged events' text and the replayed answer, reasoning and token
///   counts do not depend on how the body was cut into reads;
/// - the reference's rules replay the same log without a panic.
#[cfg(test)]
mod props {
    use super::*;
    use crate::sse::{Frame, Parser};
    use crate::streams::{chunked, config, cuts, mangled_on};
    use proptest::prelude::*;

    /// One logged `sse_event`: the read that completed it (the clock), its data, its type,
    /// and whether it is a comment.
    #[derive(Debug, Clone, PartialEq)]
    struct Logged {
        read: usize,
        data: Option<String>,
        event: Option<String>,
        comment: bool,
    }

    #[derive(Debug)]
    struct Caps {
        event: usize,
        body: usize,
        events: u32,
    }

    fn too_large(kind: ErrorKind) -> StreamEnd {
        StreamEnd::failed(Outcome::InvalidStream, kind, format!("{kind:?}"))
    }

    /// `read_stream`'s handling of a 2xx event stream's reads: the log it writes and the end
    /// it logs, and the index of the event that ended the stream, when one did. Events after
    /// the end are logged as the drain logs them (the rest of the body).
    fn live(api: WireApi, reads: &[&[u8]], caps: &Caps) -> (Vec<Logged>, StreamEnd, Option<usize>) {
        let mut parser = Parser::new(caps.event);
        let mut judge = Judge::on(Rules::Inferbench, api);
        let mut log: Vec<Logged> = Vec::new();
        let mut bytes = 0usize;
        // Logs a frame; with the judge still judging, returns the end it calls.
        let record = |log: &mut Vec<Logged>, read: usize, frame: Frame, judge: Option<&mut Judge>| {
            let index = log.len() as u32;
            let judging = judge.is_some();
            let mut end = None;
            let logged = match frame {
                Frame::Comment(_) => Logged { read, data: None, event: None, comment: true },
                Frame::Event { data, event, .. } => {
                    if let Some(judge) = judge {
                        let payload = Payload::read(api, event.as_deref(), data.as_deref());
                        end = judge.observe(index, event.as_deref(), &payload);
                    }
                    Logged { read, data, event, comment: false }
                }
            };
            log.push(logged);
            if judging && end.is_none() && log.len() as u32 >= caps.events {
                end = Some(too_large(ErrorKind::TooManyEvents));
            }
            end
        };
        let (mut ended, mut ended_at): (Option<StreamEnd>, Option<usize>) = (None, None);
        for (read, chunk) in reads.iter().enumerate() {
            let room = caps.body.saturating_sub(bytes);
            bytes += chunk.len();
            let within = &chunk[..chunk.len().min(room)];
            let (frames, oversized) = parser.feed(within);
            for frame in frames {
                if ended.is_some() {
                    // After the end: logged up to the event cap, never judged.
                    if (log.len() as u32) < caps.events {
                        record(&mut log, read, frame, None);
                    }
                } else {
                    ended = record(&mut log, read, frame, Some(&mut judge));
                    ended_at = ended.as_ref().map(|_| log.len() - 1);
                }
            }
            if ended.is_none() && oversized.is_some() {
                return (log, too_large(ErrorKind::EventTooLarge), None);
            }
            if ended.is_none() && within.len() < chunk.len() {
                return (log, too_large(ErrorKind::ResponseTooLarge), None);
            }
            if let Some(end) = ended.as_ref().filter(|_| oversized.is_some() || within.len() < chunk.len()) {
                // The drain stops at a cap too.
                return (log, end.clone(), ended_at);
            }
        }
        let (frames, oversized) = parser.finish();
        for frame in frames {
            if ended.is_some() {
                if (log.len() as u32) < caps.events {
                    record(&mut log, reads.len(), frame, None);
                }
            } else {
                ended = record(&mut log, reads.len(), frame, Some(&mut judge));
                ended_at = ended.as_ref().map(|_| log.len() - 1);
            }
        }
        let end = match ended {
            Some(end) => end,
            None if oversized.is_some() => too_large(ErrorKind::EventTooLarge),
            None => judge.closed(),
        };
        (log, end, ended_at)
    }

    /// `ib-reconstruct`'s replay of the log (one millisecond per read).
    fn replay(rules: Rules, api: WireApi, log: &[Logged], logged: &StreamEnd) -> StreamTiming {
        let events: Vec<TimedEvent> = log
            .iter()
            .map(|e| TimedEvent {
                offset_ms: e.read as f64,
                data: e.data.as_deref(),
                event: e.event.as_deref(),
                comment: e.comment,
            })
            .collect();
        compute_on(rules, api, &events, logged, Some(200))
    }

    /// The logged events' text, without the read that completed each.
    fn texts(log: &[Logged]) -> Vec<(Option<String>, Option<String>, bool)> {
        log.iter().map(|e| (e.data.clone(), e.event.clone(), e.comment)).collect()
    }

    proptest! {
        #![proptest_config(config(768))]

        #[test]
        fn the_verdict_is_the_same_live_and_on_replay_in_any_reads(
            (api, bytes) in prop_oneof![Just(WireApi::ChatCompletions), Just(WireApi::Responses), Just(WireApi::Messages)]
                .prop_flat_map(|api| (Just(api), mangled_on(api, 4, 2000))),
            cut in cuts(10),
            other in cuts(10),
            caps in (prop_oneof![Just(64usize), Just(600), Just(1 << 20)], prop_oneof![Just(300usize), Just(1 << 24)], prop_oneof![Just(4u32), Just(1 << 20)])
                .prop_map(|(event, body, events)| Caps { event, body, events }),
        ) {
            let (log, end, ended_at) = live(api, &chunked(&bytes, &cut), &caps);
            let t = replay(Rules::Inferbench, api, &log, &end);
            prop_assert_eq!(&t.end, &end, "replayed end");
            // The replay counts the events up to the one that ended the stream live.
            prop_assert_eq!(t.counted_events, ended_at.map_or(log.len(), |i| i + 1));
            let (log2, end2, _) = live(api, &chunked(&bytes, &other), &caps);
            let (whole, end_whole, _) = live(api, &[&bytes], &caps);
            prop_assert_eq!(&end2, &end, "another cutting");
            prop_assert_eq!(&end_whole, &end, "one read");
            prop_assert_eq!(texts(&log2), texts(&log));
            prop_assert_eq!(texts(&whole), texts(&log));
            let t2 = replay(Rules::Inferbench, api, &log2, &end2);
            prop_assert_eq!(
                (&t2.answer, &t2.reasoning, t2.visible_answer_tokens, t2.counted_events, t2.done_seen, t2.complete),
                (&t.answer, &t.reasoning, t.visible_answer_tokens, t.counted_events, t.done_seen, t.complete)
            );
            let _ = replay(Rules::Reference, api, &log, &end);
            // No provider gains by breaking its stream: a failure is no latency or speed sample.
            if t.end.outcome != Outcome::Completed {
                prop_assert!(!t.complete && t.e2e_latency_ms.is_none() && t.output_tokens_per_second.is_none());
            }
        }
    }
}
