//! Topics about how the work runs: metrics for the period just ended (against the period
//! before and a target), an incident (when, how many affected, who was on call, the
//! follow-up review), and a policy whose threshold changes (the new value next to the old,
//! the date it applies from).
use super::vocab::MetricKind;
use super::{act, say, strip_the, Answer, Kind, Meeting, Topic};
use crate::pools::{cap, Vars};
use inferbench_stats::rng::SplitMix64;

impl Meeting {
    pub(super) fn metrics(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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
        if mi.is_multiple_of(3) {
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
        let lower_better = super::vocab::lower_is_better(m2.name);
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

    pub(super) fn incident(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
        let (system, symptom, objects) = *rng.pick(self.d.incidents);
        let mut who = self.some(rng, 3, &[self.chair]);
        // Whoever was on call holds a technical role; with nobody technical in the room,
        // the person who raised the alarm is asked about instead.
        let on_call = (0..self.people.len())
            .filter(|&i| i != self.chair && super::vocab::technical(&self.roles[i]))
            .collect::<Vec<_>>();
        if !on_call.is_empty() && !super::vocab::technical(&self.roles[who[1]]) {
            let pick = on_call[rng.below(on_call.len())];
            if let Some(j) = who.iter().position(|&w| w == pick) {
                who.swap(1, j);
            } else {
                who[1] = pick;
            }
        }
        let b_on_call = super::vocab::technical(&self.roles[who[1]]);
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

    pub(super) fn policy(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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
}
