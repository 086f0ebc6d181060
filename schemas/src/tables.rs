//! The rows of every Parquet table a run holds. Column names are the field names; `Option`
//! fields are nullable columns. Times are milliseconds (f64) on the run's monotonic clock.
use crate::parquet_io::Table;
use crate::vocab::{Classification, ErrorKind, EvaluationError, OperationalOutcome, Outcome, TaskFamily};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `selection.parquet`: every dataset item in its family's deterministic order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelectionRow {
    pub task_family: TaskFamily,
    /// 0-based position in the family's shuffled order.
    pub position: i64,
    pub item_id: String,
    /// True for the first `selected_items_per_task_family` positions.
    pub selected: bool,
    /// SHA-256 of the item's canonical JSON row.
    pub item_sha256: String,
}
impl Table for SelectionRow {
    const NAME: &'static str = "selection";
}

/// `schedule.parquet`: one row per request, in round order then launch order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScheduleRow {
    pub round_index: i64,
    pub round_id: String,
    pub task_family: TaskFamily,
    pub item_id: String,
    pub provider: String,
    /// Position of this provider in the round's rotated launch order.
    pub launch_index: i64,
    pub request_id: String,
}
impl Table for ScheduleRow {
    const NAME: &'static str = "schedule";
}

/// `responses.parquet`: one row per request that reached a final outcome (its last attempt),
/// computed from the raw events alone. A request whose attempts were all interrupted has no
/// row: it is missing, not a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseRow {
    pub request_id: String,
    pub round_id: String,
    pub round_index: i64,
    pub provider: String,
    pub task_family: TaskFamily,
    pub item_id: String,
    /// The attempt this row describes (the last one); earlier ones were interrupted.
    pub attempt: i64,
    /// How the attempt ended, judged from its events (see `schemas::stream`).
    pub outcome: Outcome,
    /// The operational class of `outcome` and `http_status`: `2xx` or a failure class.
    pub operational_outcome: OperationalOutcome,
    pub http_status: Option<i64>,
    /// What ended the attempt when it did not complete.
    pub error_type: Option<ErrorKind>,
    pub error_message: Option<String>,
    /// The error body of a non-2xx response, the first bytes of a 2xx body that was not an
    /// event stream, or the error object a stream reported (redacted, at most 4 KiB).
    pub error_body: Option<String>,
    /// The response's `Content-Type` header.
    pub content_type: Option<String>,
    /// The `Retry-After` header as received.
    pub retry_after: Option<String>,
    /// `retry_after` in seconds from the response head's arrival: its delta-seconds, or an
    /// HTTP-date minus the head's arrival on the wall clock (negative if already past); null
    /// without the header or when it is neither form.
    pub retry_after_seconds: Option<f64>,
    /// The protocol version the response came in (`HTTP/1.1`, `HTTP/2`); null when no response
    /// head arrived, or the log predates its recording.
    pub http_version: Option<String>,
    /// `[DONE]` arrived before the stream ended.
    pub done_seen: bool,
    pub bytes_received: i64,
    /// SSE events and comments logged for the attempt.
    pub sse_event_count: i64,
    /// Of those, the ones logged after the event that ended the stream (e.g. data after
    /// `[DONE]`): recorded, never part of the answer.
    pub events_after_end: i64,
    /// The response echoed a credential in its answer or reasoning text; that text is
    /// withheld from this table and every table derived from it.
    pub credential_echo: bool,
    pub reasoning: String,
    pub answer: String,
    /// A `completed` 2xx stream with a non-empty answer: the E2E and speed population.
    pub complete: bool,
    pub ttfo_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub last_answer_ms: Option<f64>,
    pub e2e_latency_ms: Option<f64>,
    pub pre_answer_reasoning_tokens: Option<i64>,
    pub reasoning_emitted_before_answer: Option<bool>,
    /// o200k_base tokens of all reasoning text.
    pub reasoning_tokens: i64,
    /// o200k_base tokens of the visible answer.
    pub visible_answer_tokens: i64,
    pub output_tokens_per_second: Option<f64>,
    /// Time from the actual send to the response head.
    pub time_to_headers_ms: Option<f64>,
    /// Time from the actual send to the first SSE event of any kind.
    pub time_to_first_event_ms: Option<f64>,
    /// Actual send time minus the round's release (client dispatch lag).
    pub send_lag_ms: f64,
    /// Actual send time on the run clock.
    pub started_t_ns: i64,
    /// Actual send time on the wall clock, UTC (a zoneless Parquet timestamp in µs): the
    /// `wall_clock_unix_ns` of the `segment_opened` of the segment the attempt was sent in,
    /// plus the run-clock time from that event to the send.
    pub started_at: i64,
    pub response_model: Option<String>,
    pub provider_request_id: Option<String>,
    pub finish_reason: Option<String>,
    pub usage_prompt_tokens: Option<i64>,
    pub usage_completion_tokens: Option<i64>,
    pub usage_total_tokens: Option<i64>,
    pub usage_cached_tokens: Option<i64>,
}
impl Table for ResponseRow {
    const NAME: &'static str = "responses";
    const TIMESTAMP_COLUMNS: &'static [&'static str] = &["started_at"];
}

/// `evaluations.parquet`: the verdict on each response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluationRow {
    pub request_id: String,
    pub round_id: String,
    pub round_index: i64,
    pub provider: String,
    pub task_family: TaskFamily,
    pub item_id: String,
    /// Copied from the response.
    pub operational_outcome: OperationalOutcome,
    pub classification: Classification,
    /// Why the request is not a valid result: an invalid answer's defect, or a failed
    /// request's failure class; null for valid and incorrect results.
    pub error_type: Option<EvaluationError>,
    pub schema_valid: bool,
    pub correct: bool,
    /// Contract extraction only: fields equal to gold (also for invalid objects).
    pub correct_field_count: Option<i64>,
    pub field_count_total: Option<i64>,
    /// Contract extraction only: canonical JSON `{field: bool}`.
    pub field_correct: Option<String>,
    /// The parsed answer as canonical JSON, when it parsed.
    pub parsed_output: Option<String>,
}
impl Table for EvaluationRow {
    const NAME: &'static str = "evaluations";
}

/// `metrics.parquet`: one row per provider and task family, plus one `pooled` row per
/// provider (balanced pooled requests). Rates are fractions in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricRow {
    pub provider: String,
    /// A task family, or `pooled` for the provider's balanced pooled row.
    pub task_family: String,
    pub submitted_count: i64,
    pub correct_count: i64,
    pub failed_request_count: i64,
    pub invalid_result_count: i64,
    pub incorrect_result_count: i64,
    pub task_success_rate: Option<f64>,
    pub failure_rate: Option<f64>,
    pub timeout_rate: Option<f64>,
    pub http_429_rate: Option<f64>,
    pub other_http_4xx_rate: Option<f64>,
    pub http_5xx_rate: Option<f64>,
    pub transport_error_rate: Option<f64>,
    pub other_http_rate: Option<f64>,
    pub invalid_stream_rate: Option<f64>,
    pub stream_error_rate: Option<f64>,
    pub truncated_rate: Option<f64>,
    pub reasoning_emission_rate: Option<f64>,
    pub ttfo_p50: Option<f64>,
    pub ttfo_p95: Option<f64>,
    pub ttfo_p99: Option<f64>,
    pub ttfa_p50: Option<f64>,
    pub ttfa_p95: Option<f64>,
    pub ttfa_p99: Option<f64>,
    pub pre_answer_reasoning_tokens_p50: Option<f64>,
    pub pre_answer_reasoning_tokens_p95: Option<f64>,
    pub pre_answer_reasoning_tokens_p99: Option<f64>,
    pub e2e_latency_p50: Option<f64>,
    pub e2e_latency_p95: Option<f64>,
    pub e2e_latency_p99: Option<f64>,
    /// Median visible-answer speed.
    pub output_tokens_per_second_p50: Option<f64>,
    /// Lower-tail floor: at least 95% of samples are this fast or faster.
    pub output_tokens_per_second_p95: Option<f64>,
    /// Lower-tail floor: at least 99% of samples are this fast or faster.
    pub output_tokens_per_second_p99: Option<f64>,
    pub ttfa_population: i64,
    pub e2e_latency_population: i64,
    pub output_tokens_per_second_population: i64,
    /// 2xx streams that ended (completed, truncated or reporting an error), and of those the
    /// ones without `[DONE]` and the ones without a `finish_reason`.
    pub ended_stream_count: i64,
    pub missing_done_count: i64,
    pub missing_finish_reason_count: i64,
    pub usage_reported_count: i64,
    /// Responses whose reported `usage.completion_tokens` differs from the local o200k_base
    /// count of their reasoning and answer text.
    pub usage_mismatch_count: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Cost from provider-reported usage and the provider table's prices (reported rows only).
    pub known_cost_usd: f64,
    /// Pooled rows only: whether the provider is ranked, and why not.
    pub eligible: Option<bool>,
    pub ineligibility_reasons: Option<String>,
    pub rank: Option<i64>,
}
impl Table for MetricRow {
    const NAME: &'static str = "metrics";
}

/// `events.parquet`'s row lives with the table's derivation (`crate::events_table`).
pub use crate::events_table::EventRow;
