//! The response to one request, planned as a pure value (so every fault's wire format is
//! unit-testable without a network): the response head, when it goes out, and the timed
//! events of the body in the grammar of the request's wire API: the OpenAI chunk format here,
//! the Responses and Messages grammars in `stream/responses.rs` and `stream/messages.rs`,
//! every one dressing the same schedule. `play.rs` plays it against the clock.
use crate::chunk::Chunker;
use crate::credential::{escape_all, Echo};
use crate::draw::Draw;
use crate::fault::{Fault, NonSseKind};
use crate::profile::Profile;
use crate::schedule::{schedule, Kind, Slot};
use crate::wire::Payload;
use inferbench_contract::vocab::WireApi;
use inferbench_sim::answer::Chunks;
use serde_json::{json, Map, Value};

pub mod messages;
pub mod responses;

/// One event: when (profile-time ms from receipt), what, and what it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub at_ms: f64,
    pub kind: Kind,
    pub payload: Payload,
}

/// The status line and headers of a response, and its body when that is not a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub status: u16,
    pub content_type: Option<&'static str>,
    /// The `x-request-id` header.
    pub request_id: String,
    pub body: HeadBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum HeadBody {
    /// The planned events, each written at its time.
    Stream,
    /// The whole body with the headers (`content-length` set).
    Full(String),
    /// No body (`content-length: 0`, or none at all for 204).
    Empty,
}

/// A planned response.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub head: Head,
    /// When the head (and a `Full` body) goes out, profile ms from receipt.
    pub headers_at_ms: f64,
    pub steps: Vec<Step>,
}

/// Everything the plan depends on besides the draw.
pub struct Request<'a> {
    pub profile: &'a Profile,
    pub draw: &'a Draw,
    /// `chatcmpl-…`, the same in every chunk (Responses: `resp_…`, Messages: `msg_…`, the
    /// response's or message's id; the item ids are made of what follows the `_`).
    pub id: &'a str,
    pub answer: &'a Chunks,
    pub reasoning: &'a Chunks,
    pub prompt_tokens: usize,
    /// Whether the stream ends with a usage chunk. (Responses and Messages carry usage in
    /// their terminal events either way.)
    pub usage: bool,
    /// The credentials to echo (`credential_echo` with a request that carried some).
    pub echo: Option<&'a Echo>,
}

/// The model id a `wrong_model` fault echoes: a plausible deployment mix-up.
pub fn wrong_model(model: &str) -> String {
    format!("{model}-fp8")
}

/// The error object of `in_band_error` and `error_event`, as OpenAI writes it mid-stream.
pub const STREAM_ERROR: &str = r#"{"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "code": 500}}"#;

/// The exact start of an `unterminated_line` event.
pub const UNTERMINATED_PREFIX: &str = r#"data: {"choices":[{"delta":{"content":""#;

/// The content of the `data_after_done` chunk.
pub const TRAILING: &str = "TRAILING";

/// The page of a `non_sse` `html` response: what a CDN or gateway in front of a provider
/// answers when the upstream is gone.
const HTML_PAGE: [&str; 6] = [
    "<!DOCTYPE html>",
    "<html><head><title>502 Bad Gateway</title></head>",
    "<body><h1>502 Bad Gateway</h1>",
    "<p>The upstream server returned an invalid response.</p>",
    "</body></html>",
    "",
];

/// The token counts of a response, the same on every API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub prompt: usize,
    /// Every output token: the answer's sent and the reasoning's.
    pub completion: usize,
    pub reasoning: usize,
}

/// The counts of a planned response: the whole answer, or for `response_incomplete` the
/// answer tokens sent before the ceiling.
fn counts(req: &Request, slots: &[Slot]) -> Counts {
    let answer = match req.draw.fault {
        Fault::ResponseIncomplete => {
            slots.iter().filter(|s| s.kind == Kind::Answer).map(|s| req.answer.chunks[s.index].1).max().unwrap_or(0)
        }
        _ => req.answer.token_count,
    };
    Counts {
        prompt: req.prompt_tokens,
        completion: answer + req.reasoning.token_count,
        reasoning: req.reasoning.token_count,
    }
}

fn usage_object(counts: Counts) -> Value {
    let completion = counts.completion;
    json!({
        "prompt_tokens": counts.prompt,
        "completion_tokens": completion,
        "total_tokens": counts.prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": counts.reasoning},
    })
}

fn joined(chunks: &Chunks) -> String {
    chunks.chunks.iter().map(|(t, _)| t.as_str()).collect()
}

/// The chat completions plan of `req`.
#[cfg(test)]
pub fn plan(req: &Request) -> Plan {
    plan_for(req, WireApi::ChatCompletions)
}

/// What every grammar's renderer shares: the request, and what the plan drew from it.
pub struct Context<'a> {
    pub req: &'a Request<'a>,
    /// The credentials echoed, `.`-joined (`credential_echo` with a request that carried some).
    pub echoed: Option<String>,
    /// The model every event names (`None`: `no_model`).
    pub model: Option<String>,
    /// The response's id.
    pub id: String,
    /// What the item ids are made of: the id after its prefix (`resp_`, `msg_`), or the
    /// echoed credentials.
    pub stem: String,
    pub counts: Counts,
    /// Whether the answer stops at the token ceiling (`response_incomplete`).
    pub incomplete: bool,
}

impl Context<'_> {
    /// The answer chunk `i` (empty past the end).
    pub fn answer(&self, i: usize) -> &str {
        self.req.answer.chunks.get(i).map(|(t, _)| t.as_str()).unwrap_or("")
    }

    /// The whole answer.
    pub fn answer_text(&self) -> String {
        joined(self.req.answer)
    }

    pub fn reasoning_text(&self) -> String {
        joined(self.req.reasoning)
    }

    /// The lines an event carries before its own: on the first event of a `credential_echo`
    /// stream, the credentials as an SSE comment and an SSE id.
    pub fn echo_lines(&self) -> Vec<String> {
        match &self.echoed {
            Some(e) => vec![format!(": {e}"), format!("id: {e}")],
            None => Vec::new(),
        }
    }
}

/// Where a Responses or Messages stream stands with the echo of a `credential_echo` request:
/// its comment and id go before the first event, its fingerprint into the first closing one.
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoPlaced {
    pub started: bool,
    pub fingerprinted: bool,
}

impl EchoPlaced {
    /// The SSE lines of one event of `ty` with JSON `data`, the echo placed as it falls due.
    pub fn lines(&mut self, cx: &Context, kind: Kind, ty: &str, data: String, data_only: bool) -> Vec<String> {
        let data = if kind == Kind::Finish && !self.fingerprinted {
            self.fingerprinted = true;
            with_fingerprint(data, cx.echoed.as_deref())
        } else {
            data
        };
        let mut lines = if self.started { Vec::new() } else { cx.echo_lines() };
        self.started = true;
        lines.extend(sse(ty, &data, data_only));
        lines
    }
}

/// The SSE lines of one JSON event: `event: <type>` (unless the dialect is data-only), then
/// its data.
pub fn sse(ty: &str, data: &str, data_only: bool) -> Vec<String> {
    let mut lines = Vec::with_capacity(2);
    if !data_only {
        lines.push(format!("event: {ty}"));
    }
    lines.push(format!("data: {data}"));
    lines
}

/// `json` with `"system_fingerprint": <the echoed credentials, \u-escaped>` spliced in as its
/// last member (as text: serde_json would write the characters as they are).
pub fn with_fingerprint(json: String, echoed: Option<&str>) -> String {
    match echoed {
        Some(e) => {
            let mut json = json;
            json.pop();
            json.push_str(&format!(",\"system_fingerprint\":\"{}\"}}", escape_all(e)));
            json
        }
        None => json,
    }
}

/// A delta event of `data` cut in two around its (empty) text member `"key":""`, so that
/// `before + text + after` is the event of `text`: for the oversized and unterminated lines.
pub fn halves(data: &str, key: &str) -> (String, String) {
    let pat = format!("\"{key}\":\"");
    // The first match is the key: inside any string value its quotes would be escaped.
    let at = data.find(&pat).map(|i| i + pat.len()).unwrap_or(data.len());
    (data[..at].to_string(), data[at..].to_string())
}

/// The plan of `req` in the grammar of `api`: the same schedule, the same chunks and the same
/// fault, each API's events.
pub fn plan_for(req: &Request, api: WireApi) -> Plan {
    let (profile, draw) = (req.profile, req.draw);
    let echoed = req.echo.map(Echo::joined);
    let model = match draw.fault {
        Fault::WrongModel => Some(wrong_model(&profile.model)),
        Fault::NoModel => None,
        _ => Some(profile.model.clone()),
    };
    let id = match &echoed {
        Some(e) => format!("chatcmpl-{e}"),
        None => req.id.to_string(),
    };
    let c = Chunker { id, model, reasoning_field: &profile.reasoning_field };
    let request_id = match &echoed {
        Some(e) => format!("req-{e}"),
        None => req.id.to_string(),
    };
    let ends: Vec<usize> = req.answer.chunks.iter().map(|(_, end)| *end).collect();
    let sched = schedule(profile, draw, req.reasoning.chunks.len(), &ends, req.usage);
    let counts = counts(req, &sched.slots);
    let mut head = Head { status: 200, content_type: Some("text/event-stream"), request_id, body: HeadBody::Stream };
    if api != WireApi::ChatCompletions {
        let id = match &echoed {
            Some(e) => format!("{}{e}", if api == WireApi::Responses { "resp_" } else { "msg_" }),
            None => req.id.to_string(),
        };
        let stem = match &echoed {
            Some(e) => e.clone(),
            None => req.id.split_once('_').map(|(_, stem)| stem).unwrap_or(req.id).to_string(),
        };
        let incomplete = draw.fault == Fault::ResponseIncomplete;
        let cx = Context { req, echoed, model: c.model.clone(), id, stem, counts, incomplete };
        if draw.fault == Fault::NonSse {
            non_sse(&mut head, &cx, api);
        }
        let steps = match api {
            WireApi::Responses => responses::steps(&cx, &sched.slots),
            _ => messages::steps(&cx, &sched.slots),
        };
        return Plan { head, headers_at_ms: sched.headers_at_ms, steps };
    }
    if draw.fault == Fault::NonSse {
        match profile.faults.non_sse_kind {
            NonSseKind::Json => {
                let mut message = Map::new();
                message.insert("role".into(), "assistant".into());
                message.insert("content".into(), joined(req.answer).into());
                if !req.reasoning.chunks.is_empty() {
                    message.insert(profile.reasoning_field.clone(), joined(req.reasoning).into());
                }
                let choices = json!([{"index": 0, "message": message, "finish_reason": "stop"}]);
                let mut object = c.object("chat.completion", choices);
                object.insert("usage".into(), usage_object(counts));
                head.content_type = Some("application/json");
                head.body = HeadBody::Full(Value::Object(object).to_string());
            }
            kind => not_a_stream(&mut head, kind, profile),
        }
    }
    let answer = |i: usize| req.answer.chunks.get(i).map(|(t, _)| t.as_str()).unwrap_or("");
    let steps = sched
        .slots
        .into_iter()
        // With no credential in the request there is nothing to echo: a normal stream.
        .filter(|slot| slot.kind != Kind::Echo || echoed.is_some())
        .map(|slot| {
            let payload = match slot.kind {
                Kind::Role => {
                    let data = format!("data: {}", c.chunk(json!({"role": "assistant", "content": ""}), None));
                    match &echoed {
                        Some(e) => Payload::Lines(vec![format!(": {e}"), format!("id: {e}"), data]),
                        None => Payload::Lines(vec![data]),
                    }
                }
                Kind::Echo => Payload::Lines(vec![
                    format!("event: {}", echoed.as_deref().unwrap_or("message")),
                    format!("data: {}", c.chunk(json!({}), None)),
                ]),
                Kind::Reasoning => Payload::data(&c.reasoning(&req.reasoning.chunks[slot.index].0)),
                Kind::Answer => Payload::data(&c.content(answer(slot.index))),
                // A chunk cut short: what a proxy that truncates frames produces.
                Kind::Malformed => Payload::data(first_half(&c.content(answer(slot.index)))),
                Kind::KeepAlive => Payload::Lines(vec![if slot.index == 0 { "data:" } else { "data: " }.into()]),
                Kind::Oversized => {
                    let (before, after) = c.content_halves();
                    let prefix = format!("data: {before}");
                    let filler = profile.faults.oversized_bytes.saturating_sub((prefix.len() + after.len()) as u64);
                    Payload::Oversized { prefix, filler, suffix: after }
                }
                Kind::Unterminated => Payload::Unterminated { prefix: UNTERMINATED_PREFIX.into() },
                Kind::Error if draw.fault == Fault::ErrorEvent => {
                    Payload::Lines(vec!["event: error".into(), format!("data: {STREAM_ERROR}")])
                }
                Kind::Error => Payload::data(STREAM_ERROR),
                Kind::Finish => {
                    let reason = if draw.fault == Fault::ResponseIncomplete { "length" } else { "stop" };
                    let mut finish = c.chunk(json!({}), Some(reason));
                    if let Some(e) = &echoed {
                        // Spliced in as text: serde_json would write the characters as they are.
                        finish.pop();
                        finish.push_str(&format!(",\"system_fingerprint\":\"{}\"}}", escape_all(e)));
                    }
                    Payload::data(&finish)
                }
                Kind::Usage => {
                    let mut object = c.object("chat.completion.chunk", json!([]));
                    object.insert("usage".into(), usage_object(counts));
                    Payload::data(&Value::Object(object).to_string())
                }
                Kind::Done => Payload::data("[DONE]"),
                Kind::Trailing => Payload::data(&c.content(TRAILING)),
                Kind::Abort | Kind::End | Kind::Hang | Kind::Structure => Payload::Nothing,
            };
            Step { at_ms: slot.at_ms, kind: slot.kind, payload }
        })
        .collect();
    Plan { head, headers_at_ms: sched.headers_at_ms, steps }
}

/// A `non_sse` fault's head on Responses and Messages: the error pages and empty bodies of
/// chat completions, and for `json` the API's own non-streaming answer.
fn non_sse(head: &mut Head, cx: &Context, api: WireApi) {
    let profile = cx.req.profile;
    match profile.faults.non_sse_kind {
        NonSseKind::Json => {
            let body = match api {
                WireApi::Responses => responses::whole(cx),
                _ => messages::whole(cx),
            };
            head.content_type = Some("application/json");
            head.body = HeadBody::Full(body.to_string());
        }
        kind => not_a_stream(head, kind, profile),
    }
}

/// The head of a `non_sse` fault that is the same on every API: an HTML error page, an empty
/// 200 body, or a 204 (`json` is each API's own non-streaming answer).
fn not_a_stream(head: &mut Head, kind: NonSseKind, profile: &Profile) {
    match kind {
        NonSseKind::Html => {
            head.content_type = Some("text/html; charset=utf-8");
            head.body = HeadBody::Full(HTML_PAGE.join(profile.line_ending.as_str()));
        }
        NonSseKind::Empty => head.body = HeadBody::Empty,
        NonSseKind::Json => unreachable!("each API writes its own non-streaming answer"),
        NonSseKind::NoContent => {
            head.status = 204;
            head.content_type = None;
            head.body = HeadBody::Empty;
        }
    }
}

/// The first half of `s`, cut on a character boundary.
pub fn first_half(s: &str) -> &str {
    let mut cut = s.len() / 2;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod grammar_tests;
