//! Command-line arguments of `ib-report`.
use clap::Parser;
use inferbench_cli::{RunArg, SpecArg};

/// Render a run's report.md from its metrics and paired comparisons, and its manifest.json.
///
/// Reads metrics.json, comparisons.json and lock.json from the run directory, the spec (title,
/// timeout, required metric columns) and its provider table (whose labels are the names the
/// report shows), checks that they all belong to the same run and lock, and writes report.md:
/// the leaderboard, the balanced pooled summary, one table per task family, the paired
/// comparisons and the provenance; and report.html, the same as one self-contained page with
/// charts (per-provider distributions, outcomes, the run's timeline, paired differences).
/// Then writes manifest.json: every file of the run with its size and SHA-256, the run's
/// status, and where and when it was fetched (execution region, hashed host name, OS).
/// Run ib-aggregate first. Both are byte-identical when re-rendered from the same inputs.
#[derive(Debug, Parser)]
#[command(name = "ib-report", version = inferbench_contract::CODE_VERSION, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,

    #[command(flatten)]
    pub spec: SpecArg,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn run_is_required_and_spec_has_a_default() {
        assert!(Args::try_parse_from(["ib-report"]).is_err());
        let args = Args::try_parse_from(["ib-report", "--run", "runs/x"]).unwrap();
        assert_eq!(&*args.spec, Path::new(inferbench_cli::DEFAULT_SPEC));
    }
}
