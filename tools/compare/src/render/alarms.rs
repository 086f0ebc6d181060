//! A workflow's drift and substitution alarms, or, without any, each provider's figures in its
//! newest run.
use super::section::{table, Section, Summary};
use crate::compare::{p50, RunResult};
use crate::drift::{Metric, Test};
use inferbench_present::number::{self, DASH};
use std::collections::BTreeMap;

/// The section of `workflow`: what the tests are, then the alarms or the newest figures.
pub fn section(s: &Summary, runs: &[&RunResult], workflow: &str) -> Section {
    let tests: Vec<&Test> = s.drift.iter().filter(|t| t.workflow == workflow).collect();
    let alarms: Vec<&Test> = tests.iter().copied().filter(|t| t.alarm).collect();
    let mut section =
        Section::new(3, format!("Drift and substitution alarms: {} of {} tests", alarms.len(), tests.len()));
    section.text.push(format!(
        "Each provider's run is tested against its previous run of the workflow on four figures: task success and \
         agreement with the other providers' majority answer on the same items (Fisher's exact test, two-sided), and \
         the visible-answer tokens and usage ratio (usage.completion_tokens over the local token count) of its \
         complete responses (Wilcoxon–Mann–Whitney, two-sided: normal approximation with tie correction from {} \
         samples a side, else a seeded permutation test). The p-values of all tests a run adds are adjusted by \
         Holm's method; an adjusted p-value ≤ {} is an alarm, so a run of unchanged providers raises any alarm with \
         probability at most {} %. Every test is in `drift.parquet`.",
        crate::stats::NORMAL_MIN,
        s.drift_settings.alpha,
        s.drift_settings.alpha * 100.0
    ));
    if alarms.is_empty() {
        section.text.push(if tests.is_empty() {
            "No test: no provider has two runs here with the figures the tests need.".into()
        } else {
            "No alarm: no provider's figures changed more than its runs' own noise explains.".into()
        });
        section.table = Some(newest_figures(runs));
    } else {
        section.table = Some(alarm_table(s, &alarms));
    }
    section
}

/// A figure of a drift test as the tables show it.
fn value(metric: Metric, v: f64) -> String {
    match metric {
        Metric::TaskSuccess | Metric::MajorityAgreement | Metric::UsageRatio => number::plain(v, 3),
        Metric::VisibleAnswerTokens => number::plain(v, 0),
    }
}

/// One row per alarm: the runs compared, the figures before and after, the p-values.
fn alarm_table(s: &Summary, alarms: &[&Test]) -> inferbench_present::markdown::Table {
    // A run's name, with its marks when it is not a complete run of real endpoints (a partial or
    // simulated run's change may be the run's, not the provider's).
    let name = |i: usize| {
        let info = &s.runs[i].info;
        let marks = info.marks();
        if marks == "complete" {
            info.name.clone()
        } else {
            format!("{} ({marks})", info.name)
        }
    };
    let mut t = table(&["provider", "metric", "runs", "before", "after", "n", "p", "p (Holm)"]);
    for test in alarms {
        t.row(vec![
            test.provider.clone(),
            test.metric.value_label().to_string(),
            format!("{} → {}", name(test.before), name(test.after)),
            value(test.metric, test.before_value),
            value(test.metric, test.after_value),
            format!("{} / {}", test.before_count, test.after_count),
            format!("{:.2e}", test.p_value),
            format!("{:.2e}", test.p_adjusted),
        ]);
    }
    t
}

/// Each provider's figures in the newest of `runs` that has it.
fn newest_figures(runs: &[&RunResult]) -> inferbench_present::markdown::Table {
    let mut latest: BTreeMap<&str, &RunResult> = BTreeMap::new();
    for run in runs {
        for provider in run.drift.keys() {
            latest.insert(provider, run);
        }
    }
    let mut t = table(&["provider", "newest run", "task success", "agreement", "answer tokens p50", "usage ratio p50"]);
    let share = |x: Option<(u64, u64)>| {
        x.map_or(DASH.into(), |(k, n)| format!("{} ({k}/{n})", number::plain(k as f64 / n as f64, 3)))
    };
    for (provider, run) in latest {
        let f = &run.drift[provider];
        t.row(vec![
            provider.to_string(),
            run.info.name.clone(),
            share(f.success),
            share(f.agreement),
            number::or(p50(&f.answer_tokens), DASH, |v| number::plain(v, 0)),
            number::or(p50(&f.usage_ratios), DASH, |v| number::plain(v, 3)),
        ]);
    }
    t
}
