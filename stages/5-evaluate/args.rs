//! Command-line arguments of `ib-evaluate`.
use clap::Parser;
use inferbench_cli::{DatasetArg, RunArg, SpecArg};

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
    after_help = inferbench_cli::EXIT_CODES_HELP
)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,

    #[command(flatten)]
    pub spec: SpecArg,

    #[command(flatten)]
    pub dataset: DatasetArg,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    #[test]
    fn run_is_required_and_the_rest_default() {
        assert!(Args::try_parse_from(["ib-evaluate"]).is_err());
        let args = Args::try_parse_from(["ib-evaluate", "--run", "runs/x/r1"]).unwrap();
        assert_eq!(PathBuf::from(args.run), PathBuf::from("runs/x/r1"));
        assert_eq!(&*args.spec, Path::new(inferbench_cli::DEFAULT_SPEC));
        assert_eq!(args.dataset.as_deref(), None);
    }
}
