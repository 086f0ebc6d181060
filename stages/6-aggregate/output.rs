//! The stage's last phase: the figures serialised into its four outputs, `metrics.json`,
//! `metrics.parquet`, `pooled.parquet` and `comparisons.json`, written together as one atomic
//! group. Nothing here computes a figure.
//! Nothing in them depends on the clock or the machine, so re-deriving them from the same
//! inputs with the same code gives the same bytes.
use crate::figures::Figures;
use crate::pooled::{MAX_FAILURE_PERCENT, MIN_SUCCESS_PERCENT};
use inferbench_contract::documents::{
    ComparisonsDocument, EligibilityPolicy, MetricsDocument, Provenance, METRICS_VERSION,
};
use inferbench_contract::tables::{MetricRow, PooledRow};
use inferbench_contract::vocab::TaskFamily;
use inferbench_store::run::RunDir;
use inferbench_store::{atomic, parquet_io};
use std::collections::BTreeMap;

pub const PERCENTILE_CONVENTION: &str =
    "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1";

/// `metrics.json`'s convention: the percentiles and their intervals.
pub const METRICS_PERCENTILE_CONVENTION: &str =
    "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1; each with a \
     95 % distribution-free interval [x(l), x(u)] of order statistics: l and u widened one rank at a time on both \
     sides of the point rank (within 1..n) until P(l ≤ B < u) ≥ 0.95, B ~ Binomial(n, q), q = K/100 (upper) or \
     1 − K/100 (floor); none when even [x(1), x(n)] falls short; rates with 95 % Wilson score intervals";
pub const TIE_RULE: &str = "exact E2E ties split one round's credit equally (1/k each)";

/// Who the run belongs to, and every file its figures were derived from.
pub struct RunIdentity<'a> {
    pub benchmark_slug: &'a str,
    pub run_id: &'a str,
    /// Logical name → SHA-256: the outputs' provenance.
    pub inputs: &'a BTreeMap<String, String>,
}

/// Writes the four outputs into `run`, all or none: the documents and rows made from the
/// figures, then their bytes, then the files.
pub fn write(run: &RunDir, id: &RunIdentity, figures: &Figures) -> anyhow::Result<()> {
    let (metrics, comparisons) = (metrics_doc(id, figures), comparisons_doc(id, figures));
    let (rows, pooled) = (metric_rows(figures), pooled_rows(figures));
    let files = [
        (run.metrics_json(), atomic::json_bytes(&run.metrics_json(), &metrics)?),
        (run.metrics_parquet(), parquet_io::to_bytes(&rows, id.inputs)?),
        (run.pooled_parquet(), parquet_io::to_bytes(&pooled, id.inputs)?),
        (run.comparisons(), atomic::json_bytes(&run.comparisons(), &comparisons)?),
    ];
    let mut outputs = atomic::Group::new(run.root());
    for (path, bytes) in &files {
        outputs.add(path, bytes)?;
    }
    outputs.commit()?;
    Ok(())
}

pub fn metrics_doc(id: &RunIdentity, figures: &Figures) -> MetricsDocument {
    let computed = &figures.metrics;
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
        load: figures.load.clone(),
        cache_probe: figures.cache_probe.clone(),
        provenance: Provenance::new(id.inputs),
    }
}

pub fn comparisons_doc(id: &RunIdentity, figures: &Figures) -> ComparisonsDocument {
    let comparisons = &figures.comparisons;
    ComparisonsDocument {
        metrics_version: METRICS_VERSION.to_string(),
        benchmark_slug: id.benchmark_slug.to_string(),
        run_id: id.run_id.to_string(),
        percentile_convention: PERCENTILE_CONVENTION.to_string(),
        tie_rule: TIE_RULE.to_string(),
        fastest_provider_wins: comparisons.wins.clone(),
        pairwise_e2e_latency_differences: comparisons.pairs.clone(),
        api_pairs: comparisons.api_pairs.clone(),
        provider_eligibility: comparisons.eligibility.clone(),
        provenance: Provenance::new(id.inputs),
    }
}

/// `metrics.parquet` rows: per provider (by name), its family rows (by family name).
pub fn metric_rows(figures: &Figures) -> Vec<MetricRow> {
    let mut rows: Vec<MetricRow> = figures
        .metrics
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
pub fn pooled_rows(figures: &Figures) -> Vec<PooledRow> {
    figures.metrics.pooled.iter().map(PooledRow::of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req, TICKET};
    use inferbench_judge::rules::Rules;

    fn figures() -> Figures {
        let table = fixture::provider_table();
        let mut reqs = fixture::balanced(&["b", "a"], |p, round| if p == "a" { 100.0 + round as f64 } else { 200.0 });
        reqs.push(Req::failed(1, TICKET, "c", "429"));
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let metrics = crate::metrics::compute(&joined, &fixture::families(), &table);
        let comparisons = crate::comparisons::compute(Rules::Inferbench, &joined, &table, &metrics.pooled, None);
        Figures { metrics, comparisons, load: None, cache_probe: None, responses: joined.observations.len() }
    }

    fn inputs() -> BTreeMap<String, String> {
        BTreeMap::from([("lock.json".to_string(), "ab".repeat(32))])
    }

    fn identity(inputs: &BTreeMap<String, String>) -> RunIdentity<'_> {
        RunIdentity { benchmark_slug: "slug", run_id: "run-1", inputs }
    }

    #[test]
    fn metrics_rows_are_families_by_provider_and_pooled_rows_one_per_provider() {
        let figures = figures();
        let rows = metric_rows(&figures);
        let keys: Vec<(&str, &str)> = rows.iter().map(|r| (r.provider.as_str(), r.task_family.as_str())).collect();
        assert_eq!(keys.len(), 9);
        assert_eq!(
            &keys[..3],
            &[("a", fixture::CONTRACT.as_str()), ("a", fixture::MEETING.as_str()), ("a", TICKET.as_str())]
        );
        let pooled = pooled_rows(&figures);
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
        let (figures, inputs) = (figures(), inputs());
        let id = identity(&inputs);
        let metrics = serde_json::to_string_pretty(&metrics_doc(&id, &figures)).unwrap();
        assert_eq!(metrics, serde_json::to_string_pretty(&metrics_doc(&id, &self::figures())).unwrap());
        let value: serde_json::Value = serde_json::from_str(&metrics).unwrap();
        assert_eq!(value["provenance"]["code_version"], inferbench_contract::CODE_VERSION);
        assert_eq!(value["ranking"], serde_json::json!(["a", "b"]));
        assert_eq!(value["eligibility"]["max_failure_rate"], 0.01);
        let comparisons = serde_json::to_value(comparisons_doc(&id, &figures)).unwrap();
        assert_eq!(comparisons["fastest_provider_wins"][0]["credited_wins"], 3.0);
        assert_eq!(comparisons["pairwise_e2e_latency_differences"].as_array().unwrap().len(), 3);
        assert_eq!(comparisons["provider_eligibility"][2]["eligible"], false);
    }
}
