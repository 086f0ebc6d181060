//! The products a ticket can be about, each with the words its users would use (objects,
//! workflows, features, pages, wishes), the error messages, times, browsers and platforms any
//! ticket may mention, and `vocabulary`, which fills a ticket's template slots from one
//! product.
use super::text::gerund;
use crate::pools::Vars;
use inferbench_stats::rng::SplitMix64;

/// A product a ticket can be about, with the vocabulary its users would use.
pub(super) struct Product {
    pub(super) brands: &'static [&'static str],
    /// (plural, singular) of the main object.
    pub(super) objects: (&'static str, &'static str),
    /// Core workflow as a verb phrase, with the button that runs it.
    pub(super) core: &'static [(&'static str, &'static str)],
    /// Existing non-core features.
    pub(super) features: &'static [&'static str],
    pub(super) pages: &'static [&'static str],
    pub(super) integrations: &'static [&'static str],
    pub(super) reports: &'static [&'static str],
    /// Capabilities the product does not have.
    pub(super) new_caps: &'static [&'static str],
    /// Wishes to make something that works better or easier.
    pub(super) improvements: &'static [&'static str],
    /// (behaviour that is by design, what the user would like instead).
    pub(super) designed: &'static [(&'static str, &'static str)],
    /// How-to questions.
    pub(super) howtos: &'static [&'static str],
    /// Cosmetic defects.
    pub(super) cosmetic: &'static [&'static str],
    /// Teams who use it.
    pub(super) teams: &'static [&'static str],
    /// Whether the product takes payments from the user's own customers.
    pub(super) payments: bool,
}

pub(super) const PRODUCTS: &[Product] = &[
    Product {
        brands: &["Ledgerly", "Tallybook"],
        objects: ("invoices", "invoice"),
        core: &[("send invoices", "Send"), ("create invoices", "Create invoice")],
        features: &[
            "the PDF export",
            "the recurring invoice feature",
            "the client portal",
            "the payment reminder feature",
        ],
        pages: &["the invoice list", "the dashboard", "the client page"],
        integrations: &["Xero", "QuickBooks", "Stripe", "HubSpot"],
        reports: &["an aged debtors report grouped by client", "a report of invoices paid late, by month"],
        new_caps: &[
            "split one invoice across two projects",
            "add a second currency to the same invoice",
            "attach a timesheet to an invoice",
            "set a default due date for new invoices",
        ],
        improvements: &[
            "remember the sort order I chose on the invoice list",
            "send the payment reminder two days earlier",
            "make the invoice search find partial invoice numbers",
            "name the PDF export after the invoice number instead of a random code",
        ],
        designed: &[
            ("draft invoices are deleted after 30 days", "keep drafts until we delete them ourselves"),
            ("invoice numbers restart every January", "keep counting up across years"),
        ],
        howtos: &[
            "add a second admin to our account",
            "change the logo that appears on our invoices",
            "give our accountant read-only access",
        ],
        cosmetic: &[
            "the \"Due date\" column header on the invoice list is cut off and reads \"Due da\"",
            "the total on the invoice preview is not aligned with the other amounts",
            "the client names on the dashboard overlap the chart legend",
        ],
        teams: &["finance", "accounts", "billing"],
        payments: true,
    },
    Product {
        brands: &["Pipewise", "Dealbook CRM"],
        objects: ("contacts", "contact"),
        core: &[("log calls", "Log call"), ("update deals", "Save"), ("add new contacts", "Add contact")],
        features: &["the email sync", "the CSV export", "the deal forecast view", "the contact merge tool"],
        pages: &["the pipeline board", "the contact list", "the deal page"],
        integrations: &["Outlook", "Zendesk", "Mailchimp", "Gmail"],
        reports: &["a win/loss report by lead source", "a report of deals with no activity for 30 days"],
        new_caps: &[
            "assign one deal to two owners",
            "schedule an email to send later",
            "track commission per deal",
            "filter the pipeline board by owner",
        ],
        improvements: &[
            "remember which columns I hid on the contact list",
            "make the contact search find partial phone numbers",
            "run the email sync every five minutes instead of every thirty",
            "keep the deal page where I was after I save a change",
        ],
        designed: &[
            ("new contacts are assigned to whoever imports them", "assign them to the account owner instead"),
            ("contacts without an email address are hidden from the list by default", "show all contacts by default"),
        ],
        howtos: &[
            "import contacts from a spreadsheet",
            "transfer a departing colleague's deals to me",
            "rename the stages in our pipeline",
        ],
        cosmetic: &[
            "the stage names on the pipeline board are cut off after 12 characters",
            "the profile photos on the contact list are stretched",
            "the \"Won\" badge is shown in red instead of green",
        ],
        teams: &["sales", "account management", "business development"],
        payments: false,
    },
    Product {
        brands: &["Taskhive", "Planwell"],
        objects: ("tasks", "task"),
        core: &[("create tasks", "Add task"), ("assign tasks", "Assign"), ("save tasks", "Save")],
        features: &["the Gantt view", "the recurring task feature", "the calendar sync", "the file attachment feature"],
        pages: &["the board view", "the project overview", "My Tasks"],
        integrations: &["Jira", "Google Calendar", "Slack", "GitHub"],
        reports: &["a workload report per person per week", "a report of overdue tasks by project"],
        new_caps: &[
            "set dependencies between tasks in different projects",
            "add a custom field with a formula",
            "archive a whole project in one click",
            "collapse columns on the board view",
        ],
        improvements: &[
            "keep the filter I used last time on My Tasks",
            "send the due-date reminder the morning before instead of at midnight",
            "put the newest comments at the top of a task instead of the bottom",
            "remember whether I had the Gantt view zoomed to weeks or months",
        ],
        designed: &[
            (
                "completed tasks disappear from the board after 14 days",
                "keep completed tasks visible until we archive them",
            ),
            ("new tasks are added at the bottom of a column", "add new tasks at the top"),
        ],
        howtos: &[
            "make a project template from an existing project",
            "change the start day of the week to Monday",
            "remove a former employee and reassign their tasks",
        ],
        cosmetic: &[
            "the due dates on the board view are shown in grey on grey and are hard to read",
            "the project colour dots are misaligned with the project names",
            "the word \"Asignee\" is misspelt on the task panel",
        ],
        teams: &["marketing", "product", "design", "operations"],
        payments: false,
    },
    Product {
        brands: &["PeopleDesk", "Rosterly"],
        objects: ("timesheets", "timesheet"),
        core: &[("submit timesheets", "Submit"), ("approve timesheets", "Approve"), ("run payroll", "Run payroll")],
        features: &["the leave calendar", "the payslip export", "the shift swap feature", "the expense claim form"],
        pages: &["the employee directory", "the approvals page", "the leave calendar"],
        integrations: &["Workday", "Xero Payroll", "Microsoft Teams", "BambooHR"],
        reports: &["a report of overtime hours per department", "a headcount report by contract type"],
        new_caps: &[
            "book half-day leave",
            "set different public holidays per office",
            "add an approval step for a second manager",
            "approve several timesheets at once",
        ],
        improvements: &[
            "send the approval reminder one day earlier",
            "remember the week I last looked at on the approvals page",
            "sort the employee directory by surname instead of first name",
            "open the leave calendar on the month view I used last",
        ],
        designed: &[
            ("timesheets lock at midnight on Sunday", "keep them open until Monday noon"),
            ("only admins can see the whole leave calendar", "let every employee see the team's leave"),
        ],
        howtos: &[
            "change my bank details for payroll",
            "add a new office location",
            "make someone else the approver while I'm on holiday",
        ],
        cosmetic: &[
            "the week numbers in the leave calendar header overlap the month name",
            "the approval badge shows \"0 pending\" in bold red even when nothing is pending",
            "employee photos in the directory are cropped at the forehead",
        ],
        teams: &["HR", "payroll", "warehouse", "nursing"],
        payments: false,
    },
    Product {
        brands: &["Shopfront", "Cartwheel"],
        objects: ("orders", "order"),
        core: &[("fulfil orders", "Fulfil order"), ("publish products", "Publish"), ("save products", "Save product")],
        features: &[
            "the discount code feature",
            "the abandoned cart email feature",
            "the product import",
            "the gift card feature",
        ],
        pages: &["the orders page", "the product catalogue", "the storefront"],
        integrations: &["Shopify POS", "Amazon", "DHL", "Klaviyo"],
        reports: &["a report of returns by product and reason", "a sales report by postcode"],
        new_caps: &[
            "sell products in bundles",
            "offer a subscription for repeat orders",
            "give customers a choice of delivery date",
            "bulk edit product prices",
        ],
        improvements: &[
            "make the order search find partial order numbers",
            "remember the filters I set on the orders page",
            "send the abandoned cart email after one hour instead of after a day",
            "sort the product catalogue newest first by default",
        ],
        designed: &[
            ("discount codes cannot be combined", "allow one free-shipping code together with a percentage code"),
            ("out-of-stock products are hidden from the storefront", "show them with a \"back soon\" label"),
        ],
        howtos: &[
            "set up shipping rates for Europe",
            "change the currency the shop displays",
            "give a new staff member access to orders only",
        ],
        cosmetic: &[
            "the product images on the storefront are slightly blurry on mobile",
            "the checkout button text wraps onto two lines on small screens",
            "the currency symbol appears after the price instead of before it",
        ],
        teams: &["fulfilment", "customer service", "warehouse"],
        payments: true,
    },
    Product {
        brands: &["Bookwell", "SlotPilot"],
        objects: ("appointments", "appointment"),
        core: &[("book appointments", "Book"), ("confirm appointments", "Confirm"), ("check clients in", "Check in")],
        features: &["the SMS reminder feature", "the online booking page", "the waiting list", "the deposit feature"],
        pages: &["the calendar", "the client list", "the booking page"],
        integrations: &["Google Calendar", "Zoom", "Square", "Outlook"],
        reports: &["a no-show report per staff member", "a report of bookings by service and weekday"],
        new_caps: &[
            "book one appointment with two staff members",
            "let clients pick a room as well as a time",
            "take group bookings for classes",
            "drag appointments between staff columns",
            "edit the reminder text per service",
        ],
        improvements: &[
            "send the SMS reminder 48 hours ahead instead of 24",
            "remember which staff columns I hid on the calendar",
            "make the client search ignore the spaces in phone numbers",
            "open the calendar on today's date instead of the start of the week",
        ],
        designed: &[
            ("clients cannot book less than 24 hours in advance", "allow same-day bookings until 2 hours before"),
            ("cancelled appointments stay on the calendar in grey", "hide cancelled appointments"),
        ],
        howtos: &[
            "block out a staff member's holiday",
            "change the opening hours for the summer",
            "export our client list",
        ],
        cosmetic: &[
            "the staff colours on the calendar are almost identical shades of blue",
            "the booking page shows our logo squashed",
            "the time labels on the calendar are misaligned by half a row",
        ],
        teams: &["front desk", "reception", "clinic"],
        payments: true,
    },
    Product {
        brands: &["Stockroom", "Inventra"],
        objects: ("purchase orders", "purchase order"),
        core: &[
            ("receive stock", "Receive"),
            ("create purchase orders", "Create PO"),
            ("save stock counts", "Save count"),
        ],
        features: &[
            "the barcode scanner",
            "the low-stock alert feature",
            "the supplier catalogue",
            "the batch tracking feature",
        ],
        pages: &["the stock list", "the purchase order page", "the warehouse overview"],
        integrations: &["NetSuite", "Sage", "ShipStation", "WooCommerce"],
        reports: &["a stock ageing report by warehouse", "a report of supplier lead times"],
        new_caps: &[
            "track serial numbers per item",
            "transfer stock between two warehouses in one step",
            "set reorder points per season",
            "scan several items before saving",
        ],
        improvements: &[
            "send the low-stock alert once a day instead of once per item",
            "remember the warehouse I picked last on the stock list",
            "make the stock list search find partial SKUs",
            "sort the supplier catalogue alphabetically by default",
        ],
        designed: &[
            ("only managers can start a stock count", "let team leads start stock counts too"),
            ("a purchase order cannot be edited once sent", "allow edits until the supplier confirms"),
        ],
        howtos: &[
            "add a new warehouse",
            "change the unit of measure for an item",
            "set up user permissions for the warehouse staff",
        ],
        cosmetic: &[
            "the quantity column on the stock list is not right-aligned",
            "the warehouse overview shows the wrong icon for frozen storage",
            "the word \"recieved\" is misspelt on the purchase order page",
        ],
        teams: &["warehouse", "purchasing", "logistics"],
        payments: false,
    },
    Product {
        brands: &["Mailcraft", "Sendloop"],
        objects: ("campaigns", "campaign"),
        core: &[("send campaigns", "Send now"), ("schedule campaigns", "Schedule"), ("import subscribers", "Import")],
        features: &["the A/B testing tool", "the signup form builder", "the template editor", "the click map"],
        pages: &["the campaign list", "the audience page", "the template editor"],
        integrations: &["Salesforce", "Shopify", "Typeform", "WordPress"],
        reports: &["a report comparing open rates by subject line length", "an unsubscribe report by campaign type"],
        new_caps: &[
            "send a campaign in the recipient's time zone",
            "add a countdown timer block to emails",
            "segment subscribers by purchase history",
            "duplicate a campaign together with its audience",
        ],
        improvements: &[
            "move the preview text field above the subject line",
            "make the template editor undo more than one step",
            "remember the sort order I chose on the campaign list",
            "save drafts in the template editor every minute instead of every ten",
        ],
        designed: &[
            ("the unsubscribe link always sits at the bottom of each email", "also show it at the top"),
            ("scheduled campaigns cannot be edited in the last 15 minutes", "allow edits until 5 minutes before"),
        ],
        howtos: &[
            "verify our sending domain",
            "move subscribers from one list to another",
            "change the reply-to address for all campaigns",
        ],
        cosmetic: &[
            "the campaign thumbnails on the campaign list are all shown upside down",
            "the buttons in the template editor toolbar overlap on a laptop screen",
            "the open-rate chart labels use two different fonts",
        ],
        teams: &["marketing", "communications", "growth"],
        payments: false,
    },
    Product {
        brands: &["Filevault", "Sharebox"],
        objects: ("files", "file"),
        core: &[("upload files", "Upload"), ("share folders", "Share"), ("download files", "Download")],
        features: &["the version history", "the desktop sync", "the share link feature", "the file preview"],
        pages: &["the folder view", "the shared-with-me page", "the admin console"],
        integrations: &["Adobe Acrobat Sign", "Microsoft Office", "Notion", "Zapier"],
        reports: &["a report of files shared outside the company", "a storage usage report per team folder"],
        new_caps: &[
            "set an expiry date on a shared folder",
            "require a password for share links",
            "lock a file while someone edits it",
            "sort the folder view by file size",
            "search for text inside PDFs",
        ],
        improvements: &[
            "remember the sort order I chose on the folder view",
            "remember whether I picked list or grid on the folder view",
            "make the desktop sync pick up changes every minute instead of every ten",
            "keep the file preview open when I move to the next file",
        ],
        designed: &[
            ("deleted files stay in the bin for 30 days only", "keep them for 90 days"),
            ("share links open in view-only mode", "default share links to allow comments"),
        ],
        howtos: &[
            "transfer all of a leaving colleague's files to me",
            "increase our storage quota",
            "stop the desktop app from starting automatically",
        ],
        cosmetic: &[
            "file names in the folder view are truncated in the middle instead of at the end",
            "the storage bar in the admin console shows 100% in green",
            "the icons for Excel and Word files are swapped",
        ],
        teams: &["legal", "design", "engineering"],
        payments: false,
    },
    Product {
        brands: &["Coursely", "Learnbase"],
        objects: ("courses", "course"),
        core: &[("enrol learners", "Enrol"), ("publish courses", "Publish"), ("submit grades", "Submit grades")],
        features: &["the quiz builder", "the certificate generator", "the discussion forum", "the caption editor"],
        pages: &["the course catalogue", "the gradebook", "the learner dashboard"],
        integrations: &["Moodle", "Zoom", "Microsoft Teams", "Canvas"],
        reports: &["a completion report by department", "a report of quiz questions most often answered wrongly"],
        new_caps: &[
            "set a deadline per learner",
            "add a peer review step to assignments",
            "issue certificates that expire after a year",
            "reorder lessons by dragging",
        ],
        improvements: &[
            "remember the video playback speed",
            "send the enrolment email straight away instead of the next morning",
            "make the catalogue search find partial course codes",
            "keep the gradebook on the page I was on after I save a grade",
        ],
        designed: &[
            ("learners can retake a quiz only once", "allow three attempts"),
            ("courses are hidden from the catalogue until published", "show upcoming courses as \"coming soon\""),
        ],
        howtos: &["bulk enrol a whole department", "change the certificate template", "reset a learner's quiz attempt"],
        cosmetic: &[
            "the progress bars on the learner dashboard overflow their boxes",
            "the course thumbnails have a white line at the bottom",
            "the gradebook header is not sticky-aligned with the columns",
        ],
        teams: &["training", "onboarding", "compliance"],
        payments: false,
    },
    Product {
        brands: &["Spendwise", "Receiptly"],
        objects: ("expense reports", "expense report"),
        core: &[
            ("submit expense reports", "Submit"),
            ("approve expenses", "Approve"),
            ("upload receipts", "Upload receipt"),
        ],
        features: &["the mileage calculator", "the card feed", "the receipt scanner", "the per diem calculator"],
        pages: &["the approvals queue", "the reports page", "the card transactions page"],
        integrations: &["SAP Concur", "Xero", "Expensify", "Revolut Business"],
        reports: &["a report of spend by cost centre and month", "a VAT reclaim report by country"],
        new_caps: &[
            "split one receipt between two cost centres",
            "set different spending limits per project",
            "add mileage by drawing the route on a map",
            "see the receipt image without opening the report",
        ],
        improvements: &[
            "remember the cost centre I used on my last report",
            "send the approval reminder in the morning instead of at midnight",
            "round the mileage calculator to whole kilometres instead of two decimals",
            "make the reports page search find partial report numbers",
        ],
        designed: &[
            (
                "receipts older than 90 days are rejected automatically",
                "allow older receipts with a manager's approval",
            ),
            ("approved reports cannot be edited", "let finance correct the cost centre after approval"),
        ],
        howtos: &["add a new cost centre", "change my approver", "set up the card feed for a new company card"],
        cosmetic: &[
            "the amounts in the approvals queue use a comma in one column and a dot in the other",
            "the receipt thumbnails are rotated sideways",
            "the status label says \"Aproved\"",
        ],
        teams: &["finance", "field sales", "accounts payable"],
        payments: true,
    },
    Product {
        brands: &["Fieldmate", "Dispatchly"],
        objects: ("work orders", "work order"),
        core: &[("dispatch jobs", "Dispatch"), ("close work orders", "Complete job"), ("assign technicians", "Assign")],
        features: &["the route planner", "the customer signature capture", "the parts list", "the offline mode"],
        pages: &["the dispatch board", "the technician app", "the job history"],
        integrations: &["ServiceNow", "Google Maps", "QuickBooks", "Salesforce Field Service"],
        reports: &["a first-time fix rate report by technician", "a report of travel time versus job time"],
        new_caps: &[
            "attach a video to a work order",
            "let customers track the technician's arrival",
            "plan recurring maintenance visits automatically",
            "filter the dispatch board by skill",
            "search the job history by address",
        ],
        improvements: &[
            "remember the zoom level I chose on the dispatch board",
            "send the technician's job notification an hour earlier",
            "sort the job history newest first by default",
            "keep the technician app on the job I was viewing after it syncs",
        ],
        designed: &[
            ("technicians cannot see jobs assigned to others", "let technicians see their team's jobs"),
            ("a work order closes automatically after the signature", "keep it open until the parts are logged"),
        ],
        howtos: &["add a new technician", "change the service areas", "export last month's completed jobs"],
        cosmetic: &[
            "the job cards on the dispatch board overlap when two jobs start at the same time",
            "the map pins are all the same colour",
            "the header of the technician app shows the date in two different formats",
        ],
        teams: &["dispatch", "field service", "maintenance"],
        payments: false,
    },
];

const ERRORS: &[&str] = &[
    "Something went wrong",
    "Error 500",
    "Request failed with status code 422",
    "Unexpected error, please try again later",
    "An unknown error occurred (code E1043)",
    "Internal server error",
    "Oops! We couldn't complete that action",
];
const WHEN: &[&str] = &[
    "since this morning",
    "since yesterday's update",
    "since the update on Tuesday",
    "since last night",
    "for the past two days",
    "since the new version came out",
    "since about 9am today",
];
const BROWSERS: &[(&str, &str)] = &[
    ("Safari", "Chrome"),
    ("Firefox", "Edge"),
    ("Edge", "Chrome"),
    ("Chrome", "Firefox"),
    ("the iPhone app", "the website"),
    ("the Android app", "the desktop site"),
];
const PLATFORMS: &[&str] = &[
    "an iPad app",
    "an Android tablet app",
    "a Linux desktop app",
    "an Apple Watch app",
    "a Windows desktop app",
    "Chromebooks",
];

/// One product's words, and the details any ticket may carry, in template slots.
pub(super) fn vocabulary(p: &Product, rng: &mut SplitMix64) -> Vars {
    let mut v = Vars::new();
    let brand = *rng.pick(p.brands);
    v.set("app", *rng.pick(&[brand, brand, "the app", "your app", "the system"]));
    v.set("brand", brand);
    v.set("objects", p.objects.0);
    v.set("object", p.objects.1);
    let article = if p.objects.1.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    v.set("a_object", format!("{article} {}", p.objects.1));
    let (core, button) = *rng.pick(p.core);
    v.set("core", core);
    v.set("core_ing", gerund(core));
    v.set("button", button);
    let feature = *rng.pick(p.features);
    v.set("feature", feature);
    v.set("feature_bare", feature.strip_prefix("the ").unwrap_or(feature));
    v.set("page", *rng.pick(p.pages));
    v.set("integ", *rng.pick(p.integrations));
    v.set("report", *rng.pick(p.reports));
    v.set("new_cap", *rng.pick(p.new_caps));
    v.set("improve", *rng.pick(p.improvements));
    let (designed, wish) = *rng.pick(p.designed);
    v.set("designed", designed);
    v.set("wish", wish);
    v.set("howto", *rng.pick(p.howtos));
    v.set("cosmetic", *rng.pick(p.cosmetic));
    v.set("team", *rng.pick(p.teams));
    v.set("err", *rng.pick(ERRORS));
    v.set("when", *rng.pick(WHEN));
    let (b, other) = *rng.pick(BROWSERS);
    v.set("browser", b);
    v.set("other", other);
    v.set("platform", *rng.pick(PLATFORMS));
    v.set("n", rng.range(6, 40).to_string());
    v.set("people", rng.range(8, 35).to_string());
    v.set("users", rng.range(12, 160).to_string());
    let domain = format!(
        "{}.{}",
        rng.pick(&["northwind", "harbourview", "kestrel", "lumenor", "quayside", "fernhill", "redfern"]),
        rng.pick(&["com", "co.uk", "de", "io", "com.au", "nl"])
    );
    v.set("domain", domain);
    v.set("plan", *rng.pick(&["Business", "Pro", "Team", "Enterprise", "Starter", "Growth"]));
    v.set("acct", format!("{}", rng.range(10_000, 99_999)));
    v.set("city", *rng.pick(&crate::pools::CITIES));
    v
}
