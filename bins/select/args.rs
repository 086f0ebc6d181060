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
/// With --list-inputs, writes nothing and needs no --run: prints the files a run would be
/// locked to, one path per line, so that `make` can re-check the lock whenever one of them
/// changes.
#[derive(Debug, Parser)]
#[command(name = "ib-select", version, about, long_about, after_help = inferbench_schemas::cli::EXIT_CODES_HELP)]
// --run is the one shared flag a listing does without; clap still requires it otherwise.
#[command(mut_arg("run", |arg| arg.required(false).required_unless_present("list_inputs")))]
pub struct Args {
    #[command(flatten)]
    pub run: Option<RunArg>,
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
    /// Lock nothing: print the files the run would be locked to (the spec, the provider table
    /// it names, each prompt template it names, the dataset's manifest.json and family files),
    /// one path per line, and exit. Only the spec is read; exit 3 when it is invalid.
    #[arg(long)]
    pub list_inputs: bool,
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
        assert_eq!((args.run.as_deref(), args.dataset.as_deref()), (Some(Path::new("r")), Some(Path::new("d"))));
        assert_eq!((args.per_family, args.sample, args.list_inputs), (Some(2), true, false));
        assert!(Args::try_parse_from(["ib-select", "--run", "r", "--per-family", "two"]).is_err());
    }

    #[test]
    fn run_is_required_except_for_a_listing() {
        let err = Args::try_parse_from(["ib-select", "--spec", "s.yaml"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument, "{err}");
        let args = Args::try_parse_from(["ib-select", "--list-inputs", "--spec", "s.yaml"]).unwrap();
        assert!(args.list_inputs && args.run.is_none());
    }
}
