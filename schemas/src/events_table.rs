//! `events.parquet`: the event log as a typed table for analysis, one row per line of the log,
//! in log order. The JSONL (sealed or live) stays the source of truth; this table is
//! re-derivable from it byte for byte.
//!
//! Each row has the envelope (`segment`, `seq`, `t_ns`, `type`), the request it belongs to and
//! that request's context from its attempt's `request_started` (provider, task family, item,
//! round, and `offset_ms` from the attempt's actual send), and:
//! - for `sse_event` rows, the fields the timing reads, as typed columns derived by the same
//!   parsing ([`crate::timing::chunk_fields`]), so they agree with `responses.parquet`:
//!   answer and reasoning delta, finish reason, usage, model; beside the exact raw event: its
//!   `data` field as plain text (`[DONE]` is the string `[DONE]`), `event`, `id`, `retry` and
//!   a comment's text;
//! - for every other event type, its `data` object as one JSON text (`data`).
use crate::event::SseEvent;
use crate::parquet_io::Table;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventRow {
    /// The segment file (`events/NNNN.jsonl`) the line is in.
    pub segment: i64,
    pub seq: i64,
    pub t_ns: i64,
    /// The event type, e.g. `sse_event`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The request the event belongs to, when it belongs to one.
    pub request_id: Option<String>,
    pub attempt: Option<i64>,
    /// From the attempt's `request_started` (null when the log has none for it).
    pub provider: Option<String>,
    pub task_family: Option<String>,
    pub item_id: Option<String>,
    /// The schedule's round (also set on `round_released` and `round_closed` rows).
    pub round_index: Option<i64>,
    /// Milliseconds from the attempt's actual send (its `request_started`) to this event, on
    /// the run's monotonic clock.
    pub offset_ms: Option<f64>,
    /// `sse_event` rows whose data is a JSON object: the answer delta
    /// (`choices[0].delta.content`), null when empty.
    pub answer_delta: Option<String>,
    /// The reasoning delta, as the timing reads it; null when empty.
    pub reasoning_delta: Option<String>,
    pub finish_reason: Option<String>,
    pub usage_prompt_tokens: Option<i64>,
    pub usage_completion_tokens: Option<i64>,
    pub usage_total_tokens: Option<i64>,
    pub usage_cached_tokens: Option<i64>,
    /// The chunk's `model`, when non-empty.
    pub model: Option<String>,
    /// `sse_event` rows: the event's position among its attempt's events.
    pub sse_index: Option<i64>,
    /// `sse_event` rows: the raw `data` field as logged (redacted where `sse_redacted`).
    pub sse_data: Option<String>,
    pub sse_event: Option<String>,
    pub sse_id: Option<String>,
    pub sse_retry: Option<String>,
    /// A comment line's text; such a row has no `sse_data`.
    pub sse_comment: Option<String>,
    pub sse_redacted: Option<bool>,
    /// Every other event type: its `data` object as compact JSON.
    pub data: Option<String>,
}

impl Table for EventRow {
    const NAME: &'static str = "events";
}

impl EventRow {
    /// A row with only the envelope's fields set.
    pub fn new(segment: u32, seq: u64, t_ns: u64, kind: &str) -> EventRow {
        EventRow {
            segment: i64::from(segment),
            seq: seq as i64,
            t_ns: t_ns as i64,
            kind: kind.to_string(),
            request_id: None,
            attempt: None,
            provider: None,
            task_family: None,
            item_id: None,
            round_index: None,
            offset_ms: None,
            answer_delta: None,
            reasoning_delta: None,
            finish_reason: None,
            usage_prompt_tokens: None,
            usage_completion_tokens: None,
            usage_total_tokens: None,
            usage_cached_tokens: None,
            model: None,
            sse_index: None,
            sse_data: None,
            sse_event: None,
            sse_id: None,
            sse_retry: None,
            sse_comment: None,
            sse_redacted: None,
            data: None,
        }
    }

    /// Fills the columns of an `sse_event`.
    pub fn sse(&mut self, e: SseEvent) {
        if let Some(chunk) = crate::timing::chunk_fields(e.data.as_deref()) {
            self.answer_delta = Some(chunk.answer).filter(|s| !s.is_empty());
            self.reasoning_delta = Some(chunk.reasoning).filter(|s| !s.is_empty());
            self.finish_reason = chunk.finish_reason;
            self.usage_prompt_tokens = chunk.usage.prompt_tokens;
            self.usage_completion_tokens = chunk.usage.completion_tokens;
            self.usage_total_tokens = chunk.usage.total_tokens;
            self.usage_cached_tokens = chunk.usage.cached_tokens;
            self.model = chunk.model;
        }
        self.sse_index = Some(i64::from(e.index));
        self.sse_data = e.data;
        self.sse_event = e.event;
        self.sse_id = e.id;
        self.sse_retry = e.retry;
        self.sse_comment = e.comment;
        self.sse_redacted = Some(e.redacted);
    }
}
