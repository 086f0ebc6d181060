//! The stage's four outputs: `metrics.json`, `metrics.parquet`, `pooled.parquet` and
//! `comparisons.json`.
//! Nothing in them depends on the clock or the machine, so re-deriving them from the same
//! inputs with the same code gives the same bytes.
use crate::comparisons;
use crate::join::Joined;
use crate::metrics::Computed;
use crate::pooled::{MAX_FAILURE_PERCENT, MIN_SUCCESS_PERCENT};
use inferbench_contract::documents::{
    ComparisonsDocument, EligibilityPolicy, MetricsDocument, Provenance, ProviderEligibility, METRICS_VERSION,
};
use inferbench_contract::tables::{MetricRow, PooledRow};
use inferbench_contract::vocab::TaskFamily;

pub const PERCENTILE_CONVENTION: &str =
    "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1";

/// `metrics.json`'s convention: the percentiles and their intervals.
pub const METRICS_PERCENTILE_CONVENTION: &str =
    "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1; each with a \
     95 % distribution-free interval [x(l), x(u)] of order statistics: l and u widened one rank at a time on both \
     sides of the point rank (within 1..n) until P(l ≤ B < u) ≥ 0.95, B ~ Binomial(n, q), q = K/100 (upper) or \
     1 − K/100 (floor); none when even [x(1), x(n)] falls short; rates with 95 % Wilson score intervals";
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
        percentile_convention: METRICS_PERCENTILE_CONVENTION.to_string(),
        eligibility: EligibilityPolicy {
            min_task_success_rate: MIN_SUCCESS_PERCENT as f64 / 100.0,
            max_failure_rate: MAX_FAILURE_PERCENT as f64 / 100.0,
        },
        task_family_metrics: computed.families.clone(),
        combined_provider_metrics: computed.pooled.clone(),
        ranking: computed.ranking.clone(),
        rank_separation: computed.separations.clone(),
        rank_separation_method: crate::separation::METHOD.to_string(),
        load: None,
        cache_probe: None,
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

/// `metrics.parquet` rows: per provider (by name), its family rows (by family name).
pub fn metric_rows(computed: &Computed) -> Vec<MetricRow> {
    let mut rows: Vec<MetricRow> = computed
        .families
        .iter()
        .map(|m| {
            // Family rows are only ever made for the spec's families (`metrics::compute_with`).
            let family: TaskFamily = m.task_family.parse().expect("a family row names a task family");
            MetricRow::of(m, family)
        })
        .collect();
    rows.sort_by(|a, b| (&a.provider, a.task_family.as_str()).cmp(&(&b.provider, b.task_family.as_str())));
    rows
}

/// `pooled.parquet` rows: one per provider, ranked providers first (by rank), then the others
/// by name, as `metrics.json` orders them.
pub fn pooled_rows(computed: &Computed) -> Vec<PooledRow> {
    computed.pooled.iter().map(PooledRow::of).collect()
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
