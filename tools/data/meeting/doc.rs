//! The document: the target topic and the others in their order, fitted to the token band by
//! adding or dropping topics, checked against the answer-once rule, and rendered in the
//! meeting's format (minutes, bullets, transcript, e-mail or round-table) under a title that
//! suits its agenda.
use super::{Action, Answer, Format, Kind, Meeting, Question, Topic, KINDS};
use crate::dates::{Date, Style};
use crate::item::UserBand;
use crate::pools::{and_list, standalone_count};
use inferbench_judge::tokenizer;
use inferbench_stats::rng::SplitMix64;

impl Meeting {
    /// The target topic of kind `kind` asking about `want`, then the others, shuffled.
    pub(super) fn compose(&mut self, want: Answer, rng: &mut SplitMix64) -> Doc {
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

pub(super) struct Doc {
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
    pub(super) fn fit(mut self, m: &Meeting, band: UserBand, rng: &mut SplitMix64) -> Option<(String, Question)> {
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
