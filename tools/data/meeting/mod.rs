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
//!
//! The files: this one holds what an item is made of (the answer types, formats and topic
//! kinds, the statements, questions and topics, the meeting's facts) and draws the items;
//! `facts.rs` sets up a meeting and draws the fresh dates, numbers and values its topics
//! state; the `topics_*.rs` files write the topics, a few kinds each (a topic decides its
//! facts, registers its dates and numbers with the meeting so no other topic reuses them,
//! and states them; `want` asks it to also pose the question); `doc.rs` composes the
//! document from topics, fits it to the token band and renders it in its format.
mod doc;
pub(crate) mod domains;
mod facts;
mod topics_money;
mod topics_operations;
mod topics_people;
mod topics_plans;
pub(crate) mod vocab;

use crate::dates::{Date, Style};
use crate::item::{Generated, UserBand};
use crate::names::Person;
use crate::pools::{cap, Currency, MoneyStyle, Vars};
use crate::rounds::rounds;
use domains::DOMAINS;
use inferbench_stats::rng::{key, SplitMix64};
use serde_json::json;
use vocab::Domain;

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

impl Topic {
    /// Sets the heading from a noun phrase (first letter capitalised) unless one is set.
    fn headed(mut self, noun: &str) -> Topic {
        if self.heading.is_empty() {
            self.heading = cap(noun);
        }
        self
    }
}

#[cfg(test)]
mod tests;
