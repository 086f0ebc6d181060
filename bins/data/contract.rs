//! Contract excerpts: B2B technology agreements with definitions, numbered clauses and
//! cross-references, from which the ten commercial terms of the output schema are extracted.
//!
//! The terms are decided first ([`Facts`]), then every section is rendered from them with
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
use crate::dates::{self, Date};
use crate::item::{Generated, UserBand};
use crate::names;
use crate::pools::{words, Vars};
use crate::rounds::rounds;
use inferbench_judge::tokenizer;
use inferbench_sim::rng::{key, SplitMix64};
use serde_json::json;

const FAMILY: &str = "contract-terms-extraction";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Saas,
    License,
    Support,
    Services,
}

impl Kind {
    pub fn gold(self) -> &'static str {
        match self {
            Kind::Saas => "saas_subscription",
            Kind::License => "software_license",
            Kind::Support => "support_maintenance",
            Kind::Services => "technology_services",
        }
    }
}

/// How (and whether) the agreement renews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Renewal {
    /// Renews automatically; the non-renewal notice is stated in the term clause.
    AutoNotice,
    /// Renews automatically; the non-renewal notice is stated in the Notices section, reached
    /// through a cross-reference.
    AutoNoticeCrossRef,
    /// Renews automatically; the notice period is in a document outside the excerpt (null).
    AutoExternal,
    /// Renews automatically "unless terminated under Section N": no non-renewal notice (null).
    AutoUnlessTerminated,
    /// Says expressly that it does not renew automatically.
    NoAutoExplicit,
    /// May be renewed by mutual written agreement (not automatic), with a deadline in days
    /// that is not a non-renewal notice.
    NoAutoMutual,
    /// Says nothing about renewal.
    NoAutoSilent,
}

impl Renewal {
    fn auto(self) -> bool {
        matches!(
            self,
            Renewal::AutoNotice | Renewal::AutoNoticeCrossRef | Renewal::AutoExternal | Renewal::AutoUnlessTerminated
        )
    }
    fn has_notice(self) -> bool {
        matches!(self, Renewal::AutoNotice | Renewal::AutoNoticeCrossRef)
    }
}

/// Who may terminate for convenience, and how the notice is stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convenience {
    Either,
    CustomerOnly,
    SupplierOnly,
    /// The customer may terminate for convenience "by written notice", no period (null).
    CustomerNoPeriod,
    /// The customer may, on the notice period stated in the Notices section.
    CustomerCrossRef,
    /// "Neither party may terminate this Agreement for convenience."
    Denied,
    /// Only termination for cause is mentioned.
    Silent,
}

impl Convenience {
    fn exists(self) -> bool {
        !matches!(self, Convenience::Denied | Convenience::Silent)
    }
    fn has_period(self) -> bool {
        matches!(
            self,
            Convenience::Either | Convenience::CustomerOnly | Convenience::SupplierOnly | Convenience::CustomerCrossRef
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Payment {
    /// "within N days of receipt / of the invoice date".
    Stated,
    /// "net N days".
    Net,
    /// Payment terms are in the Order Form / SOW, outside the excerpt.
    External,
    /// Fees are mentioned, no payment deadline.
    Silent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Security {
    Stated,
    /// "without undue delay and in any event within N hours".
    UndueDelayWithin,
    /// "without undue delay" only (null).
    UndueDelay,
    /// Governed by a data processing addendum not reproduced (null).
    Addendum,
    /// Not mentioned (null).
    Silent,
}

#[derive(Debug, Clone)]
struct Facts {
    kind: Kind,
    effective: Date,
    /// Signature date, when the text states one (always different from the effective date).
    signed: Option<Date>,
    term_months: i32,
    end: Date,
    renewal: Renewal,
    renewal_months: Option<u32>,
    non_renewal_days: Option<u32>,
    payment: Payment,
    payment_days: Option<u32>,
    convenience: Convenience,
    convenience_days: Option<u32>,
    security: Security,
    security_hours: Option<u32>,
}

impl Facts {
    fn gold(&self) -> serde_json::Value {
        json!({
            "agreement_type": self.kind.gold(),
            "effective_date": self.effective.iso(),
            "initial_term_end_date": self.end.iso(),
            "auto_renews": self.renewal.auto(),
            "renewal_term_months": self.renewal_months,
            "non_renewal_notice_days": self.non_renewal_days,
            "payment_terms_days": self.payment_days,
            "termination_for_convenience": self.convenience.exists(),
            "termination_notice_days": self.convenience_days,
            "security_incident_notice_hours": self.security_hours,
        })
    }
}

/// The per-index plan: which agreement type and which clause variants, spread evenly over
/// the set (and over any prefix of it) by [`rounds`].
struct Plan {
    kind: Vec<Kind>,
    renewal: Vec<Renewal>,
    convenience: Vec<Convenience>,
    payment: Vec<Payment>,
    security: Vec<Security>,
}

impl Plan {
    fn new(seed: u64, n: usize) -> Plan {
        use Convenience as C;
        use Renewal as R;
        Plan {
            kind: rounds(
                seed,
                "contract/kind",
                &[(Kind::Saas, 1), (Kind::License, 1), (Kind::Support, 1), (Kind::Services, 1)],
                n,
            ),
            renewal: rounds(
                seed,
                "contract/renewal",
                &[
                    (R::AutoNotice, 4),
                    (R::AutoNoticeCrossRef, 2),
                    (R::AutoExternal, 1),
                    (R::AutoUnlessTerminated, 1),
                    (R::NoAutoExplicit, 2),
                    (R::NoAutoMutual, 1),
                    (R::NoAutoSilent, 1),
                ],
                n,
            ),
            convenience: rounds(
                seed,
                "contract/convenience",
                &[
                    (C::Either, 3),
                    (C::CustomerOnly, 3),
                    (C::SupplierOnly, 1),
                    (C::CustomerNoPeriod, 1),
                    (C::CustomerCrossRef, 1),
                    (C::Denied, 2),
                    (C::Silent, 1),
                ],
                n,
            ),
            payment: rounds(
                seed,
                "contract/payment",
                &[(Payment::Stated, 4), (Payment::Net, 1), (Payment::External, 1), (Payment::Silent, 1)],
                n,
            ),
            security: rounds(
                seed,
                "contract/security",
                &[
                    (Security::Stated, 3),
                    (Security::UndueDelayWithin, 1),
                    (Security::UndueDelay, 1),
                    (Security::Addendum, 1),
                    (Security::Silent, 1),
                ],
                n,
            ),
        }
    }
}

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

fn decide(rng: &mut SplitMix64, plan: &Plan, i: usize) -> Facts {
    let kind = plan.kind[i];
    let renewal = plan.renewal[i];
    let convenience = plan.convenience[i];
    let payment = plan.payment[i];
    let security = plan.security[i];
    // Effective dates on days 1-28 keep "N months later, less a day" unambiguous; the 1st
    // of a month is the most common choice in real contracts.
    let year = rng.range(2024, 2027) as i32;
    let month = rng.range(1, 12) as u32;
    let day = if rng.chance(55) { 1 } else { rng.range(2, 28) as u32 };
    let effective = Date::new(year, month, day);
    let term_months = *rng.pick(&[12, 12, 12, 12, 24, 24, 36, 6, 18, 12]);
    let end = effective.term_end(term_months);
    let signed = rng.chance(55).then(|| {
        if rng.chance(25) {
            // Signed after the date it is effective from ("effective as of").
            effective.add_days(rng.range(3, 25)).working_day()
        } else {
            effective.add_days(-rng.range(3, 40)).working_day()
        }
    });
    let signed = signed.filter(|s| *s != effective);
    let renewal_months = renewal.auto().then(|| *rng.pick(&[12, 12, 12, 12, 24, 6, 3, 36, 1]));
    let mut non_renewal_days = renewal.has_notice().then(|| *rng.pick(&[30, 45, 60, 60, 90, 90, 120, 180]));
    // The notice must be shorter than the renewal term it refers to (no 60 days' notice of a
    // one-month renewal); 7, 10 and 21 collide with no payment or convenience period.
    if let (Some(months), Some(days)) = (renewal_months, non_renewal_days) {
        if days >= months * 30 {
            let fits: Vec<u32> = [7, 10, 21, 30, 45, 60].into_iter().filter(|d| *d < months * 30).collect();
            non_renewal_days = Some(*rng.pick(&fits));
        }
    }
    let payment_days =
        matches!(payment, Payment::Stated | Payment::Net).then(|| *rng.pick(&[14, 15, 20, 30, 30, 30, 45, 45, 60, 90]));
    let mut convenience_days = convenience.has_period().then(|| *rng.pick(&[15, 30, 30, 45, 60, 60, 90, 90, 120, 180]));
    // Two terms with the same number would let a reader who confuses them still be right.
    while convenience_days.is_some() && convenience_days == non_renewal_days {
        convenience_days = Some(*rng.pick(&[15, 30, 45, 60, 90, 120]));
    }
    let security_hours = matches!(security, Security::Stated | Security::UndueDelayWithin)
        .then(|| *rng.pick(&[24, 24, 48, 48, 72, 72, 36, 12, 96]));
    Facts {
        kind,
        effective,
        signed,
        term_months,
        end,
        renewal,
        renewal_months,
        non_renewal_days,
        payment,
        payment_days,
        convenience,
        convenience_days,
        security,
        security_hours,
    }
}

/// Document-wide choices, fixed once per contract.
struct Ctx {
    legal_numbers: bool,
    date_style: dates::Style,
    /// "Section" or "Clause".
    refword: &'static str,
    british: bool,
    /// Numbers already used by a term or a distractor.
    taken: Vec<u32>,
    v: Vars,
}

impl Ctx {
    /// "forty-five (45)" or "45".
    fn n(&self, n: u32) -> String {
        if self.legal_numbers && n < 1000 {
            format!("{} ({n})", words(n))
        } else {
            n.to_string()
        }
    }
    fn days(&self, n: u32) -> String {
        format!("{} {}", self.n(n), if n == 1 { "day" } else { "days" })
    }
    fn hours(&self, n: u32) -> String {
        format!("{} {}", self.n(n), if n == 1 { "hour" } else { "hours" })
    }
    fn months(&self, n: u32) -> String {
        format!("{} {}", self.n(n), if n == 1 { "month" } else { "months" })
    }
    fn date(&self, d: Date) -> String {
        d.fmt(self.date_style)
    }
    /// A distractor number from `pool` that no term and no other distractor uses.
    fn fresh(&mut self, rng: &mut SplitMix64, pool: &[u32]) -> u32 {
        let free: Vec<u32> = pool.iter().copied().filter(|n| !self.taken.contains(n)).collect();
        let n = if free.is_empty() { *rng.pick(pool) } else { *rng.pick(&free) };
        self.taken.push(n);
        n
    }
    fn r(&self, rng: &mut SplitMix64, templates: &[&str]) -> String {
        self.v.pick(rng, templates)
    }
}

/// One numbered section. Clauses may contain `[[key]]`, replaced by the number of section
/// `key` once the final order is known.
#[derive(Debug, Clone)]
struct Section {
    key: &'static str,
    title: String,
    clauses: Vec<String>,
    /// Optional sections can be dropped or added to fit the token band.
    optional: bool,
}

struct Doc {
    title: String,
    preamble: Vec<String>,
    /// Definitions first, then the body in its rendering order.
    sections: Vec<Section>,
    /// Optional sections not (yet) included, in the order they may be added.
    spare: Vec<Section>,
    heading_style: u8,
    refword: &'static str,
}

const SAAS_TITLES: &[&str] = &[
    "Software-as-a-Service Subscription Agreement",
    "Cloud Services Agreement",
    "Master Subscription Agreement",
    "Hosted Services Agreement",
    "Subscription Services Agreement",
    "SaaS Agreement",
];
const LICENSE_TITLES: &[&str] = &[
    "Software {Licence} Agreement",
    "Enterprise Software {Licence} Agreement",
    "Term {Licence} Agreement",
    "{Licence} Agreement for On-Premises Software",
    "Master Software {Licence} Agreement",
];
const SUPPORT_TITLES: &[&str] = &[
    "Support and Maintenance Agreement",
    "Software Maintenance Agreement",
    "Maintenance and Support Services Agreement",
    "Technical Support Agreement",
    "Annual Maintenance Agreement",
];
const SERVICES_TITLES: &[&str] = &[
    "Professional Services Agreement",
    "Master Services Agreement",
    "Implementation Services Agreement",
    "Consulting Services Agreement",
    "Systems Integration Agreement",
    "Master Professional Services Agreement",
];

const SAAS_PRODUCTS: &[&str] = &[
    "expense management",
    "applicant tracking",
    "fleet telematics",
    "contract lifecycle management",
    "learning management",
    "warehouse management",
    "customer data platform",
    "field service scheduling",
    "electronic signature",
    "payroll and time tracking",
    "procurement",
    "help desk ticketing",
    "board portal",
    "inventory forecasting",
];
const ONPREM_PRODUCTS: &[&str] = &[
    "CAD simulation",
    "statistical analysis",
    "document imaging",
    "network monitoring",
    "point-of-sale",
    "laboratory information management",
    "tax calculation",
    "digital asset management",
    "GIS mapping",
    "manufacturing execution",
    "treasury management",
    "clinical scheduling",
];
const PROJECTS: &[&str] = &[
    "ERP implementation",
    "data warehouse migration",
    "CRM integration",
    "cloud infrastructure migration",
    "identity and access management rollout",
    "e-commerce platform rebuild",
    "payroll system replacement",
    "network refresh",
    "mobile app development",
    "document management rollout",
];
/// Cities in the country a company's legal form points to ("GmbH": Germany or Switzerland).
pub(crate) fn party_cities(company: &str) -> &'static [&'static str] {
    const BY_FORM: &[(&str, &[&str])] = &[
        ("Pty Ltd", &["Sydney", "Melbourne"]),
        ("Pte. Ltd.", &["Singapore"]),
        ("sp. z o.o.", &["Warsaw"]),
        ("Inc.", &["New York", "Chicago", "Toronto"]),
        ("LLC", &["New York", "Chicago"]),
        ("Corp.", &["New York", "Chicago", "Toronto"]),
        ("Ltd", &["London", "Dublin", "Auckland"]),
        ("Limited", &["London", "Dublin", "Auckland"]),
        ("plc", &["London", "Dublin"]),
        ("GmbH", &["Frankfurt", "Zurich", "Vienna"]),
        ("AG", &["Zurich", "Frankfurt"]),
        ("B.V.", &["Amsterdam"]),
        ("N.V.", &["Amsterdam", "Brussels"]),
        ("S.A.", &["Madrid", "Brussels"]),
        ("SAS", &["Paris"]),
        ("AB", &["Stockholm"]),
        ("Oy", &["Helsinki"]),
        ("S.r.l.", &["Milan"]),
        ("A/S", &["Copenhagen"]),
        ("K.K.", &["Tokyo"]),
    ];
    BY_FORM.iter().find(|(form, _)| company.ends_with(&format!(" {form}"))).map_or(&["London"], |(_, c)| c)
}

impl Doc {
    fn build(f: &Facts, rng: &mut SplitMix64) -> Doc {
        let british = rng.chance(45);
        let mut ctx = Ctx {
            legal_numbers: rng.chance(70),
            date_style: *rng.pick(&[
                dates::Style::DayMonthYear,
                dates::Style::MonthDayYear,
                dates::Style::DayMonthYear,
                dates::Style::MonthDayYear,
            ]),
            refword: if rng.chance(55) { "Section" } else { "Clause" },
            british,
            taken: [f.renewal_months, f.non_renewal_days, f.payment_days, f.convenience_days, f.security_hours]
                .into_iter()
                .flatten()
                .collect(),
            v: Vars::new(),
        };
        ctx.v.set("ref", ctx.refword);
        set_vocabulary(f, &mut ctx, rng);
        let mut title = ctx.v.fill(match f.kind {
            Kind::Saas => *rng.pick(SAAS_TITLES),
            Kind::License => *rng.pick(LICENSE_TITLES),
            Kind::Support => *rng.pick(SUPPORT_TITLES),
            Kind::Services => *rng.pick(SERVICES_TITLES),
        });
        // "Annual" only for a one-year initial term.
        if title.starts_with("Annual") && f.term_months != 12 {
            title = "Software Maintenance Agreement".to_string();
        }
        ctx.v.set("title", title.clone());

        // Which terms are defined in the definitions section rather than stated in clauses.
        let eff_in_defs = rng.chance(15);
        let initial_in_defs = rng.chance(25);
        let renewal_in_defs = f.renewal.auto() && rng.chance(30);
        // A support agreement always defines the terms its clauses use (Incident, ...).
        let has_defs = eff_in_defs || initial_in_defs || renewal_in_defs || rng.chance(85) || f.kind == Kind::Support;
        let notices_needed =
            matches!(f.renewal, Renewal::AutoNoticeCrossRef) || matches!(f.convenience, Convenience::CustomerCrossRef);

        let preamble = preamble(f, &mut ctx, rng, eff_in_defs);

        // Rendered before the sections that cite it, so they can cite its clause numbers.
        let notices = notices_section(f, &mut ctx, rng, notices_needed);
        let scope = scope_section(f, &mut ctx, rng);
        let fees = fees_section(f, &mut ctx, rng);
        let service_levels = service_level_section(f, &mut ctx, rng);
        let security = security_section(f, &mut ctx, rng);
        let term = term_section(f, &mut ctx, rng, initial_in_defs, renewal_in_defs);
        let termination = termination_section(f, &mut ctx, rng);
        let defs =
            has_defs.then(|| definitions_section(f, &mut ctx, rng, eff_in_defs, initial_in_defs, renewal_in_defs));

        let mut body: Vec<Section> = vec![fees, term, termination];
        body.extend(security);
        body.extend(service_levels);
        // Keep the usual skeleton (scope first; term before termination most of the time)
        // but vary where fees, service levels and security sit.
        let mut order: Vec<usize> = (0..body.len()).collect();
        rng.shuffle(&mut order);
        let mut body: Vec<Section> = order.into_iter().map(|i| body[i].clone()).collect();
        if rng.chance(80) {
            let t = body.iter().position(|s| s.key == "term").unwrap();
            let x = body.iter().position(|s| s.key == "termination").unwrap();
            if x < t {
                body.swap(t, x);
            }
        }
        let mut sections: Vec<Section> = Vec::new();
        sections.extend(defs);
        sections.push(scope);
        sections.extend(body);

        let mut spare = misc_sections(f, &mut ctx, rng);
        match notices {
            Some(n) if n.optional => spare.insert(rng.below(spare.len() + 1), n),
            Some(n) => sections.push(n),
            None => {}
        }
        // Start with a random handful of the optional sections; `fit` adds or drops more.
        let start = rng.range(1, 4) as usize;
        let take = start.min(spare.len());
        let extra: Vec<Section> = spare.drain(..take).collect();
        sections.extend(extra);
        Doc { title, preamble, sections, spare, heading_style: rng.below(4) as u8, refword: ctx.refword }
    }

    fn render(&self) -> String {
        let numbers: Vec<(&str, usize)> = self.sections.iter().enumerate().map(|(i, s)| (s.key, i + 1)).collect();
        // A document headed "ARTICLE n" refers to its parts as "Article n".
        let article = self.heading_style == 3 && self.refword == "Section";
        let resolve = |text: &str| -> String {
            let mut out = text.to_string();
            if article {
                out = out.replace("Section [[", "Article [[").replace("Sections [[", "Articles [[");
            }
            for (key, n) in &numbers {
                out = out.replace(&format!("[[{key}]]"), &n.to_string());
            }
            assert!(!out.contains("[["), "unresolved cross-reference in `{out}`");
            out
        };
        let mut out = String::new();
        out.push_str(&format!("{} (EXCERPT)\n\n", self.title.to_uppercase()));
        for p in &self.preamble {
            out.push_str(&resolve(p));
            out.push_str("\n\n");
        }
        for (i, s) in self.sections.iter().enumerate() {
            let n = i + 1;
            let heading = match self.heading_style {
                0 => format!("{n}. {}", s.title),
                1 => format!("{n}. {}", s.title.to_uppercase()),
                2 if self.refword == "Clause" => format!("Clause {n} - {}", s.title),
                2 => format!("Section {n}. {}", s.title),
                _ if self.refword == "Section" => {
                    format!("ARTICLE {n} - {}", s.title.to_uppercase())
                }
                _ => format!("{n}. {}", s.title.to_uppercase()),
            };
            out.push_str(&heading);
            out.push('\n');
            for (j, c) in s.clauses.iter().enumerate() {
                out.push_str(&format!("{n}.{} {}\n", j + 1, resolve(c)));
            }
            out.push('\n');
        }
        out.trim_end().to_string()
    }

    /// Adds or drops optional sections until the text fits the band and comes close to a
    /// length drawn for this contract (so lengths spread over the band); None if it cannot.
    fn fit(mut self, band: UserBand, rng: &mut SplitMix64) -> Option<String> {
        let target = rng
            .range((band.lo + 40).min(band.hi) as i64, band.hi.saturating_sub(20).max(band.lo + 40).min(band.hi) as i64)
            as usize;
        for _ in 0..16 {
            let text = self.render();
            let tokens = tokenizer::count(&text);
            let last_optional = self.sections.iter().rposition(|s| s.optional);
            if tokens > target {
                // Drop the last optional section if the result still reaches the band.
                if let Some(i) = last_optional {
                    let removed = self.sections.remove(i);
                    if tokenizer::count(&self.render()) >= band.lo {
                        continue;
                    }
                    self.sections.insert(i, removed);
                }
                return (tokens <= band.hi).then_some(text);
            }
            if tokens >= band.lo {
                return Some(text);
            }
            if self.spare.is_empty() {
                return None;
            }
            let s = self.spare.remove(0);
            // Optional sections go after the core ones, in any order among themselves.
            let first_optional = self.sections.iter().position(|s| s.optional).unwrap_or(self.sections.len());
            let at = first_optional + rng.below(self.sections.len() - first_optional + 1);
            self.sections.insert(at, s);
        }
        None
    }
}

fn set_vocabulary(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) {
    let british = ctx.british;
    let v = &mut ctx.v;
    v.set("Licence", if british { "Licence" } else { "License" });
    v.set("licence", if british { "licence" } else { "license" });
    v.set("authorised", if british { "authorised" } else { "authorized" });
    v.set("programme", if british { "programme" } else { "program" });
    v.set("organisation", if british { "organisation" } else { "organization" });
    let supplier_lines = names::TECH_LINES;
    let (supplier, customer) = {
        let cs = names::companies(rng, supplier_lines, 1, true);
        let mut other = names::companies(rng, names::CUSTOMER_LINES, 3, true);
        other.retain(|c| c.split(' ').next() != cs[0].split(' ').next());
        (cs[0].clone(), other[0].clone())
    };
    let short = names::short_company(&supplier).split(' ').next().unwrap_or("Supplier").to_string();
    let (s, c) = match f.kind {
        Kind::Saas => (
            rng.pick(&["Provider", "Vendor", "Provider", short.as_str()]).to_string(),
            rng.pick(&["Customer", "Customer", "Subscriber"]).to_string(),
        ),
        Kind::License => ("Licensor".to_string(), "Licensee".to_string()),
        Kind::Support => {
            (rng.pick(&["Supplier", "Provider", "Vendor", short.as_str()]).to_string(), "Customer".to_string())
        }
        Kind::Services => (
            rng.pick(&["Consultant", "Contractor", "Service Provider", "Supplier"]).to_string(),
            rng.pick(&["Client", "Customer", "Client"]).to_string(),
        ),
    };
    v.set("supplier", supplier.clone());
    v.set("customer", customer.clone());
    v.set("s", s.clone());
    v.set("c", c.clone());
    v.set("s_poss", format!("{s}'s"));
    v.set("c_poss", format!("{c}'s"));
    // Support hours, business days and courts are in a city of one of the parties' countries.
    let cities: Vec<&str> = party_cities(&supplier).iter().chain(party_cities(&customer)).copied().collect();
    v.set("city", *rng.pick(&cities));
    let product = match f.kind {
        Kind::Saas => *rng.pick(SAAS_PRODUCTS),
        Kind::License | Kind::Support => *rng.pick(ONPREM_PRODUCTS),
        Kind::Services => *rng.pick(PROJECTS),
    };
    v.set("product", product);
    let article = if product.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    v.set("a_product", format!("{article} {product}"));
    let service = match f.kind {
        Kind::Saas => *rng.pick(&["Subscription Service", "Platform", "Hosted Service", "Cloud Service"]),
        Kind::License => *rng.pick(&["Software", "Licensed Software", "Licensed Programs"]),
        Kind::Support => *rng.pick(&["Supported Software", "Licensed Software"]),
        Kind::Services => "Services",
    };
    v.set("service", service);
    // Whether "Software"/"Licensed Programs" takes a plural verb.
    v.set("is", if service.ends_with('s') && f.kind != Kind::Services { "are" } else { "is" });
    v.set("support_services", *rng.pick(&["Support Services", "Maintenance Services", "Support Services"]));
    v.set("sow", *rng.pick(&["Statement of Work", "Work Order", "Statement of Work", "Project Order"]));
    v.set("data", format!("{c} Data"));
    let external = match f.kind {
        Kind::Saas => "the Order Form".to_string(),
        Kind::Services => format!("the applicable {}", v.get("sow")),
        _ => "the Commercial Terms schedule, which is not part of this excerpt".to_string(),
    };
    v.set("external_terms", external);
    v.set(
        "sec",
        *rng.pick(&[
            "Security Incident",
            "Security Breach",
            "Personal Data Breach",
            "Security Incident",
            "Data Incident",
        ]),
    );
    v.set("schedule", rng.pick(&["Schedule", "Exhibit", "Annex"]).to_string());
    // Each referenced document gets its own label: a product list, commercial terms, a DPA.
    let mut labels: Vec<&str> = if rng.chance(50) { vec!["1", "2", "3", "4"] } else { vec!["A", "B", "C", "D"] };
    rng.shuffle(&mut labels);
    v.set("sched_n", labels[0]);
    v.set("sched_fee", labels[1]);
    v.set("sched_dpa", labels[2]);
    v.set("sched_other", labels[3]);
}

fn preamble(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64, eff_in_defs: bool) -> Vec<String> {
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

fn definitions_section(
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

fn scope_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Section {
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

fn fix_spelling(ctx: &Ctx, text: String) -> String {
    text.replace("unauthorised", &format!("un{}", ctx.v.get("authorised")))
        .replace("authorised", ctx.v.get("authorised"))
}

fn fees_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Section {
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

fn service_level_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Option<Section> {
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

fn security_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Option<Section> {
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

fn notices_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64, needed: bool) -> Option<Section> {
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

fn term_section(
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

fn termination_section(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Section {
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

/// Optional boilerplate sections, each with its own numbers, in a random order; `fit` takes
/// as many as the token band needs.
fn misc_sections(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) -> Vec<Section> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn band() -> UserBand {
        UserBand { lo: 500, hi: 1000 }
    }

    #[test]
    fn references_definitions_and_the_term_are_consistent() {
        for g in generate(20261129, 240, band()) {
            let u = &g.user;
            let lines: Vec<&str> = u.lines().collect();
            if lines.iter().any(|l| l.starts_with("ARTICLE ")) {
                assert!(!u.contains("Section ") && !u.contains("Sections "), "{u}");
            }
            assert!(!u.contains("are handled as described in"), "{u}");
            if g.gold["auto_renews"] == false {
                assert!(!u.contains("together referred to as the \"Term\""), "{u}");
            }
            if u.contains(" Incidents") || u.contains("Priority 1 Incident") {
                assert!(u.contains("\"Incident\" means"), "{u}");
            }
            // Every term is defined once, in the definitions or inline.
            let mut terms: Vec<String> = Vec::new();
            for (i, _) in u.match_indices("\" means") {
                let start = u[..i].rfind('"').unwrap();
                terms.push(u[start + 1..i].to_string());
            }
            for (i, _) in u.match_indices("(the \"") {
                let rest = &u[i + 6..];
                terms.push(rest[..rest.find('"').unwrap()].to_string());
            }
            let mut sorted = terms.clone();
            sorted.sort();
            let before = sorted.len();
            sorted.dedup();
            assert_eq!(before, sorted.len(), "a term defined twice: {terms:?}\n{u}");
        }
    }

    /// The line(s) of the contract that mention a concept, by keyword.
    fn lines_with<'a>(text: &'a str, words: &[&str]) -> Vec<&'a str> {
        text.lines().filter(|l| words.iter().any(|w| l.to_lowercase().contains(w))).collect()
    }

    fn states(line: &str, n: u64) -> bool {
        line.contains(&format!("({n})")) || crate::pools::standalone_count(line, &n.to_string()) > 0
    }

    #[test]
    fn every_stated_number_sits_next_to_its_concept() {
        for seed in [1u64, 2, 3, 4, 5, 6, 7, 20261129] {
            for g in generate(seed, 80, band()) {
                let t = &g.user;
                let gold = &g.gold;
                let check = |field: &str, words: &[&str]| {
                    if let Some(n) = gold[field].as_u64() {
                        assert!(
                            lines_with(t, words).iter().any(|l| states(l, n)),
                            "{field} = {n} not stated next to {words:?}:\n{t}"
                        );
                    }
                };
                check("renewal_term_months", &["renew"]);
                check("non_renewal_notice_days", &["renew"]);
                check("payment_terms_days", &["pay", "invoice"]);
                check("termination_notice_days", &["convenience", "without cause"]);
                check("security_incident_notice_hours", &["security", "breach", "incident"]);
                for f in ["effective_date", "initial_term_end_date"] {
                    let iso = gold[f].as_str().unwrap();
                    let d = Date::new(iso[..4].parse().unwrap(), iso[5..7].parse().unwrap(), iso[8..].parse().unwrap());
                    let spelled = [d.fmt(dates::Style::DayMonthYear), d.fmt(dates::Style::MonthDayYear)];
                    assert!(spelled.iter().any(|s| t.contains(s.as_str())), "{f} {iso} not in the text:\n{t}");
                }
            }
        }
    }

    #[test]
    fn nulls_and_booleans_follow_the_facts() {
        for g in generate(7, 120, band()) {
            let gold = &g.gold;
            if gold["auto_renews"] == false {
                assert!(gold["renewal_term_months"].is_null());
                assert!(gold["non_renewal_notice_days"].is_null());
            }
            if gold["termination_for_convenience"] == false {
                assert!(gold["termination_notice_days"].is_null());
            }
            let t = g.user.to_lowercase();
            if gold["auto_renews"] == true {
                assert!(t.contains("renew"), "{t}");
            } else {
                assert!(!t.contains("renews automatically") && !t.contains("automatically renew for"), "{t}");
            }
            assert!(gold["initial_term_end_date"].as_str() > gold["effective_date"].as_str());
        }
    }

    #[test]
    fn no_distractor_repeats_a_term_number_in_its_own_unit() {
        // The security deadline in hours never equals a support response time in hours.
        for g in generate(11, 120, band()) {
            if let Some(h) = g.gold["security_incident_notice_hours"].as_u64() {
                let hits = lines_with(&g.user, &["hour"]).iter().filter(|l| states(l, h)).count();
                assert_eq!(hits, 1, "{h} hours appears on {hits} lines:\n{}", g.user);
            }
        }
    }

    #[test]
    fn every_variant_occurs_in_a_full_set() {
        let all = generate(20261129, 240, band());
        for tag in [
            "type:saas_subscription",
            "type:software_license",
            "type:support_maintenance",
            "type:technology_services",
            "renewal:AutoNotice",
            "renewal:AutoNoticeCrossRef",
            "renewal:AutoExternal",
            "renewal:AutoUnlessTerminated",
            "renewal:NoAutoExplicit",
            "renewal:NoAutoMutual",
            "renewal:NoAutoSilent",
            "convenience:Either",
            "convenience:CustomerOnly",
            "convenience:SupplierOnly",
            "convenience:CustomerNoPeriod",
            "convenience:CustomerCrossRef",
            "convenience:Denied",
            "convenience:Silent",
            "payment:External",
            "payment:Silent",
            "security:Addendum",
            "security:UndueDelay",
            "signature-date",
        ] {
            assert!(all.iter().any(|g| g.tags.iter().any(|t| t == tag)), "{tag} never occurs");
        }
    }
}
