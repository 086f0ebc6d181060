//! `metrics.json` and `comparisons.json`: the documents `ib-aggregate` writes and `ib-report`
//! reads. Both stages use these types, so the writer and the reader cannot drift apart.
//!
//! Field order is the order in the file. A metrics row is flat (`timeout_rate`, `ttfa_ms`,
//! `ttfa_p50` are keys of the row itself, as in the reference format); the `#[serde(flatten)]`
//! groups below only give those keys a name in Rust.
use crate::vocab::OperationalOutcome;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The format of both documents. Readers refuse any other.
pub const METRICS_VERSION: &str = "inferbench-metrics-v1";

/// `metrics.json`: per provider × task family metrics, each provider's balanced pooled metrics,
/// its eligibility and the ranking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricsDocument {
    /// The format version, `inferbench-metrics-v1`.
    pub metrics_version: String,
    /// The benchmark's slug, from the spec.
    pub benchmark_slug: String,
    /// The run these metrics belong to (`lock.json`'s `run_id`).
    pub run_id: String,
    /// How every percentile in the document was computed, in words.
    pub percentile_convention: String,
    /// The thresholds a provider's pooled row must meet to be ranked.
    pub eligibility: EligibilityPolicy,
    /// One row per scheduled provider × spec family: providers by name, families in the spec's
    /// order, including families a provider never answered.
    pub task_family_metrics: Vec<GroupMetrics>,
    /// One balanced pooled row per provider: ranked providers first (by rank), then the others
    /// by name.
    pub combined_provider_metrics: Vec<PooledMetrics>,
    /// Ranked provider names, best (lowest pooled E2E p99) first.
    pub ranking: Vec<String>,
    /// The code that wrote the document and the files it was derived from.
    pub provenance: Provenance,
}

/// `comparisons.json`: paired analysis over the run's rounds, in which every provider answered
/// the same item at the same time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ComparisonsDocument {
    /// The format version, `inferbench-metrics-v1`.
    pub metrics_version: String,
    /// The benchmark's slug, from the spec.
    pub benchmark_slug: String,
    /// The run these comparisons belong to (`lock.json`'s `run_id`).
    pub run_id: String,
    /// How every percentile in the document was computed, in words.
    pub percentile_convention: String,
    /// How a round's credit is shared when several providers tie for fastest, in words.
    pub tie_rule: String,
    /// Each provider's eligibility for the comparisons (the ranking's), by provider name.
    pub provider_eligibility: Vec<ProviderEligibility>,
    /// Fastest-provider wins, one row per provider in `provider_eligibility` order.
    pub fastest_provider_wins: Vec<WinRow>,
    /// Per-round E2E differences for every pair of providers, `provider_a < provider_b` by name.
    pub pairwise_e2e_latency_differences: Vec<PairRow>,
    /// The code that wrote the document and the files it was derived from (the same as
    /// `metrics.json`'s).
    pub provenance: Provenance,
}

/// The code that wrote a file and the files it was derived from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// The code version that wrote the file: package version and git commit.
    pub code_version: String,
    /// Logical file name (never a path) → SHA-256 of every file it was derived from.
    pub inputs: BTreeMap<String, String>,
}

impl Provenance {
    /// Provenance stamped with this build's code version.
    pub fn new(inputs: &BTreeMap<String, String>) -> Self {
        Provenance { code_version: crate::CODE_VERSION.to_string(), inputs: inputs.clone() }
    }
}

/// Where the ranking's thresholds sit, so a reader of the JSON need not read the code. Both
/// are inclusive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EligibilityPolicy {
    /// The lowest task success rate (a fraction) that is still eligible.
    pub min_task_success_rate: f64,
    /// The highest operational failure rate (a fraction) that is still eligible.
    pub max_failure_rate: f64,
}

/// The metrics of one group of requests: a provider × task family, or (flattened into
/// [`PooledMetrics`]) all of a provider's requests. Every response stays in every denominator,
/// failures included; a percentile's samples are the non-null values of its column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GroupMetrics {
    /// The provider's name in the provider table.
    pub provider: String,
    /// A task family, or `pooled`.
    pub task_family: String,
    /// Requests in `schedule.parquet`.
    pub scheduled_count: i64,
    /// Responses: every request that reached a terminal outcome.
    pub submitted_count: i64,
    /// Scheduled requests without a response (they make the artifact graph incomplete).
    pub missing_response_count: i64,
    /// Responses judged `valid_result` (a correct answer).
    pub correct_count: i64,
    /// Responses with an operational failure (any failure class below).
    pub failed_request_count: i64,
    /// 2xx responses whose answer was not valid JSON of the task's schema.
    pub invalid_result_count: i64,
    /// 2xx responses with a valid but wrong answer.
    pub incorrect_result_count: i64,
    /// `correct_count / submitted_count`; null for an empty group.
    pub task_success_rate: Option<f64>,
    /// The task success rate with the counts it came from.
    pub task_success_rate_detail: RateDetail,
    /// `failed_request_count / submitted_count`; null for an empty group.
    pub failure_rate: Option<f64>,
    /// The failure rate with the counts it came from.
    pub failure_rate_detail: RateDetail,
    /// Each failure class's rate and count.
    #[serde(flatten)]
    pub failures: FailureCounts,
    /// Responses with reasoning before the first answer token / responses with a TTFA.
    pub reasoning_emission_rate: Option<f64>,
    /// The reasoning emission rate with its counts; responses without a TTFA are its missing
    /// samples.
    pub reasoning_emission_detail: RateDetail,
    /// One population-and-percentiles summary per percentile metric.
    #[serde(flatten)]
    pub summaries: MetricSummaries,
    /// The same percentiles as flat `<metric>_pK` keys.
    #[serde(flatten)]
    pub percentiles: FlatPercentiles,
    /// Provider-reported token usage.
    pub usage: Usage,
    /// Cost of the requests that reported usage.
    pub cost: Cost,
    /// How the 2xx streams ended and whether usage agrees with the local token count.
    pub stream_diagnostics: StreamDiagnostics,
    /// Contract extraction only: how many fields the returned objects got right.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_field_diagnostics: Option<FieldDiagnostics>,
}

impl GroupMetrics {
    /// A numeric column of the row by its key in the file (`correct_count`,
    /// `task_success_rate`, `http_429_rate`, `e2e_latency_p99`, …) as a float: `Some(None)`
    /// for a null, `None` when the row has no numeric column of that name. The spec names the
    /// report's required columns this way.
    pub fn column(&self, name: &str) -> Option<Option<f64>> {
        let count = |n: i64| Some(Some(n as f64));
        match name {
            "scheduled_count" => count(self.scheduled_count),
            "submitted_count" => count(self.submitted_count),
            "missing_response_count" => count(self.missing_response_count),
            "correct_count" => count(self.correct_count),
            "failed_request_count" => count(self.failed_request_count),
            "invalid_result_count" => count(self.invalid_result_count),
            "incorrect_result_count" => count(self.incorrect_result_count),
            "task_success_rate" => Some(self.task_success_rate),
            "failure_rate" => Some(self.failure_rate),
            "reasoning_emission_rate" => Some(self.reasoning_emission_rate),
            _ => self.failures.column(name).or_else(|| self.percentiles.get(name)),
        }
    }

    /// A flat percentile such as `e2e_latency_p99`; `None` when it has no samples (or no such
    /// key).
    pub fn percentile(&self, key: &str) -> Option<f64> {
        self.percentiles.get(key).flatten()
    }

    /// A metric's population (e.g. `ttfa_ms`), 0 for an unknown metric.
    pub fn population(&self, metric: &str) -> i64 {
        self.summaries.get(metric).map_or(0, |s| s.population_count)
    }
}

/// A rate with the counts it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RateDetail {
    /// `numerator / denominator`; null when the denominator is 0.
    pub value: Option<f64>,
    /// The requests counted.
    pub numerator: i64,
    /// The requests counted among.
    pub denominator: i64,
    /// Submitted requests outside the denominator (e.g. without a TTFA).
    pub missing_sample_count: i64,
}

/// Counts of each operational failure class, each with its rate over the submitted requests.
/// The classes are the reference's five, then `other_http` (HTTP 1xx/3xx), then the three
/// stream failures the reference counted as transport errors or as successes: an invalid
/// stream, an error reported inside the stream, a truncated stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FailureCounts {
    /// Share of responses that hit the request deadline; null for an empty group.
    pub timeout_rate: Option<f64>,
    /// Responses that hit the request deadline.
    pub timeout_count: i64,
    /// Share of responses with HTTP 429; null for an empty group.
    pub http_429_rate: Option<f64>,
    /// Responses with HTTP 429 (rate limited).
    pub http_429_count: i64,
    /// Share of responses with an HTTP 4xx other than 429; null for an empty group.
    pub other_http_4xx_rate: Option<f64>,
    /// Responses with an HTTP 4xx other than 429.
    pub other_http_4xx_count: i64,
    /// Share of responses with an HTTP 5xx; null for an empty group.
    pub http_5xx_rate: Option<f64>,
    /// Responses with an HTTP 5xx.
    pub http_5xx_count: i64,
    /// Share of responses whose connection broke (connect, TLS, reset, body read error); null
    /// for an empty group.
    pub transport_error_rate: Option<f64>,
    /// Responses whose connection broke.
    pub transport_error_count: i64,
    /// Share of responses with HTTP 1xx/3xx; null for an empty group.
    pub other_http_rate: Option<f64>,
    /// Responses with HTTP 1xx/3xx.
    pub other_http_count: i64,
    /// Share of 2xx responses that were not a valid event stream (another content type, no
    /// event, non-JSON data, a size cap exceeded); null for an empty group.
    pub invalid_stream_rate: Option<f64>,
    /// Responses that were not a valid event stream.
    pub invalid_stream_count: i64,
    /// Share of 2xx streams in which the provider reported an error; null for an empty group.
    pub stream_error_rate: Option<f64>,
    /// Streams in which the provider reported an error.
    pub stream_error_count: i64,
    /// Share of 2xx streams that ended with neither `[DONE]` nor a `finish_reason`; null for
    /// an empty group.
    pub truncated_rate: Option<f64>,
    /// Streams that ended with neither `[DONE]` nor a `finish_reason`.
    pub truncated_count: i64,
}

impl FailureCounts {
    /// The counts of `OperationalOutcome::FAILURES` (in that order) among `submitted` responses.
    pub fn new(counts: [i64; 9], submitted: i64) -> FailureCounts {
        let rate = |n: i64| (submitted > 0).then(|| n as f64 / submitted as f64);
        let [timeout, http_429, other_4xx, http_5xx, transport, other_http, invalid, stream_error, truncated] = counts;
        FailureCounts {
            timeout_rate: rate(timeout),
            timeout_count: timeout,
            http_429_rate: rate(http_429),
            http_429_count: http_429,
            other_http_4xx_rate: rate(other_4xx),
            other_http_4xx_count: other_4xx,
            http_5xx_rate: rate(http_5xx),
            http_5xx_count: http_5xx,
            transport_error_rate: rate(transport),
            transport_error_count: transport,
            other_http_rate: rate(other_http),
            other_http_count: other_http,
            invalid_stream_rate: rate(invalid),
            invalid_stream_count: invalid,
            stream_error_rate: rate(stream_error),
            stream_error_count: stream_error,
            truncated_rate: rate(truncated),
            truncated_count: truncated,
        }
    }

    /// Each class with its count and rate, in file order; the class's label prefixes its
    /// `<label>_rate` and `<label>_count` keys.
    pub fn classes(&self) -> [(OperationalOutcome, i64, Option<f64>); 9] {
        use OperationalOutcome as O;
        [
            (O::Timeout, self.timeout_count, self.timeout_rate),
            (O::Http429, self.http_429_count, self.http_429_rate),
            (O::Other4xx, self.other_http_4xx_count, self.other_http_4xx_rate),
            (O::Http5xx, self.http_5xx_count, self.http_5xx_rate),
            (O::TransportError, self.transport_error_count, self.transport_error_rate),
            (O::OtherHttp, self.other_http_count, self.other_http_rate),
            (O::InvalidStream, self.invalid_stream_count, self.invalid_stream_rate),
            (O::StreamError, self.stream_error_count, self.stream_error_rate),
            (O::Truncated, self.truncated_count, self.truncated_rate),
        ]
    }

    /// The rate of the class labelled `label` (e.g. `http_429`).
    pub fn rate(&self, label: &str) -> Option<f64> {
        let class = self.classes().into_iter().find(|(c, _, _)| c.label() == label);
        class.and_then(|(_, _, rate)| rate)
    }

    /// All failures: the sum of the class counts.
    pub fn total(&self) -> i64 {
        self.classes().iter().map(|(_, count, _)| count).sum()
    }

    /// A `<label>_rate` or `<label>_count` key as a float.
    fn column(&self, name: &str) -> Option<Option<f64>> {
        self.classes().into_iter().find_map(|(class, count, rate)| match name.strip_prefix(class.label())? {
            "_rate" => Some(rate),
            "_count" => Some(Some(count as f64)),
            _ => None,
        })
    }
}

/// What a provider's 2xx streams looked like at their end, and whether its token usage agrees
/// with the local count: diagnostics, not failures in themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamDiagnostics {
    /// 2xx streams that ended by themselves: completed, truncated, or reporting an error.
    pub ended_stream_count: i64,
    /// Of those, streams without `[DONE]`.
    pub missing_done_count: i64,
    /// Of those, streams without a `finish_reason`.
    pub missing_finish_reason_count: i64,
    /// Responses that reported `usage.completion_tokens`.
    pub usage_reported_count: i64,
    /// Of those, responses whose reported completion tokens differ from the local o200k_base
    /// count of their reasoning and answer text (a provider's own tokenizer counts
    /// differently, so some disagreement is expected; a large share deserves a look).
    pub usage_mismatch_count: i64,
}

/// One summary per percentile metric, keyed by the metric's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricSummaries {
    /// Time to first output (reasoning or answer), milliseconds.
    pub ttfo_ms: Summary,
    /// Time to first visible answer token, milliseconds.
    pub ttfa_ms: Summary,
    /// Reasoning tokens emitted before the first answer token.
    pub pre_answer_reasoning_tokens: Summary,
    /// End-to-end latency of complete responses, milliseconds.
    pub e2e_latency_ms: Summary,
    /// Visible-answer tokens per second of complete responses; its p95/p99 are floors (lower
    /// tail), since higher is better.
    pub output_tokens_per_second: Summary,
}

impl MetricSummaries {
    /// Each metric's (key, summary), in file order.
    pub fn entries(&self) -> [(&'static str, &Summary); 5] {
        [
            ("ttfo_ms", &self.ttfo_ms),
            ("ttfa_ms", &self.ttfa_ms),
            ("pre_answer_reasoning_tokens", &self.pre_answer_reasoning_tokens),
            ("e2e_latency_ms", &self.e2e_latency_ms),
            ("output_tokens_per_second", &self.output_tokens_per_second),
        ]
    }

    /// The summary of the metric keyed `key` (e.g. `ttfa_ms`).
    pub fn get(&self, key: &str) -> Option<&Summary> {
        let entry = self.entries().into_iter().find(|(k, _)| *k == key);
        entry.map(|(_, summary)| summary)
    }
}

/// One percentile metric's population and percentiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Responses with a sample of this metric.
    pub population_count: i64,
    /// Responses in the group.
    pub submitted_count: i64,
    /// Responses without a sample (failed or incomplete).
    pub missing_sample_count: i64,
    /// `population_count / submitted_count`; null for an empty group.
    pub population_rate: Option<f64>,
    /// The metric's p50, p95 and p99 over its population.
    pub percentiles: Percentiles,
}

/// The reported percentile levels of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Percentiles {
    /// The median (nearest rank `ceil(n/2)`).
    pub p50: PercentileValue,
    /// The 95th percentile (a floor for output speed).
    pub p95: PercentileValue,
    /// The 99th percentile (a floor for output speed).
    pub p99: PercentileValue,
}

/// A percentile's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PercentileValue {
    /// The sample at the percentile's rank; null without samples.
    pub value: Option<f64>,
}

/// The summaries' percentiles as flat `<metric>_pK` keys, the columns the spec requires. Each
/// is null without samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlatPercentiles {
    /// Time to first output p50, milliseconds.
    pub ttfo_p50: Option<f64>,
    /// Time to first output p95, milliseconds.
    pub ttfo_p95: Option<f64>,
    /// Time to first output p99, milliseconds.
    pub ttfo_p99: Option<f64>,
    /// Time to first answer token p50, milliseconds.
    pub ttfa_p50: Option<f64>,
    /// Time to first answer token p95, milliseconds.
    pub ttfa_p95: Option<f64>,
    /// Time to first answer token p99, milliseconds.
    pub ttfa_p99: Option<f64>,
    /// Reasoning tokens before the answer, p50.
    pub pre_answer_reasoning_tokens_p50: Option<f64>,
    /// Reasoning tokens before the answer, p95.
    pub pre_answer_reasoning_tokens_p95: Option<f64>,
    /// Reasoning tokens before the answer, p99.
    pub pre_answer_reasoning_tokens_p99: Option<f64>,
    /// End-to-end latency p50, milliseconds.
    pub e2e_latency_p50: Option<f64>,
    /// End-to-end latency p95, milliseconds.
    pub e2e_latency_p95: Option<f64>,
    /// End-to-end latency p99, milliseconds (the ranking key).
    pub e2e_latency_p99: Option<f64>,
    /// Visible-answer tokens per second, median.
    pub output_tokens_per_second_p50: Option<f64>,
    /// Visible-answer tokens per second, p95 floor: at least 95% of samples are this fast.
    pub output_tokens_per_second_p95: Option<f64>,
    /// Visible-answer tokens per second, p99 floor: at least 99% of samples are this fast.
    pub output_tokens_per_second_p99: Option<f64>,
}

impl FlatPercentiles {
    /// The flat keys of `summaries`: by definition they repeat the summaries' percentiles.
    pub fn of(summaries: &MetricSummaries) -> Self {
        let p = |s: &Summary| {
            let q = &s.percentiles;
            [q.p50.value, q.p95.value, q.p99.value]
        };
        let [ttfo_p50, ttfo_p95, ttfo_p99] = p(&summaries.ttfo_ms);
        let [ttfa_p50, ttfa_p95, ttfa_p99] = p(&summaries.ttfa_ms);
        let [reasoning_p50, reasoning_p95, reasoning_p99] = p(&summaries.pre_answer_reasoning_tokens);
        let [e2e_p50, e2e_p95, e2e_p99] = p(&summaries.e2e_latency_ms);
        let [speed_p50, speed_p95, speed_p99] = p(&summaries.output_tokens_per_second);
        FlatPercentiles {
            ttfo_p50,
            ttfo_p95,
            ttfo_p99,
            ttfa_p50,
            ttfa_p95,
            ttfa_p99,
            pre_answer_reasoning_tokens_p50: reasoning_p50,
            pre_answer_reasoning_tokens_p95: reasoning_p95,
            pre_answer_reasoning_tokens_p99: reasoning_p99,
            e2e_latency_p50: e2e_p50,
            e2e_latency_p95: e2e_p95,
            e2e_latency_p99: e2e_p99,
            output_tokens_per_second_p50: speed_p50,
            output_tokens_per_second_p95: speed_p95,
            output_tokens_per_second_p99: speed_p99,
        }
    }

    /// Each (key, value), in file order.
    pub fn entries(&self) -> [(&'static str, Option<f64>); 15] {
        [
            ("ttfo_p50", self.ttfo_p50),
            ("ttfo_p95", self.ttfo_p95),
            ("ttfo_p99", self.ttfo_p99),
            ("ttfa_p50", self.ttfa_p50),
            ("ttfa_p95", self.ttfa_p95),
            ("ttfa_p99", self.ttfa_p99),
            ("pre_answer_reasoning_tokens_p50", self.pre_answer_reasoning_tokens_p50),
            ("pre_answer_reasoning_tokens_p95", self.pre_answer_reasoning_tokens_p95),
            ("pre_answer_reasoning_tokens_p99", self.pre_answer_reasoning_tokens_p99),
            ("e2e_latency_p50", self.e2e_latency_p50),
            ("e2e_latency_p95", self.e2e_latency_p95),
            ("e2e_latency_p99", self.e2e_latency_p99),
            ("output_tokens_per_second_p50", self.output_tokens_per_second_p50),
            ("output_tokens_per_second_p95", self.output_tokens_per_second_p95),
            ("output_tokens_per_second_p99", self.output_tokens_per_second_p99),
        ]
    }

    /// The value of the key `key`: `Some(None)` for a percentile without samples, `None` for
    /// an unknown key.
    pub fn get(&self, key: &str) -> Option<Option<f64>> {
        let entry = self.entries().into_iter().find(|(k, _)| *k == key);
        entry.map(|(_, value)| value)
    }
}

/// Provider-reported token usage. A request counts when it reported both prompt and
/// completion tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Responses that reported usage.
    pub reported_count: i64,
    /// Responses in the group.
    pub submitted_count: i64,
    /// Responses without usage.
    pub missing_count: i64,
    /// `reported_count / submitted_count`; null for an empty group.
    pub coverage_rate: Option<f64>,
    /// Prompt tokens summed over the reporting responses.
    pub input_tokens: i64,
    /// Completion tokens summed over the reporting responses.
    pub output_tokens: i64,
    /// `input_tokens + output_tokens`.
    pub total_tokens: i64,
}

/// Cost of the requests that reported usage, at the provider table's prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cost {
    /// Responses that reported usage (and so have a cost).
    pub reported_count: i64,
    /// Responses in the group.
    pub submitted_count: i64,
    /// Responses without usage (their cost is unknown).
    pub missing_count: i64,
    /// `reported_count / submitted_count`; null for an empty group.
    pub coverage_rate: Option<f64>,
    /// Cost of the reporting responses, USD.
    pub known_cost_usd: f64,
    /// The total cost, USD, only when every response reported usage; a partial sum is not a
    /// total.
    pub total_cost_usd: Option<f64>,
    /// The prices the cost was computed at.
    pub price_usd_per_million_tokens: PriceUsd,
}

/// A provider's prices, USD per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PriceUsd {
    /// USD per million prompt tokens.
    pub input: f64,
    /// USD per million completion tokens.
    pub output: f64,
}

/// Contract extraction: how many fields the returned objects got right.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldDiagnostics {
    /// The number of fields a contract answer has.
    pub field_count_total: i64,
    /// Evaluations that counted correct fields (a JSON object came back).
    pub returned_object_count: i64,
    /// Median correct fields per returned object; the mean of the two middle values for an
    /// even count; null when no object came back.
    pub median_correct_fields_returned: Option<f64>,
}

/// A provider's balanced pooled row: its metrics over all its requests, with its eligibility
/// and rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PooledMetrics {
    /// The metrics over all of the provider's requests; `task_family` is `pooled`.
    #[serde(flatten)]
    pub metrics: GroupMetrics,
    /// How the families are pooled: `pooled_balanced_requests`.
    pub weighting: String,
    /// Families with at least one response.
    pub task_family_count: i64,
    /// Families in the spec.
    pub expected_task_family_count: i64,
    /// Spec families without any response.
    pub missing_task_families: Vec<String>,
    /// Family → responses.
    pub task_family_submitted_counts: BTreeMap<String, i64>,
    /// Every expected family present with the same number of submitted requests.
    pub balanced: bool,
    /// The model ids a completed response may name: the provider's `model_id`, then its
    /// aliases.
    pub expected_models: Vec<String>,
    /// Model id → completed responses that named it (all of them, expected or not).
    pub models_returned: BTreeMap<String, i64>,
    /// Completed responses that named a model other than the expected ones.
    pub model_mismatch_count: i64,
    /// Completed responses that named no model at all (the model is then unverified, which
    /// is not the same as a mismatch).
    pub model_missing_count: i64,
    /// Every completed response named an expected model (and there was at least one, or no
    /// completed response at all).
    pub configuration_compatible: bool,
    /// Balanced, and every scheduled request has a response.
    pub artifact_graph_complete: bool,
    /// No ineligibility reason.
    pub eligible: bool,
    /// Why the provider is not ranked: the reference's reason strings, in its order; empty
    /// when eligible.
    pub ineligibility_reasons: Vec<String>,
    /// The same reasons with what the run showed (which model the responses named, and how
    /// often), one per reason, in the same order.
    pub ineligibility_details: Vec<String>,
    /// 1-based rank among eligible providers with an E2E p99; null when unranked.
    pub rank: Option<i64>,
}

/// A provider's eligibility for paired comparisons (reference §8.6): it takes part unless its
/// configuration is incompatible or its artifact graph incomplete. The success and failure
/// thresholds decide ranking only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderEligibility {
    /// The provider's name.
    pub provider: String,
    /// Its pooled row's `configuration_compatible`.
    pub configuration_compatible: bool,
    /// Its pooled row's `artifact_graph_complete`.
    pub artifact_graph_complete: bool,
    /// Compatible and complete.
    pub eligible: bool,
    /// `incompatible model or request configuration`, `incomplete or internally inconsistent
    /// local artifact graph`, or both; empty when eligible.
    pub exclusion_reasons: Vec<String>,
}

/// A provider's fastest-provider wins: in each round, the eligible provider with the lowest
/// E2E wins; an exact tie of k providers gives each 1/k.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WinRow {
    /// The provider's name.
    pub provider: String,
    /// Its paired eligibility's `configuration_compatible`.
    pub configuration_compatible: bool,
    /// Its paired eligibility's `artifact_graph_complete`.
    pub artifact_graph_complete: bool,
    /// Whether it takes part (ineligible providers get no credit).
    pub eligible: bool,
    /// Why it does not take part; empty when eligible.
    pub exclusion_reasons: Vec<String>,
    /// Outright wins plus 1/k for each k-way tie.
    pub credited_wins: f64,
    /// Rounds it alone was fastest in.
    pub outright_wins: i64,
    /// Rounds it tied for fastest in.
    pub tied_fastest_rounds: i64,
    /// Rounds with at least one eligible E2E sample (the same for every provider).
    pub eligible_round_count: i64,
    /// Rounds in which it took part with an E2E sample.
    pub eligible_e2e_sample_count: i64,
    /// Rounds in which it did not take part (ineligible, or no complete response).
    pub excluded_or_missing_sample_count: i64,
    /// All rounds of the schedule.
    pub total_round_count: i64,
    /// Credited wins / eligible rounds; null for an ineligible provider.
    pub win_rate: Option<f64>,
}

/// The per-round E2E differences of one pair of providers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairRow {
    /// The first provider (by name).
    pub provider_a: String,
    /// The second provider (by name).
    pub provider_b: String,
    /// What a difference is: `provider_a_e2e_latency_ms - provider_b_e2e_latency_ms`
    /// (negative favours A).
    pub difference_definition: String,
    /// Both providers are eligible.
    pub eligible_comparison: bool,
    /// `<provider>: <reason>` for each ineligible side, sorted.
    pub exclusion_reasons: Vec<String>,
    /// Rounds where both have an E2E sample (0 when the comparison is not eligible).
    pub paired_count: i64,
    /// All rounds of the schedule.
    pub total_round_count: i64,
    /// `total_round_count - paired_count`.
    pub missing_pair_count: i64,
    /// `paired_count / total_round_count`; null without rounds.
    pub coverage_rate: Option<f64>,
    /// Upper-tail nearest-rank p50 of the differences, milliseconds; null without pairs.
    pub difference_p50_ms: Option<f64>,
    /// Upper-tail nearest-rank p95 of the differences, milliseconds; null without pairs.
    pub difference_p95_ms: Option<f64>,
    /// Upper-tail nearest-rank p99 of the differences, milliseconds; null without pairs.
    pub difference_p99_ms: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(numerator: i64, denominator: i64) -> RateDetail {
        RateDetail {
            value: Some(numerator as f64 / denominator as f64),
            numerator,
            denominator,
            missing_sample_count: 0,
        }
    }

    /// A summary whose percentiles start at `base`, so every key gets a distinct value.
    fn summary(base: f64) -> Summary {
        let value = |v: f64| PercentileValue { value: Some(v) };
        Summary {
            population_count: 3,
            submitted_count: 4,
            missing_sample_count: 1,
            population_rate: Some(0.75),
            percentiles: Percentiles { p50: value(base), p95: value(base + 1.0), p99: value(base + 2.0) },
        }
    }

    /// A row with a distinct, non-null value in every numeric key.
    fn group(family: &str) -> GroupMetrics {
        let summaries = MetricSummaries {
            ttfo_ms: summary(10.0),
            ttfa_ms: summary(20.0),
            pre_answer_reasoning_tokens: summary(30.0),
            e2e_latency_ms: summary(40.0),
            output_tokens_per_second: summary(50.0),
        };
        GroupMetrics {
            provider: "a".into(),
            task_family: family.into(),
            scheduled_count: 5,
            submitted_count: 4,
            missing_response_count: 1,
            correct_count: 2,
            failed_request_count: 45,
            invalid_result_count: 3,
            incorrect_result_count: 6,
            task_success_rate: Some(0.5),
            task_success_rate_detail: detail(2, 4),
            failure_rate: Some(0.25),
            failure_rate_detail: detail(1, 4),
            failures: FailureCounts::new([1, 2, 3, 4, 5, 6, 7, 8, 9], 100),
            reasoning_emission_rate: Some(0.125),
            reasoning_emission_detail: detail(1, 8),
            percentiles: FlatPercentiles::of(&summaries),
            summaries,
            usage: Usage {
                reported_count: 4,
                submitted_count: 4,
                missing_count: 0,
                coverage_rate: Some(1.0),
                input_tokens: 40,
                output_tokens: 20,
                total_tokens: 60,
            },
            stream_diagnostics: StreamDiagnostics {
                ended_stream_count: 4,
                missing_done_count: 1,
                missing_finish_reason_count: 2,
                usage_reported_count: 4,
                usage_mismatch_count: 3,
            },
            cost: Cost {
                reported_count: 4,
                submitted_count: 4,
                missing_count: 0,
                coverage_rate: Some(1.0),
                known_cost_usd: 0.5,
                total_cost_usd: Some(0.5),
                price_usd_per_million_tokens: PriceUsd { input: 1.0, output: 2.0 },
            },
            contract_field_diagnostics: Some(FieldDiagnostics {
                field_count_total: 10,
                returned_object_count: 3,
                median_correct_fields_returned: Some(9.5),
            }),
        }
    }

    fn pooled() -> PooledMetrics {
        PooledMetrics {
            metrics: GroupMetrics { contract_field_diagnostics: None, ..group("pooled") },
            weighting: "pooled_balanced_requests".into(),
            task_family_count: 1,
            expected_task_family_count: 1,
            missing_task_families: vec![],
            task_family_submitted_counts: BTreeMap::from([("f".to_string(), 4)]),
            balanced: true,
            expected_models: vec!["m".into()],
            models_returned: BTreeMap::from([("m".to_string(), 4)]),
            model_mismatch_count: 0,
            model_missing_count: 0,
            configuration_compatible: true,
            artifact_graph_complete: true,
            eligible: false,
            ineligibility_reasons: vec!["task success rate below 95%".into()],
            ineligibility_details: vec!["task success rate below 95%".into()],
            rank: None,
        }
    }

    fn provenance() -> Provenance {
        Provenance::new(&BTreeMap::from([("lock.json".to_string(), "ab".repeat(32))]))
    }

    fn metrics() -> MetricsDocument {
        MetricsDocument {
            metrics_version: METRICS_VERSION.into(),
            benchmark_slug: "slug".into(),
            run_id: "run-1".into(),
            percentile_convention: "nearest-rank".into(),
            eligibility: EligibilityPolicy { min_task_success_rate: 0.95, max_failure_rate: 0.01 },
            task_family_metrics: vec![group("f")],
            combined_provider_metrics: vec![pooled()],
            ranking: vec![],
            provenance: provenance(),
        }
    }

    fn comparisons() -> ComparisonsDocument {
        ComparisonsDocument {
            metrics_version: METRICS_VERSION.into(),
            benchmark_slug: "slug".into(),
            run_id: "run-1".into(),
            percentile_convention: "nearest-rank".into(),
            tie_rule: "split".into(),
            provider_eligibility: vec![ProviderEligibility {
                provider: "a".into(),
                configuration_compatible: true,
                artifact_graph_complete: true,
                eligible: true,
                exclusion_reasons: vec![],
            }],
            fastest_provider_wins: vec![WinRow {
                provider: "a".into(),
                configuration_compatible: true,
                artifact_graph_complete: true,
                eligible: true,
                exclusion_reasons: vec![],
                credited_wins: 2.5,
                outright_wins: 2,
                tied_fastest_rounds: 1,
                eligible_round_count: 3,
                eligible_e2e_sample_count: 3,
                excluded_or_missing_sample_count: 0,
                total_round_count: 3,
                win_rate: Some(2.5 / 3.0),
            }],
            pairwise_e2e_latency_differences: vec![PairRow {
                provider_a: "a".into(),
                provider_b: "b".into(),
                difference_definition: "a - b".into(),
                eligible_comparison: false,
                exclusion_reasons: vec!["b: reason".into()],
                paired_count: 0,
                total_round_count: 3,
                missing_pair_count: 3,
                coverage_rate: Some(0.0),
                difference_p50_ms: None,
                difference_p95_ms: None,
                difference_p99_ms: None,
            }],
            provenance: provenance(),
        }
    }

    #[test]
    fn both_documents_read_back_as_written() {
        let text = serde_json::to_string_pretty(&metrics()).unwrap();
        assert_eq!(serde_json::from_str::<MetricsDocument>(&text).unwrap(), metrics());
        let text = serde_json::to_string_pretty(&comparisons()).unwrap();
        assert_eq!(serde_json::from_str::<ComparisonsDocument>(&text).unwrap(), comparisons());
    }

    #[test]
    fn a_row_is_flat_with_keys_in_contract_order() {
        let json = serde_json::to_value(pooled()).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let pos = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert_eq!(&keys[..3], ["provider", "task_family", "scheduled_count"]);
        assert!(pos("failure_rate_detail") < pos("timeout_rate"));
        assert!(pos("timeout_count") < pos("http_429_rate"));
        assert!(pos("other_http_count") < pos("invalid_stream_rate"));
        assert!(pos("truncated_count") < pos("reasoning_emission_rate"));
        assert!(pos("ttfo_ms") < pos("output_tokens_per_second"));
        assert!(pos("output_tokens_per_second") < pos("ttfo_p50"));
        assert!(pos("output_tokens_per_second_p99") < pos("usage"));
        assert_eq!(keys[keys.len() - 1], "rank");
        assert!(json.get("contract_field_diagnostics").is_none());
        assert_eq!(json["e2e_latency_ms"]["percentiles"]["p99"]["value"], 42.0);
        assert_eq!(json["e2e_latency_p99"], 42.0);
    }

    /// Every numeric or null key of a serialised row is reachable through `column`, with its
    /// value, and no other key is: the by-name lookup cannot drift from the fields.
    #[test]
    fn every_numeric_key_is_a_column() {
        let row = group("contract-terms-extraction");
        let json = serde_json::to_value(&row).unwrap();
        for (key, value) in json.as_object().unwrap() {
            if value.is_number() || value.is_null() {
                assert_eq!(row.column(key), Some(value.as_f64()), "{key}");
            } else {
                assert_eq!(row.column(key), None, "{key}");
            }
            if value.get("percentiles").is_some() {
                assert_eq!(row.summaries.get(key).map(|s| s.population_count), Some(3));
            }
        }
        let numeric = json.as_object().unwrap().values().filter(|v| v.is_number()).count();
        assert_eq!(numeric, 10 + 18 + 15);
        assert_eq!(row.column("http_429"), None);
        assert_eq!(row.failures.rate("other_http"), Some(0.06));
        assert_eq!(row.failures.rate("truncated"), Some(0.09));
        assert_eq!(row.column("other_http_4xx_count"), Some(Some(3.0)));
        assert_eq!(row.failures.total(), 45);
        assert_eq!((row.percentile("ttfa_p95"), row.population("ttfa_ms")), (Some(21.0), 3));
    }
}
