//! The team and product domains meeting notes are drawn from. Each domain supplies only
//! nouns (what a team owns, schedules, spends on, measures, hires, waits for); the sentence
//! patterns live in `meeting.rs` and are shared by all domains, so any topic can occur in
//! any domain with that domain's words.

/// How a metric's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Integer percent: 12%.
    Percent,
    /// Percent with one decimal, stored in tenths: 99.5%.
    PercentTenths,
    /// A count, with the unit after it ("9,800 tickets").
    Count(&'static str),
    /// Money in the document's currency.
    Money,
    /// Hours with one decimal, stored in tenths: 6.5 hours.
    HoursTenths,
    /// Whole minutes.
    Minutes,
    /// Milliseconds: 340 ms.
    Millis,
    /// Whole days.
    Days,
}

#[derive(Debug, Clone, Copy)]
pub struct Metric {
    pub name: &'static str,
    pub kind: MetricKind,
    pub lo: u64,
    pub hi: u64,
}

const fn m(name: &'static str, kind: MetricKind, lo: u64, hi: u64) -> Metric {
    Metric { name, kind, lo, hi }
}

/// A rule with a threshold, e.g. ("goodwill refunds", "goodwill refunds above {value} need a
/// team lead's approval", Money, 50, 400).
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// What the rule is about, for the question.
    pub topic: &'static str,
    /// The rule as a clause, with `{value}` for the threshold.
    pub rule: &'static str,
    pub kind: MetricKind,
    pub lo: u64,
    pub hi: u64,
}

const fn pol(topic: &'static str, rule: &'static str, kind: MetricKind, lo: u64, hi: u64) -> Policy {
    Policy { topic, rule, kind, lo, hi }
}

pub struct Domain {
    pub teams: &'static [&'static str],
    /// Meeting titles; `{team}` and `{product}` are filled in.
    pub titles: &'static [&'static str],
    pub roles: &'static [&'static str],
    pub products: &'static [&'static str],
    /// Things a person can own, draft, review and sign off.
    pub deliverables: &'static [&'static str],
    /// Scheduled events with participants.
    pub events: &'static [&'static str],
    /// Things with a monthly budget.
    pub budget_items: &'static [&'static str],
    pub metrics: &'static [Metric],
    /// Roles to hire, plural.
    pub hires: &'static [&'static str],
    /// What an outside vendor or partner has promised to deliver.
    pub artifacts: &'static [&'static str],
    /// (vendor's line of business, what is bought from it).
    pub vendors: &'static [(&'static str, &'static str)],
    /// (system, what fails, plural noun of what failed) for incidents.
    pub incidents: &'static [(&'static str, &'static str, &'static str)],
    pub policies: &'static [Policy],
    /// Work that slips when a dependency is late.
    pub downstream: &'static [&'static str],
    /// Whether the team deals with customer accounts (and so with customer escalations).
    pub customer_facing: bool,
}

use MetricKind::*;

pub const DOMAINS: &[Domain] = &[
    Domain {
        teams: &["Mobile Platform", "Mobile Apps"],
        titles: &["{team} release sync", "{product} release readiness", "Mobile weekly", "Release planning: {product}"],
        roles: &[
            "engineering manager",
            "mobile platform",
            "QA lead",
            "product",
            "support operations",
            "iOS developer",
            "Android developer",
            "design",
        ],
        products: &["Android/iOS 4.2", "app version 7.1", "the 3.0 redesign", "Wallet 2.4"],
        deliverables: &[
            "the rollback runbook",
            "the release checklist",
            "the crash triage guide",
            "the feature-flag inventory",
        ],
        events: &["the beta kickoff", "the bug bash", "the release readiness review", "the customer beta webinar"],
        budget_items: &["the device testing lab", "the crash reporting tool", "contract QA hours"],
        metrics: &[
            m("crash-free sessions", PercentTenths, 970, 998),
            m("regression test completion", Percent, 55, 95),
            m("open blockers", Count(" open blockers"), 3, 19),
            m("new app store reviews", Count(" reviews"), 1200, 9800),
        ],
        hires: &["QA engineers", "iOS developers", "Android developers"],
        artifacts: &["the final icon set", "the SDK security review", "the store listing translation"],
        vendors: &[("Analytics", "the mobile analytics SDK"), ("Labs", "the device cloud")],
        incidents: &[
            ("the login service", "timed out", "login attempts"),
            ("the payment confirmation screen", "crashed on Android", "checkout sessions"),
        ],
        policies: &[
            pol(
                "staged rollouts",
                "a staged rollout step larger than {value} of users needs sign-off from the release manager",
                Percent,
                5,
                25,
            ),
            pol(
                "hotfixes",
                "more than {value} hotfixes outside the release train in one month triggers a process review",
                Count(""),
                2,
                6,
            ),
        ],
        downstream: &["the app store submission", "the staged rollout"],
        customer_facing: true,
    },
    Domain {
        teams: &["Customer Support", "Support Operations"],
        titles: &[
            "{team} leadership: staffing and budget",
            "Support weekly",
            "{team} monthly review",
            "Support planning",
        ],
        roles: &[
            "VP Customer Experience",
            "support operations",
            "workforce planning",
            "finance business partner",
            "EMEA support manager",
            "Americas support manager",
            "quality lead",
            "knowledge base lead",
        ],
        products: &["the help center", "the ticketing system", "the chat widget", "the new macros"],
        deliverables: &["the escalation playbook", "the refund policy FAQ", "the weekend rota", "the macro library"],
        events: &[
            "the agent onboarding day",
            "the quality calibration session",
            "the support summit",
            "the help-center launch webinar",
        ],
        budget_items: &["weekend contractors", "the chat tool licences", "overtime"],
        metrics: &[
            m("average ticket volume", Count(" tickets a month"), 4200, 14800),
            m("first-response time", HoursTenths, 15, 95),
            m("customer satisfaction", Percent, 78, 96),
            m("average handling time", Minutes, 7, 19),
        ],
        hires: &["full-time agents", "team leads", "billing specialists"],
        artifacts: &["the workforce forecast", "the chat tool renewal quote", "the macro translation"],
        vendors: &[("Cloud", "the ticketing platform"), ("Software", "the chat widget")],
        incidents: &[
            ("the ticketing system", "stopped routing tickets", "tickets"),
            ("the chat widget", "dropped conversations", "chats"),
        ],
        policies: &[
            pol("goodwill refunds", "goodwill refunds above {value} need a team lead's approval", Money, 50, 400),
            pol(
                "agent backlogs",
                "agents with more than {value} open tickets get help from the floating pool",
                Count(""),
                20,
                60,
            ),
        ],
        downstream: &["the help-center launch", "the weekend cover plan"],
        customer_facing: true,
    },
    Domain {
        teams: &["Site Reliability", "SRE"],
        titles: &["Postmortem review: {product}", "{team} weekly", "Incident review", "Reliability review"],
        roles: &[
            "SRE manager",
            "SRE",
            "payments backend",
            "database team",
            "customer communications",
            "platform engineer",
            "security engineer",
            "on-call lead",
        ],
        products: &["INC-2291", "INC-4108", "the checkout API incident", "the checkout outage"],
        deliverables: &[
            "the connection-pool runbook",
            "the incident-commander policy",
            "the on-call handbook",
            "the customer-facing summary",
        ],
        events: &["the game-day drill", "the failover test", "the on-call training", "the chaos exercise"],
        budget_items: &["the observability platform", "the paging tool", "standby compute"],
        metrics: &[
            m("p99 latency", Millis, 180, 950),
            m("availability", PercentTenths, 990, 999),
            m("pages per week", Count(" pages"), 6, 48),
            m("mean time to recovery", Minutes, 18, 95),
        ],
        hires: &["SREs", "platform engineers"],
        artifacts: &["the root-cause analysis", "the penetration test summary", "the capacity report"],
        vendors: &[("Cloud", "the managed database"), ("Networks", "the CDN")],
        incidents: &[
            ("the checkout API", "timed out", "checkout attempts"),
            ("the search cluster", "returned errors", "search requests"),
        ],
        policies: &[
            pol(
                "release freezes",
                "a release freeze starts once {value} of the monthly error budget is used",
                Percent,
                50,
                90,
            ),
            pol(
                "peak-hour changes",
                "changes during peak hours need a second reviewer if they touch more than {value} services",
                Count(""),
                2,
                5,
            ),
        ],
        downstream: &["the database upgrade", "the region migration"],
        customer_facing: true,
    },
    Domain {
        teams: &["Marketing", "Product Marketing"],
        titles: &[
            "Marketing weekly: {product}",
            "Go-to-market review: {product}",
            "Campaign review",
            "Launch planning",
        ],
        roles: &[
            "marketing director",
            "product marketing",
            "events",
            "content",
            "sales enablement",
            "paid media",
            "design lead",
            "PR manager",
        ],
        products: &["the Atlas launch", "the new pricing tier", "the partner programme", "the spring campaign"],
        deliverables: &["the press release", "the launch battlecard", "the webinar script", "the pricing sheet"],
        events: &[
            "the launch webinar",
            "the partner summit session",
            "the customer roundtable",
            "the analyst briefing",
        ],
        budget_items: &["paid social", "the events budget", "agency hours"],
        metrics: &[
            m("webinar registrations", Count(" registrations"), 180, 1400),
            m("click-through rate", PercentTenths, 8, 64),
            m("cost per lead", Money, 18, 240),
            m("newsletter open rate", Percent, 19, 48),
        ],
        hires: &["content writers", "event managers"],
        artifacts: &["the customer quote approval", "the launch video", "the analyst embargo list"],
        vendors: &[("Media Group", "the paid social agency"), ("Digital", "the webinar platform")],
        incidents: &[
            ("the newsletter send", "went out twice", "subscribers"),
            ("the landing page", "returned errors", "visits"),
        ],
        policies: &[
            pol(
                "campaign spend",
                "campaign spend above {value} needs the marketing director's sign-off",
                Money,
                2000,
                9000,
            ),
            pol("launch discounts", "launch discounts above {value} need finance approval", Percent, 10, 30),
        ],
        downstream: &["the press release", "the paid campaign"],
        customer_facing: false,
    },
    Domain {
        teams: &["Platform Engineering", "FinOps"],
        titles: &["{team}: cloud cost review", "Monthly cost review", "{team} sync", "Cloud spend review"],
        roles: &[
            "head of platform",
            "FinOps analyst",
            "DevOps",
            "data engineering",
            "security engineering",
            "staff engineer",
            "finance partner",
            "infrastructure lead",
        ],
        products: &["the staging environment", "the data warehouse", "the Kubernetes clusters", "log storage"],
        deliverables: &[
            "the tagging policy",
            "the reserved-capacity analysis",
            "the cost dashboard",
            "the shutdown schedule",
        ],
        events: &[
            "the cost review with finance",
            "the cluster upgrade window",
            "the FinOps training",
            "the vendor review",
        ],
        budget_items: &["the staging environment", "log storage", "the data warehouse"],
        metrics: &[
            m("total cloud bill", Money, 48000, 210000),
            m("warehouse spend", Money, 12000, 56000),
            m("reserved-instance coverage", Percent, 35, 85),
            m("untagged resources", Count(" resources"), 40, 900),
        ],
        hires: &["platform engineers", "FinOps analysts"],
        artifacts: &["the savings-plan quote", "the cost export fix", "the migration estimate"],
        vendors: &[("Cloud", "the cloud provider"), ("Data", "the observability vendor")],
        incidents: &[
            ("the build pipeline", "failed intermittently", "builds"),
            ("the autoscaler", "over-provisioned the cluster", "nodes"),
        ],
        policies: &[
            pol(
                "untagged resources",
                "resources left untagged for more than {value} days are shut down automatically",
                Count(""),
                3,
                14,
            ),
            pol("spend increases", "monthly spend increases above {value} need a review with finance", Percent, 5, 20),
        ],
        downstream: &["the cluster upgrade", "the warehouse migration"],
        customer_facing: false,
    },
    Domain {
        teams: &["Procurement and IT", "IT Operations"],
        titles: &["{team}: vendor renewal review", "Vendor review", "IT steering", "{team} monthly"],
        roles: &[
            "IT director",
            "procurement",
            "finance",
            "security",
            "legal",
            "facilities",
            "service desk lead",
            "IT architect",
        ],
        products: &["the BI platform", "offsite backups", "the laptop refresh", "the service desk tool"],
        deliverables: &[
            "the vendor scorecard",
            "the laptop refresh plan",
            "the access review checklist",
            "the contract repository",
        ],
        events: &["the vendor demo", "the access review kickoff", "the laptop swap day", "the steering committee"],
        budget_items: &["software licences", "the laptop refresh", "external consultants"],
        metrics: &[
            m("open service desk tickets", Count(" tickets"), 60, 480),
            m("licences in use", Count(" seats"), 120, 950),
            m("laptops past warranty", Count(" laptops"), 15, 220),
            m("patch compliance", Percent, 71, 98),
        ],
        hires: &["service desk analysts", "IT technicians"],
        artifacts: &["the penetration test summary", "the updated data processing addendum", "the SOC 2 report"],
        vendors: &[("Analytics", "the BI platform"), ("Systems", "offsite backups")],
        incidents: &[("the nightly backup", "failed", "backup jobs"), ("the VPN", "dropped connections", "sessions")],
        policies: &[
            pol("software purchases", "software purchases above {value} need three quotes", Money, 5000, 25000),
            pol("admin accounts", "each team may hold at most {value} admin accounts", Count(""), 2, 5),
        ],
        downstream: &["the renewal decision", "the laptop rollout"],
        customer_facing: false,
    },
    Domain {
        teams: &["Sales", "Revenue Operations"],
        titles: &["{team} pipeline review", "Weekly forecast call", "{team} QBR prep", "Deal desk"],
        roles: &[
            "VP Sales",
            "revenue operations",
            "sales director EMEA",
            "sales director Americas",
            "deal desk",
            "customer success",
            "solutions engineering",
            "finance",
        ],
        products: &["the enterprise tier", "the rolling forecast", "the partner channel", "the new price book"],
        deliverables: &[
            "the rolling forecast",
            "the discount approval matrix",
            "the territory plan",
            "the renewal playbook",
        ],
        events: &["the sales kickoff", "the QBR with the board", "the partner training", "the pricing workshop"],
        budget_items: &["sales travel", "the CRM add-ons", "partner incentives"],
        metrics: &[
            m("pipeline coverage", PercentTenths, 180, 420),
            m("win rate", Percent, 14, 41),
            m("average deal size", Money, 9000, 86000),
            m("deals in commit", Count(" deals"), 7, 46),
        ],
        hires: &["account executives", "sales engineers", "SDRs"],
        artifacts: &["the signed order form", "the security questionnaire", "the procurement approval"],
        vendors: &[("Data", "the lead data provider"), ("Software", "the CPQ tool")],
        incidents: &[
            ("the quoting tool", "produced wrong totals", "quotes"),
            ("the CRM sync", "created duplicates", "opportunities"),
        ],
        policies: &[
            pol("discounts", "discounts above {value} go to the deal desk for approval", Percent, 10, 35),
            pol("payment terms", "payment terms longer than {value} days need finance approval", Count(""), 45, 90),
        ],
        downstream: &["the quarter close", "the QBR deck"],
        customer_facing: true,
    },
    Domain {
        teams: &["Data Platform", "Analytics Engineering"],
        titles: &["{team} sync: warehouse migration", "{team} weekly", "Migration steering", "Data quality review"],
        roles: &[
            "data platform lead",
            "analytics engineer",
            "data engineer",
            "BI lead",
            "data governance",
            "finance analytics",
            "product analytics",
            "security",
        ],
        products: &["the warehouse migration", "the dbt project", "the finance dashboards", "the event pipeline"],
        deliverables: &["the migration checklist", "the data dictionary", "the cutover plan", "the access model"],
        events: &[
            "the cutover rehearsal",
            "the dashboard sign-off",
            "the data literacy session",
            "the migration go/no-go",
        ],
        budget_items: &["warehouse compute", "the ETL tool", "contractor hours"],
        metrics: &[
            m("tables migrated", Count(" tables"), 120, 860),
            m("failed pipeline runs", Count(" failed runs"), 4, 60),
            m("dashboard load time", Millis, 600, 4800),
            m("data freshness SLA met", Percent, 82, 99),
        ],
        hires: &["data engineers", "analytics engineers"],
        artifacts: &["the schema export", "the vendor's migration tool licence", "the finance sign-off"],
        vendors: &[("Cloud", "the data catalogue"), ("Labs", "the data quality tool")],
        incidents: &[
            ("the nightly load", "failed", "pipeline runs"),
            ("the revenue dashboard", "showed stale data", "dashboard views"),
        ],
        policies: &[
            pol(
                "long-running queries",
                "queries running longer than {value} minutes are reviewed by the platform team",
                Count(""),
                10,
                45,
            ),
            pol(
                "ad-hoc exports",
                "ad-hoc exports above {value} rows need data governance approval",
                Count(""),
                10000,
                100000,
            ),
        ],
        downstream: &["the finance dashboards", "the legacy shutdown"],
        customer_facing: true,
    },
    Domain {
        teams: &["People Operations", "HR"],
        titles: &["{team}: hiring and onboarding", "People ops weekly", "{team} planning", "Benefits enrolment review"],
        roles: &[
            "head of people",
            "recruiting lead",
            "HR business partner",
            "payroll",
            "learning and development",
            "office manager",
            "finance",
            "employee experience",
        ],
        products: &["benefits enrolment", "the onboarding programme", "the engagement survey", "the new HR system"],
        deliverables: &[
            "the onboarding checklist",
            "the benefits guide",
            "the interview scorecard",
            "the leave policy update",
        ],
        events: &[
            "the benefits information session",
            "the new-starter orientation",
            "the manager training",
            "the engagement survey readout",
        ],
        budget_items: &["recruiting agencies", "the learning budget", "the wellbeing programme"],
        metrics: &[
            m("engagement survey response rate", Percent, 52, 93),
            m("open roles", Count(" open roles"), 6, 45),
            m("time to hire", Days, 21, 64),
            m("offer acceptance rate", Percent, 60, 94),
        ],
        hires: &["recruiters", "HR generalists"],
        artifacts: &["the payroll provider's file format", "the benefits quote", "the background-check contract"],
        vendors: &[("Software", "the HR system"), ("Insurance", "the benefits provider")],
        incidents: &[
            ("the payroll run", "calculated overtime incorrectly", "payslips"),
            ("the onboarding portal", "rejected valid uploads", "new-starter forms"),
        ],
        policies: &[
            pol("referral bonuses", "the referral bonus is {value} per hire", Money, 500, 3000),
            pol("remote working", "staff may work remotely up to {value} days a week", Count(""), 2, 4),
        ],
        downstream: &["the March payroll", "the new-starter orientation"],
        customer_facing: false,
    },
    Domain {
        teams: &["Finance", "Financial Planning"],
        titles: &["{team}: month-end close", "Budget review", "{team} weekly", "FY planning"],
        roles: &[
            "CFO",
            "financial controller",
            "FP&A",
            "accounts payable",
            "accounts receivable",
            "tax",
            "treasury",
            "procurement",
        ],
        products: &["the month-end close", "next year's budget", "the audit", "the expense system"],
        deliverables: &[
            "the close checklist",
            "the accruals schedule",
            "the audit request list",
            "the budget template",
        ],
        events: &[
            "the audit planning meeting",
            "the budget review with department heads",
            "the board pack review",
            "the expense-policy training",
        ],
        budget_items: &["audit fees", "travel", "the FP&A tool"],
        metrics: &[
            m("days to close", Days, 4, 12),
            m("overdue receivables", Money, 40000, 380000),
            m("invoices processed", Count(" invoices"), 900, 7600),
            m("budget variance", PercentTenths, 12, 95),
        ],
        hires: &["accountants", "AP clerks"],
        artifacts: &["the auditors' engagement letter", "the bank confirmation", "the tax advisor's memo"],
        vendors: &[("Software", "the expense system"), ("Bank", "the corporate cards")],
        incidents: &[
            ("the payment run", "sent duplicate payments", "supplier invoices"),
            ("the bank feed", "stopped importing", "transactions"),
        ],
        policies: &[
            pol("purchase orders", "purchase orders above {value} need CFO approval", Money, 10000, 50000),
            pol("expense receipts", "expense claims above {value} need an itemised receipt", Money, 25, 100),
        ],
        downstream: &["the board pack", "the audit fieldwork"],
        customer_facing: false,
    },
    Domain {
        teams: &["Workplace", "Facilities"],
        titles: &["Office move planning", "{team} weekly", "New office: fit-out review", "Workplace steering"],
        roles: &[
            "workplace manager",
            "facilities",
            "IT",
            "finance",
            "health and safety",
            "HR",
            "office manager",
            "project manager",
        ],
        products: &["the new office", "the fit-out", "the move weekend", "the desk booking system"],
        deliverables: &["the move plan", "the seating plan", "the fire evacuation plan", "the desk booking policy"],
        events: &["the site visit", "the move weekend", "the fire drill", "the open day for staff"],
        budget_items: &["furniture", "the fit-out contingency", "removals"],
        metrics: &[
            m("desks in the new office", Count(" desks"), 80, 420),
            m("average desk occupancy", Percent, 38, 81),
            m("meeting rooms", Count(" meeting rooms"), 6, 28),
            m("fit-out cost", Money, 90000, 640000),
        ],
        hires: &["facilities coordinators", "receptionists"],
        artifacts: &["the landlord's floor plan", "the fire certificate", "the furniture delivery schedule"],
        vendors: &[("Properties", "the landlord"), ("Building Supplies", "the furniture supplier")],
        incidents: &[
            ("the access-card system", "rejected valid cards", "entry attempts"),
            ("the lift booking system", "double-booked", "deliveries"),
        ],
        policies: &[
            pol("desk booking", "desks can be booked up to {value} days in advance", Count(""), 3, 14),
            pol("visitors", "each host may sign in up to {value} visitors a day", Count(""), 2, 6),
        ],
        downstream: &["the move weekend", "the lease exit"],
        customer_facing: false,
    },
    Domain {
        teams: &["Security and Compliance", "GRC"],
        titles: &["SOC 2 readiness", "{team} weekly", "Audit preparation", "Risk review"],
        roles: &[
            "CISO",
            "compliance lead",
            "security engineer",
            "IT",
            "legal",
            "engineering manager",
            "HR",
            "internal audit",
        ],
        products: &[
            "the SOC 2 audit",
            "the ISO 27001 surveillance audit",
            "the vendor risk programme",
            "the phishing campaign",
        ],
        deliverables: &[
            "the evidence tracker",
            "the access review",
            "the incident response plan",
            "the vendor risk register",
        ],
        events: &[
            "the auditor walkthrough",
            "the tabletop exercise",
            "the security awareness training",
            "the risk committee",
        ],
        budget_items: &["the audit firm", "the security awareness platform", "penetration testing"],
        metrics: &[
            m("controls with evidence", Percent, 54, 97),
            m("phishing click rate", PercentTenths, 18, 140),
            m("open high-risk findings", Count(" findings"), 3, 27),
            m("laptops with disk encryption", Count(" laptops"), 180, 1900),
        ],
        hires: &["security analysts", "GRC specialists"],
        artifacts: &["the penetration test report", "the vendor's SOC 2 bridge letter", "the auditors' request list"],
        vendors: &[("Labs", "the penetration testers"), ("Digital Consulting", "the compliance auditors")],
        incidents: &[
            ("the SSO provider", "rejected valid logins", "login attempts"),
            ("the email gateway", "failed to quarantine", "phishing emails"),
        ],
        policies: &[
            pol("access reviews", "access to production systems is reviewed every {value} days", Count(""), 30, 90),
            pol(
                "vulnerability patching",
                "critical vulnerabilities must be patched within {value} days",
                Count(""),
                7,
                30,
            ),
        ],
        downstream: &["the audit fieldwork", "the certification"],
        customer_facing: false,
    },
    Domain {
        teams: &["Product Design", "UX Research"],
        titles: &["Design review: {product}", "{team} weekly", "Research readout", "{product} design critique"],
        roles: &[
            "head of design",
            "product designer",
            "UX researcher",
            "product manager",
            "front-end engineer",
            "content designer",
            "accessibility lead",
            "brand",
        ],
        products: &["the onboarding flow", "the settings redesign", "the new dashboard", "the checkout flow"],
        deliverables: &["the design system update", "the research report", "the accessibility audit", "the prototype"],
        events: &["the usability study", "the design critique", "the stakeholder review", "the accessibility workshop"],
        budget_items: &["research participant incentives", "the prototyping tool", "the accessibility audit"],
        metrics: &[
            m("task success rate", Percent, 48, 94),
            m("time on task", Minutes, 2, 14),
            m("research participants", Count(" participants"), 6, 32),
            m("System Usability Scale score", Count(" points"), 52, 86),
        ],
        hires: &["product designers", "UX researchers"],
        artifacts: &["the brand guide", "the accessibility audit report", "the participant recruitment list"],
        vendors: &[("Labs", "the recruitment panel"), ("Digital", "the accessibility consultants")],
        incidents: &[
            ("the prototype link", "expired during sessions", "research sessions"),
            ("the survey tool", "failed to save", "responses"),
        ],
        policies: &[
            pol("research incentives", "research incentives are capped at {value} per participant", Money, 40, 150),
            pol("research sessions", "the team runs no more than {value} research sessions a week", Count(""), 4, 12),
        ],
        downstream: &["the usability study", "the engineering handoff"],
        customer_facing: false,
    },
    Domain {
        teams: &["Customer Success", "Implementation"],
        titles: &["Enterprise onboarding: {product}", "{team} weekly", "Account review", "Customer escalations"],
        roles: &[
            "head of customer success",
            "implementation manager",
            "solutions architect",
            "support lead",
            "account executive",
            "training lead",
            "product manager",
            "finance",
        ],
        products: &[
            "the enterprise rollout",
            "the onboarding of the new accounts",
            "the renewal cycle",
            "the health-score model",
        ],
        deliverables: &[
            "the rollout plan",
            "the success plan",
            "the training curriculum",
            "the escalation path document",
        ],
        events: &[
            "the executive business review",
            "the admin training",
            "the go-live call",
            "the customer advisory board",
        ],
        budget_items: &["customer training", "implementation partners", "the customer success platform"],
        metrics: &[
            m("net revenue retention", Percent, 92, 128),
            m("accounts at risk", Count(" accounts"), 4, 31),
            m("time to first value", Days, 12, 70),
            m("active users", Count(" users"), 300, 9400),
        ],
        hires: &["customer success managers", "implementation consultants"],
        artifacts: &["the customer's SSO metadata", "the signed statement of work", "the data export"],
        vendors: &[("Digital Consulting", "the implementation partner"), ("Learning Trust", "the training provider")],
        incidents: &[
            ("the SSO integration", "rejected valid logins", "login attempts"),
            ("the data import", "skipped rows", "records"),
        ],
        policies: &[
            pol(
                "service credits",
                "service credits above {value} need the head of customer success's approval",
                Money,
                500,
                6000,
            ),
            pol("onboarding calls", "each new account gets up to {value} onboarding calls", Count(""), 4, 10),
        ],
        downstream: &["the go-live", "the renewal"],
        customer_facing: true,
    },
];

/// Whether people sign up for an event (a webinar, a training, a workshop), so that a
/// registration count makes sense; a rehearsal, a review or a board meeting has none.
pub fn takes_registrations(event: &str) -> bool {
    [
        "webinar",
        "summit",
        "training",
        "workshop",
        "session",
        "orientation",
        "open day",
        "roundtable",
        "bug bash",
        "onboarding day",
        "sales kickoff",
        "beta kickoff",
        "swap day",
    ]
    .iter()
    .any(|k| event.contains(k))
}

/// Whether a metric improves as it falls (latency, cost, open findings).
pub fn lower_is_better(metric: &str) -> bool {
    [
        "blockers",
        "time",
        "latency",
        "pages per week",
        "cost",
        "bill",
        "spend",
        "untagged",
        "open service desk",
        "past warranty",
        "failed",
        "days to close",
        "overdue",
        "variance",
        "click rate",
        "high-risk",
        "at risk",
    ]
    .iter()
    .any(|k| metric.contains(k))
        && !metric.contains("click-through")
}

/// Whether a role would hold a pager for a system (engineering, IT, operations).
pub fn technical(role: &str) -> bool {
    let l = role.to_lowercase();
    let words: Vec<&str> = l.split(|c: char| !c.is_alphanumeric() && c != '-').collect();
    ["it", "sre", "qa", "bi", "devops", "ciso"].iter().any(|w| words.contains(w))
        || [
            "engineer",
            "developer",
            "platform",
            "backend",
            "database",
            "infrastructure",
            "security",
            "architect",
            "on-call",
            "operations",
            "service desk",
            "support lead",
        ]
        .iter()
        .any(|k| l.contains(k))
}
