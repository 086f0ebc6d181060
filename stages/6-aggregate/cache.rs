//! The prompt-cache probe (`inference.cache_probe`): its requests taken out before any other
//! figure is computed, and its own figures, `metrics.json`'s `cache_probe` section.
//!
//! A probe round is sent twice with the same bytes (`schedule.parquet`'s `cache_probe`:
//! `first`, then `repeat`; one nonce for both). For each provider and probe round where both
//! sends have a TTFA, the paired sample is `TTFA(first) − TTFA(repeat)`; the figure is the
//! nearest-rank p50 of those differences with its distribution-free 95 % order-statistic
//! interval (`inferbench_stats::interval`, as every percentile of the document): under 6 pairs
//! no interval of a median reaches 95 %, and the figure says so.
//!
//! The probe's requests are checked by the join like every other request (scheduled, one
//! evaluation each), then split off, so that no other figure (groups, pooled rows, ranks,
//! comparisons) counts them.
use crate::facts::ResponseFacts;
use crate::group::percentile_value;
use crate::join::Joined;
use inferbench_contract::documents::{CacheProbeMetrics, CacheProbeProvider, CacheProbeVerdict};
use inferbench_contract::metrics::TTFA;
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::CacheProbeSend;
use inferbench_stats::percentile::Samples;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// How the figures are computed, as `metrics.json` says it.
pub const METHOD: &str = "each probe round sent twice with the same bytes (one nonce), the repeat once every \
    provider's first send ended; per provider, the nearest-rank p50 of TTFA(first) − TTFA(repeat) over the \
    probe rounds where both sends have a TTFA, with its distribution-free 95 % order-statistic interval \
    (none under 6 pairs); positive: the repeat was faster";

/// The probe's requests, taken out of the run.
#[derive(Debug, Default)]
pub struct ProbeRequests {
    pub schedule: Vec<ScheduleRow>,
    pub responses: Vec<ResponseFacts>,
}

impl ProbeRequests {
    /// Probe rounds in the schedule: the first sends' rounds.
    pub fn rounds(&self) -> usize {
        let firsts = self.schedule.iter().filter(|r| r.cache_probe == Some(CacheProbeSend::First));
        firsts.map(|r| r.round_id.as_str()).collect::<BTreeSet<_>>().len()
    }
}

/// Takes the probe's rows out of `joined` (schedule and observations alike), so that no figure
/// but the probe's counts them; `None` when the run has no probe.
pub fn split_off(joined: &mut Joined) -> Option<ProbeRequests> {
    let (probe, run): (Vec<ScheduleRow>, Vec<ScheduleRow>) =
        std::mem::take(&mut joined.schedule).into_iter().partition(|r| r.cache_probe.is_some());
    joined.schedule = run;
    if probe.is_empty() {
        return None;
    }
    let ids: HashSet<&str> = probe.iter().map(|r| r.request_id.as_str()).collect();
    let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut joined.observations)
        .into_iter()
        .partition(|o| ids.contains(o.response.request_id.as_str()));
    joined.observations = kept;
    let responses = taken.into_iter().map(|o| o.response).collect();
    Some(ProbeRequests { schedule: probe, responses })
}

/// The section: one row per provider of `providers`, by name.
pub fn compute(probe: &ProbeRequests, providers: &[String]) -> CacheProbeMetrics {
    let rounds = probe.rounds();
    let ttfa: BTreeMap<&str, Option<f64>> =
        probe.responses.iter().map(|r| (r.request_id.as_str(), r.ttfa_ms)).collect();
    // (provider, nonce) → (first's TTFA, repeat's TTFA); a send never logged is `None`.
    let mut pairs: BTreeMap<(&str, &str), [Option<f64>; 2]> = BTreeMap::new();
    for row in &probe.schedule {
        let (Some(send), Some(nonce)) = (row.cache_probe, row.nonce.as_deref()) else { continue };
        let slot = match send {
            CacheProbeSend::First => 0,
            CacheProbeSend::Repeat => 1,
        };
        let value = ttfa.get(row.request_id.as_str()).copied().flatten();
        pairs.entry((row.provider.as_str(), nonce)).or_default()[slot] = value;
    }
    let mut names: Vec<&String> = providers.iter().collect();
    names.sort();
    let rows = names
        .into_iter()
        .map(|provider| {
            let paired: Vec<(f64, f64)> = pairs
                .iter()
                .filter(|((p, _), _)| *p == provider.as_str())
                .filter_map(|(_, [first, repeat])| Some(((*first)?, (*repeat)?)))
                .collect();
            let difference =
                percentile_value(&Samples::new(paired.iter().map(|(first, repeat)| first - repeat)), TTFA, 50);
            CacheProbeProvider {
                provider: provider.clone(),
                paired_count: paired.len() as i64,
                unpaired_count: rounds as i64 - paired.len() as i64,
                first_ttfa_p50_ms: Samples::new(paired.iter().map(|p| p.0)).upper(50),
                repeat_ttfa_p50_ms: Samples::new(paired.iter().map(|p| p.1)).upper(50),
                verdict: verdict(difference.lower(), difference.upper()),
                ttfa_difference_ms: difference,
            }
        })
        .collect();
    CacheProbeMetrics { rounds: rounds as i64, method: METHOD.to_string(), providers: rows }
}

/// What an interval of `TTFA(first) − TTFA(repeat)` shows.
fn verdict(lower: Option<f64>, upper: Option<f64>) -> CacheProbeVerdict {
    match (lower, upper) {
        (Some(lower), Some(_)) if lower > 0.0 => CacheProbeVerdict::FasterRepeat,
        (Some(_), Some(upper)) if upper < 0.0 => CacheProbeVerdict::SlowerRepeat,
        (Some(_), Some(_)) => CacheProbeVerdict::NoDifferenceShown,
        _ => CacheProbeVerdict::TooFewPairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req, MEETING};

    /// `pairs` probe rounds after one run round, each provider's first and repeat TTFA given
    /// by `ttfa(provider, pair, send)` (`None`: the send failed).
    fn run(providers: &[&str], pairs: i64, ttfa: impl Fn(&str, i64, usize) -> Option<f64>) -> Joined {
        let mut reqs = Vec::new();
        let mut sends = Vec::new();
        for p in providers {
            reqs.push(Req::ok(0, MEETING, p, 1000.0));
            sends.push(None);
        }
        for k in 0..pairs {
            for (offset, send) in [CacheProbeSend::First, CacheProbeSend::Repeat].into_iter().enumerate() {
                let round = 1 + 2 * k + offset as i64;
                for p in providers {
                    let req = match ttfa(p, k, offset) {
                        Some(ms) => Req::ok(round, MEETING, p, 2.0 * ms),
                        None => Req::failed(round, MEETING, p, "5xx"),
                    };
                    reqs.push(req);
                    sends.push(Some((send, format!("{k:016x}"))));
                }
            }
        }
        let mut tables = fixture::tables(&reqs);
        for (row, send) in tables.schedule.iter_mut().zip(sends) {
            if let Some((send, nonce)) = send {
                (row.cache_probe, row.nonce) = (Some(send), Some(nonce));
            }
        }
        let names: Vec<String> = fixture::provider_table().names();
        crate::join::join(tables, &fixture::families(), &names).unwrap()
    }

    fn names(providers: &[&str]) -> Vec<String> {
        providers.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn the_probe_is_split_off_before_any_other_figure() {
        let mut joined = run(&["a", "b"], 3, |_, _, _| Some(100.0));
        let probe = split_off(&mut joined).unwrap();
        assert_eq!(joined.schedule.len(), 2, "the run's own round only");
        assert_eq!(joined.observations.len(), 2);
        assert!(joined.observations.iter().all(|o| o.response.round_index == 0));
        assert_eq!((probe.schedule.len(), probe.responses.len(), probe.rounds()), (12, 12, 3));
        let mut plain = run(&["a", "b"], 0, |_, _, _| None);
        assert!(split_off(&mut plain).is_none(), "no probe, no section");
        assert_eq!(plain.observations.len(), 2);
    }

    #[test]
    fn a_caching_provider_answers_the_repeat_faster_and_one_without_a_cache_does_not() {
        // `a` caches: the repeat answers in a tenth of the time; `b` does not: both sends
        // alike, the difference alternating in sign.
        let mut joined = run(&["a", "b"], 8, |p, k, send| {
            let first = 300.0 + 10.0 * k as f64;
            Some(match (p, send) {
                ("a", 1) => first / 10.0,
                ("b", 1) => first + if k % 2 == 0 { 15.0 } else { -15.0 },
                _ => first,
            })
        });
        let probe = split_off(&mut joined).unwrap();
        let section = compute(&probe, &names(&["b", "a"]));
        assert_eq!(section.rounds, 8);
        assert_eq!(section.method, METHOD);
        let [cached, plain] = &section.providers[..] else { panic!("{section:?}") };
        assert_eq!((cached.provider.as_str(), plain.provider.as_str()), ("a", "b"), "by name");
        assert_eq!((cached.paired_count, cached.unpaired_count), (8, 0));
        assert_eq!(cached.first_ttfa_p50_ms, Some(330.0));
        assert_eq!(cached.repeat_ttfa_p50_ms, Some(33.0));
        // Differences 270, 279, …, 333: the p50 (rank 4 of 8) is 297.
        assert_eq!(cached.ttfa_difference_ms.value, Some(297.0));
        let interval = cached.ttfa_difference_ms.interval.unwrap();
        assert!(interval.lower > 0.0 && interval.coverage >= 0.95, "{interval:?}");
        assert_eq!(cached.verdict, CacheProbeVerdict::FasterRepeat);
        assert_eq!(plain.ttfa_difference_ms.value, Some(-15.0));
        assert_eq!(plain.verdict, CacheProbeVerdict::NoDifferenceShown);
    }

    #[test]
    fn a_failed_send_leaves_its_pair_out_and_too_few_pairs_give_no_verdict() {
        let mut joined =
            run(&["a"], 6, |_, k, send| (k != 2 || send == 0).then_some(if send == 0 { 200.0 } else { 50.0 }));
        let probe = split_off(&mut joined).unwrap();
        let section = compute(&probe, &names(&["a"]));
        let a = &section.providers[0];
        assert_eq!((a.paired_count, a.unpaired_count), (5, 1));
        assert_eq!(a.ttfa_difference_ms.value, Some(150.0));
        assert!(a.ttfa_difference_ms.interval.is_none());
        let note = a.ttfa_difference_ms.note.as_deref().unwrap();
        assert!(note.starts_with("p50 of 5 samples"), "{note}");
        assert_eq!(a.verdict, CacheProbeVerdict::TooFewPairs);
    }

    #[test]
    fn the_verdict_reads_the_interval_against_zero() {
        use CacheProbeVerdict::*;
        assert_eq!(verdict(Some(1.0), Some(5.0)), FasterRepeat);
        assert_eq!(verdict(Some(-5.0), Some(-1.0)), SlowerRepeat);
        assert_eq!(verdict(Some(0.0), Some(5.0)), NoDifferenceShown, "an interval touching 0 holds it");
        assert_eq!(verdict(Some(-1.0), Some(1.0)), NoDifferenceShown);
        assert_eq!(verdict(None, None), TooFewPairs);
    }
}
