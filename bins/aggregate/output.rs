//! The stage's four outputs: `metrics.json`, `metrics.parquet`, `pooled.parquet` and
//! `comparisons.json`.
//! Nothing in them depends on the clock or the machine, so re-deriving them from the same
//! inputs with the same code gives the same bytes.
use crate::comparisons;
use crate::join::Joined;
use crate::metrics::Computed;
use crate::pooled::{MAX_FAILURE_PERCENT, MIN_SUCCESS_PERCENT};
use inferbench_contract::documents::{
    ComparisonsDocument, EligibilityPolicy, GroupMetrics, MetricsDocument, Provenance, ProviderEligibility,
    METRICS_VERSION,
};
use inferbench_contract::tables::{MetricRow, PooledRow};
use inferbench_contract::vocab::TaskFamily;

pub const PERCENTILE_CONVENTION: &str =
    "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1";
pub const TIE_RULE: &str = "exact E2E ties split one round's credit equally (1/k each)";

/// Who the run belongs to.
pub struct RunIdentity<'a> {
    pub benchmark_slug: &'a str,
    pub run_id: &'a str,
    pub provenance: Provenance,
}

pub fn metrics_doc(id: &RunIdentity, computed: &Computed) -> MetricsDocument {
    MetricsDocument {
        metrics_version: METRICS_VERSION.to_string(),
        benchmark_slug: id.benchmark_slug.to_string(),
        run_id: id.run_id.to_string(),
        percentile_convention: PERCENTILE_CONVENTION.to_string(),
        eligibility: EligibilityPolicy {
            min_task_success_rate: MIN_SUCCESS_PERCENT as f64 / 100.0,
            max_failure_rate: MAX_FAILURE_PERCENT as f64 / 100.0,
        },
        task_family_metrics: computed.families.clone(),
        combined_provider_metrics: computed.pooled.clone(),
        ranking: computed.ranking.clone(),
        provenance: id.provenance.clone(),
    }
}

pub fn comparisons_doc(id: &RunIdentity, computed: &Computed, joined: &Joined) -> ComparisonsDocument {
    let eligibility: Vec<ProviderEligibility> = computed.paired.clone();
    let rounds = comparisons::rounds(&joined.schedule, &joined.observations);
    ComparisonsDocument {
        metrics_version: METRICS_VERSION.to_string(),
        benchmark_slug: id.benchmark_slug.to_string(),
        run_id: id.run_id.to_string(),
        percentile_convention: PERCENTILE_CONVENTION.to_string(),
        tie_rule: TIE_RULE.to_string(),
        fastest_provider_wins: comparisons::fastest_wins(&rounds, &eligibility),
        pairwise_e2e_latency_differences: comparisons::pairwise(&rounds, &eligibility),
        provider_eligibility: eligibility,
        provenance: id.provenance.clone(),
    }
}

/// A row of `metrics.parquet` or `pooled.parquet` from a group's metrics: the two tables share
/// these columns (`inferbench_contract::tables`), between their own leading and trailing ones.
macro_rules! metric_row {
    ($table:ident, $m:expr, { $($lead:ident : $lval:expr),* $(,)? }, { $($trail:ident : $tval:expr),* $(,)? }) => {{
        let m: &GroupMetrics = $m;
        let (f, p, s) = (&m.failures, &m.percentiles, &m.summaries);
        $table {
            $($lead: $lval,)*
            scheduled_count: m.scheduled_count,
            submitted_count: m.submitted_count,
            missing_response_count: m.missing_response_count,
            correct_count: m.correct_count,
            failed_request_count: m.failed_request_count,
            invalid_result_count: m.invalid_result_count,
            incorrect_result_count: m.incorrect_result_count,
            task_success_rate: m.task_success_rate,
            failure_rate: m.failure_rate,
            timeout_rate: f.timeout_rate,
            http_429_rate: f.http_429_rate,
            other_http_4xx_rate: f.other_http_4xx_rate,
            http_5xx_rate: f.http_5xx_rate,
            transport_error_rate: f.transport_error_rate,
            other_http_rate: f.other_http_rate,
            invalid_stream_rate: f.invalid_stream_rate,
            stream_error_rate: f.stream_error_rate,
            truncated_rate: f.truncated_rate,
            reasoning_emission_rate: m.reasoning_emission_rate,
            ttfo_p50: p.ttfo_p50,
            ttfo_p95: p.ttfo_p95,
            ttfo_p99: p.ttfo_p99,
            ttfa_p50: p.ttfa_p50,
            ttfa_p95: p.ttfa_p95,
            ttfa_p99: p.ttfa_p99,
            pre_answer_reasoning_tokens_p50: p.pre_answer_reasoning_tokens_p50,
            pre_answer_reasoning_tokens_p95: p.pre_answer_reasoning_tokens_p95,
            pre_answer_reasoning_tokens_p99: p.pre_answer_reasoning_tokens_p99,
            e2e_latency_p50: p.e2e_latency_p50,
            e2e_latency_p95: p.e2e_latency_p95,
            e2e_latency_p99: p.e2e_latency_p99,
            output_tokens_per_second_p50: p.output_tokens_per_second_p50,
            output_tokens_per_second_p95: p.output_tokens_per_second_p95,
            output_tokens_per_second_p99: p.output_tokens_per_second_p99,
            ttfa_population: s.ttfa_ms.population_count,
            e2e_latency_population: s.e2e_latency_ms.population_count,
            output_tokens_per_second_population: s.output_tokens_per_second.population_count,
            ended_stream_count: m.stream_diagnostics.ended_stream_count,
            missing_done_count: m.stream_diagnostics.missing_done_count,
            missing_finish_reason_count: m.stream_diagnostics.missing_finish_reason_count,
            usage_reported_count: m.usage.reported_count,
            usage_mismatch_count: m.stream_diagnostics.usage_mismatch_count,
            input_tokens: m.usage.input_tokens,
            output_tokens: m.usage.output_tokens,
            known_cost_usd: m.cost.known_cost_usd,
            $($trail: $tval,)*
        }
    }};
}

/// `metrics.parquet` rows: per provider (by name), its family rows (by family name).
pub fn metric_rows(computed: &Computed) -> Vec<MetricRow> {
    let mut rows: Vec<MetricRow> = computed
        .families
        .iter()
        .map(|m| {
            // Family rows are only ever made for the spec's families (`metrics::compute_with`).
            let family: TaskFamily = m.task_family.parse().expect("a family row names a task family");
            metric_row!(MetricRow, m, { provider: m.provider.clone(), task_family: family }, {})
        })
        .collect();
    rows.sort_by(|a, b| (&a.provider, a.task_family.as_str()).cmp(&(&b.provider, b.task_family.as_str())));
    rows
}

/// `pooled.parquet` rows: one per provider, ranked providers first (by rank), then the others
/// by name, as `metrics.json` orders them.
pub fn pooled_rows(computed: &Computed) -> Vec<PooledRow> {
    computed
        .pooled
        .iter()
        .map(|p| {
            let m = &p.metrics;
            metric_row!(PooledRow, m, { provider: m.provider.clone() }, {
                balanced: p.balanced,
                configuration_compatible: p.configuration_compatible,
                artifact_graph_complete: p.artifact_graph_complete,
                eligible: p.eligible,
                ineligibility_reasons: p.ineligibility_reasons.clone(),
                ineligibility_details: p.ineligibility_details.clone(),
                rank: p.rank,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req, TICKET};
    use std::collections::BTreeMap;

    fn computed_and_joined() -> (Computed, Joined) {
        let table = fixture::provider_table();
        let mut reqs = fixture::balanced(&["b", "a"], |p, round| if p == "a" { 100.0 + round as f64 } else { 200.0 });
        reqs.push(Req::failed(1, TICKET, "c", "429"));
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        (crate::metrics::compute(&joined, &fixture::families(), &table), joined)
    }

    fn identity() -> RunIdentity<'static> {
        let inputs = BTreeMap::from([("lock.json".to_string(), "ab".repeat(32))]);
        RunIdentity { benchmark_slug: "slug", run_id: "run-1", provenance: Provenance::new(&inputs) }
    }

    #[test]
    fn metrics_rows_are_families_by_provider_and_pooled_rows_one_per_provider() {
        let (computed, _) = computed_and_joined();
        let rows = metric_rows(&computed);
        let keys: Vec<(&str, &str)> = rows.iter().map(|r| (r.provider.as_str(), r.task_family.as_str())).collect();
        assert_eq!(keys.len(), 9);
        assert_eq!(
            &keys[..3],
            &[("a", fixture::CONTRACT.as_str()), ("a", fixture::MEETING.as_str()), ("a", TICKET.as_str())]
        );
        let pooled = pooled_rows(&computed);
        let order: Vec<(&str, Option<i64>, bool)> =
            pooled.iter().map(|r| (r.provider.as_str(), r.rank, r.eligible)).collect();
        assert_eq!(order, [("a", Some(1), true), ("b", Some(2), true), ("c", None, false)]);
        let c = &pooled[2];
        assert_eq!(c.ineligibility_reasons[..2], ["task success rate below 95%", "operational failure rate above 1%"]);
        assert_eq!(c.ineligibility_reasons.len(), c.ineligibility_details.len());
        let a = &pooled[0];
        assert_eq!((a.e2e_latency_p99, a.http_429_rate, a.submitted_count), (Some(102.0), Some(0.0), 3));
        assert!(a.ineligibility_reasons.is_empty() && a.balanced && a.artifact_graph_complete);
    }

    #[test]
    fn the_json_documents_carry_provenance_and_are_reproducible() {
        let (computed, joined) = computed_and_joined();
        let id = identity();
        let metrics = serde_json::to_string_pretty(&metrics_doc(&id, &computed)).unwrap();
        let (again, _) = computed_and_joined();
        assert_eq!(metrics, serde_json::to_string_pretty(&metrics_doc(&id, &again)).unwrap());
        let value: serde_json::Value = serde_json::from_str(&metrics).unwrap();
        assert_eq!(value["provenance"]["code_version"], inferbench_contract::CODE_VERSION);
        assert_eq!(value["ranking"], serde_json::json!(["a", "b"]));
        assert_eq!(value["eligibility"]["max_failure_rate"], 0.01);
        let comparisons = serde_json::to_value(comparisons_doc(&id, &computed, &joined)).unwrap();
        assert_eq!(comparisons["fastest_provider_wins"][0]["credited_wins"], 3.0);
        assert_eq!(comparisons["pairwise_e2e_latency_differences"].as_array().unwrap().len(), 3);
        assert_eq!(comparisons["provider_eligibility"][2]["eligible"], false);
    }
}
