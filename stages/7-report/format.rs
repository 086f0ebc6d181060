//! How figures appear in report.md: fixed decimals with thousands separators (`3,228.8`),
//! rates as percentages with two decimals (`95.83%`), `unavailable` for a missing value, and a
//! figure with its 95 % interval. The styles themselves are the presenter's
//! (`inferbench_present::number`); this says which one each metric column takes.

use inferbench_contract::documents::{ColumnInterval, GroupMetrics};
use inferbench_contract::metrics::{self, Column, Unit};
use inferbench_present::number::{self, grouped, Between};

/// The text shown for a value that does not exist (no samples, empty group).
pub const UNAVAILABLE: &str = "unavailable";

/// A figure with one decimal, or `unavailable`.
pub fn figure(x: Option<f64>) -> String {
    number::or(x, UNAVAILABLE, |v| grouped(v, 1))
}

/// A fraction as a percentage with two decimals, or `unavailable`.
pub fn percent(x: Option<f64>) -> String {
    number::or(x, UNAVAILABLE, |v| number::percent(v, 2))
}

/// `population/total`.
pub fn coverage(population: i64, total: i64) -> String {
    format!("{population}/{total}")
}

/// One of the spec's required metric columns, by its unit in the metric catalogue: rates as
/// percentages, token counts as whole numbers, times and speeds with one decimal.
pub fn column(name: &str, x: Option<f64>) -> String {
    metrics::column(name).map_or_else(|| figure(x), |c| value(c, x))
}

/// A column of the catalogue's value, as [`column`] shows it.
pub fn value(column: Column, x: Option<f64>) -> String {
    match column.metric.unit {
        Unit::Fraction => percent(x),
        Unit::Tokens => number::or(x, UNAVAILABLE, |v| grouped(v, 0)),
        Unit::Ms | Unit::TokensPerSecond => figure(x),
    }
}

/// What the brackets and the dagger of [`with_interval`] mean, for a table's note.
pub const INTERVAL_NOTE: &str = "Brackets hold each figure's 95 % confidence interval: for a percentile, the \
distribution-free interval between two order statistics of the samples; for a rate, the Wilson score interval. \
† marks a percentile whose samples are too few for any 95 % interval (a p99 of fewer than 299 samples, a p95 of \
fewer than 59, a median of fewer than 6): it is only the sample at its rank, e.g. a p99 of 18 samples is their \
maximum.";

/// A figure of `row` with its 95 % interval, `1,234.5 [1,100.2–1,400.0]`, or marked `†` when
/// its samples are too few for one; the bare figure when it has no interval (or is null).
pub fn with_interval(row: &GroupMetrics, column: Column) -> String {
    let shown = value(column, row.value(column));
    match row.interval(column) {
        Some(ColumnInterval::Bounds { lower, upper }) => {
            let (lower, upper) = (value(column, Some(lower)), value(column, Some(upper)));
            format!("{shown} {}", number::interval(&lower, &upper, Between::EnDash))
        }
        Some(ColumnInterval::TooFewSamples(_)) => format!("{shown}†"),
        None => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_have_one_decimal_and_thousands_separators() {
        assert_eq!(figure(Some(3228.8)), "3,228.8");
        assert_eq!(figure(Some(-0.04)), "0.0");
        assert_eq!(figure(None), "unavailable");
    }

    #[test]
    fn rates_are_percentages_with_two_decimals() {
        assert_eq!(percent(Some(0.9583333)), "95.83%");
        assert_eq!(percent(None), "unavailable");
        use inferbench_contract::metrics::{FAILURE, PRE_ANSWER_REASONING_TOKENS, TTFA};
        assert_eq!(column(&FAILURE.value().key(), Some(0.1483)), "14.83%");
        assert_eq!(column(&PRE_ANSWER_REASONING_TOKENS.at(99).key(), Some(1234.0)), "1,234");
        assert_eq!(column(&TTFA.at(50).key(), Some(1151.66)), "1,151.7");
    }
}
