//! Meeting notes with one question whose answer (a person, a date or a number) the notes
//! state once.
//!
//! A document is composed, not filled in: a domain (whose nouns it uses), a format
//! (numbered minutes, terse bullet notes, an edited transcript, an e-mail recap, or a
//! round-table grouped by speaker), an attendee list drawn from many naming cultures, and
//! three to seven topics picked from a dozen kinds (ownership, rescheduling, budget,
//! metrics, hiring, vendor quotes, incidents, escalations, training, policy changes,
//! dependencies, other business), each with its own phrasing variants. Every topic decides
//! its facts first and states them as [`Stmt`]s that carry a prose form (minutes, bullets,
//! e-mail, round-table) and a spoken form (transcript). Each topic also carries its own
//! distractors: the date an event was moved *from*, the headcount *requested* next to the
//! one approved, the reviewer next to the owner.
//!
//! One topic is the target and asks the question. After rendering, the answer must occur
//! exactly once in the notes (a date string once, a number once as a standalone number);
//! otherwise the attempt is discarded and the next one drawn, deterministically.
use crate::dates::{Date, Style};
use crate::item::{Generated, UserBand};
use crate::meeting_vocab::{Domain, MetricKind, DOMAINS};
use crate::names::{self, Person};
use crate::pools::{
    and_list, cap, money, money_aliases, number_aliases, percent_aliases, standalone_count, thousands, words, Currency,
    MoneyStyle, Vars, CITIES,
};
use crate::rounds::rounds;
use inferbench_judge::tokenizer;
use inferbench_sim::rng::{key, SplitMix64};
use serde_json::json;

const FAMILY: &str = "meeting-notes-lookup";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Person,
    Date,
    Number,
}

impl Answer {
    fn gold(self) -> &'static str {
        match self {
            Answer::Person => "person",
            Answer::Date => "date",
            Answer::Number => "number",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Minutes,
    Bullets,
    Transcript,
    Email,
    RoundTable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ownership,
    Reschedule,
    Budget,
    Metrics,
    Hiring,
    Vendor,
    Incident,
    Escalation,
    Training,
    Policy,
    Dependency,
    OtherBusiness,
}

const KINDS: [Kind; 12] = [
    Kind::Ownership,
    Kind::Reschedule,
    Kind::Budget,
    Kind::Metrics,
    Kind::Hiring,
    Kind::Vendor,
    Kind::Incident,
    Kind::Escalation,
    Kind::Training,
    Kind::Policy,
    Kind::Dependency,
    Kind::OtherBusiness,
];

impl Kind {
    /// The answer types this kind of topic can ask about.
    fn answers(self) -> &'static [Answer] {
        use Answer::*;
        match self {
            Kind::Ownership => &[Person, Date],
            Kind::Reschedule => &[Date, Number, Person],
            Kind::Budget => &[Number, Person],
            Kind::Metrics => &[Number],
            Kind::Hiring => &[Number, Date, Person],
            Kind::Vendor => &[Date, Number],
            Kind::Incident => &[Number, Person, Date],
            Kind::Escalation => &[Number, Person, Date],
            Kind::Training => &[Number, Date, Person],
            Kind::Policy => &[Number, Person, Date],
            Kind::Dependency => &[Date, Person, Number],
            Kind::OtherBusiness => &[Person],
        }
    }
}

/// Generates `n` meeting-notes items.
pub fn generate(seed: u64, n: usize, band: UserBand) -> Vec<Generated> {
    let answers = rounds(seed, "meeting/answer", &[(Answer::Person, 1), (Answer::Date, 1), (Answer::Number, 1)], n);
    let formats = rounds(
        seed,
        "meeting/format",
        &[
            (Format::Minutes, 2),
            (Format::Bullets, 1),
            (Format::Transcript, 1),
            (Format::Email, 1),
            (Format::RoundTable, 1),
        ],
        n,
    );
    let domains: Vec<(usize, usize)> = (0..DOMAINS.len()).map(|d| (d, 1)).collect();
    let domains = rounds(seed, "meeting/domain", &domains, n);
    (0..n).map(|i| item(seed, i, answers[i], formats[i], domains[i], band)).collect()
}

fn item(seed: u64, index: usize, answer: Answer, format: Format, domain: usize, band: UserBand) -> Generated {
    for attempt in 0..400u64 {
        let mut rng = SplitMix64::derive(seed, &[key(FAMILY), index as u64, attempt]);
        let mut m = Meeting::new(&DOMAINS[domain], format, &mut rng);
        let doc = m.compose(answer, &mut rng);
        let Some((user, q)) = doc.fit(&m, band, &mut rng) else {
            continue;
        };
        return Generated {
            user,
            gold: json!({"type": answer.gold(), "value": q.gold}),
            aliases: q.aliases.clone(),
            tags: vec![
                format!("answer:{}", answer.gold()),
                format!("format:{format:?}"),
                format!("domain:{domain}"),
                format!("topic:{:?}", q.kind),
            ],
        };
    }
    panic!("meeting {index}: no rendering satisfies the band {band:?} and the answer-once rule");
}

/// One sentence of the notes, in the two registers a format may need.
#[derive(Debug, Clone)]
struct Stmt {
    /// The attendee who says it, or whose update it is.
    who: usize,
    /// Third person: minutes, bullets, e-mail, round-table.
    prose: String,
    /// First person, spoken by `who`: transcripts.
    spoken: String,
}

#[derive(Debug, Clone)]
struct Action {
    who: usize,
    task: String,
}

#[derive(Debug, Clone)]
struct Question {
    text: String,
    gold: String,
    aliases: Vec<String>,
    /// The literal that must occur exactly once in the notes (dates and numbers).
    once: Option<String>,
    /// Other spellings of the same value that must not occur at all ("7500" for "7,500").
    never: Vec<String>,
    /// For people: the full name, which must occur.
    present: Option<String>,
    /// For numbers: the digits of the gold ("12" of "12%"), which must stand alone once,
    /// so that no date or other value shares them.
    digits: Option<String>,
    kind: Kind,
}

#[derive(Debug, Clone)]
struct Topic {
    /// Set by [`Meeting::topic`]; the literals carry a placeholder.
    kind: Kind,
    heading: String,
    stmts: Vec<Stmt>,
    actions: Vec<Action>,
    decision: Option<String>,
    question: Option<Question>,
}

/// A value as the notes write it, with what the gold and the checks need.
#[derive(Debug, Clone)]
struct Value {
    /// In running text: "$7,500", "9,800 tickets a month", "12%".
    written: String,
    /// The gold answer: the value as written, the unit dropped for plain counts.
    gold: String,
    /// What must stand alone exactly once in the notes.
    core: String,
    aliases: Vec<String>,
    /// The unseparated digits of a value with a thousands separator, which must not occur.
    plain: Option<String>,
}

/// Document-wide facts and choices.
struct Meeting {
    d: &'static Domain,
    format: Format,
    people: Vec<Person>,
    roles: Vec<String>,
    chair: usize,
    notetaker: usize,
    /// People mentioned but not present (vendors' contacts, colleagues from other teams).
    outsiders: Vec<Person>,
    date: Date,
    body_style: Style,
    cur: Currency,
    money_style: MoneyStyle,
    team: String,
    product: String,
    /// The domain's titles filled in, in this meeting's order of preference.
    titles: Vec<String>,
    used_dates: Vec<Date>,
    used_nums: Vec<u64>,
    used_vendors: Vec<String>,
}

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

/// "Larkspur Labs'" but "Isola Cloud's".
fn possessive(name: &str) -> String {
    if name.ends_with('s') {
        format!("{name}'")
    } else {
        format!("{name}'s")
    }
}

/// "Travel budget", but "Events budget" for "the events budget" (no "budget budget").
fn budget_heading(item: &str) -> String {
    let item = strip_the(item);
    if item.ends_with("budget") {
        item.to_string()
    } else {
        format!("{item} budget")
    }
}

fn strip_the(s: &str) -> &str {
    s.strip_prefix("the ").unwrap_or(s)
}

impl Meeting {
    fn new(d: &'static Domain, format: Format, rng: &mut SplitMix64) -> Meeting {
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

    fn first(&self, i: usize) -> String {
        self.people[i].first.clone()
    }

    fn full(&self, i: usize) -> String {
        self.people[i].full()
    }

    /// A working day `lo..=hi` days from the meeting, not used before in this document.
    fn fresh_date(&mut self, rng: &mut SplitMix64, lo: i64, hi: i64) -> Date {
        loop {
            let d = self.date.add_days(rng.range(lo, hi)).working_day();
            if !self.used_dates.contains(&d) {
                self.used_dates.push(d);
                return d;
            }
        }
    }

    /// A number in `lo..=hi`, a multiple of `step`, not used before in this document.
    fn fresh_num(&mut self, rng: &mut SplitMix64, lo: u64, hi: u64, step: u64) -> u64 {
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
    fn vendor(&mut self, rng: &mut SplitMix64, line: &str) -> String {
        loop {
            let v = names::company(rng, &[line], false);
            let stem = v.split(' ').next().unwrap_or("").to_string();
            if !self.used_vendors.iter().any(|u| u.starts_with(&stem)) {
                self.used_vendors.push(v.clone());
                return v;
            }
        }
    }

    fn ds(&self, d: Date) -> String {
        d.fmt(self.body_style)
    }

    fn month_first(&self) -> bool {
        matches!(self.body_style, Style::MonthDayYear | Style::MonthDay | Style::MonDay | Style::WeekdayMonthDay)
    }

    /// `k` distinct attendees not in `not`; the chair fills in when the meeting is small.
    fn some(&self, rng: &mut SplitMix64, k: usize, not: &[usize]) -> Vec<usize> {
        let pool: Vec<usize> = (0..self.people.len()).filter(|i| !not.contains(i)).collect();
        let mut out = rng.sample(&pool, k);
        let extra: Vec<usize> = (0..self.people.len()).filter(|i| !out.contains(i)).collect();
        out.extend(extra.into_iter().take(k.saturating_sub(out.len())));
        assert!(out.len() == k, "not enough attendees");
        out
    }

    /// Template slots: `{A}`..`{E}` first names, `{A_full}`.. full names, and the meeting's.
    fn vars(&self, who: &[usize]) -> Vars {
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

    fn value(&self, kind: MetricKind, n: u64) -> Value {
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
    fn fresh_value(&mut self, rng: &mut SplitMix64, kind: MetricKind, lo: u64, hi: u64) -> (u64, Value) {
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

    fn q_person(&self, i: usize, text: String, kind: Kind) -> Question {
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

    fn q_date(&self, d: Date, text: String, kind: Kind) -> Question {
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

    fn q_value(&self, v: &Value, text: String, kind: Kind) -> Question {
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

    /// The target topic of kind `kind` asking about `want`, then the others, shuffled.
    fn compose(&mut self, want: Answer, rng: &mut SplitMix64) -> Doc {
        let targets: Vec<Kind> = KINDS
            .iter()
            .copied()
            .filter(|k| k.answers().contains(&want))
            .filter(|k| *k != Kind::Escalation || self.d.customer_facing)
            .collect();
        // Other business hosts only one kind of question; keep it rare as a target.
        let kind = loop {
            let k = *rng.pick(&targets);
            if k != Kind::OtherBusiness || rng.chance(15) {
                break k;
            }
        };
        let target = self.topic(kind, Some(want), rng);
        let mut others: Vec<Kind> = KINDS
            .iter()
            .copied()
            .filter(|k| *k != kind && *k != Kind::OtherBusiness)
            .filter(|k| *k != Kind::Escalation || self.d.customer_facing)
            .collect();
        rng.shuffle(&mut others);
        let mut spare: Vec<Topic> = others.into_iter().take(7).map(|k| self.topic(k, None, rng)).collect();
        let other_business =
            (kind != Kind::OtherBusiness && rng.chance(60)).then(|| self.topic(Kind::OtherBusiness, None, rng));
        let mut topics = vec![target];
        let start = rng.range(2, 4) as usize;
        for _ in 0..start {
            let t = spare.remove(0);
            let at = rng.below(topics.len() + 1);
            topics.insert(at, t);
        }
        if let Some(ob) = other_business {
            topics.push(ob);
        }
        let next = rng.chance(75).then(|| self.fresh_date(rng, 5, 21));
        Doc {
            topics,
            spare,
            next_meeting: next,
            // outsiders[0] is a vendor's contact and [1] a guest; [2] may send apologies.
            apologies: rng.chance(35).then_some(2),
            decisions_recap: rng.chance(45),
            actions_list: rng.chance(85),
            time: {
                let h = rng.range(8, 16);
                let m0 = *rng.pick(&[0, 0, 30, 15]);
                let len = *rng.pick(&[30, 45, 60, 60, 90]);
                let end = h * 60 + m0 + len;
                format!("{h:02}:{m0:02}-{:02}:{:02}", end / 60, end % 60)
            },
            header_style: rng.below(4),
        }
    }

    fn topic(&mut self, kind: Kind, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let mut t = self.topic_of(kind, want, rng);
        t.kind = kind;
        t
    }

    /// The document's title: the first of the domain's titles (in this meeting's order)
    /// whose subject is on the agenda, so a postmortem title heads an incident and a
    /// vendor review a renewal; a plain team meeting otherwise.
    fn title(&self, topics: &[Topic]) -> String {
        let has = |k: &[Kind]| topics.iter().any(|t| k.contains(&t.kind));
        for t in &self.titles {
            let l = t.to_lowercase();
            let needs: &[Kind] = if l.contains("postmortem") || l.contains("incident") || l.contains("reliability") {
                &[Kind::Incident]
            } else if l.contains("escalation") {
                &[Kind::Escalation]
            } else if l.contains("vendor") {
                &[Kind::Vendor, Kind::Dependency]
            } else if l.contains("hiring") || l.contains("staffing") {
                &[Kind::Hiring]
            } else if l.contains("cost") || l.contains("spend") || l.contains("budget") {
                &[Kind::Budget, Kind::Metrics]
            } else if l.contains("pipeline") || l.contains("forecast") || l.contains("monthly review") {
                &[Kind::Metrics]
            } else if l.contains("onboarding") || l.contains("enrolment") {
                &[Kind::Training]
            } else {
                &[]
            };
            if needs.is_empty() || has(needs) {
                return t.clone();
            }
        }
        format!("{} weekly", self.team)
    }

    fn topic_of(&mut self, kind: Kind, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        match kind {
            Kind::Ownership => self.ownership(want, rng),
            Kind::Reschedule => self.reschedule(want, rng),
            Kind::Budget => self.budget(want, rng),
            Kind::Metrics => self.metrics(want, rng),
            Kind::Hiring => self.hiring(want, rng),
            Kind::Vendor => self.vendor_quote(want, rng),
            Kind::Incident => self.incident(want, rng),
            Kind::Escalation => self.escalation(want, rng),
            Kind::Training => self.training(want, rng),
            Kind::Policy => self.policy(want, rng),
            Kind::Dependency => self.dependency(want, rng),
            Kind::OtherBusiness => self.other_business(want, rng),
        }
    }
}

/// A statement by attendee `who`, one prose and one spoken variant picked.
fn say(who: usize, v: &Vars, rng: &mut SplitMix64, prose: &[&str], spoken: &[&str]) -> Stmt {
    Stmt { who, prose: fix_start(&v.pick(rng, prose)), spoken: fix_start(&v.pick(rng, spoken)) }
}

fn fix_start(s: &str) -> String {
    cap(s)
}

fn act(who: usize, v: &Vars, rng: &mut SplitMix64, tasks: &[&str]) -> Action {
    Action { who, task: v.pick(rng, tasks) }
}

// The topics. Each decides its facts, registers its dates and numbers with the meeting (so
// no other topic reuses them), and states them; `want` asks it to also pose the question.
impl Meeting {
    fn ownership(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let x = *rng.pick(self.d.deliverables);
        let who = self.some(rng, 3, &[self.chair]);
        let draft = self.fresh_date(rng, 5, 30);
        let mut v = self.vars(&who);
        v.set("x", x).set("X", cap(x)).set("draft", self.ds(draft));
        let (a, b, c) = (who[0], who[1], who[2]);
        let mut stmts = vec![
            say(
                c,
                &v,
                rng,
                &[
                    "{C} raised that {x} is out of date and nobody currently owns it.",
                    "{C} pointed out that {x} has had no owner since the last reorganisation and parts of it no longer match how the team works.",
                    "{C} said the team lost time last month because {x} was incomplete.",
                ],
                &[
                    "{X} is out of date, and honestly nobody owns it right now.",
                    "We lost time last month because {x} was incomplete. Can someone own it?",
                ],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "{A} volunteered to own {x}.",
                    "{A} agreed to take ownership of {x} going forward.",
                    "{A} will own {x} from now on and keep it up to date.",
                ],
                &[
                    "I can take {x}. I'll own it from now on.",
                    "Happy to own {x} going forward.",
                ],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "A first draft is expected by {draft}.",
                    "{A} will have a first draft ready by {draft}.",
                ],
                &["I should have a first draft by {draft}."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} will review it before it is published.",
                    "{B} offered to review the draft.",
                ],
                &[
                    "I'll review the draft before it goes out.",
                    "Send it to me and I'll review it.",
                ],
            ),
        ];
        if rng.chance(50) {
            stmts.push(say(
                self.chair,
                &v,
                rng,
                &["{chair} will sign off the final version."],
                &["And I'll sign off the final version."],
            ));
        }
        let question = match want {
            Some(Answer::Person) => Some(self.q_person(
                a,
                v.pick(
                    rng,
                    &[
                        "Who is going to own {x}?",
                        "Who took ownership of {x}?",
                        "Who will keep {x} up to date from now on?",
                        "Which attendee is now responsible for {x}?",
                    ],
                ),
                Kind::Ownership,
            )),
            Some(Answer::Date) => Some(self.q_date(
                draft,
                v.pick(
                    rng,
                    &[
                        "By when should the first draft of {x} be ready?",
                        "When is the first draft of {x} expected?",
                        "What is the due date for a first draft of {x}?",
                    ],
                ),
                Kind::Ownership,
            )),
            _ => None,
        };
        let mut actions = vec![act(b, &v, rng, &["review the draft of {x}", "review {x}"])];
        if want == Some(Answer::Date) {
            actions.insert(0, act(a, &v, rng, &["draft {x}", "write the first draft of {x}"]));
        } else {
            actions.insert(0, act(a, &v, rng, &["first draft of {x} by {draft}", "draft {x} by {draft}"]));
        }
        Topic {
            kind: Kind::OtherBusiness,
            heading: if rng.chance(35) { v.fill("Ownership of {x}") } else { String::new() },
            stmts,
            actions,
            decision: Some(v.pick(rng, &["Owner for {x} agreed.", "{X} now has an owner."])),
            question,
        }
        .headed(strip_the(x))
    }

    fn reschedule(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let open: Vec<&str> =
            self.d.events.iter().copied().filter(|e| crate::meeting_vocab::takes_registrations(e)).collect();
        let e = if want == Some(Answer::Number) { *rng.pick(&open) } else { *rng.pick(self.d.events) };
        let registers = crate::meeting_vocab::takes_registrations(e);
        let who = self.some(rng, 2, &[self.chair]);
        let (a, b) = (who[0], who[1]);
        let orig = self.fresh_date(rng, 6, 35);
        let new = self.fresh_date(rng, 8, 60);
        let regs = self.fresh_num(rng, 24, 480, 1);
        let cap_n = self.fresh_num(rng, regs + 40, regs + 600, 50);
        let city = *rng.pick(&CITIES);
        let mut v = self.vars(&who);
        v.set("e", e)
            .set("E", cap(e))
            .set("orig", self.ds(orig))
            .set("new", self.ds(new))
            .set("regs", thousands(regs))
            .set("cap", thousands(cap_n))
            .set("city", city);
        let clash = v.pick(
            rng,
            &[
                "the partner summit in {city}",
                "the quarter-end close",
                "the company offsite",
                "a public holiday in two of our offices",
                "the board meeting",
                "the all-hands",
            ],
        );
        v.set("clash", clash);
        let mut stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} reported that {e}, originally planned for {orig}, clashes with {clash}.",
                    "{A} flagged that {e} on {orig} would clash with {clash}.",
                ],
                &[
                    "{E} is currently set for {orig}, but that clashes with {clash}.",
                    "Problem with {e}: {orig} is the same day as {clash}.",
                ],
            ),
            say(
                self.chair,
                &v,
                rng,
                &[
                    "After checking availability, the group agreed to move {e} to {new}.",
                    "The group agreed to move {e} to {new}, in the same time slot.",
                    "{E} will now take place on {new}.",
                ],
                &["Then let's move {e} to {new}, same time slot.", "OK, {new} it is for {e}."],
            ),
        ];
        if want == Some(Answer::Number) || (registers && rng.chance(60)) {
            stmts.push(say(
                a,
                &v,
                rng,
                &[
                    "{regs} people have registered for {e} so far; the limit is {cap}.",
                    "So far {regs} people have signed up for {e}, against a limit of {cap}.",
                ],
                &["We have {regs} registrations so far, and the limit is {cap}."],
            ));
        }
        stmts.push(say(
            b,
            &v,
            rng,
            if registers {
                &[
                    "{B} will send the updated invitation and let everyone who registered know about the change.",
                    "{B} will send the updated invitation for {e}.",
                    "{B} will update the invitation and email everyone who signed up.",
                ]
            } else {
                &[
                    "{B} will send the updated invitation for {e}.",
                    "{B} will move the calendar invitation and tell everyone involved.",
                ]
            },
            if registers {
                &["I'll send the updated invitation and email everyone who registered."]
            } else {
                &["I'll move the invitation and let everyone know."]
            },
        ));
        let question = match want {
            Some(Answer::Date) => Some(self.q_date(
                new,
                v.pick(
                    rng,
                    &[
                        "To what date was {e} moved?",
                        "What is the new date for {e}?",
                        "When will {e} take place now?",
                        "On what date is {e} now scheduled?",
                    ],
                ),
                Kind::Reschedule,
            )),
            Some(Answer::Number) => Some(self.q_value(
                &self.value(MetricKind::Count(" people"), regs),
                v.pick(
                    rng,
                    &[
                        "How many people have registered for {e} so far?",
                        "How many sign-ups does {e} have so far?",
                        "What is the current number of registrations for {e}?",
                    ],
                ),
                Kind::Reschedule,
            )),
            Some(Answer::Person) => Some(self.q_person(
                b,
                v.pick(
                    rng,
                    &[
                        "Who will send the updated invitation for {e}?",
                        "Who is updating the invitation for {e}?",
                        "Which attendee will let people know about the new date for {e}?",
                    ],
                ),
                Kind::Reschedule,
            )),
            None => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(b, &v, rng, &["send the updated invitation for {e}", "update the invitation for {e}"])],
            decision: Some(v.pick(rng, &["{E} moved to a new date.", "New date for {e} agreed."])),
            question,
        }
        .headed(strip_the(e))
    }

    fn budget(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let item = *rng.pick(self.d.budget_items);
        let who = self.some(rng, 3, &[]);
        let (a, b, d) = (who[0], who[1], who[2]);
        let base = rng.range(20, 500) as u64 * 100;
        let spent = self.fresh_value(rng, MetricKind::Money, base, base + base / 5);
        let asked = self.fresh_value(rng, MetricKind::Money, base * 3 / 2, base * 2);
        let capped = self.fresh_value(rng, MetricKind::Money, base * 11 / 10, base * 7 / 5);
        let over = self.fresh_num(rng, 6, 35, 1);
        let alert = self.fresh_num(rng, 70, 90, 5);
        let mut v = self.vars(&who);
        v.set("i", item)
            .set("I", cap(item))
            .set("spent", spent.1.written.clone())
            .set("asked", asked.1.written.clone())
            .set("capped", capped.1.written.clone())
            .set("over", over.to_string())
            .set("alert", alert.to_string());
        let reason = *rng.pick(&[
            "the extra load before the launch",
            "the two new teams ramping up",
            "seasonal peaks",
            "the pilot that starts next month",
        ]);
        v.set("reason", reason);
        let stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} presented the spend on {i}: {spent} last month, {over}% over forecast.",
                    "{A} reported that {i} cost {spent} last month, which is {over}% above forecast.",
                ],
                &["{I} cost us {spent} last month. That's {over}% over forecast."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} asked for a budget of {asked} a month for {i}, mainly because of {reason}.",
                    "{B} argued for {asked} a month for {i}, given {reason}.",
                ],
                &["I'd like {asked} a month for {i}; most of that is {reason}."],
            ),
            say(
                self.chair,
                &v,
                rng,
                &[
                    "After some discussion the group set a monthly cap of {capped} for {i}, with an alert when spend reaches {alert}% of the cap.",
                    "The group agreed to cap {i} at {capped} per month; an alert goes to the team channel at {alert}% of the cap.",
                ],
                &["Let's cap {i} at {capped} a month, with an alert at {alert}% of the cap."],
            ),
            say(
                d,
                &v,
                rng,
                &[
                    "Any spend above the cap needs {C}'s approval in advance.",
                    "Exceptions above the cap must be approved by {C} beforehand.",
                ],
                &["Anything above the cap comes to me for approval first."],
            ),
        ];
        let question = match want {
            Some(Answer::Number) if rng.chance(75) => Some(self.q_value(
                &capped.1,
                v.pick(
                    rng,
                    &[
                        "What monthly cap did the group set for {i}?",
                        "What is the new monthly cap for {i}?",
                        "How much per month may now be spent on {i}?",
                        "What spending limit per month was agreed for {i}?",
                    ],
                ),
                Kind::Budget,
            )),
            Some(Answer::Number) => Some(self.q_value(
                &self.value(MetricKind::Percent, alert),
                v.pick(
                    rng,
                    &[
                        "At what percentage of the cap will the alert for {i} be sent?",
                        "At what share of the {i} cap does the alert fire?",
                        "What percentage of the cap triggers the alert on {i}?",
                    ],
                ),
                Kind::Budget,
            )),
            Some(Answer::Person) => Some(self.q_person(
                d,
                v.pick(
                    rng,
                    &[
                        "Whose approval is needed for spending above the cap on {i}?",
                        "Who must approve spend on {i} beyond the cap?",
                        "Who signs off if {i} goes over the monthly cap?",
                    ],
                ),
                Kind::Budget,
            )),
            _ => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(
                a,
                &v,
                rng,
                &["set up the spend alert for {i}", "add the cap for {i} to the cost dashboard"],
            )],
            decision: Some(v.pick(rng, &["Monthly cap for {i} agreed.", "{I}: cap and alert agreed."])),
            question,
        }
        .headed(&budget_heading(item))
    }

    fn metrics(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        // The period just ended at the meeting's date: the last full month, or the last
        // quarter when the meeting falls in the first month after it, or the last sprint.
        let mi = self.date.m as usize - 1;
        let last_month = crate::dates::MONTHS[(mi + 11) % 12];
        let month_before = crate::dates::MONTHS[(mi + 10) % 12];
        let qi = mi / 3;
        let last_q = ["Q4", "Q1", "Q2", "Q3"][qi];
        let q_before = ["Q3", "Q4", "Q1", "Q2"][qi];
        let mut periods: Vec<(&str, &str)> = vec![
            (last_month, month_before),
            (last_month, month_before),
            ("the last sprint", "the sprint before"),
            ("last month", "the month before"),
        ];
        if mi % 3 == 0 {
            periods.extend([(last_q, q_before), (last_q, q_before)]);
        }
        let (period, prev) = *rng.pick(&periods);
        let ms = rng.sample(self.d.metrics, 2);
        let who = self.some(rng, 2, &[]);
        let (a, b) = (who[0], who[1]);
        let (m1, m2) = (ms[0], ms[1]);
        // "open roles came in at 26", not "26 open roles": the name already says what is counted.
        let unit_free = |name: &str, kind: MetricKind| match kind {
            MetricKind::Count(unit) if unit.split_whitespace().next().is_some_and(|w| name.contains(w)) => {
                MetricKind::Count("")
            }
            k => k,
        };
        let (k1, k2) = (unit_free(m1.name, m1.kind), unit_free(m2.name, m2.kind));
        let (_, v1) = self.fresh_value(rng, k1, m1.lo, m1.hi);
        let (_, v1p) = self.fresh_value(rng, k1, m1.lo, m1.hi);
        let (n2, v2) = self.fresh_value(rng, k2, m2.lo, m2.hi);
        // A target near the value (within about a quarter), on either side of it.
        let lower_better = crate::meeting_vocab::lower_is_better(m2.name);
        let spread = (n2 / 4).max(2);
        let t_lo = n2.saturating_sub(spread).max(m2.lo.min(n2)).max(1);
        let t_hi = match m2.kind {
            MetricKind::Percent | MetricKind::PercentTenths if !m2.name.contains("retention") => {
                (n2 + spread).min(if matches!(m2.kind, MetricKind::Percent) { 100 } else { 1000 })
            }
            _ => n2 + spread,
        };
        let (n_t2, t2) = self.fresh_value(rng, k2, t_lo, t_hi.max(t_lo + 1));
        let met = if lower_better { n2 <= n_t2 } else { n2 >= n_t2 };
        let mut v = self.vars(&who);
        v.set("period", period)
            .set("prev", prev)
            .set("m1", m1.name)
            .set("M1", cap(m1.name))
            .set("m2", m2.name)
            .set("v1", v1.written.clone())
            .set("v1p", v1p.written.clone())
            .set("v2", v2.written.clone())
            .set("t2", t2.written.clone())
            .set("M2", cap(m2.name))
            .set(
                "tgt",
                if lower_better {
                    let fewer = if matches!(k2, MetricKind::Count(_)) { "fewer" } else { "less" };
                    format!("{} or {fewer}", t2.written)
                } else {
                    t2.written.clone()
                },
            )
            .set(
                "verdict",
                if met {
                    *rng.pick(&["better than", "ahead of"])
                } else {
                    *rng.pick(&["short of", "missing", "not yet at"])
                },
            )
            .set(
                "factor",
                *rng.pick(&[
                    "the holiday period",
                    "a one-off migration",
                    "the new dashboard counting differently",
                    "two large customers onboarding",
                ]),
            );
        let mut stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} presented the figures for {period}: {m1} came in at {v1}, compared with {v1p} in {prev}.",
                    "{A} shared the numbers for {period}. {M1} stood at {v1}, against {v1p} in {prev}.",
                ],
                &["For {period}, {m1} came in at {v1}, versus {v1p} in {prev}."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "The figure for {m2} was {v2}, against a target of {tgt}.",
                    "For {m2}, the team reached {v2}; the target is {tgt}.",
                    "{M2} came to {v2}, {verdict} the target of {tgt}.",
                ],
                &[
                    "For {m2} we're at {v2}, and the target is {tgt}.",
                    "{M2} is at {v2}, {verdict} our target of {tgt}.",
                ],
            ),
        ];
        if rng.chance(70) {
            stmts.push(say(
                b,
                &v,
                rng,
                &[
                    "{B} thinks part of the change comes from {factor} and expects it to even out.",
                    "{B} cautioned that {factor} makes the comparison with {prev} less reliable.",
                ],
                &["Part of that is {factor}, so I wouldn't read too much into it."],
            ));
        }
        let question = match want {
            Some(Answer::Number) if rng.chance(65) => Some(self.q_value(
                &v1,
                v.pick(
                    rng,
                    &[
                        "What was {m1} in {period}?",
                        "What figure did {A} report for {m1} in {period}?",
                        "Where did {m1} come in for {period}?",
                        "According to {A}, what was {m1} for {period}?",
                    ],
                ),
                Kind::Metrics,
            )),
            Some(Answer::Number) => Some(self.q_value(
                &t2,
                v.pick(
                    rng,
                    &[
                        "What is the target for {m2}?",
                        "What target was quoted for {m2}?",
                        "Which figure is the target for {m2}?",
                        "What is {m2} measured against as its target?",
                    ],
                ),
                Kind::Metrics,
            )),
            _ => None,
        };
        Topic { kind: Kind::Metrics, heading: String::new(), stmts, actions: vec![], decision: None, question }
            .headed(&format!("{} numbers", period.replace("the ", "")))
    }

    fn hiring(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let h = *rng.pick(self.d.hires);
        // The period ahead of the meeting: next quarter, or the next half-year.
        let next_q = ["Q2", "Q3", "Q4", "Q1"][(self.date.m as usize - 1) / 3];
        let half = if self.date.m <= 6 { "the second half" } else { "the first half of next year" };
        let q = *rng.pick(&[next_q, next_q, "next quarter", half]);
        let who = self.some(rng, 3, &[self.chair]);
        let (a, b, c) = (who[0], who[1], who[2]);
        let asked = self.fresh_num(rng, 7, 18, 1);
        let approved = self.fresh_num(rng, 3, asked - 2, 1);
        let start = self.fresh_date(rng, 30, 100);
        let mut v = self.vars(&who);
        v.set("h", h)
            .set("q", q)
            .set("asked", asked.to_string())
            .set("approved", approved.to_string())
            .set("start", self.ds(start))
            .set(
                "why",
                *rng.pick(&[
                    "volume will grow again after the pricing change",
                    "two large projects start at the same time",
                    "attrition has left the team short",
                    "the backlog has doubled this year",
                ]),
            );
        let mut stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} asked for {asked} new {h} for {q}, arguing that {why}.",
                    "{A} requested {asked} additional {h} in {q} because {why}.",
                ],
                &["I'm asking for {asked} new {h} in {q}, because {why}."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} said the approved budget covers only part of the request for {h}.",
                    "{B} explained that the budget for {q} does not stretch to the full request.",
                ],
                &["The approved budget won't cover all of that."],
            ),
            say(
                self.chair,
                &v,
                rng,
                &[
                    "The group approved {approved} additional {h} for {q}.",
                    "After discussion, {approved} additional {h} were approved for {q}.",
                ],
                &["Let's approve {approved} additional {h} for {q}, then, and revisit mid-quarter."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "If the roles are posted this week, the first new starters could join on {start}.",
                    "{A} expects the first hires to start on {start} if the roles go live this week.",
                ],
                &["If we post this week, the first people could start on {start}."],
            ),
        ];
        if want == Some(Answer::Person) || rng.chance(60) {
            stmts.push(say(
                c,
                &v,
                rng,
                &["{C} will run the interview panel.", "{C} agreed to lead the interview panel."],
                &["I'll run the interview panel."],
            ));
        }
        let question = match want {
            Some(Answer::Number) => Some(self.q_value(
                &self.value(MetricKind::Count(""), approved),
                v.pick(
                    rng,
                    &[
                        "How many additional {h} were approved for {q}?",
                        "How many new {h} did the group approve?",
                        "What number of extra {h} was approved in the end?",
                        "How many of the requested {h} were approved?",
                    ],
                ),
                Kind::Hiring,
            )),
            Some(Answer::Date) => Some(self.q_date(
                start,
                v.pick(
                    rng,
                    &[
                        "When could the first new {h} start?",
                        "On what date could the first of the new {h} join?",
                        "What is the earliest start date mentioned for the new {h}?",
                    ],
                ),
                Kind::Hiring,
            )),
            Some(Answer::Person) => Some(self.q_person(
                c,
                v.pick(
                    rng,
                    &[
                        "Who will run the interview panel for the new {h}?",
                        "Who is leading the interviews for the {h}?",
                        "Which attendee will run the panel interviewing {h}?",
                    ],
                ),
                Kind::Hiring,
            )),
            None => None,
        };
        let mut t = Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(a, &v, rng, &["post the job openings", "update the capacity model"])],
            decision: Some(v.pick(
                rng,
                &[
                    "Hiring for {q} approved as discussed.",
                    "Additional {h} approved (see above).",
                    "Part of the {h} request approved.",
                    "Headcount for {h} agreed, below the request.",
                ],
            )),
            question,
        };
        if want == Some(Answer::Number) {
            if let Some(q) = t.question.as_mut() {
                q.aliases.push(format!("{approved} {h}"));
            }
        }
        let heading = match rng.below(5) {
            0 => format!("Hiring for {q}"),
            1 => format!("{} headcount", cap(h)),
            2 => "Headcount request".to_string(),
            3 => format!("Hiring plan: {h}"),
            _ => format!("Additional {h}"),
        };
        t.headed(&heading)
    }

    fn vendor_quote(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let (line, thing) = *rng.pick(self.d.vendors);
        let vendor = self.vendor(rng, line);
        let who = self.some(rng, 2, &[self.chair]);
        let (a, b) = (who[0], who[1]);
        let quoted = self.fresh_date(rng, -20, -3);
        let sign = self.fresh_date(rng, 7, 40);
        let expires = self.fresh_date(rng, 41, 120);
        let list = rng.range(40, 900) as u64 * 100;
        let (_, list_v) = self.fresh_value(rng, MetricKind::Money, list, list);
        let (_, deal_v) = self.fresh_value(rng, MetricKind::Money, list * 4 / 5, list * 19 / 20);
        let contact = self.outsiders[0].full();
        let mut v = self.vars(&who);
        v.set("v", vendor.clone())
            .set("v_poss", possessive(&vendor))
            .set("thing", thing)
            .set("quoted", self.ds(quoted))
            .set("sign", self.ds(sign))
            .set("expires", self.ds(expires))
            .set("list", list_v.written.clone())
            .set("deal", deal_v.written.clone())
            .set("years", *rng.pick(&["two", "three"]))
            .set("contact", contact);
        let stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} summarised the renewal quote from {v} for {thing}, received on {quoted}: the list price rises to {list} a year.",
                    "{A} went through {v_poss} quote for {thing}, which arrived on {quoted}. At list price it would cost {list} a year.",
                ],
                &["{v_poss} quote for {thing} came in on {quoted}. List price goes up to {list} a year."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "{A} has negotiated a {years}-year commitment at {deal} a year instead.",
                    "With a {years}-year commitment, {A} got the price down to {deal} a year.",
                ],
                &["If we commit for {years} years, they'll do {deal} a year."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} noted that the discount only holds if the signed order form is returned by {sign}; after that the quote goes back to list price.",
                    "{B} pointed out that the offer lapses unless the signed order form is back by {sign}.",
                    "The discount is conditional on the signed order form arriving by {sign}, {B} noted; later than that, list price applies.",
                    "{B} added that {v} will only hold the lower price if they have the signed order form by {sign}.",
                    "According to {v_poss} account manager, {contact}, the discounted price is valid only if the signed order form reaches them by {sign}.",
                ],
                &[
                    "Their account manager, {contact}, says the discount only holds if we return the signed order form by {sign}.",
                    "Catch is, the signed order form has to be with them by {sign}, or we're back at list price.",
                    "They'll only keep that price if the signed form reaches them by {sign}.",
                ],
            ),
            say(
                b,
                &v,
                rng,
                &["The current contract expires on {expires}.", "The existing contract with {v} runs until {expires}."],
                &["And the current contract expires on {expires}."],
            ),
        ];
        let question = match want {
            Some(Answer::Date) => Some(self.q_date(
                sign,
                v.pick(
                    rng,
                    &[
                        "By what date must the signed order form for {v} be returned to keep the discount?",
                        "What is the deadline for returning the signed {v} order form?",
                        "Until when does the discounted {v} price hold?",
                        "By when does {v} need the signed order form?",
                    ],
                ),
                Kind::Vendor,
            )),
            Some(Answer::Number) => Some(self.q_value(
                &deal_v,
                v.pick(
                    rng,
                    &[
                        "What annual price did {A} negotiate with {v}?",
                        "What yearly price did {v} offer for a {years}-year commitment?",
                        "What does {thing} cost per year with the longer commitment?",
                        "What is the discounted annual price from {v}?",
                    ],
                ),
                Kind::Vendor,
            )),
            _ => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![
                act(b, &v, rng, &["review the {v} order form", "check the {v} contract terms"]),
                act(a, &v, rng, &["route the {v} order form for signature once approved"]),
            ],
            decision: Some(v.pick(
                rng,
                &["Go ahead with the {years}-year commitment with {v}, subject to {B}'s review of the terms."],
            )),
            question,
        }
        .headed(&format!("{} renewal", names::short_company(&vendor)))
    }

    fn incident(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let (system, symptom, objects) = *rng.pick(self.d.incidents);
        let mut who = self.some(rng, 3, &[self.chair]);
        // Whoever was on call holds a technical role; with nobody technical in the room,
        // the person who raised the alarm is asked about instead.
        let on_call = (0..self.people.len())
            .filter(|&i| i != self.chair && crate::meeting_vocab::technical(&self.roles[i]))
            .collect::<Vec<_>>();
        if !on_call.is_empty() && !crate::meeting_vocab::technical(&self.roles[who[1]]) {
            let pick = on_call[rng.below(on_call.len())];
            if let Some(j) = who.iter().position(|&w| w == pick) {
                who.swap(1, j);
            } else {
                who[1] = pick;
            }
        }
        let b_on_call = crate::meeting_vocab::technical(&self.roles[who[1]]);
        let (a, b, c) = (who[0], who[1], who[2]);
        let when = self.fresh_date(rng, -20, -2);
        let follow = self.fresh_date(rng, 6, 30);
        let (_, failed) = self.fresh_value(rng, MetricKind::Count(""), 120, 6000);
        let ack = self.fresh_num(rng, 2, 9, 1);
        let h = rng.range(6, 20);
        let m1 = rng.range(0, 5) * 10 + 4;
        let dur = rng.range(20, 110);
        let end = h * 60 + m1 + dur;
        let mut v = self.vars(&who);
        v.set("s", system)
            .set("sys", strip_the(system))
            .set("symptom", symptom)
            .set("o", objects)
            .set("when", self.ds(when))
            .set("follow", self.ds(follow))
            .set("failed", failed.written.clone())
            .set("ack", ack.to_string())
            .set("t1", format!("{h:02}:{m1:02}"))
            .set("t2", format!("{:02}:{:02}", end / 60, end % 60))
            .set(
                "cause",
                *rng.pick(&[
                    "a query without an index, added in the previous deployment",
                    "a database migration that dropped an index",
                    "an expired certificate",
                    "a retry storm after a brief network blip",
                    "a feature flag switched on for all customers at once",
                    "a configuration change that had not been reviewed",
                    "a full disk on one node",
                    "a rate limit on a third-party API",
                ]),
            );
        let stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} summarised the incident: on {when} between {t1} and {t2}, {s} {symptom}, affecting roughly {failed} {o}.",
                    "On {when} from {t1} to {t2}, {s} {symptom}; about {failed} {o} were affected, {A} reported.",
                ],
                &["Quick recap: on {when}, between {t1} and {t2}, {s} {symptom}. Roughly {failed} {o} were affected."],
            ),
            if b_on_call {
                say(
                    b,
                    &v,
                    rng,
                    &[
                        "{B} was on call and acknowledged the alert within {ack} minutes.",
                        "{B}, who was on call, picked up the page within {ack} minutes.",
                        "The page went to {B}, on call that day, who responded within {ack} minutes.",
                    ],
                    &["I was on call and acknowledged the page within {ack} minutes.", "I had the pager and responded within {ack} minutes."],
                )
            } else {
                say(
                    b,
                    &v,
                    rng,
                    &[
                        "{B} noticed the problem first and raised it within {ack} minutes.",
                        "{B} spotted it and reported it within {ack} minutes.",
                    ],
                    &["I noticed it first and reported it within {ack} minutes."],
                )
            },
            say(
                c,
                &v,
                rng,
                &["{C} traced the cause to {cause}.", "{C} found the root cause: {cause}."],
                &["The cause was {cause}."],
            ),
            say(
                self.chair,
                &v,
                rng,
                &[
                    "A follow-up review is scheduled for {follow}.",
                    "The follow-up review will take place on {follow}.",
                    "The group will review the fixes on {follow}.",
                ],
                &["Let's hold the follow-up review on {follow}.", "We'll go over the fixes again on {follow}."],
            ),
        ];
        let question = match want {
            Some(Answer::Number) => {
                let mut q = self.q_value(
                    &failed,
                    v.pick(
                        rng,
                        &[
                            "Roughly how many {o} were affected when {s} {symptom}?",
                            "About how many {o} did the {sys} incident affect?",
                            "How many {o}, roughly, were hit by the incident?",
                            "What was the approximate number of {o} affected?",
                        ],
                    ),
                    Kind::Incident,
                );
                q.aliases.push(format!("{} {objects}", failed.gold));
                q.aliases.push(format!("roughly {}", failed.gold));
                Some(q)
            }
            Some(Answer::Person) => Some(self.q_person(
                b,
                if b_on_call {
                    v.pick(
                        rng,
                        &[
                            "Who was on call during the incident?",
                            "Who picked up the page when {s} {symptom}?",
                            "Who was on call when {s} {symptom}?",
                            "Which attendee responded to the page for the {sys} incident?",
                        ],
                    )
                } else {
                    v.pick(rng, &["Who first reported the problem with {s}?", "Who noticed that {s} {symptom}?"])
                },
                Kind::Incident,
            )),
            Some(Answer::Date) => Some(self.q_date(
                follow,
                v.pick(
                    rng,
                    &[
                        "When is the follow-up review of the {sys} incident scheduled?",
                        "On what date will the group review the {sys} incident again?",
                        "When is the follow-up on the {sys} incident?",
                        "What date was set for the follow-up review after {s} {symptom}?",
                        "When will the fixes for {s} be reviewed?",
                    ],
                ),
                Kind::Incident,
            )),
            None => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(
                c,
                &v,
                rng,
                &[
                    "write up the root cause",
                    "add a check so {s} cannot fail the same way",
                    "add an alert that would have caught this earlier",
                    "write the postmortem for {s}",
                    "add a regression test for the cause",
                    "document the fix in the runbook",
                ],
            )],
            decision: None,
            question,
        }
        .headed(&format!("{} incident", strip_the(system)))
    }

    fn escalation(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let cust = names::company(rng, names::CUSTOMER_LINES, false);
        let who = self.some(rng, 2, &[self.chair]);
        let (a, b) = (who[0], who[1]);
        let since = self.fresh_date(rng, -40, -7);
        let renewal = self.fresh_date(rng, 30, 150);
        let tickets = self.fresh_num(rng, 9, 70, 1);
        let arr = rng.range(30, 900) as u64 * 1000;
        let (_, arr_v) = self.fresh_value(rng, MetricKind::Money, arr, arr);
        let (_, credit) = self.fresh_value(rng, MetricKind::Money, 500, 15000);
        let mut v = self.vars(&who);
        v.set("cust", cust.clone())
            .set("since", self.ds(since))
            .set("renewal", self.ds(renewal))
            .set("tickets", tickets.to_string())
            .set("arr", arr_v.written.clone())
            .set("credit", credit.written.clone())
            .set("role", *rng.pick(&["CIO", "head of operations", "procurement lead", "IT director", "COO"]))
            .set(
                "issue",
                *rng.pick(&[
                    "slow exports",
                    "missing notifications",
                    "failed logins",
                    "incorrect totals in their reports",
                    "sync delays",
                ]),
            );
        let stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} reported that {cust} has opened {tickets} tickets about {issue} since {since}.",
                    "{cust} has raised {tickets} tickets about {issue} since {since}, {A} said.",
                ],
                &["{cust} has opened {tickets} tickets about {issue} since {since}."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "Their contract, worth {arr} a year, comes up for renewal on {renewal}.",
                    "The account is worth {arr} a year and renews on {renewal}.",
                ],
                &["They're worth {arr} a year, and the renewal is on {renewal}."],
            ),
            say(
                self.chair,
                &v,
                rng,
                &[
                    "The group agreed to offer {cust} a service credit of {credit}.",
                    "To keep the relationship on track, the group agreed on a one-off credit of {credit} for {cust}.",
                ],
                &["Let's offer them a service credit of {credit}."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} will call their {role} this week to explain the fix plan.",
                    "{B} will speak to the {role} at {cust} before the end of the week.",
                ],
                &["I'll call their {role} this week and walk them through the fix plan."],
            ),
        ];
        let question = match want {
            Some(Answer::Number) => Some(self.q_value(
                &credit,
                v.pick(
                    rng,
                    &[
                        "What service credit did the group agree to offer {cust}?",
                        "How large a credit will {cust} get?",
                        "What credit was approved for {cust}?",
                    ],
                ),
                Kind::Escalation,
            )),
            Some(Answer::Person) => Some(self.q_person(
                b,
                v.pick(
                    rng,
                    &[
                        "Who will contact the {role} at {cust}?",
                        "Who is calling {cust} about the fix plan?",
                        "Who speaks to the {role} at {cust}?",
                    ],
                ),
                Kind::Escalation,
            )),
            Some(Answer::Date) => Some(self.q_date(
                renewal,
                v.pick(
                    rng,
                    &[
                        "When does the {cust} contract come up for renewal?",
                        "On what date is {cust} due to renew?",
                        "When is the renewal date for {cust}?",
                    ],
                ),
                Kind::Escalation,
            )),
            None => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(b, &v, rng, &["call the {role} at {cust}", "send {cust} the fix plan"])],
            decision: Some(v.pick(rng, &["Service credit for {cust} approved."])),
            question,
        }
        .headed(&format!("{cust} escalation"))
    }

    fn training(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let who = self.some(rng, 2, &[self.chair]);
        let (a, b) = (who[0], who[1]);
        let days = self.fresh_num(rng, 3, 15, 1);
        let first = self.fresh_date(rng, 14, 60);
        let second = self.fresh_date(rng, 75, 120);
        let seats = self.fresh_num(rng, 8, 30, 1);
        let (r1, r2) = *rng.pick(&[
            ("EMEA", "Americas"),
            ("morning", "afternoon"),
            ("London", "Singapore"),
            ("in-person", "remote"),
        ]);
        let prog = *rng.pick(&["onboarding programme", "training programme", "induction programme"]);
        let mut v = self.vars(&who);
        // "an 8-day", "an 11-day", "an 18-day" programme.
        let article = if [8, 11, 18].contains(&days) { "an" } else { "a" };
        v.set("a_days", format!("{article} {days}"));
        v.set("days", days.to_string())
            .set("first", self.ds(first))
            .set("second", self.ds(second))
            .set("seats", seats.to_string())
            .set("r1", r1)
            .set("r2", r2)
            .set("prog", prog);
        let mut stmts = vec![
            say(
                self.chair,
                &v,
                rng,
                &[
                    "New starters will go through {a_days}-day {prog}.",
                    "The {prog} for new starters will last {days} days.",
                ],
                &["The {prog} will be {days} days long."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "The first cohort starts on {first} and the second on {second}.",
                    "The first cohort is planned to start on {first}; a second follows on {second}.",
                ],
                &["First cohort starts {first}, the second one {second}."],
            ),
            say(
                a,
                &v,
                rng,
                &["{A} will run the {r1} cohort and {B} the {r2} cohort."],
                &["I'll take the {r1} cohort, and {B} has the {r2} one."],
            ),
        ];
        if want == Some(Answer::Number) || rng.chance(60) {
            let at = rng.range(1, stmts.len() as i64) as usize;
            stmts.insert(
                at,
                say(
                    b,
                    &v,
                    rng,
                    &["Each cohort has room for {seats} people.", "There are {seats} places per cohort."],
                    &["We can fit {seats} people per cohort."],
                ),
            );
        }
        let question = match want {
            Some(Answer::Number) => {
                let mut q = self.q_value(
                    &self.value(MetricKind::Days, days),
                    v.pick(
                        rng,
                        &[
                            "How many days will the {prog} last?",
                            "How long, in days, is the {prog}?",
                            "How many days does the {prog} for new starters take?",
                            "What is the length of the {prog} in days?",
                        ],
                    ),
                    Kind::Training,
                );
                q.gold = days.to_string();
                q.aliases = number_aliases(days, Some("days"), &q.gold);
                q.aliases.push(format!("{days}-day"));
                Some(q)
            }
            Some(Answer::Date) => Some(self.q_date(
                first,
                v.pick(
                    rng,
                    &[
                        "When does the first cohort of the {prog} start?",
                        "On what date does the first {prog} cohort start?",
                        "What is the start date of the first cohort?",
                    ],
                ),
                Kind::Training,
            )),
            Some(Answer::Person) => Some(self.q_person(
                a,
                v.pick(
                    rng,
                    &[
                        "Who will run the {r1} cohort?",
                        "Who is leading the {r1} cohort of the {prog}?",
                        "Which attendee takes the {r1} group?",
                    ],
                ),
                Kind::Training,
            )),
            None => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(b, &v, rng, &["prepare the {r2} schedule", "book rooms for the {r2} cohort"])],
            decision: None,
            question,
        }
        .headed(&cap(prog))
    }

    fn policy(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let p = *rng.pick(self.d.policies);
        let who = self.some(rng, 3, &[self.chair]);
        let (a, b, c) = (who[0], who[1], who[2]);
        let (_, new) = self.fresh_value(rng, p.kind, p.lo, p.hi);
        let (_, old) = self.fresh_value(rng, p.kind, p.lo, p.hi);
        let from = self.fresh_date(rng, 10, 45);
        let mut v = self.vars(&who);
        let rule = Vars::new().with("value", new.written.clone()).fill(p.rule);
        let old_rule = Vars::new().with("value", old.written.clone()).fill(p.rule);
        v.set("rule", rule)
            .set("old_rule", old_rule)
            .set("topic", p.topic)
            .set("old", old.written.clone())
            .set("from", self.ds(from));
        let stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} proposed a new rule on {topic}: {rule}.",
                    "{A} suggested changing the rule on {topic} so that {rule}.",
                ],
                &["I'd like to change the rule on {topic} so that {rule}."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} pointed out that under the current rule {old_rule}.",
                    "For comparison, {B} noted, today {old_rule}.",
                    "{B} recalled that at the moment {old_rule}.",
                ],
                &["For context, today {old_rule}.", "Right now {old_rule}, for comparison."],
            ),
            say(
                self.chair,
                &v,
                rng,
                &[
                    "The group agreed, and the new rule applies from {from}.",
                    "The change was approved and takes effect on {from}.",
                ],
                &["Agreed. Let's apply it from {from}."],
            ),
            say(
                c,
                &v,
                rng,
                &[
                    "{C} will update the policy page and tell the wider team.",
                    "{C} will announce the change in the team channel.",
                ],
                &["I'll update the policy page and let everyone know."],
            ),
        ];
        let question = match want {
            Some(Answer::Number) => Some(self.q_value(
                &new,
                v.pick(
                    rng,
                    &[
                        "What threshold does the new rule on {topic} set?",
                        "What is the new limit for {topic}?",
                        "What value did the group agree for the {topic} rule?",
                        "Under the new rule on {topic}, what is the threshold?",
                    ],
                ),
                Kind::Policy,
            )),
            Some(Answer::Person) => Some(self.q_person(
                a,
                v.pick(
                    rng,
                    &[
                        "Who proposed the new rule on {topic}?",
                        "Who suggested changing the rule on {topic}?",
                        "Whose proposal was the change to the {topic} rule?",
                    ],
                ),
                Kind::Policy,
            )),
            Some(Answer::Date) => Some(self.q_date(
                from,
                v.pick(
                    rng,
                    &[
                        "From what date does the new rule on {topic} apply?",
                        "When does the change to the {topic} rule take effect?",
                        "On what date does the new {topic} rule start?",
                    ],
                ),
                Kind::Policy,
            )),
            None => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(c, &v, rng, &["update the policy page on {topic}"])],
            decision: Some(v.pick(rng, &["New rule on {topic} approved.", "Change to the {topic} rule agreed."])),
            question,
        }
        .headed(&match rng.below(4) {
            0 => format!("Rule on {}", p.topic),
            1 => format!("Policy change: {}", p.topic),
            2 => format!("{} threshold", cap(p.topic)),
            _ => format!("{} rule", cap(p.topic)),
        })
    }

    fn dependency(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let x = *rng.pick(self.d.artifacts);
        let (line, _) = *rng.pick(self.d.vendors);
        let vendor = self.vendor(rng, line);
        let down = *rng.pick(self.d.downstream);
        let who = self.some(rng, 2, &[self.chair]);
        let (a, b) = (who[0], who[1]);
        let promised = self.fresh_date(rng, 5, 30);
        let chase = self.fresh_date(rng, 31, 45);
        let slip = self.fresh_num(rng, 4, 25, 1);
        let mut v = self.vars(&who);
        v.set("x", x)
            .set("v", vendor.clone())
            .set("v_poss", possessive(&vendor))
            .set("down", down)
            .set("promised", self.ds(promised))
            .set("chase", self.ds(chase))
            .set("slip", slip.to_string());
        let stmts = vec![
            say(
                a,
                &v,
                rng,
                &[
                    "{A} is still waiting for {x} from {v}, who have promised it for {promised}.",
                    "{v} has promised {x} by {promised}; {A} is tracking it.",
                ],
                &["We're still waiting on {x} from {v}. They've promised it for {promised}."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "Without it, {down} would slip by about {slip} days.",
                    "If it is late, {down} moves back by roughly {slip} days.",
                ],
                &["If it doesn't come, {down} slips by about {slip} days."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} will chase {v} if it has not arrived by {chase}.",
                    "If nothing has arrived by {chase}, {B} will escalate to {v_poss} account manager.",
                ],
                &["If we don't have it by {chase}, I'll chase them."],
            ),
        ];
        let question = match want {
            Some(Answer::Date) => Some(self.q_date(
                promised,
                v.pick(
                    rng,
                    &[
                        "By what date has {v} promised {x}?",
                        "When is {x} due from {v}?",
                        "What delivery date did {v} give for {x}?",
                    ],
                ),
                Kind::Dependency,
            )),
            Some(Answer::Person) => Some(self.q_person(
                b,
                v.pick(
                    rng,
                    &[
                        "Who will chase {v} for {x}?",
                        "Who follows up with {v} if {x} is late?",
                        "Who is escalating to {v} if {x} does not arrive?",
                    ],
                ),
                Kind::Dependency,
            )),
            Some(Answer::Number) => {
                let mut q = self.q_value(
                    &self.value(MetricKind::Count(" days"), slip),
                    v.pick(
                        rng,
                        &[
                            "By about how many days would {down} slip without {x}?",
                            "How many days would {down} be delayed if {x} is late?",
                            "Roughly how long, in days, would {down} slip?",
                        ],
                    ),
                    Kind::Dependency,
                );
                q.aliases.push(format!("about {slip} days"));
                Some(q)
            }
            None => None,
        };
        Topic {
            kind: Kind::OtherBusiness,
            heading: String::new(),
            stmts,
            actions: vec![act(a, &v, rng, &["confirm the delivery date for {x} with {v}"])],
            decision: None,
            question,
        }
        .headed(&match rng.below(5) {
            0 => format!("Waiting on {}", names::short_company(&vendor)),
            1 => format!("Dependency: {}", strip_the(x)),
            2 => format!("{} from {}", cap(strip_the(x)), names::short_company(&vendor)),
            3 => format!("{} delivery", names::short_company(&vendor)),
            _ => format!("Outstanding: {}", strip_the(x)),
        })
    }

    fn other_business(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let who = self.some(rng, 4, &[]);
        let (a, b, c, d) = (who[0], who[1], who[2], who[3]);
        let annual = self.fresh_date(rng, 7, 40);
        let social = self.fresh_date(rng, 5, 30);
        let leave_from = self.fresh_date(rng, 10, 40);
        let leave_to = leave_from.add_days(rng.range(7, 16)).working_day();
        self.used_dates.push(leave_to);
        let guest = self.outsiders[1].full();
        let mut v = self.vars(&who);
        v.set("annual_d", self.ds(annual))
            .set("social_d", self.ds(social))
            .set("from", self.ds(leave_from))
            .set("to", self.ds(leave_to))
            .set("guest", guest)
            .set(
                "annual",
                *rng.pick(&[
                    "the annual access review",
                    "the engagement survey",
                    "open enrolment for benefits",
                    "the quarterly planning cycle",
                ]),
            )
            .set(
                "place",
                *rng.pick(&[
                    "the usual pizza place",
                    "the rooftop terrace",
                    "the office kitchen",
                    "the tapas bar round the corner",
                    "the bowling alley",
                    "the park, weather permitting",
                    "the ramen place on the high street",
                    "the climbing gym",
                    "the canal-side pub",
                ]),
            )
            .set(
                "chore",
                *rng.pick(&[
                    "move project documents into the new shared drive by the end of the month",
                    "archive their old project folders before the drive migration",
                    "update their profiles in the staff directory",
                    "book their annual leave for the holidays by Friday",
                    "clear out the shared fridge before the weekend",
                    "finish the mandatory data protection course this month",
                    "log their hours for the last sprint by Monday",
                    "add their out-of-office dates to the team calendar",
                ]),
            )
            .set(
                "present",
                *rng.pick(&[
                    "present the new reporting process",
                    "walk the team through the new expense tool",
                    "explain the changes to the travel policy",
                    "demo the new planning dashboard",
                    "talk about the office move",
                    "go through the results of the engagement survey",
                    "introduce the new procurement process",
                    "share the plans for next year's budget cycle",
                ]),
            )
            .set(
                "ask",
                *rng.pick(&[
                    "the Friday demo can move to Thursdays",
                    "contractors need the same security training as employees",
                    "the team can drop support for the oldest browser version",
                    "the shared calendar should be cleaned up",
                ]),
            )
            .set(
                "dept",
                *rng.pick(&[
                    "finance",
                    "legal",
                    "the data team",
                    "marketing",
                    "procurement",
                    "the PMO",
                    "people ops",
                    "IT",
                ]),
            );
        let mut pool = vec![
            say(
                a,
                &v,
                rng,
                &["{A} reminded everyone that {annual} starts on {annual_d}."],
                &["Reminder: {annual} starts on {annual_d}."],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} asked whether {ask}; no decision today.",
                    "{B} raised whether {ask}; to be picked up next time.",
                ],
                &["Can we check whether {ask}?", "Could we look at whether {ask}?"],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "The team social is on {social_d} at {place}.",
                    "{A} reminded everyone of the team social on {social_d}, at {place}.",
                    "Team drinks are on {social_d}, at {place}.",
                ],
                &[
                    "Don't forget the team social on {social_d}, at {place}.",
                    "Social's on {social_d}, at {place}; hope to see you there.",
                ],
            ),
            say(
                b,
                &v,
                rng,
                &[
                    "{B} asked everyone to {chore}.",
                    "{B} reminded the team to {chore}.",
                    "Request from {B}: everyone to {chore}.",
                ],
                &["Please could everyone {chore}?", "Small ask: please {chore}."],
            ),
            say(
                a,
                &v,
                rng,
                &[
                    "{guest} from {dept} will join the next meeting to {present}.",
                    "{A} has invited {guest} from {dept} to the next meeting to {present}.",
                    "Next time, {guest} ({dept}) will {present}.",
                ],
                &[
                    "{guest} from {dept} is joining next time to {present}.",
                    "I've asked {guest} from {dept} to come next time and {present}.",
                ],
            ),
        ];
        rng.shuffle(&mut pool);
        let keep = if want.is_some() { 2 } else { rng.range(1, 3) as usize };
        let mut stmts: Vec<Stmt> = pool.into_iter().take(keep).collect();
        let leave = say(
            c,
            &v,
            rng,
            &[
                "{C} will be on leave from {from} to {to}; {D} covers in the meantime.",
                "{C} is away from {from} to {to}, and {D} will cover.",
            ],
            &["I'm on leave from {from} to {to}. {D} will cover for me."],
        );
        if want == Some(Answer::Person) || rng.chance(40) {
            let at = rng.below(stmts.len() + 1);
            stmts.insert(at, leave);
        }
        let question = (want == Some(Answer::Person)).then(|| {
            self.q_person(
                d,
                v.pick(
                    rng,
                    &[
                        "Who will cover while {C} is on leave?",
                        "Who is covering for {C} during the leave?",
                        "Who stands in for {C} while {C} is away?",
                    ],
                ),
                Kind::OtherBusiness,
            )
        });
        Topic {
            kind: Kind::OtherBusiness,
            heading: rng.pick(&["Other business", "AOB", "Any other business"]).to_string(),
            stmts,
            actions: vec![],
            decision: None,
            question,
        }
    }
}

impl Topic {
    /// Sets the heading from a noun phrase (first letter capitalised) unless one is set.
    fn headed(mut self, noun: &str) -> Topic {
        if self.heading.is_empty() {
            self.heading = cap(noun);
        }
        self
    }
}

struct Doc {
    topics: Vec<Topic>,
    /// Non-target topics not (yet) included, in the order they may be added.
    spare: Vec<Topic>,
    next_meeting: Option<Date>,
    apologies: Option<usize>,
    decisions_recap: bool,
    actions_list: bool,
    time: String,
    header_style: usize,
}

impl Doc {
    fn question(&self) -> &Question {
        self.topics.iter().find_map(|t| t.question.as_ref()).expect("the target topic asks the question")
    }

    /// Adds or drops topics until the notes fit the band, then checks the answer-once rule.
    fn fit(mut self, m: &Meeting, band: UserBand, rng: &mut SplitMix64) -> Option<(String, Question)> {
        for _ in 0..16 {
            let notes = self.render(m);
            let q = self.question();
            let user = format!("{notes}\n\nQuestion: {}", q.text);
            let tokens = tokenizer::count(&user);
            if band.contains(tokens) {
                return answer_once(&notes, q).then(|| (user, q.clone()));
            }
            if tokens > band.hi {
                let droppable: Vec<usize> =
                    (0..self.topics.len()).filter(|&i| self.topics[i].question.is_none()).collect();
                if droppable.len() > 1 {
                    let i = droppable[rng.below(droppable.len())];
                    self.topics.remove(i);
                } else if self.decisions_recap {
                    self.decisions_recap = false;
                } else {
                    return None;
                }
            } else if !self.spare.is_empty() {
                let t = self.spare.remove(0);
                let at = rng.below(self.topics.len() + 1);
                self.topics.insert(at, t);
            } else {
                return None;
            }
        }
        None
    }

    fn render(&self, m: &Meeting) -> String {
        match m.format {
            Format::Minutes => self.minutes(m),
            Format::Bullets => self.bullets(m),
            Format::Transcript => self.transcript(m),
            Format::Email => self.email(m),
            Format::RoundTable => self.round_table(m),
        }
    }

    fn attendees(&self, m: &Meeting) -> String {
        (0..m.people.len()).map(|i| format!("{} ({})", m.full(i), m.roles[i])).collect::<Vec<_>>().join(", ")
    }

    /// The meeting's own date in the header: ISO, or the long form of the body's
    /// convention (a US-style document does not switch to day-first in its header).
    fn header_date(&self, m: &Meeting) -> String {
        let long = if m.month_first() { Style::MonthDayYear } else { Style::DayMonthYear };
        match self.header_style {
            0 | 1 => m.date.fmt(long),
            2 => m.date.iso(),
            _ => format!("{}, {}", crate::dates::WEEKDAYS[m.date.weekday()], m.date.fmt(long)),
        }
    }

    fn decisions(&self) -> Vec<String> {
        self.topics.iter().filter_map(|t| t.decision.clone()).collect()
    }

    fn actions(&self) -> Vec<&Action> {
        self.topics.iter().flat_map(|t| &t.actions).collect()
    }

    fn minutes(&self, m: &Meeting) -> String {
        let mut out = format!("{}\n", m.title(&self.topics));
        out.push_str(&format!("Date: {}, {}\n", self.header_date(m), self.time));
        out.push_str(&format!("Attendees: {}\n", self.attendees(m)));
        if let Some(i) = self.apologies {
            out.push_str(&format!("Apologies: {}\n", m.outsiders[i].full()));
        }
        out.push_str(&format!("Chair: {}. Notes: {}\n", m.full(m.chair), m.full(m.notetaker)));
        let inline_decisions = !self.decisions_recap;
        for (n, t) in self.topics.iter().enumerate() {
            out.push_str(&format!("\n{}. {}\n", n + 1, t.heading));
            let para: Vec<&str> = t.stmts.iter().map(|s| s.prose.as_str()).collect();
            out.push_str(&para.join(" "));
            out.push('\n');
            if inline_decisions {
                if let Some(d) = &t.decision {
                    out.push_str(&format!("Decision: {d}\n"));
                }
            }
        }
        if self.decisions_recap && !self.decisions().is_empty() {
            out.push_str("\nDecisions\n");
            for d in self.decisions() {
                out.push_str(&format!("- {d}\n"));
            }
        }
        if self.actions_list && !self.actions().is_empty() {
            out.push_str("\nAction items\n");
            for a in self.actions() {
                out.push_str(&format!("- {}: {}.\n", m.full(a.who), a.task));
            }
        }
        if let Some(d) = self.next_meeting {
            out.push_str(&format!("\nNext meeting: {}.\n", m.ds(d)));
        }
        out.trim_end().to_string()
    }

    fn bullets(&self, m: &Meeting) -> String {
        let short = m.date.fmt(if m.month_first() { Style::MonDay } else { Style::DayMon });
        let mut out = format!("{} - notes, {short} {}\n", m.title(&self.topics), m.date.y);
        let present: Vec<String> = (0..m.people.len()).map(|i| m.full(i)).collect();
        out.push_str(&format!("Present: {}\n", present.join(", ")));
        if let Some(i) = self.apologies {
            out.push_str(&format!("Absent: {}\n", m.outsiders[i].full()));
        }
        for t in &self.topics {
            out.push_str(&format!("\n{}\n", t.heading));
            for s in &t.stmts {
                out.push_str(&format!("- {}\n", s.prose));
            }
        }
        if self.decisions_recap && !self.decisions().is_empty() {
            out.push_str("\nDecided:\n");
            for d in self.decisions() {
                out.push_str(&format!("- {d}\n"));
            }
        }
        if self.actions_list && !self.actions().is_empty() {
            out.push_str("\nActions\n");
            for a in self.actions() {
                out.push_str(&format!("- {}: {}\n", m.first(a.who), a.task));
            }
        }
        if let Some(d) = self.next_meeting {
            out.push_str(&format!("\nNext: {}\n", m.ds(d)));
        }
        out.trim_end().to_string()
    }

    fn transcript(&self, m: &Meeting) -> String {
        let mut out = format!("Transcript (edited): {}\n", m.title(&self.topics));
        out.push_str(&format!("Recorded {}, {}.\n", self.header_date(m), self.time));
        out.push_str(&format!("Participants: {}\n\n", self.attendees(m)));
        let chair = m.first(m.chair);
        for (n, t) in self.topics.iter().enumerate() {
            let intro = match (n, (n + t.heading.len()) % 3) {
                (0, _) => format!("{chair}: Let's start. First item: {}.", t.heading),
                (_, 0) => format!("{chair}: Next item: {}.", t.heading),
                (_, 1) => format!("{chair}: Moving on. {}.", t.heading),
                _ => format!("{chair}: OK, next: {}.", t.heading),
            };
            out.push_str(&intro);
            out.push('\n');
            // Consecutive lines of one speaker merge, as an edited transcript would.
            let mut last = m.chair;
            for s in &t.stmts {
                if s.who == last {
                    out.pop();
                    out.push_str(&format!(" {}\n", s.spoken));
                } else {
                    out.push_str(&format!("{}: {}\n", m.first(s.who), s.spoken));
                }
                last = s.who;
            }
        }
        let close = match self.next_meeting {
            Some(d) => format!("\n{chair}: Thanks, everyone. We'll pick this up again on {}.", m.ds(d)),
            None => format!("\n{chair}: Thanks, everyone."),
        };
        out.push_str(&close);
        if self.actions_list && !self.actions().is_empty() {
            out.push_str("\n\nActions noted by the minute-taker:\n");
            for a in self.actions() {
                out.push_str(&format!("- {}: {}\n", m.first(a.who), a.task));
            }
        }
        out.trim_end().to_string()
    }

    fn email(&self, m: &Meeting) -> String {
        let short = m.date.fmt(if m.month_first() { Style::MonDay } else { Style::DayMon });
        let mut out = format!("Subject: Recap - {} ({short})\n", m.title(&self.topics));
        out.push_str(&format!("From: {}\n", m.full(m.notetaker)));
        out.push_str(&format!("To: {} team\n\n", m.team));
        out.push_str("Hi all,\n\n");
        out.push_str(&format!(
            "Thanks for joining {}'s meeting. Attendees: {}. Summary below.\n",
            crate::dates::WEEKDAYS[m.date.weekday()],
            self.attendees(m)
        ));
        for t in &self.topics {
            let para: Vec<&str> = t.stmts.iter().map(|s| s.prose.as_str()).collect();
            out.push_str(&format!("\n{}: {}\n", t.heading, para.join(" ")));
        }
        if self.actions_list && !self.actions().is_empty() {
            out.push_str("\nNext steps:\n");
            for a in self.actions() {
                out.push_str(&format!("- {}: {}\n", m.first(a.who), a.task));
            }
        }
        if let Some(d) = self.next_meeting {
            out.push_str(&format!("\nWe meet again on {}.\n", m.ds(d)));
        }
        out.push_str(&format!("\nThanks,\n{}", m.first(m.notetaker)));
        out
    }

    fn round_table(&self, m: &Meeting) -> String {
        let mut out = format!("{} - round-table notes\n", m.title(&self.topics));
        out.push_str(&format!("{} | Facilitator: {}\n", self.header_date(m), m.full(m.chair)));
        let present: Vec<String> = (0..m.people.len()).map(|i| m.full(i)).collect();
        out.push_str(&format!("Present: {}\n", and_list(&present)));
        // Each attendee reports on the topics they lead (the first speaker of a topic);
        // the discussion of a topic stays under its presenter so it keeps its context.
        for i in 0..m.people.len() {
            let mine: Vec<&Topic> =
                self.topics.iter().filter(|t| t.stmts.first().is_some_and(|s| s.who == i)).collect();
            if mine.is_empty() {
                continue;
            }
            out.push_str(&format!("\n{} ({})\n", m.full(i), m.roles[i]));
            for t in mine {
                let para: Vec<&str> = t.stmts.iter().map(|s| s.prose.as_str()).collect();
                out.push_str(&format!("- {}: {}\n", t.heading, para.join(" ")));
            }
        }
        if self.decisions_recap && !self.decisions().is_empty() {
            out.push_str("\nAgreed\n");
            for d in self.decisions() {
                out.push_str(&format!("- {d}\n"));
            }
        }
        if self.actions_list && !self.actions().is_empty() {
            out.push_str("\nActions\n");
            for a in self.actions() {
                out.push_str(&format!("- {}: {}\n", m.first(a.who), a.task));
            }
        }
        if let Some(d) = self.next_meeting {
            out.push_str(&format!("\nNext round-table: {}\n", m.ds(d)));
        }
        out.trim_end().to_string()
    }
}

/// The answer-once rule: a date as written occurs exactly once, a number occurs exactly
/// once as a standalone number (and never in another spelling), a person's full name occurs.
fn answer_once(notes: &str, q: &Question) -> bool {
    if let Some(once) = &q.once {
        // Standalone: "Dec 1" inside "Dec 19" or "5" inside "15" is another value.
        if standalone_count(notes, once) != 1 {
            return false;
        }
    }
    if let Some(d) = &q.digits {
        if standalone_count(notes, d) != 1 {
            return false;
        }
    }
    if q.never.iter().any(|s| standalone_count(notes, s) > 0) {
        return false;
    }
    if let Some(name) = &q.present {
        if !notes.contains(name.as_str()) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band() -> UserBand {
        UserBand { lo: 383, hi: 883 }
    }

    #[test]
    fn the_gold_appears_in_the_notes_and_dates_and_numbers_once() {
        for seed in [1u64, 2, 3, 4, 5, 6, 7, 8, 20261129] {
            for g in generate(seed, 60, band()) {
                let notes = g.user.rsplit_once("\n\nQuestion: ").unwrap().0;
                let value = g.gold["value"].as_str().unwrap();
                assert!(notes.contains(value), "{value} not in:\n{}", g.user);
                match g.gold["type"].as_str().unwrap() {
                    // "9 Dec" inside "19 Dec" is another date, hence standalone.
                    "date" => assert_eq!(standalone_count(notes, value), 1, "{value}:\n{}", g.user),
                    "number" => {
                        let core = value.trim_start_matches(|c: char| !c.is_ascii_digit());
                        let core: String =
                            core.chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.').collect();
                        let core = core.trim_end_matches(['.', ',']);
                        assert_eq!(standalone_count(notes, core), 1, "{core}:\n{}", g.user);
                    }
                    _ => {
                        let surname = value.split_once(' ').unwrap().1;
                        assert!(g.aliases.iter().any(|a| a == surname), "{value}: {:?}", g.aliases);
                    }
                }
                assert!(!g.user.contains('{') && !g.user.contains("[["), "{}", g.user);
            }
        }
    }

    #[test]
    fn registrations_titles_periods_and_questions_fit_the_meeting() {
        let all = generate(20261129, 237, band());
        let closed: Vec<&str> = DOMAINS
            .iter()
            .flat_map(|d| d.events.iter().copied())
            .filter(|e| !crate::meeting_vocab::takes_registrations(e))
            .collect();
        let mut questions = Vec::new();
        for g in &all {
            let u = &g.user;
            for e in &closed {
                for verb in ["registered for", "signed up for", "sign-ups does", "registrations for"] {
                    assert!(!u.contains(&format!("{verb} {e}")), "{e}:\n{u}");
                }
            }
            let title = u.lines().next().unwrap().to_lowercase();
            if title.contains("postmortem") || title.contains("incident review") {
                assert!(u.contains(" incident"), "{u}");
            }
            for bad in ["a missing index added", "the limit today is", "raised to"] {
                assert!(!u.contains(bad), "{bad}:\n{u}");
            }
            questions.push(u.rsplit_once("Question: ").unwrap().1.to_string());
        }
        let mut distinct = questions.clone();
        distinct.sort();
        distinct.dedup();
        assert!(distinct.len() * 100 >= questions.len() * 95, "{} distinct of {}", distinct.len(), questions.len());
    }

    #[test]
    fn reporting_periods_have_ended_by_the_meeting() {
        for seed in [1u64, 2, 3] {
            let mut rng = SplitMix64::new(seed);
            for d in DOMAINS {
                for _ in 0..20 {
                    let mut m = Meeting::new(d, Format::Minutes, &mut rng);
                    let t = m.metrics(None, &mut rng);
                    let text = t.stmts[0].prose.clone();
                    let month = m.date.m as usize;
                    let last = crate::dates::MONTHS[(month + 10) % 12];
                    let last_q = ["Q4", "Q1", "Q2", "Q3"][(month - 1) / 3];
                    let named: Vec<&str> =
                        crate::dates::MONTHS.iter().copied().filter(|n| text.contains(&format!("for {n}"))).collect();
                    for n in named {
                        assert_eq!(n, last, "{text} (meeting in month {month})");
                    }
                    for q in ["Q1", "Q2", "Q3", "Q4"] {
                        if text.contains(&format!("for {q}")) {
                            assert_eq!(q, last_q, "{text}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_format_answer_and_domain_occurs() {
        let all = generate(20261129, 237, band());
        for tag in [
            "answer:person",
            "answer:date",
            "answer:number",
            "format:Minutes",
            "format:Bullets",
            "format:Transcript",
            "format:Email",
            "format:RoundTable",
        ] {
            assert!(all.iter().any(|g| g.tags.iter().any(|t| t == tag)), "{tag}");
        }
        for d in 0..DOMAINS.len() {
            let tag = format!("domain:{d}");
            assert!(all.iter().any(|g| g.tags.contains(&tag)), "{tag}");
        }
    }
}
