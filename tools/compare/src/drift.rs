//! Drift and substitution alarms: per provider, across its runs of a workflow in date order,
//! four figures that change when a provider changes what it serves (other weights, another
//! quantisation, a new tokenizer or template) even when its speed does not, each tested
//! between the provider's consecutive runs.
//!
//! | metric | per run | test |
//! |---|---|---|
//! | `task_success` | valid results / scored responses (as the pooled `task_success_rate`) | Fisher's exact, two-sided |
//! | `majority_agreement` | responses whose parsed answer equals the strict majority answer of the other providers on the same item / responses with a parsed answer on an item where the others have one | Fisher's exact, two-sided |
//! | `visible_answer_tokens` | o200k_base tokens of each complete response's visible answer | Wilcoxon–Mann–Whitney |
//! | `usage_ratio` | the provider's `usage.completion_tokens` / the local count (reasoning + answer tokens), per complete response that reports usage | Wilcoxon–Mann–Whitney |
//!
//! The family of tests is every test whose later run is the same run (all providers and
//! metrics the run adds): their p-values are adjusted by Holm's method, and a test whose
//! adjusted p-value is at most α (`--drift-alpha`, 1 % by default) is an alarm. So a new run
//! of providers that did not change raises any alarm at all with probability at most α,
//! however many providers and metrics it has (see `stats.rs` for the tests).
//!
//! Majority agreement needs deterministic decoding to mean anything: the benchmark's spec asks
//! for temperature 0, so providers serving the same weights agree on nearly every item and a
//! substituted model shows up as disagreement even where the gold is unknown.
pub mod figures;

use crate::compare::RunResult;
use crate::stats;
use figures::Figures;
use std::collections::BTreeMap;

/// The four metrics, in output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    TaskSuccess,
    MajorityAgreement,
    VisibleAnswerTokens,
    UsageRatio,
}

impl Metric {
    pub const ALL: [Metric; 4] =
        [Metric::TaskSuccess, Metric::MajorityAgreement, Metric::VisibleAnswerTokens, Metric::UsageRatio];

    pub fn key(self) -> &'static str {
        match self {
            Metric::TaskSuccess => "task_success",
            Metric::MajorityAgreement => "majority_agreement",
            Metric::VisibleAnswerTokens => "visible_answer_tokens",
            Metric::UsageRatio => "usage_ratio",
        }
    }

    /// What the value of a run is, in a reader's words.
    pub fn value_label(self) -> &'static str {
        match self {
            Metric::TaskSuccess => "task success rate",
            Metric::MajorityAgreement => "share agreeing with the other providers' majority",
            Metric::VisibleAnswerTokens => "answer tokens p50",
            Metric::UsageRatio => "usage / local tokens p50",
        }
    }
}

/// The settings of the alarms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The family-wise false-alarm rate per run.
    pub alpha: f64,
    /// Seeds the permutation tests of small samples.
    pub seed: u64,
}

/// One test between two consecutive runs of a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    pub workflow: String,
    pub provider: String,
    pub metric: Metric,
    /// Indices into the runs (date order).
    pub before: usize,
    pub after: usize,
    /// The rate, or the p50 of the samples.
    pub before_value: f64,
    pub after_value: f64,
    /// Responses (or samples) behind each value.
    pub before_count: u64,
    pub after_count: u64,
    /// `fisher_exact`, `mann_whitney_normal` or `mann_whitney_permutation`.
    pub method: &'static str,
    pub p_value: f64,
    /// Holm-adjusted over the run's family.
    pub p_adjusted: f64,
    /// The tests in the family (every test whose later run is `after`).
    pub family_size: usize,
    pub alarm: bool,
}

/// A stable stream key for one test's permutations, so that its p-value does not depend on
/// which other runs are compared.
fn test_seed(seed: u64, parts: &[&str]) -> u64 {
    let keys: Vec<u64> = parts.iter().map(|p| inferbench_stats::rng::key(p)).collect();
    inferbench_stats::rng::SplitMix64::derive(seed, &keys).next_u64()
}

/// One metric's test between two runs' figures, or `None` when either lacks it: (before
/// value, after value, before count, after count, method, p-value).
fn test_one(metric: Metric, a: &Figures, b: &Figures, seed: u64) -> Option<(f64, f64, u64, u64, &'static str, f64)> {
    let proportion = |x: Option<(u64, u64)>, y: Option<(u64, u64)>| {
        let ((k1, n1), (k2, n2)) = (x?, y?);
        let p = stats::fisher_exact(k1, n1 - k1, k2, n2 - k2);
        Some((k1 as f64 / n1 as f64, k2 as f64 / n2 as f64, n1, n2, "fisher_exact", p))
    };
    let samples = |x: &[f64], y: &[f64]| {
        if x.is_empty() || y.is_empty() {
            return None;
        }
        let (p, how) = stats::mann_whitney(x, y, seed);
        let method = if how == "normal" { "mann_whitney_normal" } else { "mann_whitney_permutation" };
        Some((crate::compare::p50(x)?, crate::compare::p50(y)?, x.len() as u64, y.len() as u64, method, p))
    };
    match metric {
        Metric::TaskSuccess => proportion(a.success, b.success),
        Metric::MajorityAgreement => proportion(a.agreement, b.agreement),
        Metric::VisibleAnswerTokens => samples(&a.answer_tokens, &b.answer_tokens),
        Metric::UsageRatio => samples(&a.usage_ratios, &b.usage_ratios),
    }
}

/// Every test between consecutive runs of each provider (per workflow, in the runs' date
/// order), Holm-adjusted per later run, in (later run, provider, metric) order.
pub fn tests(runs: &[RunResult], settings: &Settings) -> Vec<Test> {
    let mut out = Vec::new();
    // Per (workflow, provider): the index of its last run so far.
    let mut last: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (after, run) in runs.iter().enumerate() {
        let workflow = run.info.workflow.as_str();
        let start = out.len();
        for (provider, figures) in &run.drift {
            if let Some(&before) = last.get(&(workflow, provider.as_str())) {
                let previous = &runs[before].drift[provider];
                for metric in Metric::ALL {
                    let seed = test_seed(
                        settings.seed,
                        &[workflow, provider, metric.key(), &runs[before].info.name, &run.info.name],
                    );
                    let Some((bv, av, bn, an, method, p)) = test_one(metric, previous, figures, seed) else { continue };
                    out.push(Test {
                        workflow: workflow.to_string(),
                        provider: provider.clone(),
                        metric,
                        before,
                        after,
                        before_value: bv,
                        after_value: av,
                        before_count: bn,
                        after_count: an,
                        method,
                        p_value: p,
                        p_adjusted: p,
                        family_size: 0,
                        alarm: false,
                    });
                }
            }
            last.insert((workflow, provider.as_str()), after);
        }
        let family = &mut out[start..];
        let adjusted = stats::holm(&family.iter().map(|t| t.p_value).collect::<Vec<_>>());
        let size = family.len();
        for (t, p) in family.iter_mut().zip(adjusted) {
            t.p_adjusted = p;
            t.family_size = size;
            t.alarm = p <= settings.alpha;
        }
    }
    out
}

/// The method as one JSON object (Parquet metadata, summaries).
pub fn method_json(settings: &Settings) -> serde_json::Value {
    serde_json::json!({
        "pairs": "each provider's consecutive runs of a workflow, in start-time order",
        "task_success": "valid results / scored responses; Fisher's exact test, two-sided (R's fisher.test, relative tolerance 1e-7)",
        "majority_agreement": "responses whose parsed answer (evaluations.parquet parsed_output) equals the answer more than half of the other providers' parsed answers on the same item hold / responses with a parsed answer on an item where such a majority exists; Fisher's exact test, two-sided",
        "visible_answer_tokens": "visible-answer tokens of complete responses; value the nearest-rank p50; Wilcoxon-Mann-Whitney on mid-ranks, two-sided",
        "usage_ratio": "usage.completion_tokens / (reasoning_tokens + visible_answer_tokens) of complete responses reporting usage; value the nearest-rank p50; Wilcoxon-Mann-Whitney on mid-ranks, two-sided",
        "mann_whitney": format!(
            "normal approximation with tie and continuity corrections when both samples have at least {} values, else a permutation test of the same statistic with {} seeded SplitMix64 relabellings, p = (1 + k) / (1 + {})",
            stats::NORMAL_MIN, stats::PERMUTATIONS, stats::PERMUTATIONS
        ),
        "family": "every test whose later run is the same run (all its providers and metrics)",
        "correction": "Holm step-down",
        "alarm": "Holm-adjusted p-value <= alpha",
        "alpha": settings.alpha,
        "seed": settings.seed,
    })
}

#[cfg(test)]
mod tests {
    use super::figures::*;
    use super::*;
    use inferbench_stats::rng::SplitMix64;
    use polars::prelude::*;
    use std::path::Path;

    fn row(provider: &str, item: &str, valid: bool, answer: Option<&str>) -> Row {
        Row {
            provider: provider.into(),
            item: ("ticket-triage".into(), item.into()),
            scored: true,
            complete: answer.is_some(),
            visible_answer_tokens: answer.map_or(0, |a| a.len() as i64),
            reasoning_tokens: 0,
            usage_completion_tokens: answer.map(|a| a.len() as i64),
            valid: Some(valid),
            answer: answer.map(str::to_string),
        }
    }

    #[test]
    fn agreement_counts_the_items_where_the_others_hold_a_strict_majority() {
        let rows = [
            // i1: a, b, c say x; d says y: everyone's majority of the others exists.
            row("a", "i1", true, Some("x")),
            row("b", "i1", true, Some("x")),
            row("c", "i1", true, Some("x")),
            row("d", "i1", false, Some("y")),
            // i2: x, y, z, x: for a, the others (y, z, x) hold no majority; for b, (x, z, x) do.
            row("a", "i2", true, Some("x")),
            row("b", "i2", false, Some("y")),
            row("c", "i2", false, Some("z")),
            row("d", "i2", true, Some("x")),
            // i3: d failed (no parsed answer): it is in no one's vote and not compared.
            row("a", "i3", true, Some("x")),
            row("b", "i3", true, Some("x")),
            row("c", "i3", true, Some("x")),
            row("d", "i3", false, None),
        ];
        let f = figures(&rows, true);
        assert_eq!(f["a"].agreement, Some((2, 2)), "i1 and i3 agree; i2 has no majority of the others");
        assert_eq!(f["b"].agreement, Some((2, 3)));
        assert_eq!(f["d"].agreement, Some((0, 1)), "i2: the others y, z, x: no majority; i3 not answered");
        assert_eq!(f["d"].success, Some((1, 3)));
        assert_eq!(f["d"].answer_tokens, [1.0, 1.0]);
        assert_eq!(f["a"].usage_ratios, [1.0, 1.0, 1.0]);
        // Without evaluations: lengths and usage only.
        let f = figures(&rows, false);
        assert_eq!((f["a"].success, f["a"].agreement), (None, None));
        assert_eq!(f["a"].answer_tokens.len(), 3);
    }

    fn write(path: &Path, df: &mut DataFrame) {
        ParquetWriter::new(std::fs::File::create(path).unwrap()).finish(df).unwrap();
    }

    fn structure(name: &str, fields: &[Series]) -> Series {
        StructChunked::from_series(name.into(), fields[0].len(), fields.iter()).unwrap().into_series()
    }

    #[test]
    fn parsed_answers_are_read_from_the_nested_struct_and_old_tables_give_what_they_can() {
        let dir = tempfile::tempdir().unwrap();
        let mut responses = df!(
            "request_id" => ["q1", "q2", "q3", "q4"],
            "provider" => ["a", "b", "c", "a"],
            "task_family" => ["ticket-triage", "ticket-triage", "ticket-triage", "meeting-notes-lookup"],
            "item_id" => ["t1", "t1", "t1", "m1"],
            "complete" => [true, true, true, false],
            "visible_answer_tokens" => [9i64, 9, 11, 0],
            "reasoning_tokens" => [1i64, 0, 0, 0],
            "usage_completion_tokens" => [Some(10i64), Some(9), None, None],
        )
        .unwrap();
        write(&dir.path().join("responses.parquet"), &mut responses);
        // a and b answer bug/high, c bug/low; a's meeting answer did not parse.
        let ticket = structure(
            "ticket_triage",
            &[
                Series::new("category".into(), [Some("bug"), Some("bug"), Some("bug"), None]),
                Series::new("priority".into(), [Some("high"), Some("high"), Some("low"), None]),
            ],
        );
        let meeting =
            structure("meeting_notes_lookup", &[Series::new("answer".into(), [None::<&str>, None, None, None])]);
        let parsed = structure("parsed_output", &[meeting, ticket]);
        let mut evaluations = DataFrame::new_infer_height(vec![
            Column::new("request_id".into(), ["q1", "q2", "q3", "q4"]),
            Column::new(
                "classification".into(),
                ["valid_result", "valid_result", "incorrect_result", "invalid_result"],
            ),
            parsed.into(),
        ])
        .unwrap();
        write(&dir.path().join("evaluations.parquet"), &mut evaluations);
        let (rows, evaluated) = read_rows(dir.path()).unwrap();
        assert!(evaluated);
        assert_eq!(rows[0].answer, rows[1].answer);
        assert_ne!(rows[0].answer, rows[2].answer);
        assert_eq!(rows[3].answer, None, "every leaf null: no parsed answer");
        let f = figures(&rows, evaluated);
        assert_eq!((f["a"].success, f["a"].agreement), (Some((1, 2)), None), "the others split: no majority");
        assert_eq!(f["c"].agreement, Some((0, 1)));
        assert_eq!(f["a"].usage_ratios, [1.0], "10 reported over 9 + 1 counted");
        assert_eq!(f["b"].usage_ratios, [1.0]);
        assert!(f["c"].usage_ratios.is_empty(), "no usage reported");
        assert_eq!(f["c"].answer_tokens, [11.0]);

        // An old table: no usage column, no request ids; evaluations cannot be matched.
        let mut old = df!(
            "provider" => ["a", "b"],
            "task_family" => ["ticket-triage", "ticket-triage"],
            "item_id" => ["t1", "t1"],
            "complete" => [true, true],
            "visible_answer_tokens" => [9i64, 9],
            "reasoning_tokens" => [0i64, 0],
        )
        .unwrap();
        write(&dir.path().join("responses.parquet"), &mut old);
        let (rows, evaluated) = read_rows(dir.path()).unwrap();
        assert!(!evaluated);
        let f = figures(&rows, evaluated);
        assert_eq!((f["a"].success, f["a"].agreement, f["a"].usage_ratios.len()), (None, None, 0));
        assert_eq!(f["a"].answer_tokens, [9.0]);
        // Only the provider is required (ib-compare's benchmark runs have no item column).
        let mut bare = df!("provider" => ["a"], "request_id" => ["q1"]).unwrap();
        write(&dir.path().join("responses.parquet"), &mut bare);
        let (rows, evaluated) = read_rows(dir.path()).unwrap();
        assert!(evaluated, "q1 is in evaluations.parquet");
        let f = figures(&rows, evaluated);
        assert_eq!((f["a"].success, f["a"].agreement, f["a"].answer_tokens.len()), (Some((1, 1)), None, 0));
        let mut bad = df!("task_family" => ["ticket-triage"]).unwrap();
        write(&dir.path().join("responses.parquet"), &mut bad);
        let err = read_rows(dir.path()).unwrap_err().to_string();
        assert!(err.ends_with("responses.parquet: no column `provider`"), "{err}");
    }

    /// A run of `providers`, each with `n` scored answers whose success and agreement are drawn
    /// at the rates given, and lengths and usage ratios from fixed distributions.
    fn synthetic_run(
        rng: &mut SplitMix64,
        name: &str,
        day: i64,
        providers: &[(&str, f64, f64)],
        n: usize,
    ) -> RunResult {
        let mut run = crate::compare::tests::run(name, day, &[], None);
        for (p, success, agreement) in providers {
            let mut f = Figures { success: Some((0, n as u64)), agreement: Some((0, n as u64)), ..Default::default() };
            for _ in 0..n {
                f.success.as_mut().unwrap().0 += u64::from(rng.next_f64() < *success);
                f.agreement.as_mut().unwrap().0 += u64::from(rng.next_f64() < *agreement);
                // Lengths: 20 to 60 tokens, many ties; usage: mostly exact, sometimes off.
                f.answer_tokens.push((20 + rng.below(41)) as f64);
                f.usage_ratios.push(if rng.next_f64() < 0.9 { 1.0 } else { 1.0 + rng.next_f64() * 0.1 });
            }
            run.drift.insert(p.to_string(), f);
        }
        run
    }

    const SAME: [(&str, f64, f64); 4] = [("a", 0.9, 0.95), ("b", 0.8, 0.9), ("c", 0.95, 0.97), ("d", 0.7, 0.85)];

    #[test]
    fn runs_of_unchanged_providers_raise_alarms_at_most_at_the_false_alarm_rate() {
        // 400 sequences of 3 runs of 4 unchanged providers: 800 new runs, 16 tests each.
        let settings = Settings { alpha: 0.01, seed: 1 };
        let mut rng = SplitMix64::new(20261205);
        let (mut families, mut alarmed) = (0, 0);
        for s in 0..400 {
            let runs: Vec<RunResult> =
                (0..3).map(|d| synthetic_run(&mut rng, &format!("s{s}r{d}"), d, &SAME, 150)).collect();
            let tests = tests(&runs, &Settings { seed: s, ..settings });
            assert_eq!(tests.len(), 2 * 4 * 4);
            for after in [1, 2] {
                families += 1;
                alarmed += usize::from(tests.iter().any(|t| t.after == after && t.alarm));
            }
        }
        eprintln!("unchanged runs with an alarm: {alarmed} of {families}");
        // Holm bounds the per-run rate by 1 %: 8 of 800 expected at most; 3 standard errors
        // above that is 18.
        assert!(alarmed <= 18, "{alarmed} of {families} unchanged runs raised an alarm");
    }

    #[test]
    fn a_ten_point_drop_of_one_provider_raises_an_alarm_for_it_only() {
        let settings = Settings { alpha: 0.01, seed: 1 };
        let mut rng = SplitMix64::new(7);
        let mut runs: Vec<RunResult> =
            (0..2).map(|d| synthetic_run(&mut rng, &format!("r{d}"), d, &SAME, 300)).collect();
        let mut dropped = SAME;
        dropped[2].1 -= 0.10;
        dropped[2].2 -= 0.10;
        runs.push(synthetic_run(&mut rng, "r2", 2, &dropped, 300));
        let tests = tests(&runs, &settings);
        let alarms: Vec<(&str, &str, usize)> =
            tests.iter().filter(|t| t.alarm).map(|t| (t.provider.as_str(), t.metric.key(), t.after)).collect();
        assert_eq!(alarms, [("c", "task_success", 2), ("c", "majority_agreement", 2)], "{tests:#?}");
        let t = tests.iter().find(|t| t.alarm).unwrap();
        assert_eq!((t.before, t.after, t.family_size, t.method), (1, 2, 16, "fisher_exact"));
        assert!(t.before_value - t.after_value > 0.05 && t.p_value < t.p_adjusted && t.p_adjusted <= 0.01);
    }

    /// The share of `repeats` pairs of runs (n responses a provider) in which provider c's
    /// success and agreement falling from `from` to `to` raises an alarm for it.
    fn power(from: f64, to: f64, n: usize, repeats: usize) -> f64 {
        let mut rng = SplitMix64::new(11);
        let (mut before, mut after) = (SAME, SAME);
        before[2].1 = from;
        before[2].2 = from;
        after[2].1 = to;
        after[2].2 = to;
        let mut found = 0;
        for r in 0..repeats {
            let runs = [synthetic_run(&mut rng, "r0", 0, &before, n), synthetic_run(&mut rng, "r1", 1, &after, n)];
            let tests = tests(&runs, &Settings { alpha: 0.01, seed: r as u64 });
            found += usize::from(tests.iter().any(|t| t.alarm && t.provider == "c"));
        }
        found as f64 / repeats as f64
    }

    #[test]
    fn a_ten_point_drop_is_found_most_of_the_time_from_300_responses() {
        let (p300, p180, p100) = (power(0.97, 0.87, 300, 200), power(1.0, 0.9, 180, 200), power(0.97, 0.87, 100, 200));
        eprintln!("ten-point drop found: 97 % → 87 % over 300: {p300}; 100 % → 90 % over 180: {p180}; 97 % → 87 % over 100: {p100}");
        assert!(p300 >= 0.9 && p180 >= 0.9, "{p300} {p180}");
        assert!(p100 < 0.6, "{p100}");
    }

    #[test]
    fn consecutive_runs_are_per_provider_and_per_workflow() {
        let settings = Settings { alpha: 0.01, seed: 1 };
        let mut rng = SplitMix64::new(3);
        let mut runs = vec![
            synthetic_run(&mut rng, "r0", 0, &SAME[..2], 50),
            synthetic_run(&mut rng, "r1", 1, &SAME[1..3], 50),
            synthetic_run(&mut rng, "r2", 2, &SAME[..3], 50),
        ];
        runs[1].info.workflow = "other".into();
        let tests = tests(&runs, &settings);
        let pairs: Vec<(&str, usize, usize)> = tests
            .iter()
            .filter(|t| t.metric == Metric::TaskSuccess)
            .map(|t| (t.provider.as_str(), t.before, t.after))
            .collect();
        // r1 is another workflow: b's and c's runs there are not compared with w's.
        assert_eq!(pairs, [("a", 0, 2), ("b", 0, 2)]);
        assert!(tests.iter().all(|t| t.family_size == 8));
    }
}
