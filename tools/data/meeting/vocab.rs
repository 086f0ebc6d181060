//! What a domain of meeting notes supplies, and how its words are read. Each domain supplies
//! only nouns (what a team owns, schedules, spends on, measures, hires, waits for); the
//! sentence patterns live in the `topics_*.rs` files and are shared by all domains, so any
//! topic can occur in any domain with that domain's words. The domains themselves are the
//! table in `domains.rs`.

/// How a metric's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Integer percent: 12%.
    Percent,
    /// Percent with one decimal, stored in tenths: 99.5%.
    PercentTenths,
    /// A count, with the unit after it ("9,800 tickets").
    Count(&'static str),
    /// Money in the document's currency.
    Money,
    /// Hours with one decimal, stored in tenths: 6.5 hours.
    HoursTenths,
    /// Whole minutes.
    Minutes,
    /// Milliseconds: 340 ms.
    Millis,
    /// Whole days.
    Days,
}

#[derive(Debug, Clone, Copy)]
pub struct Metric {
    pub name: &'static str,
    pub kind: MetricKind,
    pub lo: u64,
    pub hi: u64,
}

pub(super) const fn m(name: &'static str, kind: MetricKind, lo: u64, hi: u64) -> Metric {
    Metric { name, kind, lo, hi }
}

/// A rule with a threshold, e.g. ("goodwill refunds", "goodwill refunds above {value} need a
/// team lead's approval", Money, 50, 400).
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// What the rule is about, for the question.
    pub topic: &'static str,
    /// The rule as a clause, with `{value}` for the threshold.
    pub rule: &'static str,
    pub kind: MetricKind,
    pub lo: u64,
    pub hi: u64,
}

pub(super) const fn pol(topic: &'static str, rule: &'static str, kind: MetricKind, lo: u64, hi: u64) -> Policy {
    Policy { topic, rule, kind, lo, hi }
}

pub struct Domain {
    pub teams: &'static [&'static str],
    /// Meeting titles; `{team}` and `{product}` are filled in.
    pub titles: &'static [&'static str],
    pub roles: &'static [&'static str],
    pub products: &'static [&'static str],
    /// Things a person can own, draft, review and sign off.
    pub deliverables: &'static [&'static str],
    /// Scheduled events with participants.
    pub events: &'static [&'static str],
    /// Things with a monthly budget.
    pub budget_items: &'static [&'static str],
    pub metrics: &'static [Metric],
    /// Roles to hire, plural.
    pub hires: &'static [&'static str],
    /// What an outside vendor or partner has promised to deliver.
    pub artifacts: &'static [&'static str],
    /// (vendor's line of business, what is bought from it).
    pub vendors: &'static [(&'static str, &'static str)],
    /// (system, what fails, plural noun of what failed) for incidents.
    pub incidents: &'static [(&'static str, &'static str, &'static str)],
    pub policies: &'static [Policy],
    /// Work that slips when a dependency is late.
    pub downstream: &'static [&'static str],
    /// Whether the team deals with customer accounts (and so with customer escalations).
    pub customer_facing: bool,
}

/// Whether people sign up for an event (a webinar, a training, a workshop), so that a
/// registration count makes sense; a rehearsal, a review or a board meeting has none.
pub fn takes_registrations(event: &str) -> bool {
    [
        "webinar",
        "summit",
        "training",
        "workshop",
        "session",
        "orientation",
        "open day",
        "roundtable",
        "bug bash",
        "onboarding day",
        "sales kickoff",
        "beta kickoff",
        "swap day",
    ]
    .iter()
    .any(|k| event.contains(k))
}

/// Whether a metric improves as it falls (latency, cost, open findings).
pub fn lower_is_better(metric: &str) -> bool {
    [
        "blockers",
        "time",
        "latency",
        "pages per week",
        "cost",
        "bill",
        "spend",
        "untagged",
        "open service desk",
        "past warranty",
        "failed",
        "days to close",
        "overdue",
        "variance",
        "click rate",
        "high-risk",
        "at risk",
    ]
    .iter()
    .any(|k| metric.contains(k))
        && !metric.contains("click-through")
}

/// Whether a role would hold a pager for a system (engineering, IT, operations).
pub fn technical(role: &str) -> bool {
    let l = role.to_lowercase();
    let words: Vec<&str> = l.split(|c: char| !c.is_alphanumeric() && c != '-').collect();
    ["it", "sre", "qa", "bi", "devops", "ciso"].iter().any(|w| words.contains(w))
        || [
            "engineer",
            "developer",
            "platform",
            "backend",
            "database",
            "infrastructure",
            "security",
            "architect",
            "on-call",
            "operations",
            "service desk",
            "support lead",
        ]
        .iter()
        .any(|k| l.contains(k))
}
