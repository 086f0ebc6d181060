//! The metric catalogue: every per-provider figure the benchmark reports, spelled once.
//!
//! An entry gives a metric's name as the files spell it, its unit, which way is better, the
//! percentiles it is reported at, and the words a person reads. `ib-aggregate` takes each
//! percentile metric's tail from it, `ib-report` heads, formats and groups its columns with
//! it (report.md and report.html alike), `ib-watch` and `ib-compare` label their figures
//! with it, and a spec may require exactly its reference columns. A new metric is one entry
//! here; a percentile metric also gets its summary and flat keys in the row types
//! ([`crate::documents::MetricSummaries`], [`crate::documents::FlatPercentiles`]), which a
//! test holds to this list.
//!
//! A metric is either a percentile metric (a summary such as `ttfa_ms` with flat keys
//! `ttfa_p50`, `ttfa_p95`, `ttfa_p99`) or a rate (one key, such as `task_success_rate`). A
//! [`Column`] is one key of a row: a metric at one percentile, or a rate.
use crate::vocab::OperationalOutcome;
use std::fmt;
use Aspect::{Latency, Outcome, Speed};
use Direction::{HigherIsBetter, LowerIsBetter};

/// What a metric's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds from sending the request.
    Ms,
    /// Visible-answer tokens per second.
    TokensPerSecond,
    /// Tokens.
    Tokens,
    /// A share of the submitted requests, in [0, 1].
    Fraction,
}

impl Unit {
    /// The unit as written beside a figure: `ms`, `tok/s`, `tokens` or `fraction`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::TokensPerSecond => "tok/s",
            Unit::Tokens => "tokens",
            Unit::Fraction => "fraction",
        }
    }
}

/// Which way a metric is better. A higher-is-better percentile metric reports its p95 and
/// p99 as floors of the lower tail (the speed at least 95% of responses reached).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    LowerIsBetter,
    HigherIsBetter,
}

/// What a metric describes; the report shows each aspect in a table of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aspect {
    /// Milliseconds from sending the request: TTFO, TTFA, E2E.
    Latency,
    /// Visible-answer speed and the reasoning that came before the answer.
    Speed,
    /// Task success and the operational failure rates.
    Outcome,
}

/// One metric of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// A rate's key (`task_success_rate`), or the stem of a percentile metric's flat keys
    /// (`ttfa` of `ttfa_p95`).
    pub name: &'static str,
    /// A percentile metric's summary key in `metrics.json` (population and percentiles), which
    /// is also its column in `responses.parquet` (`ttfa_ms`); `None` for a rate.
    pub summary: Option<&'static str>,
    pub unit: Unit,
    pub direction: Direction,
    /// The percentiles reported (`[50, 95, 99]`); empty for a rate.
    pub percentiles: &'static [u64],
    /// A table heading's words (`TTFA`, `Operational failures`).
    pub label: &'static str,
    /// The same in a narrow table or a chart's legend (`TTFA`, `Failure rate`).
    pub short_label: &'static str,
    /// What is measured, in words (`Time to first answer token`).
    pub description: &'static str,
    pub aspect: Aspect,
    /// The failure class a per-class rate counts.
    pub failure_class: Option<OperationalOutcome>,
    /// One of the reference runner's 23 metric columns: a spec's
    /// `reporting.required_provider_metric_columns` may name it.
    pub reference: bool,
}

/// The percentiles every percentile metric reports: those of [`crate::documents::Percentiles`].
pub const PERCENTILES: &[u64] = &crate::documents::Percentiles::LEVELS;

const fn percentile_metric(
    name: &'static str,
    summary: &'static str,
    unit: Unit,
    direction: Direction,
    aspect: Aspect,
    words: [&'static str; 3],
) -> Metric {
    let [label, short_label, description] = words;
    Metric {
        name,
        summary: Some(summary),
        unit,
        direction,
        percentiles: PERCENTILES,
        label,
        short_label,
        description,
        aspect,
        failure_class: None,
        reference: true,
    }
}

const fn rate(name: &'static str, direction: Direction, aspect: Aspect, words: [&'static str; 3]) -> Metric {
    let [label, short_label, description] = words;
    Metric {
        name,
        summary: None,
        unit: Unit::Fraction,
        direction,
        percentiles: &[],
        label,
        short_label,
        description,
        aspect,
        failure_class: None,
        reference: true,
    }
}

/// The rate of one failure class: `<class label>_rate`, lower is better.
const fn class_rate(name: &'static str, class: OperationalOutcome, label: &'static str, short: &'static str) -> Metric {
    let mut metric = rate(name, Direction::LowerIsBetter, Aspect::Outcome, [label, short, label]);
    metric.failure_class = Some(class);
    metric
}

pub const TTFO: &Metric = &percentile_metric(
    "ttfo",
    "ttfo_ms",
    Unit::Ms,
    LowerIsBetter,
    Latency,
    ["TTFO", "TTFO", "Time to first output (reasoning or answer)"],
);
pub const TTFA: &Metric = &percentile_metric(
    "ttfa",
    "ttfa_ms",
    Unit::Ms,
    LowerIsBetter,
    Latency,
    ["TTFA", "TTFA", "Time to first answer token"],
);
/// Reasoning before the answer: not a latency, but fewer tokens are a sooner answer.
pub const PRE_ANSWER_REASONING_TOKENS: &Metric = &percentile_metric(
    "pre_answer_reasoning_tokens",
    "pre_answer_reasoning_tokens",
    Unit::Tokens,
    LowerIsBetter,
    Speed,
    ["Reasoning tokens before answer", "Reasoning tokens", "Reasoning tokens before the first answer token"],
);
/// Responses that reasoned before their first answer token, among those with a TTFA.
pub const REASONING_EMISSION: &Metric = &rate(
    "reasoning_emission_rate",
    LowerIsBetter,
    Speed,
    ["Responses with reasoning", "Reasoned first", "Responses with reasoning before the first answer token"],
);
pub const E2E_LATENCY: &Metric = &percentile_metric(
    "e2e_latency",
    "e2e_latency_ms",
    Unit::Ms,
    LowerIsBetter,
    Latency,
    ["E2E", "E2E", "End-to-end latency"],
);
pub const OUTPUT_TOKENS_PER_SECOND: &Metric = &percentile_metric(
    "output_tokens_per_second",
    "output_tokens_per_second",
    Unit::TokensPerSecond,
    HigherIsBetter,
    Speed,
    ["Tokens/s", "Tokens/s", "Visible-answer tokens per second"],
);
pub const TASK_SUCCESS: &Metric =
    &rate("task_success_rate", HigherIsBetter, Outcome, ["Task success", "Task success", "Exactly correct answers"]);
pub const FAILURE: &Metric = &rate(
    "failure_rate",
    LowerIsBetter,
    Outcome,
    ["Operational failures", "Failure rate", "Requests with an operational failure (any failure class)"],
);
pub const TIMEOUT: &Metric = &class_rate("timeout_rate", OperationalOutcome::Timeout, "Timeout", "Timeouts");
pub const HTTP_429: &Metric = &class_rate("http_429_rate", OperationalOutcome::Http429, "HTTP 429", "HTTP 429");
pub const OTHER_HTTP_4XX: &Metric =
    &class_rate("other_http_4xx_rate", OperationalOutcome::Other4xx, "Other 4xx", "Other 4xx");
pub const HTTP_5XX: &Metric = &class_rate("http_5xx_rate", OperationalOutcome::Http5xx, "HTTP 5xx", "HTTP 5xx");
pub const TRANSPORT_ERROR: &Metric =
    &class_rate("transport_error_rate", OperationalOutcome::TransportError, "Connection", "Connection");
/// The classes below are inferbench's own, beyond the reference's five.
pub const OTHER_HTTP: &Metric =
    &own(class_rate("other_http_rate", OperationalOutcome::OtherHttp, "HTTP 1xx/3xx", "HTTP 1xx/3xx"));
pub const INVALID_STREAM: &Metric =
    &own(class_rate("invalid_stream_rate", OperationalOutcome::InvalidStream, "Invalid stream", "Invalid stream"));
pub const STREAM_ERROR: &Metric =
    &own(class_rate("stream_error_rate", OperationalOutcome::StreamError, "Stream error", "Stream error"));
pub const TRUNCATED: &Metric =
    &own(class_rate("truncated_rate", OperationalOutcome::Truncated, "Truncated", "Truncated"));

/// A metric the reference runner does not report, so no spec may require it.
const fn own(mut metric: Metric) -> Metric {
    metric.reference = false;
    metric
}

/// Every metric, the reference's 23 columns first and in its order, then inferbench's own.
pub const CATALOGUE: [&Metric; 17] = [
    TTFO,
    TTFA,
    PRE_ANSWER_REASONING_TOKENS,
    REASONING_EMISSION,
    E2E_LATENCY,
    OUTPUT_TOKENS_PER_SECOND,
    TASK_SUCCESS,
    FAILURE,
    TIMEOUT,
    HTTP_429,
    OTHER_HTTP_4XX,
    HTTP_5XX,
    TRANSPORT_ERROR,
    OTHER_HTTP,
    INVALID_STREAM,
    STREAM_ERROR,
    TRUNCATED,
];

/// What eligible providers are ranked by, lowest first: their pooled E2E p99.
pub const RANKING: Column = E2E_LATENCY.at(99);

impl Metric {
    /// The metric at percentile `k` (a compile-time error in a constant when the metric does
    /// not report it).
    pub const fn at(&'static self, k: u64) -> Column {
        let mut i = 0;
        while i < self.percentiles.len() {
            if self.percentiles[i] == k {
                return Column { metric: self, percentile: Some(k) };
            }
            i += 1;
        }
        panic!("the metric does not report this percentile")
    }

    /// A rate's one column (a compile-time error in a constant for a percentile metric).
    pub const fn value(&'static self) -> Column {
        assert!(self.percentiles.is_empty(), "a percentile metric has one column per percentile");
        Column { metric: self, percentile: None }
    }

    /// The metric's columns: one per percentile, or the rate's one.
    pub fn columns(&'static self) -> Vec<Column> {
        match self.percentiles {
            [] => vec![self.value()],
            levels => levels.iter().map(|k| self.at(*k)).collect(),
        }
    }

    pub fn lower_is_better(&self) -> bool {
        self.direction == Direction::LowerIsBetter
    }
}

/// One key of a metrics row: a metric at one percentile, or a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub metric: &'static Metric,
    pub percentile: Option<u64>,
}

impl Column {
    /// The key as the files spell it: `ttfa_p95`, `task_success_rate`.
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// A lower-tail floor: a higher-is-better metric's percentile above the median.
    pub fn is_floor(&self) -> bool {
        self.metric.direction == Direction::HigherIsBetter && self.percentile.is_some_and(|k| k != 50)
    }

    /// `p95`, `p95 floor`, or nothing for a rate.
    fn level(&self) -> String {
        match self.percentile {
            Some(k) if self.is_floor() => format!(" p{k} floor"),
            Some(k) => format!(" p{k}"),
            None => String::new(),
        }
    }

    /// The report's column heading: `TTFA p95 (ms)`, `Tokens/s p95 floor`, `Task success`.
    pub fn heading(&self) -> String {
        let unit = if self.metric.unit == Unit::Ms { " (ms)" } else { "" };
        format!("{}{}{unit}", self.metric.label, self.level())
    }

    /// The heading of a narrow table or a chart: `TTFA p95`, `Failure rate`.
    pub fn short_heading(&self) -> String {
        format!("{}{}", self.metric.short_label, self.level())
    }

    /// The short heading within a sentence: its first letter in lower case unless it starts
    /// an abbreviation (`tokens/s p50`, `failure rate`, but `TTFA p50`, `E2E p99`).
    pub fn in_sentence(&self) -> String {
        let heading = self.short_heading();
        let mut chars = heading.chars();
        match (chars.next(), chars.next()) {
            (Some(first), Some(second)) if second.is_lowercase() => {
                format!("{}{}", first.to_lowercase(), &heading[first.len_utf8()..])
            }
            _ => heading,
        }
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.percentile {
            Some(k) => write!(f, "{}_p{k}", self.metric.name),
            None => f.write_str(self.metric.name),
        }
    }
}

/// Every column of the catalogue, in its order.
pub fn columns() -> impl Iterator<Item = Column> {
    CATALOGUE.into_iter().flat_map(Metric::columns)
}

/// The reference runner's 23 columns, in its order: those a spec may require.
pub fn reference_columns() -> impl Iterator<Item = Column> {
    columns().filter(|c| c.metric.reference)
}

/// The column keyed `key` (`ttfa_p95`), if the catalogue has it.
pub fn column(key: &str) -> Option<Column> {
    columns().find(|c| c.key() == key)
}

/// The percentile metrics, in file order.
pub fn percentile_metrics() -> impl Iterator<Item = &'static Metric> {
    CATALOGUE.into_iter().filter(|m| m.summary.is_some())
}

/// The rate of the failure class `class`; `None` for success.
pub fn failure_rate(class: OperationalOutcome) -> Option<&'static Metric> {
    CATALOGUE.into_iter().find(|m| m.failure_class == Some(class))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_headings_and_floors() {
        assert_eq!(TTFA.at(95).key(), "ttfa_p95");
        assert_eq!(TASK_SUCCESS.value().key(), "task_success_rate");
        assert_eq!(TTFA.at(50).heading(), "TTFA p50 (ms)");
        assert_eq!(E2E_LATENCY.at(99).heading(), "E2E p99 (ms)");
        assert_eq!(OUTPUT_TOKENS_PER_SECOND.at(50).heading(), "Tokens/s p50");
        assert_eq!(OUTPUT_TOKENS_PER_SECOND.at(95).heading(), "Tokens/s p95 floor");
        assert_eq!(PRE_ANSWER_REASONING_TOKENS.at(99).heading(), "Reasoning tokens before answer p99");
        assert_eq!(FAILURE.value().heading(), "Operational failures");
        assert_eq!(FAILURE.value().short_heading(), "Failure rate");
        assert_eq!(E2E_LATENCY.at(99).short_heading(), "E2E p99");
        assert!(OUTPUT_TOKENS_PER_SECOND.at(99).is_floor() && !OUTPUT_TOKENS_PER_SECOND.at(50).is_floor());
        assert!(!E2E_LATENCY.at(99).is_floor());
        let sentences = [TTFA.at(50), E2E_LATENCY.at(99), OUTPUT_TOKENS_PER_SECOND.at(50), FAILURE.value()];
        assert_eq!(sentences.map(|c| c.in_sentence()), ["TTFA p50", "E2E p99", "tokens/s p50", "failure rate"]);
    }

    #[test]
    fn the_reference_columns_are_its_23_in_its_order() {
        let keys: Vec<String> = reference_columns().map(|c| c.key()).collect();
        assert_eq!(keys.len(), 23);
        assert_eq!(&keys[..4], ["ttfo_p50", "ttfo_p95", "ttfo_p99", "ttfa_p50"]);
        assert_eq!(keys[9], "reasoning_emission_rate");
        assert_eq!(&keys[16..18], ["task_success_rate", "failure_rate"]);
        assert_eq!(keys[22], "transport_error_rate");
        assert_eq!(columns().count(), 27);
        assert_eq!(column("e2e_latency_p99"), Some(E2E_LATENCY.at(99)));
        assert_eq!(column("e2e_latency_p98"), None);
    }

    #[test]
    fn names_are_unique_and_every_failure_class_has_its_rate() {
        let mut names: Vec<&str> = CATALOGUE.iter().map(|m| m.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOGUE.len());
        for class in OperationalOutcome::FAILURES {
            assert_eq!(failure_rate(class).map(|m| m.name), Some(format!("{}_rate", class.label())).as_deref());
        }
        assert_eq!(failure_rate(OperationalOutcome::Success), None);
        let classes: Vec<OperationalOutcome> = CATALOGUE.iter().filter_map(|m| m.failure_class).collect();
        assert_eq!(classes, OperationalOutcome::FAILURES);
        for m in CATALOGUE {
            assert_eq!(m.summary.is_some(), !m.percentiles.is_empty(), "{}", m.name);
            assert_eq!(m.summary.is_none(), m.unit == Unit::Fraction, "{}", m.name);
        }
    }
}
