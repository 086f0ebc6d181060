//! `comparisons.json`: the paired analysis `ib-aggregate` writes over the run's rounds, and the
//! rows it is made of.
use super::Provenance;
use crate::vocab::WireApi;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// What a wire API costs: for each pair of providers that are one endpoint reached over
    /// two APIs (the same model id, the same endpoint but for the API's path), the per-round
    /// TTFA and E2E differences with their paired-bootstrap interval. Absent when the run has
    /// no such pair.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_pairs: Vec<ApiPairRow>,
    /// The code that wrote the document and the files it was derived from (the same as
    /// `metrics.json`'s).
    pub provenance: Provenance,
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

/// One endpoint reached over two wire APIs, as two providers of one run (`provider_a <
/// provider_b` by name): what the API costs, paired round by round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApiPairRow {
    pub provider_a: String,
    pub api_a: WireApi,
    pub provider_b: String,
    pub api_b: WireApi,
    /// `provider_a`'s TTFA − `provider_b`'s, over the rounds where both have one.
    pub ttfa: PairedDifference,
    /// `provider_a`'s E2E − `provider_b`'s, over the rounds where both have one.
    pub e2e: PairedDifference,
}

/// The per-round differences `a − b` of one figure, milliseconds (negative favours A), with
/// the paired bootstrap's interval of their median: seed 20261201, 10,000 resamples, 95 %
/// (`inferbench_stats::bootstrap`, the method `ib-compare` uses).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PairedDifference {
    /// Rounds where both have the figure.
    pub paired_count: i64,
    /// Upper-tail nearest-rank p50 of the differences; null without pairs.
    pub difference_p50_ms: Option<f64>,
    /// The 95 % percentile interval of the resampled medians; null without pairs.
    pub interval_low_ms: Option<f64>,
    pub interval_high_ms: Option<f64>,
    /// `a_faster` (the interval below zero), `b_faster` (above), `inconclusive`,
    /// `too_few_rounds` (under 6 pairs, where no interval can have 95 % coverage) or
    /// `no_pairs`.
    pub verdict: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::documents::METRICS_VERSION;
    use std::collections::BTreeMap;

    fn provenance() -> Provenance {
        Provenance::new(&BTreeMap::from([("lock.json".to_string(), "ab".repeat(32))]))
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
            api_pairs: Vec::new(),
            provenance: provenance(),
        }
    }

    #[test]
    fn the_document_reads_back_as_written() {
        let text = serde_json::to_string_pretty(&comparisons()).unwrap();
        assert_eq!(serde_json::from_str::<ComparisonsDocument>(&text).unwrap(), comparisons());
    }
}
