//! The summary of runs built in memory, read in both its forms.
use super::{html, markdown, Summary, RECENT};
use crate::bootstrap::Settings;
use crate::compare::tests::run;
use crate::compare::{HeadToHead, RunResult, Trend};
use crate::load::HEADLINE;
use std::path::PathBuf;

const DRIFT: crate::drift::Settings = crate::drift::Settings { alpha: 0.01, seed: 1 };

/// A summary's figures of `runs` as `ib-compare` computes them, with these tests' settings.
struct Parts {
    trends: Vec<Trend>,
    pairs: Vec<HeadToHead>,
    settings: Settings,
}

impl Parts {
    fn of(runs: &[RunResult]) -> Parts {
        Parts {
            trends: crate::compare::trends(runs),
            pairs: crate::compare::head_to_head(runs),
            settings: Settings { seed: 3, resamples: 100, confidence: 95 },
        }
    }

    /// The summary of `runs` with nothing skipped, no search and no drift test.
    fn summary<'a>(&'a self, runs: &'a [RunResult]) -> Summary<'a> {
        Summary {
            runs,
            skipped: &[],
            searches: &[],
            trends: &self.trends,
            pairs: &self.pairs,
            settings: &self.settings,
            drift: &[],
            drift_settings: &DRIFT,
        }
    }
}

#[test]
fn the_summary_shows_the_newest_run_dates_and_says_where_the_rest_are() {
    let runs: Vec<RunResult> = (0..RECENT as i64 + 5)
        .map(|d| run(&format!("r{d:03}"), d, &[("a", Some(1), 100.0), ("b", None, 200.0)], Some((-1.0, -2.0, 3.0))))
        .collect();
    let parts = Parts::of(&runs);
    let skipped = vec![(PathBuf::from("runs/.deps"), "not a run".to_string())];
    let s = Summary { skipped: &skipped, ..parts.summary(&runs) };
    let md = markdown(&s);
    assert!(md.starts_with("# Comparison of 35 runs\n"), "{md}");
    assert!(md.contains("The newest 30 run dates"));
    assert!(!md.contains("| r004 |") && md.contains("| r005 |") && md.contains("| r034 |"), "{md}");
    assert!(
        md.contains("1. a (E2E p99 900.0 ms; E2E p50 100.0 ms; 0.900)") && md.contains("| b |"),
        "ranked, then unranked"
    );
    assert!(md.contains("each run ranking them by E2E p99 (lowest first)"), "the rank key is named");
    assert!(md.contains("seed 3") && md.contains("`runs/.deps` (not a run)"));
    assert!(md.contains("| a | b | E2E | 10 | -1.0 | [-2.0, +3.0] | cannot tell |"), "{md}");
    let html = html(&s);
    assert_eq!(html.matches("<svg").count(), HEADLINE.len(), "a chart per headline metric");
    assert!(html.contains("<code>runs/.deps</code>") && !html.contains("src="));
    assert!(!md.contains("Under load") && !md.contains("Capacity searches"), "no load run, no search");
}

#[test]
fn the_summary_lists_drift_alarms_or_each_providers_newest_figures() {
    use crate::drift::figures::Figures;
    use crate::drift::{Metric, Test};
    let mut runs: Vec<RunResult> = (0..2).map(|d| run(&format!("r{d}"), d, &[("a", Some(1), 100.0)], None)).collect();
    for r in &mut runs {
        let figures = Figures {
            success: Some((90, 100)),
            agreement: Some((95, 100)),
            answer_tokens: vec![12.0, 14.0, 30.0],
            usage_ratios: vec![1.0, 1.0, 1.25],
        };
        r.drift.insert("a".into(), figures);
    }
    let parts = Parts::of(&runs);
    let mut test = Test {
        workflow: "w".into(),
        provider: "a".into(),
        metric: Metric::TaskSuccess,
        before: 0,
        after: 1,
        before_value: 0.9,
        after_value: 0.9,
        before_count: 100,
        after_count: 100,
        method: "fisher_exact",
        p_value: 1.0,
        p_adjusted: 1.0,
        family_size: 1,
        alarm: false,
    };
    let summary = |tests: &[Test]| markdown(&Summary { drift: tests, ..parts.summary(&runs) });
    let md = summary(std::slice::from_ref(&test));
    assert!(md.contains("### Drift and substitution alarms: 0 of 1 tests") && md.contains("No alarm"), "{md}");
    assert!(md.contains("| a | r1 | 0.900 (90/100) | 0.950 (95/100) | 14 | 1.000 |"), "{md}");
    assert!(md.contains("at most 1 %"), "the false-alarm rate is stated");
    (test.after_value, test.p_value, test.p_adjusted, test.alarm) = (0.8, 1e-4, 1e-4, true);
    let md = summary(&[test]);
    assert!(md.contains("Drift and substitution alarms: 1 of 1 tests"), "{md}");
    assert!(
        md.contains("| a | task success rate | r0 (complete, simulated) → r1 (complete, simulated) | 0.900 | 0.800 | 100 / 100 | 1.00e-4 | 1.00e-4 |"),
        "{md}"
    );
}

#[test]
fn a_pair_with_too_few_rounds_says_so_in_the_summary() {
    let mut runs = vec![run("r1", 0, &[("a", Some(1), 100.0), ("b", Some(2), 200.0)], Some((-50.0, -80.0, -20.0)))];
    for pair in &mut runs[0].pairs {
        pair.interval.as_mut().unwrap().n = 2;
    }
    let parts = Parts::of(&runs);
    let s = parts.summary(&runs);
    let md = markdown(&s);
    assert!(md.contains("| a | b | E2E | 2 | -50.0 | [-80.0, -20.0] | too few shared rounds: n = 2 |"), "{md}");
    assert!(md.contains("| a | b | 1 | 1 | 0 | 0/0/0 (1 too few) |"), "{md}");
    assert!(md.contains("No verdict is given under 6 paired rounds"), "{md}");
}

#[test]
fn a_single_date_trend_has_one_date_label_and_partial_runs_are_marked() {
    let mut runs = vec![
        run("r1", 0, &[("a", Some(1), 100.0), ("b", Some(2), 200.0)], None),
        run("r2", 0, &[("a", Some(1), 110.0), ("b", Some(2), 190.0)], None),
    ];
    runs[1].info.started_at_us += 3_600_000_000;
    runs[1].info.status = crate::discover::RunStatus::Partial;
    // No pair: the trend charts alone.
    let parts = Parts { pairs: Vec::new(), ..Parts::of(&runs) };
    let s = parts.summary(&runs);
    let page = html(&s);
    let first_chart = &page[page.find("<svg").unwrap()..page.find("</svg>").unwrap()];
    assert_eq!(first_chart.matches(">1970-01-01</text>").count(), 1, "one date, one label: {first_chart}");
    assert!(first_chart.contains("text-anchor=\"middle\" font-size=\"11\">1970-01-01<"), "{first_chart}");
    assert!(first_chart.contains("fill=\"#fff\"") && first_chart.contains(", partial run)</title>"));
    let md = markdown(&s);
    assert!(md.contains("| 1970-01-01 01:00:00 | r2 | partial, simulated | 1. a"), "{md}");
    assert!(md.contains("| a | 2 (1 partial, 2 simulated) |"), "{md}");
    drop((page, md, s));
    // Two dates: one label at each end.
    runs[1].info.started_at_us += 86_400_000_000;
    let parts = Parts { pairs: Vec::new(), ..Parts::of(&runs) };
    let page = html(&parts.summary(&runs));
    let first_chart = &page[page.find("<svg").unwrap()..page.find("</svg>").unwrap()];
    assert!(first_chart.contains("text-anchor=\"start\" font-size=\"11\">1970-01-01<"), "{first_chart}");
    assert!(first_chart.contains("text-anchor=\"end\" font-size=\"11\">1970-01-02<"), "{first_chart}");
}

/// Two closed-loop runs of workflow `w`, and two load runs of `load-sweep` a day apart:
/// in the second, `a` holds up to 16 req/s and `b`'s step at 16 is client-bound again.
pub fn mixed_runs() -> Vec<RunResult> {
    let mut runs = vec![run("c1", 0, &[("a", Some(1), 100.0)], None), run("c2", 1, &[("a", Some(1), 90.0)], None)];
    for (name, day) in [("l1", 2), ("l2", 3)] {
        let mut r = run(name, day, &[("a", Some(1), 100.0), ("b", Some(2), 120.0)], None);
        r.info.workflow = "load-sweep".into();
        let mut load = crate::under_load::tests::sweep();
        if name == "l2" {
            load.steps[4].holds = true;
            load.steps[4].goodput = Some(0.95);
            load.steps[4].goodput_per_second = 15.2;
            load.knees[0].step = 2;
        }
        r.load = Some(load);
        runs.push(r);
    }
    runs
}

#[test]
fn a_workflow_of_load_runs_shows_each_providers_knee_and_rate_held_across_runs() {
    let runs = mixed_runs();
    let parts = Parts::of(&runs);
    let mut found = crate::search::Search {
        path: "runs/workflow=load/run=search".into(),
        workflow: "load".into(),
        name: "search".into(),
        started_at_us: Some(0),
        doc: crate::search::tests::document(),
    };
    found.doc.stopped = "bracketed".into();
    let searches = [found];
    let s = Summary { searches: &searches, ..parts.summary(&runs) };
    let md = markdown(&s);
    let load_part = &md[md.find("## Workflow `load-sweep`").unwrap()..];
    let closed_part = &md[md.find("## Workflow `w`").unwrap()..];
    assert!(!closed_part.contains("Under load"), "closed-loop runs have no load section:\n{md}");
    assert!(load_part.contains("### Under load: each provider's capacity across 2 load runs"), "{md}");
    // By provider, then date: a's knee moved from 8 to 16 req/s and so did the rate it held.
    let a1 = "| a | 1970-01-03 00:00:00 | l1 | 0.90 | 8 req/s | 8.00 | 7.60 | 8.00 | — | 3 |";
    let a2 = "| a | 1970-01-04 00:00:00 | l2 | 0.90 | 16 req/s | 16.00 | 15.20 | 16.00 | +8.00 | 3 |";
    let b2 = "| b | 1970-01-04 00:00:00 | l2 | 0.90 | 8 req/s | 8.00 | 7.20 | 8.00 | 0.00 | 3 (1 client-bound) |";
    for row in [a1, a2, b2] {
        assert!(load_part.contains(row), "{row}\n{md}");
    }
    assert!(md.find(a2).unwrap() < md.find(b2).unwrap());
    // b's step at 16 req/s held with the best goodput, but is listed as the client's.
    assert!(load_part.contains("### Under load: client-bound steps"));
    assert!(load_part
        .contains("| 1970-01-04 00:00:00 | l2 | 16 req/s | b | 16.00 | 16.00 | 0.5 | send lag p99 3.2 ms > 1 ms |"));
    assert!(md.contains("## Capacity searches: 1"));
    assert!(md.contains("| runs/workflow=load/run=search | load | 1970-01-01 00:00:00 | 1 | a | 8.00 | — | at_least_max_rate | bracketed |"), "{md}");
    assert!(md.contains("| b | — | 8.00 | below_min_rate |"));
    let html = html(&s);
    assert_eq!(html.matches("<svg").count(), 2 * HEADLINE.len() + 1, "and the rate held by run date");
    assert!(html.contains("aria-label=\"the highest offered rate held (req/s) by run date\""));
    assert!(html.contains("<title>a: 16.00 (1970-01-04 00:00:00)</title>"));
}
