//! The contract family's own checks: cross-references, definitions and the term agree; every
//! stated number sits next to its concept; nulls and booleans follow the facts; no
//! distractor repeats a term's number in its unit; every variant occurs in a full set.
use super::*;
use crate::dates::{self, Date};

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
