//! The paired bootstrap: a percentile confidence interval of the median of paired differences.
//!
//! For a pair of providers in one run, the paired differences are `a − b` (E2E or TTFA, ms)
//! over the rounds where both have a sample. The statistic is their upper-tail nearest-rank
//! p50 ([`crate::percentile::Samples::upper`]`(50)`: the sample at 1-based rank
//! `ceil(n/2)` of the ascending values), the same figure as `comparisons.json`'s
//! `difference_p50_ms`. A resample draws n differences uniformly with replacement; the
//! interval is the percentile interval of the B resampled medians.
//!
//! **Method, exactly** (so anyone can recompute it; the e2e test does, independently):
//! - RNG: SplitMix64 (Steele, Lea & Flood 2014): `state += 0x9E3779B97F4A7C15`; output
//!   `z = state; z = (z ^ z>>30)·0xBF58476D1CE4E5B9; z = (z ^ z>>27)·0x94D049BB133111EB;
//!   z ^ z>>31` (wrapping u64 arithmetic).
//! - One stream per sample size n: its state starts at `seed ^ (n · 0xD1B54A32D192ED03)`
//!   (wrapping), so every pair of the same n (in any run) resamples the same index draws.
//! - An index in `0..n` from one output x: `(x · n) >> 64` in 128-bit arithmetic (Lemire's
//!   multiply-shift, without rejection: its bias is below n / 2⁶⁴).
//! - Resample b = 0..B draws n indices in turn into the differences **sorted ascending**
//!   (`f64::total_cmp`); its median is the resample's value at rank `ceil(n/2)`.
//! - Interval at confidence c% (integer): the resampled medians sorted ascending, the ones at
//!   1-based ranks `ceil((100 − c)·B / 200)` and `ceil((100 + c)·B / 200)` (B = 10,000,
//!   c = 95: ranks 250 and 9,750).
//!
//! **Why it is fast.** Because the differences are sorted, a resample's median is the
//! difference at the `ceil(n/2)`-th smallest index drawn: it depends only on which indices were
//! drawn, not on the values. So the B median ranks are drawn once per n ([`RankTable`]) and
//! every pair with n differences is one sort plus lookups, and since those ranks can be sorted
//! once too, the interval's bounds are two lookups. The tests check it against the naive
//! bootstrap (build each resample, sort it, take its median) draw for draw.
use crate::rng::SplitMix64;

/// The odd constant that spreads the per-n resampling streams apart.
const STREAM: u64 = 0xD1B5_4A32_D192_ED03;

/// The stream that resamples `n` differences under `seed`: the shared SplitMix64
/// ([`crate::rng`]), started at `seed ^ (n · STREAM)`.
fn stream_for_size(seed: u64, n: usize) -> SplitMix64 {
    SplitMix64::new(seed ^ (n as u64).wrapping_mul(STREAM))
}

/// The bootstrap's settings, recorded beside every interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub seed: u64,
    pub resamples: usize,
    /// Confidence level in percent, 1..=99.
    pub confidence: u32,
}

impl Settings {
    pub const STATISTIC: &'static str =
        "nearest-rank p50 of paired differences a - b (rank ceil(n/2)), as comparisons.json difference_p50_ms";
    pub const INTERVAL: &'static str = "percentile interval of the resampled medians (nearest rank)";
    pub const RNG: &'static str =
        "SplitMix64, one stream per sample size n starting at seed ^ (n * 0xD1B54A32D192ED03), \
         index (x * n) >> 64, resamples drawn into the ascending differences";

    /// 1-based ranks of the interval's bounds among the B sorted resampled medians.
    pub fn bound_ranks(&self) -> (usize, usize) {
        let b = self.resamples as u64;
        let c = u64::from(self.confidence);
        let low = ((100 - c) * b).div_ceil(200).max(1);
        let high = ((100 + c) * b).div_ceil(200).clamp(1, b);
        (low as usize, high as usize)
    }
}

/// 1-based rank of the nearest-rank median among n values: `ceil(n/2)`.
pub fn median_rank(n: usize) -> usize {
    n.div_ceil(2).max(1)
}

/// For one sample size n: the 0-based position, in the ascending differences, of each
/// resample's median, sorted ascending (the order of the resamples does not matter to a
/// percentile interval).
#[derive(Debug, Clone)]
pub struct RankTable {
    pub n: usize,
    pub sorted_ranks: Vec<u32>,
}

impl RankTable {
    pub fn draw(settings: &Settings, n: usize) -> RankTable {
        assert!(n > 0 && n <= u32::MAX as usize, "resampling needs 1..=u32::MAX differences, not {n}");
        let mut rng = stream_for_size(settings.seed, n);
        let k = median_rank(n);
        let mut counts = vec![0u32; n];
        let mut ranks = Vec::with_capacity(settings.resamples);
        for _ in 0..settings.resamples {
            counts.iter_mut().for_each(|c| *c = 0);
            for _ in 0..n {
                counts[rng.multiply_shift(n)] += 1;
            }
            // The k-th smallest index drawn: the first index whose running count reaches k.
            let mut seen = 0usize;
            let position = counts
                .iter()
                .position(|&c| {
                    seen += c as usize;
                    seen >= k
                })
                .expect("n draws reach rank k <= n");
            ranks.push(position as u32);
        }
        ranks.sort_unstable();
        RankTable { n, sorted_ranks: ranks }
    }
}

/// The fewest paired differences from which a verdict may be given at `confidence` percent.
///
/// A percentile interval of resampled medians never reaches past the observed extremes: at
/// best it is [min, max] of the n differences. For a continuous distribution, [min, max]
/// covers the true median unless all n values fall on one side of it, so its coverage is
/// `1 − 2·0.5ⁿ` (n = 1: 0; 2: 50 %; 3: 75 %; 4: 87.5 %; 5: 93.75 %; 6: 96.9 %). Below the
/// smallest n where that reaches `confidence`, no interval the bootstrap can return has the
/// coverage it claims, so no verdict is given (`too_few_rounds`). At or above it the bound is
/// met by the widest interval; the percentile interval is then the stated method. 95 % needs
/// 6, 99 % needs 8.
pub fn min_pairs(confidence: u32) -> usize {
    let miss = 100 - u64::from(confidence.min(99));
    // Coverage 1 − 2^(1−n) ≥ c/100  ⇔  2^(n−1) · (100 − c) ≥ 100.
    (1..64).find(|n| (1u64 << (n - 1)) * miss >= 100).unwrap_or(64)
}

/// One pair's interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub n: usize,
    /// The statistic on the observed differences.
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// Share of resamples whose median is below zero (a faster), and above (b faster).
    pub share_below_zero: f64,
    pub share_above_zero: f64,
}

/// The interval of `differences` (any order), with the rank table of their count.
pub fn interval(settings: &Settings, table: &RankTable, differences: &mut [f64]) -> Interval {
    let n = differences.len();
    assert_eq!(n, table.n, "a rank table is for one sample size");
    differences.sort_unstable_by(f64::total_cmp);
    let (low, high) = settings.bound_ranks();
    let ranks = &table.sorted_ranks;
    let b = ranks.len() as f64;
    // Differences below zero occupy positions 0..below; a resample's median is below zero
    // exactly when its rank is; likewise above zero from position `not_above` on.
    let below = differences.partition_point(|&d| d < 0.0) as u32;
    let not_above = differences.partition_point(|&d| d <= 0.0) as u32;
    let ranks_below = ranks.partition_point(|&r| r < below);
    let ranks_not_above = ranks.partition_point(|&r| r < not_above);
    Interval {
        n,
        estimate: differences[median_rank(n) - 1],
        low: differences[ranks[low - 1] as usize],
        high: differences[ranks[high - 1] as usize],
        share_below_zero: ranks_below as f64 / b,
        share_above_zero: (ranks.len() - ranks_not_above) as f64 / b,
    }
}

/// The paired bootstrap of the difference between two providers' upper-tail pK over the
/// rounds both completed: `ib-aggregate`'s test of whether adjacent ranks are distinguishable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileDifference {
    /// Shared rounds.
    pub n: usize,
    /// pK(b) − pK(a) on the observed rounds.
    pub estimate: f64,
    /// The percentile interval of the resampled differences.
    pub low: f64,
    pub high: f64,
    /// The resampled differences' standard deviation: the spread behind `rounds_to_separate`.
    pub standard_error: f64,
}

/// `b − a` for the upper-tail pK of `a` and of `b`, paired by position (a round), resampled
/// as [`interval`] resamples: the same stream for n, the same index draws (a resample draws
/// n round indices with replacement; both providers take the same rounds), the same
/// percentile interval. A resample's pK is the value at rank `ceil(K·n/100)` of the drawn
/// rounds' values (with their multiplicity), found from the top, since an upper percentile
/// lies near it. Needs `a.len() == b.len() ≥ 1`.
pub fn quantile_difference(settings: &Settings, a: &[f64], b: &[f64], k: u64) -> QuantileDifference {
    let n = a.len();
    assert!(n > 0 && n == b.len(), "paired samples of one length, not {} and {}", a.len(), b.len());
    let rank = ((k as usize) * n).div_ceil(100).max(1);
    // A resample's pK is the value whose running count from the largest down first reaches
    // the number of draws at or above rank `rank`.
    let from_top = n - rank + 1;
    let descending = |values: &[f64]| {
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by(|&x, &y| values[y as usize].total_cmp(&values[x as usize]).then(x.cmp(&y)));
        order
    };
    let (order_a, order_b) = (descending(a), descending(b));
    let quantile = |values: &[f64], order: &[u32], counts: &[u32]| {
        let mut seen = 0usize;
        for &i in order {
            seen += counts[i as usize] as usize;
            if seen >= from_top {
                return values[i as usize];
            }
        }
        unreachable!("n draws reach every rank")
    };
    let ones = vec![1u32; n];
    let estimate = quantile(b, &order_b, &ones) - quantile(a, &order_a, &ones);
    let mut rng = stream_for_size(settings.seed, n);
    let mut counts = vec![0u32; n];
    let mut differences = Vec::with_capacity(settings.resamples);
    for _ in 0..settings.resamples {
        counts.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            counts[rng.multiply_shift(n)] += 1;
        }
        differences.push(quantile(b, &order_b, &counts) - quantile(a, &order_a, &counts));
    }
    let count = differences.len() as f64;
    let mean = differences.iter().sum::<f64>() / count;
    let variance = differences.iter().map(|d| (d - mean) * (d - mean)).sum::<f64>() / (count - 1.0).max(1.0);
    differences.sort_unstable_by(f64::total_cmp);
    let (low, high) = settings.bound_ranks();
    QuantileDifference {
        n,
        estimate,
        low: differences[low - 1],
        high: differences[high - 1],
        standard_error: variance.sqrt(),
    }
}

/// About how many shared rounds would make a difference of `estimate` with a standard error
/// of `standard_error` at `n` rounds distinguishable at 95 %: the standard error shrinks as
/// 1/√rounds, so `n · (1.96 · se / |estimate|)²`, rounded up. `None` when no difference was
/// observed (no number of rounds is predicted to separate them) or there is no spread.
pub fn rounds_to_separate(n: usize, estimate: f64, standard_error: f64) -> Option<u64> {
    if estimate == 0.0 || standard_error == 0.0 || !estimate.is_finite() || !standard_error.is_finite() {
        return None;
    }
    let ratio = 1.959_963_984_540_054 * standard_error / estimate.abs();
    Some(((n as f64) * ratio * ratio).ceil().max(1.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::percentile::Samples;

    const SETTINGS: Settings = Settings { seed: 20261201, resamples: 2000, confidence: 95 };

    /// The naive bootstrap of the method above: each resample built, sorted and its median
    /// taken; the medians sorted and the bound ranks read.
    fn naive(settings: &Settings, values: &[f64]) -> (f64, f64, f64) {
        let sorted = Samples::new(values.iter().copied());
        let ascending: Vec<f64> = {
            let mut v = values.to_vec();
            v.sort_by(f64::total_cmp);
            v
        };
        let n = values.len();
        let mut rng = stream_for_size(settings.seed, n);
        let mut medians: Vec<f64> = (0..settings.resamples)
            .map(|_| {
                let resample = Samples::new((0..n).map(|_| ascending[rng.multiply_shift(n)]));
                resample.upper(50).unwrap()
            })
            .collect();
        medians.sort_by(f64::total_cmp);
        let (low, high) = settings.bound_ranks();
        (sorted.upper(50).unwrap(), medians[low - 1], medians[high - 1])
    }

    fn differences(n: usize, seed: u64) -> Vec<f64> {
        // Values with ties and both signs, in no particular order.
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| (rng.multiply_shift(41) as f64 - 15.0) * 2.5).collect()
    }

    #[test]
    fn splitmix64_matches_its_published_reference_outputs() {
        // The first outputs of SplitMix64 seeded with 1234567 (the reference C code).
        let mut rng = SplitMix64::new(1234567);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(first, [6457827717110365317, 3203168211198807973, 9817491932198370423]);
    }

    #[test]
    fn the_rank_trick_equals_the_naive_bootstrap_draw_for_draw() {
        for (n, seed) in [(1, 1), (2, 2), (3, 3), (10, 4), (57, 5), (600, 6)] {
            let values = differences(n, seed);
            let table = RankTable::draw(&SETTINGS, n);
            let got = interval(&SETTINGS, &table, &mut values.clone());
            let (estimate, low, high) = naive(&SETTINGS, &values);
            assert_eq!((got.estimate, got.low, got.high), (estimate, low, high), "n = {n}");
            assert!(got.low <= got.estimate && got.estimate <= got.high, "n = {n}: {got:?}");
        }
    }

    #[test]
    fn the_estimate_is_the_nearest_rank_p50_of_the_comparisons() {
        let values = [30.0, -10.0, 20.0, 5.0];
        let table = RankTable::draw(&SETTINGS, 4);
        let got = interval(&SETTINGS, &table, &mut values.clone());
        assert_eq!(Some(got.estimate), Samples::new(values).upper(50));
        assert_eq!(got.estimate, 5.0, "rank ceil(4/2) = 2 of -10, 5, 20, 30");
    }

    #[test]
    fn a_clear_difference_excludes_zero_and_noise_does_not() {
        let mut rng = SplitMix64::new(9);
        let clear: Vec<f64> = (0..300).map(|_| -40.0 + rng.multiply_shift(30) as f64).collect();
        let noise: Vec<f64> = (0..300).map(|_| rng.multiply_shift(61) as f64 - 30.0).collect();
        let table = RankTable::draw(&SETTINGS, 300);
        let a = interval(&SETTINGS, &table, &mut clear.clone());
        assert!(a.high < 0.0 && a.share_below_zero == 1.0, "{a:?}");
        let b = interval(&SETTINGS, &table, &mut noise.clone());
        assert!(b.low < 0.0 && b.high > 0.0, "{b:?}");
        assert!(b.share_below_zero + b.share_above_zero <= 1.0);
    }

    #[test]
    fn shares_count_resamples_on_each_side_of_zero() {
        let values = differences(101, 11);
        let table = RankTable::draw(&SETTINGS, 101);
        let got = interval(&SETTINGS, &table, &mut values.clone());
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let medians: Vec<f64> = table.sorted_ranks.iter().map(|&r| sorted[r as usize]).collect();
        let below = medians.iter().filter(|m| **m < 0.0).count() as f64 / medians.len() as f64;
        let above = medians.iter().filter(|m| **m > 0.0).count() as f64 / medians.len() as f64;
        assert_eq!((got.share_below_zero, got.share_above_zero), (below, above));
    }

    #[test]
    fn bound_ranks_are_the_documented_ones() {
        let s = Settings { seed: 0, resamples: 10_000, confidence: 95 };
        assert_eq!(s.bound_ranks(), (250, 9750));
        let s = Settings { seed: 0, resamples: 999, confidence: 90 };
        assert_eq!(s.bound_ranks(), (50, 950));
        let s = Settings { seed: 0, resamples: 1, confidence: 99 };
        assert_eq!(s.bound_ranks(), (1, 1));
    }

    /// The fast pK (from the top of a counting pass) against resamples built, sorted and
    /// read at their rank, draw for draw.
    #[test]
    fn quantile_difference_matches_the_naive_bootstrap() {
        let settings = Settings { seed: 7, resamples: 300, confidence: 95 };
        let a: Vec<f64> = (0..40).map(|i| ((i * 37) % 41) as f64).collect();
        let b: Vec<f64> = (0..40).map(|i| ((i * 11) % 43) as f64 + 3.0).collect();
        for k in [50, 95, 99] {
            let fast = quantile_difference(&settings, &a, &b, k);
            let mut rng = stream_for_size(settings.seed, a.len());
            let mut naive = Vec::new();
            for _ in 0..settings.resamples {
                let drawn: Vec<usize> = (0..a.len()).map(|_| rng.multiply_shift(a.len())).collect();
                let pk = |v: &[f64]| Samples::new(drawn.iter().map(|&i| v[i])).upper(k).unwrap();
                naive.push(pk(&b) - pk(&a));
            }
            naive.sort_by(f64::total_cmp);
            let (low, high) = settings.bound_ranks();
            assert_eq!((fast.low, fast.high), (naive[low - 1], naive[high - 1]), "p{k}");
            let point =
                Samples::new(b.iter().copied()).upper(k).unwrap() - Samples::new(a.iter().copied()).upper(k).unwrap();
            assert_eq!(fast.estimate, point);
        }
    }

    #[test]
    fn rounds_to_separate_scales_with_the_variance() {
        assert_eq!(rounds_to_separate(100, 10.0, 5.0), Some(97));
        assert_eq!(rounds_to_separate(100, 0.0, 5.0), None);
        assert_eq!(rounds_to_separate(100, 10.0, 0.0), None);
    }
}
