//! The meeting family's own checks: the answer-once rule on generated items, questions and
//! titles that fit the meeting, reporting periods that have ended, and coverage of every
//! format, answer type and domain.
use super::domains::DOMAINS;
use super::{generate, Format, Meeting};
use crate::item::UserBand;
use crate::pools::standalone_count;
use inferbench_stats::rng::SplitMix64;

fn band() -> UserBand {
    UserBand { lo: 383, hi: 883 }
}

#[test]
fn the_gold_appears_in_the_notes_and_dates_and_numbers_once() {
    for seed in [1u64, 2, 3, 4, 5, 6, 7, 8, 20261129] {
        for g in generate(seed, 60, band()) {
            let notes = g.user.rsplit_once("\n\nQuestion: ").unwrap().0;
            let value = g.gold["value"].as_str().unwrap();
            assert!(notes.contains(value), "{value} not in:\n{}", g.user);
            match g.gold["type"].as_str().unwrap() {
                // "9 Dec" inside "19 Dec" is another date, hence standalone.
                "date" => assert_eq!(standalone_count(notes, value), 1, "{value}:\n{}", g.user),
                "number" => {
                    let core = value.trim_start_matches(|c: char| !c.is_ascii_digit());
                    let core: String =
                        core.chars().take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.').collect();
                    let core = core.trim_end_matches(['.', ',']);
                    assert_eq!(standalone_count(notes, core), 1, "{core}:\n{}", g.user);
                }
                _ => {
                    let surname = value.split_once(' ').unwrap().1;
                    assert!(g.aliases.iter().any(|a| a == surname), "{value}: {:?}", g.aliases);
                }
            }
            assert!(!g.user.contains('{') && !g.user.contains("[["), "{}", g.user);
        }
    }
}

#[test]
fn registrations_titles_periods_and_questions_fit_the_meeting() {
    let all = generate(20261129, 237, band());
    let closed: Vec<&str> = DOMAINS
        .iter()
        .flat_map(|d| d.events.iter().copied())
        .filter(|e| !super::vocab::takes_registrations(e))
        .collect();
    let mut questions = Vec::new();
    for g in &all {
        let u = &g.user;
        for e in &closed {
            for verb in ["registered for", "signed up for", "sign-ups does", "registrations for"] {
                assert!(!u.contains(&format!("{verb} {e}")), "{e}:\n{u}");
            }
        }
        let title = u.lines().next().unwrap().to_lowercase();
        if title.contains("postmortem") || title.contains("incident review") {
            assert!(u.contains(" incident"), "{u}");
        }
        for bad in ["a missing index added", "the limit today is", "raised to"] {
            assert!(!u.contains(bad), "{bad}:\n{u}");
        }
        questions.push(u.rsplit_once("Question: ").unwrap().1.to_string());
    }
    let mut distinct = questions.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() * 100 >= questions.len() * 95, "{} distinct of {}", distinct.len(), questions.len());
}

#[test]
fn reporting_periods_have_ended_by_the_meeting() {
    for seed in [1u64, 2, 3] {
        let mut rng = SplitMix64::new(seed);
        for d in DOMAINS {
            for _ in 0..20 {
                let mut m = Meeting::new(d, Format::Minutes, &mut rng);
                let t = m.metrics(None, &mut rng);
                let text = t.stmts[0].prose.clone();
                let month = m.date.m as usize;
                let last = crate::dates::MONTHS[(month + 10) % 12];
                let last_q = ["Q4", "Q1", "Q2", "Q3"][(month - 1) / 3];
                let named: Vec<&str> =
                    crate::dates::MONTHS.iter().copied().filter(|n| text.contains(&format!("for {n}"))).collect();
                for n in named {
                    assert_eq!(n, last, "{text} (meeting in month {month})");
                }
                for q in ["Q1", "Q2", "Q3", "Q4"] {
                    if text.contains(&format!("for {q}")) {
                        assert_eq!(q, last_q, "{text}");
                    }
                }
            }
        }
    }
}

#[test]
fn every_format_answer_and_domain_occurs() {
    let all = generate(20261129, 237, band());
    for tag in [
        "answer:person",
        "answer:date",
        "answer:number",
        "format:Minutes",
        "format:Bullets",
        "format:Transcript",
        "format:Email",
        "format:RoundTable",
    ] {
        assert!(all.iter().any(|g| g.tags.iter().any(|t| t == tag)), "{tag}");
    }
    for d in 0..DOMAINS.len() {
        let tag = format!("domain:{d}");
        assert!(all.iter().any(|g| g.tags.contains(&tag)), "{tag}");
    }
}
