//! The search's rule: from the probes measured so far, the next rate to probe, or the end.
//! Pure: the same probes always give the same next rate, so a search killed between probes
//! resumes on the same path, and a rescore of its probes re-derives its results.
//!
//! For each provider, over the probes so far:
//! - `fails_at` is the lowest probed rate that failed, and `holds_at` the highest probed rate
//!   below it that held (a rate that held above one that failed is noise, and does not count);
//! - the provider is done when `min_rate` failed (below the range), when `max_rate` held (at
//!   least the range), or when `fails_at ≤ holds_at × (1 + tolerance)` (found).
//!
//! The first probe is `min_rate`. While a provider that is not done has not failed yet, the
//! next rate doubles the highest probed one, up to `max_rate`. Otherwise the next rate is the
//! geometric midpoint `√(holds_at × fails_at)` of the widest bracket (the largest
//! `fails_at / holds_at`; ties to the provider first by name), rounded to four significant
//! digits. Every provider is sent every probe (a paired step), so one probe narrows every
//! bracket it falls in. A probe that was client-bound for some provider says nothing about
//! the providers, so it counts in no bracket and its rate is measured again, up to
//! [`ATTEMPTS`] times in all. Except when its only reason was the client's send lag: the
//! provider was offered the whole rate, and its latencies, from the intended sends, were
//! only lengthened by the lag, so a step that held holds, and one whose goodput falls short
//! even without the lag (`goodput_without_lag`) fails. The search stops when every provider is done, after
//! `max_probes` probes, or at a rate still client-bound after its attempts or that measured
//! no request for some provider: a search past it would be built on the client's figures (or
//! nobody's).
use inferbench_contract::documents::{Probe, SearchResult, SearchStatus, Verdict};
use inferbench_inputs::spec::CapacitySearch;

/// The rule, in words, for `search.json` and the report.
pub const RULE: &[&str] = &[
    "Each probe is a one-step load run at one rate, sent to every provider at the same intended times; a provider's step holds when at least the goodput target of its measured requests met every objective.",
    "For each provider, fails_at is the lowest probed rate that failed and holds_at the highest probed rate below it that held (a rate that held above one that failed does not count).",
    "The first probe is min_rate. While a provider has not failed yet, the next rate doubles the highest probed one, up to max_rate; then the next is the geometric midpoint of the widest bracket (largest fails_at / holds_at), rounded to four significant digits.",
    "A provider's capacity is found when fails_at <= holds_at x (1 + tolerance); it is below the range when min_rate failed, and at least max_rate when max_rate held.",
    "A probe that was client-bound for any provider counts in no bracket, and its rate is measured again, up to 3 times in all. Except when its only client-bound reason was the send lag: the provider was offered the whole rate and its latencies, measured from the intended sends, were only lengthened by the lag, so a step that held holds, and one whose goodput without the lag still misses the target fails.",
    "The search stops when every provider is done, after max_probes probes, or at a rate still client-bound after 3 attempts or that measured no request for a provider (its figures would not be the provider's).",
];

/// How many times a rate whose probe was client-bound is measured in all.
pub const ATTEMPTS: usize = 3;

/// What to do after the probes so far.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Probe(f64),
    Stop(String),
}

/// The next step of the search, given the probes in the order they ran.
pub fn next(search: &CapacitySearch, probes: &[Probe]) -> Next {
    let Some(last) = probes.last() else {
        return Next::Probe(search.min_rate);
    };
    if let Some(bad) = last.providers.iter().find(|p| matches!(p.verdict, Verdict::ClientBound | Verdict::Unmeasured)) {
        let attempts = probes.iter().rev().take_while(|p| p.rate == last.rate && bad_probe(p)).count();
        if bad.verdict == Verdict::ClientBound && attempts < ATTEMPTS && probes.len() < search.max_probes as usize {
            return Next::Probe(last.rate);
        }
        let why = match bad.verdict {
            Verdict::ClientBound => format!("client-bound {attempts} time(s) ({})", bad.client_bound.join("; ")),
            _ => "no request in the measured window (a longer step_seconds measures more)".to_string(),
        };
        return Next::Stop(format!("the probe at {} req/s was {why} for {}", last.rate, bad.provider));
    }
    let results = results(search, probes);
    let open: Vec<&SearchResult> = results.iter().filter(|r| r.status == SearchStatus::ProbesExhausted).collect();
    if open.is_empty() {
        return Next::Stop("every provider's capacity is bracketed".to_string());
    }
    if probes.len() >= search.max_probes as usize {
        return Next::Stop(format!("max_probes ({}) probes ran", search.max_probes));
    }
    if open.iter().any(|r| r.fails_at.is_none()) {
        let highest = probes.iter().map(|p| p.rate).fold(0.0, f64::max);
        return Next::Probe(round4((highest * 2.0).min(search.max_rate)));
    }
    let ratio = |r: &SearchResult| r.fails_at.unwrap_or(f64::INFINITY) / r.holds_at.unwrap_or(f64::MIN_POSITIVE);
    let widest = open.iter().fold(open[0], |best, r| if ratio(r) > ratio(best) { r } else { best });
    let (low, high) = (widest.holds_at.unwrap_or(search.min_rate), widest.fails_at.unwrap_or(search.max_rate));
    let mid = round4((low * high).sqrt());
    if mid <= low || mid >= high || probes.iter().any(|p| p.rate == mid) {
        // Four digits cannot split it: the bracket is as narrow as probes can make it.
        return Next::Stop(format!("{}'s bracket [{low}, {high}) cannot be split further", widest.provider));
    }
    Next::Probe(mid)
}

/// Each provider's bracket after the probes (by name). A provider not yet done reads as
/// `ProbesExhausted`: that is what it is if the search ends here.
pub fn results(search: &CapacitySearch, probes: &[Probe]) -> Vec<SearchResult> {
    let mut names: Vec<&str> = probes.iter().flat_map(|p| p.providers.iter().map(|v| v.provider.as_str())).collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|name| result(search, probes, name)).collect()
}

fn result(search: &CapacitySearch, probes: &[Probe], provider: &str) -> SearchResult {
    let verdicts =
        probes.iter().filter_map(|p| Some((p.rate, p.providers.iter().find(|v| v.provider == provider)?.verdict)));
    let fails_at = verdicts.clone().filter(|(_, v)| *v == Verdict::Fails).map(|(r, _)| r).reduce(f64::min);
    let holds_at = verdicts
        .clone()
        .filter(|(r, v)| *v == Verdict::Holds && fails_at.is_none_or(|f| *r < f))
        .map(|(r, _)| r)
        .reduce(f64::max);
    let stopped = probes.last().is_some_and(bad_probe);
    let status = match (holds_at, fails_at) {
        (_, Some(f)) if f <= search.min_rate => SearchStatus::BelowMinRate,
        (Some(h), None) if h >= search.max_rate => SearchStatus::AtLeastMaxRate,
        (Some(h), Some(f)) if f <= h * (1.0 + search.tolerance) => SearchStatus::Found,
        _ if stopped => SearchStatus::Stopped,
        _ => SearchStatus::ProbesExhausted,
    };
    SearchResult { provider: provider.to_string(), status, holds_at, fails_at }
}

/// Whether a probe's figures are some provider's client's (or nobody's).
fn bad_probe(probe: &Probe) -> bool {
    probe.providers.iter().any(|v| matches!(v.verdict, Verdict::ClientBound | Verdict::Unmeasured))
}

/// `x` to four significant digits: probe rates that read as written.
fn round4(x: f64) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::documents::ProbeVerdict;

    fn search() -> CapacitySearch {
        CapacitySearch { min_rate: 2.0, max_rate: 64.0, tolerance: 0.05, max_probes: 16 }
    }

    fn verdict(provider: &str, verdict: Verdict) -> ProbeVerdict {
        ProbeVerdict {
            provider: provider.into(),
            verdict,
            goodput: None,
            achieved_rate: 0.0,
            completed_per_second: 0.0,
            ttft_p99_ms: None,
            e2e_p99_ms: None,
            client_bound: if verdict == Verdict::ClientBound { vec!["send lag p99 3 ms".into()] } else { vec![] },
        }
    }

    /// Runs the search against providers whose steps hold exactly below their capacities.
    fn run(search: &CapacitySearch, capacities: &[(&str, f64)]) -> (Vec<Probe>, Next) {
        let mut probes = Vec::new();
        loop {
            match next(search, &probes) {
                Next::Probe(rate) => {
                    let providers = capacities
                        .iter()
                        .map(|(name, cap)| verdict(name, if rate <= *cap { Verdict::Holds } else { Verdict::Fails }))
                        .collect();
                    probes.push(Probe { run: format!("probes/{:02}", probes.len() + 1), rate, providers });
                    assert!(probes.len() <= 64, "the search does not end");
                }
                stop => return (probes, stop),
            }
        }
    }

    #[test]
    fn one_provider_is_bracketed_within_the_tolerance() {
        let (probes, stop) = run(&search(), &[("a", 20.0)]);
        let rates: Vec<f64> = probes.iter().map(|p| p.rate).collect();
        assert_eq!(&rates[..5], [2.0, 4.0, 8.0, 16.0, 32.0], "doubling until a failure");
        assert_eq!(rates[5], 22.63, "then the geometric midpoint of [16, 32)");
        assert_eq!(stop, Next::Stop("every provider's capacity is bracketed".into()));
        let found = &results(&search(), &probes)[0];
        assert_eq!(found.status, SearchStatus::Found);
        let (h, f) = (found.holds_at.unwrap(), found.fails_at.unwrap());
        assert!(h <= 20.0 && f > 20.0 && f <= h * 1.05, "{h} {f}");
    }

    #[test]
    fn every_provider_of_a_paired_search_gets_its_own_bracket() {
        let (probes, _) = run(&search(), &[("a", 5.0), ("b", 40.0), ("c", 1000.0), ("d", 1.0)]);
        let found = results(&search(), &probes);
        let status: Vec<SearchStatus> = found.iter().map(|r| r.status).collect();
        use SearchStatus::*;
        assert_eq!(status, [Found, Found, AtLeastMaxRate, BelowMinRate]);
        for (r, cap) in found[..2].iter().zip([5.0, 40.0]) {
            assert!(r.holds_at.unwrap() <= cap && r.fails_at.unwrap() > cap, "{r:?}");
        }
        assert_eq!(found[2].holds_at, Some(64.0));
        assert_eq!(found[3].fails_at, Some(2.0));
    }

    #[test]
    fn noise_above_a_failure_does_not_raise_the_capacity() {
        let mut probes = run(&search(), &[("a", 20.0)]).0;
        probes.push(Probe { run: "x".into(), rate: 48.0, providers: vec![verdict("a", Verdict::Holds)] });
        let found = &results(&search(), &probes)[0];
        assert!(found.holds_at.unwrap() <= 20.0, "{found:?}");
    }

    #[test]
    fn a_client_bound_rate_is_measured_again_and_stops_the_search_the_third_time() {
        let probe = |rate: f64, v: Verdict| Probe { run: "p".into(), rate, providers: vec![verdict("a", v)] };
        let mut probes = vec![probe(2.0, Verdict::Holds), probe(4.0, Verdict::ClientBound)];
        assert_eq!(next(&search(), &probes), Next::Probe(4.0), "measured again");
        probes.push(probe(4.0, Verdict::Holds));
        assert_eq!(next(&search(), &probes), Next::Probe(8.0), "a clean attempt counts, the bad one does not");
        assert_eq!(results(&search(), &probes)[0].holds_at, Some(4.0));
        probes.extend([probe(8.0, Verdict::ClientBound), probe(8.0, Verdict::ClientBound)]);
        assert_eq!(next(&search(), &probes), Next::Probe(8.0));
        probes.push(probe(8.0, Verdict::ClientBound));
        let Next::Stop(why) = next(&search(), &probes) else { panic!("it went on") };
        assert!(why.contains("8 req/s") && why.contains("3 time(s)") && why.contains("send lag p99 3 ms"), "{why}");
        assert_eq!(results(&search(), &probes)[0].status, SearchStatus::Stopped);
        let unmeasured = vec![probe(2.0, Verdict::Unmeasured)];
        assert!(matches!(next(&search(), &unmeasured), Next::Stop(_)), "nothing to gain from measuring nothing again");
    }

    #[test]
    fn max_probes_ends_a_search_with_its_brackets_so_far() {
        let few = CapacitySearch { max_probes: 3, ..search() };
        let (probes, stop) = run(&few, &[("a", 20.0)]);
        assert_eq!(probes.len(), 3);
        assert_eq!(stop, Next::Stop("max_probes (3) probes ran".into()));
        assert_eq!(results(&few, &probes)[0].status, SearchStatus::ProbesExhausted);
    }

    #[test]
    fn rates_are_rounded_to_four_significant_digits() {
        assert_eq!(round4(22.627416997969522), 22.63);
        assert_eq!(round4(1234.5678), 1235.0);
        assert_eq!(round4(0.0123456), 0.01235);
    }
}
