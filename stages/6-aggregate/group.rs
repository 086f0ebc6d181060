//! The metrics of one group of requests (reference §8.4): a provider × task family, or all of
//! a provider's requests for its balanced pooled row (§8.5).
//!
//! Every response is a submitted request and stays in every denominator, failures included;
//! a percentile metric's samples are the non-null values of its column, so a failed request
//! shows up as a missing sample rather than vanishing. Percentiles of the pooled row are taken
//! over the concatenated samples, never averaged from the family rows.
use crate::facts::ResponseFacts;
use crate::join::Observation;
use inferbench_contract::documents::{
    AnswerStreaming, Cost, FailureCounts, FieldDiagnostics, FlatPercentiles, GroupMetrics, MetricSummaries,
    PercentileInterval, PercentileValue, Percentiles, PriceUsd, RateDetail, RateInterval, SpreadFigures,
    StreamDiagnostics, Summary, Usage,
};
use inferbench_contract::metrics::{self as catalogue, Metric};
use inferbench_contract::vocab::{Classification, OperationalOutcome, Outcome, TaskFamily};
use inferbench_inputs::providers::Price;
use inferbench_stats::interval;
use inferbench_stats::percentile::{self, Samples};

/// A rate with the counts it came from.
fn rate_detail(numerator: i64, denominator: i64, missing_sample_count: i64) -> RateDetail {
    let interval = wilson(numerator, denominator);
    RateDetail { value: rate(numerator, denominator), numerator, denominator, missing_sample_count, interval }
}

/// The 95 % Wilson score interval of `numerator / denominator`; `None` for an empty group.
pub fn wilson(numerator: i64, denominator: i64) -> Option<RateInterval> {
    let (lower, upper) = interval::wilson(numerator.max(0) as u64, denominator.max(0) as u64)?;
    Some(RateInterval { lower, upper })
}

/// `numerator / denominator`, or `None` for an empty group.
pub fn rate(numerator: i64, denominator: i64) -> Option<f64> {
    (denominator > 0).then(|| numerator as f64 / denominator as f64)
}

/// Counts the responses of each failure class (in `OperationalOutcome::FAILURES` order, the
/// file's).
fn failure_counts(observations: &[&Observation]) -> FailureCounts {
    let counts = OperationalOutcome::FAILURES
        .map(|class| observations.iter().filter(|o| o.response.operational_outcome == class).count() as i64);
    let mut failures = FailureCounts::new(counts, observations.len() as i64);
    let intervals = failures
        .classes()
        .into_iter()
        .filter_map(|(class, count, _)| Some((class.label().to_string(), wilson(count, observations.len() as i64)?)))
        .collect();
    failures.failure_class_intervals = intervals;
    failures
}

/// How the 2xx streams that ended by themselves ended, and whether usage agrees with the
/// local token count.
fn stream_diagnostics(observations: &[&Observation]) -> StreamDiagnostics {
    let ended: Vec<&ResponseFacts> = observations
        .iter()
        .map(|o| &o.response)
        .filter(|r| matches!(r.outcome, Outcome::Completed | Outcome::Truncated | Outcome::StreamError))
        .collect();
    let reported: Vec<(i64, i64)> = observations
        .iter()
        .filter_map(|o| {
            Some((o.response.usage_completion_tokens?, o.response.reasoning_tokens + o.response.visible_answer_tokens))
        })
        .collect();
    StreamDiagnostics {
        ended_stream_count: ended.len() as i64,
        missing_done_count: ended.iter().filter(|r| !r.done_seen).count() as i64,
        missing_finish_reason_count: ended.iter().filter(|r| r.finish_reason.is_none()).count() as i64,
        usage_reported_count: reported.len() as i64,
        usage_mismatch_count: reported.iter().filter(|(reported, local)| reported != local).count() as i64,
        answer_streaming: answer_streaming(observations),
    }
}

/// How the complete answers arrived: chunks per answer, tokens per chunk, the gaps between
/// chunks, and the answers flushed at once.
fn answer_streaming(observations: &[&Observation]) -> AnswerStreaming {
    let answers: Vec<&ResponseFacts> = observations.iter().map(|o| &o.response).filter(|r| r.complete).collect();
    let buffered = answers.iter().filter(|r| r.answer_buffered).count() as i64;
    let total = answers.len() as i64;
    AnswerStreaming {
        answer_count: total,
        chunks_per_answer: spread(answers.iter().map(|r| r.chunk_tokens.len() as f64)),
        tokens_per_chunk: spread(answers.iter().flat_map(|r| r.chunk_tokens.iter().map(|&k| f64::from(k)))),
        inter_chunk_gap_ms: spread(answers.iter().flat_map(|r| r.chunk_gaps_ms.iter().copied())),
        buffered: rate_detail(buffered, total, observations.len() as i64 - total),
    }
}

/// Nearest-rank p50 and p99 and the maximum of `values`.
fn spread(values: impl IntoIterator<Item = f64>) -> SpreadFigures {
    let samples = Samples::new(values);
    SpreadFigures {
        count: samples.len() as i64,
        p50: samples.upper(50),
        p99: samples.upper(99),
        max: samples.upper(100),
    }
}

/// What one group is made of.
pub struct GroupInput<'a> {
    pub provider: &'a str,
    pub family: &'a str,
    pub scheduled: usize,
    pub observations: &'a [&'a Observation],
    pub price: Price,
}

/// Computes a group's metrics.
pub fn compute(input: &GroupInput) -> GroupMetrics {
    let obs = input.observations;
    let submitted = obs.len() as i64;
    let count = |class: Classification| obs.iter().filter(|o| o.evaluation.classification == class).count() as i64;
    let correct = count(Classification::ValidResult);
    let failures = failure_counts(obs);
    let failed = failures.total();
    let summaries = summaries(obs);
    let (usage, cost) = usage_and_cost(obs, input.price);
    let reasoning = emission(obs);
    // Only the responses to prompts a rubric scores count in the success rate: a synthetic
    // prompt's are outside its denominator (so a synthetic group's rate is undefined, not 0).
    let scored = obs.iter().filter(|o| o.response.task_family.is_scored()).count() as i64;
    let success = rate_detail(correct, scored, submitted - scored);
    GroupMetrics {
        provider: input.provider.to_string(),
        task_family: input.family.to_string(),
        scheduled_count: input.scheduled as i64,
        submitted_count: submitted,
        missing_response_count: input.scheduled as i64 - submitted,
        correct_count: correct,
        failed_request_count: failed,
        invalid_result_count: count(Classification::InvalidResult),
        incorrect_result_count: count(Classification::IncorrectResult),
        task_success_rate: success.value,
        task_success_rate_detail: success,
        failure_rate: rate(failed, submitted),
        failure_rate_detail: rate_detail(failed, submitted, 0),
        failures,
        reasoning_emission_rate: reasoning.value,
        reasoning_emission_detail: reasoning,
        percentiles: FlatPercentiles::of(&summaries),
        summaries,
        usage,
        cost,
        stream_diagnostics: stream_diagnostics(obs),
        contract_field_diagnostics: (input.family == TaskFamily::ContractTermsExtraction.as_str())
            .then(|| field_diagnostics(obs)),
    }
}

/// Reasoning emitted before the answer, over the responses that have a TTFA.
fn emission(obs: &[&Observation]) -> RateDetail {
    let with_ttfa: Vec<&ResponseFacts> = obs.iter().map(|o| &o.response).filter(|r| r.ttfa_ms.is_some()).collect();
    let emitted = with_ttfa.iter().filter(|r| r.reasoning_emitted_before_answer == Some(true)).count() as i64;
    let denominator = with_ttfa.len() as i64;
    rate_detail(emitted, denominator, obs.len() as i64 - denominator)
}

/// One summary per metric of the catalogue; the field names bind each metric to its column of
/// `responses.parquet`.
fn summaries(obs: &[&Observation]) -> MetricSummaries {
    MetricSummaries {
        ttfo_ms: summary(obs, catalogue::TTFO, |r| r.ttfo_ms),
        ttfa_ms: summary(obs, catalogue::TTFA, |r| r.ttfa_ms),
        pre_answer_reasoning_tokens: summary(obs, catalogue::PRE_ANSWER_REASONING_TOKENS, |r| {
            r.pre_answer_reasoning_tokens.map(|t| t as f64)
        }),
        e2e_latency_ms: summary(obs, catalogue::E2E_LATENCY, |r| r.e2e_latency_ms),
        output_tokens_per_second: summary(obs, catalogue::OUTPUT_TOKENS_PER_SECOND, |r| r.output_tokens_per_second),
    }
}

/// A metric's population and percentiles: its samples are the non-null values of `sample`,
/// each percentile from the tail the catalogue gives it (a higher-is-better metric's p95 and
/// p99 are floors; every p50 is the ordinary rank `ceil(n/2)`).
fn summary(obs: &[&Observation], metric: &'static Metric, sample: fn(&ResponseFacts) -> Option<f64>) -> Summary {
    let submitted = obs.len() as i64;
    let samples = Samples::new(obs.iter().filter_map(|o| sample(&o.response)));
    let population = samples.len() as i64;
    Summary {
        population_count: population,
        submitted_count: submitted,
        missing_sample_count: submitted - population,
        population_rate: rate(population, submitted),
        percentiles: Percentiles::new(|level| percentile_value(&samples, metric, level)),
    }
}

/// A percentile with its 95 % interval, or with the note that its samples are too few for one.
pub(crate) fn percentile_value(samples: &Samples, metric: &'static Metric, level: u64) -> PercentileValue {
    let Some(estimate) = samples.column_with_interval(metric.at(level)) else {
        return PercentileValue::NONE;
    };
    let (interval, note) = match estimate.interval {
        Ok(b) => (
            Some(PercentileInterval {
                lower: b.lower,
                upper: b.upper,
                lower_rank: b.lower_rank as i64,
                upper_rank: b.upper_rank as i64,
                coverage: b.coverage,
            }),
            None,
        ),
        Err(max_coverage) => (None, Some(too_few_note(metric, level, estimate.rank, estimate.samples, max_coverage))),
    };
    PercentileValue { value: Some(estimate.value), rank: Some(estimate.rank as i64), interval, note }
}

/// `p99 of 18 samples: the maximum; no 95 % interval (the whole range covers 16.5 %)`.
fn too_few_note(metric: &'static Metric, level: u64, rank: u64, n: u64, max_coverage: f64) -> String {
    let floor = if metric.at(level).is_floor() { " floor" } else { "" };
    let which = match rank {
        _ if n == 1 => "the only sample".to_string(),
        1 => "the minimum".to_string(),
        r if r == n => "the maximum".to_string(),
        r => format!("the sample at rank {r}"),
    };
    let plural = if n == 1 { "" } else { "s" };
    format!(
        "p{level}{floor} of {n} sample{plural}: {which}; no 95 % interval (the whole range covers {:.1} %)",
        max_coverage * 100.0
    )
}

fn usage_and_cost(obs: &[&Observation], price: Price) -> (Usage, Cost) {
    let submitted = obs.len() as i64;
    let reported: Vec<(i64, i64)> = obs
        .iter()
        .filter_map(|o| Some((o.response.usage_prompt_tokens?, o.response.usage_completion_tokens?)))
        .collect();
    let count = reported.len() as i64;
    let input: i64 = reported.iter().map(|(i, _)| i).sum();
    let output: i64 = reported.iter().map(|(_, o)| o).sum();
    // Cost is linear in tokens, so pricing the integer sums once is exact where summing
    // per-request float costs would depend on the order of the rows.
    let known = (input as f64 * price.input + output as f64 * price.output) / 1_000_000.0;
    let usage = Usage {
        reported_count: count,
        submitted_count: submitted,
        missing_count: submitted - count,
        coverage_rate: rate(count, submitted),
        input_tokens: input,
        output_tokens: output,
        total_tokens: input + output,
    };
    let cost = Cost {
        reported_count: count,
        submitted_count: submitted,
        missing_count: submitted - count,
        coverage_rate: rate(count, submitted),
        known_cost_usd: known,
        total_cost_usd: (count == submitted).then_some(known),
        price_usd_per_million_tokens: PriceUsd { input: price.input, output: price.output },
    };
    (usage, cost)
}

fn field_diagnostics(obs: &[&Observation]) -> FieldDiagnostics {
    let counts: Vec<i64> = obs.iter().filter_map(|o| o.evaluation.correct_field_count).collect();
    FieldDiagnostics {
        field_count_total: obs.iter().filter_map(|o| o.evaluation.field_count_total).max().unwrap_or(10),
        returned_object_count: counts.len() as i64,
        median_correct_fields_returned: percentile::median(&counts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{Req, CONTRACT, TICKET};
    use crate::join::Observation;
    use inferbench_contract::metrics::{E2E_LATENCY, OUTPUT_TOKENS_PER_SECOND, TIMEOUT, TTFA, TTFO};

    fn observations(reqs: Vec<Req>) -> Vec<Observation> {
        reqs.into_iter().map(|q| Observation { response: q.response.into(), evaluation: q.evaluation.into() }).collect()
    }

    fn metrics(family: &str, obs: &[Observation]) -> GroupMetrics {
        let refs: Vec<&Observation> = obs.iter().collect();
        let price = Price { input: 1.0, output: 2.0 };
        compute(&GroupInput { provider: "a", family, scheduled: obs.len(), observations: &refs, price })
    }

    #[test]
    fn one_429_of_three_lowers_success_and_leaves_the_latency_population() {
        let obs = observations(vec![
            Req::ok(0, TICKET, "a", 100.0),
            Req::failed(1, TICKET, "a", "429"),
            Req::ok(2, TICKET, "a", 300.0),
        ]);
        let m = metrics(TICKET.as_str(), &obs);
        assert_eq!((m.correct_count, m.failed_request_count, m.submitted_count), (2, 1, 3));
        assert_eq!(m.task_success_rate, Some(2.0 / 3.0));
        assert_eq!(m.failure_rate, Some(1.0 / 3.0));
        assert_eq!(m.failures.rate("http_429"), Some(1.0 / 3.0));
        assert_eq!(m.failures.rate("timeout"), Some(0.0));
        let ttfa = m.summaries.of(TTFA).unwrap();
        assert_eq!((ttfa.population_count, ttfa.missing_sample_count), (2, 1));
        // TTFA samples 50 and 150: upper p50 is rank ceil(2/2) = 1, p99 rank 2.
        assert_eq!((m.value(TTFA.at(50)), m.value(TTFA.at(99))), (Some(50.0), Some(150.0)));
        assert_eq!(
            m.task_success_rate_detail,
            RateDetail {
                value: Some(2.0 / 3.0),
                numerator: 2,
                denominator: 3,
                missing_sample_count: 0,
                interval: wilson(2, 3)
            }
        );
    }

    #[test]
    fn speed_floors_use_the_lower_tail_and_the_median_the_upper_rank() {
        let reqs = (1..=20)
            .map(|i| Req::ok(i, TICKET, "a", 100.0).with(|r| r.output_tokens_per_second = Some(i as f64 * 10.0)));
        let m = metrics(TICKET.as_str(), &observations(reqs.collect()));
        // 20 samples 10..200: p50 rank 10 → 100; p95 floor rank 20 − 19 + 1 = 2 → 20; p99 floor rank 1 → 10.
        assert_eq!(m.value(OUTPUT_TOKENS_PER_SECOND.at(50)), Some(100.0));
        assert_eq!(m.value(OUTPUT_TOKENS_PER_SECOND.at(95)), Some(20.0));
        assert_eq!(m.value(OUTPUT_TOKENS_PER_SECOND.at(99)), Some(10.0));
    }

    #[test]
    fn invalid_and_incorrect_answers_are_neither_successes_nor_failures() {
        let obs = observations(vec![
            Req::ok(0, TICKET, "a", 100.0).judged(Classification::InvalidResult),
            Req::ok(1, TICKET, "a", 100.0).judged(Classification::IncorrectResult),
            Req::ok(2, TICKET, "a", 100.0),
            Req::ok(3, TICKET, "a", 100.0)
                .with(|r| (r.reasoning_emitted_before_answer, r.pre_answer_reasoning_tokens) = (Some(true), Some(7))),
        ]);
        let m = metrics(TICKET.as_str(), &obs);
        assert_eq!((m.invalid_result_count, m.incorrect_result_count, m.failed_request_count), (1, 1, 0));
        assert_eq!(m.task_success_rate, Some(0.5));
        assert_eq!(m.reasoning_emission_rate, Some(0.25));
        assert_eq!(m.summaries.of(E2E_LATENCY).unwrap().population_count, 4);
    }

    #[test]
    fn synthetic_answers_have_no_success_rate_and_do_not_make_their_provider_ineligible() {
        let synthetic = inferbench_contract::vocab::TaskFamily::Synthetic;
        let reqs = vec![
            Req::ok(0, synthetic, "a", 100.0).judged(Classification::NotScored),
            Req::ok(1, synthetic, "a", 100.0).judged(Classification::NotScored),
            Req::failed(2, synthetic, "a", "timeout"),
        ];
        let m = metrics(synthetic.as_str(), &observations(reqs));
        assert_eq!((m.correct_count, m.failed_request_count, m.task_success_rate), (0, 1, None));
        assert_eq!(
            m.task_success_rate_detail,
            RateDetail { value: None, numerator: 0, denominator: 0, missing_sample_count: 3, interval: None }
        );
    }

    #[test]
    fn usage_cost_and_contract_median() {
        let obs = observations(vec![
            Req::ok(0, CONTRACT, "a", 100.0),
            Req::ok(1, CONTRACT, "a", 100.0),
            Req::failed(2, CONTRACT, "a", "timeout"),
        ]);
        let mut obs = obs;
        obs[0].evaluation.correct_field_count = Some(10);
        obs[1].evaluation.correct_field_count = Some(9);
        let m = metrics(CONTRACT.as_str(), &obs);
        assert_eq!((m.usage.reported_count, m.usage.input_tokens, m.usage.output_tokens), (2, 20, 10));
        // (20 · $1 + 10 · $2) / 1e6.
        assert_eq!(m.cost.known_cost_usd, 40.0 / 1_000_000.0);
        assert_eq!(m.cost.total_cost_usd, None);
        let diag = m.contract_field_diagnostics.unwrap();
        assert_eq!(
            (diag.returned_object_count, diag.median_correct_fields_returned, diag.field_count_total),
            (2, Some(9.5), 10)
        );
        assert_eq!(m.failures.rate("timeout"), Some(1.0 / 3.0));
    }

    #[test]
    fn json_keys_come_in_contract_order_with_flat_percentiles() {
        let m = metrics(TICKET.as_str(), &observations(vec![Req::ok(0, TICKET, "a", 100.0)]));
        let json = serde_json::to_value(&m).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        let pos = |k: &str| keys.iter().position(|x| *x == k).unwrap_or_else(|| panic!("{k} missing"));
        assert!(pos(&TIMEOUT.value().key()) < pos("http_429_count") && pos("ttfo_ms") < pos("ttfa_ms"));
        assert!(pos(&TTFO.at(50).key()) < pos(&OUTPUT_TOKENS_PER_SECOND.at(99).key()));
        assert_eq!(json["e2e_latency_ms"]["percentiles"]["p99"]["value"], 100.0);
        assert_eq!(json["other_http_count"], 0);
        assert!(json.get("contract_field_diagnostics").is_none());
    }

    #[test]
    fn an_empty_group_has_null_rates_and_percentiles() {
        let m = metrics(TICKET.as_str(), &[]);
        assert_eq!((m.task_success_rate, m.failure_rate, m.value(E2E_LATENCY.at(50))), (None, None, None));
        assert_eq!(m.summaries.of(TTFO).unwrap().population_rate, None);
    }
}
