//! The stage's three outputs: `metrics.json`, `metrics.parquet` and `comparisons.json`.
//! Nothing in them depends on the clock or the machine, so re-deriving them from the same
//! inputs with the same code gives the same bytes.
use crate::comparisons;
use crate::join::Joined;
use crate::metrics::Computed;
use crate::pooled::{MAX_FAILURE_PERCENT, MIN_SUCCESS_PERCENT};
use inferbench_schemas::documents::{
    ComparisonsDocument, EligibilityPolicy, GroupMetrics, MetricsDocument, PooledMetrics, Provenance,
    ProviderEligibility, METRICS_VERSION,
};
use inferbench_schemas::tables::MetricRow;

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

/// `metrics.parquet` rows: per provider (by name), its family rows (by family name), then its
/// pooled row.
pub fn metric_rows(computed: &Computed) -> Vec<MetricRow> {
    let mut pooled: Vec<&PooledMetrics> = computed.pooled.iter().collect();
    pooled.sort_by(|a, b| a.metrics.provider.cmp(&b.metrics.provider));
    let mut rows = Vec::new();
    for p in pooled {
        let name = &p.metrics.provider;
        rows.extend(computed.families.iter().filter(|f| &f.provider == name).map(|f| metric_row(f, None)));
        rows.push(metric_row(&p.metrics, Some(p)));
    }
    rows
}

fn metric_row(m: &GroupMetrics, pooled: Option<&PooledMetrics>) -> MetricRow {
    let (f, p, s) = (&m.failures, &m.percentiles, &m.summaries);
    MetricRow {
        provider: m.provider.clone(),
        task_family: m.task_family.clone(),
        submitted_count: m.submitted_count,
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
        eligible: pooled.map(|p| p.eligible),
        ineligibility_reasons: pooled.map(|p| p.ineligibility_reasons.join("; ")),
        rank: pooled.and_then(|p| p.rank),
    }
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
    fn parquet_rows_are_families_then_pooled_per_provider_by_name() {
        let (computed, _) = computed_and_joined();
        let rows = metric_rows(&computed);
        let keys: Vec<(&str, &str)> = rows.iter().map(|r| (r.provider.as_str(), r.task_family.as_str())).collect();
        assert_eq!(keys.len(), 12);
        assert_eq!(
            &keys[..4],
            &[
                ("a", fixture::CONTRACT.as_str()),
                ("a", fixture::MEETING.as_str()),
                ("a", TICKET.as_str()),
                ("a", "pooled")
            ]
        );
        let c = rows.iter().find(|r| r.provider == "c" && r.task_family == "pooled").unwrap();
        assert_eq!(c.eligible, Some(false));
        assert!(c.ineligibility_reasons.as_deref().unwrap().starts_with("task success rate below 95%; operational"));
        assert_eq!(rows[0].eligible, None);
        let a = rows.iter().find(|r| r.provider == "a" && r.task_family == "pooled").unwrap();
        assert_eq!((a.rank, a.e2e_latency_p99, a.http_429_rate), (Some(1), Some(102.0), Some(0.0)));
    }

    #[test]
    fn the_json_documents_carry_provenance_and_are_reproducible() {
        let (computed, joined) = computed_and_joined();
        let id = identity();
        let metrics = serde_json::to_string_pretty(&metrics_doc(&id, &computed)).unwrap();
        let (again, _) = computed_and_joined();
        assert_eq!(metrics, serde_json::to_string_pretty(&metrics_doc(&id, &again)).unwrap());
        let value: serde_json::Value = serde_json::from_str(&metrics).unwrap();
        assert_eq!(value["provenance"]["code_version"], inferbench_schemas::CODE_VERSION);
        assert_eq!(value["ranking"], serde_json::json!(["a", "b"]));
        assert_eq!(value["eligibility"]["max_failure_rate"], 0.01);
        let comparisons = serde_json::to_value(comparisons_doc(&id, &computed, &joined)).unwrap();
        assert_eq!(comparisons["fastest_provider_wins"][0]["credited_wins"], 3.0);
        assert_eq!(comparisons["pairwise_e2e_latency_differences"].as_array().unwrap().len(), 3);
        assert_eq!(comparisons["provider_eligibility"][2]["eligible"], false);
    }
}
