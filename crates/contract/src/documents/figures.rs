//! The parts of a `metrics.json` row: rates with their counts, failure classes, stream
//! diagnostics, each percentile metric's summary and its flat keys, usage and cost.
use crate::vocab::OperationalOutcome;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A rate with the counts it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RateDetail {
    /// `numerator / denominator`; null when the denominator is 0.
    pub value: Option<f64>,
    /// The requests counted.
    pub numerator: i64,
    /// The requests counted among.
    pub denominator: i64,
    /// Submitted requests outside the denominator (e.g. without a TTFA).
    pub missing_sample_count: i64,
    /// The 95 % Wilson score interval of the rate; null when the denominator is 0.
    #[serde(default)]
    pub interval: Option<RateInterval>,
}

impl RateDetail {
    /// The Wilson interval's lower bound, if the rate has one.
    pub fn lower(&self) -> Option<f64> {
        self.interval.map(|i| i.lower)
    }

    /// The Wilson interval's upper bound, if the rate has one.
    pub fn upper(&self) -> Option<f64> {
        self.interval.map(|i| i.upper)
    }
}

/// A rate's 95 % Wilson score interval: within [0, 1], and not empty at 0 or at every request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RateInterval {
    /// The lower bound, a fraction.
    pub lower: f64,
    /// The upper bound, a fraction.
    pub upper: f64,
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
    /// Each class's rate with its 95 % Wilson score interval, keyed by the class's label
    /// (`timeout`, `http_429`, …); empty for an empty group.
    #[serde(default)]
    pub failure_class_intervals: BTreeMap<String, RateInterval>,
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
            failure_class_intervals: BTreeMap::new(),
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
    pub(super) fn column(&self, name: &str) -> Option<Option<f64>> {
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
    /// How the complete answers streamed: their chunks, the gaps between them, and the answers
    /// that arrived at once.
    #[serde(default)]
    pub answer_streaming: AnswerStreaming,
}

/// How the group's complete answers (`complete` rows of `responses.parquet`) arrived, from each
/// answer's chunks (`answer_chunk_ms`, `answer_chunk_tokens`): a chunk is one server-sent event
/// that carried answer text. Quantiles are nearest-rank (the value at rank ⌈n·k/100⌉ of the
/// sorted samples); null without samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AnswerStreaming {
    /// Complete answers: the population of every figure here.
    pub answer_count: i64,
    /// Chunks per complete answer.
    pub chunks_per_answer: SpreadFigures,
    /// Visible-answer tokens per chunk, over every chunk of the complete answers (a token counts
    /// in the chunk that completed it, so a chunk that only began one brings 0).
    pub tokens_per_chunk: SpreadFigures,
    /// Milliseconds between consecutive chunks of one answer, over every answer.
    pub inter_chunk_gap_ms: SpreadFigures,
    /// Answers of two or more tokens that arrived at once (one chunk brought every token, or
    /// the first and last chunks arrived less than 1 ms apart), over the complete answers.
    /// Under inferbench's rules none of them is a tokens/s sample.
    pub buffered: RateDetail,
}

/// The middle, the tail and the extreme of a sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SpreadFigures {
    /// How many samples.
    pub count: i64,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
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
    /// Each metric's (key, summary), in file order: the catalogue's `summary` keys
    /// ([`crate::metrics`]).
    pub fn entries(&self) -> [(&'static str, &Summary); 5] {
        macro_rules! entries {
            ($($field:ident),*) => { [$((stringify!($field), &self.$field)),*] };
        }
        entries!(ttfo_ms, ttfa_ms, pre_answer_reasoning_tokens, e2e_latency_ms, output_tokens_per_second)
    }

    /// The summary of the metric keyed `key` (e.g. `ttfa_ms`).
    pub fn get(&self, key: &str) -> Option<&Summary> {
        let entry = self.entries().into_iter().find(|(k, _)| *k == key);
        entry.map(|(_, summary)| summary)
    }

    /// The summary of a percentile metric of the catalogue; `None` for a rate.
    pub fn of(&self, metric: &crate::metrics::Metric) -> Option<&Summary> {
        self.get(metric.summary?)
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

impl Percentiles {
    /// The levels, in field order.
    pub const LEVELS: [u64; 3] = [50, 95, 99];

    /// The value at `level` (50, 95 or 99).
    pub fn level(&self, level: u64) -> Option<&PercentileValue> {
        match level {
            50 => Some(&self.p50),
            95 => Some(&self.p95),
            99 => Some(&self.p99),
            _ => None,
        }
    }

    /// Each level's value, from `value(level)`.
    pub fn new(value: impl FnMut(u64) -> PercentileValue) -> Percentiles {
        let [p50, p95, p99] = Percentiles::LEVELS.map(value);
        Percentiles { p50, p95, p99 }
    }
}

/// A percentile's value and its 95 % distribution-free confidence interval (README
/// "Definitions": the order statistics whose binomial coverage reaches 95 %).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PercentileValue {
    /// The sample at the percentile's rank; null without samples.
    pub value: Option<f64>,
    /// The value's 1-based rank in the ascending samples; null without samples.
    #[serde(default)]
    pub rank: Option<i64>,
    /// The 95 % interval; null without samples, and when the samples are too few for any
    /// interval of them to reach 95 % (then `note` says so).
    #[serde(default)]
    pub interval: Option<PercentileInterval>,
    /// Set when there are samples but no interval: what the value is (`p99 of 18 samples:
    /// the maximum`) and how little even the whole range of the samples would cover.
    #[serde(default)]
    pub note: Option<String>,
}

impl PercentileValue {
    /// A value without samples.
    pub const NONE: PercentileValue = PercentileValue { value: None, rank: None, interval: None, note: None };

    /// The interval's lower bound, if there is an interval.
    pub fn lower(&self) -> Option<f64> {
        self.interval.map(|i| i.lower)
    }

    /// The interval's upper bound, if there is an interval.
    pub fn upper(&self) -> Option<f64> {
        self.interval.map(|i| i.upper)
    }
}

/// A percentile's interval: the samples at two ranks, and the probability that such an
/// interval covers the population's percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PercentileInterval {
    /// The sample at `lower_rank`.
    pub lower: f64,
    /// The sample at `upper_rank`.
    pub upper: f64,
    /// 1-based rank of the lower bound in the ascending samples.
    pub lower_rank: i64,
    /// 1-based rank of the upper bound.
    pub upper_rank: i64,
    /// P(lower_rank ≤ B < upper_rank) for B ~ Binomial(n, q), q the quantile estimated
    /// (K/100 for an upper pK, 1 − K/100 for a floor): at least 0.95.
    pub coverage: f64,
}

/// Hands `$then!` the flat percentile keys, after the tokens it was given: the one place they
/// are spelled. Each is `<key> (<key>_lower, <key>_upper) = <summary>.<level>,` with its
/// description, the key holding the summary's percentile and the two others the bounds of its
/// interval (the tables' columns). [`FlatPercentiles`] is made of them, and so are the percentile
/// columns of `metrics.parquet` and `pooled.parquet` ([`crate::tables`]).
macro_rules! flat_percentile_fields {
    ($then:ident ! { $($args:tt)* }) => {
        $then! { $($args)*
            /// Time to first output p50, milliseconds.
            ttfo_p50 (ttfo_p50_lower, ttfo_p50_upper) = ttfo_ms.p50,
            /// Time to first output p95, milliseconds.
            ttfo_p95 (ttfo_p95_lower, ttfo_p95_upper) = ttfo_ms.p95,
            /// Time to first output p99, milliseconds.
            ttfo_p99 (ttfo_p99_lower, ttfo_p99_upper) = ttfo_ms.p99,
            /// Time to first answer token p50, milliseconds.
            ttfa_p50 (ttfa_p50_lower, ttfa_p50_upper) = ttfa_ms.p50,
            /// Time to first answer token p95, milliseconds.
            ttfa_p95 (ttfa_p95_lower, ttfa_p95_upper) = ttfa_ms.p95,
            /// Time to first answer token p99, milliseconds.
            ttfa_p99 (ttfa_p99_lower, ttfa_p99_upper) = ttfa_ms.p99,
            /// Reasoning tokens before the answer, p50.
            pre_answer_reasoning_tokens_p50 (pre_answer_reasoning_tokens_p50_lower, pre_answer_reasoning_tokens_p50_upper) = pre_answer_reasoning_tokens.p50,
            /// Reasoning tokens before the answer, p95.
            pre_answer_reasoning_tokens_p95 (pre_answer_reasoning_tokens_p95_lower, pre_answer_reasoning_tokens_p95_upper) = pre_answer_reasoning_tokens.p95,
            /// Reasoning tokens before the answer, p99.
            pre_answer_reasoning_tokens_p99 (pre_answer_reasoning_tokens_p99_lower, pre_answer_reasoning_tokens_p99_upper) = pre_answer_reasoning_tokens.p99,
            /// End-to-end latency p50, milliseconds.
            e2e_latency_p50 (e2e_latency_p50_lower, e2e_latency_p50_upper) = e2e_latency_ms.p50,
            /// End-to-end latency p95, milliseconds.
            e2e_latency_p95 (e2e_latency_p95_lower, e2e_latency_p95_upper) = e2e_latency_ms.p95,
            /// End-to-end latency p99, milliseconds (the ranking key).
            e2e_latency_p99 (e2e_latency_p99_lower, e2e_latency_p99_upper) = e2e_latency_ms.p99,
            /// Visible-answer tokens per second, median.
            output_tokens_per_second_p50 (output_tokens_per_second_p50_lower, output_tokens_per_second_p50_upper) = output_tokens_per_second.p50,
            /// Visible-answer tokens per second, p95 floor: at least 95% of samples are this fast.
            output_tokens_per_second_p95 (output_tokens_per_second_p95_lower, output_tokens_per_second_p95_upper) = output_tokens_per_second.p95,
            /// Visible-answer tokens per second, p99 floor: at least 99% of samples are this fast.
            output_tokens_per_second_p99 (output_tokens_per_second_p99_lower, output_tokens_per_second_p99_upper) = output_tokens_per_second.p99,
        }
    };
}
pub(crate) use flat_percentile_fields;

macro_rules! flat_percentiles {
    ($($(#[$doc:meta])* $key:ident ($lower:ident, $upper:ident) = $summary:ident . $level:ident,)*) => {
        /// The summaries' percentiles as flat `<metric>_pK` keys, the columns the spec requires. Each
        /// is null without samples.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
        pub struct FlatPercentiles {
            $($(#[$doc])* pub $key: Option<f64>,)*
        }

        impl FlatPercentiles {
            /// The flat keys of `summaries`: by definition they repeat the summaries' percentiles.
            pub fn of(summaries: &MetricSummaries) -> Self {
                FlatPercentiles { $($key: summaries.$summary.percentiles.$level.value,)* }
            }

            /// Each (key, value), in file order.
            pub fn entries(&self) -> Vec<(&'static str, Option<f64>)> {
                vec![$((stringify!($key), self.$key)),*]
            }
        }
    };
}
flat_percentile_fields!(flat_percentiles! {});

impl FlatPercentiles {
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
