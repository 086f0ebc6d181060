//! A meeting's document-wide facts: who attends in which role, the date, the conventions its
//! notes write dates and money in, and the domain's titles filled in. A topic draws its dates,
//! numbers and vendors here, fresh, so no two topics of one document share a value, writes a
//! value the way the notes do, and poses its question with what the answer-once check needs.
use super::vocab::{Domain, MetricKind};
use super::{strip_the, Format, Kind, Meeting, Question, Value};
use crate::dates::{Date, Style};
use crate::names;
use crate::pools::{
    cap, money, money_aliases, number_aliases, percent_aliases, thousands, words, Currency, MoneyStyle, Vars,
};
use inferbench_stats::rng::SplitMix64;

const BODY_STYLES: &[Style] = &[
    Style::DayMonthYear,
    Style::MonthDayYear,
    Style::DayMonth,
    Style::MonthDay,
    Style::WeekdayDayMonth,
    Style::WeekdayMonthDay,
    Style::DayMonthYear,
    Style::MonthDayYear,
    Style::DayMon,
    Style::MonDay,
];

impl Meeting {
    pub(super) fn new(d: &'static Domain, format: Format, rng: &mut SplitMix64) -> Meeting {
        let n = rng.range(4, 7) as usize;
        let people = names::people(rng, n, &[]);
        let outsiders = names::people(rng, 4, &people);
        let roles: Vec<String> = rng.sample(d.roles, n).into_iter().map(str::to_string).collect();
        let date =
            Date::new(rng.range(2024, 2027) as i32, rng.range(1, 12) as u32, rng.range(1, 28) as u32).working_day();
        let team = rng.pick(d.teams).to_string();
        let product = rng.pick(d.products).to_string();
        let mut titles: Vec<String> = d
            .titles
            .iter()
            .map(|t| {
                cap(&Vars::new().with("team", team.clone()).with("product", strip_the(&product).to_string()).fill(t))
            })
            .collect();
        rng.shuffle(&mut titles);
        let notetaker = rng.range(1, n as i64 - 1) as usize;
        Meeting {
            d,
            format,
            people,
            roles,
            chair: 0,
            notetaker,
            outsiders,
            date,
            body_style: *rng.pick(BODY_STYLES),
            cur: *rng.pick(&[
                Currency::Usd,
                Currency::Usd,
                Currency::Eur,
                Currency::Gbp,
                Currency::Eur,
                Currency::Cad,
                Currency::Aud,
                Currency::Sgd,
            ]),
            money_style: *rng.pick(&[
                MoneyStyle::Symbol,
                MoneyStyle::Symbol,
                MoneyStyle::Symbol,
                MoneyStyle::Word,
                MoneyStyle::CodeFirst,
            ]),
            team,
            product,
            titles,
            used_dates: vec![date],
            used_nums: vec![],
            used_vendors: vec![],
        }
    }

    pub(super) fn first(&self, i: usize) -> String {
        self.people[i].first.clone()
    }

    pub(super) fn full(&self, i: usize) -> String {
        self.people[i].full()
    }

    /// A working day `lo..=hi` days from the meeting, not used before in this document.
    pub(super) fn fresh_date(&mut self, rng: &mut SplitMix64, lo: i64, hi: i64) -> Date {
        loop {
            let d = self.date.add_days(rng.range(lo, hi)).working_day();
            if !self.used_dates.contains(&d) {
                self.used_dates.push(d);
                return d;
            }
        }
    }

    /// A number in `lo..=hi`, a multiple of `step`, not used before in this document.
    pub(super) fn fresh_num(&mut self, rng: &mut SplitMix64, lo: u64, hi: u64, step: u64) -> u64 {
        let lo_s = lo.div_ceil(step).max(1);
        let hi_s = (hi / step).max(lo_s);
        for _ in 0..100 {
            let n = rng.range(lo_s as i64, hi_s as i64) as u64 * step;
            if !self.used_nums.contains(&n) {
                self.used_nums.push(n);
                return n;
            }
        }
        let n = (hi_s + 1 + self.used_nums.len() as u64) * step;
        self.used_nums.push(n);
        n
    }

    /// A vendor company named for a line of business, not used before in this document.
    pub(super) fn vendor(&mut self, rng: &mut SplitMix64, line: &str) -> String {
        loop {
            let v = names::company(rng, &[line], false);
            let stem = v.split(' ').next().unwrap_or("").to_string();
            if !self.used_vendors.iter().any(|u| u.starts_with(&stem)) {
                self.used_vendors.push(v.clone());
                return v;
            }
        }
    }

    pub(super) fn ds(&self, d: Date) -> String {
        d.fmt(self.body_style)
    }

    pub(super) fn month_first(&self) -> bool {
        matches!(self.body_style, Style::MonthDayYear | Style::MonthDay | Style::MonDay | Style::WeekdayMonthDay)
    }

    /// `k` distinct attendees not in `not`; the chair fills in when the meeting is small.
    pub(super) fn some(&self, rng: &mut SplitMix64, k: usize, not: &[usize]) -> Vec<usize> {
        let pool: Vec<usize> = (0..self.people.len()).filter(|i| !not.contains(i)).collect();
        let mut out = rng.sample(&pool, k);
        let extra: Vec<usize> = (0..self.people.len()).filter(|i| !out.contains(i)).collect();
        out.extend(extra.into_iter().take(k.saturating_sub(out.len())));
        assert!(out.len() == k, "not enough attendees");
        out
    }

    /// Template slots: `{A}`..`{E}` first names, `{A_full}`.. full names, and the meeting's.
    pub(super) fn vars(&self, who: &[usize]) -> Vars {
        const SLOTS: [(&str, &str); 5] =
            [("A", "A_full"), ("B", "B_full"), ("C", "C_full"), ("D", "D_full"), ("E", "E_full")];
        let mut v = Vars::new()
            .with("team", self.team.clone())
            .with("product", self.product.clone())
            .with("chair", self.first(self.chair));
        for (&(slot, slot_full), &i) in SLOTS.iter().zip(who) {
            v.set(slot, self.first(i));
            v.set(slot_full, self.full(i));
        }
        v
    }

    pub(super) fn value(&self, kind: MetricKind, n: u64) -> Value {
        let tenths = |n: u64| {
            if n.is_multiple_of(10) {
                (n / 10).to_string()
            } else {
                format!("{}.{}", n / 10, n % 10)
            }
        };
        let plain = (n >= 1000).then(|| n.to_string());
        match kind {
            MetricKind::Percent => {
                let w = format!("{n}%");
                Value {
                    aliases: percent_aliases(&n.to_string(), &w),
                    written: w.clone(),
                    gold: w.clone(),
                    core: w,
                    plain: None,
                }
            }
            MetricKind::PercentTenths => {
                let s = tenths(n);
                let w = format!("{s}%");
                Value { aliases: percent_aliases(&s, &w), written: w.clone(), gold: w.clone(), core: w, plain: None }
            }
            MetricKind::Count(unit) => {
                let s = thousands(n);
                let u = unit.trim();
                Value {
                    written: format!("{s}{unit}"),
                    aliases: number_aliases(n, (!u.is_empty()).then_some(u), &s),
                    gold: s.clone(),
                    core: s,
                    plain,
                }
            }
            MetricKind::Money => {
                let w = money(n, self.cur, self.money_style);
                Value {
                    aliases: money_aliases(n, self.cur, &w),
                    written: w.clone(),
                    gold: w,
                    core: thousands(n),
                    plain,
                }
            }
            MetricKind::HoursTenths => {
                let s = tenths(n);
                let w = format!("{s} hours");
                Value {
                    aliases: vec![s.clone(), format!("{s} h"), format!("{s} hrs"), format!("{s}h")],
                    written: w.clone(),
                    gold: w,
                    core: s,
                    plain: None,
                }
            }
            MetricKind::Minutes => {
                let w = format!("{n} minutes");
                let mut aliases = vec![n.to_string(), format!("{n} min"), format!("{n} mins")];
                if n < 100 {
                    aliases.push(format!("{} minutes", words(n as u32)));
                }
                Value { written: w.clone(), gold: w, core: n.to_string(), aliases, plain: None }
            }
            MetricKind::Millis => {
                let w = format!("{n} ms");
                Value {
                    aliases: vec![n.to_string(), format!("{n}ms"), format!("{n} milliseconds")],
                    written: w.clone(),
                    gold: w,
                    core: n.to_string(),
                    plain: None,
                }
            }
            MetricKind::Days => {
                let w = format!("{n} days");
                let mut aliases = vec![n.to_string()];
                if n < 100 {
                    aliases.push(format!("{} days", words(n as u32)));
                }
                Value { written: w.clone(), gold: w, core: n.to_string(), aliases, plain: None }
            }
        }
    }

    /// A fresh value of a kind in `lo..=hi`, on a round step for its size.
    pub(super) fn fresh_value(&mut self, rng: &mut SplitMix64, kind: MetricKind, lo: u64, hi: u64) -> (u64, Value) {
        let step = match kind {
            MetricKind::Money if hi >= 20_000 => 500,
            MetricKind::Money if hi >= 2_000 => 100,
            MetricKind::Money if hi >= 300 => 25,
            MetricKind::Money => 5,
            MetricKind::Count(_) if hi >= 20_000 => 1000,
            MetricKind::Count(_) if hi >= 2_000 => 50,
            MetricKind::Count(_) if hi >= 300 => 5,
            _ => 1,
        };
        let n = self.fresh_num(rng, lo, hi, step);
        (n, self.value(kind, n))
    }

    pub(super) fn q_person(&self, i: usize, text: String, kind: Kind) -> Question {
        Question {
            text,
            gold: self.full(i),
            aliases: self.people[i].aliases(),
            once: None,
            never: vec![],
            present: Some(self.full(i)),
            digits: None,
            kind,
        }
    }

    pub(super) fn q_date(&self, d: Date, text: String, kind: Kind) -> Question {
        let gold = self.ds(d);
        Question {
            aliases: d.aliases(&gold),
            once: Some(gold.clone()),
            gold,
            text,
            never: vec![],
            present: None,
            digits: None,
            kind,
        }
    }

    pub(super) fn q_value(&self, v: &Value, text: String, kind: Kind) -> Question {
        Question {
            text,
            gold: v.gold.clone(),
            aliases: v.aliases.clone(),
            once: Some(v.core.clone()),
            never: v.plain.iter().cloned().collect(),
            present: None,
            digits: {
                let core = v.gold.trim_start_matches(|c: char| !c.is_ascii_digit());
                let core: String = core.chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.').collect();
                Some(core.trim_end_matches(['.', ',']).to_string())
            },
            kind,
        }
    }
}
