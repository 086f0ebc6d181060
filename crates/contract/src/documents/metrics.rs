//! `metrics.json`: the document `ib-aggregate` writes and `ib-report` reads, and its rows.
//!
//! A metrics row is flat (`timeout_rate`, `ttfa_ms`, `ttfa_p50` are keys of the row itself, as
//! in the reference format); the `#[serde(flatten)]` groups only give those keys a name in Rust.
use super::figures::*;
use super::load::LoadMetrics;
use super::Provenance;
use crate::metrics::Column;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// One entry per pair of adjacent ranked providers, in ranking order: whether the run
    /// tells them apart, and about how many rounds would.
    #[serde(default)]
    pub rank_separation: Vec<RankSeparation>,
    /// How `rank_separation` was decided, in words (method, seed, resamples).
    #[serde(default)]
    pub rank_separation_method: String,
    /// A load run's figures per step and provider; absent in the closed-loop workflow. (In a
    /// load run the rows above pool the measured windows of every step.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadMetrics>,
    /// The prompt-cache probe's figures (`inference.cache_probe`); absent when the spec asks
    /// for none. Its requests count in no other figure of the document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_probe: Option<super::CacheProbeMetrics>,
    /// The code that wrote the document and the files it was derived from.
    pub provenance: Provenance,
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

    /// The value of a column of the catalogue (`TTFA.at(95)`, `FAILURE.value()`); `None` for
    /// a null.
    pub fn value(&self, column: Column) -> Option<f64> {
        self.column(&column.key()).flatten()
    }

    /// A flat percentile such as `e2e_latency_p99`; `None` when it has no samples (or no such
    /// key).
    pub fn percentile(&self, key: &str) -> Option<f64> {
        self.percentiles.get(key).flatten()
    }

    /// A column's 95 % interval in this row: a percentile's order-statistic interval (or the
    /// note that its samples are too few for one), a rate's Wilson interval; `None` when the
    /// figure is null or has no interval.
    pub fn interval(&self, column: Column) -> Option<ColumnInterval<'_>> {
        if let Some(k) = column.percentile {
            let p = self.summaries.of(column.metric)?.percentiles.level(k)?;
            return match (&p.interval, &p.note) {
                (Some(i), _) => Some(ColumnInterval::Bounds { lower: i.lower, upper: i.upper }),
                (None, Some(note)) => Some(ColumnInterval::TooFewSamples(note)),
                (None, None) => None,
            };
        }
        let key = column.key();
        let interval = match key.as_str() {
            "task_success_rate" => self.task_success_rate_detail.interval,
            "failure_rate" => self.failure_rate_detail.interval,
            "reasoning_emission_rate" => self.reasoning_emission_detail.interval,
            other => {
                other.strip_suffix("_rate").and_then(|label| self.failures.failure_class_intervals.get(label).copied())
            }
        }?;
        Some(ColumnInterval::Bounds { lower: interval.lower, upper: interval.upper })
    }

    /// Where a column's interval lies in a serialised row, as JSON-pointer suffixes relative to
    /// the row: its lower bound, its upper bound, and (percentiles only) its note.
    pub fn interval_keys(column: Column) -> Option<(String, String, Option<String>)> {
        if let Some(k) = column.percentile {
            let base = format!("{}/percentiles/p{k}", column.metric.summary?);
            return Some((
                format!("{base}/interval/lower"),
                format!("{base}/interval/upper"),
                Some(format!("{base}/note")),
            ));
        }
        let key = column.key();
        let base = match key.as_str() {
            "task_success_rate" => "task_success_rate_detail/interval".to_string(),
            "failure_rate" => "failure_rate_detail/interval".to_string(),
            "reasoning_emission_rate" => "reasoning_emission_detail/interval".to_string(),
            other => format!("failure_class_intervals/{}", other.strip_suffix("_rate")?),
        };
        Some((format!("{base}/lower"), format!("{base}/upper"), None))
    }

    /// A metric's population (e.g. `ttfa_ms`), 0 for an unknown metric.
    pub fn population(&self, metric: &str) -> i64 {
        self.summaries.get(metric).map_or(0, |s| s.population_count)
    }
}

/// A figure's 95 % interval, as [`GroupMetrics::interval`] finds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColumnInterval<'a> {
    Bounds {
        lower: f64,
        upper: f64,
    },
    /// Samples too few for any 95 % interval: what the figure is instead.
    TooFewSamples(&'a str),
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
    /// The ranks the provider shares with the neighbours the run cannot tell it apart from
    /// (`rank_separation`): a run of adjacent providers linked by indistinguishable pairs shares
    /// the range from its first rank to its last; null when unranked.
    #[serde(default)]
    pub rank_range: Option<RankRange>,
    /// 1-based rank among eligible providers with an E2E p99; null when unranked.
    pub rank: Option<i64>,
}

/// A range of ranks, `first` to `last` inclusive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankRange {
    pub first: i64,
    pub last: i64,
    /// `2–4`, or `2` for a rank of its own.
    pub label: String,
}

impl RankRange {
    pub fn new(first: i64, last: i64) -> RankRange {
        let label = if first == last { first.to_string() } else { format!("{first}–{last}") };
        RankRange { first, last, label }
    }
}

/// Whether two adjacent ranked providers are told apart by the run: the seeded paired
/// bootstrap of the difference of their rank key over the rounds both completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankSeparation {
    /// The better-ranked provider.
    pub better: String,
    /// The provider ranked just after it.
    pub worse: String,
    /// The rank key: `e2e_latency_p99`.
    pub key: String,
    /// Rounds in which both have a sample of the key's metric.
    pub shared_rounds: i64,
    /// The key of `worse` minus that of `better` over the shared rounds; null without one.
    pub difference: Option<f64>,
    /// The 95 % paired bootstrap interval of that difference; null without shared rounds.
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// The fewest shared rounds that support a verdict: those for which the key's quantile has
    /// any distribution-free 95 % interval (299 for a p99). Below them the key is the largest
    /// sample, which no resampling of those rounds can see beyond, so the pair is not told apart
    /// whatever the bootstrap says.
    pub min_rounds: i64,
    /// At least `min_rounds` shared rounds, and the interval excludes zero.
    pub distinguishable: bool,
    /// About how many shared rounds would separate them at 95 %, from the resampled
    /// differences' spread (which shrinks as 1/√rounds), and never fewer than `min_rounds`;
    /// null when the difference or its spread is zero.
    pub rounds_to_separate: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::documents::METRICS_VERSION;

    fn detail(numerator: i64, denominator: i64) -> RateDetail {
        RateDetail {
            value: Some(numerator as f64 / denominator as f64),
            numerator,
            denominator,
            missing_sample_count: 0,
            interval: Some(RateInterval { lower: 0.1, upper: 0.9 }),
        }
    }

    /// A summary whose percentiles start at `base`, so every key gets a distinct value.
    fn summary(base: f64) -> Summary {
        let value = |v: f64| PercentileValue {
            value: Some(v),
            rank: Some(2),
            interval: Some(PercentileInterval {
                lower: v - 0.5,
                upper: v + 0.5,
                lower_rank: 1,
                upper_rank: 3,
                coverage: 0.96,
            }),
            note: None,
        };
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
                answer_streaming: AnswerStreaming::default(),
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
            rank_range: None,
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
            rank_separation: vec![],
            rank_separation_method: String::new(),
            load: None,
            cache_probe: None,
            provenance: provenance(),
        }
    }

    #[test]
    fn the_document_reads_back_as_written() {
        let text = serde_json::to_string_pretty(&metrics()).unwrap();
        assert_eq!(serde_json::from_str::<MetricsDocument>(&text).unwrap(), metrics());
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

    /// The row's keys are the catalogue's: every column of the catalogue is a numeric key of
    /// the row, the flat percentiles are exactly the percentile metrics' columns, in order, and
    /// the summaries exactly their summary keys.
    #[test]
    fn the_row_holds_the_catalogue() {
        use crate::metrics::{self, TTFA};
        let row = group("ticket-triage");
        for column in metrics::columns() {
            assert!(row.column(&column.key()).is_some(), "{column}");
        }
        let percentile_metrics: Vec<&crate::metrics::Metric> = metrics::percentile_metrics().collect();
        let flat: Vec<String> = percentile_metrics.iter().flat_map(|m| m.columns()).map(|c| c.key()).collect();
        let keys: Vec<&str> = row.percentiles.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, flat);
        let summaries: Vec<&str> = row.summaries.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(summaries, percentile_metrics.iter().map(|m| m.summary.unwrap()).collect::<Vec<_>>());
        for m in &percentile_metrics {
            assert_eq!(m.percentiles, Percentiles::LEVELS);
        }
        assert_eq!(row.value(TTFA.at(95)), Some(21.0));
        assert_eq!(row.summaries.of(TTFA).map(|s| s.population_count), Some(3));
    }
}
