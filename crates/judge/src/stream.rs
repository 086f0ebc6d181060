//! When a 2xx event stream is over, and how it ended.
//!
//! One judge serves both sides: `ib-fetch` feeds it each event as it arrives, to know when to
//! stop reading (at `[DONE]`, at an error the provider reports in the stream, at data that is
//! not JSON), and `ib-reconstruct` replays the logged events through it, so the outcome in
//! `responses.parquet` is derived from the recorded facts and an archived log re-scored with
//! new code gets the new verdict. The rules:
//!
//! - `[DONE]` ends the response as `completed`; anything logged after it never joins the
//!   answer (a server that sends `[DONE]` and keeps the connection open is not a timeout).
//! - An SSE event named `error`, or a JSON payload with a non-null `error` member (the OpenAI
//!   mid-stream error shape), ends it as `stream_error`: a partial answer before it is no
//!   latency or speed sample.
//! - Data that is neither `[DONE]` nor a JSON object (as Python's parser reads JSON, see
//!   [`inferbench_contract::lenient_json`]) ends it as `invalid_stream`. Empty data is a keep-alive.
//! - A body that ends cleanly after a `finish_reason` is `completed`; with neither `[DONE]`
//!   nor a `finish_reason` it is `truncated`; with no event at all it is `invalid_stream`.
use crate::rules::Rules;
use inferbench_contract::chunk::grammar::{self, Kind};
use inferbench_contract::chunk::Chunk;
use inferbench_contract::vocab::{ErrorKind, Outcome, WireApi};
use serde_json::Value;

/// Cap on an error message taken from a stream.
const MESSAGE_CAP: usize = 1024;
/// Cap on an error object kept from a stream.
pub const ERROR_BODY_CAP: usize = 4096;

/// What an event's `data` field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// The event has no `data` field (only `event`, `id` or `retry`).
    Absent,
    /// `[DONE]`.
    Done,
    /// `data:` with nothing after it: a keep-alive.
    Empty,
    /// A JSON object, read ([`inferbench_contract::chunk`]).
    Object(Box<Chunk>),
    /// JSON, but not an object.
    NotObject,
    /// Not JSON at all.
    NotJson,
}

impl Payload {
    /// The `data` of an event named `event_name` (an `error` event's data is kept as a tree:
    /// the judge quotes it whole).
    pub fn of(event_name: Option<&str>, data: Option<&str>) -> Payload {
        Payload::read(WireApi::ChatCompletions, event_name, data)
    }

    /// The `data` of an event named `event_name` on `api`, read by that API's grammar.
    pub fn read(api: WireApi, event_name: Option<&str>, data: Option<&str>) -> Payload {
        match data {
            None => Payload::Absent,
            Some("[DONE]") => Payload::Done,
            Some("") => Payload::Empty,
            Some(text) => match Chunk::read_on(api, event_name, text) {
                Ok(Some(chunk)) => Payload::Object(Box::new(chunk)),
                Ok(None) => Payload::NotObject,
                Err(()) => Payload::NotJson,
            },
        }
    }

    pub fn object(&self) -> Option<&Chunk> {
        match self {
            Payload::Object(chunk) => Some(chunk),
            _ => None,
        }
    }
}

/// How a stream ended (or why the judge ended it).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEnd {
    pub outcome: Outcome,
    pub error_type: Option<ErrorKind>,
    pub message: Option<String>,
    /// The error the provider reported, capped at [`ERROR_BODY_CAP`] bytes.
    pub error_body: Option<String>,
}

impl StreamEnd {
    pub fn completed() -> StreamEnd {
        StreamEnd { outcome: Outcome::Completed, error_type: None, message: None, error_body: None }
    }

    pub fn failed(outcome: Outcome, kind: ErrorKind, message: String) -> StreamEnd {
        StreamEnd { outcome, error_type: Some(kind), message: Some(message), error_body: None }
    }

    /// Whether this is how a 2xx body that simply ended was logged (completed, truncated, or
    /// empty): what a replay judges afresh with the judge's current rules.
    pub fn ended_cleanly(&self) -> bool {
        matches!(
            (self.outcome, self.error_type),
            (Outcome::Completed, _)
                | (Outcome::Truncated, Some(ErrorKind::NoDoneOrFinish | ErrorKind::NoTerminalEvent))
                | (Outcome::InvalidStream, Some(ErrorKind::EmptyStream))
        )
    }
}

/// Follows one attempt's events in order.
#[derive(Debug, Default, Clone)]
pub struct Judge {
    rules: Rules,
    api: WireApi,
    events: u32,
    finish_seen: bool,
    done_seen: bool,
    /// Responses and Messages: the response opened (`response.created`, `message_start`).
    opened: bool,
    /// Messages: the content blocks started and not yet stopped, by index, in start order.
    open_blocks: Vec<Option<u64>>,
}

impl Judge {
    /// A judge applying `rules` (see [`crate::rules`]); `Judge::default()` applies inferbench's.
    pub fn new(rules: Rules) -> Judge {
        Judge { rules, ..Judge::default() }
    }

    /// A judge of `api`'s grammar applying `rules` (the reference's rules are chat completions'
    /// only: the reference runner spoke nothing else).
    pub fn on(rules: Rules, api: WireApi) -> Judge {
        Judge { rules, api, ..Judge::default() }
    }

    /// The API whose grammar this judge reads.
    pub fn api(&self) -> WireApi {
        self.api
    }

    /// An event's `data`, read by this judge's grammar ([`Payload::read`]).
    pub fn payload(&self, event_name: Option<&str>, data: Option<&str>) -> Payload {
        Payload::read(self.api, event_name, data)
    }

    /// Takes the next dispatched event (not a comment); returns how the stream ended when this
    /// event ends it.
    pub fn observe(&mut self, index: u32, event_name: Option<&str>, payload: &Payload) -> Option<StreamEnd> {
        // Only an event with data is a server-sent event proper (WHATWG dispatches nothing
        // else); `id:`- or `retry:`-only blocks are logged but are no evidence of a stream.
        self.events += u32::from(*payload != Payload::Absent);
        if self.rules.is_reference() && self.api == WireApi::ChatCompletions {
            return self.observe_as_reference(index, payload);
        }
        let typed_error = payload.object().and_then(|c| c.event.as_ref()).is_some_and(|e| e.kind == Kind::Error);
        if event_name == Some("error") || typed_error {
            let value = payload.object().and_then(Chunk::value);
            let message =
                value.and_then(|v| error_message(v).or_else(|| grammar::error_message(v).map(|m| cap(m, MESSAGE_CAP))));
            let message = message.unwrap_or_else(|| "no message".to_string());
            let body = match self.api {
                WireApi::ChatCompletions => value,
                _ => value.map(grammar::error_object),
            };
            return Some(StreamEnd {
                outcome: Outcome::StreamError,
                error_type: Some(ErrorKind::ErrorEvent),
                message: Some(format!("event {index}: the provider sent an `error` event: {message}")),
                error_body: body.map(|v| cap(&compact(v), ERROR_BODY_CAP)),
            });
        }
        if self.api != WireApi::ChatCompletions {
            return self.observe_grammar(index, payload);
        }
        match payload {
            Payload::Absent | Payload::Empty => None,
            Payload::Done => Some(StreamEnd::completed()),
            Payload::NotJson => Some(StreamEnd::failed(
                Outcome::InvalidStream,
                ErrorKind::InvalidSse,
                format!("event {index}: data is neither [DONE] nor JSON"),
            )),
            Payload::NotObject => Some(StreamEnd::failed(
                Outcome::InvalidStream,
                ErrorKind::InvalidSse,
                format!("event {index}: data is JSON but not an object"),
            )),
            Payload::Object(chunk) => {
                // Only the general reading keeps a tree, and it is the one that reads every
                // chunk with a non-null `error` member.
                let value = chunk.value();
                if let Some((value, error)) =
                    value.and_then(|v| v.get("error").filter(|e| !e.is_null()).map(|e| (v, e)))
                {
                    let message = error_message(value).unwrap_or_else(|| cap(&compact(error), MESSAGE_CAP));
                    return Some(StreamEnd {
                        outcome: Outcome::StreamError,
                        error_type: Some(ErrorKind::InBandError),
                        message: Some(format!("event {index}: the provider reported an error: {message}")),
                        error_body: Some(cap(&compact(error), ERROR_BODY_CAP)),
                    });
                }
                // Only a real reason finishes a stream: some proxies put `""` (or `false`) in
                // every chunk, and a stream cut off after such chunks is still truncated.
                if chunk.fields.finish_reason.as_deref().is_some_and(|r| !r.trim().is_empty()) {
                    self.finish_seen = true;
                }
                None
            }
        }
    }

    /// A Responses or Messages event (not an error, which [`Judge::observe`] took).
    fn observe_grammar(&mut self, index: u32, payload: &Payload) -> Option<StreamEnd> {
        let chunk = match payload {
            Payload::Absent | Payload::Empty => return None,
            Payload::Done => {
                return Some(StreamEnd::failed(
                    Outcome::Truncated,
                    ErrorKind::NoTerminalEvent,
                    format!("event {index}: [DONE] before {}", self.terminal_names()),
                ))
            }
            Payload::NotJson => {
                return Some(StreamEnd::failed(
                    Outcome::InvalidStream,
                    ErrorKind::InvalidSse,
                    format!("event {index}: data is not JSON"),
                ))
            }
            Payload::NotObject => {
                return Some(StreamEnd::failed(
                    Outcome::InvalidStream,
                    ErrorKind::InvalidSse,
                    format!("event {index}: data is JSON but not an object"),
                ))
            }
            Payload::Object(chunk) => chunk,
        };
        let event = chunk.event.as_ref()?;
        let broken = |rule: String| {
            Some(StreamEnd::failed(
                Outcome::InvalidStream,
                ErrorKind::GrammarViolation,
                format!("event {index}: {rule}"),
            ))
        };
        let opening = match self.api {
            WireApi::Messages => "message_start",
            _ => "response.created",
        };
        let name = if event.name.is_empty() { "an event without a type" } else { event.name.as_str() };
        match &event.kind {
            Kind::Ping => return None,
            Kind::Opened if self.opened => return broken(format!("a second `{name}`")),
            Kind::Opened => {
                self.opened = true;
                return None;
            }
            _ if !self.opened => return broken(format!("`{name}` before `{opening}`")),
            _ => {}
        }
        if chunk.fields.finish_reason.as_deref().is_some_and(|r| !r.trim().is_empty()) {
            self.finish_seen = true;
        }
        match &event.kind {
            Kind::BlockStart(i) if self.open_blocks.contains(i) => broken(format!("block {} started twice", block(*i))),
            Kind::BlockStart(i) => {
                self.open_blocks.push(*i);
                None
            }
            Kind::BlockDelta(i) | Kind::BlockStop(i) => {
                // An event without an index belongs to the last block started.
                let at = match i {
                    Some(_) => self.open_blocks.iter().position(|b| b == i),
                    None => self.open_blocks.len().checked_sub(1),
                };
                match (at, &event.kind) {
                    (None, Kind::BlockDelta(_)) => {
                        broken(format!("a delta for block {}, which is not open", block(*i)))
                    }
                    (None, _) => broken(format!("a stop for block {}, which is not open", block(*i))),
                    (Some(at), Kind::BlockStop(_)) => {
                        self.open_blocks.remove(at);
                        None
                    }
                    _ => None,
                }
            }
            Kind::Terminal => Some(StreamEnd::completed()),
            Kind::Failed => {
                let value = chunk.value();
                let message = value.and_then(grammar::error_message).map(|m| cap(m, MESSAGE_CAP));
                Some(StreamEnd {
                    outcome: Outcome::StreamError,
                    error_type: Some(ErrorKind::InBandError),
                    message: Some(format!(
                        "event {index}: the provider failed the response: {}",
                        message.as_deref().unwrap_or("no message")
                    )),
                    error_body: value.map(|v| cap(&compact(grammar::error_object(v)), ERROR_BODY_CAP)),
                })
            }
            Kind::Content | Kind::Ping | Kind::Opened | Kind::Error => None,
        }
    }

    /// The terminal events of this judge's grammar, for a message.
    fn terminal_names(&self) -> &'static str {
        match self.api {
            WireApi::Messages => "`message_stop`",
            _ => "a terminal event (`response.completed`, `response.incomplete`, `response.failed`)",
        }
    }

    /// The reference's reading (§5.5): `[DONE]` is noted and reading goes on until the server
    /// closes; error events and members are ordinary events; only data that is not a JSON
    /// object ends the stream, as a transport error.
    fn observe_as_reference(&mut self, index: u32, payload: &Payload) -> Option<StreamEnd> {
        let not_object = |what: &str| {
            Some(StreamEnd::failed(
                Outcome::TransportError,
                ErrorKind::InvalidSse,
                format!("event {index}: {what} (the reference's invalid_sse)"),
            ))
        };
        match payload {
            Payload::Done => {
                self.done_seen = true;
                None
            }
            Payload::NotJson => not_object("malformed SSE JSON"),
            Payload::NotObject => not_object("SSE data payload must be a JSON object"),
            _ => None,
        }
    }

    /// `[DONE]` arrived (under the reference's rules, which read on after it).
    pub fn done_seen(&self) -> bool {
        self.done_seen
    }

    /// The body ended cleanly without an event that ended the stream.
    pub fn closed(&self) -> StreamEnd {
        if self.rules.is_reference() && self.api == WireApi::ChatCompletions {
            // The reference completes every 2xx stream that closes, whatever it held.
            return StreamEnd::completed();
        }
        if self.events > 0 && self.api != WireApi::ChatCompletions {
            return StreamEnd::failed(
                Outcome::Truncated,
                ErrorKind::NoTerminalEvent,
                format!("the stream ended before {}", self.terminal_names()),
            );
        }
        if self.events == 0 {
            StreamEnd::failed(
                Outcome::InvalidStream,
                ErrorKind::EmptyStream,
                "the 2xx body ended without a single server-sent event".to_string(),
            )
        } else if self.finish_seen {
            StreamEnd::completed()
        } else {
            StreamEnd::failed(
                Outcome::Truncated,
                ErrorKind::NoDoneOrFinish,
                "the stream ended with neither [DONE] nor a finish_reason".to_string(),
            )
        }
    }

    pub fn finish_seen(&self) -> bool {
        self.finish_seen
    }
}

/// A block's index for a message (`?` for an event without one).
fn block(index: Option<u64>) -> String {
    index.map_or_else(|| "?".to_string(), |i| i.to_string())
}

/// `error.message` of an OpenAI error payload, when it is a string.
fn error_message(payload: &Value) -> Option<String> {
    payload.get("error").and_then(|e| e.get("message")).and_then(Value::as_str).map(|m| cap(m, MESSAGE_CAP))
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `text` cut to at most `max` bytes on a character boundary.
pub fn cap(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(events: &[(Option<&str>, Option<&str>)]) -> (Option<(usize, StreamEnd)>, Judge) {
        let mut judge = Judge::default();
        for (i, (name, data)) in events.iter().enumerate() {
            if let Some(end) = judge.observe(i as u32, *name, &Payload::of(*name, *data)) {
                return (Some((i, end)), judge);
            }
        }
        (None, judge)
    }

    const CHUNK: &str = r#"{"choices":[{"delta":{"content":"a"}}]}"#;
    const FINISH: &str = r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#;

    #[test]
    fn done_ends_the_stream_as_completed() {
        let (end, _) = run(&[(None, Some(CHUNK)), (None, Some("[DONE]")), (None, Some(CHUNK))]);
        assert_eq!(end, Some((1, StreamEnd::completed())));
    }

    #[test]
    fn in_band_errors_and_error_events_end_it_as_stream_error() {
        let error = r#"{"error":{"message":"overloaded","type":"server_error","code":500}}"#;
        let (end, _) = run(&[(None, Some(CHUNK)), (None, Some(error))]);
        let (at, end) = end.unwrap();
        assert_eq!((at, end.outcome, end.error_type), (1, Outcome::StreamError, Some(ErrorKind::InBandError)));
        assert!(end.message.unwrap().ends_with("reported an error: overloaded"));
        assert_eq!(end.error_body.as_deref(), Some(r#"{"message":"overloaded","type":"server_error","code":500}"#));
        let (end, _) = run(&[(Some("error"), Some("upstream gone"))]);
        assert_eq!(end.unwrap().1.error_type, Some(ErrorKind::ErrorEvent));
        let (end, _) = run(&[(None, Some(r#"{"error":null,"choices":[]}"#))]);
        assert_eq!(end, None, "a null error member is no error");
    }

    #[test]
    fn empty_data_is_a_keep_alive_and_python_json_is_json() {
        let (end, judge) =
            run(&[(None, Some("")), (None, Some(r#"{"choices":[{"delta":{"content":"a"}}],"lp":NaN}"#)), (None, None)]);
        assert_eq!(end, None);
        assert_eq!(judge.closed().outcome, Outcome::Truncated);
    }

    #[test]
    fn non_json_and_non_object_data_are_invalid() {
        let (end, _) = run(&[(None, Some("{\"choices\": [")), (None, Some(CHUNK))]);
        assert_eq!(end.unwrap().1.outcome, Outcome::InvalidStream);
        let (end, _) = run(&[(None, Some("[1,2]"))]);
        assert_eq!(end.unwrap().1.message.as_deref(), Some("event 0: data is JSON but not an object"));
    }

    #[test]
    fn a_clean_close_is_completed_only_after_a_finish_reason() {
        let (_, judge) = run(&[(None, Some(CHUNK)), (None, Some(FINISH))]);
        assert_eq!(judge.closed(), StreamEnd::completed());
        let (_, judge) = run(&[(None, Some(CHUNK))]);
        let end = judge.closed();
        assert_eq!((end.outcome, end.error_type), (Outcome::Truncated, Some(ErrorKind::NoDoneOrFinish)));
        let end = Judge::default().closed();
        assert_eq!((end.outcome, end.error_type), (Outcome::InvalidStream, Some(ErrorKind::EmptyStream)));
    }

    #[test]
    fn an_empty_or_non_string_finish_reason_does_not_finish_a_stream() {
        for reason in ["\"\"", "false", "0", "{}", "\" \""] {
            let chunk = format!(r#"{{"choices":[{{"delta":{{"content":"a"}},"finish_reason":{reason}}}]}}"#);
            let (_, judge) = run(&[(None, Some(&chunk))]);
            assert_eq!(judge.closed().outcome, Outcome::Truncated, "{reason}");
        }
    }

    #[test]
    fn blocks_without_data_are_no_events() {
        let (_, judge) = run(&[(None, None), (None, None)]);
        assert_eq!(judge.closed().error_type, Some(ErrorKind::EmptyStream), "id-only blocks are no stream");
    }

    fn run_as_reference(events: &[(Option<&str>, Option<&str>)]) -> (Option<(usize, StreamEnd)>, Judge) {
        let mut judge = Judge::new(Rules::Reference);
        for (i, (name, data)) in events.iter().enumerate() {
            if let Some(end) = judge.observe(i as u32, *name, &Payload::of(*name, *data)) {
                return (Some((i, end)), judge);
            }
        }
        (None, judge)
    }

    #[test]
    fn the_references_rules_read_past_done_and_errors_and_complete_any_clean_close() {
        let error = r#"{"error":{"message":"overloaded"}}"#;
        let (end, judge) = run_as_reference(&[
            (None, Some(CHUNK)),
            (None, Some("[DONE]")),
            (Some("error"), Some(error)),
            (None, Some(CHUNK)),
        ]);
        assert_eq!(end, None);
        assert!(judge.done_seen());
        assert_eq!(judge.closed(), StreamEnd::completed());
        assert_eq!(Judge::new(Rules::Reference).closed(), StreamEnd::completed(), "even with no event");
        let (end, _) = run_as_reference(&[(None, Some(CHUNK)), (None, Some("[1]"))]);
        let (at, end) = end.unwrap();
        assert_eq!((at, end.outcome, end.error_type), (1, Outcome::TransportError, Some(ErrorKind::InvalidSse)));
    }

    #[test]
    fn caps_cut_on_character_boundaries() {
        assert_eq!(cap("abéd", 3), "ab");
        assert_eq!(cap("abc", 10), "abc");
    }
}
