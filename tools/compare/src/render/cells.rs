//! A figure as a cell of the summary: plain decimals (no thousands separators, so that a
//! column reads as the Parquet's numbers do), by unit, and `—` for a missing one.
use inferbench_contract::metrics::Unit;
use inferbench_present::number::{self, DASH};

/// The decimals of a value of `unit`: three for a fraction, one for the rest.
pub fn decimals(unit: Unit) -> usize {
    if unit == Unit::Fraction {
        3
    } else {
        1
    }
}

/// A value formatted for its unit, or `—`.
pub fn number(value: Option<f64>, unit: Unit) -> String {
    number::or(value, DASH, |v| number::plain(v, decimals(unit)))
}

/// [`number`] with a `+` before a positive value (a change, a difference).
pub fn signed(value: Option<f64>, unit: Unit) -> String {
    number::or(value, DASH, |v| number::plus(v, decimals(unit)))
}

/// A rate, requests per second, as the tables show it.
pub fn rate(value: Option<f64>) -> String {
    number::or(value, DASH, |v| number::plain(v, 2))
}
