//! Ranks with their uncertainty: for each pair of adjacent ranked providers, the seeded paired
//! bootstrap (`inferbench_stats::bootstrap`, the one `ib-compare` uses) of the difference of
//! their rank key, pooled E2E p99, over the rounds both completed. A pair whose 95 % interval
//! holds zero is indistinguishable, and a run of providers linked by such pairs shares one rank
//! range (`2–4`): the run cannot order them, whatever their point ranks say.
use crate::join::Observation;
use inferbench_contract::documents::{PooledMetrics, RankRange, RankSeparation};
use inferbench_contract::metrics::RANKING;
use inferbench_stats::bootstrap::{self, Settings};
use inferbench_stats::interval;
use std::collections::BTreeMap;

/// 2,000 resamples put the 95 % bounds at ranks 50 and 1,950: enough to say whether zero is
/// inside, and cheap enough for the rescore of a large run (each resample draws every shared
/// round once).
pub const SETTINGS: Settings = Settings { seed: 20261201, resamples: 2_000, confidence: 95 };

pub const METHOD: &str = "paired bootstrap over the rounds both providers completed (ib-compare's: SplitMix64, one \
     stream per number of rounds n starting at seed ^ (n * 0xD1B54A32D192ED03), index (x * n) >> 64), statistic \
     pooled E2E p99 (nearest rank ceil(0.99·n)) of the worse minus that of the better, 95 % percentile interval of \
     2,000 resamples, seed 20261201; distinguishable when the interval excludes zero and the shared rounds are \
     at least min_rounds (those for which a p99 has any distribution-free 95 % interval: 299); rounds to separate \
     max(min_rounds, n · (1.96 · sd / |difference|)²), sd the resampled differences' standard deviation";

/// Each ranked provider's E2E samples by round.
fn by_round(observations: &[Observation], provider: &str) -> BTreeMap<i64, f64> {
    let mut rounds = BTreeMap::new();
    for o in observations.iter().filter(|o| o.response.provider == provider) {
        if let Some(e2e) = o.response.e2e_latency_ms {
            // One request per provider and round; should a round hold more, the first decides.
            rounds.entry(o.response.round_index).or_insert(e2e);
        }
    }
    rounds
}

/// The separations of adjacent pairs in `ranking` (best first), and each ranked row's range.
pub fn separate(ranking: &[String], observations: &[Observation], pooled: &mut [PooledMetrics]) -> Vec<RankSeparation> {
    let rounds: Vec<BTreeMap<i64, f64>> = ranking.iter().map(|p| by_round(observations, p)).collect();
    let separations: Vec<RankSeparation> = ranking
        .windows(2)
        .zip(rounds.windows(2))
        .map(|(names, rounds)| {
            let (a, b): (Vec<f64>, Vec<f64>) =
                rounds[0].iter().filter_map(|(round, a)| Some((*a, *rounds[1].get(round)?))).unzip();
            let mut separation = RankSeparation {
                better: names[0].clone(),
                worse: names[1].clone(),
                key: RANKING.key(),
                shared_rounds: a.len() as i64,
                difference: None,
                lower: None,
                upper: None,
                min_rounds: 0,
                distinguishable: false,
                rounds_to_separate: None,
            };
            let k = RANKING.percentile.expect("the ranking key is a percentile");
            let min_rounds = interval::min_samples(k as f64 / 100.0);
            separation.min_rounds = min_rounds as i64;
            if !a.is_empty() {
                let d = bootstrap::quantile_difference(&SETTINGS, &a, &b, k);
                separation.difference = Some(d.estimate);
                separation.lower = Some(d.low);
                separation.upper = Some(d.high);
                separation.distinguishable = a.len() as u64 >= min_rounds && (d.low > 0.0 || d.high < 0.0);
                separation.rounds_to_separate =
                    bootstrap::rounds_to_separate(d.n, d.estimate, d.standard_error).map(|r| r.max(min_rounds) as i64);
            }
            separation
        })
        .collect();
    // Runs of indistinguishable neighbours: a distinguishable pair starts a new run.
    let mut first = 0;
    for i in 0..ranking.len() {
        let ends = i + 1 == ranking.len() || separations[i].distinguishable;
        if ends {
            for name in &ranking[first..=i] {
                if let Some(row) = pooled.iter_mut().find(|r| &r.metrics.provider == name) {
                    row.rank_range = Some(RankRange::new(first as i64 + 1, i as i64 + 1));
                }
            }
            first = i + 1;
        }
    }
    separations
}

#[cfg(test)]
mod tests {
    use crate::fixture::{self, Req};
    use crate::metrics;

    fn run(e2e: impl Fn(&str, i64) -> f64, rounds: i64) -> metrics::Computed {
        let mut reqs = Vec::new();
        for round in 0..rounds {
            for p in ["a", "b", "c"] {
                let family = fixture::families()[(round % 3) as usize];
                reqs.push(Req::ok(round, family, p, e2e(p, round)));
            }
        }
        let table = fixture::provider_table();
        let joined = crate::join::join(fixture::tables(&reqs), &fixture::families(), &table.names()).unwrap();
        metrics::compute(&joined, &fixture::families(), &table)
    }

    fn ranges(c: &metrics::Computed) -> Vec<(String, String)> {
        c.pooled.iter().map(|r| (r.metrics.provider.clone(), r.rank_range.as_ref().unwrap().label.clone())).collect()
    }

    #[test]
    fn too_few_rounds_tell_no_pair_apart() {
        let c = run(|p, round| if p == "a" { 100.0 + round as f64 } else { 1_000.0 + round as f64 }, 30);
        assert!(c.separations.iter().all(|s| !s.distinguishable && s.min_rounds == 299), "{:?}", c.separations);
        assert!(ranges(&c).iter().all(|(_, r)| r == "1–3"));
    }

    #[test]
    fn indistinguishable_neighbours_share_a_range_and_a_clear_gap_splits_it() {
        // a and b draw from the same spread (shifted rounds), c is twice as slow.
        let c = run(
            |p, round| match p {
                "a" => 100.0 + ((round * 37) % 60) as f64,
                "b" => 100.0 + ((round * 37 + 13) % 60) as f64 + 0.5,
                _ => 300.0 + ((round * 17) % 60) as f64,
            },
            321,
        );
        assert_eq!(c.ranking, ["a", "b", "c"]);
        assert_eq!(ranges(&c), [("a".into(), "1–2".into()), ("b".into(), "1–2".into()), ("c".into(), "3".into())]);
        assert!(!c.separations[0].distinguishable && c.separations[1].distinguishable, "{:?}", c.separations);
        assert_eq!(c.separations[1].shared_rounds, 321);
        assert_eq!(c.separations[1].rounds_to_separate, Some(299), "the least rounds for any verdict on a p99");
        assert_eq!(c.separations[1].difference, Some(359.0 - 159.5));
    }
}
