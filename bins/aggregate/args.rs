//! Command-line arguments of `ib-aggregate`.
use clap::Parser;
use std::path::PathBuf;

/// Compute a run's metrics, provider ranking and paired comparisons.
///
/// Reads lock.json, schedule.parquet, responses.parquet and evaluations.parquet from the run
/// directory, checks that the spec and provider table still match the run's lock, and writes
/// metrics.json, metrics.parquet and comparisons.json next to them. Nothing is written unless
/// every input is valid; the outputs are byte-identical when re-derived from the same inputs.
///
/// Exit codes: 0 success, 1 failure, 2 usage, 3 bad input (a table is malformed or the
/// tables disagree), 4 the spec or provider table differs from the run's lock.
#[derive(Debug, Parser)]
#[command(name = "ib-aggregate", version = inferbench_schemas::CODE_VERSION)]
pub struct Args {
    /// The run directory, e.g. runs/micro-single-task/<run-id>.
    #[arg(long, value_name = "DIR")]
    pub run: PathBuf,

    /// The pipeline spec the run was locked with. Its `providers.table` names the provider
    /// table, which supplies model ids and aliases (model identity) and prices (known cost).
    #[arg(long, value_name = "PATH", default_value = "pipelines/micro-single-task/spec.yaml")]
    pub spec: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn run_is_required_and_spec_has_a_default() {
        assert!(Args::try_parse_from(["ib-aggregate"]).is_err());
        let args = Args::try_parse_from(["ib-aggregate", "--run", "runs/x"]).unwrap();
        assert_eq!(args.spec, PathBuf::from("pipelines/micro-single-task/spec.yaml"));
    }
}
