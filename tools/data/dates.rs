//! Calendar dates: real proleptic-Gregorian arithmetic (leap years, month ends), weekdays,
//! and the spellings a date takes in meeting notes and contracts.
//!
//! Gold dates are computed here and then rendered into the text, never the other way round,
//! so a contract's stated term end and the gold `initial_term_end_date` cannot disagree.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub y: i32,
    pub m: u32,
    pub d: u32,
}

pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

pub fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        _ => 28,
    }
}

/// How a date is spelled. Each document picks one body style and keeps it, as people do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// 3 March 2026
    DayMonthYear,
    /// March 3, 2026
    MonthDayYear,
    /// 3 March
    DayMonth,
    /// March 3
    MonthDay,
    /// 3 Mar
    DayMon,
    /// Mar 3
    MonDay,
    /// Tuesday 3 March
    WeekdayDayMonth,
    /// Tuesday, March 3
    WeekdayMonthDay,
}

impl Date {
    pub fn new(y: i32, m: u32, d: u32) -> Date {
        assert!((1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m));
        Date { y, m, d }
    }

    /// Days since 1970-01-01.
    pub fn to_days(self) -> i64 {
        inferbench_contract::civil::days_from_civil(i64::from(self.y), i64::from(self.m), i64::from(self.d))
    }

    pub fn from_days(z: i64) -> Date {
        let (y, m, d) = inferbench_contract::civil::civil_from_days(z);
        Date { y: y as i32, m: m as u32, d: d as u32 }
    }

    pub fn add_days(self, n: i64) -> Date {
        Date::from_days(self.to_days() + n)
    }

    /// Calendar months later, clamped to the month's end (31 January + 1 month = 28/29 February).
    pub fn add_months(self, n: i32) -> Date {
        let total = self.y * 12 + self.m as i32 - 1 + n;
        let (y, m) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        Date::new(y, m, self.d.min(days_in_month(y, m)))
    }

    /// The last day of the term that starts on `self` and lasts `months` calendar months:
    /// 1 January 2025 + 12 months ends 31 December 2025; 15 September 2025 ends 14 September 2026.
    /// Contracts start on days 1-28 only, where this has no month-end ambiguity.
    pub fn term_end(self, months: i32) -> Date {
        self.add_months(months).add_days(-1)
    }

    /// 0 = Monday.
    pub fn weekday(self) -> usize {
        // 1970-01-01 was a Thursday (index 3).
        (self.to_days() + 3).rem_euclid(7) as usize
    }

    pub fn is_weekend(self) -> bool {
        self.weekday() >= 5
    }

    /// The next weekday on or after this date: meetings and deadlines fall on working days.
    pub fn working_day(self) -> Date {
        let mut d = self;
        while d.is_weekend() {
            d = d.add_days(1);
        }
        d
    }

    pub fn month_name(self) -> &'static str {
        MONTHS[self.m as usize - 1]
    }

    fn mon(self) -> &'static str {
        &self.month_name()[..3]
    }

    pub fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.y, self.m, self.d)
    }

    pub fn fmt(self, style: Style) -> String {
        let (d, month, y) = (self.d, self.month_name(), self.y);
        let wd = WEEKDAYS[self.weekday()];
        match style {
            Style::DayMonthYear => format!("{d} {month} {y}"),
            Style::MonthDayYear => format!("{month} {d}, {y}"),
            Style::DayMonth => format!("{d} {month}"),
            Style::MonthDay => format!("{month} {d}"),
            Style::DayMon => format!("{d} {}", self.mon()),
            Style::MonDay => format!("{} {d}", self.mon()),
            Style::WeekdayDayMonth => format!("{wd} {d} {month}"),
            Style::WeekdayMonthDay => format!("{wd}, {month} {d}"),
        }
    }

    /// Every other spelling a reader may reasonably give for this date, `written` excluded:
    /// ISO, with and without the year, day-first and month-first, abbreviated and ordinal.
    pub fn aliases(self, written: &str) -> Vec<String> {
        let (d, month, mon, y) = (self.d, self.month_name(), self.mon(), self.y);
        let ord = ordinal(d);
        let wd = WEEKDAYS[self.weekday()];
        let all = [
            self.iso(),
            format!("{d} {month} {y}"),
            format!("{month} {d}, {y}"),
            format!("{month} {d} {y}"),
            format!("{d} {mon} {y}"),
            format!("{mon} {d}, {y}"),
            format!("{d} {month}"),
            format!("{month} {d}"),
            format!("{ord} {month}"),
            format!("{month} {ord}"),
            format!("{ord} {month} {y}"),
            format!("{month} {ord}, {y}"),
            format!("{d} {mon}"),
            format!("{mon} {d}"),
            format!("{wd} {d} {month}"),
            format!("{wd}, {month} {d}"),
            format!("{wd}, {d} {month} {y}"),
            format!("{wd}, {month} {d}, {y}"),
        ];
        let mut out: Vec<String> = Vec::new();
        for a in all {
            if a != written && !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }
}

pub fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_round_trip_across_leap_years() {
        for z in -800_000..800_000i64 {
            if z % 997 == 0 {
                assert_eq!(Date::from_days(z).to_days(), z);
            }
        }
        assert_eq!(Date::new(1970, 1, 1).to_days(), 0);
        assert_eq!(Date::new(2024, 2, 28).add_days(1), Date::new(2024, 2, 29));
        assert_eq!(Date::new(2025, 2, 28).add_days(1), Date::new(2025, 3, 1));
    }

    #[test]
    fn terms_end_the_day_before_the_anniversary() {
        assert_eq!(Date::new(2025, 1, 1).term_end(12), Date::new(2025, 12, 31));
        assert_eq!(Date::new(2025, 9, 15).term_end(12), Date::new(2026, 9, 14));
        assert_eq!(Date::new(2024, 2, 1).term_end(1), Date::new(2024, 2, 29));
        assert_eq!(Date::new(2026, 11, 1).term_end(36), Date::new(2029, 10, 31));
    }

    #[test]
    fn weekdays_and_spellings() {
        let d = Date::new(2026, 3, 3);
        assert_eq!(WEEKDAYS[d.weekday()], "Tuesday");
        assert_eq!(d.fmt(Style::MonthDayYear), "March 3, 2026");
        assert_eq!(d.fmt(Style::WeekdayDayMonth), "Tuesday 3 March");
        assert_eq!(d.iso(), "2026-03-03");
        assert!(d.aliases("3 March 2026").contains(&"2026-03-03".to_string()));
        assert!(!d.aliases("3 March 2026").contains(&"3 March 2026".to_string()));
        assert_eq!(ordinal(22), "22nd");
        assert_eq!(ordinal(13), "13th");
    }
}
