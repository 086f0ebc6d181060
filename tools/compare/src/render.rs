//! `summary.md` and `summary.html`: the comparison for a reader. Both say the same things in
//! the same order; the page adds a line chart per headline metric (and, for a workflow with
//! load runs, of each provider's highest rate held) and is self-contained (inline style and
//! SVG, no script, nothing fetched).
use crate::bootstrap::Settings;
use crate::compare::{p50, HeadToHead, RunResult, Trend, PAIRED};
use crate::discover::format_utc;
use crate::load::HEADLINE;
use crate::search::{self, Search};
use crate::under_load::{self, LoadRun};
use inferbench_contract::documents::StepMetrics;
use inferbench_contract::metrics::{Column, Unit, E2E_LATENCY, RANKING, TASK_SUCCESS};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::PathBuf;

/// How many run dates the leaderboard-over-time tables show (the newest); the Parquet has all.
pub const RECENT: usize = 30;

pub struct Summary<'a> {
    pub runs: &'a [RunResult],
    pub skipped: &'a [(PathBuf, String)],
    pub searches: &'a [Search],
    pub trends: &'a [Trend],
    pub pairs: &'a [HeadToHead],
    pub settings: &'a Settings,
    pub drift: &'a [crate::drift::Test],
    pub drift_settings: &'a crate::drift::Settings,
}

/// A cell of a table: a value formatted for its unit, or an em dash.
fn number(value: Option<f64>, unit: Unit) -> String {
    match value {
        None => "—".to_string(),
        Some(v) if unit == Unit::Fraction => format!("{v:.3}"),
        Some(v) => format!("{v:.1}"),
    }
}

fn signed(value: Option<f64>, unit: Unit) -> String {
    match value {
        Some(v) if v > 0.0 => format!("+{}", number(Some(v), unit)),
        other => number(other, unit),
    }
}

/// A rate, requests per second, as the tables show it.
fn rate(value: Option<f64>) -> String {
    value.map_or("—".into(), |v| format!("{v:.2}"))
}

/// One table, as rows of cells: the first row is the heading.
type Table = Vec<Vec<String>>;

/// A line chart by run date: one line per provider of (start µs, value) points.
struct Chart {
    /// What is drawn, in a sentence's words (the chart's label).
    label: String,
    /// Decimals of the values written on it.
    decimals: usize,
    series: Vec<(String, Vec<(i64, f64)>)>,
    /// Per series, per point: whether it is a partial run's (drawn hollow).
    partial: Vec<Vec<bool>>,
}

impl Chart {
    fn metric(metric: Column, trends: &[&Trend]) -> Chart {
        let decimals = if metric.metric.unit == Unit::Fraction { 3 } else { 1 };
        Chart {
            label: metric.in_sentence(),
            decimals,
            series: trends.iter().map(|t| (t.provider.clone(), t.points.clone())).collect(),
            partial: trends.iter().map(|t| t.partial.clone()).collect(),
        }
    }

    fn value(&self, v: f64) -> String {
        format!("{v:.*}", self.decimals)
    }
}

struct Section {
    heading: String,
    level: usize,
    text: Vec<String>,
    table: Option<Table>,
    chart: Option<Chart>,
}

impl Section {
    fn new(level: usize, heading: impl Into<String>) -> Section {
        Section { heading: heading.into(), level, text: Vec::new(), table: None, chart: None }
    }
}

fn workflows(runs: &[RunResult]) -> BTreeSet<&str> {
    runs.iter().map(|r| r.info.workflow.as_str()).collect()
}

fn sections(s: &Summary) -> Vec<Section> {
    let mut out = Vec::new();
    let (first, last) = (s.runs.first().unwrap(), s.runs.last().unwrap());
    let imported = s.runs.iter().filter(|r| r.info.imported).count();
    let legacy = s.runs.iter().filter(|r| r.pooled_source == crate::load::LEGACY_POOLED).count();
    let mut intro = Section::new(1, format!("Comparison of {} runs", s.runs.len()));
    intro.text.push(format!(
        "Runs started from {} to {} UTC; workflows: {}. {imported} imported from the reference runner; {legacy} scored \
         before pooled.parquet existed (their pooled rows read from metrics.parquet). {} responses in all.",
        format_utc(first.info.started_at_us),
        format_utc(last.info.started_at_us),
        workflows(s.runs).into_iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", "),
        s.runs.iter().map(|r| r.response_rows).sum::<usize>(),
    ));
    intro.text.push(
        "Every table in full: `runs.parquet`, `leaderboard.parquet` (one row per run and provider: the trend data), \
         `trends.parquet`, `head_to_head.parquet`, `paired_bootstrap.parquet`, `load_steps.parquet` (one row per load \
         run, step and provider), `drift.parquet` (every drift test)."
            .to_string(),
    );
    if !s.skipped.is_empty() {
        intro.text.push(format!(
            "Skipped (matched, but not a scored run): {}.",
            s.skipped.iter().map(|(p, why)| format!("`{}` ({why})", p.display())).collect::<Vec<_>>().join("; ")
        ));
    }
    out.push(intro);

    let (low, high) = s.settings.bound_ranks();
    let mut method = Section::new(2, "How the paired intervals are made");
    method.text.push(format!(
        "For every pair of providers A < B (by name) in a run, the differences A − B of E2E latency and of TTFA over the \
         rounds where both have a sample; the statistic is their nearest-rank p50 (rank ⌈n/2⌉, as comparisons.json's \
         `difference_p50_ms`); negative favours A. The interval is the {}% percentile interval of {} bootstrap resamples \
         (the sorted resampled medians at ranks {low} and {high}). RNG: {}; seed {}. A verdict says A or B is faster only \
         when the whole interval is on one side of zero; otherwise the difference is not told apart from noise. No verdict \
         is given under {min} paired rounds: a bootstrap interval never reaches past the smallest and largest difference, \
         and [min, max] of n differences covers the median with probability 1 − 2·0.5ⁿ, under {}% for n < {min}; such \
         pairs say \"too few shared rounds\" and are left out of the counts across runs.",
        s.settings.confidence,
        s.settings.resamples,
        Settings::RNG,
        s.settings.seed,
        s.settings.confidence,
        min = crate::bootstrap::min_pairs(s.settings.confidence),
    ));
    out.push(method);

    for workflow in workflows(s.runs) {
        let runs: Vec<&RunResult> = s.runs.iter().filter(|r| r.info.workflow == workflow).collect();
        out.push(Section::new(2, format!("Workflow `{workflow}`: {} runs", runs.len())));
        load_sections(&runs, &mut out);

        let mut board = Section::new(3, "Leaderboard over time");
        let shown = &runs[runs.len().saturating_sub(RECENT)..];
        if shown.len() < runs.len() {
            board.text.push(format!("The newest {RECENT} run dates; every run is in `leaderboard.parquet`."));
        }
        let (key, latency, success) = (RANKING, E2E_LATENCY.at(50), TASK_SUCCESS.value());
        board.text.push(format!(
            "Ranked providers in rank order, each run ranking them by {} (lowest first): each with that rank key, then \
             {} (ms) and task success; then the unranked. Status: `partial` when the run's manifest says it is \
             incomplete, `unknown` without a manifest or its status; `simulated` when its providers were ib-sim's.",
            key.in_sentence(),
            latency.in_sentence()
        ));
        let mut table =
            vec![vec!["started (UTC)".into(), "run".into(), "status".into(), "ranking".into(), "unranked".into()]];
        for run in shown {
            let mut ranked: Vec<_> = run.pooled.iter().filter(|p| p.rank.is_some()).collect();
            ranked.sort_by_key(|p| (p.rank, p.provider.clone()));
            let ranking = ranked
                .iter()
                .map(|p| {
                    format!(
                        "{}. {} ({} {} ms; {} {} ms; {})",
                        p.rank.unwrap(),
                        p.provider,
                        key.short_heading(),
                        number(p.value(key), key.metric.unit),
                        latency.short_heading(),
                        number(p.value(latency), latency.metric.unit),
                        number(p.value(success), success.metric.unit)
                    )
                })
                .collect::<Vec<_>>()
                .join(" · ");
            let unranked =
                run.pooled.iter().filter(|p| p.rank.is_none()).map(|p| p.provider.as_str()).collect::<Vec<_>>();
            table.push(vec![
                format_utc(run.info.started_at_us),
                run.info.name.clone(),
                run.info.marks(),
                if ranking.is_empty() { "—".into() } else { ranking },
                if unranked.is_empty() { "—".into() } else { unranked.join(", ") },
            ]);
        }
        board.table = Some(table);
        out.push(board);

        for metric in HEADLINE {
            let trends: Vec<&Trend> =
                s.trends.iter().filter(|t| t.workflow == workflow && t.metric == metric).collect();
            let mut section = Section::new(
                3,
                format!(
                    "Trend: {} ({}, {} is better)",
                    metric.in_sentence(),
                    metric.metric.unit.as_str(),
                    if metric.metric.lower_is_better() { "lower" } else { "higher" }
                ),
            );
            section.text.push(
                "Runs: the run dates with the figure; partial runs are kept in the trend, counted in brackets and \
                 drawn hollow on the page; runs against simulated providers are counted in brackets too."
                    .into(),
            );
            let mut table = vec![["provider", "runs", "first", "last", "change", "min", "p50", "max", "slope per day"]
                .map(String::from)
                .to_vec()];
            for t in &trends {
                let values: Vec<f64> = t.points.iter().map(|p| p.1).collect();
                let u = metric.metric.unit;
                let mut count = t.points.len().to_string();
                let marked: Vec<String> = [(t.partial_runs(), "partial"), (t.simulated_runs(), "simulated")]
                    .iter()
                    .filter(|(n, _)| *n > 0)
                    .map(|(n, what)| format!("{n} {what}"))
                    .collect();
                if !marked.is_empty() {
                    let _ = write!(count, " ({})", marked.join(", "));
                }
                table.push(vec![
                    t.provider.clone(),
                    count,
                    number(t.points.first().map(|p| p.1), u),
                    number(t.points.last().map(|p| p.1), u),
                    signed(t.points.last().zip(t.points.first()).map(|(l, f)| l.1 - f.1), u),
                    number(values.iter().copied().min_by(f64::total_cmp), u),
                    number(p50(&values), u),
                    number(values.iter().copied().max_by(f64::total_cmp), u),
                    match t.slope_per_day() {
                        Some(v) if u == Unit::Fraction => format!("{v:+.4}"),
                        Some(v) => format!("{v:+.2}"),
                        None => "—".into(),
                    },
                ]);
            }
            section.table = Some(table);
            section.chart = Some(Chart::metric(metric, &trends));
            out.push(section);
        }

        let mut h2h = Section::new(3, "Provider against provider across runs");
        h2h.text.push(
            "Runs with both; how often each ranked above the other (a ranked provider is above an unranked one); and \
             in how many runs the paired interval says A is faster, B is faster, or cannot tell (E2E, then TTFA), with the \
             p50 over runs of the per-run median difference A − B; runs with too few shared rounds for a verdict are \
             counted in brackets (\"2 too few\") and left out of the rest."
                .into(),
        );
        let mut heading = ["A", "B", "runs", "A above", "B above"].map(String::from).to_vec();
        for (metric, _) in PAIRED {
            heading.push(format!("{} A/B/?", metric.short_label));
            heading.push(format!("{} Δ p50 ({})", metric.short_label, metric.unit.as_str()));
        }
        let mut table = vec![heading];
        for h in s.pairs.iter().filter(|h| h.workflow == workflow) {
            let mut row = vec![
                h.provider_a.clone(),
                h.provider_b.clone(),
                h.runs_together.to_string(),
                h.a_ranked_above.to_string(),
                h.b_ranked_above.to_string(),
            ];
            for (m, (metric, _)) in PAIRED.iter().enumerate() {
                let mut tally = format!("{}/{}/{}", h.a_faster[m], h.b_faster[m], h.inconclusive[m]);
                if h.too_few[m] > 0 {
                    let _ = write!(tally, " ({} too few)", h.too_few[m]);
                }
                row.push(tally);
                row.push(signed(p50(&h.estimates[m]), metric.unit));
            }
            table.push(row);
        }
        h2h.table = Some(table);
        out.push(h2h);

        let latest = runs.last().unwrap();
        let mut intervals = Section::new(
            3,
            format!(
                "Paired intervals of the newest run, `{}` ({})",
                latest.info.name,
                format_utc(latest.info.started_at_us)
            ),
        );
        intervals.text.push("Every run's are in `paired_bootstrap.parquet`.".into());
        let mut table =
            vec![["A", "B", "metric", "pairs", "Δ p50 (ms)", "interval (ms)", "verdict"].map(String::from).to_vec()];
        for p in &latest.pairs {
            table.push(vec![
                p.provider_a.clone(),
                p.provider_b.clone(),
                p.metric.short_label.to_string(),
                p.interval.map_or(0, |i| i.n).to_string(),
                signed(p.interval.map(|i| i.estimate), p.metric.unit),
                p.interval.map_or("—".into(), |i| {
                    format!("[{}, {}]", signed(Some(i.low), p.metric.unit), signed(Some(i.high), p.metric.unit))
                }),
                match p.verdict() {
                    "a_faster" => format!("{} faster", p.provider_a),
                    "b_faster" => format!("{} faster", p.provider_b),
                    "inconclusive" => "cannot tell".into(),
                    crate::compare::TOO_FEW => {
                        format!("too few shared rounds: n = {}", p.interval.map_or(0, |i| i.n))
                    }
                    _ => "no paired rounds".into(),
                },
            ]);
        }
        intervals.table = Some(table);
        out.push(intervals);
        out.push(drift_section(s, &runs, workflow));
    }
    if !s.searches.is_empty() {
        out.push(searches(s.searches));
    }
    out
}

/// A workflow's drift and substitution alarms, and each provider's figures in its newest run.
fn drift_section(s: &Summary, runs: &[&RunResult], workflow: &str) -> Section {
    use crate::drift::Metric;
    let tests: Vec<&crate::drift::Test> = s.drift.iter().filter(|t| t.workflow == workflow).collect();
    let alarms: Vec<&&crate::drift::Test> = tests.iter().filter(|t| t.alarm).collect();
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
    let value = |m: Metric, v: f64| match m {
        Metric::TaskSuccess | Metric::MajorityAgreement | Metric::UsageRatio => format!("{v:.3}"),
        Metric::VisibleAnswerTokens => format!("{v:.0}"),
    };
    if alarms.is_empty() {
        section.text.push(if tests.is_empty() {
            "No test: no provider has two runs here with the figures the tests need.".into()
        } else {
            "No alarm: no provider's figures changed more than its runs' own noise explains.".into()
        });
    } else {
        let mut table =
            vec![["provider", "metric", "runs", "before", "after", "n", "p", "p (Holm)"].map(String::from).to_vec()];
        for t in &alarms {
            table.push(vec![
                t.provider.clone(),
                t.metric.value_label().to_string(),
                format!("{} → {}", name(t.before), name(t.after)),
                value(t.metric, t.before_value),
                value(t.metric, t.after_value),
                format!("{} / {}", t.before_count, t.after_count),
                format!("{:.2e}", t.p_value),
                format!("{:.2e}", t.p_adjusted),
            ]);
        }
        section.table = Some(table);
        return section;
    }
    // Without alarms: each provider's figures in the newest run that has it.
    let mut latest: BTreeMap<&str, &RunResult> = BTreeMap::new();
    for run in runs {
        for provider in run.drift.keys() {
            latest.insert(provider, run);
        }
    }
    let mut table =
        vec![["provider", "newest run", "task success", "agreement", "answer tokens p50", "usage ratio p50"]
            .map(String::from)
            .to_vec()];
    for (provider, run) in latest {
        let f = &run.drift[provider];
        let share =
            |x: Option<(u64, u64)>| x.map_or("—".into(), |(k, n)| format!("{:.3} ({k}/{n})", k as f64 / n as f64));
        table.push(vec![
            provider.to_string(),
            run.info.name.clone(),
            share(f.success),
            share(f.agreement),
            p50(&f.answer_tokens).map_or("—".into(), |v| format!("{v:.0}")),
            p50(&f.usage_ratios).map_or("—".into(), |v| format!("{v:.3}")),
        ]);
    }
    section.table = Some(table);
    section
}

/// How many client-bound steps the summary lists per workflow; `load_steps.parquet` has all.
pub const CLIENT_BOUND_ROWS: usize = 60;

/// A workflow's load runs: each provider's knee and highest rate held per run, by provider
/// then date, and the client-bound steps that neither may come from.
fn load_sections(runs: &[&RunResult], out: &mut Vec<Section>) {
    let load_runs: Vec<(&RunResult, &LoadRun)> = runs.iter().filter_map(|r| r.load.as_ref().map(|l| (*r, l))).collect();
    if load_runs.is_empty() {
        return;
    }
    let first_shown = load_runs.len().saturating_sub(RECENT);
    let mut section =
        Section::new(3, format!("Under load: each provider's capacity across {} load runs", load_runs.len()));
    if first_shown > 0 {
        section
            .text
            .push(format!("The newest {RECENT} load runs; every step of every run is in `load_steps.parquet`."));
    }
    section.text.push(
        "From each run's `metrics.json` `load` section; every step and provider is in `load_steps.parquet`. The knee is \
         the provider's step of highest goodput per second among its steps that are not client-bound; held is the \
         highest offered rate at which a step of the provider held (its goodput reached the run's target), again among \
         the steps that are not client-bound; change is that rate's change since the provider's previous load run. A \
         client-bound step's figures are the client's, not the provider's: it is counted in the last column, listed \
         below, and never taken as the knee or as held."
            .into(),
    );
    let mut table = vec![[
        "provider",
        "started (UTC)",
        "run",
        "goodput target",
        "knee",
        "knee offered (req/s)",
        "knee goodput (req/s)",
        "held: highest offered (req/s)",
        "change",
        "steps",
    ]
    .map(String::from)
    .to_vec()];
    let mut rows: Vec<(String, i64, Vec<String>)> = Vec::new();
    let mut previous: BTreeMap<&str, Option<f64>> = BTreeMap::new();
    let mut series: BTreeMap<String, Vec<(i64, f64)>> = BTreeMap::new();
    for (i, (run, load)) in load_runs.iter().enumerate() {
        for c in load.capacities() {
            let held = c.held.map(|s| s.offered_rate);
            let before = previous.insert(c.provider, held).flatten();
            if i < first_shown {
                continue;
            }
            if let Some(h) = held {
                series.entry(c.provider.to_string()).or_default().push((run.info.started_at_us, h));
            }
            let every_step_bound = c.steps > 0 && c.client_bound.len() == c.steps;
            rows.push((
                c.provider.to_string(),
                run.info.started_at_us,
                vec![
                    c.provider.to_string(),
                    format_utc(run.info.started_at_us),
                    run.info.name.clone(),
                    format!("{:.2}", load.goodput_target),
                    match c.knee {
                        Some(k) => under_load::setting(k),
                        None if every_step_bound => "— (every step client-bound)".into(),
                        None => "—".into(),
                    },
                    rate(c.knee.map(|k| k.offered_rate)),
                    rate(c.knee.map(|k| k.goodput_per_second)),
                    match held {
                        Some(h) => rate(Some(h)),
                        None if every_step_bound => "— (every step client-bound)".into(),
                        None => "none held".into(),
                    },
                    match (held, before) {
                        (Some(now), Some(then)) if now > then => format!("+{}", rate(Some(now - then))),
                        (Some(now), Some(then)) => rate(Some(now - then)),
                        _ => "—".into(),
                    },
                    match c.client_bound.len() {
                        0 => c.steps.to_string(),
                        n => format!("{} ({n} client-bound)", c.steps),
                    },
                ],
            ));
        }
    }
    rows.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    table.extend(rows.into_iter().map(|r| r.2));
    section.table = Some(table);
    section.chart = Some(Chart {
        label: "the highest offered rate held (req/s)".into(),
        decimals: 2,
        series: series.into_iter().collect(),
        partial: Vec::new(),
    });
    out.push(section);

    let bound: Vec<(&RunResult, &StepMetrics)> = load_runs[first_shown..]
        .iter()
        .flat_map(|(run, load)| load.steps.iter().filter(|s| !s.client_bound.is_empty()).map(move |s| (*run, s)))
        .collect();
    if bound.is_empty() {
        return;
    }
    let mut section = Section::new(3, "Under load: client-bound steps (the client's figures, not the provider's)");
    section.text.push(format!(
        "{} steps of these runs are client-bound: the client fell behind its schedule or ran out of a resource of its \
         own, so what they measured is the client.{}",
        bound.len(),
        if bound.len() > CLIENT_BOUND_ROWS {
            format!(" The first {CLIENT_BOUND_ROWS}; every one is in `load_steps.parquet` (`client_bound`).")
        } else {
            String::new()
        }
    ));
    let mut table = vec![[
        "started (UTC)",
        "run",
        "step",
        "provider",
        "offered (req/s)",
        "achieved (req/s)",
        "send lag p99 (ms)",
        "why",
    ]
    .map(String::from)
    .to_vec()];
    for (run, s) in bound.iter().take(CLIENT_BOUND_ROWS) {
        table.push(vec![
            format_utc(run.info.started_at_us),
            run.info.name.clone(),
            under_load::setting(s),
            s.provider.clone(),
            rate(Some(s.offered_rate)),
            rate(Some(s.achieved_rate)),
            number(s.send_lag_ms.p99, Unit::Ms),
            s.client_bound.join("; "),
        ]);
    }
    section.table = Some(table);
    out.push(section);
}

/// The capacity searches among the directories matched: what each found, per provider.
fn searches(searches: &[Search]) -> Section {
    let mut section = Section::new(2, format!("Capacity searches: {}", searches.len()));
    section.text.push(
        "A directory holding a `search.json` (`ib-search`'s record) is not a run; its probes (`probes/NN/`, one load run \
         per measured rate) are, compared when named (`<dir>/probes/*`). Holds at: the highest probed rate that held below \
         every failing one, the capacity found; fails at: the lowest probed rate that failed."
            .into(),
    );
    let mut table = vec![[
        "search",
        "workflow",
        "first probe (UTC)",
        "probes",
        "provider",
        "holds at (req/s)",
        "fails at (req/s)",
        "status",
        "stopped",
    ]
    .map(String::from)
    .to_vec()];
    for found in searches {
        for r in &found.doc.results {
            table.push(vec![
                found.path.display().to_string(),
                found.workflow.clone(),
                found.started_at_us.map_or("—".into(), format_utc),
                found.doc.probes.len().to_string(),
                r.provider.clone(),
                rate(r.holds_at),
                rate(r.fails_at),
                search::status(r.status),
                found.doc.stopped.clone(),
            ]);
        }
    }
    section.table = Some(table);
    section
}

fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn markdown(s: &Summary) -> String {
    let mut md = String::new();
    for section in sections(s) {
        let _ = writeln!(md, "{} {}\n", "#".repeat(section.level), section.heading);
        for text in &section.text {
            let _ = writeln!(md, "{text}\n");
        }
        if let Some(table) = &section.table {
            for (i, row) in table.iter().enumerate() {
                let _ = writeln!(md, "| {} |", row.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "));
                if i == 0 {
                    let _ = writeln!(md, "|{}", "---|".repeat(row.len()));
                }
            }
            md.push('\n');
        }
    }
    md
}

fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Inline code spans of the markdown text as `<code>`.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

const PALETTE: [&str; 10] =
    ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];

/// A line chart: x the run date, y the value, one line per provider.
fn chart(c: &Chart) -> String {
    let series = &c.series;
    let points: Vec<(i64, f64)> = series.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    if points.is_empty() {
        return String::new();
    }
    let (w, h, left, right, top, bottom) = (640.0, 240.0, 60.0, 150.0, 12.0, 28.0);
    let (t0, t1) = points.iter().fold((i64::MAX, i64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let (v0, v1) = points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.1), b.max(p.1)));
    let (v0, v1) = if v1 > v0 { (v0, v1) } else { (v0 - 1.0, v1 + 1.0) };
    let x = |t: i64| left + if t1 > t0 { (t - t0) as f64 / (t1 - t0) as f64 } else { 0.5 } * (w - left - right);
    let y = |v: f64| top + (1.0 - (v - v0) / (v1 - v0)) * (h - top - bottom);
    let mut svg = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{} by run date\">",
        esc(&c.label)
    );
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/><line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" \
         y2=\"{}\" stroke=\"#888\"/>",
        h - bottom,
        w - right,
        h - bottom,
        h - bottom
    );
    for (v, anchor) in [(v0, h - bottom), (v1, top + 10.0)] {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{anchor}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            left - 4.0,
            esc(&c.value(v))
        );
    }
    // The first and last dates at either end; when they are the same day (one run date, or
    // runs hours apart) one label, centred, since two would be drawn over each other.
    let (first_day, last_day) = (format_utc(t0)[..10].to_string(), format_utc(t1)[..10].to_string());
    let labels = if first_day == last_day {
        vec![((x(t0) + x(t1)) / 2.0, "middle", first_day)]
    } else {
        vec![(x(t0), "start", first_day), (x(t1), "end", last_day)]
    };
    for (at, anchor, day) in labels {
        let _ = write!(
            svg,
            "<text x=\"{at}\" y=\"{}\" text-anchor=\"{anchor}\" font-size=\"11\">{}</text>",
            h - 8.0,
            esc(&day)
        );
    }
    for (i, (provider, points)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let path: Vec<String> = points.iter().map(|(t, v)| format!("{:.1},{:.1}", x(*t), y(*v))).collect();
        if points.len() > 1 {
            let _ = write!(
                svg,
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
                path.join(" ")
            );
        }
        for (j, (t, v)) in points.iter().enumerate() {
            let partial = c.partial.get(i).and_then(|p| p.get(j)).copied().unwrap_or(false);
            let (fill, note) = if partial { ("#fff", ", partial run") } else { (color, "") };
            let _ = write!(
                svg,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{fill}\" stroke=\"{color}\"><title>{}: {} ({}{note})</title></circle>",
                x(*t),
                y(*v),
                esc(provider),
                esc(&c.value(*v)),
                esc(&format_utc(*t))
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{color}\">{}</text>",
            w - right + 8.0,
            top + 12.0 + 14.0 * i as f64,
            esc(provider)
        );
    }
    svg.push_str("</svg>");
    svg
}

pub fn html(s: &Summary) -> String {
    let mut page = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\"><title>inferbench: comparison of runs</title><style>\
         body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem;color:#222}\
         table{border-collapse:collapse;margin:.5rem 0 1.25rem;display:block;overflow-x:auto}\
         th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:left;vertical-align:top}\
         th{background:#f3f3f3}code{background:#f3f3f3;padding:0 .2rem}\
         .chart{width:100%;max-width:640px;height:auto;display:block}</style></head><body>\n",
    );
    for section in sections(s) {
        let _ = writeln!(page, "<h{0}>{1}</h{0}>", section.level, inline(&section.heading));
        for text in &section.text {
            let _ = writeln!(page, "<p>{}</p>", inline(text));
        }
        if let Some(c) = &section.chart {
            page.push_str(&chart(c));
            page.push('\n');
        }
        if let Some(table) = &section.table {
            page.push_str("<table>");
            for (i, row) in table.iter().enumerate() {
                let tag = if i == 0 { "th" } else { "td" };
                page.push_str("<tr>");
                for cell in row {
                    let _ = write!(page, "<{tag}>{}</{tag}>", inline(cell));
                }
                page.push_str("</tr>");
            }
            page.push_str("</table>\n");
        }
    }
    page.push_str("</body></html>\n");
    page
}

#[cfg(test)]
pub mod tests {
    const DRIFT: crate::drift::Settings = crate::drift::Settings { alpha: 0.01, seed: 1 };

    use super::*;
    use crate::compare::tests::run;

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
        let mut runs: Vec<RunResult> =
            (0..2).map(|d| run(&format!("r{d}"), d, &[("a", Some(1), 100.0)], None)).collect();
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
        assert!(load_part.contains(
            "| 1970-01-04 00:00:00 | l2 | 16 req/s | b | 16.00 | 16.00 | 0.5 | send lag p99 3.2 ms > 1 ms |"
        ));
        assert!(md.contains("## Capacity searches: 1"));
        assert!(md.contains("| runs/workflow=load/run=search | load | 1970-01-01 00:00:00 | 1 | a | 8.00 | — | at_least_max_rate | bracketed |"), "{md}");
        assert!(md.contains("| b | — | 8.00 | below_min_rate |"));
        let html = html(&s);
        assert_eq!(html.matches("<svg").count(), 2 * HEADLINE.len() + 1, "and the rate held by run date");
        assert!(html.contains("aria-label=\"the highest offered rate held (req/s) by run date\""));
        assert!(html.contains("<title>a: 16.00 (1970-01-04 00:00:00)</title>"));
    }
}
