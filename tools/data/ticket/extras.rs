//! The sentences that decide nothing: context lines (plan, account, office, platform) that
//! `Ticket::fit` adds or drops to reach the token band, and the subject line.
use super::case::Case;
use super::text::fix_caps;
use crate::pools::Vars;
use inferbench_stats::rng::SplitMix64;

/// Context sentences that change nothing in the triage: plan, account, office, platform.
/// None restates a fact the deciding sentences already give (a case that states a
/// headcount gets no second one), and a ticket often carries none at all.
pub(super) fn context_lines(case: Case, v: &Vars, rng: &mut SplitMix64) -> Vec<String> {
    use Case::*;
    // Groups of interchangeable sentences: a ticket takes at most one from each group.
    let mut groups: Vec<&[&str]> = vec![
        &[
            "We're on the {plan} plan.",
            "We're on your {plan} plan, if that matters.",
            "Plan: {plan}.",
            "Our subscription is {plan}.",
            "(We pay for {plan}, in case that's relevant.)",
        ],
        &[
            "Our account ID is {acct}.",
            "Account number {acct}.",
            "Workspace ID: {acct}.",
            "Account {acct}, in case you need it.",
            "The account is under {acct}.",
        ],
        &[
            "My login is {login}.",
            "My username is {login}.",
            "You can reach me at {login}.",
            "Best to reply to {login}.",
            "I sign in as {login}.",
        ],
        &[
            "I'm the admin for our workspace.",
            "I'm one of the account admins.",
            "I look after {app} for our company.",
            "I manage our {brand} setup.",
            "I'm the main contact for {app} here.",
            "I handle the {brand} account for our {team} people.",
        ],
        &[
            "This is for our {city} office.",
            "I work in our {city} office.",
            "I'm based in {city}.",
            "Writing from our {city} team.",
        ],
        &[
            "I've attached a screenshot.",
            "Screenshot attached.",
            "Happy to send screenshots if that helps.",
            "I can share my screen if that's easier.",
        ],
        &[
            "A colleague suggested I write in.",
            "Our IT team asked me to send this to you.",
            "Our office manager asked me to raise this.",
            "I'm writing on behalf of our team lead.",
        ],
    ];
    // The account's size only where the deciding sentences give no headcount of their own.
    if !matches!(case, TeamBlocked | Outage | ImprovementTeam) {
        groups.push(&[
            "We have about {users} users on our account.",
            "Around {users} of us use {app} every day.",
            "There are roughly {users} people on our subscription.",
        ]);
    }
    match case {
        Workaround | BrokenPlusRequest | SingleUser | CoreBroken | Slow => {
            groups.push(&[
                "I'm on Windows 11.",
                "I'm using a MacBook with the latest macOS.",
                "I'm on a Windows laptop, fully updated.",
                "This is on my work laptop, nothing unusual installed.",
                "I'm on a Chromebook.",
            ]);
        }
        Feature | FeatureUrgent | NewIntegration | NewReport | NewPlatform => {
            groups.push(&[
                "Otherwise we really like {app}.",
                "Love the product otherwise!",
                "Overall we're happy with {app}.",
                "{^app} has been good for us otherwise.",
            ]);
            groups.push(&[
                "Other tools we looked at have this.",
                "A competitor we trialled has this.",
                "A few people on my team have asked for this too.",
                "I'm not the only one here who'd like this.",
            ]);
        }
        Improvement | ImprovementTeam | ChangeDesigned | IntendedThenChange => {
            groups.push(&[
                "Otherwise we really like {app}.",
                "Love the product otherwise!",
                "Overall we're happy with {app}.",
                "We've used {app} for a couple of years and are happy with it.",
            ]);
            groups.push(&[
                "A few people on my team have asked for this too.",
                "Several colleagues mentioned the same thing.",
                "I'm not the only one here who'd like this.",
            ]);
        }
        _ => {}
    }
    // Often none, sometimes several: `fit` decides how many of these it uses.
    let k = *rng.pick(&[0usize, 0, 1, 1, 2, 2, 3, 4]);
    rng.sample(&groups, k).into_iter().map(|g| fix_caps(&v.pick(rng, g))).collect()
}

/// A subject line in the user's words, by what the ticket is about.
pub(super) fn subject_line(case: Case, v: &Vars, rng: &mut SplitMix64) -> Option<String> {
    use Case::*;
    let t: &[&str] = match case {
        DataLoss | DataLossCalm => &["Missing {objects}", "{^objects} disappeared"],
        Security => &["Possible security issue", "Data visible to the wrong people"],
        Outage => &["Site down", "Cannot access anything"],
        Billing => &["Wrong charge", "Billing problem"],
        CoreBroken | CoreBrokenPlusRequest => &["Can't {core}", "Error when I press {button}"],
        Lockout | LockoutResetBroken => &["Locked out", "Can't log in"],
        TeamBlocked | Workaround | BrokenPlusRequest | SingleUser => {
            &["Problem with {feature}", "{^feature} not working"]
        }
        Slow => &["Very slow", "Performance"],
        Cosmetic | CosmeticPlusRequest => &["Display glitch", "Small layout issue"],
        Feature | FeatureUrgent | NewReport | NewPlatform | NewIntegration => &["Feature request", "Request"],
        Improvement | ImprovementTeam | ChangeDesigned | IntendedThenChange => &["Suggestion", "Small request"],
        Account | HowTo | HowToUrgent | IsIntended => &["Question", "Quick question"],
    };
    Some(fix_caps(&v.pick(rng, t)))
}
