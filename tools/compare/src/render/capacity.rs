//! A workflow's load runs: each provider's knee and highest rate held per run, by provider
//! then date, and the client-bound steps that neither may come from.
use super::cells::{number, rate};
use super::section::{table, Chart, Section, RECENT};
use crate::compare::RunResult;
use crate::discover::format_utc;
use crate::under_load::{self, Capacity, LoadRun};
use inferbench_contract::documents::StepMetrics;
use inferbench_contract::metrics::Unit;
use inferbench_present::number::{self, DASH};
use std::collections::BTreeMap;

/// How many client-bound steps the summary lists per workflow; `load_steps.parquet` has all.
pub const CLIENT_BOUND_ROWS: usize = 60;

/// The sections of `runs`' load runs (none when there are none): the capacities, then the
/// client-bound steps when there are any.
pub fn sections(runs: &[&RunResult]) -> Vec<Section> {
    let load_runs: Vec<(&RunResult, &LoadRun)> = runs.iter().filter_map(|r| r.load.as_ref().map(|l| (*r, l))).collect();
    if load_runs.is_empty() {
        return Vec::new();
    }
    let first_shown = load_runs.len().saturating_sub(RECENT);
    let mut out = vec![capacities(&load_runs, first_shown)];
    out.extend(client_bound(&load_runs[first_shown..]));
    out
}

/// Each provider's knee and highest rate held in each of the newest [`RECENT`] load runs, with
/// the rate held charted by run date.
fn capacities(load_runs: &[(&RunResult, &LoadRun)], first_shown: usize) -> Section {
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
    let mut t = table(&[
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
    ]);
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
            rows.push((c.provider.to_string(), run.info.started_at_us, capacity_row(run, load, &c, before)));
        }
    }
    rows.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (_, _, row) in rows {
        t.row(row);
    }
    section.table = Some(t);
    section.chart = Some(Chart {
        label: "the highest offered rate held (req/s)".into(),
        decimals: 2,
        series: series.into_iter().collect(),
        partial: Vec::new(),
    });
    section
}

/// One provider's capacity in one load run; `before` is the rate it held in its previous one.
fn capacity_row(run: &RunResult, load: &LoadRun, c: &Capacity, before: Option<f64>) -> Vec<String> {
    let held = c.held.map(|s| s.offered_rate);
    let every_step_bound = c.steps > 0 && c.client_bound.len() == c.steps;
    vec![
        c.provider.to_string(),
        format_utc(run.info.started_at_us),
        run.info.name.clone(),
        number::plain(load.goodput_target, 2),
        match c.knee {
            Some(k) => under_load::setting(k),
            None if every_step_bound => "— (every step client-bound)".into(),
            None => DASH.into(),
        },
        rate(c.knee.map(|k| k.offered_rate)),
        rate(c.knee.map(|k| k.goodput_per_second)),
        match held {
            Some(h) => rate(Some(h)),
            None if every_step_bound => "— (every step client-bound)".into(),
            None => "none held".into(),
        },
        match (held, before) {
            (Some(now), Some(then)) => number::plus(now - then, 2),
            _ => DASH.into(),
        },
        match c.client_bound.len() {
            0 => c.steps.to_string(),
            n => format!("{} ({n} client-bound)", c.steps),
        },
    ]
}

/// The client-bound steps of `load_runs` (at most [`CLIENT_BOUND_ROWS`]), or nothing when none is.
fn client_bound(load_runs: &[(&RunResult, &LoadRun)]) -> Option<Section> {
    let bound: Vec<(&RunResult, &StepMetrics)> = load_runs
        .iter()
        .flat_map(|(run, load)| load.steps.iter().filter(|s| !s.client_bound.is_empty()).map(move |s| (*run, s)))
        .collect();
    if bound.is_empty() {
        return None;
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
    let mut t = table(&[
        "started (UTC)",
        "run",
        "step",
        "provider",
        "offered (req/s)",
        "achieved (req/s)",
        "send lag p99 (ms)",
        "why",
    ]);
    for (run, s) in bound.iter().take(CLIENT_BOUND_ROWS) {
        t.row(vec![
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
    section.table = Some(t);
    Some(section)
}
