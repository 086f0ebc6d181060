//! Everything random about one request, drawn up front from the request's key so a replay of
//! the same request sequence reproduces it exactly.
use crate::profile::{Fault, Profile, Sampling};
use crate::stratified::{first_u64, Stratified, BLOCK};
use inferbench_stats::rng::SplitMix64;
use sha2::{Digest, Sha256};

#[derive(Debug, Clone)]
pub struct Draw {
    pub fault: Fault,
    /// Whether the answer is the gold (otherwise a plausible wrong answer).
    pub correct: bool,
    /// Profile time (before `time_scale`) from receipt to the first answer token.
    pub ttft_ms: f64,
    /// Answer tokens per second after the first answer token.
    pub tokens_per_second: f64,
    pub reasoning_tokens: usize,
    /// The request's generator, positioned after the draws above; answer choices continue
    /// from it.
    pub rng: SplitMix64,
}

/// Per-provider drawing state: the profile's randomness plus the stratified sequence.
#[derive(Debug, Clone)]
pub struct Drawer {
    seed: u64,
    sampling: Sampling,
    stratified: Stratified,
}

impl Drawer {
    pub fn new(seed: u64, slug: &str, sampling: Sampling) -> Self {
        Drawer { seed, sampling, stratified: Stratified::new(seed, slug) }
    }

    /// The draw for request number `counter` (per provider, from 0) with this body hash.
    pub fn draw(&self, profile: &Profile, body_sha256: &[u8; 32], counter: u64) -> Draw {
        let mut rng = request_rng(self.seed, &profile.slug, body_sha256, counter);
        // Always consume the independent uniforms, so the rest of the stream does not depend
        // on the sampling mode.
        let independent = [rng.next_f64(), rng.next_f64(), rng.next_f64()];
        let u = match self.sampling {
            Sampling::Stratified => {
                // The fault band is the lowest strata of the outcome; the timing is
                // stratified over the rest of the block.
                let skip = (profile.faults.total() * BLOCK as f64).floor() as usize;
                let timing = |dim| self.stratified.timing(counter, dim, skip);
                [
                    self.stratified.outcome(counter).1,
                    timing(1).unwrap_or(independent[1]),
                    timing(2).unwrap_or(independent[2]),
                ]
            }
            Sampling::Independent => independent,
        };
        let (fault, correct) = match outcome(profile, u[0]) {
            (fault, Some(correct)) => (fault, correct),
            // Inside the fault band the first uniform is used up; the faults that still
            // stream an answer draw its correctness independently.
            (fault, None) => (fault, rng.next_f64() < profile.accuracy),
        };
        let mean = profile.reasoning.mean;
        let reasoning_tokens = if mean > 0.0 {
            let lo = (mean * 0.5).round().max(1.0) as usize;
            let hi = ((mean * 1.5).round() as usize).max(lo);
            lo + rng.below_modulo(hi - lo + 1)
        } else {
            0
        };
        Draw {
            fault,
            correct,
            ttft_ms: profile.ttft_ms.sample(u[1]),
            tokens_per_second: profile.tokens_per_second.sample(u[2]),
            reasoning_tokens,
            rng,
        }
    }
}

/// A generator keyed by the request's identity, so the same request sequence replays the
/// same draws regardless of timing or of the other providers' traffic.
fn request_rng(seed: u64, slug: &str, body_sha256: &[u8; 32], counter: u64) -> SplitMix64 {
    let mut h = Sha256::new();
    h.update(b"ib-sim/request\0");
    h.update(seed.to_be_bytes());
    h.update(slug.as_bytes());
    h.update([0u8]);
    h.update(body_sha256);
    h.update(counter.to_be_bytes());
    SplitMix64::new(first_u64(&h.finalize()))
}

/// Maps one uniform to the request's outcome: the faults occupy [0, F) in the fixed order of
/// [`Fault::ALL`]; the rest of the interval is rescaled to [0, 1) and split at `accuracy`
/// into correct and wrong. Returns the correctness only when it was decided here.
fn outcome(profile: &Profile, u: f64) -> (Fault, Option<bool>) {
    let mut edge = 0.0;
    for fault in Fault::ALL {
        edge += profile.faults.probability(fault);
        if u < edge {
            return (fault, None);
        }
    }
    let w = (u - edge) / (1.0 - edge).max(f64::MIN_POSITIVE);
    (Fault::None, Some(w < profile.accuracy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profiles;
    use std::path::Path;

    fn profile(extra: &str, sampling: &str) -> Profiles {
        let text = format!(
            "sampling: {sampling}\nproviders:\n  p:\n    model: m\n    ttft_ms: {{median: 1000, p99: 4000}}\n    tokens_per_second: {{median: 100, p05: 40}}\n    reasoning_tokens: {{mean: 20}}\n{extra}"
        );
        Profiles::parse(&text, Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn request_generators_are_deterministic_and_key_sensitive() {
        let body = [7u8; 32];
        let a: Vec<u64> = (0..4).map(|_| 0).scan(request_rng(1, "x", &body, 0), |r, _| Some(r.next_u64())).collect();
        let b: Vec<u64> = (0..4).map(|_| 0).scan(request_rng(1, "x", &body, 0), |r, _| Some(r.next_u64())).collect();
        assert_eq!(a, b);
        for other in [
            request_rng(2, "x", &body, 0),
            request_rng(1, "y", &body, 0),
            request_rng(1, "x", &[8u8; 32], 0),
            request_rng(1, "x", &body, 1),
        ] {
            assert_ne!(other.clone().next_u64(), a[0]);
        }
    }

    #[test]
    fn draws_are_deterministic_per_key() {
        for mode in ["stratified", "independent"] {
            let ps = profile("    accuracy: 0.5\n", mode);
            let p = &ps.providers["p"];
            let d = Drawer::new(7, "p", ps.sampling);
            let a = d.draw(p, &[1; 32], 3);
            let b = d.draw(p, &[1; 32], 3);
            assert_eq!(
                (a.fault, a.correct, a.ttft_ms, a.tokens_per_second, a.reasoning_tokens),
                (b.fault, b.correct, b.ttft_ms, b.tokens_per_second, b.reasoning_tokens)
            );
            // Another counter or seed changes the timing.
            assert_ne!(a.ttft_ms, d.draw(p, &[1; 32], 4).ttft_ms);
            assert_ne!(a.ttft_ms, Drawer::new(8, "p", ps.sampling).draw(p, &[1; 32], 3).ttft_ms);
            assert!((10..=30).contains(&a.reasoning_tokens));
        }
        // Only independent sampling depends on the body for its timing.
        let ps = profile("", "independent");
        let d = Drawer::new(7, "p", ps.sampling);
        assert_ne!(d.draw(&ps.providers["p"], &[1; 32], 3).ttft_ms, d.draw(&ps.providers["p"], &[2; 32], 3).ttft_ms);
    }

    #[test]
    fn stratified_rates_match_the_profile_closely() {
        let ps = profile(
            "    accuracy: 0.9\n    faults: {http_429: 0.01, stall_before: 0.12, http_5xx: 0.03}\n",
            "stratified",
        );
        let p = &ps.providers["p"];
        let d = Drawer::new(0, "p", ps.sampling);
        let draws: Vec<Draw> = (0..600).map(|n| d.draw(p, &[n as u8; 32], n)).collect();
        let count = |f: Fault| draws.iter().filter(|d| d.fault == f).count();
        // One aligned block: the counts are exact.
        assert_eq!(count(Fault::Http429), 6);
        assert_eq!(count(Fault::StallBefore), 72);
        assert_eq!(count(Fault::Http5xx), 18);
        let clean: Vec<&Draw> = draws.iter().filter(|d| d.fault == Fault::None).collect();
        let wrong = clean.iter().filter(|d| !d.correct).count();
        let want = clean.len() as f64 * 0.1;
        assert!((wrong as f64 - want).abs() <= 1.0, "{wrong} vs {want}");
        // The timing is stratified over the requests outside the fault band, which are the
        // ones whose latency the client measures.
        let mut ttft: Vec<f64> = clean.iter().map(|d| d.ttft_ms).collect();
        ttft.sort_by(f64::total_cmp);
        let n = ttft.len();
        assert!((ttft[n / 2] / 1000.0 - 1.0).abs() < 0.01, "median {}", ttft[n / 2]);
        assert!((ttft[n * 99 / 100] / 4000.0 - 1.0).abs() < 0.03, "p99 {}", ttft[n * 99 / 100]);
    }

    #[test]
    fn outcome_bands() {
        let ps = profile("    accuracy: 0.5\n    faults: {http_429: 0.1, http_5xx: 0.1}\n", "stratified");
        let p = &ps.providers["p"];
        assert_eq!(outcome(p, 0.05), (Fault::Http429, None));
        assert_eq!(outcome(p, 0.15), (Fault::Http5xx, None));
        assert_eq!(outcome(p, 0.5), (Fault::None, Some(true)));
        assert_eq!(outcome(p, 0.95), (Fault::None, Some(false)));
    }
}
