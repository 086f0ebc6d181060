//! The command line of `ib-compare`.
use clap::Parser;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "ib-compare",
    version,
    about = "Compare many inferbench runs: leaderboard over time, trends, provider against provider, paired \
             bootstrap confidence intervals",
    after_help = inferbench_cli::EXIT_CODES_HELP
)]
pub struct Args {
    /// Run directories, or glob patterns matching them (quote them to pass them to ib-compare
    /// rather than the shell), e.g. 'runs/*/*'. A glob's matches that are not scored runs (no
    /// responses.parquet, or no pooled.parquet/metrics.parquet yet) are skipped and listed with
    /// the reason; a directory named outright must be a scored run. A capacity
    /// search's directory (search.json) is no run: it is skipped, and what it found is listed
    /// (its probes are runs: 'DIR/probes/*').
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// Where to write the comparison (created if missing): runs.parquet, leaderboard.parquet,
    /// trends.parquet, head_to_head.parquet, paired_bootstrap.parquet, load_steps.parquet (load
    /// runs' steps), drift.parquet (every drift test between a provider's consecutive runs),
    /// summary.md, summary.html.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The bootstrap's seed: the same runs and seed give the same intervals.
    #[arg(long, default_value_t = 20261201)]
    pub seed: u64,
    /// Bootstrap resamples per interval.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub resamples: u64,
    /// Confidence level of the intervals, in percent.
    #[arg(long, default_value_t = 95, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub confidence: u32,
    /// The drift alarms' false-alarm rate: the chance that a run whose providers did not change
    /// raises any alarm (family-wise over the run's tests, by Holm's method), as a fraction.
    #[arg(long, default_value_t = 0.01, value_parser = alpha)]
    pub drift_alpha: f64,
    /// Worker threads reading runs and drawing resamples [default: the available cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

fn alpha(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(a) if a > 0.0 && a <= 0.5 => Ok(a),
        _ => Err(format!("`{text}` is not a rate in (0, 0.5]")),
    }
}
