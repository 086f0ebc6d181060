//! The events one request's stream carries on its provider's wire API, in that API's grammar
//! (docs/reference/wire-apis.md): the same logical steps (the response opened, reasoning
//! deltas, answer deltas, the finish, the usage, the terminal event, or a failure's break)
//! dressed as chat completions chunks, Responses `response.*` events or Messages events, with
//! the structural events each grammar puts between them, in the official order ib-sim sends.
//!
//! Chat completions chunks are written with `format!` (the large synthetic runs are chat and
//! their bytes stay what they were); the other grammars' events, rarer here, with `json!`.
use inferbench_contract::vocab::WireApi;
use serde_json::{json, Value};

/// The error object of a chat completions stream that reports an error in band, as OpenAI
/// writes it.
const CHAT_STREAM_ERROR: &str = r#"{"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "code": 500}}"#;

/// The message of a Responses `error` event.
const RESPONSES_ERROR_MESSAGE: &str = "The server had an error while processing your request. Sorry about that!";

/// Anthropic's mid-stream overload, as its `error` event's data.
const MESSAGES_STREAM_ERROR: &str = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

/// The signature a Messages thinking block ends with.
const SIGNATURE: &str = "ib-synth-signature";

/// One logical step of a stream; each API writes it as one or more events.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// The response opened: chat's role chunk, `response.created` + `in_progress`,
    /// `message_start` + `ping`.
    Open,
    Reasoning(&'a str),
    Answer(&'a str),
    /// The answer ended: chat's `finish_reason` chunk, the message item's closing events, the
    /// text block's `content_block_stop`.
    Finish,
    /// The usage: chat's usage chunk (when the request asked for it), Messages' `message_delta`;
    /// on Responses it travels in the terminal event.
    Usage,
    /// The terminal event: `[DONE]`, `response.completed`, `message_stop`.
    Terminal,
    /// The first half of an answer delta's event: a chunk a proxy cut.
    Half(&'a str),
    /// An error reported in band.
    Error,
}

/// One server-sent event: its arrival offset in ns, its `event:` name, its data.
pub struct Sent {
    pub at: u64,
    pub event: Option<&'static str>,
    pub data: String,
}

impl Sent {
    /// Its bytes on the wire: the `event:` line, the `data:` line and the blank line.
    pub fn wire_bytes(&self) -> u64 {
        let name = self.event.map_or(0, |e| "event: \n".len() + e.len());
        (name + "data: \n\n".len() + self.data.len()) as u64
    }
}

/// Where an output item or content block stands.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    NotOpen,
    Open,
    Closed,
}

/// What a stream's events say about the request (ids, model, token counts).
pub struct Stream<'a> {
    pub api: WireApi,
    /// The response id: `chatcmpl-…`, `resp_…`, `msg_…` (the same stem on every API).
    pub stem: &'a str,
    pub model: &'a str,
    pub prompt_tokens: usize,
    pub answer_tokens: usize,
    pub reasoning_tokens: usize,
    /// Chat completions: whether the request asked for a usage chunk.
    pub chat_usage: bool,
    /// Chat completions: the chunk field the provider streams its reasoning in.
    pub chat_reasoning_field: &'a str,
}

/// Writes a stream's steps as its API's events.
pub struct Writer<'a> {
    stream: Stream<'a>,
    chat_head: String,
    seq: u64,
    reasoning: Phase,
    answer: Phase,
    reasoning_sent: String,
    answer_sent: String,
    pub sent: Vec<Sent>,
}

fn json_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The first half of `s`, cut on a character boundary.
fn first_half(s: &str) -> &str {
    let mut cut = s.len() / 2;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

impl<'a> Writer<'a> {
    pub fn new(stream: Stream<'a>) -> Writer<'a> {
        let chat_head = if stream.api.is_chat_completions() {
            format!(
                r#"{{"id":{},"object":"chat.completion.chunk","created":0,"model":{},"choices":"#,
                json_str(&format!("chatcmpl-{}", stream.stem)),
                json_str(stream.model)
            )
        } else {
            String::new()
        };
        Writer {
            stream,
            chat_head,
            seq: 0,
            reasoning: Phase::NotOpen,
            answer: Phase::NotOpen,
            reasoning_sent: String::new(),
            answer_sent: String::new(),
            sent: Vec::new(),
        }
    }

    /// Writes `step` at `at` ns.
    pub fn step(&mut self, at: u64, step: Step) {
        match self.stream.api {
            WireApi::ChatCompletions => self.chat(at, step),
            WireApi::Responses => self.responses(at, step),
            WireApi::Messages => self.messages(at, step),
        }
    }

    fn push(&mut self, at: u64, event: Option<&'static str>, data: String) {
        self.sent.push(Sent { at, event, data });
    }

    // Chat completions.

    fn chat_delta(&self, delta: &str, finish: Option<&str>) -> String {
        let finish = finish.map_or("null".to_string(), json_str);
        format!(r#"{}[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#, self.chat_head)
    }

    fn chat_field(&self, field: &str, text: &str) -> String {
        self.chat_delta(&format!("{{{}:{}}}", json_str(field), json_str(text)), None)
    }

    fn chat(&mut self, at: u64, step: Step) {
        let s = &self.stream;
        let data = match step {
            Step::Open => self.chat_delta(r#"{"role":"assistant","content":""}"#, None),
            Step::Reasoning(text) => self.chat_field(s.chat_reasoning_field, text),
            Step::Answer(text) => self.chat_field("content", text),
            Step::Finish => self.chat_delta("{}", Some("stop")),
            Step::Usage if !s.chat_usage => return,
            Step::Usage => {
                let completion = s.answer_tokens + s.reasoning_tokens;
                format!(
                    r#"{}[],"usage":{{"prompt_tokens":{},"completion_tokens":{completion},"total_tokens":{},"completion_tokens_details":{{"reasoning_tokens":{}}}}}}}"#,
                    self.chat_head,
                    s.prompt_tokens,
                    s.prompt_tokens + completion,
                    s.reasoning_tokens
                )
            }
            Step::Terminal => "[DONE]".to_string(),
            Step::Half(text) => first_half(&self.chat_field("content", text)).to_string(),
            Step::Error => CHAT_STREAM_ERROR.to_string(),
        };
        self.push(at, None, data);
    }

    // OpenAI Responses.

    fn r_push(&mut self, at: u64, ty: &'static str, fields: Value) {
        let mut data = serde_json::Map::new();
        data.insert("type".into(), ty.into());
        data.insert("sequence_number".into(), self.seq.into());
        self.seq += 1;
        if let Value::Object(fields) = fields {
            data.extend(fields);
        }
        self.push(at, Some(ty), Value::Object(data).to_string());
    }

    fn r_reasoning_id(&self) -> String {
        format!("rs_{}", self.stream.stem)
    }

    fn r_message_id(&self) -> String {
        format!("msg_{}", self.stream.stem)
    }

    fn r_message_index(&self) -> usize {
        usize::from(self.reasoning != Phase::NotOpen)
    }

    fn r_reasoning_item(&self) -> Value {
        let summary = if self.reasoning == Phase::Closed {
            json!([{"type": "summary_text", "text": self.reasoning_sent}])
        } else {
            json!([])
        };
        json!({"id": self.r_reasoning_id(), "type": "reasoning", "summary": summary})
    }

    fn r_message_item(&self) -> Value {
        let (status, content) = if self.answer == Phase::Closed {
            ("completed", json!([{"type": "output_text", "text": self.answer_sent, "annotations": []}]))
        } else {
            ("in_progress", json!([]))
        };
        json!({"id": self.r_message_id(), "type": "message", "role": "assistant", "status": status, "content": content})
    }

    fn r_response(&self, status: &str) -> Value {
        let s = &self.stream;
        let ended = status != "in_progress";
        let mut output = Vec::new();
        if ended && self.reasoning != Phase::NotOpen {
            output.push(self.r_reasoning_item());
        }
        if ended && self.answer != Phase::NotOpen {
            output.push(self.r_message_item());
        }
        let usage = if ended {
            json!({
                "input_tokens": s.prompt_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": s.answer_tokens + s.reasoning_tokens,
                "output_tokens_details": {"reasoning_tokens": s.reasoning_tokens},
                "total_tokens": s.prompt_tokens + s.answer_tokens + s.reasoning_tokens,
            })
        } else {
            Value::Null
        };
        json!({
            "id": format!("resp_{}", s.stem), "object": "response", "created_at": 0, "status": status,
            "error": null, "incomplete_details": null, "model": s.model, "output": output, "usage": usage,
        })
    }

    fn r_close_reasoning(&mut self, at: u64) {
        if self.reasoning != Phase::Open {
            return;
        }
        self.reasoning = Phase::Closed;
        let (id, text) = (self.r_reasoning_id(), self.reasoning_sent.clone());
        let fields = json!({"item_id": id, "output_index": 0, "summary_index": 0, "text": text});
        self.r_push(at, "response.reasoning_summary_text.done", fields);
        let part = json!({"type": "summary_text", "text": text});
        let fields = json!({"item_id": id, "output_index": 0, "summary_index": 0, "part": part});
        self.r_push(at, "response.reasoning_summary_part.done", fields);
        let item = self.r_reasoning_item();
        self.r_push(at, "response.output_item.done", json!({"output_index": 0, "item": item}));
    }

    fn r_open_message(&mut self, at: u64) {
        if self.answer != Phase::NotOpen {
            return;
        }
        self.r_close_reasoning(at);
        self.answer = Phase::Open;
        let (id, index, item) = (self.r_message_id(), self.r_message_index(), self.r_message_item());
        self.r_push(at, "response.output_item.added", json!({"output_index": index, "item": item}));
        let part = json!({"type": "output_text", "text": "", "annotations": []});
        let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "part": part});
        self.r_push(at, "response.content_part.added", fields);
    }

    fn r_text_delta(&self, seq: u64, text: &str) -> String {
        json!({
            "type": "response.output_text.delta", "sequence_number": seq, "item_id": self.r_message_id(),
            "output_index": self.r_message_index(), "content_index": 0, "delta": text, "logprobs": [],
        })
        .to_string()
    }

    fn responses(&mut self, at: u64, step: Step) {
        match step {
            Step::Open => {
                let response = self.r_response("in_progress");
                self.r_push(at, "response.created", json!({"response": response}));
                self.r_push(at, "response.in_progress", json!({"response": response}));
            }
            Step::Reasoning(text) => {
                let id = self.r_reasoning_id();
                if self.reasoning == Phase::NotOpen {
                    self.reasoning = Phase::Open;
                    let item = self.r_reasoning_item();
                    self.r_push(at, "response.output_item.added", json!({"output_index": 0, "item": item}));
                    let part = json!({"type": "summary_text", "text": ""});
                    let fields = json!({"item_id": id, "output_index": 0, "summary_index": 0, "part": part});
                    self.r_push(at, "response.reasoning_summary_part.added", fields);
                }
                self.reasoning_sent.push_str(text);
                let fields = json!({"item_id": id, "output_index": 0, "summary_index": 0, "delta": text});
                self.r_push(at, "response.reasoning_summary_text.delta", fields);
            }
            Step::Answer(text) => {
                self.r_open_message(at);
                self.answer_sent.push_str(text);
                let data = self.r_text_delta(self.seq, text);
                self.seq += 1;
                self.push(at, Some("response.output_text.delta"), data);
            }
            Step::Finish => {
                self.r_open_message(at);
                let (id, index, text) = (self.r_message_id(), self.r_message_index(), self.answer_sent.clone());
                let fields =
                    json!({"item_id": id, "output_index": index, "content_index": 0, "text": text, "logprobs": []});
                self.r_push(at, "response.output_text.done", fields);
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                let fields = json!({"item_id": id, "output_index": index, "content_index": 0, "part": part});
                self.r_push(at, "response.content_part.done", fields);
                self.answer = Phase::Closed;
                let item = self.r_message_item();
                self.r_push(at, "response.output_item.done", json!({"output_index": index, "item": item}));
            }
            Step::Usage => {}
            Step::Terminal => {
                let response = self.r_response("completed");
                self.r_push(at, "response.completed", json!({"response": response}));
            }
            Step::Half(text) => {
                self.r_open_message(at);
                let data = self.r_text_delta(self.seq, text);
                self.push(at, Some("response.output_text.delta"), first_half(&data).to_string());
            }
            Step::Error => {
                let fields = json!({"code": "server_error", "message": RESPONSES_ERROR_MESSAGE, "param": null});
                self.r_push(at, "error", fields);
            }
        }
    }

    // Anthropic Messages.

    fn m_push(&mut self, at: u64, ty: &'static str, data: Value) {
        self.push(at, Some(ty), data.to_string());
    }

    fn m_text_index(&self) -> usize {
        usize::from(self.reasoning != Phase::NotOpen)
    }

    fn m_text_delta(&self, text: &str) -> String {
        json!({"type": "content_block_delta", "index": self.m_text_index(), "delta": {"type": "text_delta", "text": text}})
            .to_string()
    }

    fn m_open_text(&mut self, at: u64) {
        if self.answer != Phase::NotOpen {
            return;
        }
        if self.reasoning == Phase::Open {
            self.reasoning = Phase::Closed;
            let delta = json!({"type": "signature_delta", "signature": SIGNATURE});
            self.m_push(at, "content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": delta}));
            self.m_push(at, "content_block_stop", json!({"type": "content_block_stop", "index": 0}));
        }
        self.answer = Phase::Open;
        let block = json!({"type": "text", "text": ""});
        let index = self.m_text_index();
        self.m_push(
            at,
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        );
    }

    fn messages(&mut self, at: u64, step: Step) {
        let s = &self.stream;
        match step {
            Step::Open => {
                let message = json!({
                    "id": format!("msg_{}", s.stem), "type": "message", "role": "assistant", "model": s.model,
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": s.prompt_tokens, "output_tokens": 1},
                });
                self.m_push(at, "message_start", json!({"type": "message_start", "message": message}));
                self.m_push(at, "ping", json!({"type": "ping"}));
            }
            Step::Reasoning(text) => {
                if self.reasoning == Phase::NotOpen {
                    self.reasoning = Phase::Open;
                    let block = json!({"type": "thinking", "thinking": ""});
                    let start = json!({"type": "content_block_start", "index": 0, "content_block": block});
                    self.m_push(at, "content_block_start", start);
                }
                let delta = json!({"type": "thinking_delta", "thinking": text});
                self.m_push(
                    at,
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta": delta}),
                );
            }
            Step::Answer(text) => {
                self.m_open_text(at);
                let data = self.m_text_delta(text);
                self.push(at, Some("content_block_delta"), data);
            }
            Step::Finish => {
                self.m_open_text(at);
                self.answer = Phase::Closed;
                let index = self.m_text_index();
                self.m_push(at, "content_block_stop", json!({"type": "content_block_stop", "index": index}));
            }
            Step::Usage => {
                let usage = json!({"output_tokens": s.answer_tokens + s.reasoning_tokens});
                let delta = json!({"stop_reason": "end_turn", "stop_sequence": null});
                self.m_push(at, "message_delta", json!({"type": "message_delta", "delta": delta, "usage": usage}));
            }
            Step::Terminal => self.m_push(at, "message_stop", json!({"type": "message_stop"})),
            Step::Half(text) => {
                self.m_open_text(at);
                let data = self.m_text_delta(text);
                self.push(at, Some("content_block_delta"), first_half(&data).to_string());
            }
            Step::Error => self.push(at, Some("error"), MESSAGES_STREAM_ERROR.to_string()),
        }
    }
}
