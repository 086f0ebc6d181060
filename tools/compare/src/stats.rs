//! The two-sample tests of the drift alarms and the family-wise correction over them, written
//! out rather than taken from a statistics crate: each is a few lines, and their exact
//! definitions (tie handling, what "as extreme" means, the floor of a Monte Carlo p-value) are
//! part of what the alarms promise.
//!
//! - [`fisher_exact`]: two proportions, Fisher's exact test, two-sided as R's `fisher.test`
//!   computes it (the tables no more probable than the observed one, with R's relative
//!   tolerance of 1e-7).
//! - [`mann_whitney`]: two samples of numbers (answer lengths, usage ratios), the
//!   Wilcoxon–Mann–Whitney test of U on mid-ranks: its normal approximation with the tie and
//!   continuity corrections when both samples have at least [`NORMAL_MIN`] values, else a
//!   seeded permutation test of the same statistic ([`permutation`]).
//! - [`holm`]: Holm's step-down adjustment, which bounds the family-wise error rate.
use inferbench_stats::rng::SplitMix64;

/// Both samples at least this large: the normal approximation of U; below, the permutation
/// test.
pub const NORMAL_MIN: usize = 20;

/// Resamples of the permutation test: its p-value is never below 1 / (PERMUTATIONS + 1).
pub const PERMUTATIONS: usize = 9_999;

/// ln(k!) for k in 0..=n.
fn ln_factorials(n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n + 1);
    out.push(0.0);
    for k in 1..=n {
        out.push(out[k - 1] + (k as f64).ln());
    }
    out
}

/// Fisher's exact test of the 2×2 table `[[a, b], [c, d]]` (rows: the two runs; columns:
/// successes, failures), two-sided: the sum of the hypergeometric probabilities, given the
/// margins, of every table no more probable than the observed one (within a relative 1e-7,
/// as R's `fisher.test`, so that tables tied with it in exact arithmetic count).
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let (r1, r2, c1) = (a + b, c + d, a + c);
    let n = r1 + r2;
    if r1 == 0 || r2 == 0 || c1 == 0 || c1 == n {
        return 1.0;
    }
    let lf = ln_factorials(n as usize);
    let f = |k: u64| lf[k as usize];
    // P(X = x): x successes in the first row, X ~ Hypergeometric(n, c1, r1).
    let ln_p = |x: u64| f(r1) + f(r2) + f(c1) + f(n - c1) - f(n) - f(x) - f(r1 - x) - f(c1 - x) - f(r2 + x - c1);
    let (low, high) = (c1.saturating_sub(r2), r1.min(c1));
    let observed = ln_p(a);
    let bound = observed + (1.0f64 + 1e-7).ln();
    let p: f64 = (low..=high).map(ln_p).filter(|lp| *lp <= bound).map(f64::exp).sum();
    p.min(1.0)
}

/// Mid-ranks (1-based; tied values share the mean of their ranks) of `values`, and the sum
/// over tie groups of t³ − t.
fn mid_ranks(values: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut ranks = vec![0.0; values.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (ranks, ties)
}

/// The two-sided p-value of the Wilcoxon–Mann–Whitney test of `x` against `y`, and which
/// method gave it (`normal` or `permutation`); 1 when either sample is empty or every value
/// is the same.
pub fn mann_whitney(x: &[f64], y: &[f64], seed: u64) -> (f64, &'static str) {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return (1.0, "none");
    }
    if n1 < NORMAL_MIN || n2 < NORMAL_MIN {
        return (permutation(x, y, seed, PERMUTATIONS), "permutation");
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, ties) = mid_ranks(&pooled);
    let (a, b) = (n1 as f64, n2 as f64);
    let n = a + b;
    let u = ranks[..n1].iter().sum::<f64>() - a * (a + 1.0) / 2.0;
    let variance = a * b / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 {
        return (1.0, "normal");
    }
    let z = ((u - a * b / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    (erfc(z / std::f64::consts::SQRT_2).min(1.0), "normal")
}

/// The seeded permutation test of U (on the mid-ranks of the pooled samples): the share of
/// `resamples` random relabellings, plus the observed one, whose |U − n₁n₂/2| is at least the
/// observed one: (1 + k) / (1 + resamples), never below 1 / (1 + resamples). The relabellings
/// are drawn with SplitMix64 from `seed` (a partial Fisher–Yates shuffle each).
pub fn permutation(x: &[f64], y: &[f64], seed: u64, resamples: usize) -> f64 {
    let (n1, n2) = (x.len(), y.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let pooled: Vec<f64> = x.iter().chain(y).copied().collect();
    let (ranks, _) = mid_ranks(&pooled);
    let centre = n1 as f64 * (n1 + n2 + 1) as f64 / 2.0; // E[R₁] = n₁(N + 1)/2
    let observed = (ranks[..n1].iter().sum::<f64>() - centre).abs();
    // Ranks are multiples of 1/2: sums compare exactly up to float noise far below that.
    let tolerance = 1e-7;
    let mut rng = SplitMix64::new(seed);
    let mut work = ranks.clone();
    let mut extreme = 0usize;
    for _ in 0..resamples {
        let mut sum = 0.0;
        for i in 0..n1 {
            let j = i + rng.below(work.len() - i);
            work.swap(i, j);
            sum += work[i];
        }
        if (sum - centre).abs() >= observed - tolerance {
            extreme += 1;
        }
    }
    (1 + extreme) as f64 / (1 + resamples) as f64
}

/// The complementary error function, by the Chebyshev fit of Numerical Recipes (`erfcc`):
/// relative error under 1.2e-7 everywhere, enough for p-values compared with 1e-2/m.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Holm's step-down adjustment of `p`: the i-th smallest becomes the running maximum of
/// min(1, (m − j + 1)·p₍ⱼ₎) over j ≤ i. Rejecting where the adjusted value is ≤ α keeps the
/// chance of any false rejection in the family at most α, whatever the tests' dependence.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]).then(i.cmp(&j)));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C(n, k) as an exact integer.
    fn choose(n: u64, k: u64) -> u128 {
        (0..k).fold(1u128, |acc, i| acc * u128::from(n - i) / u128::from(i + 1))
    }

    #[test]
    fn fisher_matches_hand_counted_tables_and_r() {
        // The tea-tasting table [[3, 1], [1, 3]]: margins 4, 4 of 8, so P(x) = C(4,x)·C(4,4−x)/70
        // = 1, 16, 36, 16, 1 (/70); as or less probable than x = 3: 1 + 16 + 16 + 1 = 34.
        // R: fisher.test(matrix(c(3, 1, 1, 3), 2))$p.value = 0.4857143.
        let hand: u128 = [0, 1, 3, 4].iter().map(|&x| choose(4, x) * choose(4, 4 - x)).sum();
        assert_eq!((hand, choose(8, 4)), (34, 70));
        assert!((fisher_exact(3, 1, 1, 3) - 34.0 / 70.0).abs() < 1e-12);
        // [[1, 9], [11, 3]]: R's fisher.test gives 0.002759.
        assert!((fisher_exact(1, 9, 11, 3) - 0.002_759_456).abs() < 1e-8, "{}", fisher_exact(1, 9, 11, 3));
        // [[10, 2], [3, 15]]: 0.0005367 (R).
        assert!((fisher_exact(10, 2, 3, 15) - 0.000_536_724_1).abs() < 1e-9);
        // Symmetric in rows and in columns.
        assert_eq!(fisher_exact(1, 9, 11, 3), fisher_exact(11, 3, 1, 9));
        assert!((fisher_exact(1, 9, 11, 3) - fisher_exact(9, 1, 3, 11)).abs() < 1e-15);
        // Identical rows, and degenerate margins, are no evidence at all.
        assert_eq!(fisher_exact(50, 50, 50, 50), 1.0);
        assert_eq!(fisher_exact(300, 0, 300, 0), 1.0);
        assert_eq!(fisher_exact(0, 0, 3, 4), 1.0);
        // 97 % of 300 against 87 %: the drift the end-to-end test injects.
        assert!(fisher_exact(291, 9, 261, 39) < 1e-5);
    }

    #[test]
    fn fisher_on_every_small_table_agrees_with_exact_rational_counts() {
        // Every table with rows of 5 and 7: the p-value counted with exact integers.
        for a in 0..=5u64 {
            for c in 0..=7u64 {
                let (r1, r2, c1) = (5, 7, a + c);
                let weight = |x: u64| choose(r1, x) * choose(r2, c1 - x);
                let (low, high) = (c1.saturating_sub(r2), r1.min(c1));
                let observed = weight(a);
                let tail: u128 = (low..=high).map(weight).filter(|w| *w <= observed).sum();
                let expected = tail as f64 / choose(12, c1) as f64;
                let got = fisher_exact(a, 5 - a, c, 7 - c);
                assert!((got - expected).abs() < 1e-12, "a {a} c {c}: {got} vs {expected}");
            }
        }
    }

    #[test]
    fn mann_whitney_normal_approximation_matches_a_hand_computed_z() {
        // x = 1..=20, y = 11..=30 (no ties): U = R₁ − 210; R₁ = 1+…+10 + the ranks of 11..20,
        // which are 11.5, 13.5, … (tied pairs): 55 + Σ(11.5 + 2k, k = 0..9) = 55 + 205 = 260.
        let x: Vec<f64> = (1..=20).map(f64::from).collect();
        let y: Vec<f64> = (11..=30).map(f64::from).collect();
        let (p, method) = mann_whitney(&x, &y, 1);
        assert_eq!(method, "normal");
        // U = 50, mean 200; ties: ten pairs, Σ(t³ − t) = 60; var = 400/12·(41 − 60/1560).
        let var = 400.0 / 12.0 * (41.0 - 60.0 / 1560.0);
        let z = (150.0f64 - 0.5) / f64::sqrt(var);
        assert!((p - erfc(z / std::f64::consts::SQRT_2)).abs() < 1e-15);
        assert!(p < 1e-4 && p > 1e-7, "{p}");
        // The same sample twice: no difference.
        assert!(mann_whitney(&x, &x, 1).0 > 0.99);
        // Every value the same: variance 0, p = 1.
        assert_eq!(mann_whitney(&[1.0; 30], &[1.0; 40], 1), (1.0, "normal"));
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, expected) in [(0.0, 1.0), (0.5, 0.479_500_122), (1.0, 0.157_299_207), (3.0, 2.209_049_7e-5)] {
            assert!(((erfc(x) - expected) / expected).abs() < 2e-7, "erfc({x}) = {}", erfc(x));
        }
        assert!((erfc(-1.0) - (2.0 - 0.157_299_207)).abs() < 1e-7);
    }

    #[test]
    fn permutation_p_values_stay_within_their_bounds() {
        let resamples = 999;
        // Completely separated samples: the observed U is the most extreme possible; only the
        // relabellings equal to it (or its mirror) reach it: 2/C(10,5) = 1/126 of them.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [6.0, 7.0, 8.0, 9.0, 10.0];
        let p = permutation(&x, &y, 7, resamples);
        assert!(p >= 1.0 / (resamples as f64 + 1.0), "never below the floor");
        // Binomial(999, 1/126): mean 7.9; (1 + k)/1000 with k well inside 0..=25.
        assert!(p <= 0.026, "{p}");
        // Identical samples: every relabelling is at least as extreme: p = 1.
        assert_eq!(permutation(&[2.0; 6], &[2.0; 6], 7, resamples), 1.0);
        // Interleaved samples: the observed U is the centre, p near 1.
        assert!(permutation(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0], 7, resamples) > 0.5);
        // Seeded: the same seed, the same p; the small-sample path of mann_whitney is this.
        assert_eq!(permutation(&x, &y, 7, resamples), p);
        assert_eq!(mann_whitney(&x, &y, 3), (permutation(&x, &y, 3, PERMUTATIONS), "permutation"));
        // Every p is (1 + k)/(1 + B) for an integer k in 0..=B.
        for seed in 0..20 {
            let p = permutation(&[1.0, 4.0, 4.0], &[2.0, 3.0, 9.0, 4.0], seed, resamples);
            let k = p * (resamples as f64 + 1.0) - 1.0;
            assert!((k - k.round()).abs() < 1e-9 && (0.0..=resamples as f64).contains(&k.round()), "{p}");
        }
    }

    #[test]
    fn permutation_and_normal_approximation_agree_on_a_moderate_sample() {
        let x: Vec<f64> = (0..25).map(|i| f64::from(i % 7) + 0.3).collect();
        let y: Vec<f64> = (0..25).map(|i| f64::from(i % 7) + 1.1).collect();
        let (normal, _) = mann_whitney(&x, &y, 1);
        let permuted = permutation(&x, &y, 1, 20_000);
        assert!((normal - permuted).abs() < 0.02, "normal {normal} permutation {permuted}");
    }

    #[test]
    fn holm_adjusts_step_down_and_keeps_the_input_order() {
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        // Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max so far 0.06.
        let expected = [0.03, 0.06, 0.06, 0.02];
        for (got, want) in adjusted.iter().zip(expected) {
            assert!((got - want).abs() < 1e-15, "{adjusted:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), [1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }
}
