//! The comparison's Parquet tables, built as polars frames and written atomically, each with
//! the bootstrap's settings, the code version and its inputs in its key-value metadata.
use crate::bootstrap::Settings;
use crate::compare::{p50, HeadToHead, RunResult, Trend, PAIRED};
use crate::load::HEADLINE;
use crate::under_load::LoadRun;
use anyhow::Result;
use inferbench_contract::documents::StepMetrics;
use inferbench_contract::Error;
use polars::prelude::*;
use std::path::Path;

fn datetime(name: &str, us: Vec<i64>) -> Result<Column> {
    Ok(Series::new(name.into(), us).cast(&DataType::Datetime(TimeUnit::Microseconds, None))?.into())
}

fn strings<'a>(name: &str, values: impl Iterator<Item = &'a str>) -> Column {
    Column::new(name.into(), values.collect::<Vec<&str>>())
}

/// A column of string lists, one list per row.
fn list(name: &str, rows: Vec<&[String]>) -> Result<Column> {
    let rows: Vec<Series> =
        rows.into_iter().map(|r| Series::new("".into(), r.iter().map(String::as_str).collect::<Vec<&str>>())).collect();
    Ok(Series::new(name.into(), rows).cast(&DataType::List(Box::new(DataType::String)))?.into())
}

/// `runs.parquet`: one row per run compared.
pub fn runs(runs: &[RunResult]) -> Result<DataFrame> {
    let info = || runs.iter().map(|r| &r.info);
    Ok(DataFrame::new_infer_height(vec![
        datetime("started_at", info().map(|i| i.started_at_us).collect())?,
        strings("run_path", runs.iter().map(|r| r.info.path.to_str().unwrap_or_default())),
        strings("run_workflow", info().map(|i| i.workflow.as_str())),
        strings("run_name", info().map(|i| i.name.as_str())),
        strings("started_at_source", info().map(|i| i.date_source)),
        Column::new("endpoint_mode".into(), info().map(|i| i.endpoint_mode.clone()).collect::<Vec<_>>()),
        Column::new("imported".into(), info().map(|i| i.imported).collect::<Vec<_>>()),
        strings("run_status", info().map(|i| i.status.as_str())),
        list("status_reasons", info().map(|i| &i.status_reasons[..]).collect())?,
        strings("pooled_source", runs.iter().map(|r| r.pooled_source)),
        Column::new("provider_count".into(), runs.iter().map(|r| r.pooled.len() as i64).collect::<Vec<_>>()),
        Column::new("response_count".into(), runs.iter().map(|r| r.response_rows as i64).collect::<Vec<_>>()),
        Column::new(
            "inputs_sha256".into(),
            runs.iter().map(|r| serde_json::to_string(&r.inputs).unwrap()).collect::<Vec<_>>(),
        ),
    ])?)
}

/// `leaderboard.parquet`: one row per run and provider, in date then rank order.
pub fn leaderboard(runs: &[RunResult]) -> Result<DataFrame> {
    let rows: Vec<(&RunResult, &crate::load::Pooled)> = runs
        .iter()
        .flat_map(|r| {
            let mut rows: Vec<_> = r.pooled.iter().collect();
            rows.sort_by(|x, y| (x.rank.is_none(), x.rank, &x.provider).cmp(&(y.rank.is_none(), y.rank, &y.provider)));
            rows.into_iter().map(move |p| (r, p))
        })
        .collect();
    let mut cols = vec![
        datetime("started_at", rows.iter().map(|(r, _)| r.info.started_at_us).collect())?,
        strings("run_path", rows.iter().map(|(r, _)| r.info.path.to_str().unwrap_or_default())),
        strings("run_workflow", rows.iter().map(|(r, _)| r.info.workflow.as_str())),
        strings("run_name", rows.iter().map(|(r, _)| r.info.name.as_str())),
        strings("run_status", rows.iter().map(|(r, _)| r.info.status.as_str())),
        Column::new("endpoint_mode".into(), rows.iter().map(|(r, _)| r.info.endpoint_mode.clone()).collect::<Vec<_>>()),
        strings("provider", rows.iter().map(|(_, p)| p.provider.as_str())),
        Column::new("rank".into(), rows.iter().map(|(_, p)| p.rank).collect::<Vec<_>>()),
        Column::new("eligible".into(), rows.iter().map(|(_, p)| p.eligible).collect::<Vec<_>>()),
        Column::new("submitted_count".into(), rows.iter().map(|(_, p)| p.submitted_count).collect::<Vec<_>>()),
    ];
    for (m, metric) in HEADLINE.iter().enumerate() {
        cols.push(Column::new(metric.key().into(), rows.iter().map(|(_, p)| p.metrics[m]).collect::<Vec<_>>()));
    }
    Ok(DataFrame::new_infer_height(cols)?)
}

/// `trends.parquet`: one row per workflow, provider and headline metric.
pub fn trends(trends: &[Trend]) -> Result<DataFrame> {
    let first = |t: &Trend| t.points.first().copied();
    let last = |t: &Trend| t.points.last().copied();
    let values = |t: &Trend| t.points.iter().map(|p| p.1).collect::<Vec<f64>>();
    let opt_time = |name: &str, f: &dyn Fn(&Trend) -> Option<i64>| -> Result<Column> {
        let s = Series::new(name.into(), trends.iter().map(f).collect::<Vec<Option<i64>>>());
        Ok(s.cast(&DataType::Datetime(TimeUnit::Microseconds, None))?.into())
    };
    let number = |name: &str, f: &dyn Fn(&Trend) -> Option<f64>| {
        Column::new(name.into(), trends.iter().map(f).collect::<Vec<Option<f64>>>())
    };
    Ok(DataFrame::new_infer_height(vec![
        strings("run_workflow", trends.iter().map(|t| t.workflow.as_str())),
        strings("provider", trends.iter().map(|t| t.provider.as_str())),
        Column::new("metric".into(), trends.iter().map(|t| t.metric.key()).collect::<Vec<_>>()),
        strings("unit", trends.iter().map(|t| t.metric.metric.unit.as_str())),
        Column::new(
            "lower_is_better".into(),
            trends.iter().map(|t| t.metric.metric.lower_is_better()).collect::<Vec<_>>(),
        ),
        Column::new("run_count".into(), trends.iter().map(|t| t.points.len() as i64).collect::<Vec<_>>()),
        Column::new("partial_run_count".into(), trends.iter().map(|t| t.partial_runs() as i64).collect::<Vec<_>>()),
        Column::new("simulated_run_count".into(), trends.iter().map(|t| t.simulated_runs() as i64).collect::<Vec<_>>()),
        opt_time("first_started_at", &|t| first(t).map(|p| p.0))?,
        opt_time("last_started_at", &|t| last(t).map(|p| p.0))?,
        number("first", &|t| first(t).map(|p| p.1)),
        number("last", &|t| last(t).map(|p| p.1)),
        number("change", &|t| Some(last(t)?.1 - first(t)?.1)),
        number("min", &|t| values(t).into_iter().min_by(f64::total_cmp)),
        number("p50", &|t| p50(&values(t))),
        number("max", &|t| values(t).into_iter().max_by(f64::total_cmp)),
        number("slope_per_day", &|t| t.slope_per_day()),
    ])?)
}

/// `head_to_head.parquet`: one row per workflow and pair of providers across runs.
pub fn head_to_head(pairs: &[HeadToHead]) -> Result<DataFrame> {
    let count = |name: &str, f: &dyn Fn(&HeadToHead) -> usize| {
        Column::new(name.into(), pairs.iter().map(|h| f(h) as i64).collect::<Vec<_>>())
    };
    let mut cols = vec![
        strings("run_workflow", pairs.iter().map(|h| h.workflow.as_str())),
        strings("provider_a", pairs.iter().map(|h| h.provider_a.as_str())),
        strings("provider_b", pairs.iter().map(|h| h.provider_b.as_str())),
        count("runs_together", &|h| h.runs_together),
        count("a_ranked_above", &|h| h.a_ranked_above),
        count("b_ranked_above", &|h| h.b_ranked_above),
    ];
    for (m, (metric, _)) in PAIRED.iter().enumerate() {
        let short = metric.name;
        cols.push(count(&format!("{short}_a_faster_runs"), &|h| h.a_faster[m]));
        cols.push(count(&format!("{short}_b_faster_runs"), &|h| h.b_faster[m]));
        cols.push(count(&format!("{short}_inconclusive_runs"), &|h| h.inconclusive[m]));
        cols.push(count(&format!("{short}_too_few_rounds_runs"), &|h| h.too_few[m]));
        cols.push(Column::new(
            format!("{short}_difference_p50_of_runs_ms").into(),
            pairs.iter().map(|h| p50(&h.estimates[m])).collect::<Vec<_>>(),
        ));
    }
    Ok(DataFrame::new_infer_height(cols)?)
}

/// `paired_bootstrap.parquet`: one row per run, pair of providers and paired metric.
pub fn paired_bootstrap(runs: &[RunResult], settings: &Settings) -> Result<DataFrame> {
    let rows: Vec<(&RunResult, &crate::compare::PairResult)> =
        runs.iter().flat_map(|r| r.pairs.iter().map(move |p| (r, p))).collect();
    let n = rows.len();
    let interval = |f: fn(&crate::bootstrap::Interval) -> f64| {
        rows.iter().map(|(_, p)| p.interval.as_ref().map(f)).collect::<Vec<Option<f64>>>()
    };
    Ok(DataFrame::new_infer_height(vec![
        datetime("started_at", rows.iter().map(|(r, _)| r.info.started_at_us).collect())?,
        strings("run_path", rows.iter().map(|(r, _)| r.info.path.to_str().unwrap_or_default())),
        strings("run_workflow", rows.iter().map(|(r, _)| r.info.workflow.as_str())),
        strings("run_name", rows.iter().map(|(r, _)| r.info.name.as_str())),
        strings("provider_a", rows.iter().map(|(_, p)| p.provider_a.as_str())),
        strings("provider_b", rows.iter().map(|(_, p)| p.provider_b.as_str())),
        strings("metric", rows.iter().map(|(_, p)| crate::load::sample_column(p.metric))),
        Column::new("shared_round_count".into(), rows.iter().map(|(_, p)| p.shared_rounds as i64).collect::<Vec<_>>()),
        Column::new(
            "paired_count".into(),
            rows.iter().map(|(_, p)| p.interval.map_or(0, |i| i.n as i64)).collect::<Vec<_>>(),
        ),
        Column::new("difference_p50_ms".into(), interval(|i| i.estimate)),
        Column::new("ci_low_ms".into(), interval(|i| i.low)),
        Column::new("ci_high_ms".into(), interval(|i| i.high)),
        Column::new("share_a_faster".into(), interval(|i| i.share_below_zero)),
        Column::new("share_b_faster".into(), interval(|i| i.share_above_zero)),
        strings("verdict", rows.iter().map(|(_, p)| p.verdict())),
        Column::new("min_paired_count".into(), rows.iter().map(|(_, p)| p.min_pairs as i64).collect::<Vec<_>>()),
        strings("statistic", std::iter::repeat_n(Settings::STATISTIC, n)),
        strings("interval", std::iter::repeat_n(Settings::INTERVAL, n)),
        Column::new("confidence_percent".into(), vec![settings.confidence as i64; n]),
        Column::new("resamples".into(), vec![settings.resamples as i64; n]),
        strings("rng", std::iter::repeat_n(Settings::RNG, n)),
        // u64 seeds above i64::MAX keep their bits: the column is unsigned.
        Column::new("seed".into(), vec![settings.seed; n]),
    ])?)
}

/// `load_steps.parquet`: one row per load run, step and provider (`metrics.json`'s `load`
/// section), in date order, then as the run lists them (steps in order, providers by name);
/// closed-loop runs have none. Latencies are from the intended send, as the section's.
pub fn load_steps(runs: &[RunResult]) -> Result<DataFrame> {
    let rows: Vec<(&RunResult, &LoadRun, &StepMetrics)> = runs
        .iter()
        .filter_map(|r| r.load.as_ref().map(|l| (r, l)))
        .flat_map(|(r, l)| l.steps.iter().map(move |s| (r, l, s)))
        .collect();
    let number = |name: &str, f: &dyn Fn(&StepMetrics) -> Option<f64>| {
        Column::new(name.into(), rows.iter().map(|(_, _, s)| f(s)).collect::<Vec<Option<f64>>>())
    };
    let count = |name: &str, f: &dyn Fn(&StepMetrics) -> Option<i64>| {
        Column::new(name.into(), rows.iter().map(|(_, _, s)| f(s)).collect::<Vec<Option<i64>>>())
    };
    let reasons = list("client_bound_reasons", rows.iter().map(|(_, _, s)| &s.client_bound[..]).collect())?;
    Ok(DataFrame::new_infer_height(vec![
        datetime("started_at", rows.iter().map(|(r, _, _)| r.info.started_at_us).collect())?,
        strings("run_path", rows.iter().map(|(r, _, _)| r.info.path.to_str().unwrap_or_default())),
        strings("run_workflow", rows.iter().map(|(r, _, _)| r.info.workflow.as_str())),
        strings("run_name", rows.iter().map(|(r, _, _)| r.info.name.as_str())),
        strings("run_id", rows.iter().map(|(_, l, _)| l.run_id.as_str())),
        strings("mode", rows.iter().map(|(_, l, _)| l.mode.as_str())),
        count("step", &|s| Some(s.step.into())),
        strings("provider", rows.iter().map(|(_, _, s)| s.provider.as_str())),
        number("target_rate", &|s| s.target_rate),
        number("speedup", &|s| s.speedup),
        count("users", &|s| s.users.map(i64::from)),
        count("attempt", &|s| Some(s.attempt.into())),
        number("window_seconds", &|s| Some(s.window_seconds)),
        number("offered_rate", &|s| Some(s.offered_rate)),
        number("achieved_rate", &|s| Some(s.achieved_rate)),
        count("request_count", &|s| Some(s.requests as i64)),
        count("completed_count", &|s| Some(s.completed as i64)),
        number("completed_per_second", &|s| Some(s.completed_per_second)),
        number("output_tokens_per_second", &|s| Some(s.output_tokens_per_second)),
        number("ttft_p50_ms", &|s| s.ttft_ms.p50),
        number("ttft_p99_ms", &|s| s.ttft_ms.p99),
        count("ttft_sample_count", &|s| Some(s.ttft_ms.n as i64)),
        number("e2e_latency_p50_ms", &|s| s.e2e_ms.p50),
        number("e2e_latency_p99_ms", &|s| s.e2e_ms.p99),
        count("e2e_latency_sample_count", &|s| Some(s.e2e_ms.n as i64)),
        number("send_lag_p99_ms", &|s| s.send_lag_ms.p99),
        number("goodput", &|s| s.goodput),
        number("goodput_without_lag", &|s| s.goodput_without_lag),
        number("goodput_per_second", &|s| Some(s.goodput_per_second)),
        Column::new("goodput_target".into(), rows.iter().map(|(_, l, _)| l.goodput_target).collect::<Vec<f64>>()),
        number("accuracy", &|s| s.accuracy),
        Column::new("holds".into(), rows.iter().map(|(_, _, s)| s.holds).collect::<Vec<bool>>()),
        Column::new(
            "client_bound".into(),
            rows.iter().map(|(_, _, s)| !s.client_bound.is_empty()).collect::<Vec<bool>>(),
        ),
        reasons,
        Column::new("knee".into(), rows.iter().map(|(_, l, s)| l.is_knee(s)).collect::<Vec<bool>>()),
    ])?)
}

/// `drift.parquet`: one row per drift test (a provider's metric between two consecutive runs
/// of it), in (later run, provider, metric) order; `alarm` marks the significant ones.
pub fn drift(runs: &[RunResult], tests: &[crate::drift::Test], settings: &crate::drift::Settings) -> Result<DataFrame> {
    let n = tests.len();
    let run = |t: &crate::drift::Test, after: bool| &runs[if after { t.after } else { t.before }].info;
    let mut cols = vec![strings("run_workflow", tests.iter().map(|t| t.workflow.as_str()))];
    for (side, after) in [("before", false), ("after", true)] {
        cols.push(datetime(
            &format!("{side}_started_at"),
            tests.iter().map(|t| run(t, after).started_at_us).collect(),
        )?);
        cols.push(strings(
            &format!("{side}_run_path"),
            tests.iter().map(|t| run(t, after).path.to_str().unwrap_or_default()),
        ));
        cols.push(strings(&format!("{side}_run_name"), tests.iter().map(|t| run(t, after).name.as_str())));
        cols.push(strings(&format!("{side}_run_status"), tests.iter().map(|t| run(t, after).status.as_str())));
    }
    cols.extend([
        strings("provider", tests.iter().map(|t| t.provider.as_str())),
        strings("metric", tests.iter().map(|t| t.metric.key())),
        Column::new("before_value".into(), tests.iter().map(|t| t.before_value).collect::<Vec<_>>()),
        Column::new("after_value".into(), tests.iter().map(|t| t.after_value).collect::<Vec<_>>()),
        Column::new("before_count".into(), tests.iter().map(|t| t.before_count as i64).collect::<Vec<_>>()),
        Column::new("after_count".into(), tests.iter().map(|t| t.after_count as i64).collect::<Vec<_>>()),
        strings("test", tests.iter().map(|t| t.method)),
        Column::new("p_value".into(), tests.iter().map(|t| t.p_value).collect::<Vec<_>>()),
        Column::new("p_holm".into(), tests.iter().map(|t| t.p_adjusted).collect::<Vec<_>>()),
        Column::new("family_size".into(), tests.iter().map(|t| t.family_size as i64).collect::<Vec<_>>()),
        Column::new("alpha".into(), vec![settings.alpha; n]),
        Column::new("alarm".into(), tests.iter().map(|t| t.alarm).collect::<Vec<_>>()),
    ]);
    Ok(DataFrame::new_infer_height(cols)?)
}

/// The bootstrap's settings as one JSON object (Parquet metadata, summaries).
pub fn method_json(settings: &Settings) -> serde_json::Value {
    let (low, high) = settings.bound_ranks();
    serde_json::json!({
        "statistic": Settings::STATISTIC,
        "difference": "provider_a - provider_b (provider_a < provider_b by name); negative favours provider_a",
        "pairs": "rounds (round_index) where both providers have a sample of the metric",
        "interval": Settings::INTERVAL,
        "confidence_percent": settings.confidence,
        "resamples": settings.resamples,
        "bound_ranks": [low, high],
        "min_paired_count": crate::bootstrap::min_pairs(settings.confidence),
        "verdict_rule": "too_few_rounds under min_paired_count paired samples: the smallest n at which [min, max] of n \
                         differences covers the median with probability 1 - 2 * 0.5^n >= the confidence, so that any \
                         bootstrap percentile interval (never wider than [min, max]) can have the coverage claimed; \
                         else a_faster / b_faster when the interval excludes zero, else inconclusive",
        "rng": Settings::RNG,
        "seed": settings.seed,
    })
}

/// `df` as Parquet at `path` (temporary file, fsync, rename).
pub fn write(path: &Path, df: &mut DataFrame, metadata: &[(String, String)]) -> Result<()> {
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes)
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(metadata.to_vec())))
        .finish(df)
        .map_err(|e| Error::Parquet { path: path.to_path_buf(), message: e.to_string() })?;
    inferbench_store::atomic::write(path, &bytes)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_the_leaderboard_say_each_runs_status() {
        let mut runs = crate::render::tests::mixed_runs();
        runs[1].info.status = crate::discover::RunStatus::Partial;
        runs[1].info.status_reasons = vec!["2 scheduled requests have no response".into()];
        let df = super::runs(&runs).unwrap();
        let status: Vec<&str> = df.column("run_status").unwrap().str().unwrap().iter().map(|v| v.unwrap()).collect();
        assert_eq!(status, ["complete", "partial", "complete", "complete"]);
        let reasons = df.column("status_reasons").unwrap().list().unwrap().get_as_series(1).unwrap();
        assert_eq!(reasons.str().unwrap().get(0), Some("2 scheduled requests have no response"));
        let board = leaderboard(&runs).unwrap();
        let status = board.column("run_status").unwrap().str().unwrap();
        assert_eq!((status.get(0), status.get(1)), (Some("complete"), Some("partial")));
        assert_eq!(board.column("endpoint_mode").unwrap().str().unwrap().get(0), Some("simulated"));
        let trends = trends(&crate::compare::trends(&runs)).unwrap();
        assert!(trends.column("partial_run_count").is_ok() && trends.column("simulated_run_count").is_ok());
    }

    #[test]
    fn drift_has_a_row_per_test_and_the_same_columns_with_none() {
        let runs = crate::render::tests::mixed_runs();
        let settings = crate::drift::Settings { alpha: 0.01, seed: 1 };
        let test = crate::drift::Test {
            workflow: "w".into(),
            provider: "a".into(),
            metric: crate::drift::Metric::MajorityAgreement,
            before: 0,
            after: 1,
            before_value: 0.98,
            after_value: 0.7,
            before_count: 300,
            after_count: 290,
            method: "fisher_exact",
            p_value: 1e-9,
            p_adjusted: 4e-9,
            family_size: 4,
            alarm: true,
        };
        let mut df = drift(&runs, &[test], &settings).unwrap();
        assert_eq!(df.height(), 1);
        let text = |name: &str| df.column(name).unwrap().str().unwrap().get(0).map(str::to_string);
        assert_eq!(text("metric").as_deref(), Some("majority_agreement"));
        assert_eq!(
            (text("before_run_name"), text("after_run_name")),
            (Some(runs[0].info.name.clone()), Some(runs[1].info.name.clone()))
        );
        assert_eq!(df.column("alarm").unwrap().bool().unwrap().get(0), Some(true));
        assert_eq!(text("after_run_status").as_deref(), Some("complete"));
        assert_eq!(df.column("p_holm").unwrap().f64().unwrap().get(0), Some(4e-9));
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("drift.parquet"), &mut df, &[]).unwrap();
        let mut empty = drift(&runs, &[], &settings).unwrap();
        assert_eq!((empty.height(), empty.schema()), (0, df.schema()));
        write(&dir.path().join("empty.parquet"), &mut empty, &[]).unwrap();
    }

    #[test]
    fn load_steps_have_a_row_per_load_run_step_and_provider_and_closed_loop_runs_none() {
        let runs = crate::render::tests::mixed_runs();
        let mut df = load_steps(&runs).unwrap();
        assert_eq!(df.height(), 12, "2 load runs × 3 steps × 2 providers; the closed-loop runs none");
        let text = |name: &str| {
            df.column(name).unwrap().str().unwrap().iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(text("run_name")[..7], ["l1", "l1", "l1", "l1", "l1", "l1", "l2"]);
        assert_eq!(text("provider")[..3], ["a", "b", "a"]);
        assert!(text("mode").iter().all(|m| m == "open_loop"));
        let flags =
            |name: &str| df.column(name).unwrap().bool().unwrap().iter().map(|v| v.unwrap()).collect::<Vec<_>>();
        assert_eq!(flags("knee")[..6], [false, false, true, true, false, false]);
        assert_eq!(flags("client_bound")[..6], [false, false, false, false, false, true]);
        assert_eq!(df.column("e2e_latency_p99_ms").unwrap().f64().unwrap().get(4), Some(3200.0));
        assert_eq!(df.column("goodput_target").unwrap().f64().unwrap().get(0), Some(0.9));
        let reasons = df.column("client_bound_reasons").unwrap().list().unwrap().get_as_series(5).unwrap();
        assert_eq!(reasons.str().unwrap().get(0), Some("send lag p99 3.2 ms > 1 ms"));
        assert_eq!(df.column("client_bound_reasons").unwrap().list().unwrap().get_as_series(0).unwrap().len(), 0);
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("load_steps.parquet"), &mut df, &[]).unwrap();
        // With no load run the table is written, empty, with the same columns.
        let mut empty = load_steps(&runs[..2]).unwrap();
        assert_eq!((empty.height(), empty.get_column_names()), (0, df.get_column_names()));
        assert_eq!(empty.schema(), df.schema());
        write(&dir.path().join("empty.parquet"), &mut empty, &[]).unwrap();
    }
}
