//! The sentences that decide a ticket's triage, case by case: each states the facts its
//! rule needs and nothing an earlier rule would match.
use super::case::Case;
use super::products::Product;
use super::text::fix_caps;
use crate::pools::Vars;
use inferbench_stats::rng::SplitMix64;

/// The sentences that decide the triage. Every variant keeps exactly the facts its case
/// needs and none that an earlier rule would catch.
pub(super) fn body(case: Case, p: &Product, v: &mut Vars, rng: &mut SplitMix64) -> Vec<String> {
    use Case::*;
    let s = |v: &Vars, rng: &mut SplitMix64, t: &[&str]| v.pick(rng, t);
    match case {
        DataLoss => vec![
            s(v, rng, &[
                "{^when}, editing {a_object} and saving it wipes everything we had attached to it. I checked {n} {objects} we touched today and all the attachments are gone, not just hidden.",
                "Something deleted {n} of our {objects} overnight. They were there when I left yesterday and now they are gone, including from the export.",
                "After the sync with {integ} last night, about {n} of our {objects} have disappeared from {app}. They are not in the trash and not in the export either.",
                "I ran the CSV import this morning and it overwrote {n} existing {objects} with blank values. The old data is not in the history.",
                "{^when} our {objects} from last month are missing. We had {n} of them yesterday and today the list is empty for that month.",
            ]),
            s(v, rng, &[
                "That is months of work we cannot recreate.",
                "Nobody here deleted them.",
                "We need these back, please tell me you have a backup.",
                "We have no other copy of this data.",
                "Please restore them as soon as possible.",
            ]),
        ],
        DataLossCalm => vec![s(v, rng, &[
            "Not urgent for me personally, but I noticed that {n} of my {objects} from last week are gone from {app}. It only seems to affect my account, and they are not in the trash or in the export.",
            "Small thing maybe: {n} {objects} I created on Monday have vanished. I re-entered the two most important ones by hand so I'm not stuck, but the originals are definitely deleted; they are not in the bin.",
            "No rush, but {n} of my {objects} have disappeared since yesterday. The activity log shows nobody deleted them and they're not in the trash. The rest of my work is fine.",
        ])],
        Security => vec![
            s(v, rng, &[
                "If I change the number at the end of {a_object} URL, I can open {objects} that belong to a different company.",
                "A colleague we removed from {app} last week can still log in from the mobile app and see all our {objects}.",
                "Share links to our {objects} still open after we revoke them, even in a private browser window.",
                "When I log in, I sometimes land in another company's account and can see their {objects}.",
                "The export file I downloaded today contains {objects} from another customer, with their names and email addresses.",
                "The password reset email I just got shows my new password in plain text.",
            ]),
            s(v, rng, &[
                "I haven't told anyone else yet.",
                "I thought you should know straight away.",
                "This looks like a serious privacy problem.",
                "I tested it twice to make sure.",
            ]),
        ],
        Outage => vec![
            s(v, rng, &[
                "{app} is completely down for us. Every page shows a blank screen or a 502 error {when}, and nobody in the company can log in.",
                "We can't reach {app} at all {when}. Every user in our company gets a 503 error, on every device and network we've tried.",
                "Nothing works at all {when}: the website and the mobile app both time out for everyone in our company.",
                "Total outage here. {^app} does not load for any of our {people} users, on any network or device.",
            ]),
            s(v, rng, &[
                "Your status page says everything is operational.",
                "We can't do any work until it is back.",
                "Is there an incident?",
            ]),
        ],
        Billing => {
            let amount = format!(
                "{}{}",
                rng.pick(&["$", "€", "£"]),
                crate::pools::thousands(rng.range(49, 2400) as u64)
            );
            v.set("amount", amount);
            v.set("month", *rng.pick(&crate::dates::MONTHS));
            let active = rng.range(5, 40);
            v.set("active", active.to_string());
            v.set("seats", (active + rng.range(3, 15)).to_string());
            let mut t: Vec<&str> = vec![
                "We were charged twice for our {month} subscription: two identical payments of {amount} on the same day, but only one invoice.",
                "Our latest invoice bills us for {seats} seats, but we only have {active} active users and the billing page says deactivated users are free.",
                "We switched to the monthly plan last month and the plan page shows monthly, but you charged our card {amount} for a full year.",
            ];
            if p.payments {
                t.push("{^when} your payment step charges our customers twice for the same {object}. We have refunded several people by hand already.");
            }
            vec![
                s(v, rng, &t),
                s(v, rng, &[
                    "Please correct this and refund the difference.",
                    "Please look into it and fix the charges.",
                    "Can you fix the billing and confirm when it's done?",
                ]),
            ]
        }
        CoreBroken => vec![
            s(v, rng, &[
                "{^when} we can't {core} at all. Clicking \"{button}\" shows \"{err}\" and nothing is saved.",
                "I can't {core} anymore. Every time I press \"{button}\" I get \"{err}\".",
                "{^when} the \"{button}\" button fails with \"{err}\", so we can't {core}.",
                "{^core_ing} is broken {when}: the \"{button}\" button just spins and then says \"{err}\".",
            ]),
            s(v, rng, &[
                "I've tried two browsers, cleared the cache and logged out and in, and there's no other way to do it.",
                "There is no other way to do this in {app} and we've tried everything on our side.",
                "We've tried on different computers with the same result, and there's no workaround.",
            ]),
        ],
        Lockout => vec![
            s(v, rng, &[
                "I changed phones over the weekend and didn't move my authenticator app, so I can't get past the two-factor step and can't log in at all.",
                "I got locked out after typing my password wrong too many times, and I understand it's a security feature, but now I can't get into my account at all.",
                "I lost the phone I use for two-factor codes, so I can't log in at all anymore.",
                "My account is locked and I can't log in at all: I set it up with my old work email, which no longer exists, so the reset email never reaches me.",
            ]),
            s(v, rng, &[
                "{^app} itself is fine, my colleagues are using it normally.",
                "It's just my account; everything works for my colleagues.",
                "Nothing is wrong with {app}, it's my account only.",
                "Everyone else on the team can log in without problems.",
            ]),
            s(v, rng, &[
                "Please help me get back in; I can verify my identity however you need.",
                "Can you reset it for me?",
                "How can I get access back?",
            ]),
        ],
        LockoutResetBroken => vec![
            s(v, rng, &[
                "I'm completely locked out of {app}. I asked for a password reset, but the link in the email leads to a \"page not found\" error every time.",
                "I can't log in at all because the password reset page shows \"{err}\" when I submit the new password.",
            ]),
            s(v, rng, &[
                "I've requested three new links and they all fail the same way.",
                "I tried on my phone as well, same error.",
            ]),
        ],
        TeamBlocked => vec![
            s(v, rng, &[
                "{^when}, nobody on our {team} team ({people} people) can use {feature}. It fails with \"{err}\" for all of us.",
                "{^feature} has not worked {when} for our whole {team} team of {people} people; we get \"{err}\" every time.",
            ]),
            s(v, rng, &[
                "We're copying things over by hand for now, but it's holding up the whole team.",
                "There's a clumsy workaround, but the whole team is held up by it.",
                "The rest of {app} works, but the whole team is stuck waiting on this.",
                "We found a slow manual way around it, but it is blocking the entire team's work.",
            ]),
        ],
        Workaround => vec![
            s(v, rng, &[
                "{^feature} does nothing when I use {browser} {when}: no error, it just doesn't respond.",
                "In {browser}, {feature} has been failing with \"{err}\" {when}.",
                "{^feature} has been broken in {browser} {when}.",
                "{^when}, {feature} shows a blank panel in {browser}.",
            ]),
            s(v, rng, &[
                "It still works in {other}, so I'm using that for now, but please fix it.",
                "I can get around it by using {other} for the moment.",
                "Switching to {other} gets around it for now.",
                "Using {other} works as a workaround, but I'd like it fixed.",
            ]),
        ],
        Slow => vec![
            s(v, rng, &[
                "{^when}, {page} takes {n} seconds to load instead of one or two.",
                "{^page} has become really slow {when}: every click takes {n} seconds or so.",
                "{^when} {app} has been sluggish on {page}: around {n} seconds before anything appears.",
                "Everything around {page} is very slow {when}, about {n} seconds for each page.",
            ]),
            s(v, rng, &[
                "It does load in the end and nothing is broken, it's just painfully slow for all of us.",
                "All the functions work, but the delay is noticeable for everyone in the office.",
                "Everything still works, it is just much slower than it used to be, for everyone.",
            ]),
        ],
        SingleUser => vec![
            s(v, rng, &[
                "On my account only, {feature} fails with \"{err}\". My colleagues can use it fine and the rest of {app} works for me.",
                "{^feature} gives me \"{err}\" {when}. It's only me, others in my team don't have the problem, and everything else works.",
                "{^when} I get \"{err}\" whenever I open {feature}. My colleagues don't see this, and the rest of {app} is fine for me.",
            ]),
            s(v, rng, &[
                "I've logged out and back in, no change.",
                "Could you have a look at my account?",
                "Not sure what changed on my side.",
            ]),
        ],
        Cosmetic => vec![
            s(v, rng, &[
                "Small visual issue: {cosmetic}.",
                "Not a big deal, but {cosmetic}.",
                "Just noticed that {cosmetic}.",
                "Cosmetic issue: {cosmetic}.",
            ]),
            {
                let who = s(v, rng, &[
                    "It looks the same for everyone on our team, on every computer.",
                    "All my colleagues see it too.",
                    "Everyone here sees the same thing.",
                    "It's the same for the whole team, whichever browser we use.",
                    "My colleagues have the same on their screens.",
                    "We all see it, on laptops and on the big screen in the office.",
                    "It happens for every user in our account, not just me.",
                ]);
                let effect = s(v, rng, &[
                    "It doesn't stop anything from working, it just looks off.",
                    "Everything still works, it's only how it looks.",
                    "Purely cosmetic, nothing is affected.",
                    "Nothing is affected functionally.",
                    "It's only visual; all the functions work as normal.",
                    "It works fine otherwise, it just looks untidy.",
                    "No impact on our work, it just looks a bit unprofessional.",
                ]);
                if rng.chance(70) { format!("{who} {effect}") } else { format!("{effect} {who}") }
            },
        ],
        Feature => vec![
            s(v, rng, &[
                "Could you make it possible to {new_cap}? Right now {app} has no option for it and we keep track of it in a spreadsheet.",
                "Feature request: please make it possible to {new_cap}. As far as I can tell {app} can't do this today.",
                "We'd love to be able to {new_cap}. It's the one thing we miss in {app}.",
                "Would it be possible to add an option to {new_cap}? {^app} doesn't offer that at the moment.",
            ]),
        ],
        FeatureUrgent => vec![
            s(v, rng, &[
                "URGENT!! We need to be able to {new_cap} before our audit next week. {^app} doesn't support this yet. Please add it as soon as possible, this is top priority for us!",
                "Please prioritise this!!! Our director wants us to {new_cap} by the end of the month and {app} has no way to do it. We really need this feature ASAP.",
            ]),
        ],
        NewIntegration => vec![
            s(v, rng, &[
                "We'd like {app} to integrate with {integ}. At the moment we copy {objects} across by hand at the end of each week.",
                "Is an integration with {integ} on your roadmap? We would really like one so our {objects} sync automatically.",
                "We're moving to {integ} next quarter. Please add an integration with it.",
            ]),
        ],
        NewReport => vec![
            s(v, rng, &[
                "Could you add a new report type: {report}? Our managers ask for this every month and we build it by hand.",
                "We'd like {report} in the reports section. None of the current reports shows this.",
            ]),
        ],
        NewPlatform => vec![
            s(v, rng, &[
                "Please make {app} available as {platform}. Half our staff would use it that way.",
                "Any plans for {platform}? We would switch our whole team to it if there was one.",
            ]),
        ],
        Improvement => vec![
            s(v, rng, &[
                "{^app} works fine for us, but it would be nicer if you could {improve}.",
                "Suggestion: could you {improve}?",
                "Could you {improve}?",
                "Small improvement idea: {improve}.",
                "One wish for {app}: please {improve}.",
                "I'd like to suggest a tweak: {improve}.",
                "Would you consider a small change: {improve}?",
            ]),
            s(v, rng, &[
                "What we have works, this would just save time.",
                "The current behaviour works, it just doesn't suit the way we work.",
                "Nothing wrong with how it works today, it would just make daily use smoother.",
                "Not a problem as such, more of a nice-to-have.",
                "It works as it is; this is only about making it a bit easier.",
                "Everything works today, so no rush on this.",
                "The existing setup does the job, this would just make it nicer to use.",
            ]),
        ],
        ImprovementTeam => vec![
            s(v, rng, &[
                "Our whole {team} team ({people} people) uses {app} every day and it works well. It would save all of us time if you could {improve}.",
                "Small request from our {team} team: could you {improve}? Everything works, but all {people} of us would find it easier.",
                "Everyone in our {team} team uses {app} daily and it does the job. One thing would help all {people} of us: please {improve}.",
                "On behalf of the {team} team ({people} of us): could you {improve}? What we have works, this would just make it smoother for everyone.",
            ]),
        ],
        ChangeDesigned => vec![
            s(v, rng, &[
                "I know that in {app} {designed} by design, but could you change it so that we can {wish}?",
                "Right now {designed}. I understand that's how it's meant to work, but please change it to {wish}.",
            ]),
        ],
        IntendedThenChange => vec![
            s(v, rng, &[
                "Is it intended that {designed}? If it is, could you change it to {wish}? That would suit us much better.",
                "Quick question: {designed}, is that on purpose? If so, we'd like you to change it to {wish}.",
            ]),
        ],
        Account => vec![
            s(v, rng, &[
                "Could you please send us a VAT invoice for last month's payment? We need it for our bookkeeping.",
                "Please change the billing email on our account to accounts@{domain}.",
                "Could you update the company address on our invoices? We moved offices last month.",
                "We'd like to switch from monthly to annual billing from the next renewal. What do we need to do?",
                "Our previous admin has left the company. Can you transfer ownership of the account to me?",
                "Can you tell me how many seats we are paying for at the moment? I can't see it on the billing page.",
            ]),
        ],
        HowTo => vec![
            s(v, rng, &[
                "How do I {howto}? I looked through the settings and the help centre but couldn't find it.",
                "Can you tell me how to {howto}? Nothing is wrong, I just can't find where to do it.",
                "Quick question: what's the way to {howto} in {app}?",
                "Where do I go to {howto}? I'm sure it's possible, I just can't find it.",
                "I'm trying to {howto} but can't see the option anywhere. Could you point me to it?",
                "What are the steps to {howto}? Everything else is fine, I've just never done it before.",
                "Could someone walk me through how to {howto}?",
            ]),
        ],
        HowToUrgent => vec![
            s(v, rng, &[
                "I need to {howto} in the next hour before a client meeting and I can't find how!! Please tell me where it is ASAP.",
                "URGENT: how do I {howto}? My manager needs it done today.",
            ]),
        ],
        IsIntended => vec![
            s(v, rng, &[
                "Is it intended that {designed}?",
                "Quick check: {designed}. I assume that's on purpose, is that how it's supposed to work?",
                "I noticed that {designed}. Is that how it's meant to work?",
                "Can you confirm whether it's by design that {designed}?",
                "Just wondering: {designed}. Is that expected?",
                "Is it normal that {designed}?",
            ]),
            s(v, rng, &[
                "Nothing is broken, I just want to know whether that's expected before I explain it to my team.",
                "Not asking for a change, just want to understand it.",
                "I'm not asking you to change anything, I only want to know if that's expected.",
                "It doesn't cause us any trouble; I'd just like to understand it.",
                "No change needed, I'm only asking so I can answer a colleague's question.",
                "If it's deliberate that's fine, we just want to know.",
                "Just curious, no change needed.",
            ]),
        ],
        BrokenPlusRequest => vec![
            s(v, rng, &[
                "{^feature} doesn't work in {browser} {when}; it works in {other}, so I'm using that for now.",
                "{^feature} fails with \"{err}\" in {browser}, but {other} still works, which is what I'm doing at the moment.",
            ]),
            s(v, rng, &[
                "While you're at it, could you also make it possible to {new_cap}?",
                "Also, a request: it would be great to be able to {new_cap}.",
            ]),
        ],
        CoreBrokenPlusRequest => vec![
            s(v, rng, &[
                "We can't {core} {when}: \"{button}\" gives \"{err}\" every time, and there's no other way to do it.",
                "{^core_ing} has been failing completely {when} with \"{err}\" and we haven't found any workaround.",
            ]),
            s(v, rng, &[
                "Separately, we'd also like an option to {new_cap}.",
                "And while you're looking at it, please make it possible to {new_cap}.",
            ]),
        ],
        CosmeticPlusRequest => vec![
            s(v, rng, &[
                "Minor thing: {cosmetic}, for all of us on the team. Nothing else is affected.",
                "Everyone on our team sees that {cosmetic}. It's only visual.",
            ]),
            s(v, rng, &[
                "Also, could you make it possible to {new_cap}?",
                "And one request while I'm writing: it would help to be able to {new_cap}.",
            ]),
        ],
    }
    .into_iter()
    .map(|t| fix_caps(&t))
    .collect()
}
