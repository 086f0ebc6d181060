//! Topics about money: a budget line capped after a request for more (the spend, the request
//! and the cap side by side), a vendor's renewal quote (list price against the committed
//! deal, the signing date against the current contract's expiry), and a customer escalation
//! (its tickets, its yearly value, the service credit offered, the renewal date).
use super::vocab::MetricKind;
use super::{act, budget_heading, possessive, say, Answer, Kind, Meeting, Topic};
use crate::names;
use crate::pools::cap;
use inferbench_stats::rng::SplitMix64;

impl Meeting {
    pub(super) fn budget(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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

    pub(super) fn vendor_quote(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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

    pub(super) fn escalation(&mut self, want: Option<Answer>, rng: &mut SplitMix64) -> Topic {
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
}
