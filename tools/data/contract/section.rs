//! What every section is written with: the document-wide choices ([`Ctx`]: number style,
//! date style, "Section" or "Clause", British or American spelling, the numbers already
//! taken, the filled template slots), and the numbered [`Section`] itself.
use crate::dates::{self, Date};
use crate::pools::{words, Vars};
use inferbench_stats::rng::SplitMix64;

/// Document-wide choices, fixed once per contract.
pub(super) struct Ctx {
    pub(super) legal_numbers: bool,
    pub(super) date_style: dates::Style,
    /// "Section" or "Clause".
    pub(super) refword: &'static str,
    pub(super) british: bool,
    /// Numbers already used by a term or a distractor.
    pub(super) taken: Vec<u32>,
    pub(super) v: Vars,
}

impl Ctx {
    /// "forty-five (45)" or "45".
    pub(super) fn n(&self, n: u32) -> String {
        if self.legal_numbers && n < 1000 {
            format!("{} ({n})", words(n))
        } else {
            n.to_string()
        }
    }
    pub(super) fn days(&self, n: u32) -> String {
        format!("{} {}", self.n(n), if n == 1 { "day" } else { "days" })
    }
    pub(super) fn hours(&self, n: u32) -> String {
        format!("{} {}", self.n(n), if n == 1 { "hour" } else { "hours" })
    }
    pub(super) fn months(&self, n: u32) -> String {
        format!("{} {}", self.n(n), if n == 1 { "month" } else { "months" })
    }
    pub(super) fn date(&self, d: Date) -> String {
        d.fmt(self.date_style)
    }
    /// A distractor number from `pool` that no term and no other distractor uses.
    pub(super) fn fresh(&mut self, rng: &mut SplitMix64, pool: &[u32]) -> u32 {
        let free: Vec<u32> = pool.iter().copied().filter(|n| !self.taken.contains(n)).collect();
        let n = if free.is_empty() { *rng.pick(pool) } else { *rng.pick(&free) };
        self.taken.push(n);
        n
    }
    pub(super) fn r(&self, rng: &mut SplitMix64, templates: &[&str]) -> String {
        self.v.pick(rng, templates)
    }
}

/// One numbered section. Clauses may contain `[[key]]`, replaced by the number of section
/// `key` once the final order is known.
#[derive(Debug, Clone)]
pub(super) struct Section {
    pub(super) key: &'static str,
    pub(super) title: String,
    pub(super) clauses: Vec<String>,
    /// Optional sections can be dropped or added to fit the token band.
    pub(super) optional: bool,
}

/// "authorised" or "authorized", as the document spells it.
pub(super) fn fix_spelling(ctx: &Ctx, text: String) -> String {
    text.replace("unauthorised", &format!("un{}", ctx.v.get("authorised")))
        .replace("authorised", ctx.v.get("authorised"))
}
