//! The cases a ticket can be built around, each tied to the rows of the rule table that
//! decide its category and priority, and how often each occurs in a set.

/// One way a ticket can fall under the rule table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    DataLoss,
    DataLossCalm,
    Security,
    Outage,
    Billing,
    CoreBroken,
    Lockout,
    LockoutResetBroken,
    TeamBlocked,
    Workaround,
    Slow,
    SingleUser,
    Cosmetic,
    Feature,
    FeatureUrgent,
    NewIntegration,
    NewReport,
    NewPlatform,
    Improvement,
    ImprovementTeam,
    ChangeDesigned,
    IntendedThenChange,
    Account,
    HowTo,
    HowToUrgent,
    IsIntended,
    BrokenPlusRequest,
    CoreBrokenPlusRequest,
    CosmeticPlusRequest,
}

impl Case {
    /// (category, the category rule that decides it, priority, the priority rule that decides it).
    /// Category rules: "def" (the category definition alone) or "tb1".."tb5".
    pub fn rules(self) -> (&'static str, &'static str, &'static str, u8) {
        use Case::*;
        match self {
            DataLoss | DataLossCalm => ("bug", "def", "p0", 1),
            Security => ("bug", "def", "p0", 2),
            Outage => ("bug", "def", "p0", 3),
            Billing => ("bug", "def", "p0", 4),
            CoreBroken => ("bug", "def", "p1", 5),
            Lockout => ("customer_support", "tb4", "p1", 6),
            LockoutResetBroken => ("bug", "def", "p1", 6),
            TeamBlocked => ("bug", "def", "p1", 7),
            Workaround => ("bug", "def", "p2", 8),
            Slow => ("bug", "def", "p2", 9),
            SingleUser => ("bug", "def", "p2", 10),
            Cosmetic => ("bug", "def", "p3", 11),
            Feature | FeatureUrgent => ("feature", "def", "p3", 12),
            NewIntegration | NewReport | NewPlatform => ("feature", "tb5", "p3", 12),
            Improvement | ImprovementTeam => ("improvement", "def", "p3", 12),
            ChangeDesigned | IntendedThenChange => ("improvement", "tb2", "p3", 12),
            Account | HowToUrgent => ("customer_support", "def", "p3", 13),
            HowTo | IsIntended => ("customer_support", "tb3", "p3", 13),
            BrokenPlusRequest => ("bug", "tb1", "p2", 8),
            CoreBrokenPlusRequest => ("bug", "tb1", "p1", 5),
            CosmeticPlusRequest => ("bug", "tb1", "p3", 11),
        }
    }
}

/// How often each case occurs: bugs are the most common tickets, but every category and
/// every rule gets a fair share of the 244.
pub(super) const DECK: &[(Case, usize)] = &[
    (Case::DataLoss, 2),
    (Case::DataLossCalm, 1),
    (Case::Security, 2),
    (Case::Outage, 1),
    (Case::Billing, 2),
    (Case::CoreBroken, 2),
    (Case::Lockout, 2),
    (Case::LockoutResetBroken, 1),
    (Case::TeamBlocked, 2),
    (Case::Workaround, 2),
    (Case::Slow, 2),
    (Case::SingleUser, 2),
    (Case::Cosmetic, 2),
    (Case::Feature, 2),
    (Case::FeatureUrgent, 1),
    (Case::NewIntegration, 1),
    (Case::NewReport, 1),
    (Case::NewPlatform, 1),
    (Case::Improvement, 2),
    (Case::ImprovementTeam, 1),
    (Case::ChangeDesigned, 2),
    (Case::IntendedThenChange, 1),
    (Case::Account, 2),
    (Case::HowTo, 2),
    (Case::HowToUrgent, 1),
    (Case::IsIntended, 1),
    (Case::BrokenPlusRequest, 1),
    (Case::CoreBrokenPlusRequest, 1),
    (Case::CosmeticPlusRequest, 1),
];
