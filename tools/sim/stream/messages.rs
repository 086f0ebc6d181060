//! The Anthropic Messages streaming grammar: one planned schedule dressed as Messages events
//! (see docs/reference/wire-apis.md and the official order):
//!
//! `message_start` (usage: the input tokens, 1 output token), `ping`; when there is
//! reasoning, the thinking block at index 0 (`content_block_start` of type `thinking`,
//! `thinking_delta`s, `signature_delta`, `content_block_stop`); the text block
//! (`content_block_start` of type `text`, `text_delta`s, `content_block_stop`);
//! `message_delta` (`stop_reason`, cumulative usage), `message_stop`. Every event's SSE name
//! is its JSON `type`.
use super::{first_half, halves, Context, EchoPlaced, Step, TRAILING};
use crate::chunk::messages::text_delta;
use crate::profile::Dialect;
use crate::schedule::{Kind, Slot};
use crate::wire::Payload;
use serde_json::{json, Value};

/// The data of the in-band error (Anthropic's `overloaded_error`, which is HTTP 529 outside a
/// stream).
pub const STREAM_ERROR: &str = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

/// The placeholder signature that closes a thinking block.
pub const SIGNATURE: &str = "ib-sim-signature";

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    NotOpen,
    Open,
    Closed,
}

struct Render<'a> {
    cx: &'a Context<'a>,
    dialect: Dialect,
    steps: Vec<Step>,
    thinking: Phase,
    text: Phase,
    thinking_index: usize,
    text_index: usize,
    /// Whether the `message_delta` is out.
    delta_sent: bool,
    echo: EchoPlaced,
}

impl Render<'_> {
    fn push(&mut self, at_ms: f64, kind: Kind, data: Value) {
        let ty = data["type"].as_str().unwrap_or("message").to_string();
        self.push_data(at_ms, kind, &ty, data.to_string());
    }

    fn push_data(&mut self, at_ms: f64, kind: Kind, ty: &str, data: String) {
        let lines = self.echo.lines(self.cx, kind, ty, data, self.dialect.data_only);
        self.steps.push(Step { at_ms, kind, payload: Payload::Lines(lines) });
    }

    fn stop_reason(&self) -> &'static str {
        if self.cx.incomplete {
            "max_tokens"
        } else {
            "end_turn"
        }
    }

    fn open_thinking(&mut self, at: f64) {
        self.thinking = Phase::Open;
        self.thinking_index = usize::from(self.text != Phase::NotOpen);
        let block = json!({"type": "thinking", "thinking": ""});
        let data = json!({"type": "content_block_start", "index": self.thinking_index, "content_block": block});
        self.push(at, Kind::Structure, data);
    }

    fn close_thinking(&mut self, at: f64) {
        if self.thinking != Phase::Open {
            return;
        }
        self.thinking = Phase::Closed;
        let index = self.thinking_index;
        let delta = json!({"type": "signature_delta", "signature": SIGNATURE});
        self.push(at, Kind::Structure, json!({"type": "content_block_delta", "index": index, "delta": delta}));
        self.push(at, Kind::Structure, json!({"type": "content_block_stop", "index": index}));
    }

    /// Before a text delta: the thinking block stopped (unless the dialect stops it late) and
    /// the text block started.
    fn open_text(&mut self, at: f64) {
        if self.text != Phase::NotOpen {
            return;
        }
        if !self.dialect.reasoning_closed_late {
            self.close_thinking(at);
        }
        self.text = Phase::Open;
        self.text_index = usize::from(self.thinking != Phase::NotOpen);
        let block = json!({"type": "text", "text": ""});
        self.push(
            at,
            Kind::Structure,
            json!({"type": "content_block_start", "index": self.text_index, "content_block": block}),
        );
    }

    fn message_delta(&mut self, at: f64) {
        self.delta_sent = true;
        let c = self.cx.counts;
        let usage = if self.dialect.usage_at_end {
            json!({"input_tokens": c.prompt, "output_tokens": c.completion})
        } else {
            json!({"output_tokens": c.completion})
        };
        let delta = json!({"stop_reason": self.stop_reason(), "stop_sequence": null});
        self.push(at, Kind::Usage, json!({"type": "message_delta", "delta": delta, "usage": usage}));
    }

    fn slot(&mut self, slot: &Slot) {
        let cx = self.cx;
        let at = slot.at_ms;
        match slot.kind {
            Kind::Role => {
                let message = message(cx, self.dialect, Vec::new(), None);
                self.push(at, Kind::Role, json!({"type": "message_start", "message": message}));
                if !self.dialect.no_ping {
                    self.push(at, Kind::Structure, json!({"type": "ping"}));
                }
            }
            Kind::Echo => {
                // The credentials as the SSE event name of a ping (whose JSON names its type).
                let Some(e) = cx.echoed.as_deref() else { return };
                let lines = vec![format!("event: {e}"), r#"data: {"type":"ping"}"#.to_string()];
                self.steps.push(Step { at_ms: at, kind: Kind::Echo, payload: Payload::Lines(lines) });
            }
            Kind::Reasoning => {
                if self.thinking == Phase::NotOpen {
                    self.open_thinking(at);
                }
                let text = &cx.req.reasoning.chunks[slot.index].0;
                let delta = json!({"type": "thinking_delta", "thinking": text});
                self.push(
                    at,
                    Kind::Reasoning,
                    json!({"type": "content_block_delta", "index": self.thinking_index, "delta": delta}),
                );
            }
            Kind::Answer => {
                self.open_text(at);
                self.push(at, Kind::Answer, text_delta(self.text_index, cx.answer(slot.index)));
            }
            Kind::Malformed => {
                self.open_text(at);
                let data = text_delta(self.text_index, cx.answer(slot.index)).to_string();
                self.push_data(at, Kind::Malformed, "content_block_delta", first_half(&data).to_string());
            }
            Kind::KeepAlive => self.push(at, Kind::KeepAlive, json!({"type": "ping"})),
            Kind::Oversized | Kind::Unterminated => {
                self.open_text(at);
                let data = text_delta(self.text_index, "").to_string();
                let (before, after) = halves(&data, "text");
                let end = cx.req.profile.line_ending.as_str();
                let event_line =
                    if self.dialect.data_only { String::new() } else { format!("event: content_block_delta{end}") };
                let data_prefix = format!("data: {before}");
                let payload = if slot.kind == Kind::Oversized {
                    let size = (data_prefix.len() + after.len()) as u64;
                    let filler = cx.req.profile.faults.oversized_bytes.saturating_sub(size);
                    Payload::Oversized { prefix: format!("{event_line}{data_prefix}"), filler, suffix: after }
                } else {
                    Payload::Unterminated { prefix: format!("{event_line}{data_prefix}") }
                };
                self.steps.push(Step { at_ms: at, kind: slot.kind, payload });
            }
            // in_band_error, error_event and response_failed alike: the overloaded error.
            Kind::Error => self.push_data(at, Kind::Error, "error", STREAM_ERROR.to_string()),
            Kind::Finish => {
                let late = self.thinking == Phase::Open;
                self.open_text(at);
                if late {
                    self.close_thinking(at);
                }
                self.text = Phase::Closed;
                self.push(at, Kind::Finish, json!({"type": "content_block_stop", "index": self.text_index}));
            }
            Kind::Usage => self.message_delta(at),
            Kind::Done => {
                if !self.delta_sent {
                    self.message_delta(at);
                }
                self.push(at, Kind::Done, json!({"type": "message_stop"}));
            }
            Kind::Trailing => self.push(at, Kind::Trailing, text_delta(self.text_index, TRAILING)),
            Kind::Abort | Kind::End | Kind::Hang => {
                self.steps.push(Step { at_ms: at, kind: slot.kind, payload: Payload::Nothing })
            }
            Kind::Structure => {}
        }
    }
}

/// The message object: of `message_start` (`content` empty, no stop reason, usage so far) or
/// of a whole non-streaming answer.
fn message(cx: &Context, dialect: Dialect, content: Vec<Value>, stop_reason: Option<&str>) -> Value {
    let c = cx.counts;
    let usage = match stop_reason {
        Some(_) => json!({"input_tokens": c.prompt, "output_tokens": c.completion}),
        None if dialect.usage_at_end => json!({"input_tokens": 0, "output_tokens": 0}),
        None => json!({"input_tokens": c.prompt, "output_tokens": 1}),
    };
    let mut m = serde_json::Map::new();
    m.insert("id".into(), cx.id.clone().into());
    m.insert("type".into(), "message".into());
    m.insert("role".into(), "assistant".into());
    if let Some(model) = &cx.model {
        m.insert("model".into(), model.clone().into());
    }
    m.insert("content".into(), content.into());
    m.insert("stop_reason".into(), stop_reason.into());
    m.insert("stop_sequence".into(), Value::Null);
    m.insert("usage".into(), usage);
    Value::Object(m)
}

/// The events of the schedule's slots.
pub fn steps(cx: &Context, slots: &[Slot]) -> Vec<Step> {
    let mut r = Render {
        cx,
        dialect: cx.req.profile.dialect,
        steps: Vec::new(),
        thinking: Phase::NotOpen,
        text: Phase::NotOpen,
        thinking_index: 0,
        text_index: 0,
        delta_sent: false,
        echo: EchoPlaced::default(),
    };
    for slot in slots {
        r.slot(slot);
    }
    r.steps
}

/// The non-streaming answer of a `non_sse` `json` fault: the whole message.
pub fn whole(cx: &Context) -> Value {
    let mut content = Vec::new();
    if !cx.req.reasoning.chunks.is_empty() {
        content.push(json!({"type": "thinking", "thinking": cx.reasoning_text(), "signature": SIGNATURE}));
    }
    content.push(json!({"type": "text", "text": cx.answer_text()}));
    message(cx, Dialect::default(), content, Some("end_turn"))
}
