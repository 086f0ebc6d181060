use clap::Parser;
use inferbench_schemas::cli::{DatasetArg, RunArg, SpecArg};

/// Validate inputs, select items deterministically, and lock a new run.
///
/// Checks the spec (every key: values inferbench acts on are range-checked, settings it does
/// not implement must hold the value it does, unknown keys are errors), the provider table
/// (endpoints, model ids, credential variable names, fields a provider may not override) and
/// the dataset, and reports every problem at once, each naming the file and the key or line.
/// Then creates RUN with lock.json (the hashes of every bound input, keyed by logical name) and
/// selection.parquet (each family's items in their deterministic order, the first N selected).
/// Rerunning on an existing run is a no-op when its inputs are unchanged and an error (exit 4)
/// naming what changed otherwise.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input (nothing written), 4 lock mismatch.
#[derive(Debug, Parser)]
#[command(name = "ib-select", version, about, long_about)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub spec: SpecArg,
    #[command(flatten)]
    pub dataset: DatasetArg,
    /// Items to select per task family (default: the spec's selected_items_per_task_family).
    #[arg(long, value_name = "N")]
    pub per_family: Option<usize>,
    /// Accept a small sample dataset: its manifest counts need not equal the spec's.
    #[arg(long)]
    pub sample: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::path::Path;

    #[test]
    fn cli_definition_is_valid() {
        Args::command().debug_assert();
    }

    #[test]
    fn the_shared_arguments_and_the_stages_own_parse() {
        let args = Args::try_parse_from(["ib-select", "--run", "r", "--dataset", "d", "--per-family", "2", "--sample"])
            .unwrap();
        assert_eq!((&*args.run, args.dataset.as_deref()), (Path::new("r"), Some(Path::new("d"))));
        assert_eq!((args.per_family, args.sample), (Some(2), true));
        assert!(Args::try_parse_from(["ib-select", "--run", "r", "--per-family", "two"]).is_err());
    }
}
