//! The rows of every Parquet table a run holds. Column names are the field names; `Option`
//! fields are nullable columns. Times are milliseconds (f64) on the run's monotonic clock.
use crate::documents::{GroupMetrics, PooledMetrics};
use crate::vocab::{
    CacheProbeSend, Classification, ErrorKind, EvaluationError, OperationalOutcome, Outcome, TaskFamily,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A row type stored as a Parquet table.
pub trait Table: Serialize + DeserializeOwned {
    /// The table's name, e.g. `responses`.
    const NAME: &'static str;
    /// Rows per row group: what a writer buffers before writing one out.
    const ROW_GROUP_ROWS: usize = ROW_GROUP_ROWS;
    /// Integer fields (microseconds since the Unix epoch, UTC) stored as Parquet timestamps
    /// (`Timestamp(µs)` without a zone: naive UTC, which every reader shows as-is).
    const TIMESTAMP_COLUMNS: &'static [&'static str] = &[];
}

/// Rows per row group unless a table asks otherwise: bounds what a writer buffers (and a
/// reader holds, one group at a time) while keeping groups big enough to compress well.
pub const ROW_GROUP_ROWS: usize = 65_536;

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
    /// A load run's step (0-based): its requests arrive over one `load.step_seconds`. Null in
    /// the closed-loop workflow (and in schedules written before load runs existed).
    #[serde(default)]
    pub step: Option<i64>,
    /// A load run's intended send time, in ns from the start of its step (a step starts when
    /// the one before it has drained: `step_opened` in the log). Every provider of a round
    /// has the same. Null in the closed-loop workflow, whose rounds the barrier releases.
    #[serde(default)]
    pub intended_offset_ns: Option<i64>,
    /// A closed-loop step's user (0-based): each user sends its requests in round order, the
    /// next the moment the one before ended. Null elsewhere.
    #[serde(default)]
    pub user: Option<i64>,
    /// A synthetic request (`task_family` `synthetic`): its prompt's length in o200k_base
    /// tokens, exactly what `prompt` encodes to. Null for a dataset item.
    #[serde(default)]
    pub target_input_tokens: Option<i64>,
    /// A synthetic request: the answer tokens it asks for, sent as the provider's token limit
    /// (`max_tokens` or `max_completion_tokens`). Null for a dataset item.
    #[serde(default)]
    pub target_output_tokens: Option<i64>,
    /// A synthetic request: the prompt sent as its one user message, byte for byte; every
    /// provider of a round has the same, and its first `load.workload.shared_prefix_tokens`
    /// tokens are the same in every round. Null for a dataset item (its text is the dataset's).
    #[serde(default)]
    pub prompt: Option<String>,
    /// The round's nonce (`inference.cache_busting`, and every cache-probe round): 16
    /// lower-case hex digits drawn by `ib-schedule` from the operating system's random source,
    /// the same in every provider's row of a round, sent as the first line of the request's
    /// first message (`[nonce <hex>]`). Null when the round has none.
    #[serde(default)]
    pub nonce: Option<String>,
    /// A cache-probe round (`inference.cache_probe`): `first` or `repeat`, the repeat sent
    /// right after its first with the same bytes, nonce included. Its requests are logged like
    /// any other and left out of every figure but `metrics.json`'s `cache_probe`. Null for
    /// the run's own rounds.
    #[serde(default)]
    pub cache_probe: Option<CacheProbeSend>,
}
impl Table for ScheduleRow {
    const NAME: &'static str = "schedule";
}

impl ScheduleRow {
    /// The row of request `request_id`: round `round_index` (`round_id`) sends item `item_id`
    /// of `task_family` to `provider`, `launch_index`-th in its launch order. Every later
    /// column is null, as in the closed-loop workflow; a load step, a synthetic request or a
    /// cache-probe round sets its own.
    pub fn new(
        round_index: i64,
        round_id: String,
        task_family: TaskFamily,
        item_id: String,
        provider: String,
        launch_index: i64,
        request_id: String,
    ) -> ScheduleRow {
        ScheduleRow {
            round_index,
            round_id,
            task_family,
            item_id,
            provider,
            launch_index,
            request_id,
            step: None,
            intended_offset_ns: None,
            user: None,
            target_input_tokens: None,
            target_output_tokens: None,
            prompt: None,
            nonce: None,
            cache_probe: None,
        }
    }
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
    /// A load run's step; null in the closed-loop workflow.
    pub step: Option<i64>,
    /// When the request was due, on the run clock of `started_t_ns` (in the closed-loop
    /// workflow its round's release; in a load step its arrival): `started_t_ns -
    /// intended_t_ns` is the send lag, and a load step's latencies are measured from here.
    pub intended_t_ns: i64,
    /// A capped load step: when a slot of the provider's cap freed for the request (same
    /// clock); from `intended_t_ns` to here it waited in the cap's queue, from here to
    /// `started_t_ns` is the client's own lag. Null elsewhere.
    pub released_t_ns: Option<i64>,
    /// A synthetic request: its prompt's exact o200k_base length and the answer tokens it asked
    /// for (`schedule.parquet`'s, as `request_started` logged them). Null for a dataset item.
    pub target_input_tokens: Option<i64>,
    pub target_output_tokens: Option<i64>,
    /// When the attempt's terminal outcome was logged (same clock): with `started_t_ns`, how
    /// long the request was in flight, whatever its outcome.
    pub ended_t_ns: i64,
    /// When each chunk of the answer arrived, in ms from the actual send (`timing::AnswerChunk`).
    pub answer_chunk_ms: Vec<f64>,
    /// How many of the answer's tokens each chunk completed (the answer tokenized whole, each
    /// token counted in the chunk holding its last byte); they add up to `visible_answer_tokens`.
    pub answer_chunk_tokens: Vec<i64>,
    /// A complete answer of two or more tokens that arrived at once: one chunk brought every
    /// token, or its first and last answer chunks arrived less than 1 ms apart
    /// (`timing::is_buffered`). Under inferbench's rules it has no `output_tokens_per_second`.
    pub answer_buffered: bool,
}
impl Table for ResponseRow {
    const NAME: &'static str = "responses";
    const TIMESTAMP_COLUMNS: &'static [&'static str] = &["started_at"];
}

/// `evaluations.parquet`: the verdict on each response, one row per row of `responses.parquet`
/// and in its order. It holds the verdict only: what it describes (provider, family, item,
/// round, outcome) is `responses.parquet`'s, joined on `request_id`, so the two tables share
/// no column but that key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluationRow {
    pub request_id: String,
    pub classification: Classification,
    /// Why the request is not a valid result: an invalid answer's defect, or a failed
    /// request's failure class; null for valid and incorrect results. (The reference calls it
    /// `error_type`; here that name is `responses.parquet`'s, what ended the attempt.)
    pub evaluation_error_type: Option<EvaluationError>,
    pub schema_valid: bool,
    pub correct: bool,
    /// Contract extraction only: fields equal to gold (also for invalid objects).
    pub correct_field_count: Option<i64>,
    pub field_count_total: Option<i64>,
    /// Contract extraction only, when the answer was a JSON object: which fields equal gold.
    pub field_correct: Option<ContractFieldCorrect>,
    /// The answer's values for its family's contract fields, typed, when the answer parsed as
    /// a JSON object (see [`ParsedOutput`]). The exact text is `responses.parquet`'s `answer`.
    pub parsed_output: Option<ParsedOutput>,
}
impl Table for EvaluationRow {
    const NAME: &'static str = "evaluations";
}

/// The `parsed_output` column: one struct field per task family (its name with `_` for `-`),
/// each a struct of that family's contract fields (`family::output_schema`) with the
/// contract's types: `string` and `enum` are strings, `bool` booleans, `int | null` 64-bit
/// integers. The row's own family's field is set, the others are null; within it a field is
/// null when the answer lacks the key, holds JSON null, or holds a value not of the contract's
/// type (`schema_valid` is then false, and `responses.answer` has the exact text). Keys outside
/// the contract are not kept (they make the answer `schema_invalid`). So a notebook filters
/// `parsed_output.ticket_triage.category = 'bug'` (DuckDB) with no JSON function.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ParsedOutput {
    pub meeting_notes_lookup: Option<MeetingNotesLookupOutput>,
    pub ticket_triage: Option<TicketTriageOutput>,
    pub contract_terms_extraction: Option<ContractTermsExtractionOutput>,
}

/// `meeting-notes-lookup`'s contract: `{"answer": string}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MeetingNotesLookupOutput {
    pub answer: Option<String>,
}

/// `ticket-triage`'s contract: `{"category": enum, "priority": enum}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TicketTriageOutput {
    pub category: Option<String>,
    pub priority: Option<String>,
}

/// `contract-terms-extraction`'s contract: its ten fields (dates as `YYYY-MM-DD` strings).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContractTermsExtractionOutput {
    pub agreement_type: Option<String>,
    pub effective_date: Option<String>,
    pub initial_term_end_date: Option<String>,
    pub auto_renews: Option<bool>,
    pub renewal_term_months: Option<i64>,
    pub non_renewal_notice_days: Option<i64>,
    pub payment_terms_days: Option<i64>,
    pub termination_for_convenience: Option<bool>,
    pub termination_notice_days: Option<i64>,
    pub security_incident_notice_hours: Option<i64>,
}

/// The `field_correct` column: for each contract field, whether the answer's value equals
/// gold (false when the key is missing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContractFieldCorrect {
    pub agreement_type: bool,
    pub effective_date: bool,
    pub initial_term_end_date: bool,
    pub auto_renews: bool,
    pub renewal_term_months: bool,
    pub non_renewal_notice_days: bool,
    pub payment_terms_days: bool,
    pub termination_for_convenience: bool,
    pub termination_notice_days: bool,
    pub security_incident_notice_hours: bool,
}

/// The name of a family's field in [`ParsedOutput`]: the family with `_` for `-`.
pub fn parsed_output_field(family: TaskFamily) -> String {
    family.as_str().replace('-', "_")
}

/// Whether `value` has the type a contract declares (`family::output_schema`'s words), as
/// the column stores it: `int | null` is a 64-bit integer (null is stored as null anyway).
fn of_contract_type(kind: &str, value: &Value) -> bool {
    match kind {
        "string" | "enum" => value.is_string(),
        "bool" => value.is_boolean(),
        "int | null" => value.is_i64(),
        _ => false,
    }
}

impl ParsedOutput {
    /// The column's value for an answer of `family` that parsed as `parsed`: `None` unless it
    /// is a JSON object. Built from the family's contract, so a field the contract adds is a
    /// field here (the column types, tested against the contract, must follow).
    pub fn of(family: TaskFamily, parsed: &Value) -> Option<ParsedOutput> {
        // A synthetic answer has no contract (and is never parsed).
        family.is_scored().then_some(())?;
        let object = parsed.as_object()?;
        let contract = crate::family::output_schema(family);
        let typed: Map<String, Value> = contract
            .as_object()
            .into_iter()
            .flatten()
            .map(|(key, kind)| {
                let value = object.get(key).filter(|v| of_contract_type(kind.as_str().unwrap_or(""), v));
                (key.clone(), value.cloned().unwrap_or(Value::Null))
            })
            .collect();
        let typed = Value::Object(typed);
        // Every field is an `Option` of the type just checked, so this cannot fail (tested for
        // every family against its contract).
        const TYPED: &str = "a contract object of checked types fits its family's struct";
        let mut out = ParsedOutput::default();
        match family {
            TaskFamily::MeetingNotesLookup => {
                out.meeting_notes_lookup = Some(serde_json::from_value(typed).expect(TYPED))
            }
            TaskFamily::TicketTriage => out.ticket_triage = Some(serde_json::from_value(typed).expect(TYPED)),
            TaskFamily::ContractTermsExtraction => {
                out.contract_terms_extraction = Some(serde_json::from_value(typed).expect(TYPED))
            }
            TaskFamily::Synthetic => return None,
        }
        Some(out)
    }
}

impl ContractFieldCorrect {
    /// The column's value from per-field flags; `None` unless every contract field is flagged
    /// exactly once.
    pub fn of(flags: &[(&str, bool)]) -> Option<ContractFieldCorrect> {
        let object: Map<String, Value> = flags.iter().map(|(f, ok)| (f.to_string(), Value::Bool(*ok))).collect();
        if object.len() != flags.len() || flags.len() != crate::family::CONTRACT_FIELDS.len() {
            return None;
        }
        serde_json::from_value(Value::Object(object)).ok()
    }
}

/// `metrics.parquet` and `pooled.parquet`: a table's own leading columns, the columns the two
/// share, its own trailing ones. Each row repeats figures of `metrics.json`: `$name::of` takes
/// them from a group's metrics ([`GroupMetrics`]), each shared column from the field named
/// beside it, the flat percentiles from [`crate::documents::FlatPercentiles`]' list, so no
/// column is spelled twice and none can drift from the document.
///
/// `$name($args) reads $group; { leading } { trailing }`: `of($args)` reads the group's
/// metrics from `$group` and each own column from its expression.
macro_rules! metric_table {
    ($($table:tt)*) => {
        crate::documents::flat_percentile_fields!(metric_table_with_percentiles! { [$($table)*] });
    };
}

/// The shared columns, with the flat percentiles spliced in after the rates. Rates are
/// fractions in [0, 1]; percentiles are nearest-rank over the group's non-null samples
/// (milliseconds, tokens or tokens/s), null for an empty population.
macro_rules! metric_table_with_percentiles {
    ([$($head:tt)*] $($(#[$pdoc:meta])* $percentile:ident ($lower:ident, $upper:ident) = $summary:ident . $level:ident,)*) => {
        metric_table_columns! { $($head)* ;
            /// Requests of the group in `schedule.parquet`.
            scheduled_count: i64 = scheduled_count,
            /// Responses: requests that reached a final outcome.
            submitted_count: i64 = submitted_count,
            /// Scheduled requests without a response.
            missing_response_count: i64 = missing_response_count,
            /// Responses judged `valid_result`.
            correct_count: i64 = correct_count,
            /// Responses with an operational failure (any failure class).
            failed_request_count: i64 = failed_request_count,
            /// 2xx answers that were not strict JSON of the task's schema.
            invalid_result_count: i64 = invalid_result_count,
            /// 2xx answers of the schema that differ from gold.
            incorrect_result_count: i64 = incorrect_result_count,
            /// `correct_count / submitted_count`; null for an empty group.
            task_success_rate: Option<f64> = task_success_rate,
            /// The task success rate's 95 % Wilson score interval; null when the rate is.
            task_success_rate_lower: Option<f64> = task_success_rate_detail.lower(),
            task_success_rate_upper: Option<f64> = task_success_rate_detail.upper(),
            /// `failed_request_count / submitted_count`; null for an empty group.
            failure_rate: Option<f64> = failure_rate,
            /// The failure rate's 95 % Wilson score interval; null when the rate is.
            failure_rate_lower: Option<f64> = failure_rate_detail.lower(),
            failure_rate_upper: Option<f64> = failure_rate_detail.upper(),
            /// Each failure class's responses / submitted.
            timeout_rate: Option<f64> = failures.timeout_rate,
            http_429_rate: Option<f64> = failures.http_429_rate,
            other_http_4xx_rate: Option<f64> = failures.other_http_4xx_rate,
            http_5xx_rate: Option<f64> = failures.http_5xx_rate,
            transport_error_rate: Option<f64> = failures.transport_error_rate,
            other_http_rate: Option<f64> = failures.other_http_rate,
            invalid_stream_rate: Option<f64> = failures.invalid_stream_rate,
            stream_error_rate: Option<f64> = failures.stream_error_rate,
            truncated_rate: Option<f64> = failures.truncated_rate,
            /// Responses with reasoning before the first answer token / responses with a TTFA.
            reasoning_emission_rate: Option<f64> = reasoning_emission_rate,
            $($(#[$pdoc])* $percentile: Option<f64> = percentiles.$percentile,)*
            $(
                /// The lower bound of the percentile's 95 % interval; null without samples or
                /// when too few samples allow none.
                $lower: Option<f64> = summaries.$summary.percentiles.$level.lower(),
                /// The upper bound of the percentile's 95 % interval.
                $upper: Option<f64> = summaries.$summary.percentiles.$level.upper(),
            )*
            /// Samples behind the TTFA, E2E and speed percentiles.
            ttfa_population: i64 = summaries.ttfa_ms.population_count,
            e2e_latency_population: i64 = summaries.e2e_latency_ms.population_count,
            output_tokens_per_second_population: i64 = summaries.output_tokens_per_second.population_count,
            /// 2xx streams that ended (completed, truncated or reporting an error), and of those
            /// the ones without `[DONE]` and the ones without a `finish_reason`.
            ended_stream_count: i64 = stream_diagnostics.ended_stream_count,
            missing_done_count: i64 = stream_diagnostics.missing_done_count,
            missing_finish_reason_count: i64 = stream_diagnostics.missing_finish_reason_count,
            /// Responses reporting usage.
            usage_reported_count: i64 = usage.reported_count,
            /// Responses whose reported `usage.completion_tokens` differs from the local
            /// o200k_base count of their reasoning and answer text.
            usage_mismatch_count: i64 = stream_diagnostics.usage_mismatch_count,
            /// Complete answers that arrived at once (`responses.parquet`'s `answer_buffered`),
            /// and their share of the complete answers; none is a tokens/s sample.
            buffered_answer_count: i64 = stream_diagnostics.answer_streaming.buffered.numerator,
            buffered_answer_rate: Option<f64> = stream_diagnostics.answer_streaming.buffered.value,
            /// Chunks per complete answer, median.
            chunks_per_answer_p50: Option<f64> = stream_diagnostics.answer_streaming.chunks_per_answer.p50,
            /// Visible-answer tokens per chunk of the complete answers: median, p99, maximum.
            tokens_per_chunk_p50: Option<f64> = stream_diagnostics.answer_streaming.tokens_per_chunk.p50,
            tokens_per_chunk_p99: Option<f64> = stream_diagnostics.answer_streaming.tokens_per_chunk.p99,
            tokens_per_chunk_max: Option<f64> = stream_diagnostics.answer_streaming.tokens_per_chunk.max,
            /// Milliseconds between consecutive chunks of an answer: median and p99.
            inter_chunk_gap_ms_p50: Option<f64> = stream_diagnostics.answer_streaming.inter_chunk_gap_ms.p50,
            inter_chunk_gap_ms_p99: Option<f64> = stream_diagnostics.answer_streaming.inter_chunk_gap_ms.p99,
            /// Provider-reported prompt and completion tokens, summed over the reporting rows.
            input_tokens: i64 = usage.input_tokens,
            output_tokens: i64 = usage.output_tokens,
            /// Cost from provider-reported usage and the provider table's prices (reporting rows
            /// only), USD.
            known_cost_usd: f64 = cost.known_cost_usd,
        }
    };
}

/// The table's struct and its `of`, from every column in order.
macro_rules! metric_table_columns {
    (
        $(#[$meta:meta])*
        $name:ident ($($arg:ident : $aty:ty),*) reads $group:expr;
        { $($(#[$lmeta:meta])* $lead:ident : $lty:ty = $lval:expr,)* }
        { $($(#[$tmeta:meta])* $trail:ident : $tty:ty = $tval:expr,)* }
        ;
        $($(#[$cmeta:meta])* $column:ident : $cty:ty = $($field:ident).+ $(($($call:tt)*))?,)*
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        pub struct $name {
            $($(#[$lmeta])* pub $lead: $lty,)*
            $($(#[$cmeta])* pub $column: $cty,)*
            $($(#[$tmeta])* pub $trail: $tty,)*
        }

        impl $name {
            /// The row of a group's metrics.
            pub fn of($($arg: $aty),*) -> $name {
                let metrics: &GroupMetrics = $group;
                $name {
                    $($lead: $lval,)*
                    $($column: metrics.$($field).+ $(($($call)*))?,)*
                    $($trail: $tval,)*
                }
            }
        }
    };
}

metric_table! {
    /// `metrics.parquet`: one row per provider × task family of the spec (a family a provider
    /// never answered has its row, with zero counts), by provider then family name. The
    /// provider's pooled figures are `pooled.parquet`'s.
    MetricRow(metrics: &GroupMetrics, task_family: TaskFamily) reads metrics;
    {
        provider: String = metrics.provider.clone(),
        task_family: TaskFamily = task_family,
    } {}
}
impl Table for MetricRow {
    const NAME: &'static str = "metrics";
}

metric_table! {
    /// `pooled.parquet`: one row per provider, its balanced pooled metrics over all of its
    /// requests (percentiles over the concatenated samples, never averaged from the family
    /// rows), with its eligibility and rank; ranked providers first by rank, then the others by
    /// name (`metrics.json`'s `combined_provider_metrics` order).
    PooledRow(pooled: &PooledMetrics) reads &pooled.metrics;
    {
        provider: String = pooled.metrics.provider.clone(),
    } {
        /// Every spec family present with the same number of responses.
        balanced: bool = pooled.balanced,
        /// Every completed response named the provider's model id (or an alias).
        configuration_compatible: bool = pooled.configuration_compatible,
        /// Balanced, and every scheduled request has a response.
        artifact_graph_complete: bool = pooled.artifact_graph_complete,
        /// Ranked: no ineligibility reason.
        eligible: bool = pooled.eligible,
        /// Why the provider is not ranked, the reference's reason strings in its order; empty
        /// when eligible.
        ineligibility_reasons: Vec<String> = pooled.ineligibility_reasons.clone(),
        /// The same reasons with what the run showed, one per reason, in the same order.
        ineligibility_details: Vec<String> = pooled.ineligibility_details.clone(),
        /// 1-based rank among eligible providers by pooled E2E p99 (then name); null when not
        /// ranked.
        rank: Option<i64> = pooled.rank,
        /// The first and last rank of the range the provider shares with neighbours the run
        /// cannot tell apart from it (`metrics.json`'s `rank_range`); null when not ranked.
        rank_first: Option<i64> = pooled.rank_range.as_ref().map(|r| r.first),
        rank_last: Option<i64> = pooled.rank_range.as_ref().map(|r| r.last),
    }
}
impl Table for PooledRow {
    const NAME: &'static str = "pooled";
}

/// `events.parquet`: one row per line of the event log, derived by the store's seal
/// (`inferbench_store::events_table`).
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
    pub task_family: Option<TaskFamily>,
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
    // A row of the log holds its raw text (an SSE event's data, a request's whole body), so a
    // group of the default size buffers tens of megabytes while it is written and read: the
    // largest part of a sealing fetch's peak memory.
    const ROW_GROUP_ROWS: usize = 16_384;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parsed_output_keeps_values_of_the_contract_type_only() {
        let contract = ParsedOutput::of(
            TaskFamily::ContractTermsExtraction,
            &json!({"agreement_type": "saas_subscription", "auto_renews": "yes", "renewal_term_months": 12.0,
                "payment_terms_days": 30, "termination_notice_days": null, "notes": "extra"}),
        )
        .unwrap();
        assert_eq!((contract.meeting_notes_lookup.clone(), contract.ticket_triage.clone()), (None, None));
        let c = contract.contract_terms_extraction.unwrap();
        assert_eq!(c.agreement_type.as_deref(), Some("saas_subscription"));
        assert_eq!((c.auto_renews, c.renewal_term_months, c.payment_terms_days), (None, None, Some(30)));
        assert_eq!((c.termination_notice_days, c.effective_date), (None, None));
        let ticket = ParsedOutput::of(TaskFamily::TicketTriage, &json!({"category": "bug", "priority": 2})).unwrap();
        assert_eq!(ticket.ticket_triage, Some(TicketTriageOutput { category: Some("bug".into()), priority: None }));
        let meeting = ParsedOutput::of(TaskFamily::MeetingNotesLookup, &json!({"answer": "Ada"})).unwrap();
        assert_eq!(meeting.meeting_notes_lookup.unwrap().answer.as_deref(), Some("Ada"));
        assert_eq!(ParsedOutput::of(TaskFamily::MeetingNotesLookup, &json!(["Ada"])), None);
        assert_eq!(ParsedOutput::of(TaskFamily::TicketTriage, &json!("bug")), None);
        // An integer beyond i64 is not of the column's type.
        let big = ParsedOutput::of(TaskFamily::ContractTermsExtraction, &json!({"payment_terms_days": u64::MAX}));
        assert_eq!(big.unwrap().contract_terms_extraction.unwrap().payment_terms_days, None);
    }

    #[test]
    fn field_correct_needs_every_contract_field_once() {
        let flags: Vec<(&str, bool)> =
            crate::family::CONTRACT_FIELDS.iter().map(|f| (*f, *f != "auto_renews")).collect();
        let correct = ContractFieldCorrect::of(&flags).unwrap();
        assert!(!correct.auto_renews && correct.agreement_type && correct.security_incident_notice_hours);
        assert_eq!(ContractFieldCorrect::of(&flags[1..]), None);
        let mut twice = flags.clone();
        twice[1] = twice[0];
        assert_eq!(ContractFieldCorrect::of(&twice), None);
    }
}
