//! Topics about plans and who carries them: a deliverable that gets an owner and a due date
//! for its first draft (with a reviewer beside the owner), an event moved to a new date (with
//! the date it was moved from and, for events people sign up for, the registrations), and a
//! delivery awaited from a vendor (the promised date, the slip downstream, the chase date).
use super::vocab::MetricKind;
use super::{act, possessive, say, strip_the, Answer, Kind, Meeting, Topic};
use crate::names;
use crate::pools::{cap, thousands, CITIES};
use inferbench_stats::rng::SplitMix64;

impl Meeting {
    pub(super) fn ownership(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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

    pub(super) fn reschedule(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let open: Vec<&str> = self.d.events.iter().copied().filter(|e| super::vocab::takes_registrations(e)).collect();
        let e = if want == Some(Answer::Number) { *rng.pick(&open) } else { *rng.pick(self.d.events) };
        let registers = super::vocab::takes_registrations(e);
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

    pub(super) fn dependency(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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
}
