//! Topics about people: hiring (the headcount asked for next to the one approved, the first
//! start date, the interview panel), a training programme (its length, its cohorts' dates and
//! seats, who runs which cohort), and other business (leave, a social, a guest, an annual
//! cycle), which asks only about a person.
use super::vocab::MetricKind;
use super::{act, say, Answer, Kind, Meeting, Stmt, Topic};
use crate::pools::{cap, number_aliases};
use inferbench_stats::rng::SplitMix64;

impl Meeting {
    pub(super) fn hiring(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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

    pub(super) fn training(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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

    pub(super) fn other_business(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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
