//! What a contract states, decided before any text is written: the agreement type and how
//! it renews, may be terminated, is paid and reports security incidents ([`Facts`], whose
//! gold is the expected extraction), the plan that spreads those variants evenly over the
//! set, and the dates and numbers of each item.
use crate::dates::Date;
use crate::rounds::rounds;
use inferbench_stats::rng::SplitMix64;
use serde_json::json;

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
pub(super) enum Renewal {
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
    pub(super) fn auto(self) -> bool {
        matches!(
            self,
            Renewal::AutoNotice | Renewal::AutoNoticeCrossRef | Renewal::AutoExternal | Renewal::AutoUnlessTerminated
        )
    }
    pub(super) fn has_notice(self) -> bool {
        matches!(self, Renewal::AutoNotice | Renewal::AutoNoticeCrossRef)
    }
}

/// Who may terminate for convenience, and how the notice is stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Convenience {
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
    pub(super) fn exists(self) -> bool {
        !matches!(self, Convenience::Denied | Convenience::Silent)
    }
    pub(super) fn has_period(self) -> bool {
        matches!(
            self,
            Convenience::Either | Convenience::CustomerOnly | Convenience::SupplierOnly | Convenience::CustomerCrossRef
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Payment {
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
pub(super) enum Security {
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
pub(super) struct Facts {
    pub(super) kind: Kind,
    pub(super) effective: Date,
    /// Signature date, when the text states one (always different from the effective date).
    pub(super) signed: Option<Date>,
    pub(super) term_months: i32,
    pub(super) end: Date,
    pub(super) renewal: Renewal,
    pub(super) renewal_months: Option<u32>,
    pub(super) non_renewal_days: Option<u32>,
    pub(super) payment: Payment,
    pub(super) payment_days: Option<u32>,
    pub(super) convenience: Convenience,
    pub(super) convenience_days: Option<u32>,
    pub(super) security: Security,
    pub(super) security_hours: Option<u32>,
}

impl Facts {
    pub(super) fn gold(&self) -> serde_json::Value {
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
pub(super) struct Plan {
    kind: Vec<Kind>,
    renewal: Vec<Renewal>,
    convenience: Vec<Convenience>,
    payment: Vec<Payment>,
    security: Vec<Security>,
}

impl Plan {
    pub(super) fn new(seed: u64, n: usize) -> Plan {
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

/// The terms of item `i`: its planned variants, and the dates and numbers that go with them.
pub(super) fn decide(rng: &mut SplitMix64, plan: &Plan, i: usize) -> Facts {
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
