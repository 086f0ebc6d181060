//! The document: its sections written from the facts in the order that lets them cite one
//! another, the body's order varied, optional sections held in reserve, rendered with
//! resolved cross-references, and fitted to the token band.
use super::boilerplate::misc_sections;
use super::facts::{Convenience, Facts, Kind, Renewal};
use super::obligations::{fees_section, scope_section, security_section, service_level_section};
use super::opening::{definitions_section, preamble};
use super::section::{Ctx, Section};
use super::term::{notices_section, term_section, termination_section};
use super::vocab::{set_vocabulary, LICENSE_TITLES, SAAS_TITLES, SERVICES_TITLES, SUPPORT_TITLES};
use crate::dates;
use crate::item::UserBand;
use crate::pools::Vars;
use inferbench_judge::tokenizer;
use inferbench_stats::rng::SplitMix64;

/// A contract as its title, preamble and numbered sections, before the numbers are resolved.
pub(super) struct Doc {
    title: String,
    preamble: Vec<String>,
    /// Definitions first, then the body in its rendering order.
    sections: Vec<Section>,
    /// Optional sections not (yet) included, in the order they may be added.
    spare: Vec<Section>,
    heading_style: u8,
    refword: &'static str,
}

impl Doc {
    pub(super) fn build(f: &Facts, rng: &mut SplitMix64) -> Doc {
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
    pub(super) fn fit(mut self, band: UserBand, rng: &mut SplitMix64) -> Option<String> {
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
