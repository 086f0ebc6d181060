//! Numbers as text. Two styles of decimals: [`grouped`] (`3,228.8`: a comma every three
//! integer digits and no sign on a value that rounds to zero, as report.md and report.html
//! print figures) and [`plain`] (`3228.8`, as Rust prints it, as ib-compare's summary and
//! ib-search's report do); and around them what a figure needs: a placeholder when it is
//! missing ([`or`]), a sign ([`sign_shown`], [`plus`]), a percentage, seconds, three significant
//! digits, as few decimals as a value needs, and a bracketed interval.

/// The placeholder of a value that does not exist, in a table or on a page.
pub const DASH: &str = "—";

/// `x` with `decimals` decimals and a comma every three integer digits (`1,234,567.0`). A value
/// that rounds to zero prints without a sign: `-0.0` reads like a real result.
pub fn grouped(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) if rest.chars().any(|c| c.is_ascii_digit() && c != '0') => ("-", rest),
        Some(rest) => ("", rest),
        None => ("", text.as_str()),
    };
    let (int, frac) = digits.split_once('.').map_or((digits, None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(text.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// `x` with `decimals` decimals as Rust prints it: no separators, and the sign of a negative
/// value that rounds to zero kept (`-0.0`).
pub fn plain(x: f64, decimals: usize) -> String {
    format!("{x:.decimals$}")
}

/// [`plain`], with a `+` before a positive value (`+1.5`, and `+0.0` for `0.04`): the sign
/// says which way the value points, however it rounds.
pub fn plus(x: f64, decimals: usize) -> String {
    if x > 0.0 {
        format!("+{}", plain(x, decimals))
    } else {
        plain(x, decimals)
    }
}

/// A shown number with a `+` before it unless it is negative or shows as zero (`+1.50`,
/// `-0.029`, `0.000`): the sign of what the reader sees.
pub fn sign_shown(shown: String) -> String {
    if shown.starts_with('-') || shown.trim_start_matches(['0', '.']).is_empty() {
        shown
    } else {
        format!("+{shown}")
    }
}

/// `show(x)`, or `missing` when there is no value.
pub fn or(x: Option<f64>, missing: &str, show: impl FnOnce(f64) -> String) -> String {
    x.map_or_else(|| missing.to_string(), show)
}

/// A fraction as a percentage, [`grouped`] with `decimals` decimals: `95.83%`.
pub fn percent(fraction: f64, decimals: usize) -> String {
    format!("{}%", grouped(100.0 * fraction, decimals))
}

/// Three significant digits, at most three decimals, [`grouped`]: `7.11`, `15.0`, `0.177`, `123`.
pub fn significant(x: f64) -> String {
    let a = x.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    grouped(x, decimals)
}

/// The fewest decimals (at most three) that show `x` without rounding it: 0 for `20`, 1 for
/// `2.5`, 3 for `0.125` and for anything finer.
pub fn decimals_needed(x: f64) -> usize {
    (0..3)
        .find(|d| {
            let f = (x * 10f64.powi(*d)).fract().abs();
            f.min(1.0 - f) < 1e-6
        })
        .unwrap_or(3) as usize
}

/// [`grouped`] with as many decimals as `x` needs, at most three: a tick label (`2.5`, `1,000`).
pub fn fewest(x: f64) -> String {
    grouped(x, decimals_needed(x))
}

/// Seconds without a needless fraction: `20 s`, `2.5 s`.
pub fn seconds(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{} s", x as i64)
    } else {
        format!("{x} s")
    }
}

/// What stands between the bounds of an [`interval`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Between {
    /// `[1,100.2–1,400.0]`: report.md, where the bounds hold no spaces.
    EnDash,
    /// `[1.02 s – 1.31 s]`: report.html, whose bounds carry their unit.
    SpacedEnDash,
    /// `[-2.0, +3.0]`: ib-compare's summary, whose bounds are signed.
    Comma,
}

/// Two shown bounds as an interval in brackets.
pub fn interval(low: &str, high: &str, between: Between) -> String {
    let separator = match between {
        Between::EnDash => "–",
        Between::SpacedEnDash => " – ",
        Between::Comma => ", ",
    };
    format!("[{low}{separator}{high}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_has_thousands_separators_and_no_negative_zero() {
        assert_eq!(grouped(3228.8, 1), "3,228.8");
        assert_eq!(grouped(17070.74, 1), "17,070.7");
        assert_eq!(grouped(330.8, 1), "330.8");
        assert_eq!(grouped(1234567.0, 1), "1,234,567.0");
        assert_eq!(grouped(-1500.25, 1), "-1,500.2");
        assert_eq!(grouped(-0.04, 1), "0.0");
        assert_eq!(grouped(1234.0, 0), "1,234");
        assert_eq!(grouped(-999.0, 0), "-999");
    }

    #[test]
    fn plain_and_plus_keep_what_rust_prints() {
        assert_eq!((plain(1234.56, 1), plain(-0.04, 1)), ("1234.6".to_string(), "-0.0".to_string()));
        assert_eq!([plus(1.5, 1), plus(0.04, 1), plus(0.0, 1), plus(-2.0, 1)], ["+1.5", "+0.0", "0.0", "-2.0"]);
    }

    #[test]
    fn the_shown_sign_follows_the_text() {
        let signed = |x: f64| sign_shown(significant(x));
        assert_eq!(
            [signed(1.50025), signed(-0.0288), signed(0.0), signed(-0.0001)],
            ["+1.50", "-0.029", "0.000", "0.000"]
        );
    }

    #[test]
    fn percentages_significant_digits_and_seconds() {
        assert_eq!([percent(0.9583333, 2), percent(0.0, 2), percent(1.0, 2)], ["95.83%", "0.00%", "100.00%"]);
        assert_eq!(
            [significant(7.1102), significant(14.97), significant(0.1772), significant(1234.0)],
            ["7.11", "15.0", "0.177", "1,234"]
        );
        assert_eq!((seconds(20.0), seconds(2.5)), ("20 s".to_string(), "2.5 s".to_string()));
        assert_eq!(or(None, DASH, |v| plain(v, 1)), "—");
        assert_eq!(or(Some(2.0), DASH, |v| plain(v, 1)), "2.0");
    }

    #[test]
    fn ticks_take_the_decimals_they_need() {
        assert_eq!(
            [fewest(20.0), fewest(2.5), fewest(0.125), fewest(0.0001), fewest(1000.0)],
            ["20", "2.5", "0.125", "0.000", "1,000"]
        );
    }

    #[test]
    fn intervals_in_each_style() {
        assert_eq!(interval("1", "2", Between::EnDash), "[1–2]");
        assert_eq!(interval("1 s", "2 s", Between::SpacedEnDash), "[1 s – 2 s]");
        assert_eq!(interval("-2.0", "+3.0", Between::Comma), "[-2.0, +3.0]");
    }
}
