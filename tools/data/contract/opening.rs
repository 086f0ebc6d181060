//! The opening of a contract: the preamble (the parties, the signature and effective dates)
//! and the definitions section, which may define the effective date, the initial term and
//! the renewal term in place of the clauses that would state them.
use super::facts::{Facts, Kind, Security};
use super::section::{Ctx, Section};
use inferbench_stats::rng::SplitMix64;

pub(super) fn preamble(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64, eff_in_defs: bool) -> Vec<String> {
    ctx.v.set("eff", ctx.date(f.effective));
    let mut out = Vec::new();
    let parties = ctx.r(
        rng,
        &[
            "This {title} (the \"Agreement\") is entered into between {supplier} (\"{s}\") and {customer} (\"{c}\").",
            "This {title} (this \"Agreement\") is made between {supplier} (\"{s}\") and {customer} (\"{c}\").",
            "This {title} (the \"Agreement\") is entered into by and between {customer} (\"{c}\") and {supplier} (\"{s}\").",
            "{supplier} (\"{s}\") and {customer} (\"{c}\") enter into this {title} (the \"Agreement\").",
        ],
    );
    let dates = match (f.signed, eff_in_defs) {
        (Some(signed), true) => {
            ctx.v.set("signed", ctx.date(signed));
            ctx.r(
                rng,
                &[
                    "It was signed by both parties on {signed} and takes effect on the Effective Date defined below.",
                    "The parties signed it on {signed}; it takes effect on the Effective Date defined in {ref} [[defs]].",
                ],
            )
        }
        (None, true) => ctx.r(rng, &["The Agreement takes effect on the Effective Date defined in {ref} [[defs]]."]),
        (Some(signed), false) if signed > f.effective => {
            ctx.v.set("signed", ctx.date(signed));
            ctx.r(
                rng,
                &[
                    "The Agreement is effective as of {eff} (the \"Effective Date\"), regardless of the date of the last signature below, which was {signed}.",
                    "Although signed on {signed}, this Agreement is effective as of {eff} (the \"Effective Date\").",
                    "This Agreement was executed on {signed} and applies with effect from {eff} (the \"Effective Date\").",
                ],
            )
        }
        (Some(signed), false) => {
            ctx.v.set("signed", ctx.date(signed));
            ctx.r(
                rng,
                &[
                    "This Agreement is dated {signed} and is effective from {eff} (the \"Effective Date\").",
                    "The parties signed this Agreement on {signed}. It becomes effective on {eff} (the \"Effective Date\").",
                    "{c_poss} {authorised} signatory signed this Agreement on {signed}; it takes effect on {eff} (the \"Effective Date\").",
                    "Date of signature: {signed}. Effective Date: {eff}.",
                ],
            )
        }
        (None, false) => ctx.r(
            rng,
            &[
                "The Agreement is effective as of {eff} (the \"Effective Date\").",
                "This Agreement becomes effective on {eff} (the \"Effective Date\").",
                "It takes effect on {eff} (the \"Effective Date\").",
                "This Agreement commences on {eff} (the \"Effective Date\").",
            ],
        ),
    };
    out.push(format!("{parties} {dates}"));
    if rng.chance(40) {
        let background = match f.kind {
            Kind::Saas => ctx.r(
                rng,
                &[
                    "Background: {s} provides a hosted {product} service. {c} wishes to subscribe to it for use by its staff on the terms below.",
                    "Background: (A) {s} operates {a_product} service delivered over the internet. (B) {c} wishes to use that service in its business.",
                ],
            ),
            Kind::License => ctx.r(
                rng,
                &[
                    "Background: {s} owns the rights in certain {product} software. {c} wishes to install and use that software on its own systems.",
                    "Background: (A) {s} develops and {licence}s {product} software. (B) {c} wishes to obtain a {licence} to that software on the terms below.",
                ],
            ),
            Kind::Support => ctx.r(
                rng,
                &[
                    "Background: {c} uses {s_poss} {product} software in its operations and wishes to receive maintenance and technical support for it.",
                    "Background: (A) {c} holds a {licence} to {s_poss} {product} software. (B) The parties wish to set out the terms on which {s} will support and maintain that software.",
                ],
            ),
            Kind::Services => ctx.r(
                rng,
                &[
                    "Background: {c} has engaged {s} to deliver {a_product} project and related consulting services.",
                    "Background: (A) {s} provides technology consulting and implementation services. (B) {c} wishes to engage {s} for its {product} project.",
                ],
            ),
        };
        out.push(background);
    }
    out
}

pub(super) fn definitions_section(
    f: &Facts,
    ctx: &mut Ctx,
    rng: &mut SplitMix64,
    eff_in_defs: bool,
    initial_in_defs: bool,
    renewal_in_defs: bool,
) -> Section {
    let mut defs: Vec<String> = Vec::new();
    let kind_defs: &[&str] = match f.kind {
        Kind::Saas => &[
            "\"{service}\" means {s_poss} hosted {product} software, made available to {c} over the internet as described in the Order Form.",
            "\"Order Form\" means an ordering document signed by both parties that specifies the subscription, the number of Users and the fees. Order Forms are not part of this excerpt.",
            "\"Users\" means employees and contractors of {c} who are {authorised} to use the {service}.",
            "\"{data}\" means all electronic data submitted to the {service} by or on behalf of {c}.",
            "\"Documentation\" means the user guides and online help for the {service} that {s} makes generally available.",
        ],
        Kind::License => &[
            "\"{service}\" means the {product} software listed in {schedule} {sched_n}, in object-code form, together with its Documentation.",
            "\"Documentation\" means the installation guides and user manuals for the {service} supplied by {s}.",
            "\"Designated Environment\" means the servers and workstations owned or controlled by {c} on which the {service} {is} installed.",
            "\"{Licence} Fee\" means the fee for the {licence} set out in {schedule} {sched_fee}.",
            "\"Support Agreement\" means the separate support and maintenance agreement between the parties, if any. This Agreement does not itself include any support services.",
        ],
        Kind::Support => &[
            "\"{service}\" means the {product} software {licence}d to {c} under the {Licence} Agreement, in the versions listed in {schedule} {sched_n}.",
            "\"Incident\" means a reproducible failure of the {service} to perform materially in accordance with its Documentation.",
            "\"Maintenance Release\" means a patch, bug fix or minor version of the {service} that {s} makes generally available.",
            "\"Support Hours\" means 08:00 to 18:00 ({city} time) on Business Days.",
            "\"{Licence} Agreement\" means the software {licence} agreement between the parties under which {c} uses the {service}.",
        ],
        Kind::Services => &[
            "\"Services\" means the implementation, configuration, integration and training services described in each {sow}.",
            "\"{sow}\" means a document signed by both parties that refers to this Agreement and describes specific Services and Deliverables.",
            "\"Deliverables\" means all documents, configurations and other materials that {s} delivers to {c} under a {sow}.",
            "\"Change Request\" means a written request by either party to change the scope of a {sow}.",
            "\"{c} Materials\" means data, documents and systems access that {c} provides to {s} for the Services.",
        ],
    };
    let common: &[&str] = &[
        "\"Business Day\" means a day other than a Saturday, Sunday or public holiday in {city}.",
        "\"Confidential Information\" means information disclosed by one party to the other that is marked as confidential or would reasonably be understood to be confidential.",
        "\"Fees\" means the fees payable by {c} under this Agreement.",
    ];
    // Terms the clauses always use are always defined (a support agreement speaks of
    // Incidents, Maintenance Releases, Support Hours and the Licence Agreement); the rest
    // are sampled.
    let always = |d: &&str| {
        f.kind == Kind::Support
            && ["\"Incident\"", "\"Maintenance Release\"", "\"Support Hours\"", "Agreement\" means the software"]
                .iter()
                .any(|k| d.contains(k))
    };
    let mut chosen: Vec<&str> = kind_defs.iter().copied().filter(always).collect();
    let mut pool: Vec<&str> = kind_defs.iter().copied().filter(|d| !always(d)).collect();
    let k = rng.range(2, 4) as usize;
    chosen.extend(rng.sample(&pool, k.saturating_sub(chosen.len()).max(usize::from(f.kind == Kind::Support))));
    pool = common.to_vec();
    let k = rng.range(0, 2) as usize;
    chosen.extend(rng.sample(&pool, k));
    for d in chosen {
        defs.push(ctx.v.fill(d));
    }
    if !matches!(f.security, Security::Silent) || rng.chance(30) {
        defs.push(ctx.r(
            rng,
            &[
                "\"{sec}\" means any actual or reasonably suspected unauthorised access to, or loss or disclosure of, {data}.",
                "\"{sec}\" means a breach of security leading to the accidental or unlawful destruction, loss, alteration or unauthorised disclosure of, or access to, {data}.",
                "\"{sec}\" means any confirmed unauthorised access to {data} held by {s}.",
            ],
        ));
    }
    if eff_in_defs {
        defs.push(ctx.r(
            rng,
            &[
                "\"Effective Date\" means {eff}.",
                "\"Effective Date\" means {eff}, the date from which this Agreement applies.",
            ],
        ));
    }
    if initial_in_defs {
        ctx.v.set("end", ctx.date(f.end));
        ctx.v.set("term_len", ctx.months(f.term_months as u32));
        defs.push(ctx.r(
            rng,
            &[
                "\"Initial Term\" means the period beginning on the Effective Date and ending on {end}.",
                "\"Initial Term\" means the period of {term_len} beginning on the Effective Date and ending on {end}.",
                "\"Initial Term\" means the period from the Effective Date up to and including {end}.",
            ],
        ));
    }
    if renewal_in_defs {
        let m = f.renewal_months.expect("auto-renewing");
        ctx.v.set("rmonths", ctx.months(m));
        defs.push(ctx.r(
            rng,
            &[
                "\"Renewal Term\" means each successive period of {rmonths} for which this Agreement renews under {ref} [[term]].",
                "\"Renewal Term\" means each further period of {rmonths} following the Initial Term or a previous Renewal Term.",
            ],
        ));
    }
    // Definitions read alphabetically in most contracts; sometimes in order of use.
    if rng.chance(60) {
        defs.sort_by_key(|d| d.trim_start_matches('"').to_lowercase());
    }
    for d in &mut defs {
        *d = d
            .replace("unauthorised", &format!("un{}", ctx.v.get("authorised")))
            .replace("authorised", ctx.v.get("authorised"));
    }
    Section {
        key: "defs",
        title: rng.pick(&["Definitions", "Definitions and Interpretation", "Defined Terms"]).to_string(),
        clauses: defs,
        optional: false,
    }
}
