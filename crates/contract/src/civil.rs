//! Civil (proleptic Gregorian, UTC) dates and the days since the Unix epoch, both ways, by
//! Howard Hinnant's algorithms (`days_from_civil`, `civil_from_days`): exact for every date
//! an i64 of days can hold, with no time-zone database and no dependency.

/// Days from 1970-01-01 to `year-month-day` (negative before it). `month` is 1–12 and `day`
/// 1–31; the date is not checked (see [`is_date`]).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The `(year, month, day)` `days` after 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Whether `year-month-day` is a real date (February 29th only in leap years).
pub fn is_date(year: i64, month: i64, day: i64) -> bool {
    (1..=12).contains(&month) && day >= 1 && civil_from_days(days_from_civil(year, month, day)) == (year, month, day)
}

/// UTC `YYYY-MM-DDTHH:MM:SS.mmmZ` of nanoseconds since the Unix epoch.
pub fn utc_millis(unix_ns: u64) -> String {
    let secs = (unix_ns / 1_000_000_000) as i64;
    let millis = (unix_ns / 1_000_000) % 1000;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc_millis(951_782_400_123_000_000), "2000-02-29T00:00:00.123Z");
        assert_eq!(utc_millis(1_795_973_310_855_865_115), "2026-11-29T17:28:30.855Z");
    }

    #[test]
    fn the_two_conversions_are_inverse_over_centuries() {
        for days in (-800_000..800_000).step_by(97) {
            let (y, m, d) = civil_from_days(days);
            assert!(is_date(y, m, d), "{y}-{m}-{d}");
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(1994, 11, 6), 9_075);
        assert!(is_date(2000, 2, 29) && is_date(2024, 2, 29));
        assert!(!is_date(1900, 2, 29) && !is_date(2026, 2, 29) && !is_date(2026, 4, 31) && !is_date(2026, 13, 1));
    }
}
