//! The paired bootstrap, shared with `ib-aggregate`'s rank ranges: `inferbench_stats::bootstrap`;
//! and the rule for when its interval may give a verdict at all, which is ib-compare's.
pub use inferbench_stats::bootstrap::*;

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

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: Settings = Settings { seed: 20261201, resamples: 2000, confidence: 95 };

    #[test]
    fn a_verdict_needs_enough_pairs_for_min_to_max_to_cover_the_median() {
        assert_eq!(min_pairs(95), 6);
        assert_eq!(min_pairs(99), 8);
        assert_eq!(min_pairs(90), 5);
        assert_eq!(min_pairs(50), 2);
        for c in 1..=99u32 {
            let n = min_pairs(c) as i32;
            let coverage = |n: i32| 1.0 - 2.0 * 0.5f64.powi(n);
            assert!(coverage(n) >= f64::from(c) / 100.0 && coverage(n - 1) < f64::from(c) / 100.0, "c = {c}");
        }
        // At n = 3 the interval is at best [min, max], a 75 % interval: it does exclude zero
        // here, and that is why a verdict would overstate it.
        let table = RankTable::draw(&SETTINGS, 3);
        let got = interval(&SETTINGS, &table, &mut [-30.0, -20.0, -10.0]);
        assert!(got.high < 0.0, "{got:?}");
    }
}
