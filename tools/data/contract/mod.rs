//! Contract excerpts: B2B technology agreements with definitions, numbered clauses and
//! cross-references, from which the ten commercial terms of the output schema are extracted.
//!
//! The terms are decided first ([`facts::Facts`]), then every section is rendered from them with
//! its own phrasing variants. Each document also carries the clauses a careless reader
//! confuses with the terms: cure periods and dispute windows next to the non-renewal notice,
//! support response times and maintenance notices in hours next to the security-incident
//! deadline, a signature date next to the effective date, and references to agreements of
//! another type (the licence a support agreement supplements, the services a subscription
//! excludes). Distractor periods never equal a term's number, so a wrong pick is always
//! visibly wrong.
//!
//! Dates: the initial term's end date is always stated in the text (computed here with real
//! calendar arithmetic when the text also states the term's length), so the model never has
//! to calculate one.
//!
//! The files: this one draws the items; `facts.rs` decides the terms; `doc.rs` writes the
//! document from them, section by section (`opening.rs`, `obligations.rs`, `term.rs`,
//! `boilerplate.rs`), with the words of `vocab.rs` and the choices of `section.rs`, and fits
//! it to the token band.
mod boilerplate;
mod doc;
mod facts;
mod obligations;
mod opening;
mod section;
mod term;
pub(crate) mod vocab;

use crate::item::{Generated, UserBand};
use doc::Doc;
use facts::{decide, Plan};
use inferbench_stats::rng::{key, SplitMix64};

const FAMILY: &str = "contract-terms-extraction";

/// Generates `n` contract items.
pub fn generate(seed: u64, n: usize, band: UserBand) -> Vec<Generated> {
    let plan = Plan::new(seed, n);
    (0..n).map(|i| item(seed, i, &plan, band)).collect()
}

fn item(seed: u64, index: usize, plan: &Plan, band: UserBand) -> Generated {
    for attempt in 0..200u64 {
        let mut rng = SplitMix64::derive(seed, &[key(FAMILY), index as u64, attempt]);
        let facts = decide(&mut rng, plan, index);
        let doc = Doc::build(&facts, &mut rng);
        if let Some(user) = doc.fit(band, &mut rng) {
            let mut tags = vec![
                format!("type:{}", facts.kind.gold()),
                format!("renewal:{:?}", facts.renewal),
                format!("convenience:{:?}", facts.convenience),
                format!("payment:{:?}", facts.payment),
                format!("security:{:?}", facts.security),
            ];
            if facts.signed.is_some() {
                tags.push("signature-date".into());
            }
            return Generated { user, gold: facts.gold(), aliases: vec![], tags };
        }
    }
    panic!("contract {index}: no rendering fits the token band {band:?}");
}

#[cfg(test)]
mod tests;
