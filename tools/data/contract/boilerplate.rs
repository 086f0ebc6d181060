//! The optional boilerplate sections (confidentiality, liability, warranty, audit, force
//! majeure, disputes, assignment, insurance, non-solicitation), each with its own numbers;
//! `Doc::fit` takes as many as the token band needs.
use super::facts::{Facts, Kind};
use super::section::{fix_spelling, Ctx, Section};
use inferbench_stats::rng::SplitMix64;

/// Optional boilerplate sections, each with its own numbers, in a random order; `fit` takes
/// as many as the token band needs.
pub(super) fn misc_sections(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Vec<Section> {
    let mut out = Vec::new();
    let mut add = |key: &'static str, title: &str, clauses: Vec<String>| {
        out.push(Section { key, title: title.to_string(), clauses, optional: true })
    };
    let years = ctx.fresh(rng, &[2, 3, 5, 7]);
    ctx.v.set("years", format!("{} {}", ctx.n(years), "years"));
    add(
        "confidentiality",
        "Confidentiality",
        vec![
            ctx.r(
                rng,
                &[
                    "Each party shall keep the other party's Confidential Information confidential and use it only to perform this Agreement.",
                    "Neither party shall disclose the other party's confidential information except to its employees and advisers who need to know it and are bound by equivalent obligations.",
                ],
            ),
            ctx.r(
                rng,
                &[
                    "The obligations in this section continue for {years} after expiry or termination of this Agreement.",
                    "These confidentiality obligations survive for {years} after this Agreement ends.",
                ],
            ),
        ],
    );
    let cap_months = ctx.fresh(rng, &[6, 12, 18, 24]);
    ctx.v.set("capm", ctx.months(cap_months));
    add(
        "liability",
        "Limitation of Liability",
        vec![
            ctx.r(
                rng,
                &[
                    "Each party's total liability under this Agreement is limited to the fees paid or payable by {c} in the {capm} before the event giving rise to the claim.",
                    "Except for liability that cannot be limited by law, neither party's aggregate liability shall exceed the amounts paid under this Agreement during the {capm} preceding the claim.",
                ],
            ),
            ctx.r(
                rng,
                &[
                    "Neither party is liable for any indirect or consequential loss, or for loss of profits, revenue or goodwill.",
                    "Nothing in this Agreement limits liability for death or personal injury caused by negligence, or for fraud.",
                ],
            ),
        ],
    );
    let warranty = ctx.fresh(rng, &[30, 60, 90, 180]);
    ctx.v.set("warranty", ctx.days(warranty));
    add(
        "warranty",
        "Warranties",
        vec![match f.kind {
            Kind::Services => ctx.r(
                rng,
                &["{s} warrants that each Deliverable will conform to its specification for {warranty} after acceptance. {c}'s remedy is re-performance of the non-conforming Services."],
            ),
            Kind::Saas => ctx.r(
                rng,
                &["{s} warrants that the {service} will perform materially in accordance with the Documentation. If it does not, {c} must report the non-conformity within {warranty} of discovering it."],
            ),
            _ => ctx.r(
                rng,
                &[
                    "{s} warrants that the {service} will perform substantially in accordance with the Documentation for {warranty} after delivery. {c}'s exclusive remedy under this warranty is repair or replacement.",
                    "For {warranty} from delivery, {s} warrants that the {service} will be free from material defects.",
                ],
            ),
        }],
    );
    let audit = ctx.fresh(rng, &[10, 15, 20, 30]);
    ctx.v.set("audit", ctx.n(audit));
    if f.kind == Kind::License || rng.chance(40) {
        add(
            "audit",
            "Audit",
            vec![ctx.r(
                rng,
                &[
                    "{s} may audit {c}'s compliance with this Agreement once per calendar year on {audit} Business Days' written notice.",
                    "On at least {audit} Business Days' notice, {c} shall allow {s} or its independent auditor to verify its use of the {service}, no more than once a year.",
                ],
            )],
        );
    }
    let fm = ctx.fresh(rng, &[30, 45, 60, 90]);
    ctx.v.set("fm", ctx.days(fm));
    add(
        "force_majeure",
        "Force Majeure",
        vec![ctx.r(
            rng,
            &[
                "Neither party is liable for delay or failure caused by events beyond its reasonable control. If such an event continues for more than {fm}, either party may terminate the affected services by written notice.",
                "A party affected by a force majeure event shall notify the other promptly. If the event prevents performance for {fm} or more, the other party may terminate this Agreement on written notice.",
            ],
        )],
    );
    let esc = ctx.fresh(rng, &[5, 10, 14, 20]);
    ctx.v.set("esc", ctx.days(esc));
    add(
        "disputes",
        *rng.pick(&["Dispute Resolution", "Escalation", "Disputes"]),
        vec![
            ctx.r(
                rng,
                &[
                    "Any dispute shall first be escalated to the parties' account managers, who shall meet within {esc} of a written request.",
                    "The parties shall try to resolve any dispute through their senior executives, who shall meet within {esc} after either party requests it.",
                ],
            ),
            ctx.r(
                rng,
                &[
                    "This Agreement is governed by the laws of the jurisdiction in which {s} has its registered office.",
                    "The courts of {city} have exclusive jurisdiction over any dispute arising out of this Agreement.",
                ],
            ),
        ],
    );
    add(
        "assignment",
        "Assignment and Subcontracting",
        vec![ctx.r(
            rng,
            &[
                "Neither party may assign this Agreement without the other party's prior written consent, which shall not be unreasonably withheld, except to a successor of its entire business.",
                "{s} may use subcontractors to perform its obligations but remains responsible for their acts and omissions.",
            ],
        )],
    );
    let ins = rng.pick(&["1,000,000", "2,000,000", "5,000,000", "10,000,000"]).to_string();
    ctx.v.set("ins", ins);
    if rng.chance(50) {
        add(
            "insurance",
            "Insurance",
            vec![ctx.r(
                rng,
                &["{s} shall maintain professional indemnity and cyber liability insurance with a limit of not less than {ins} per claim for the term of this Agreement and for one (1) year afterwards."],
            )],
        );
    }
    if f.kind == Kind::Services && rng.chance(60) {
        let m = ctx.fresh(rng, &[6, 9, 12]);
        ctx.v.set("nons", ctx.months(m));
        add(
            "non_solicitation",
            "Non-Solicitation",
            vec![ctx.r(
                rng,
                &["During the term and for {nons} afterwards, {c} shall not solicit for employment any {s} personnel who worked on the Services, except through general advertising."],
            )],
        );
    }
    let mut order: Vec<usize> = (0..out.len()).collect();
    rng.shuffle(&mut order);
    order
        .into_iter()
        .map(|i| {
            let mut s = out[i].clone();
            s.clauses = s.clauses.into_iter().map(|x| fix_spelling(ctx, x)).collect();
            s
        })
        .collect()
}
