//! `ib-compare`: many run directories (inferbench's own and imported ones, of any age) as one
//! dataset: the leaderboard over time, each headline metric's trend per provider, provider
//! against provider across runs, and a seeded paired bootstrap interval for every pair of
//! providers in every run. Reads only; writes into `--out`. See `--help`.
mod bootstrap;
mod compare;
mod discover;
mod load;
mod render;
mod tables;

use anyhow::{Context, Result};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "ib-compare",
    version,
    about = "Compare many inferbench runs: leaderboard over time, trends, provider against provider, paired \
             bootstrap confidence intervals",
    after_help = inferbench_cli::EXIT_CODES_HELP
)]
struct Args {
    /// Run directories, or glob patterns matching them (quote them to pass them to ib-compare
    /// rather than the shell), e.g. 'runs/*/*'. A glob's matches without responses.parquet
    /// are skipped and listed; a directory named outright must be a scored run.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Where to write the comparison (created if missing): runs.parquet, leaderboard.parquet,
    /// trends.parquet, head_to_head.parquet, paired_bootstrap.parquet, summary.md, summary.html.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The bootstrap's seed: the same runs and seed give the same intervals.
    #[arg(long, default_value_t = 20261201)]
    seed: u64,
    /// Bootstrap resamples per interval.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    resamples: u64,
    /// Confidence level of the intervals, in percent.
    #[arg(long, default_value_t = 95, value_parser = clap::value_parser!(u32).range(1..=99))]
    confidence: u32,
    /// Worker threads reading runs and drawing resamples [default: the available cores].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

fn run(args: Args) -> Result<()> {
    let settings =
        bootstrap::Settings { seed: args.seed, resamples: args.resamples as usize, confidence: args.confidence };
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let (paths, skipped) = discover::expand(&args.runs)?;
    for (path, why) in &skipped {
        eprintln!("ib-compare: skipping {}: {why}", path.display());
    }
    let runs = compare::read_all(&paths, &settings, threads)?;
    let trends = compare::trends(&runs);
    let pairs = compare::head_to_head(&runs);

    std::fs::create_dir_all(&args.out)
        .map_err(|e| inferbench_contract::Error::io(&args.out, e))
        .with_context(|| format!("creating {}", args.out.display()))?;
    let inputs: std::collections::BTreeMap<String, &std::collections::BTreeMap<String, String>> =
        runs.iter().map(|r| (r.info.path.display().to_string(), &r.inputs)).collect();
    let metadata = vec![
        ("inferbench.code_version".to_string(), inferbench_contract::CODE_VERSION.to_string()),
        ("inferbench.bootstrap".to_string(), tables::method_json(&settings).to_string()),
        ("inferbench.inputs".to_string(), serde_json::to_string(&inputs)?),
    ];
    let outputs: [(&str, polars::prelude::DataFrame); 5] = [
        ("runs.parquet", tables::runs(&runs)?),
        ("leaderboard.parquet", tables::leaderboard(&runs)?),
        ("trends.parquet", tables::trends(&trends)?),
        ("head_to_head.parquet", tables::head_to_head(&pairs)?),
        ("paired_bootstrap.parquet", tables::paired_bootstrap(&runs, &settings)?),
    ];
    for (name, mut df) in outputs {
        tables::write(&args.out.join(name), &mut df, &metadata)?;
    }
    let summary =
        render::Summary { runs: &runs, skipped: &skipped, trends: &trends, pairs: &pairs, settings: &settings };
    inferbench_store::atomic::write(&args.out.join("summary.md"), render::markdown(&summary).as_bytes())?;
    inferbench_store::atomic::write(&args.out.join("summary.html"), render::html(&summary).as_bytes())?;
    let pair_count: usize = runs.iter().map(|r| r.pairs.len()).sum();
    println!(
        "ib-compare: {} runs, {} responses, {pair_count} paired intervals -> {}",
        runs.len(),
        runs.iter().map(|r| r.response_rows).sum::<usize>(),
        args.out.join("summary.md").display()
    );
    Ok(())
}

fn main() -> ExitCode {
    inferbench_cli::finish("ib-compare", run(Args::parse()))
}
