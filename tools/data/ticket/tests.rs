//! The ticket family's own checks: every case in band, gold that follows the case, requests
//! that claim no problem an earlier rule would catch, improvements and features kept apart,
//! at most one headcount, varied deciding sentences, typos only in filler words.
use super::products::PRODUCTS;
use super::*;

fn band() -> UserBand {
    UserBand { lo: 50, hi: 100 }
}

#[test]
fn every_case_renders_in_band_for_many_seeds() {
    for seed in 0..6u64 {
        for (case, _) in DECK {
            for i in 0..4 {
                let g = item(seed, i, *case, band());
                let t = tokenizer::count(&g.user);
                assert!(band().contains(t), "{case:?}: {t} tokens");
                assert!(!g.user.contains('{') && !g.user.contains('}'), "{}", g.user);
            }
        }
    }
}

#[test]
fn gold_follows_the_case() {
    for g in generate(3, 120, band()) {
        let case_tag = g.tags[0].clone();
        let cat = g.gold["category"].as_str().unwrap();
        assert!(g.tags.contains(&format!("category:{cat}")), "{case_tag}");
        let prio = g.gold["priority"].as_str().unwrap();
        let rule: u8 = g.tags[3].trim_start_matches("priority-rule:").parse().unwrap();
        let expected = match rule {
            1..=4 => "p0",
            5..=7 => "p1",
            8..=10 => "p2",
            _ => "p3",
        };
        assert_eq!(prio, expected, "{case_tag}");
    }
}

#[test]
fn requests_never_claim_a_problem_that_an_earlier_rule_would_catch() {
    // Feature, improvement and support tickets (rules 12 and 13) must not mention
    // slowness, blocking, outages, lost data or lockouts.
    for g in generate(5, 244, band()) {
        let rule = &g.tags[3];
        if rule == "priority-rule:12" || rule == "priority-rule:13" {
            // "Nothing is broken" is how a support question says that nothing is.
            let t = g.user.to_lowercase().replace("nothing is broken", "");
            let words: Vec<&str> = t.split(|c: char| !c.is_alphanumeric()).collect();
            for word in [
                "slow", "blocked", "blocking", "stuck", "down", "lost", "locked", "error", "broken", "security",
                "outage",
            ] {
                assert!(!words.contains(&word), "{word} in a p3 request: {}", g.user);
            }
        }
    }
}

#[test]
fn improvements_change_existing_behaviour_and_new_abilities_are_features() {
    for p in PRODUCTS {
        for i in p.improvements {
            assert!(!p.new_caps.contains(i), "{i}");
            // "let us ..." asks for an ability the product lacks: that is a feature.
            assert!(!i.starts_with("let "), "new ability listed as an improvement: {i}");
        }
        for c in p.new_caps {
            assert!(!c.starts_with("let us"), "{c}");
        }
    }
}

#[test]
fn a_ticket_gives_a_headcount_at_most_once() {
    for g in generate(11, 244, band()) {
        let sizes = ["users on our account", "of us use", "people on our subscription"];
        let stated = sizes.iter().filter(|s| g.user.contains(*s)).count()
            + usize::from(g.user.contains(" people)") || g.user.contains(" of us)") || g.user.contains(" people;"))
            + usize::from(g.user.contains("all ") && g.user.contains(" of us would"));
        assert!(stated <= 1 || g.tags[0] == "case:ImprovementTeam", "{}", g.user);
        if ["case:TeamBlocked", "case:Outage", "case:ImprovementTeam"].contains(&g.tags[0].as_str()) {
            assert!(!sizes.iter().any(|s| g.user.contains(*s)), "{}", g.user);
        }
    }
}

#[test]
fn deciding_sentences_vary() {
    // No sentence that states a deciding fact repeats in more than a few tickets.
    let all = generate(20261129, 244, band());
    for phrase in
        ["Not asking for a change, just want to understand it", "Everything still works, it's only how it looks"]
    {
        let n = all.iter().filter(|g| g.user.contains(phrase)).count();
        assert!(n <= 3, "{phrase}: {n}");
    }
}

#[test]
fn typos_touch_only_filler_words() {
    let t = add_typo("I don't know which one it is.", 1);
    assert_ne!(t, "I don't know which one it is.");
    assert!(t.contains("know"));
}
