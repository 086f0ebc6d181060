//! The comparison's Parquet tables, built as polars frames and written atomically, each with
//! the bootstrap's settings, the code version and its inputs in its key-value metadata.
use crate::bootstrap::Settings;
use crate::compare::{p50, HeadToHead, RunResult, Trend, PAIRED};
use crate::load::HEADLINE;
use anyhow::Result;
use inferbench_contract::Error;
use polars::prelude::*;
use std::path::Path;

fn datetime(name: &str, us: Vec<i64>) -> Result<Column> {
    Ok(Series::new(name.into(), us).cast(&DataType::Datetime(TimeUnit::Microseconds, None))?.into())
}

fn strings<'a>(name: &str, values: impl Iterator<Item = &'a str>) -> Column {
    Column::new(name.into(), values.collect::<Vec<&str>>())
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
        strings("statistic", std::iter::repeat_n(Settings::STATISTIC, n)),
        strings("interval", std::iter::repeat_n(Settings::INTERVAL, n)),
        Column::new("confidence_percent".into(), vec![settings.confidence as i64; n]),
        Column::new("resamples".into(), vec![settings.resamples as i64; n]),
        strings("rng", std::iter::repeat_n(Settings::RNG, n)),
        // u64 seeds above i64::MAX keep their bits: the column is unsigned.
        Column::new("seed".into(), vec![settings.seed; n]),
    ])?)
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
