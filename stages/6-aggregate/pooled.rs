//! A provider's balanced pooled row (reference §8.5), its eligibility and the ranking.
//!
//! Eligibility follows the reference's four reasons, in its order, with the thresholds
//! inclusive (95% success and 1% failures still pass). Two deliberate differences (DESIGN.md
//! and reference §12.2 items 10–11): model identity is checked on completed responses only,
//! against the provider's model id and its aliases, so a failed request never makes a
//! provider "incompatible"; and completeness is judged from the run's own tables (every
//! scheduled request has a response, families balanced), not from flags passed by a caller.
use crate::join::Observation;
use inferbench_contract::documents::{GroupMetrics, PooledMetrics};
use inferbench_contract::metrics::RANKING;
use inferbench_contract::vocab::Outcome;
use inferbench_inputs::providers::Provider;
use inferbench_judge::rules::Rules;
use std::collections::BTreeMap;

pub const POOLED: &str = "pooled";
pub const WEIGHTING: &str = "pooled_balanced_requests";

/// Eligibility thresholds, in percent, compared in integers so the boundary is exact.
pub const MIN_SUCCESS_PERCENT: i64 = 95;
pub const MAX_FAILURE_PERCENT: i64 = 1;

pub const LOW_SUCCESS: &str = "task success rate below 95%";
pub const HIGH_FAILURE: &str = "operational failure rate above 1%";
/// The reference's reason for a provider whose responses do not evidence the intended model;
/// inferbench's reasons start with it and then say what the responses named.
pub const INCOMPATIBLE: &str = "incompatible model or request configuration";
pub const INCOMPLETE: &str = "incomplete, unbalanced, or internally inconsistent local artifact graph";

/// How many distinct unexpected models a reason lists before summarising the rest.
const MODELS_LISTED: usize = 3;

/// Builds a provider's pooled row from its family rows (one per expected family, in order),
/// the group of all its requests (`metrics`) and all of its observations, under the given
/// rules. The reference's (§6.8): the exact model id, no alias; at least one completed
/// response naming it; and a record for every scheduled request.
pub fn assess_with(
    rules: Rules,
    provider: &Provider,
    families: &[GroupMetrics],
    metrics: GroupMetrics,
    observations: &[&Observation],
) -> PooledMetrics {
    let present: Vec<&GroupMetrics> = families.iter().filter(|f| f.submitted_count > 0).collect();
    let missing: Vec<String> =
        families.iter().filter(|f| f.submitted_count == 0).map(|f| f.task_family.clone()).collect();
    let balanced = missing.is_empty() && present.windows(2).all(|w| w[0].submitted_count == w[1].submitted_count);
    let mut identity = ModelIdentity::of(rules, provider, observations);
    identity.missing_records = metrics.missing_response_count;
    let complete = balanced && metrics.missing_response_count == 0;
    let (reasons, details) = reasons(&metrics, &identity, complete);
    PooledMetrics {
        weighting: WEIGHTING.to_string(),
        task_family_count: present.len() as i64,
        expected_task_family_count: families.len() as i64,
        missing_task_families: missing,
        task_family_submitted_counts: families.iter().map(|f| (f.task_family.clone(), f.submitted_count)).collect(),
        balanced,
        configuration_compatible: identity.compatible(),
        expected_models: identity.expected,
        models_returned: identity.returned,
        model_mismatch_count: identity.mismatched,
        model_missing_count: identity.missing,
        artifact_graph_complete: complete,
        eligible: reasons.is_empty(),
        ineligibility_reasons: reasons,
        ineligibility_details: details,
        rank_range: None,
        rank: None,
        metrics,
    }
}

/// What a provider's completed responses said about the model that served them: the only
/// responses whose model echo is evidence (a failed request proves nothing either way).
struct ModelIdentity {
    rules: Rules,
    /// Scheduled requests without a response (the reference's "expected number of records").
    missing_records: i64,
    /// Responses of any outcome.
    records: i64,
    expected: Vec<String>,
    returned: BTreeMap<String, i64>,
    /// Completed responses naming an unexpected model, and those naming none.
    mismatched: i64,
    missing: i64,
    completed: i64,
}

impl ModelIdentity {
    fn of(rules: Rules, provider: &Provider, observations: &[&Observation]) -> ModelIdentity {
        let completed: Vec<_> =
            observations.iter().map(|o| &o.response).filter(|r| r.outcome == Outcome::Completed).collect();
        let mut returned = BTreeMap::new();
        for model in completed.iter().filter_map(|r| r.response_model.as_ref()) {
            *returned.entry(model.clone()).or_insert(0) += 1;
        }
        let matches = |m: &str| match rules {
            Rules::Inferbench => provider.model_matches(m),
            Rules::Reference => m == provider.model_id,
        };
        let mismatched = completed.iter().filter(|r| r.response_model.as_deref().is_some_and(|m| !matches(m))).count();
        let aliases: &[String] = if rules.is_reference() { &[] } else { &provider.model_aliases };
        ModelIdentity {
            rules,
            missing_records: 0,
            records: observations.len() as i64,
            expected: std::iter::once(&provider.model_id).chain(aliases).cloned().collect(),
            returned,
            mismatched: mismatched as i64,
            missing: completed.iter().filter(|r| r.response_model.is_none()).count() as i64,
            completed: completed.len() as i64,
        }
    }

    fn compatible(&self) -> bool {
        let reference = self.rules.is_reference() && (self.records == 0 || self.missing_records > 0);
        self.mismatched == 0 && self.missing == 0 && !reference
    }

    fn expected_text(&self) -> String {
        let mut names = self.expected.iter().map(|m| format!("`{m}`"));
        let first = names.next().unwrap_or_default();
        let aliases: Vec<String> = names.collect();
        if aliases.is_empty() {
            first
        } else {
            format!("{first} (or an alias: {})", aliases.join(", "))
        }
    }

    /// One reason per kind of failed evidence, naming what came back and what was expected.
    fn reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if self.mismatched > 0 {
            let unexpected: Vec<(&String, &i64)> =
                self.returned.iter().filter(|(m, _)| !self.expected.contains(m)).collect();
            let mut listed: Vec<String> =
                unexpected.iter().take(MODELS_LISTED).map(|(m, n)| format!("`{m}` ({n})")).collect();
            if unexpected.len() > MODELS_LISTED {
                listed.push(format!("{} more", unexpected.len() - MODELS_LISTED));
            }
            reasons.push(format!(
                "{INCOMPATIBLE}: {} of {} completed responses named another model: {}; expected {}",
                self.mismatched,
                self.completed,
                listed.join(", "),
                self.expected_text()
            ));
        }
        if self.missing > 0 {
            reasons.push(format!(
                "{INCOMPATIBLE}: model unverified: {} of {} completed responses named no model; expected {}",
                self.missing,
                self.completed,
                self.expected_text()
            ));
        }
        if self.rules.is_reference() && self.records == 0 {
            reasons.push(format!("{INCOMPATIBLE}: no record at all (the reference's rule)"));
        }
        if self.rules.is_reference() && self.missing_records > 0 {
            reasons.push(format!(
                "{INCOMPATIBLE}: {} scheduled requests have no record (the reference's rule)",
                self.missing_records
            ));
        }
        reasons
    }
}

/// The ineligibility reasons, in the reference's order and words, and the same reasons with
/// what the run showed. An empty group fails both rate tests (its rates are undefined, not
/// perfect).
fn reasons(m: &GroupMetrics, identity: &ModelIdentity, complete: bool) -> (Vec<String>, Vec<String>) {
    let n = m.submitted_count;
    let mut reasons = Vec::new();
    let mut details = Vec::new();
    // correct/n < 95% ⇔ 100·correct < 95·n: no float rounding at the boundary. Only scored
    // responses count: a provider sent synthetic prompts alone has no success rate to fall short.
    let scored = m.task_success_rate_detail.denominator;
    if n == 0 || (scored > 0 && 100 * m.correct_count < MIN_SUCCESS_PERCENT * scored) {
        reasons.push(LOW_SUCCESS.to_string());
        details.push(format!("{LOW_SUCCESS}: {} of {scored} correct", m.correct_count));
    }
    if n == 0 || 100 * m.failed_request_count > MAX_FAILURE_PERCENT * n {
        reasons.push(HIGH_FAILURE.to_string());
        details.push(format!("{HIGH_FAILURE}: {} of {n} failed", m.failed_request_count));
    }
    let identity_reasons = identity.reasons();
    if !identity_reasons.is_empty() {
        reasons.push(INCOMPATIBLE.to_string());
        details.push(identity_reasons.join("; "));
    }
    if !complete {
        reasons.push(INCOMPLETE.to_string());
        details.push(format!(
            "{INCOMPLETE}: {} scheduled, {} with a response{}",
            m.scheduled_count,
            m.submitted_count,
            if m.missing_response_count == 0 { ", families unbalanced" } else { "" }
        ));
    }
    (reasons, details)
}

/// Ranks eligible providers by (pooled E2E p99, name), sets `rank`, orders the rows ranked
/// first (by rank) then by provider, and returns the ranked names in order.
pub fn rank(rows: &mut [PooledMetrics]) -> Vec<String> {
    let mut ranked: Vec<(f64, String)> = rows
        .iter()
        .filter(|r| r.eligible)
        .filter_map(|r| Some((r.metrics.value(RANKING)?, r.metrics.provider.clone())))
        .collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    for (i, (_, name)) in ranked.iter().enumerate() {
        if let Some(row) = rows.iter_mut().find(|r| &r.metrics.provider == name) {
            row.rank = Some(i as i64 + 1);
        }
    }
    rows.sort_by(|a, b| {
        (a.rank.is_none(), a.rank, &a.metrics.provider).cmp(&(b.rank.is_none(), b.rank, &b.metrics.provider))
    });
    ranked.into_iter().map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req, MEETING, TICKET};
    use crate::metrics;
    use inferbench_contract::metrics::{E2E_LATENCY, TTFA};

    /// Runs the whole computation on `reqs` and returns the pooled rows and the ranking.
    fn pooled(reqs: Vec<Req>) -> (Vec<PooledMetrics>, Vec<String>) {
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let computed = metrics::compute(&joined, &fixture::families(), &table);
        (computed.pooled, computed.ranking)
    }

    fn row<'a>(rows: &'a [PooledMetrics], name: &str) -> &'a PooledMetrics {
        rows.iter().find(|r| r.metrics.provider == name).unwrap()
    }

    #[test]
    fn a_clean_balanced_provider_is_eligible() {
        let (rows, ranking) = pooled(fixture::balanced(&["a"], |_, round| 100.0 * (round + 1) as f64));
        let a = row(&rows, "a");
        assert!(a.eligible && a.balanced && a.artifact_graph_complete, "{a:?}");
        assert_eq!(a.metrics.submitted_count, 3);
        // Pooled percentiles over the concatenated family samples 100, 200, 300.
        assert_eq!(a.metrics.value(E2E_LATENCY.at(50)), Some(200.0));
        assert_eq!(a.metrics.value(E2E_LATENCY.at(99)), Some(300.0));
        assert_eq!((a.rank, ranking), (Some(1), vec!["a".to_string()]));
    }

    #[test]
    fn a_provider_sent_synthetic_prompts_alone_has_no_success_rate_to_fall_short_of() {
        use inferbench_contract::vocab::{Classification, TaskFamily};
        let synthetic = TaskFamily::Synthetic;
        let reqs: Vec<Req> =
            (0..3).map(|i| Req::ok(i, synthetic, "a", 100.0).judged(Classification::NotScored)).collect();
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &[synthetic], &table.names()).unwrap();
        let computed = metrics::compute(&joined, &[synthetic], &table);
        let a = row(&computed.pooled, "a");
        assert_eq!(a.metrics.task_success_rate, None);
        assert!(a.eligible, "{:?}", a.ineligibility_details);
    }

    #[test]
    fn one_429_of_three_makes_the_provider_ineligible_for_failures() {
        let mut reqs = fixture::balanced(&["a"], |_, _| 100.0);
        reqs[1] = Req::failed(1, TICKET, "a", "429");
        let (rows, ranking) = pooled(reqs);
        let a = row(&rows, "a");
        assert_eq!(a.ineligibility_reasons, vec![LOW_SUCCESS.to_string(), HIGH_FAILURE.to_string()]);
        assert_eq!((a.metrics.task_success_rate, a.metrics.failure_rate), (Some(2.0 / 3.0), Some(1.0 / 3.0)));
        assert_eq!(a.metrics.failures.rate("http_429"), Some(1.0 / 3.0));
        assert_eq!(a.metrics.summaries.of(TTFA).unwrap().population_count, 2);
        assert!(a.configuration_compatible, "a failed request is no evidence about the model");
        assert!(ranking.is_empty() && a.rank.is_none());
    }

    #[test]
    fn an_alias_is_accepted_and_another_model_is_not() {
        let mut reqs = fixture::balanced(&["a", "b"], |_, _| 100.0);
        reqs[0] = reqs[0].clone().with(|r| r.response_model = Some("model-x-alias".into()));
        reqs[1] = reqs[1].clone().with(|r| r.response_model = Some("model-y".into()));
        let (rows, _) = pooled(reqs);
        assert!(row(&rows, "a").eligible);
        let b = row(&rows, "b");
        assert_eq!((b.model_mismatch_count, b.model_missing_count), (1, 0));
        assert_eq!(b.ineligibility_reasons, vec![INCOMPATIBLE.to_string()]);
        assert_eq!(
            b.ineligibility_details,
            vec![format!(
                "{INCOMPATIBLE}: 1 of 3 completed responses named another model: `model-y` (1); expected \
                 `model-x` (or an alias: `model-x-alias`)"
            )]
        );
        assert_eq!(b.models_returned, BTreeMap::from([("model-x".to_string(), 2), ("model-y".to_string(), 1)]));
    }

    #[test]
    fn the_references_rules_accept_the_exact_model_id_only_and_need_every_record() {
        let mut reqs = fixture::balanced(&["a"], |_, _| 100.0);
        reqs[0] = reqs[0].clone().with(|r| r.response_model = Some("model-x-alias".into()));
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let rows = metrics::compute_with(Rules::Reference, &joined, &fixture::families(), &table).pooled;
        let a = row(&rows, "a");
        assert!(!a.configuration_compatible && !a.eligible);
        assert_eq!(a.expected_models, vec!["model-x".to_string()]);
        // All timeouts: no completed response, yet compatible (no evidence against it).
        let reqs: Vec<Req> = fixture::balanced(&["a"], |_, _| 1.0)
            .into_iter()
            .map(|q| Req::failed(q.response.round_index, q.response.task_family, "a", "timeout"))
            .collect();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let rows = metrics::compute_with(Rules::Reference, &joined, &fixture::families(), &table).pooled;
        assert!(row(&rows, "a").configuration_compatible);
    }

    #[test]
    fn a_response_without_a_model_is_unverified_not_mismatched() {
        let mut reqs = fixture::balanced(&["a"], |_, _| 100.0);
        reqs[2] = reqs[2].clone().with(|r| r.response_model = None);
        let (rows, _) = pooled(reqs);
        let a = row(&rows, "a");
        assert_eq!((a.model_mismatch_count, a.model_missing_count, a.configuration_compatible), (0, 1, false));
        assert_eq!(a.ineligibility_reasons, vec![INCOMPATIBLE.to_string()]);
        assert!(a.ineligibility_details[0].contains("model unverified: 1 of 3 completed responses named no model"));
    }

    #[test]
    fn failed_streams_are_no_evidence_about_the_model() {
        let mut reqs = fixture::balanced(&["a"], |_, _| 100.0);
        reqs.push(Req::failed(3, MEETING, "a", "truncated").with(|r| r.response_model = Some("other".into())));
        let (rows, _) = pooled(reqs);
        assert!(row(&rows, "a").configuration_compatible);
    }

    #[test]
    fn a_missing_response_makes_the_provider_incomplete() {
        // Two rounds per family; one response per family is missing, so the families stay
        // balanced (1, 1, 1) and only the missing responses make the graph incomplete.
        let mut reqs = fixture::balanced(&["a"], |_, _| 100.0);
        for (round, family) in [(3, MEETING), (4, TICKET), (5, fixture::CONTRACT)] {
            reqs.push(Req::ok(round, family, "a", 100.0));
        }
        let mut tables = fixture::tables(&reqs);
        tables.responses.truncate(3);
        tables.evaluations.truncate(3);
        let table = fixture::provider_table();
        let joined = crate::join::join(tables, &fixture::families(), &table.names()).unwrap();
        let rows = metrics::compute(&joined, &fixture::families(), &table).pooled;
        let a = row(&rows, "a");
        assert!(a.balanced);
        assert_eq!(a.metrics.missing_response_count, 3);
        assert_eq!(a.ineligibility_reasons, vec![INCOMPLETE.to_string()]);
        assert!(a.rank.is_none());
    }

    #[test]
    fn unequal_family_counts_are_unbalanced() {
        let mut reqs = fixture::balanced(&["a"], |_, _| 100.0);
        reqs.push(Req::ok(3, MEETING, "a", 100.0));
        let (rows, _) = pooled(reqs);
        let a = row(&rows, "a");
        assert!(!a.balanced && !a.eligible);
        assert_eq!(a.task_family_submitted_counts[MEETING.as_str()], 2);
    }

    #[test]
    fn ranking_orders_eligible_providers_by_e2e_p99_then_name() {
        let e2e = |p: &str, _| match p {
            "a" => 300.0,
            _ => 200.0,
        };
        let mut reqs = fixture::balanced(&["a", "b", "c"], e2e);
        reqs.iter_mut().filter(|q| q.response.provider == "c" && q.response.round_index == 0).for_each(|q| {
            *q = Req::failed(0, MEETING, "c", "5xx");
        });
        let (rows, ranking) = pooled(reqs);
        assert_eq!(ranking, vec!["b".to_string(), "a".to_string()]);
        let order: Vec<(&str, Option<i64>)> = rows.iter().map(|r| (r.metrics.provider.as_str(), r.rank)).collect();
        assert_eq!(order, vec![("b", Some(1)), ("a", Some(2)), ("c", None)]);
    }

    #[test]
    fn boundaries_are_inclusive() {
        let m = |correct: i64, failed: i64| GroupMetrics {
            correct_count: correct,
            failed_request_count: failed,
            submitted_count: 100,
            task_success_rate_detail: inferbench_contract::documents::RateDetail {
                value: Some(correct as f64 / 100.0),
                numerator: correct,
                denominator: 100,
                missing_sample_count: 0,
                interval: None,
            },
            ..row_template()
        };
        let identity = ModelIdentity {
            rules: Rules::Inferbench,
            missing_records: 0,
            records: 0,
            expected: vec!["model-x".into()],
            returned: BTreeMap::new(),
            mismatched: 0,
            missing: 0,
            completed: 0,
        };
        assert!(reasons(&m(95, 1), &identity, true).0.is_empty());
        assert_eq!(reasons(&m(94, 2), &identity, true).0, vec![LOW_SUCCESS.to_string(), HIGH_FAILURE.to_string()]);
    }

    fn row_template() -> GroupMetrics {
        let (rows, _) = pooled(fixture::balanced(&["a"], |_, _| 1.0));
        rows[0].metrics.clone()
    }
}
