//! How figures appear in the report: fixed decimals with thousands separators (`3,228.8`),
//! rates as percentages with two decimals (`95.83%`), `unavailable` for a missing value, and
//! GitHub pipe tables whose cells cannot break the table.

use inferbench_contract::documents::{ColumnInterval, GroupMetrics};
use inferbench_contract::metrics::{self, Column, Unit};

/// The text shown for a value that does not exist (no samples, empty group).
pub const UNAVAILABLE: &str = "unavailable";

/// `x` with `decimals` decimals and a comma every three integer digits.
pub fn fixed(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let (sign, digits) = match text.strip_prefix('-') {
        // A value that rounds to zero prints without a sign ("-0.0" reads like a real result).
        Some(rest) if rest.chars().any(|c| c.is_ascii_digit() && c != '0') => ("-", rest),
        Some(rest) => ("", rest),
        None => ("", text.as_str()),
    };
    let (int, frac) = digits.split_once('.').map_or((digits, None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A figure with one decimal, or `unavailable`.
pub fn figure(x: Option<f64>) -> String {
    x.map_or_else(|| UNAVAILABLE.to_string(), |v| fixed(v, 1))
}

/// A fraction as a percentage with two decimals, or `unavailable`.
pub fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| UNAVAILABLE.to_string(), |v| format!("{}%", fixed(100.0 * v, 2)))
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
        Unit::Tokens => x.map_or_else(|| UNAVAILABLE.to_string(), |v| fixed(v, 0)),
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
            format!("{shown} [{}–{}]", value(column, Some(lower)), value(column, Some(upper)))
        }
        Some(ColumnInterval::TooFewSamples(_)) => format!("{shown}†"),
        None => shown,
    }
}

/// Seconds without a needless fraction: `20 s`, `2.5 s`.
pub fn seconds(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{} s", x as i64)
    } else {
        format!("{x} s")
    }
}

/// A GitHub pipe table.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Self {
        Table { headers: headers.iter().map(|h| h.as_ref().to_string()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.headers.len(), "a row must fill every column");
        self.rows.push(cells);
    }

    /// The table's lines. An empty table gets one row of `—`, so it still renders as a table.
    pub fn lines(&self) -> Vec<String> {
        let line =
            |cells: &[String]| format!("| {} |", cells.iter().map(|c| escape(c)).collect::<Vec<_>>().join(" | "));
        let mut out = vec![line(&self.headers), format!("|{}", "---|".repeat(self.headers.len()))];
        if self.rows.is_empty() {
            out.push(line(&vec!["—".to_string(); self.headers.len()]));
        }
        out.extend(self.rows.iter().map(|r| line(r)));
        out
    }
}

/// A cell's text with the characters that would end a cell or a row neutralised (a provider
/// label containing `|` must not shift the columns).
fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_have_one_decimal_and_thousands_separators() {
        assert_eq!(figure(Some(3228.8)), "3,228.8");
        assert_eq!(figure(Some(17070.74)), "17,070.7");
        assert_eq!(figure(Some(330.8)), "330.8");
        assert_eq!(figure(Some(1234567.0)), "1,234,567.0");
        assert_eq!(figure(Some(-1500.25)), "-1,500.2");
        assert_eq!(figure(Some(-0.04)), "0.0");
        assert_eq!(figure(None), "unavailable");
    }

    #[test]
    fn rates_are_percentages_with_two_decimals() {
        assert_eq!(percent(Some(0.9583333)), "95.83%");
        assert_eq!(percent(Some(0.0)), "0.00%");
        assert_eq!(percent(Some(1.0)), "100.00%");
        use inferbench_contract::metrics::{FAILURE, PRE_ANSWER_REASONING_TOKENS, TTFA};
        assert_eq!(column(&FAILURE.value().key(), Some(0.1483)), "14.83%");
        assert_eq!(column(&PRE_ANSWER_REASONING_TOKENS.at(99).key(), Some(1234.0)), "1,234");
        assert_eq!(column(&TTFA.at(50).key(), Some(1151.66)), "1,151.7");
    }

    #[test]
    fn tables_escape_pipes_and_never_render_empty() {
        let mut t = Table::new(&["A", "B"]);
        assert_eq!(t.lines(), vec!["| A | B |", "|---|---|", "| — | — |"]);
        t.row(vec!["x|y".into(), "z".into()]);
        assert_eq!(t.lines()[2], "| x\\|y | z |");
    }

    #[test]
    fn seconds_drop_a_zero_fraction() {
        assert_eq!((seconds(20.0), seconds(2.5)), ("20 s".to_string(), "2.5 s".to_string()));
    }
}
