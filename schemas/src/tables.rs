//! The rows of every Parquet table a run holds. Column names are the field names; `Option`
//! fields are nullable columns. Times are milliseconds (f64) on the run's monotonic clock.
use crate::parquet_io::Table;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `selection.parquet`: every dataset item in its family's deterministic order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelectionRow {
    pub task_family: String,
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
    pub task_family: String,
    pub item_id: String,
    pub provider: String,
    /// Position of this provider in the round's rotated launch order.
    pub launch_index: i64,
    pub request_id: String,
}
impl Table for ScheduleRow {
    const NAME: &'static str = "schedule";
}

/// `responses.parquet`: one row per request that reached a terminal outcome (its final
/// attempt), computed from the raw events alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseRow {
    pub request_id: String,
    pub round_id: String,
    pub round_index: i64,
    pub provider: String,
    pub task_family: String,
    pub item_id: String,
    /// The attempt this row describes (the last one); earlier ones were interrupted.
    pub attempt: i64,
    /// `completed`, `timeout`, `http_error`, `transport_error`, `invalid_stream`, `interrupted`.
    pub outcome: String,
    /// Operational class: `2xx`, `429`, `other_4xx`, `5xx`, `other_http` (1xx/3xx), `timeout`,
    /// `transport_error` (includes invalid streams and interruptions).
    pub operational_outcome: String,
    pub http_status: Option<i64>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub retry_after: Option<String>,
    pub done_seen: bool,
    pub bytes_received: i64,
    pub sse_event_count: i64,
    pub reasoning: String,
    pub answer: String,
    /// 2xx and a non-empty answer: the E2E and speed population.
    pub complete: bool,
    pub ttfo_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub last_answer_ms: Option<f64>,
    pub e2e_latency_ms: Option<f64>,
    pub pre_answer_reasoning_tokens: Option<i64>,
    pub reasoning_emitted_before_answer: Option<bool>,
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
}

/// `evaluations.parquet`: the verdict on each response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluationRow {
    pub request_id: String,
    pub round_id: String,
    pub round_index: i64,
    pub provider: String,
    pub task_family: String,
    pub item_id: String,
    /// Copied from the response: `2xx`, `429`, `other_4xx`, `5xx`, `other_http`, `timeout`,
    /// `transport_error`.
    pub operational_outcome: String,
    /// `valid_result`, `incorrect_result`, `invalid_result` or `failed_request`.
    pub classification: String,
    /// `malformed_json`, `schema_invalid`, `missing_required_field` (invalid results);
    /// `timeout`, `rate_limited_http_429`, `other_http_4xx`, `http_5xx`, `other_http`,
    /// `transport_error` (failed requests); null otherwise.
    pub error_type: Option<String>,
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
    pub other_http_rate: Option<f64>,
    pub transport_error_rate: Option<f64>,
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
    pub usage_reported_count: i64,
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

/// `events.parquet`: the sealed, columnar copy of the raw event log, one row per line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventRow {
    pub segment: i64,
    pub seq: i64,
    pub t_ns: i64,
    /// The event type, e.g. `sse_event`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The request the event belongs to, when it belongs to one.
    pub request_id: Option<String>,
    pub attempt: Option<i64>,
    /// The event's `data` object as compact JSON.
    pub data: String,
}
impl Table for EventRow {
    const NAME: &'static str = "events";
}
