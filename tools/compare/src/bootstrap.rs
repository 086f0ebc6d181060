//! The paired bootstrap, shared with `ib-aggregate`'s rank ranges and API pairs:
//! `inferbench_stats::bootstrap`, with the rule for when its interval may give a verdict at all
//! (`min_pairs`).
pub use inferbench_stats::bootstrap::*;

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
