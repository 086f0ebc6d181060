//! Command-line arguments of `ib-evaluate`.
use clap::Parser;
use std::path::PathBuf;

/// Score every response of a run against the dataset's gold answers.
///
/// Reads `<RUN>/responses.parquet` and writes `<RUN>/evaluations.parquet`: one row per
/// response, in the same order. A non-2xx response is a `failed_request`; a 2xx answer is
/// parsed as strict JSON (no markdown fences, no repair) and scored with its task family's
/// rubric as `valid_result`, `incorrect_result` or `invalid_result`. The dataset must hash to
/// what `<RUN>/lock.json` recorded. No network; the output is byte-identical when re-run on
/// the same inputs, so an archived run can be re-scored with new code.
#[derive(Debug, Parser)]
#[command(
    name = "ib-evaluate",
    version,
    after_help = "Exit codes: 0 success; 1 failure (I/O); 2 usage error; \
                  3 bad input (nothing written); 4 the dataset differs from the run's lock.json \
                  (nothing written)."
)]
pub struct Args {
    /// The run directory (holds lock.json and responses.parquet).
    #[arg(long, value_name = "DIR")]
    pub run: PathBuf,

    /// The pipeline spec the run was created from (task families, prompt templates).
    #[arg(long, value_name = "PATH", default_value = "pipelines/micro-single-task/spec.yaml")]
    pub spec: PathBuf,

    /// The dataset directory holding the gold answers [default: the spec's `dataset.source`,
    /// relative to the working directory].
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn run_is_required_and_the_rest_default() {
        assert!(Args::try_parse_from(["ib-evaluate"]).is_err());
        let args = Args::try_parse_from(["ib-evaluate", "--run", "runs/x/r1"]).unwrap();
        assert_eq!(args.run, PathBuf::from("runs/x/r1"));
        assert_eq!(args.spec, PathBuf::from("pipelines/micro-single-task/spec.yaml"));
        assert_eq!(args.dataset, None);
    }
}
