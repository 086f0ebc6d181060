//! The stage: find the runs (and any capacity search among the directories matched) and read
//! them, compare them across runs, then write the tables and the two summaries into `--out`.
use crate::args::Args;
use crate::{bootstrap, compare, discover, drift, render, search, tables};
use anyhow::{Context, Result};

pub fn run(args: Args) -> Result<()> {
    let settings =
        bootstrap::Settings { seed: args.seed, resamples: args.resamples as usize, confidence: args.confidence };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let discover::Found { runs: paths, mut skipped, searches } = discover::expand(&args.runs)?;
    // A search whose record cannot be read is still no run: its reason says why it is not listed.
    let mut read_searches = Vec::new();
    for dir in &searches {
        match search::read(dir) {
            Ok(found) => read_searches.push(found),
            Err(why) => {
                if let Some(entry) = skipped.iter_mut().find(|(p, _)| p == dir) {
                    entry.1 = format!("{}; {why}", entry.1);
                }
            }
        }
    }
    for (path, why) in &skipped {
        eprintln!("ib-compare: skipping {}: {why}", path.display());
    }
    let runs = compare::read_all(&paths, &settings, threads)?;
    let trends = compare::trends(&runs);
    let pairs = compare::head_to_head(&runs);
    let drift_settings = drift::Settings { alpha: args.drift_alpha, seed: args.seed };
    let drift_tests = drift::tests(&runs, &drift_settings);

    std::fs::create_dir_all(&args.out)
        .map_err(|e| inferbench_contract::Error::io(&args.out, e))
        .with_context(|| format!("creating {}", args.out.display()))?;
    let inputs: std::collections::BTreeMap<String, &std::collections::BTreeMap<String, String>> =
        runs.iter().map(|r| (r.info.path.display().to_string(), &r.inputs)).collect();
    let metadata = vec![
        ("inferbench.code_version".to_string(), inferbench_contract::CODE_VERSION.to_string()),
        ("inferbench.bootstrap".to_string(), tables::method_json(&settings).to_string()),
        ("inferbench.drift".to_string(), drift::method_json(&drift_settings).to_string()),
        ("inferbench.inputs".to_string(), serde_json::to_string(&inputs)?),
    ];
    let outputs: [(&str, polars::prelude::DataFrame); 7] = [
        ("runs.parquet", tables::runs(&runs)?),
        ("leaderboard.parquet", tables::leaderboard(&runs)?),
        ("trends.parquet", tables::trends(&trends)?),
        ("head_to_head.parquet", tables::head_to_head(&pairs)?),
        ("paired_bootstrap.parquet", tables::paired_bootstrap(&runs, &settings)?),
        ("load_steps.parquet", tables::load_steps(&runs)?),
        ("drift.parquet", tables::drift(&runs, &drift_tests, &drift_settings)?),
    ];
    for (name, mut df) in outputs {
        tables::write(&args.out.join(name), &mut df, &metadata)?;
    }
    let summary = render::Summary {
        runs: &runs,
        skipped: &skipped,
        searches: &read_searches,
        trends: &trends,
        pairs: &pairs,
        settings: &settings,
        drift: &drift_tests,
        drift_settings: &drift_settings,
    };
    inferbench_store::atomic::write(&args.out.join("summary.md"), render::markdown(&summary).as_bytes())?;
    inferbench_store::atomic::write(&args.out.join("summary.html"), render::html(&summary).as_bytes())?;
    let pair_count: usize = runs.iter().map(|r| r.pairs.len()).sum();
    let load_runs = runs.iter().filter(|r| r.load.is_some()).count();
    let alarms = drift_tests.iter().filter(|t| t.alarm).count();
    println!(
        "ib-compare: {} runs ({load_runs} under load), {} responses, {pair_count} paired intervals, {alarms} drift \
         alarms of {} tests -> {}",
        runs.len(),
        runs.iter().map(|r| r.response_rows).sum::<usize>(),
        drift_tests.len(),
        args.out.join("summary.md").display()
    );
    Ok(())
}
