//! A workflow's runs across time: the leaderboard of each run date, each headline metric's
//! trend per provider, provider against provider across runs, and the newest run's paired
//! intervals.
use super::cells::{number, signed};
use super::section::{table, Chart, Section, Summary, RECENT};
use crate::compare::{p50, RunResult, Trend, PAIRED};
use crate::discover::format_utc;
use inferbench_contract::metrics::{Column, Unit, E2E_LATENCY, RANKING, TASK_SUCCESS};
use inferbench_present::number::{self as numbers, Between, DASH};
use std::fmt::Write;

/// The newest [`RECENT`] run dates: each run's ranked providers in rank order, then the unranked.
pub fn leaderboard(runs: &[&RunResult]) -> Section {
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
    let mut t = table(&["started (UTC)", "run", "status", "ranking", "unranked"]);
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
        let unranked = run.pooled.iter().filter(|p| p.rank.is_none()).map(|p| p.provider.as_str()).collect::<Vec<_>>();
        t.row(vec![
            format_utc(run.info.started_at_us),
            run.info.name.clone(),
            run.info.marks(),
            if ranking.is_empty() { DASH.into() } else { ranking },
            if unranked.is_empty() { DASH.into() } else { unranked.join(", ") },
        ]);
    }
    board.table = Some(t);
    board
}

/// A headline metric's trend in `workflow`: a row and a line per provider.
pub fn trend(s: &Summary, workflow: &str, metric: Column) -> Section {
    let trends: Vec<&Trend> = s.trends.iter().filter(|t| t.workflow == workflow && t.metric == metric).collect();
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
    let mut t = table(&["provider", "runs", "first", "last", "change", "min", "p50", "max", "slope per day"]);
    for trend in &trends {
        t.row(trend_row(trend, metric.metric.unit));
    }
    section.table = Some(t);
    section.chart = Some(Chart::metric(metric, &trends));
    section
}

/// One provider's trend: its run count (partial and simulated runs counted in brackets),
/// first and last value, change, range, p50 and slope.
fn trend_row(t: &Trend, u: Unit) -> Vec<String> {
    let values: Vec<f64> = t.points.iter().map(|p| p.1).collect();
    let mut count = t.points.len().to_string();
    let marked: Vec<String> = [(t.partial_runs(), "partial"), (t.simulated_runs(), "simulated")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if !marked.is_empty() {
        let _ = write!(count, " ({})", marked.join(", "));
    }
    vec![
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
            None => DASH.into(),
        },
    ]
}

/// Each pair of providers across the workflow's runs: who ranked above whom, and the paired
/// verdicts' tally per metric.
pub fn head_to_head(s: &Summary, workflow: &str) -> Section {
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
    let mut t = table(&heading);
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
        t.row(row);
    }
    h2h.table = Some(t);
    h2h
}

/// The newest run's paired intervals and verdicts.
pub fn newest_intervals(runs: &[&RunResult]) -> Section {
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
    let mut t = table(&["A", "B", "metric", "pairs", "Δ p50 (ms)", "interval (ms)", "verdict"]);
    for p in &latest.pairs {
        let unit = p.metric.unit;
        t.row(vec![
            p.provider_a.clone(),
            p.provider_b.clone(),
            p.metric.short_label.to_string(),
            p.interval.map_or(0, |i| i.n).to_string(),
            signed(p.interval.map(|i| i.estimate), unit),
            p.interval.map_or(DASH.into(), |i| {
                numbers::interval(&signed(Some(i.low), unit), &signed(Some(i.high), unit), Between::Comma)
            }),
            match p.verdict() {
                "a_faster" => format!("{} faster", p.provider_a),
                "b_faster" => format!("{} faster", p.provider_b),
                "inconclusive" => "cannot tell".into(),
                crate::compare::TOO_FEW => format!("too few shared rounds: n = {}", p.interval.map_or(0, |i| i.n)),
                _ => "no paired rounds".into(),
            },
        ]);
    }
    intervals.table = Some(t);
    intervals
}
