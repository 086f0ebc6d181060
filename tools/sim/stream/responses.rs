//! The OpenAI Responses streaming grammar: one planned schedule dressed as `response.*`
//! events (see docs/reference/wire-apis.md and the official order):
//!
//! `response.created`, `response.in_progress`; when there is reasoning, the reasoning item
//! (`output_item.added`, `reasoning_summary_part.added`, `reasoning_summary_text.delta`×N,
//! `reasoning_summary_text.done`, `reasoning_summary_part.done`, `output_item.done`); the
//! message item (`output_item.added`, `content_part.added`, `output_text.delta`×N,
//! `output_text.done`, `content_part.done`, `output_item.done`); the terminal event
//! (`response.completed`, `response.incomplete` or `response.failed`) with the usage.
//!
//! Every event has `type` and (unless `dialect.no_indices`) a `sequence_number` from 0; item
//! events have `item_id` and `output_index`, content events `content_index`, summary events
//! `summary_index`.
use super::{first_half, halves, Context, EchoPlaced, Step, TRAILING};
use crate::chunk::responses::{event, text_delta};
use crate::fault::Fault;
use crate::profile::Dialect;
use crate::schedule::{Kind, Slot};
use crate::wire::Payload;
use serde_json::{json, Map, Value};

/// The message of a `response_failed` response's `response.error` and of an in-band `error`
/// event.
pub const FAILED_MESSAGE: &str = "The server had an error while processing your request. Sorry about that!";

#[derive(Clone, Copy, PartialEq)]
enum Phase {
    NotOpen,
    Open,
    Closed,
}

struct Render<'a> {
    cx: &'a Context<'a>,
    dialect: Dialect,
    seq: u64,
    steps: Vec<Step>,
    reasoning: Phase,
    message: Phase,
    /// The output index of each item, in the order they were opened.
    reasoning_index: usize,
    message_index: usize,
    reasoning_sent: String,
    answer_sent: String,
    echo: EchoPlaced,
}

impl<'a> Render<'a> {
    fn reasoning_id(&self) -> String {
        format!("rs_{}", self.cx.stem)
    }

    fn message_id(&self) -> String {
        format!("msg_{}", self.cx.stem)
    }

    fn indexed(&self) -> bool {
        !self.dialect.no_indices
    }

    fn next_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }

    /// Pushes one event of `ty` with `fields` at `at_ms`.
    fn push(&mut self, at_ms: f64, kind: Kind, ty: &str, fields: Value) {
        let seq = self.next_seq();
        let data = event(ty, Some(seq), fields, self.indexed()).to_string();
        self.push_data(at_ms, kind, ty, data);
    }

    fn push_data(&mut self, at_ms: f64, kind: Kind, ty: &str, data: String) {
        let lines = self.echo.lines(self.cx, kind, ty, data, self.dialect.data_only);
        self.steps.push(Step { at_ms, kind, payload: Payload::Lines(lines) });
    }

    /// The response object in `status`; the items and usage only once it has ended.
    fn response(&self, status: &str, ended: bool) -> Value {
        let cx = self.cx;
        let mut r = Map::new();
        r.insert("id".into(), cx.id.clone().into());
        r.insert("object".into(), "response".into());
        r.insert("created_at".into(), 0.into());
        r.insert("status".into(), status.into());
        r.insert("error".into(), Value::Null);
        r.insert("incomplete_details".into(), Value::Null);
        if let Some(model) = &cx.model {
            r.insert("model".into(), model.clone().into());
        }
        let output = if ended { self.output_items() } else { Vec::new() };
        r.insert("output".into(), output.into());
        r.insert("usage".into(), if ended { usage(cx) } else { Value::Null });
        Value::Object(r)
    }

    fn reasoning_item(&self, done: bool) -> Value {
        let text = &self.reasoning_sent;
        if self.dialect.reasoning_text {
            let content = if done { json!([{"type": "reasoning_text", "text": text}]) } else { json!([]) };
            json!({"id": self.reasoning_id(), "type": "reasoning", "summary": [], "content": content})
        } else {
            let summary = if done { json!([{"type": "summary_text", "text": text}]) } else { json!([]) };
            json!({"id": self.reasoning_id(), "type": "reasoning", "summary": summary})
        }
    }

    fn message_item(&self, status: &str) -> Value {
        let content = if status == "in_progress" {
            json!([])
        } else {
            json!([{"type": "output_text", "text": self.answer_sent, "annotations": []}])
        };
        json!({"id": self.message_id(), "type": "message", "role": "assistant", "status": status, "content": content})
    }

    fn output_items(&self) -> Vec<Value> {
        let mut items = Vec::new();
        if self.reasoning != Phase::NotOpen {
            items.push((self.reasoning_index, self.reasoning_item(true)));
        }
        if self.message != Phase::NotOpen {
            let status = if self.cx.incomplete { "incomplete" } else { "completed" };
            items.push((self.message_index, self.message_item(status)));
        }
        items.sort_by_key(|(i, _)| *i);
        items.into_iter().map(|(_, v)| v).collect()
    }

    fn open_reasoning(&mut self, at: f64) {
        self.reasoning = Phase::Open;
        self.reasoning_index = usize::from(self.message != Phase::NotOpen);
        let (id, index) = (self.reasoning_id(), self.reasoning_index);
        let item = self.reasoning_item(false);
        self.push(at, Kind::Structure, "response.output_item.added", json!({"output_index": index, "item": item}));
        if !self.dialect.reasoning_text {
            let part = json!({"type": "summary_text", "text": ""});
            let fields = json!({"item_id": id, "output_index": index, "summary_index": 0, "part": part});
            self.push(at, Kind::Structure, "response.reasoning_summary_part.added", fields);
        }
    }

    fn reasoning_delta(&mut self, at: f64, text: &str) {
        if self.reasoning == Phase::NotOpen {
            self.open_reasoning(at);
        }
        self.reasoning_sent.push_str(text);
        let (id, index) = (self.reasoning_id(), self.reasoning_index);
        if self.dialect.reasoning_text {
            let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "delta": text});
            self.push(at, Kind::Reasoning, "response.reasoning_text.delta", fields);
        } else {
            let fields = json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": text});
            self.push(at, Kind::Reasoning, "response.reasoning_summary_text.delta", fields);
        }
    }

    fn close_reasoning(&mut self, at: f64) {
        if self.reasoning != Phase::Open {
            return;
        }
        self.reasoning = Phase::Closed;
        let (id, index, text) = (self.reasoning_id(), self.reasoning_index, self.reasoning_sent.clone());
        if self.dialect.reasoning_text {
            let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "text": text});
            self.push(at, Kind::Structure, "response.reasoning_text.done", fields);
        } else {
            let fields = json!({"item_id": id, "output_index": index, "summary_index": 0, "text": text});
            self.push(at, Kind::Structure, "response.reasoning_summary_text.done", fields);
            let part = json!({"type": "summary_text", "text": text});
            let fields = json!({"item_id": id, "output_index": index, "summary_index": 0, "part": part});
            self.push(at, Kind::Structure, "response.reasoning_summary_part.done", fields);
        }
        let item = self.reasoning_item(true);
        self.push(at, Kind::Structure, "response.output_item.done", json!({"output_index": index, "item": item}));
    }

    /// Before an answer delta: the reasoning item closed (unless the dialect closes it late)
    /// and the message item opened.
    fn open_message(&mut self, at: f64) {
        if self.message != Phase::NotOpen {
            return;
        }
        if !self.dialect.reasoning_closed_late {
            self.close_reasoning(at);
        }
        self.message = Phase::Open;
        self.message_index = usize::from(self.reasoning != Phase::NotOpen);
        let (id, index) = (self.message_id(), self.message_index);
        let item = self.message_item("in_progress");
        self.push(at, Kind::Structure, "response.output_item.added", json!({"output_index": index, "item": item}));
        let part = json!({"type": "output_text", "text": "", "annotations": []});
        let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "part": part});
        self.push(at, Kind::Structure, "response.content_part.added", fields);
    }

    fn delta_data(&mut self, text: &str) -> String {
        let seq = self.next_seq();
        text_delta(seq, &self.message_id(), self.message_index, text, self.indexed()).to_string()
    }

    /// The closing events at the finish: the reasoning item if still open, then the message
    /// item's (opened first if no answer delta came).
    fn finish(&mut self, at: f64) {
        let late = self.reasoning == Phase::Open;
        self.open_message(at);
        if late {
            self.close_reasoning(at);
        }
        let (id, index, text) = (self.message_id(), self.message_index, self.answer_sent.clone());
        let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "text": text, "logprobs": []});
        self.push(at, Kind::Finish, "response.output_text.done", fields);
        let part = json!({"type": "output_text", "text": text, "annotations": []});
        let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "part": part});
        self.push(at, Kind::Structure, "response.content_part.done", fields);
        self.message = Phase::Closed;
        let status = if self.cx.incomplete { "incomplete" } else { "completed" };
        let item = self.message_item(status);
        self.push(at, Kind::Structure, "response.output_item.done", json!({"output_index": index, "item": item}));
    }

    fn terminal(&mut self, at: f64) {
        let (ty, status) = if self.cx.incomplete {
            ("response.incomplete", "incomplete")
        } else {
            ("response.completed", "completed")
        };
        let mut response = self.response(status, true);
        if self.cx.incomplete {
            response["incomplete_details"] = json!({"reason": "max_output_tokens"});
        }
        self.push(at, Kind::Done, ty, json!({"response": response}));
        if self.dialect.done_after_terminal {
            self.steps.push(Step { at_ms: at, kind: Kind::Done, payload: Payload::data("[DONE]") });
        }
    }

    fn slot(&mut self, slot: &Slot) {
        let cx = self.cx;
        let at = slot.at_ms;
        let data_only = self.dialect.data_only;
        match slot.kind {
            Kind::Role => {
                let response = self.response("in_progress", false);
                self.push(at, Kind::Role, "response.created", json!({"response": response}));
                self.push(at, Kind::Structure, "response.in_progress", json!({"response": response}));
            }
            Kind::Echo => {
                // The credentials as the SSE event name of an event whose JSON names its type.
                let Some(e) = cx.echoed.clone() else { return };
                let seq = self.next_seq();
                let fields = json!({"response": self.response("in_progress", false)});
                let data = event("response.in_progress", Some(seq), fields, self.indexed()).to_string();
                let lines = vec![format!("event: {e}"), format!("data: {data}")];
                self.steps.push(Step { at_ms: at, kind: Kind::Echo, payload: Payload::Lines(lines) });
            }
            Kind::Reasoning => self.reasoning_delta(at, &cx.req.reasoning.chunks[slot.index].0),
            Kind::Answer => {
                self.open_message(at);
                let text = cx.answer(slot.index);
                self.answer_sent.push_str(text);
                let data = self.delta_data(text);
                self.push_data(at, Kind::Answer, "response.output_text.delta", data);
            }
            Kind::Malformed => {
                self.open_message(at);
                let data = self.delta_data(cx.answer(slot.index));
                let cut = first_half(&data).to_string();
                self.push_data(at, Kind::Malformed, "response.output_text.delta", cut);
            }
            Kind::KeepAlive => {
                let line = if slot.index == 0 { ":" } else { ": keep-alive" };
                self.steps.push(Step { at_ms: at, kind: Kind::KeepAlive, payload: Payload::Lines(vec![line.into()]) });
            }
            Kind::Oversized | Kind::Unterminated => {
                self.open_message(at);
                let data = self.delta_data("");
                let (before, after) = halves(&data, "delta");
                let end = cx.req.profile.line_ending.as_str();
                let event_line =
                    if data_only { String::new() } else { format!("event: response.output_text.delta{end}") };
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
            Kind::Error if cx.req.draw.fault == Fault::ResponseFailed => {
                let mut response = self.response("failed", true);
                response["error"] = json!({"code": "server_error", "message": FAILED_MESSAGE});
                self.push(at, Kind::Error, "response.failed", json!({"response": response}));
            }
            Kind::Error => {
                let fields = json!({"code": "server_error", "message": FAILED_MESSAGE, "param": null});
                self.push(at, Kind::Error, "error", fields);
            }
            Kind::Finish => self.finish(at),
            // The usage goes in the terminal event.
            Kind::Usage => {}
            Kind::Done => self.terminal(at),
            Kind::Trailing => {
                let data = self.delta_data(TRAILING);
                self.push_data(at, Kind::Trailing, "response.output_text.delta", data);
            }
            Kind::Abort | Kind::End | Kind::Hang => {
                self.steps.push(Step { at_ms: at, kind: slot.kind, payload: Payload::Nothing })
            }
            Kind::Structure => {}
        }
    }
}

/// `response.usage`.
fn usage(cx: &Context) -> Value {
    let c = cx.counts;
    json!({
        "input_tokens": c.prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": c.completion,
        "output_tokens_details": {"reasoning_tokens": c.reasoning},
        "total_tokens": c.prompt + c.completion,
    })
}

/// The events of the schedule's slots.
pub fn steps(cx: &Context, slots: &[Slot]) -> Vec<Step> {
    let mut r = Render {
        cx,
        dialect: cx.req.profile.dialect,
        seq: 0,
        steps: Vec::new(),
        reasoning: Phase::NotOpen,
        message: Phase::NotOpen,
        reasoning_index: 0,
        message_index: 0,
        reasoning_sent: String::new(),
        answer_sent: String::new(),
        echo: EchoPlaced::default(),
    };
    for slot in slots {
        r.slot(slot);
    }
    r.steps
}

/// The non-streaming response of a `non_sse` `json` fault: the completed response object.
pub fn whole(cx: &Context) -> Value {
    let mut r = Render {
        cx,
        dialect: cx.req.profile.dialect,
        seq: 0,
        steps: Vec::new(),
        reasoning: if cx.req.reasoning.chunks.is_empty() { Phase::NotOpen } else { Phase::Closed },
        message: Phase::Closed,
        reasoning_index: 0,
        message_index: usize::from(!cx.req.reasoning.chunks.is_empty()),
        reasoning_sent: cx.reasoning_text(),
        answer_sent: cx.answer_text(),
        // A whole response, not a stream: no echo to place.
        echo: EchoPlaced { started: true, fingerprinted: true },
    };
    r.dialect.reasoning_text = false;
    r.response("completed", true)
}
