//! The sections on what each party owes: the scope of the services, the fees and when they
//! are paid, the service levels (with response times that are not the security deadline),
//! and security, where the incident notice deadline is stated, deferred or left out.
use super::facts::{Facts, Kind, Payment, Security};
use super::section::{fix_spelling, Ctx, Section};
use inferbench_stats::rng::SplitMix64;

pub(super) fn scope_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Section {
    let mut c = Vec::new();
    let (title, main, extra, trap): (&[&str], &[&str], &[&str], &[&str]) = match f.kind {
        Kind::Saas => (
            &["Access and Use", "The Subscription", "Provision of the Service", "Scope"],
            &[
                "Subject to this Agreement and payment of the Fees, {s} grants {c} a non-exclusive, non-transferable right to access and use the {service} for its internal business purposes during the term of this Agreement.",
                "{s} shall make the {service} available to {c} and its Users in accordance with this Agreement and the Order Form.",
                "During the term of this Agreement, {c} may permit its Users to access the {service} through a web browser. No software is installed on {c} systems.",
            ],
            &[
                "{c} shall not resell, sublicense, frame or reverse engineer the {service}, or use it to build a competing product.",
                "{s} may update the {service} from time to time, provided that no update materially reduces its core functionality.",
                "{c} is responsible for the accuracy of the data it submits and for all activity under its Users' accounts.",
            ],
            &[
                "Implementation, training and other professional services are not part of the subscription and are provided only under a separate Professional Services Agreement.",
                "Any on-premises connector software supplied with the {service} is {licence}d under the software {licence} terms in {schedule} {sched_other}, which are not reproduced in this excerpt.",
                "",
            ],
        ),
        Kind::License => (
            &["Grant of {Licence}", "{Licence}", "Scope of {Licence}"],
            &[
                "{s} grants {c} a non-exclusive, non-transferable {licence} to install and use the {service} in the Designated Environment for its internal business purposes during the term of this Agreement.",
                "Subject to payment of the {Licence} Fee, {s} grants {c} a non-exclusive, term-limited {licence} to run the {service} on servers owned or controlled by {c}.",
                "{s} grants {c} a non-exclusive and non-transferable {licence} to use the {service} on its own infrastructure for the duration of this Agreement.",
            ],
            &[
                "The {service} {is} {licence}d, not sold. {c} may make one (1) copy for backup purposes.",
                "{c} will host the {service} on its own infrastructure; {s} has no access to {c} systems except during remote diagnostic sessions requested by {c}.",
                "{c} shall not decompile, modify or distribute the {service}, except to the extent that applicable law expressly permits.",
            ],
            &[
                "Maintenance, updates and technical support are not included in this Agreement and are available only under a separate Support and Maintenance Agreement.",
                "Any hosted services ordered by {c} are governed by {s_poss} Cloud Services Agreement and not by this Agreement.",
                "Installation and configuration services, if ordered, are provided under a separate professional services agreement.",
            ],
        ),
        Kind::Support => (
            &["Support Services", "Scope of Support", "Maintenance and Support"],
            &[
                "{s} shall provide Maintenance Releases and remote technical support for the {service} (together, the \"{support_services}\").",
                "During the term of this Agreement {s} shall provide the {support_services}: corrections of Incidents, Maintenance Releases and telephone and e-mail support for the {service}.",
                "{s} shall maintain the {service} in substantial conformity with its Documentation and provide technical support to {c} (the \"{support_services}\").",
            ],
            &[
                "The {support_services} do not cover problems caused by modifications made by anyone other than {s}, or by use of the {service} on an unsupported platform.",
                "{c} shall appoint up to three (3) named support contacts who are trained in the use of the {service}.",
                "On-site support is available at {s_poss} then-current daily rates and is not included in the annual fee.",
            ],
            &[
                "This Agreement supplements, but does not amend, the {Licence} Agreement, which the parties signed on {ref_date}.",
                "The {service} itself is {licence}d to {c} under a separate {licence} agreement, which is not part of this excerpt and which this Agreement does not change.",
                "This Agreement covers support only. The right to use the {service} is granted under the parties' separate {Licence} Agreement dated {ref_date}.",
            ],
        ),
        Kind::Services => (
            &["Services", "Scope of Services", "Engagement"],
            &[
                "{s} shall perform the Services described in each {sow} using suitably qualified personnel and in accordance with good industry practice.",
                "{c} engages {s} to provide the Services set out in one or more {sow}s. Each {sow} forms part of this Agreement.",
                "{s} shall provide the {product} Services described in each {sow} with reasonable skill and care.",
            ],
            &[
                "If a {sow} conflicts with this Agreement, this Agreement prevails unless the {sow} expressly states otherwise.",
                "Changes to the scope of a {sow} require a Change Request signed by both parties.",
                "{c} shall give {s} timely access to the {c} Materials and to the personnel reasonably needed for the Services.",
            ],
            &[
                "{c}'s use of any hosted software delivered as part of the project is governed by the separate Subscription Agreement between the parties, which is not part of this excerpt.",
                "Any software {licence}s that {c} buys from third parties are governed by the terms of those {licence}s and not by this Agreement.",
                "Ongoing support after go-live is not part of the Services and may be ordered under a separate Support and Maintenance Agreement.",
            ],
        ),
    };
    ctx.v.set("ref_date", ctx.date(f.effective.add_days(-rng.range(200, 1400))));
    c.push(ctx.r(rng, main));
    let k = rng.range(1, 2) as usize;
    for e in rng.sample(extra, k) {
        c.push(ctx.v.fill(e));
    }
    // Support agreements nearly always name the licence they support: the classic trap.
    let trap_chance = if f.kind == Kind::Support { 85 } else { 55 };
    if rng.chance(trap_chance) {
        let t = ctx.r(rng, trap);
        if !t.is_empty() {
            let at = rng.below(c.len() + 1);
            c.insert(at, t);
        }
    }
    if f.kind == Kind::Services && rng.chance(50) {
        let days = ctx.fresh(rng, &[5, 7, 10, 14]);
        ctx.v.set("acc", ctx.n(days));
        c.push(ctx.r(
            rng,
            &[
                "{c} shall test each Deliverable and accept or reject it within {acc} Business Days after delivery.",
                "Each Deliverable is deemed accepted unless {c} notifies {s} of a material defect within {acc} Business Days of delivery.",
            ],
        ));
    }
    let title = ctx.v.fill(*rng.pick(title));
    Section { key: "scope", title, clauses: c.into_iter().map(|x| fix_spelling(ctx, x)).collect(), optional: false }
}

pub(super) fn fees_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Section {
    let mut c = Vec::new();
    let fee_line: &[&str] = match f.kind {
        Kind::Saas => &[
            "{c} shall pay the subscription fees set out in the Order Form. {s} will invoice the fees annually in advance.",
            "The Fees for the {service} are set out in the Order Form and are invoiced quarterly in advance.",
            "{s} will invoice the annual subscription fee on the Effective Date and on each anniversary of it.",
        ],
        Kind::License => &[
            "{c} shall pay the {Licence} Fee set out in {schedule} {sched_fee}. {s} will invoice the {Licence} Fee on the Effective Date.",
            "The {Licence} Fee is payable annually in advance. {s} will invoice it on or about the start of each year of the term.",
        ],
        Kind::Support => &[
            "The annual support fee is {pct}% of the {licence} fee paid under the {Licence} Agreement and is invoiced annually in advance.",
            "{c} shall pay the support fee set out in {schedule} {sched_fee}. {s} will invoice it annually in advance.",
        ],
        Kind::Services => &[
            "{s} will invoice {c} monthly in arrears for Services performed, at the rates set out in the applicable {sow}.",
            "Fixed-price milestones are invoiced on acceptance of the relevant Deliverable; time-and-materials work is invoiced monthly in arrears.",
        ],
    };
    ctx.v.set("pct", rng.pick(&["18", "20", "22", "17", "19"]).to_string());
    c.push(ctx.r(rng, fee_line));
    match f.payment {
        Payment::Stated => {
            ctx.v.set("pay", ctx.days(f.payment_days.unwrap()));
            c.push(ctx.r(
                rng,
                &[
                    "{c} shall pay each undisputed invoice within {pay} after receipt.",
                    "{c} shall pay all undisputed amounts within {pay} from the date of the invoice.",
                    "Invoices are payable within {pay} of the invoice date, except for amounts disputed in good faith.",
                    "{c} shall pay each invoice within {pay} after receiving it, other than any amount it disputes in good faith.",
                    "Undisputed invoices are due for payment {pay} after receipt by {c}.",
                ],
            ));
        }
        Payment::Net => {
            let n = f.payment_days.unwrap();
            ctx.v.set("net", n.to_string());
            c.push(ctx.r(
                rng,
                &[
                    "Payment terms are net {net} days from the date of invoice for all undisputed amounts.",
                    "All undisputed invoices are payable net {net} days.",
                ],
            ));
        }
        Payment::External => {
            c.push(ctx.r(
                rng,
                &[
                    "Invoicing frequency and payment deadlines are set out in {external_terms}.",
                    "Payment deadlines are as stated in {external_terms}.",
                    "The payment terms agreed in {schedule} {sched_fee} (Commercial Terms) apply. That {schedule} is not reproduced here.",
                ],
            ));
        }
        Payment::Silent => {}
    }
    // Distractors: days that are about invoices but are not the payment deadline.
    let mut distractors = Vec::new();
    if rng.chance(60) {
        let d = ctx.fresh(rng, &[7, 10, 14, 15, 20, 21]);
        ctx.v.set("dispute", ctx.days(d));
        distractors.push(ctx.r(
            rng,
            &[
                "{c} must notify {s} in writing of any disputed amount within {dispute} after receipt of the invoice, giving reasons.",
                "Any dispute about an invoice must be raised in writing within {dispute} of its date; the parties shall then work in good faith to resolve it.",
            ],
        ));
    }
    if rng.chance(50) {
        let d = ctx.fresh(rng, &[10, 14, 15, 21, 28]);
        ctx.v.set("susp", ctx.days(d));
        distractors.push(ctx.r(
            rng,
            &[
                "If any undisputed amount remains unpaid more than {susp} after a written reminder, {s} may suspend performance until payment is received.",
                "{s} may suspend access if an undisputed invoice remains unpaid {susp} after {s} has sent a reminder notice.",
            ],
        ));
    }
    if rng.chance(40) {
        distractors.push(ctx.r(
            rng,
            &[
                "Late payments bear interest at 1% per month or the maximum rate permitted by law, if lower.",
                "Overdue amounts bear interest at 4% per year above the base rate of the central bank of the country of {s_poss} registered office.",
                "All fees are exclusive of VAT and other applicable taxes, which {c} shall pay in addition.",
            ],
        ));
    }
    if f.renewal.auto() && rng.chance(40) {
        let d = ctx.fresh(rng, &[30, 45, 60, 75, 90]);
        ctx.v.set("uplift", ctx.days(d));
        distractors.push(ctx.r(
            rng,
            &[
                "{s} may increase the fees for any renewal term by up to 5% by written notice given at least {uplift} before the renewal.",
                "Fees for a renewal term may be increased by no more than the change in the consumer price index, on not less than {uplift}' written notice.",
            ],
        ));
    }
    c.extend(distractors);
    Section {
        key: "fees",
        title: rng.pick(&["Fees and Payment", "Fees", "Invoicing and Payment", "Charges and Payment"]).to_string(),
        clauses: c,
        optional: false,
    }
}

pub(super) fn service_level_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Option<Section> {
    // Support response times in hours: the distractor for the security-incident deadline.
    let chance = match f.kind {
        Kind::Saas | Kind::Support => 90,
        Kind::Services => 50,
        Kind::License => 35,
    };
    if !rng.chance(chance) {
        return None;
    }
    let mut c = Vec::new();
    let p1 = ctx.fresh(rng, &[1, 2, 4]);
    let p2 = ctx.fresh(rng, &[4, 8, 6]);
    ctx.v.set("p1", ctx.hours(p1));
    ctx.v.set("p2", ctx.hours(p2));
    let p3 = ctx.fresh(rng, &[2, 3, 5]);
    ctx.v.set("p3", ctx.n(p3));
    match f.kind {
        Kind::Saas | Kind::Support => {
            c.push(ctx.r(
                rng,
                &[
                    "{s} shall respond to support requests within the following times: Priority 1, {p1}; Priority 2, {p2} during business hours; Priority 3, {p3} Business Days.",
                    "Initial response times are: critical issues, {p1}; major issues, {p2}; minor issues, {p3} Business Days.",
                    "{s} shall acknowledge each Severity 1 support request within {p1} and each Severity 2 request within {p2}. Other requests will be answered within {p3} Business Days.",
                ],
            ));
            if f.kind == Kind::Saas {
                ctx.v.set("uptime", *rng.pick(&["99.5", "99.9", "99.95", "99.7"]));
                c.push(ctx.r(
                    rng,
                    &[
                        "{s} will use commercially reasonable efforts to make the {service} available {uptime}% of the time in each calendar month, excluding scheduled maintenance.",
                        "The {service} will be available at least {uptime}% of each calendar month, measured as described in the service level policy.",
                    ],
                ));
            } else if rng.chance(60) {
                c.push(ctx.r(
                    rng,
                    &[
                        "Response times run only during Support Hours. {s} does not guarantee a resolution time.",
                        "{s} will provide a workaround or a fix for each Priority 1 Incident as soon as reasonably practicable.",
                    ],
                ));
            }
            if rng.chance(55) {
                let mh = ctx.fresh(rng, &[24, 48, 72, 96, 120]);
                ctx.v.set("mh", ctx.hours(mh));
                c.push(ctx.r(
                    rng,
                    &[
                        "Scheduled maintenance will be announced at least {mh} in advance and will not exceed eight (8) hours in any calendar month.",
                        "{s} shall give at least {mh}' notice of any planned maintenance that is expected to interrupt the service.",
                    ],
                ));
            }
        }
        Kind::Services => {
            c.push(ctx.r(
                rng,
                &[
                    "{s} shall provide a help desk for questions about Deliverables during the warranty period. Help desk tickets will be acknowledged within {p2}.",
                    "During hypercare after go-live, {s} shall respond to critical issues within {p1} and to other issues within {p3} Business Days.",
                ],
            ));
        }
        Kind::License => {
            let phone = ctx.fresh(rng, &[14, 21, 30, 45]);
            ctx.v.set("phone", ctx.days(phone));
            c.push(ctx.r(
                rng,
                &[
                    "At {c_poss} request, {s} may access {c} systems remotely for diagnostic purposes. Remote diagnostic requests will be scheduled within {p3} Business Days.",
                    "Telephone assistance during installation is available for the first {phone} after delivery, with calls returned within {p1}.",
                ],
            ));
        }
    }
    Some(Section {
        key: "levels",
        title: rng
            .pick(&["Support and Service Levels", "Service Levels", "Support", "Availability and Support"])
            .to_string(),
        clauses: c,
        optional: false,
    })
}

pub(super) fn security_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Option<Section> {
    let mut c = Vec::new();
    if f.kind == Kind::License && rng.chance(50) {
        c.push(ctx.r(
            rng,
            &["{s} has no access to {data} except during remote diagnostic sessions that {c} requests and supervises."],
        ));
    }
    match f.security {
        Security::Stated => {
            ctx.v.set("hrs", ctx.hours(f.security_hours.unwrap()));
            c.push(ctx.r(
                rng,
                &[
                    "{s} shall notify {c} of any {sec} within {hrs} after becoming aware of it.",
                    "{s} shall notify {c} in writing within {hrs} after discovering a {sec}.",
                    "If {s} becomes aware of a {sec}, it shall inform {c} within {hrs} and shall cooperate with {c_poss} investigation.",
                    "{s} shall report each {sec} to {c} no later than {hrs} after its discovery.",
                ],
            ));
        }
        Security::UndueDelayWithin => {
            ctx.v.set("hrs", ctx.hours(f.security_hours.unwrap()));
            c.push(ctx.r(
                rng,
                &[
                    "{s} shall notify {c} of a {sec} without undue delay and in any event within {hrs} after becoming aware of it.",
                    "On becoming aware of a {sec}, {s} shall notify {c} without undue delay, and no later than {hrs} after discovery.",
                ],
            ));
        }
        Security::UndueDelay => {
            c.push(ctx.r(
                rng,
                &[
                    "If {s} becomes aware of a {sec}, it shall notify {c} without undue delay and give reasonable cooperation in any investigation.",
                    "{s} shall inform {c} promptly of any {sec} and keep {c} informed of the steps taken to contain it.",
                ],
            ));
        }
        Security::Addendum => {
            c.push(ctx.r(
                rng,
                &[
                    "Notification of any {sec} is governed by the Data Processing Addendum attached as {schedule} {sched_dpa}, which is not reproduced in this excerpt.",
                    "The parties' obligations on a {sec}, including notification deadlines, are set out in the data processing terms in {schedule} {sched_dpa} (not included in this excerpt).",
                ],
            ));
        }
        Security::Silent => {
            if c.is_empty() && rng.chance(60) {
                return None;
            }
        }
    }
    let general = ctx.r(
        rng,
        &[
            "{s} shall maintain an information security {programme} that meets ISO/IEC 27001 or an equivalent standard.",
            "{s} shall keep {data} confidential and protect it with appropriate technical and {organisation}al measures.",
            "{s} shall ensure that its personnel with access to {data} are bound by written confidentiality obligations.",
        ],
    );
    // The general duty comes first or last; the incident report always follows the
    // notification it refers to.
    if rng.chance(50) {
        c.insert(0, general);
    } else {
        c.push(general);
    }
    if !matches!(f.security, Security::Silent | Security::Addendum) && rng.chance(50) {
        let d = ctx.fresh(rng, &[5, 10, 14, 15, 30]);
        ctx.v.set("report", ctx.days(d));
        c.push(ctx.r(
            rng,
            &[
                "{s} shall provide a written incident report within {report} after the {sec} has been contained.",
                "Within {report} of containment, {s} shall give {c} a report describing the root cause of the {sec} and the remedial measures taken.",
            ],
        ));
    }
    Some(Section {
        key: "security",
        title: rng
            .pick(&["Data Protection and Security", "Information Security", "Security", "Data Security"])
            .to_string(),
        clauses: c.into_iter().map(|x| fix_spelling(ctx, x)).collect(),
        optional: false,
    })
}
