//! Every group of a run: one row per scheduled provider × spec family (ordered by provider,
//! then family name, as the reference orders them; a family a provider never answered has
//! its row too, so a gap is visible) and one over all of a provider's requests, its pooled
//! row; then each provider's eligibility, the ranking and how far the ranks are told apart.
use crate::group::{self, GroupInput};
use crate::join::{Joined, Observation};
use crate::pooled;
use crate::separation;
use inferbench_contract::documents::{GroupMetrics, PooledMetrics, RankSeparation};
use inferbench_contract::vocab::TaskFamily;
use inferbench_inputs::providers::ProviderTable;
use inferbench_judge::rules::Rules;
use std::collections::{BTreeMap, BTreeSet};

/// The computed metrics of a run.
#[derive(Debug, Clone)]
pub struct Computed {
    /// Ordered by provider, then family name.
    pub families: Vec<GroupMetrics>,
    /// Ranked providers first (by rank), then the others by name.
    pub pooled: Vec<PooledMetrics>,
    /// Ranked provider names, best first.
    pub ranking: Vec<String>,
    /// Whether each pair of adjacent ranked providers is told apart, in ranking order.
    pub separations: Vec<RankSeparation>,
}

/// Computes the metrics of a joined run under inferbench's rules.
#[cfg(test)]
pub fn compute(joined: &Joined, families: &[TaskFamily], table: &ProviderTable) -> Computed {
    compute_with(Rules::Inferbench, joined, families, table)
}

/// Computes the metrics of a joined run. `table` must define every scheduled provider (the
/// join checked it).
pub fn compute_with(rules: Rules, joined: &Joined, families: &[TaskFamily], table: &ProviderTable) -> Computed {
    let mut scheduled: BTreeMap<(&str, TaskFamily), usize> = BTreeMap::new();
    for row in &joined.schedule {
        *scheduled.entry((row.provider.as_str(), row.task_family)).or_default() += 1;
    }
    let providers: BTreeSet<&str> = joined.schedule.iter().map(|s| s.provider.as_str()).collect();
    let mut family_rows = Vec::new();
    let mut pooled_rows = Vec::new();
    for name in providers {
        let provider = table.get(name).expect("the join checked that every scheduled provider is in the table");
        let mine: Vec<&Observation> = joined.observations.iter().filter(|o| o.response.provider == name).collect();
        let group_of = |family: &str, scheduled: usize, observations: &[&Observation]| {
            group::compute(&GroupInput {
                provider: name,
                family,
                scheduled,
                observations,
                price: provider.price_usd_per_million_tokens,
            })
        };
        let mut rows: Vec<GroupMetrics> = families
            .iter()
            .map(|family| {
                let obs: Vec<&Observation> =
                    mine.iter().copied().filter(|o| o.response.task_family == *family).collect();
                group_of(family.as_str(), scheduled.get(&(name, *family)).copied().unwrap_or(0), &obs)
            })
            .collect();
        // The pooled row is a group of its own: its percentiles are of every sample, never
        // averaged from the family rows.
        let all = group_of(pooled::POOLED, rows.iter().map(|f| f.scheduled_count as usize).sum(), &mine);
        pooled_rows.push(pooled::assess_with(rules, provider, &rows, all, &mine));
        rows.sort_by(|a, b| a.task_family.cmp(&b.task_family));
        family_rows.extend(rows);
    }
    let ranking = pooled::rank(&mut pooled_rows);
    let separations = separation::separate(&ranking, &joined.observations, &mut pooled_rows);
    Computed { families: family_rows, pooled: pooled_rows, ranking, separations }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, MEETING};

    #[test]
    fn every_provider_gets_a_row_per_family_ordered_by_name() {
        let table = fixture::provider_table();
        let reqs = vec![fixture::Req::ok(0, MEETING, "b", 1.0), fixture::Req::ok(0, MEETING, "a", 1.0)];
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let computed = compute(&joined, &fixture::families(), &table);
        let keys: Vec<(&str, &str)> =
            computed.families.iter().map(|m| (m.provider.as_str(), m.task_family.as_str())).collect();
        let mut f: Vec<&str> = fixture::families().iter().map(|x| x.as_str()).collect();
        f.sort();
        let expected: Vec<(&str, &str)> = ["a", "b"].iter().flat_map(|p| f.iter().map(move |x| (*p, *x))).collect();
        assert_eq!(keys, expected);
        assert_eq!(computed.families[0].task_family, "contract-terms-extraction");
        assert_eq!(computed.families[0].submitted_count, 0);
        assert_eq!(computed.pooled.len(), 2);
    }
}
