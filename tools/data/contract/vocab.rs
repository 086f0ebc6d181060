//! The words of a contract: titles by agreement type, the products and projects it can be
//! about, the cities a party's legal form points to, and the template slots every section
//! fills in, set once per document.
use super::facts::{Facts, Kind};
use super::section::Ctx;
use crate::names;
use inferbench_stats::rng::SplitMix64;

pub(super) const SAAS_TITLES: &[&str] = &[
    "Software-as-a-Service Subscription Agreement",
    "Cloud Services Agreement",
    "Master Subscription Agreement",
    "Hosted Services Agreement",
    "Subscription Services Agreement",
    "SaaS Agreement",
];
pub(super) const LICENSE_TITLES: &[&str] = &[
    "Software {Licence} Agreement",
    "Enterprise Software {Licence} Agreement",
    "Term {Licence} Agreement",
    "{Licence} Agreement for On-Premises Software",
    "Master Software {Licence} Agreement",
];
pub(super) const SUPPORT_TITLES: &[&str] = &[
    "Support and Maintenance Agreement",
    "Software Maintenance Agreement",
    "Maintenance and Support Services Agreement",
    "Technical Support Agreement",
    "Annual Maintenance Agreement",
];
pub(super) const SERVICES_TITLES: &[&str] = &[
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

/// Fills the document's template slots: spelling, the parties and their names in the text, a
/// city of theirs, the product or project, the services, and the labels of the schedules.
pub(super) fn set_vocabulary(f: &Facts, ctx: &mut Ctx, rng: &mut SplitMix64) {
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
