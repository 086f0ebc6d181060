//! The sections on how long the agreement runs and how it ends: the notices section (which a
//! cross-reference may point to), the term and its renewal, and termination, for convenience
//! or for cause (with cure periods that are not the notice period).
use super::facts::{Convenience, Facts, Kind, Renewal};
use super::section::{Ctx, Section};
use inferbench_stats::rng::SplitMix64;

pub(super) fn notices_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64, needed: bool) -> Option<Section> {
    if !needed && !rng.chance(60) {
        return None;
    }
    let mut c = vec![ctx.r(
        rng,
        &[
            "Notices under this Agreement must be in writing and sent to the addresses set out above, or to any other address a party notifies for this purpose.",
            "Any notice under this Agreement shall be in writing and delivered by hand, by courier or by e-mail to the address each party designates.",
        ],
    )];
    if matches!(f.renewal, Renewal::AutoNoticeCrossRef) {
        ctx.v.set("nrn", ctx.days(f.non_renewal_days.unwrap()));
        c.push(ctx.r(
            rng,
            &[
                "Notice of non-renewal under {ref} [[term]] must be given at least {nrn} before the end of the Initial Term or of the then-current Renewal Term.",
                "A party that does not wish the Agreement to renew under {ref} [[term]] must notify the other party in writing at least {nrn} before the end of the current term.",
            ],
        ));
        ctx.v.set("nrn_clause", format!("[[notices]].{}", c.len()));
    }
    if matches!(f.convenience, Convenience::CustomerCrossRef) {
        ctx.v.set("tfc", ctx.days(f.convenience_days.unwrap()));
        c.push(ctx.r(
            rng,
            &[
                "Notice of termination for convenience under {ref} [[termination]] must be given at least {tfc} before the termination date it specifies.",
                "Termination for convenience under {ref} [[termination]] requires not less than {tfc}' prior written notice.",
            ],
        ));
        ctx.v.set("tfc_clause", format!("[[notices]].{}", c.len()));
    }
    let d = ctx.fresh(rng, &[2, 3, 5]);
    ctx.v.set("deemed", ctx.n(d));
    c.push(ctx.r(
        rng,
        &[
            "A notice sent by courier is deemed received {deemed} Business Days after dispatch; a notice sent by e-mail is deemed received on the next Business Day.",
            "Notices are deemed received on delivery by hand, or {deemed} Business Days after posting by recorded delivery.",
        ],
    ));
    Some(Section { key: "notices", title: "Notices".to_string(), clauses: c, optional: !needed })
}

pub(super) fn term_section(
    f: &Facts,
    ctx: &mut Ctx,
    rng: &mut SplitMix64,
    initial_in_defs: bool,
    renewal_in_defs: bool,
) -> Section {
    let mut c = Vec::new();
    ctx.v.set("end", ctx.date(f.end));
    ctx.v.set("term_len", ctx.months(f.term_months as u32));
    ctx.v.set("ref", ctx.refword);
    if initial_in_defs {
        c.push(ctx.r(
            rng,
            &[
                "This Agreement begins on the Effective Date and continues for the Initial Term, unless terminated earlier under {ref} [[termination]].",
                "This Agreement shall remain in force for the Initial Term, subject to earlier termination in accordance with {ref} [[termination]].",
            ],
        ));
    } else {
        c.push(ctx.r(
            rng,
            &[
                "This Agreement commences on the Effective Date and continues until {end} (the \"Initial Term\"), unless terminated earlier under {ref} [[termination]].",
                "The initial term of this Agreement starts on the Effective Date and ends on {end} (the \"Initial Term\").",
                "This Agreement has an initial term of {term_len}, beginning on the Effective Date and ending on {end} (the \"Initial Term\").",
                "This Agreement remains in force from the Effective Date until {end} inclusive (the \"Initial Term\").",
                "The Initial Term runs from the Effective Date to {end}.",
            ],
        ));
    }
    match f.renewal {
        Renewal::AutoNotice | Renewal::AutoNoticeCrossRef | Renewal::AutoExternal | Renewal::AutoUnlessTerminated => {
            let m = f.renewal_months.unwrap();
            ctx.v.set("rmonths", ctx.months(m));
            let renews = if renewal_in_defs {
                "successive Renewal Terms".to_string()
            } else {
                ctx.r(
                    rng,
                    &[
                        "successive periods of {rmonths} (each a \"Renewal Term\")",
                        "further periods of {rmonths} each (each a \"Renewal Term\")",
                        "consecutive renewal periods of {rmonths}",
                    ],
                )
            };
            ctx.v.set("renews", renews);
            let text = match f.renewal {
                Renewal::AutoNotice => {
                    ctx.v.set("nrn", ctx.days(f.non_renewal_days.unwrap()));
                    ctx.r(
                        rng,
                        &[
                            "Thereafter this Agreement shall automatically renew for {renews} unless either party notifies the other in writing, no later than {nrn} before the end of the then-current term, that it does not wish to renew.",
                            "At the end of the Initial Term, this Agreement renews automatically for {renews}, unless a party gives written notice of non-renewal at least {nrn} before the end of the then-current term.",
                            "This Agreement will automatically renew for {renews} unless either party delivers notice of non-renewal to the other at least {nrn} prior to the expiry of the Initial Term or the current renewal period.",
                            "Unless either party gives the other at least {nrn}' written notice before the end of the current term that it does not want to renew, this Agreement automatically renews for {renews}.",
                        ],
                    )
                }
                Renewal::AutoNoticeCrossRef => ctx.r(
                    rng,
                    &[
                        "After the Initial Term, this Agreement automatically renews for {renews}, unless either party gives notice of non-renewal in accordance with {ref} {nrn_clause}.",
                        "This Agreement shall renew automatically for {renews} unless a party serves notice of non-renewal under {ref} {nrn_clause}.",
                    ],
                ),
                Renewal::AutoExternal => ctx.r(
                    rng,
                    &[
                        "The Agreement shall automatically renew for {renews}. Notice periods for non-renewal are specified in {external_terms}.",
                        "Thereafter this Agreement renews automatically for {renews}, unless either party gives notice of non-renewal within the period stated in {schedule} {sched_fee} (not reproduced in this excerpt).",
                    ],
                ),
                _ => ctx.r(
                    rng,
                    &[
                        "On expiry of the Initial Term, this Agreement automatically renews for {renews} unless terminated in accordance with {ref} [[termination]].",
                        "Thereafter, this Agreement shall renew automatically for {renews} until terminated under {ref} [[termination]].",
                    ],
                ),
            };
            c.push(text);
        }
        Renewal::NoAutoExplicit => {
            c.push(ctx.r(
                rng,
                &[
                    "This Agreement does not renew automatically. Any extension of the term requires a written amendment signed by both parties.",
                    "This Agreement expires at the end of the Initial Term and does not renew automatically.",
                    "There is no automatic renewal. If the parties wish to continue, they will negotiate a new agreement before the end of the Initial Term.",
                ],
            ));
        }
        Renewal::NoAutoMutual => {
            let d = ctx.fresh(rng, &[30, 60, 90, 120]);
            ctx.v.set("mutual", ctx.days(d));
            c.push(ctx.r(
                rng,
                &[
                    "The parties may agree in writing to renew this Agreement for a further period; any such renewal must be signed no later than {mutual} before the end of the Initial Term. This Agreement does not otherwise renew.",
                    "{c} may request a renewal by written notice given at least {mutual} before the end of the Initial Term. A renewal takes effect only if both parties sign a written renewal; the Agreement does not renew automatically.",
                ],
            ));
        }
        Renewal::NoAutoSilent => {}
    }
    if f.kind == Kind::Services && rng.chance(35) {
        c.push(ctx.r(
            rng,
            &["Expiry of this Agreement does not affect any {sow} then in progress, which continues to be governed by this Agreement until completed."],
        ));
    } else if rng.chance(35) && f.renewal.auto() {
        c.push(ctx.r(rng, &["The Initial Term and any renewal term are together referred to as the \"Term\"."]));
    }
    Section {
        key: "term",
        title: match f.renewal {
            Renewal::NoAutoSilent | Renewal::NoAutoExplicit => rng.pick(&["Term", "Duration", "Term"]).to_string(),
            _ => rng.pick(&["Term and Renewal", "Term", "Duration and Renewal"]).to_string(),
        },
        clauses: c,
        optional: false,
    }
}

pub(super) fn termination_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Section {
    let mut c = Vec::new();
    let conv = match f.convenience {
        Convenience::Either => {
            ctx.v.set("tfc", ctx.days(f.convenience_days.unwrap()));
            Some(ctx.r(
                rng,
                &[
                    "Either party may terminate this Agreement for convenience upon {tfc}' prior written notice to the other party.",
                    "Either party may terminate this Agreement without cause by giving the other party at least {tfc}' written notice.",
                    "Each party may end this Agreement for convenience on {tfc}' written notice.",
                ],
            ))
        }
        Convenience::CustomerOnly => {
            ctx.v.set("tfc", ctx.days(f.convenience_days.unwrap()));
            let mut t = ctx.r(
                rng,
                &[
                    "{c} may terminate this Agreement for convenience at any time by giving {s} {tfc}' prior written notice.",
                    "{c} may terminate this Agreement for convenience on {tfc}' written notice to {s}. Fees already paid for the current period are non-refundable.",
                    "{c} may terminate this Agreement without cause upon {tfc}' notice in writing.",
                ],
            );
            if rng.chance(40) {
                t.push_str(&ctx.r(rng, &[" {s} may not terminate this Agreement for convenience."]));
            }
            Some(t)
        }
        Convenience::SupplierOnly => {
            ctx.v.set("tfc", ctx.days(f.convenience_days.unwrap()));
            Some(ctx.r(
                rng,
                &[
                    "{s} may terminate this Agreement for convenience upon {tfc}' written notice to {c}, in which case {s} shall refund any prepaid fees for the unused part of the term.",
                    "{s} may terminate this Agreement without cause by giving {c} at least {tfc}' written notice. {c} has no right to terminate for convenience.",
                ],
            ))
        }
        Convenience::CustomerNoPeriod => Some(ctx.r(
            rng,
            &[
                "{c} may terminate this Agreement for convenience at any time by written notice to {s}, effective on the date stated in the notice.",
                "{c} may terminate this Agreement for convenience by written notice at any time; no minimum notice period applies.",
            ],
        )),
        Convenience::CustomerCrossRef => Some(ctx.r(
            rng,
            &[
                "{c} may terminate this Agreement for convenience by giving notice in accordance with {ref} {tfc_clause}.",
                "{c} may terminate this Agreement without cause on the notice period set out in {ref} {tfc_clause}.",
            ],
        )),
        Convenience::Denied => Some(ctx.r(
            rng,
            &[
                "Neither party may terminate this Agreement for convenience.",
                "Neither party has a right to terminate this Agreement for convenience or without cause.",
                "This Agreement may be terminated only as set out in this {ref}; neither party may terminate it for convenience.",
            ],
        )),
        Convenience::Silent => None,
    };
    let cure = ctx.fresh(rng, &[10, 14, 15, 20, 21, 30, 45, 60]);
    ctx.v.set("cure", ctx.days(cure));
    let breach = ctx.r(
        rng,
        &[
            "Either party may terminate this Agreement if the other party materially breaches it and fails to cure the breach within {cure} after receiving written notice.",
            "Either party may terminate this Agreement with immediate effect if the other party commits a material breach which, if remediable, is not remedied within {cure} of written notice.",
            "If a party commits a material breach and does not remedy it within {cure} after written notice from the other party, the other party may terminate this Agreement by further written notice.",
        ],
    );
    // Cure period and convenience right in either order: the two are easy to mix up.
    if rng.chance(60) {
        c.extend(conv);
        c.push(breach);
    } else {
        c.push(breach);
        c.extend(conv);
    }
    if rng.chance(50) {
        c.push(ctx.r(
            rng,
            &[
                "Either party may terminate this Agreement immediately by written notice if the other party becomes insolvent, enters into liquidation or has a receiver appointed.",
                "Either party may terminate this Agreement on written notice if the other party ceases to carry on business or becomes subject to any insolvency proceeding.",
            ],
        ));
    }
    let after = ctx.fresh(rng, &[10, 14, 30, 60, 90]);
    ctx.v.set("after", ctx.days(after));
    let effects: &[&str] = match f.kind {
        Kind::Saas => &[
            "After termination or expiry, {c} may request an export of {data} within {after}, after which {s} may delete it.",
            "For {after} after termination, {s} shall make {data} available for download, and shall delete it afterwards.",
        ],
        Kind::License => &[
            "Within {after} after termination or expiry, {c} shall uninstall the {service} and certify its deletion in writing.",
            "On termination {c} shall stop using the {service} and, within {after}, return or destroy all copies of it.",
        ],
        Kind::Support => &[
            "This Agreement terminates automatically if the {Licence} Agreement terminates. Fees paid for the current period are not refunded except as stated in this {ref}.",
            "On termination, {s} shall close any open support requests within {after} and return {c} materials in its possession.",
        ],
        Kind::Services => &[
            "On termination, {c} shall pay for Services performed up to the termination date, and {s} shall deliver all completed and in-progress Deliverables within {after}.",
            "Termination of this Agreement also terminates every {sow} then in effect, unless the parties agree otherwise in writing within {after}.",
        ],
    };
    c.push(ctx.r(rng, effects));
    if rng.chance(35) {
        c.push(ctx.r(
            rng,
            &[
                "Any provision which by its nature is intended to survive termination, including confidentiality and limitation of liability, survives any expiry or termination of this Agreement.",
                "Termination does not affect any rights or liabilities that accrued before the date of termination.",
            ],
        ));
    }
    Section {
        key: "termination",
        title: rng
            .pick(&["Termination", "Termination", "Termination and Suspension", "Ending this Agreement"])
            .to_string(),
        clauses: c,
        optional: false,
    }
}
