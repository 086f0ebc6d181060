//! Support tickets written by users, each built around one row of the triage rule table in
//! `ticket-triage.system.txt`.
//!
//! An item starts from a [`Case`]: the category, the rule or tie-break that decides it, and
//! the priority rule that decides the priority (the first one that matches, as the table
//! says). The text is then written from the facts that case needs, and from nothing that an
//! earlier priority rule would match: a cosmetic bug always says the whole team sees it (or
//! rule 10, single user, would come first); an improvement never claims anything is slow or
//! blocked. Traps are cases where the loud part of the ticket is not the part that decides:
//! an urgent-sounding feature request is still p3, a calm report of exposed data is p0, a
//! lockout with nothing broken is customer_support p1, a team held up despite a workaround
//! is p1 because rule 7 comes before rule 8.
//!
//! The files: this one writes a ticket as parts and fits it to the token band; `case.rs` holds
//! the cases and how often each occurs; `products.rs` the products and their users' words;
//! `body.rs` the sentences that decide the triage; `extras.rs` the context and subject lines
//! that decide nothing; `text.rs` capitals, verb forms and typos.
mod body;
mod case;
mod extras;
mod products;
mod text;

use crate::item::{Generated, UserBand};
use crate::names;
use crate::rounds::rounds;
use body::body;
use case::{Case, DECK};
use extras::{context_lines, subject_line};
use inferbench_judge::tokenizer;
use inferbench_stats::rng::{key, SplitMix64};
use products::{vocabulary, PRODUCTS};
use serde_json::json;
use text::add_typo;

const FAMILY: &str = "ticket-triage";

/// Generates `n` tickets.
pub fn generate(seed: u64, n: usize, band: UserBand) -> Vec<Generated> {
    let plan = rounds(seed, "ticket/case", DECK, n);
    (0..n).map(|i| item(seed, i, plan[i], band)).collect()
}

fn item(seed: u64, index: usize, case: Case, band: UserBand) -> Generated {
    for attempt in 0..300u64 {
        let mut rng = SplitMix64::derive(seed, &[key(FAMILY), index as u64, attempt]);
        let t = Ticket::write(case, &mut rng);
        if let Some(user) = t.fit(band, &mut rng) {
            let (category, cat_rule, priority, prio_rule) = case.rules();
            return Generated {
                user,
                gold: json!({"category": category, "priority": priority}),
                aliases: vec![],
                tags: vec![
                    format!("case:{case:?}"),
                    format!("category:{category}"),
                    format!("category-rule:{cat_rule}"),
                    format!("priority-rule:{prio_rule}"),
                ],
            };
        }
    }
    panic!("ticket {index}: no rendering of {case:?} fits the token band {band:?}");
}

/// A ticket as parts: the sentences that decide its triage (always kept) and optional ones
/// (greeting, context, sign-off) that `fit` adds or drops to land in the token band.
struct Ticket {
    subject: Option<String>,
    greeting: Option<String>,
    core: Vec<String>,
    /// Optional sentences, in the order they are added.
    extra: Vec<String>,
    used_extra: usize,
    /// Context after the problem statement, or at the end before the sign-off.
    extra_at_end: bool,
    closing: Option<String>,
    typo: bool,
}

impl Ticket {
    fn write(case: Case, rng: &mut SplitMix64) -> Ticket {
        let p = rng.pick(PRODUCTS);
        let mut v = vocabulary(p, rng);
        let core = body(case, p, &mut v, rng);
        let tone = rng.below(4);
        let sender = names::people(rng, 1, &[]).remove(0);
        v.set("first", sender.first.clone());
        v.set("full", sender.full());
        let login = format!(
            "{}.{}@{}",
            names::fold_ascii(&sender.first).to_lowercase().replace(' ', ""),
            names::fold_ascii(&sender.last).to_lowercase().replace(' ', ""),
            v.get("domain")
        );
        v.set("login", login);
        let greeting = rng.chance(55).then(|| {
            v.pick(rng, &["Hi,", "Hello,", "Hi there,", "Hello support team,", "Hi team,", "Good morning,", "Hey,"])
        });
        let closing = rng.chance(70).then(|| {
            let polite = [
                "Thanks,\n{first}",
                "Thanks in advance!",
                "Kind regards,\n{full}",
                "Thank you,\n{full}",
                "Cheers,\n{first}",
                "Best,\n{first}",
            ];
            // "Please fix." only closes a bug report; other tickets ask for no fix.
            let curt = if case.rules().0 == "bug" {
                ["Please advise.", "Please fix.", "{first}", "Thanks."]
            } else {
                ["Please advise.", "Please let me know.", "{first}", "Thanks."]
            };
            if tone == 3 {
                v.pick(rng, &curt)
            } else {
                v.pick(rng, &polite)
            }
        });
        let mut extra = context_lines(case, &v, rng);
        if tone == 2 && !matches!(case.rules().2, "p3") {
            extra.insert(
                0,
                v.pick(
                    rng,
                    &[
                        "This is really frustrating.",
                        "Honestly this is getting ridiculous.",
                        "I'm pretty annoyed, to be honest.",
                        "Not impressed, I have to say.",
                        "We pay good money for this.",
                        "Second time this month.",
                    ],
                ),
            );
        }
        let subject = rng.chance(25).then(|| subject_line(case, &v, rng)).flatten();
        Ticket {
            subject,
            greeting,
            core,
            extra,
            used_extra: 0,
            closing,
            typo: rng.chance(12),
            extra_at_end: rng.chance(40),
        }
    }

    fn render(&self, rng_seed: u64) -> String {
        let mut out = String::new();
        if let Some(s) = &self.subject {
            out.push_str(&format!("Subject: {s}\n\n"));
        }
        if let Some(g) = &self.greeting {
            out.push_str(g);
            out.push('\n');
        }
        let mut body: Vec<&str> = self.core.iter().map(String::as_str).collect();
        // People lead with the problem; context comes after it or at the very end.
        for (i, e) in self.extra[..self.used_extra].iter().enumerate() {
            let at = if self.extra_at_end { body.len() } else { (1 + i).min(body.len()) };
            body.insert(at, e);
        }
        let mut text = body.join(" ");
        if self.typo {
            text = add_typo(&text, rng_seed);
        }
        out.push_str(&text);
        if let Some(c) = &self.closing {
            out.push_str("\n\n");
            out.push_str(c);
        }
        out
    }

    /// Adds or drops optional parts until the ticket fits the band, then keeps adding
    /// context towards a length drawn for this ticket, so lengths spread over the band.
    fn fit(mut self, band: UserBand, rng: &mut SplitMix64) -> Option<String> {
        let typo_seed = rng.next_u64();
        // Lengths lean to the short side: a ticket carries no more filler than it needs.
        let target = rng.range(band.lo as i64, ((band.lo + band.hi) / 2 + 8).min(band.hi) as i64) as usize;
        self.used_extra = rng.below(self.extra.len().min(2) + 1);
        for _ in 0..16 {
            let text = self.render(typo_seed);
            let tokens = tokenizer::count(&text);
            if tokens > band.hi {
                if self.used_extra > 0 {
                    self.used_extra -= 1;
                } else if self.subject.is_some() {
                    self.subject = None;
                } else if self.greeting.is_some() {
                    self.greeting = None;
                } else {
                    return None;
                }
            } else if tokens < band.lo {
                if self.used_extra == self.extra.len() {
                    return None;
                }
                self.used_extra += 1;
            } else if tokens < target && self.used_extra < self.extra.len() {
                self.used_extra += 1;
                if tokenizer::count(&self.render(typo_seed)) > band.hi {
                    return Some(text);
                }
            } else {
                return Some(text);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
