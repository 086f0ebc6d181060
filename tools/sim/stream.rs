//! The response to one request, planned as a pure value (so every fault's wire format is
//! unit-testable without a network): the response head, when it goes out, and the timed
//! events of the body in the OpenAI chunk format. `play.rs` plays it against the clock.
use crate::chunk::Chunker;
use crate::credential::{escape_all, Echo};
use crate::draw::Draw;
use crate::fault::{Fault, NonSseKind};
use crate::profile::Profile;
use crate::schedule::{schedule, Kind};
use crate::wire::Payload;
use inferbench_sim::answer::Chunks;
use serde_json::{json, Map, Value};

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
    /// `chatcmpl-…`, the same in every chunk.
    pub id: &'a str,
    pub answer: &'a Chunks,
    pub reasoning: &'a Chunks,
    pub prompt_tokens: usize,
    /// Whether the stream ends with a usage chunk.
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

fn usage_object(req: &Request) -> Value {
    let completion = req.answer.token_count + req.reasoning.token_count;
    json!({
        "prompt_tokens": req.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": req.prompt_tokens + completion,
        "completion_tokens_details": {"reasoning_tokens": req.reasoning.token_count},
    })
}

fn joined(chunks: &Chunks) -> String {
    chunks.chunks.iter().map(|(t, _)| t.as_str()).collect()
}

pub fn plan(req: &Request) -> Plan {
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
    let mut head = Head { status: 200, content_type: Some("text/event-stream"), request_id, body: HeadBody::Stream };
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
                object.insert("usage".into(), usage_object(req));
                head.content_type = Some("application/json");
                head.body = HeadBody::Full(Value::Object(object).to_string());
            }
            NonSseKind::Html => {
                head.content_type = Some("text/html; charset=utf-8");
                head.body = HeadBody::Full(HTML_PAGE.join(profile.line_ending.as_str()));
            }
            NonSseKind::Empty => head.body = HeadBody::Empty,
            NonSseKind::NoContent => {
                head.status = 204;
                head.content_type = None;
                head.body = HeadBody::Empty;
            }
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
                    let mut finish = c.chunk(json!({}), Some("stop"));
                    if let Some(e) = &echoed {
                        // Spliced in as text: serde_json would write the characters as they are.
                        finish.pop();
                        finish.push_str(&format!(",\"system_fingerprint\":\"{}\"}}", escape_all(e)));
                    }
                    Payload::data(&finish)
                }
                Kind::Usage => {
                    let mut object = c.object("chat.completion.chunk", json!([]));
                    object.insert("usage".into(), usage_object(req));
                    Payload::data(&Value::Object(object).to_string())
                }
                Kind::Done => Payload::data("[DONE]"),
                Kind::Trailing => Payload::data(&c.content(TRAILING)),
                Kind::Abort | Kind::End | Kind::Hang => Payload::Nothing,
            };
            Step { at_ms: slot.at_ms, kind: slot.kind, payload }
        })
        .collect();
    Plan { head, headers_at_ms: sched.headers_at_ms, steps }
}

/// The first half of `s`, cut on a character boundary.
fn first_half(s: &str) -> &str {
    let mut cut = s.len() / 2;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

#[cfg(test)]
mod tests;
