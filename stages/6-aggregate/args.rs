//! Command-line arguments of `ib-aggregate`.
use clap::Parser;
use inferbench_cli::{RunArg, SpecArg};

/// Compute a run's metrics, provider ranking and paired comparisons.
///
/// Reads lock.json, schedule.parquet, responses.parquet and evaluations.parquet from the run
/// directory, checks that the spec and provider table still match the run's lock, and writes
/// metrics.json, metrics.parquet (per provider × family), pooled.parquet (per provider, with
/// eligibility and rank) and comparisons.json next to them, together. The provider table the
/// spec names supplies model ids and aliases (model identity) and prices (known cost).
/// Nothing is written unless every input is valid; the outputs are byte-identical when
/// re-derived from the same inputs.
#[derive(Debug, Parser)]
#[command(name = "ib-aggregate", version = inferbench_contract::CODE_VERSION, after_help = inferbench_cli::EXIT_CODES_HELP)]
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
        assert!(Args::try_parse_from(["ib-aggregate"]).is_err());
        let args = Args::try_parse_from(["ib-aggregate", "--run", "runs/x"]).unwrap();
        assert_eq!(&*args.spec, Path::new(inferbench_cli::DEFAULT_SPEC));
    }
}
