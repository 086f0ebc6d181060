//! Confidence intervals of the published figures: distribution-free intervals of a percentile
//! from order statistics, and Wilson score intervals of a rate (README "Definitions").
//!
//! **A percentile's interval.** The point estimate of a percentile is the sample at 1-based
//! rank r of the n ascending samples x(1) ≤ … ≤ x(n) ([`crate::percentile`]); it estimates the
//! p-quantile ξ of the population, with p = K/100 for an upper-tail pK and p = 1 − K/100 for a
//! floor pK (a floor is a lower quantile of speed: the p95 floor estimates the 5th percentile).
//! The interval is [x(l), x(u)] with l ≤ r ≤ u. Whatever the distribution, the number B of
//! samples below ξ is Binomial(n, p), so for a continuous population the interval covers ξ
//! with probability exactly P(l ≤ B < u) (at least that with ties or a discrete population,
//! where the closed interval only grows).
//!
//! The rule, exactly: start at l = u = r and widen one rank at a time on each side, both sides
//! at once (l − 1 and u + 1, each only while it stays within 1..=n), until
//! P(l ≤ B < u) ≥ 0.95. The first pair that reaches it is the interval, so it is as symmetric
//! in ranks around r as the ends of the sample allow. Its `coverage` is that probability.
//! When even [x(1), x(n)] falls short (its coverage is 1 − pⁿ − (1 − p)ⁿ, below 0.95 for a p99
//! of fewer than 299 samples, a p95 of fewer than 59, a median of fewer than 6), there is no
//! interval: the figure is only the sample at its rank (the maximum, for a p99 of 18), and
//! `coverage` says how much [x(1), x(n)] would have covered.
//!
//! Binomial terms are computed in log space from the term at r (log-gamma, Lanczos), then by
//! the ratio of neighbouring terms, so n = 1,000,000 costs a few thousand steps, not n.

/// The confidence every interval is computed at.
pub const CONFIDENCE: f64 = 0.95;

/// The standard normal quantile of 0.975: the Wilson interval's z at 95 %.
const Z95: f64 = 1.959_963_984_540_054;

/// An order-statistic interval of a percentile: the ranks of its bounds (1-based, in the
/// ascending samples) and the probability that it covers the population's quantile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankInterval {
    pub lower_rank: u64,
    pub upper_rank: u64,
    pub coverage: f64,
}

/// What the samples allow for one percentile: an interval, or none and the most coverage any
/// interval of these samples could have had.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QuantileInterval {
    Interval(RankInterval),
    TooFewSamples { max_coverage: f64 },
}

/// The interval for the p-quantile estimated by the sample at 1-based rank `rank` of `n`
/// samples. `p` must lie strictly between 0 and 1 and `rank` in 1..=n.
pub fn quantile_ranks(n: u64, p: f64, rank: u64) -> QuantileInterval {
    assert!(p > 0.0 && p < 1.0 && (1..=n).contains(&rank), "p = {p}, rank {rank} of {n}");
    let max_coverage = 1.0 - p.powf(n as f64) - (1.0 - p).powf(n as f64);
    if max_coverage < CONFIDENCE {
        return QuantileInterval::TooFewSamples { max_coverage };
    }
    let pmf = Pmf::new(n, p);
    // Covered mass is P(l ≤ B ≤ u − 1); it starts empty at l = u = r. Widening u adds the term
    // at the old u; widening l adds the term at the new l. The terms are walked outwards from
    // r by their ratio, one step per widening.
    let (mut l, mut u) = (rank, rank);
    let mut below = pmf.at(rank); // the term at l, once l moves it is the term at the new l
    let mut above = below; // the term at u
    let mut coverage = 0.0;
    loop {
        let mut widened = false;
        if u < n {
            coverage += above;
            above = pmf.next(above, u);
            u += 1;
            widened = true;
        }
        if l > 1 {
            below = pmf.previous(below, l);
            l -= 1;
            coverage += below;
            widened = true;
        }
        if coverage >= CONFIDENCE {
            return QuantileInterval::Interval(RankInterval { lower_rank: l, upper_rank: u, coverage });
        }
        if !widened {
            // [1, n] reached: rounding left the running sum a hair below the exact maximum,
            // which is ≥ 0.95 here, so this is the interval.
            return QuantileInterval::Interval(RankInterval { lower_rank: 1, upper_rank: n, coverage: max_coverage });
        }
    }
}

/// The fewest samples for which the p-quantile has any 95 % interval: the least n with
/// 1 − pⁿ − (1 − p)ⁿ ≥ 0.95 (6 for a median, 59 for a p95, 299 for a p99).
pub fn min_samples(p: f64) -> u64 {
    assert!(p > 0.0 && p < 1.0, "p = {p}");
    (1..).find(|&n| 1.0 - p.powf(n as f64) - (1.0 - p).powf(n as f64) >= CONFIDENCE).expect("coverage tends to 1")
}

/// Binomial(n, p) probability terms, walked by neighbouring ratios.
struct Pmf {
    n: f64,
    ln_p: f64,
    ln_q: f64,
    odds: f64,
}

impl Pmf {
    fn new(n: u64, p: f64) -> Pmf {
        Pmf { n: n as f64, ln_p: p.ln(), ln_q: (-p).ln_1p(), odds: p / (1.0 - p) }
    }

    /// P(B = k).
    fn at(&self, k: u64) -> f64 {
        let k = k as f64;
        let ln = ln_gamma(self.n + 1.0) - ln_gamma(k + 1.0) - ln_gamma(self.n - k + 1.0)
            + k * self.ln_p
            + (self.n - k) * self.ln_q;
        ln.exp()
    }

    /// P(B = k + 1) from P(B = k).
    fn next(&self, term: f64, k: u64) -> f64 {
        let k = k as f64;
        term * (self.n - k) / (k + 1.0) * self.odds
    }

    /// P(B = k − 1) from P(B = k).
    fn previous(&self, term: f64, k: u64) -> f64 {
        let k = k as f64;
        term * k / (self.n - k + 1.0) / self.odds
    }
}

/// ln Γ(x) for x ≥ 1 (Lanczos, g = 7, nine coefficients; relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The Wilson score interval of `successes` out of `trials` at 95 %; `None` without trials.
/// Unlike the normal approximation it stays within [0, 1] and is not empty at 0 or n
/// successes.
pub fn wilson(successes: u64, trials: u64) -> Option<(f64, f64)> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let share = successes as f64 / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (share + z2 / (2.0 * n)) / denominator;
    let half = Z95 / denominator * (share * (1.0 - share) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(l ≤ B < u) by summing every term from scratch, in f64 products (no log-gamma, no
    /// ratio walk): a second computation of the same figure.
    fn coverage_by_sum(n: u64, p: f64, l: u64, u: u64) -> f64 {
        (l..u)
            .map(|k| {
                let mut term = 1.0f64;
                // C(n, k) pᵏ qⁿ⁻ᵏ as a product of n factors, interleaved to stay in range.
                let (mut a, mut b, mut c) = (0u64, 0u64, 0u64);
                while a < k || b < n - k || c < k {
                    if c < k && (term >= 1.0 || (a >= k && b >= n - k)) {
                        term *= (n - c) as f64 / (c + 1) as f64;
                        c += 1;
                    } else if a < k {
                        term *= p;
                        a += 1;
                    } else if b < n - k {
                        term *= 1.0 - p;
                        b += 1;
                    } else {
                        term *= (n - c) as f64 / (c + 1) as f64;
                        c += 1;
                    }
                }
                term
            })
            .sum()
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        let mut factorial = 1.0f64;
        for k in 1..=30u32 {
            factorial *= f64::from(k);
            let got = ln_gamma(f64::from(k) + 1.0);
            assert!((got - factorial.ln()).abs() < 1e-12 * factorial.ln().max(1.0), "ln {k}!");
        }
    }

    #[test]
    fn every_interval_reaches_95_and_narrowing_it_symmetrically_would_not() {
        for n in [6u64, 7, 10, 20, 59, 60, 100, 299, 300, 600, 1000] {
            for (p, rank) in [
                (0.5, n.div_ceil(2)),
                (0.95, (95 * n).div_ceil(100)),
                (0.99, (99 * n).div_ceil(100)),
                (0.05, n - (95 * n).div_ceil(100) + 1),
                (0.01, n - (99 * n).div_ceil(100) + 1),
            ] {
                match quantile_ranks(n, p, rank) {
                    QuantileInterval::Interval(i) => {
                        assert!(i.lower_rank <= rank && rank <= i.upper_rank);
                        let exact = coverage_by_sum(n, p, i.lower_rank, i.upper_rank);
                        assert!((exact - i.coverage).abs() < 1e-9, "n {n} p {p}: {exact} vs {}", i.coverage);
                        assert!(exact >= CONFIDENCE - 1e-12, "n {n} p {p}");
                        // One step less on each side that moved falls short.
                        let (l, u) = (
                            if i.lower_rank < rank { i.lower_rank + 1 } else { i.lower_rank },
                            if i.upper_rank > rank { i.upper_rank - 1 } else { i.upper_rank },
                        );
                        assert!(coverage_by_sum(n, p, l, u) < CONFIDENCE, "n {n} p {p}: not the first");
                    }
                    QuantileInterval::TooFewSamples { max_coverage } => {
                        assert!(max_coverage < CONFIDENCE);
                        assert!(coverage_by_sum(n, p, 1, n) < CONFIDENCE, "n {n} p {p}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_smallest_samples_with_an_interval() {
        let first = |p: f64| (1..).find(|&n| matches!(quantile_ranks(n, p, n), QuantileInterval::Interval(_))).unwrap();
        assert_eq!((first(0.5), first(0.95), first(0.99)), (6, 59, 299));
        assert_eq!((min_samples(0.5), min_samples(0.95), min_samples(0.99), min_samples(0.01)), (6, 59, 299, 299));
        match quantile_ranks(18, 0.99, 18) {
            QuantileInterval::TooFewSamples { max_coverage } => assert!((max_coverage - 0.1655).abs() < 1e-3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_million_samples_is_quick_and_narrow() {
        let n = 1_000_000;
        let QuantileInterval::Interval(i) = quantile_ranks(n, 0.99, 990_000) else { panic!() };
        // sd of B is sqrt(n p q) ≈ 99.5, so the interval is about ±1.96 sd around the rank.
        assert!((i.upper_rank - 990_000).abs_diff(195) <= 2 && (990_000 - i.lower_rank).abs_diff(195) <= 2, "{i:?}");
    }

    #[test]
    fn wilson_known_values() {
        // 0 of 10: [0, 0.2775]; 5 of 10: [0.2366, 0.7634] (Wilson 1927; Newcombe 1998, table I).
        let (lo, hi) = wilson(0, 10).unwrap();
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 1e-4);
        let (lo, hi) = wilson(5, 10).unwrap();
        assert!((lo - 0.2366).abs() < 1e-4 && (hi - 0.7634).abs() < 1e-4);
        assert_eq!(wilson(0, 0), None);
    }
}
