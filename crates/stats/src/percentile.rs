//! Nearest-rank percentiles in integer arithmetic (DESIGN.md, "Definitions that differ from
//! the reference").
//!
//! - Upper-tail pK (latency, reasoning tokens, paired differences): the sample at 1-based rank
//!   `ceil(K·n/100)` of the ascending samples: the smallest v with at least K% of samples ≤ v.
//! - Lower-tail floor pK (output speed p95/p99): the sample at rank `n − ceil(K·n/100) + 1`:
//!   the largest v with at least K% of samples ≥ v.
//!
//! The reference computes its ranks in floating point: `ceil(q·n)` of the ascending samples,
//! with `q = K/100` for the upper tail and `q = 1 − K/100` (slightly above 0.05 and 0.01) for
//! the lower one. For every n up to 20,000 (a test checks them all) its ranks are these
//! integer ranks exactly: the excess of `1 − 0.95` over 0.05 turns `ceil(0.05·n)` into
//! `floor(0.05·n) + 1` when 0.05·n is an integer, which is what `n − ceil(0.95·n) + 1` is.
//! Integer ranks keep that guarantee for any n ("at least 95% of responses were this fast").
//!
//! `ib-aggregate` computes every percentile of `metrics.json` with it and `ib-watch` its live
//! p50s, so a finished run's live figures are the metrics' figures over the same samples.

use crate::interval::QuantileInterval;
use inferbench_contract::metrics::Column;

/// The ascending samples of one metric.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples(Vec<f64>);

impl Samples {
    /// Sorts `values` ascending. Callers pass finite values only (the join rejects the rest),
    /// so `total_cmp` is the numeric order.
    pub fn new(values: impl IntoIterator<Item = f64>) -> Self {
        let mut sorted: Vec<f64> = values.into_iter().collect();
        sorted.sort_by(f64::total_cmp);
        Samples(sorted)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Upper-tail pK; `None` without samples.
    pub fn upper(&self, k: u64) -> Option<f64> {
        let n = self.0.len() as u64;
        if n == 0 {
            return None;
        }
        let rank = ceil_percent(k, n).max(1);
        Some(self.0[(rank - 1) as usize])
    }

    /// A column of the metric catalogue over these samples: a floor (a higher-is-better
    /// metric's p95 or p99) from the lower tail, any other percentile from the upper one;
    /// `None` without samples, or for a rate.
    pub fn column(&self, column: Column) -> Option<f64> {
        let k = column.percentile?;
        if column.is_floor() {
            self.lower_floor(k)
        } else {
            self.upper(k)
        }
    }

    /// A catalogue column's percentile with its 95 % order-statistic interval
    /// ([`crate::interval`]); `None` without samples, or for a rate. A floor pK estimates the
    /// (100 − K)th percentile, so its interval is that quantile's.
    pub fn column_with_interval(&self, column: Column) -> Option<Estimate> {
        let k = column.percentile?;
        let n = self.0.len() as u64;
        if n == 0 {
            return None;
        }
        let (rank, p) = if column.is_floor() {
            (n - ceil_percent(k, n) + 1, (100 - k) as f64 / 100.0)
        } else {
            (ceil_percent(k, n).max(1), k as f64 / 100.0)
        };
        let at = |rank: u64| self.0[(rank - 1) as usize];
        let interval = match crate::interval::quantile_ranks(n, p, rank) {
            QuantileInterval::Interval(i) => Ok(Bounds {
                lower: at(i.lower_rank),
                upper: at(i.upper_rank),
                lower_rank: i.lower_rank,
                upper_rank: i.upper_rank,
                coverage: i.coverage,
            }),
            QuantileInterval::TooFewSamples { max_coverage } => Err(max_coverage),
        };
        Some(Estimate { value: at(rank), rank, samples: n, interval })
    }

    /// Lower-tail floor pK; `None` without samples.
    pub fn lower_floor(&self, k: u64) -> Option<f64> {
        let n = self.0.len() as u64;
        if n == 0 {
            return None;
        }
        // k ≤ 100 gives ceil(k·n/100) ≤ n, so the rank is at least 1.
        let rank = n - ceil_percent(k, n) + 1;
        Some(self.0[(rank - 1) as usize])
    }
}

/// A percentile with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    /// 1-based rank of `value` in the ascending samples.
    pub rank: u64,
    pub samples: u64,
    /// The interval, or, when the samples are too few for one, the coverage of their whole
    /// range.
    pub interval: Result<Bounds, f64>,
}

/// An interval's bounds (samples at their ranks) and its coverage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub lower: f64,
    pub upper: f64,
    pub lower_rank: u64,
    pub upper_rank: u64,
    pub coverage: f64,
}

/// `ceil(k·n/100)` in integers.
fn ceil_percent(k: u64, n: u64) -> u64 {
    debug_assert!((1..=100).contains(&k), "percentile level {k} outside 1..=100");
    (k * n).div_ceil(100)
}

/// The statistical median (mean of the two middle values for an even count); `None` when empty.
/// Used for the contract diagnostics, where the reference reports a median, not a rank.
pub fn median(values: &[i64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2] as f64),
        _ => Some((sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's rank (seed-runner.md §8.3): 1-based `max(1, ceil(q·n))` in f64.
    fn reference_rank(q: f64, n: u64) -> u64 {
        ((q * n as f64).ceil() as u64).max(1)
    }

    #[test]
    fn the_references_floating_point_ranks_are_the_integer_ranks_up_to_20000() {
        for n in 1..=20_000u64 {
            for k in [50, 95, 99] {
                assert_eq!(reference_rank(k as f64 / 100.0, n), ceil_percent(k, n).max(1), "upper p{k}, n = {n}");
            }
            for k in [95, 99] {
                let floor_rank = n - ceil_percent(k, n) + 1;
                assert_eq!(reference_rank(1.0 - k as f64 / 100.0, n), floor_rank, "lower p{k}, n = {n}");
            }
        }
    }

    fn range(n: u32) -> Samples {
        Samples::new((1..=n).map(f64::from))
    }

    #[test]
    fn upper_p99_of_1_to_100_is_99() {
        assert_eq!(range(100).upper(99), Some(99.0));
    }

    #[test]
    fn upper_p50_of_four_samples_is_the_second() {
        assert_eq!(Samples::new([4.0, 1.0, 3.0, 2.0]).upper(50), Some(2.0));
    }

    #[test]
    fn lower_floors_of_1_to_200_are_11_and_3() {
        // rank 200 − ceil(190) + 1 = 11: 190 samples (95%) are ≥ 11, only 189 are ≥ 12.
        assert_eq!(range(200).lower_floor(95), Some(11.0));
        // rank 200 − ceil(198) + 1 = 3: 198 samples (99%) are ≥ 3.
        assert_eq!(range(200).lower_floor(99), Some(3.0));
    }

    #[test]
    fn lower_floor_p95_of_1_to_199_is_10() {
        // ceil(95·199/100) = ceil(189.05) = 190, rank 199 − 190 + 1 = 10.
        assert_eq!(range(199).lower_floor(95), Some(10.0));
    }

    #[test]
    fn a_catalogue_column_takes_its_tail_from_the_metrics_direction() {
        use inferbench_contract::metrics::{E2E_LATENCY, OUTPUT_TOKENS_PER_SECOND, TASK_SUCCESS};
        let r = range(200);
        assert_eq!(r.column(OUTPUT_TOKENS_PER_SECOND.at(95)), r.lower_floor(95));
        assert_eq!(r.column(OUTPUT_TOKENS_PER_SECOND.at(50)), r.upper(50));
        assert_eq!(r.column(E2E_LATENCY.at(99)), r.upper(99));
        assert_eq!(r.column(TASK_SUCCESS.value()), None);
    }

    #[test]
    fn empty_samples_have_no_percentiles() {
        let none = Samples::new([]);
        assert_eq!(none.upper(50), None);
        assert_eq!(none.lower_floor(95), None);
    }

    #[test]
    fn one_sample_is_every_percentile() {
        let one = Samples::new([7.5]);
        assert_eq!((one.upper(99), one.lower_floor(99), one.upper(50)), (Some(7.5), Some(7.5), Some(7.5)));
    }

    /// Checks both rules against their set definitions for every n up to 300.
    #[test]
    fn ranks_match_the_definitions_for_every_small_n() {
        for n in 1..=300u32 {
            let s = range(n);
            for k in [50u64, 95, 99] {
                let needed = |count: usize| count as u64 * 100 >= k * u64::from(n);
                let upper = (1..=n).map(f64::from).find(|v| needed((1..=n).filter(|x| f64::from(*x) <= *v).count()));
                let floor =
                    (1..=n).rev().map(f64::from).find(|v| needed((1..=n).filter(|x| f64::from(*x) >= *v).count()));
                assert_eq!(s.upper(k), upper, "upper p{k} of 1..={n}");
                assert_eq!(s.lower_floor(k), floor, "floor p{k} of 1..={n}");
            }
        }
    }

    #[test]
    fn median_averages_the_two_middle_values_of_an_even_count() {
        assert_eq!(median(&[10, 9, 8, 10]), Some(9.5));
        assert_eq!(median(&[3, 10, 7]), Some(7.0));
        assert_eq!(median(&[]), None);
    }
}
