//! Paired comparisons (reference §8.6): in every round all providers answered the same item
//! at the same time, so per-round E2E differences compare providers under the same
//! conditions. No bootstrap, no confidence intervals: two plain statistics.
//!
//! 1. Fastest-provider wins: in each round, the eligible provider with the lowest E2E wins;
//!    an exact tie of k providers gives each 1/k.
//! 2. Pairwise E2E differences for each pair `provider_a < provider_b` (by name), over the
//!    rounds where both have an E2E: upper-tail nearest-rank p50/p95/p99 of `a − b` (negative
//!    favours A), with coverage.
//!
//! A provider takes part unless its configuration is incompatible or its artifact graph
//! incomplete, as the reference defines it (§8.6); the success and failure thresholds decide
//! ranking only. Compatibility is the pooled row's (model identity on completed responses),
//! not the reference's per-record check, so a single HTTP error does not exclude a provider
//! (reference §12.2 item 10).
use crate::join::{Joined, Observation};
use inferbench_contract::documents::{ApiPairRow, PairRow, PooledMetrics, ProviderEligibility, WinRow};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::Outcome;
use inferbench_inputs::providers::{Provider, ProviderTable};
use inferbench_judge::rules::Rules;
use inferbench_stats::percentile::Samples;
use std::collections::{BTreeMap, BTreeSet};

pub const DIFFERENCE_DEFINITION: &str = "provider_a_e2e_latency_ms - provider_b_e2e_latency_ms";

/// The reference's reasons for leaving a provider out of the paired comparisons.
pub const INCOMPATIBLE: &str = "incompatible model or request configuration";
pub const INCOMPLETE: &str = "incomplete or internally inconsistent local artifact graph";

/// The figures of `comparisons.json`.
#[derive(Debug, Clone)]
pub struct Comparisons {
    /// Each provider's eligibility for the paired comparisons, by name.
    pub eligibility: Vec<ProviderEligibility>,
    pub wins: Vec<WinRow>,
    pub pairs: Vec<PairRow>,
    /// One endpoint over two wire APIs (`crate::api_pairs`).
    pub api_pairs: Vec<ApiPairRow>,
}

/// The paired comparisons of a joined run whose providers' pooled rows are `pooled`. `table`
/// must define every scheduled provider (the join checked it). `reference_failures`: for an
/// imported run, its reference records failing the reference's record-level paired check, by
/// provider (see [`eligibility_with`]).
pub fn compute(
    rules: Rules,
    joined: &Joined,
    table: &ProviderTable,
    pooled: &[PooledMetrics],
    reference_failures: Option<&BTreeMap<String, usize>>,
) -> Comparisons {
    let mut rows: Vec<&PooledMetrics> = pooled.iter().collect();
    rows.sort_by(|a, b| a.metrics.provider.cmp(&b.metrics.provider));
    // Only the reference's record-level check on inferbench's own responses reads them.
    let mut observations: BTreeMap<&str, Vec<&Observation>> = BTreeMap::new();
    if rules.is_reference() && reference_failures.is_none() {
        for o in &joined.observations {
            observations.entry(o.response.provider.as_str()).or_default().push(o);
        }
    }
    let eligibility: Vec<ProviderEligibility> = rows
        .into_iter()
        .map(|row| {
            let name = row.metrics.provider.as_str();
            let provider = table.get(name).expect("the join checked that every scheduled provider is in the table");
            let mine = observations.get(name).map_or(&[][..], Vec::as_slice);
            let failures = reference_failures.map(|f| f.get(name).copied().unwrap_or(0));
            eligibility_with(rules, row, provider, mine, failures)
        })
        .collect();
    let rounds = rounds(&joined.schedule, &joined.observations);
    Comparisons {
        wins: fastest_wins(&rounds, &eligibility),
        pairs: pairwise(&rounds, &eligibility),
        eligibility,
        api_pairs: Vec::new(),
    }
}

/// A provider's eligibility for paired comparisons, from its pooled row.
pub fn eligibility_of(row: &PooledMetrics) -> ProviderEligibility {
    eligibility(row, row.configuration_compatible)
}

/// Under the reference's rules, its record-level check also leaves out a provider with a record
/// that fails it (reference §8.6, §12.2 item 10): for an imported run, the check itself on the
/// reference's records (`reference_failures`, how many of the provider's fail it); otherwise
/// what it amounts to on inferbench's own responses, any HTTP error response or any response
/// naming another model than the exact model id. Under inferbench's rules the pooled row
/// decides.
pub fn eligibility_with(
    rules: Rules,
    row: &PooledMetrics,
    provider: &Provider,
    observations: &[&Observation],
    reference_failures: Option<usize>,
) -> ProviderEligibility {
    if !rules.is_reference() {
        return eligibility_of(row);
    }
    let record_level = match reference_failures {
        Some(failures) => failures == 0,
        None => observations.iter().all(|o| {
            o.response.outcome != Outcome::HttpError
                && o.response.response_model.as_ref().is_none_or(|m| *m == provider.model_id)
        }),
    };
    eligibility(row, row.configuration_compatible && record_level)
}

fn eligibility(row: &PooledMetrics, compatible: bool) -> ProviderEligibility {
    let mut reasons = Vec::new();
    if !compatible {
        reasons.push(INCOMPATIBLE.to_string());
    }
    if !row.artifact_graph_complete {
        reasons.push(INCOMPLETE.to_string());
    }
    ProviderEligibility {
        provider: row.metrics.provider.clone(),
        configuration_compatible: compatible,
        artifact_graph_complete: row.artifact_graph_complete,
        eligible: reasons.is_empty(),
        exclusion_reasons: reasons,
    }
}

/// E2E latency of each provider with a complete response, per round (in round order).
pub type Rounds = Vec<BTreeMap<String, f64>>;

/// The rounds of the schedule, ordered by (round_index, round_id), with the E2E samples.
pub fn rounds(schedule: &[ScheduleRow], observations: &[Observation]) -> Rounds {
    let ids: BTreeSet<(i64, &str)> = schedule.iter().map(|s| (s.round_index, s.round_id.as_str())).collect();
    let position: BTreeMap<&str, usize> = ids.iter().enumerate().map(|(i, (_, id))| (*id, i)).collect();
    let mut rounds = vec![BTreeMap::new(); ids.len()];
    for o in observations {
        if let (Some(e2e), Some(&i)) = (o.response.e2e_latency_ms, position.get(o.response.round_id.as_str())) {
            rounds[i].insert(o.response.provider.clone(), e2e);
        }
    }
    rounds
}

#[derive(Default)]
struct Tally {
    outright: i64,
    /// Tie size k → rounds tied k ways. Credits are summed per k at the end, so a long run of
    /// three-way ties does not accumulate rounding from repeated `+= 1/3`.
    ties: BTreeMap<usize, i64>,
    samples: i64,
}

/// Fastest-provider wins, one row per provider in `eligibility` order.
pub fn fastest_wins(rounds: &Rounds, eligibility: &[ProviderEligibility]) -> Vec<WinRow> {
    let eligible: BTreeSet<&str> = eligibility.iter().filter(|e| e.eligible).map(|e| e.provider.as_str()).collect();
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut eligible_rounds = 0;
    for round in rounds {
        let values: Vec<(&str, f64)> =
            round.iter().filter(|(p, _)| eligible.contains(p.as_str())).map(|(p, v)| (p.as_str(), *v)).collect();
        let Some(best) = values.iter().map(|(_, v)| *v).min_by(f64::total_cmp) else {
            continue;
        };
        eligible_rounds += 1;
        let winners: Vec<&str> = values.iter().filter(|(_, v)| *v == best).map(|(p, _)| *p).collect();
        for (p, _) in &values {
            tallies.entry(p).or_default().samples += 1;
        }
        for w in &winners {
            let t = tallies.entry(w).or_default();
            match winners.len() {
                1 => t.outright += 1,
                k => *t.ties.entry(k).or_default() += 1,
            }
        }
    }
    let total = rounds.len() as i64;
    eligibility.iter().map(|e| win_row(e, tallies.get(e.provider.as_str()), eligible_rounds, total)).collect()
}

fn win_row(e: &ProviderEligibility, tally: Option<&Tally>, eligible_rounds: i64, total: i64) -> WinRow {
    let empty = Tally::default();
    let t = tally.unwrap_or(&empty);
    let credited = t.outright as f64 + t.ties.iter().map(|(k, n)| *n as f64 / *k as f64).sum::<f64>();
    WinRow {
        provider: e.provider.clone(),
        configuration_compatible: e.configuration_compatible,
        artifact_graph_complete: e.artifact_graph_complete,
        eligible: e.eligible,
        exclusion_reasons: e.exclusion_reasons.clone(),
        credited_wins: credited,
        outright_wins: t.outright,
        tied_fastest_rounds: t.ties.values().sum(),
        eligible_round_count: eligible_rounds,
        eligible_e2e_sample_count: t.samples,
        excluded_or_missing_sample_count: total - t.samples,
        total_round_count: total,
        win_rate: (e.eligible && eligible_rounds > 0).then(|| credited / eligible_rounds as f64),
    }
}

/// Pairwise E2E differences for every pair of providers, `a < b` by name.
pub fn pairwise(rounds: &Rounds, eligibility: &[ProviderEligibility]) -> Vec<PairRow> {
    let mut sorted: Vec<&ProviderEligibility> = eligibility.iter().collect();
    sorted.sort_by(|x, y| x.provider.cmp(&y.provider));
    // Each provider's E2E by round, looked up once: a pair is then two columns zipped, not a
    // map lookup per round and provider (n² pairs × rounds for a fleet of providers).
    let columns: Vec<Vec<Option<f64>>> =
        sorted.iter().map(|p| rounds.iter().map(|r| r.get(&p.provider).copied()).collect()).collect();
    let total = rounds.len() as i64;
    // The pairs of provider `i` with every later one; the two cores take alternate `i`s (so
    // both get about half the n²/2 pairs), and the rows are put back in order.
    let row_of = |i: usize| -> Vec<PairRow> {
        (i + 1..sorted.len()).map(|j| pair(total, &columns[i], &columns[j], sorted[i], sorted[j])).collect()
    };
    let n = sorted.len();
    let mut by_first: Vec<(usize, Vec<PairRow>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|t| {
                let row_of = &row_of;
                scope.spawn(move || (t..n).step_by(2).map(|i| (i, row_of(i))).collect::<Vec<_>>())
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("pairing does not panic")).collect()
    });
    by_first.sort_by_key(|(i, _)| *i);
    by_first.into_iter().flat_map(|(_, rows)| rows).collect()
}

fn pair(
    total: i64,
    a_e2e: &[Option<f64>],
    b_e2e: &[Option<f64>],
    a: &ProviderEligibility,
    b: &ProviderEligibility,
) -> PairRow {
    let both = a.eligible && b.eligible;
    let diffs = Samples::new(a_e2e.iter().zip(b_e2e).filter(|_| both).filter_map(|(x, y)| Some((*x)? - (*y)?)));
    let mut reasons: Vec<String> =
        [a, b].iter().flat_map(|e| e.exclusion_reasons.iter().map(move |r| format!("{}: {r}", e.provider))).collect();
    reasons.sort();
    let paired = diffs.len() as i64;
    PairRow {
        provider_a: a.provider.clone(),
        provider_b: b.provider.clone(),
        difference_definition: DIFFERENCE_DEFINITION.to_string(),
        eligible_comparison: both,
        exclusion_reasons: reasons,
        paired_count: paired,
        total_round_count: total,
        missing_pair_count: total - paired,
        coverage_rate: crate::group::rate(paired, total),
        difference_p50_ms: diffs.upper(50),
        difference_p95_ms: diffs.upper(95),
        difference_p99_ms: diffs.upper(99),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eligible(name: &str) -> ProviderEligibility {
        ProviderEligibility {
            provider: name.into(),
            configuration_compatible: true,
            artifact_graph_complete: true,
            eligible: true,
            exclusion_reasons: vec![],
        }
    }

    fn incomplete(name: &str) -> ProviderEligibility {
        ProviderEligibility {
            artifact_graph_complete: false,
            eligible: false,
            exclusion_reasons: vec![INCOMPLETE.into()],
            ..eligible(name)
        }
    }

    fn round(values: &[(&str, f64)]) -> BTreeMap<String, f64> {
        values.iter().map(|(p, v)| (p.to_string(), *v)).collect()
    }

    /// The reference's pairwise test: a beats b by 20 ms, they tie, then b times out.
    fn three_rounds() -> Rounds {
        vec![round(&[("a", 100.0), ("b", 120.0)]), round(&[("a", 150.0), ("b", 150.0)]), round(&[("a", 90.0)])]
    }

    #[test]
    fn fastest_wins_split_a_tie() {
        let rows = fastest_wins(&three_rounds(), &[eligible("a"), eligible("b")]);
        let (a, b) = (&rows[0], &rows[1]);
        assert_eq!((a.credited_wins, a.outright_wins, a.tied_fastest_rounds), (2.5, 2, 1));
        assert_eq!((b.credited_wins, b.outright_wins, b.tied_fastest_rounds), (0.5, 0, 1));
        assert_eq!((b.eligible_e2e_sample_count, b.excluded_or_missing_sample_count), (2, 1));
        assert_eq!((a.eligible_round_count, a.win_rate), (3, Some(2.5 / 3.0)));
    }

    #[test]
    fn pairwise_differences_report_missing_pair_coverage() {
        let rows = pairwise(&three_rounds(), &[eligible("b"), eligible("a")]);
        assert_eq!(rows.len(), 1);
        let ab = &rows[0];
        assert_eq!((ab.provider_a.as_str(), ab.provider_b.as_str()), ("a", "b"));
        assert_eq!((ab.paired_count, ab.missing_pair_count, ab.total_round_count), (2, 1, 3));
        assert_eq!(ab.coverage_rate, Some(2.0 / 3.0));
        // Differences −20 and 0: p50 is rank ceil(2/2) = 1, p95 and p99 rank 2.
        assert_eq!((ab.difference_p50_ms, ab.difference_p99_ms), (Some(-20.0), Some(0.0)));
    }

    #[test]
    fn an_ineligible_provider_gets_no_credit_and_no_pairs() {
        let elig = [eligible("a"), incomplete("b")];
        let wins = fastest_wins(&three_rounds(), &elig);
        assert_eq!((wins[0].credited_wins, wins[0].win_rate), (3.0, Some(1.0)));
        assert_eq!((wins[1].credited_wins, wins[1].win_rate, wins[1].excluded_or_missing_sample_count), (0.0, None, 3));
        let pair = &pairwise(&three_rounds(), &elig)[0];
        assert!(!pair.eligible_comparison);
        assert_eq!((pair.paired_count, pair.missing_pair_count, pair.coverage_rate), (0, 3, Some(0.0)));
        assert_eq!(pair.exclusion_reasons, vec![format!("b: {INCOMPLETE}")]);
        assert_eq!(pair.difference_p50_ms, None);
    }

    #[test]
    fn the_thresholds_decide_ranking_only_and_not_the_pairs() {
        use crate::fixture::{self, Req};
        // One 429 in three: b is not ranked (failures above 1%), but it takes part in pairs.
        let mut reqs = fixture::balanced(&["a", "b"], |_, _| 100.0);
        let failed = reqs.iter().position(|q| q.response.provider == "b").unwrap();
        reqs[failed] = Req::failed(reqs[failed].response.round_index, reqs[failed].response.task_family, "b", "429");
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let computed = crate::metrics::compute(&joined, &fixture::families(), &table);
        let b = computed.pooled.iter().find(|p| p.metrics.provider == "b").unwrap();
        assert!(!b.eligible && b.configuration_compatible && b.artifact_graph_complete, "{b:?}");
        let elig = eligibility_of(b);
        assert!(elig.eligible && elig.exclusion_reasons.is_empty(), "{elig:?}");
    }

    #[test]
    fn under_the_references_rules_an_http_error_or_an_alias_leaves_a_provider_out_of_the_pairs() {
        use crate::fixture::{self, Req};
        let mut reqs = fixture::balanced(&["a", "b", "c"], |_, _| 100.0);
        let b = reqs.iter().position(|q| q.response.provider == "b").unwrap();
        reqs[b] = Req::failed(reqs[b].response.round_index, reqs[b].response.task_family, "b", "5xx");
        let c = reqs.iter().position(|q| q.response.provider == "c").unwrap();
        reqs[c] = reqs[c].clone().with(|r| r.response_model = Some("model-x-alias".into()));
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let eligible = |rules: Rules| -> Vec<bool> {
            let pooled = crate::metrics::compute_with(rules, &joined, &fixture::families(), &table).pooled;
            compute(rules, &joined, &table, &pooled, None).eligibility.iter().map(|e| e.eligible).collect()
        };
        assert_eq!(eligible(Rules::Inferbench), [true, true, true]);
        assert_eq!(eligible(Rules::Reference), [true, false, false]);
    }

    #[test]
    fn an_incompatible_or_incomplete_provider_is_left_out_with_the_references_reasons() {
        use crate::fixture;
        let reqs = fixture::balanced(&["a"], |_, _| 100.0);
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        let mut row = crate::metrics::compute(&joined, &fixture::families(), &table).pooled.remove(0);
        assert!(eligibility_of(&row).eligible);
        row.configuration_compatible = false;
        row.artifact_graph_complete = false;
        let e = eligibility_of(&row);
        assert!(!e.eligible);
        assert_eq!(e.exclusion_reasons, vec![INCOMPATIBLE.to_string(), INCOMPLETE.to_string()]);
    }

    #[test]
    fn rounds_follow_the_schedule_and_skip_responses_without_e2e() {
        use crate::fixture::{self, Req, MEETING, TICKET};
        let reqs = vec![
            Req::ok(1, TICKET, "a", 70.0),
            Req::ok(0, MEETING, "a", 50.0),
            Req::failed(0, MEETING, "b", "timeout"),
        ];
        let t = fixture::tables(&reqs);
        let obs: Vec<Observation> = reqs
            .into_iter()
            .map(|q| Observation { response: q.response.into(), evaluation: q.evaluation.into() })
            .collect();
        let r = rounds(&t.schedule, &obs);
        assert_eq!(r, vec![round(&[("a", 50.0)]), round(&[("a", 70.0)])]);
    }
}
