use clap::{CommandFactory, Parser, ValueEnum};
use inferbench_cli::{DatasetArg, RunArg, SpecArg};
use inferbench_contract::lock::ReleaseHashConvention;
use std::path::PathBuf;

/// Validate inputs, select items deterministically, and lock a new run.
///
/// Checks the spec (every key: values inferbench acts on are range-checked, settings it does
/// not implement must hold the value it does, unknown keys are errors), the provider table
/// (endpoints, model ids, credential variable names, fields a provider may not override) or
/// the spec's inline vendors (against the built-in knowledge of the reference's providers) and
/// the dataset, and reports every problem at once, each naming the file and the key or line.
/// Then creates RUN with lock.json (the hashes of every bound input, keyed by logical name) and
/// selection.parquet (each family's items in their deterministic order, the first N selected).
/// Rerunning on an existing run is a no-op when its inputs are unchanged and an error (exit 4)
/// naming what changed otherwise.
///
/// With --list-inputs, writes nothing and needs no --run: prints the files a run would be
/// locked to, one path per line, so that `make` can re-check the lock whenever one of them
/// changes.
///
/// The dataset release hash, which seeds the selection, keys each file by its logical name,
/// so a run selects the same items wherever it is made. The reference runner keys them by
/// path strings; --release-hash reference (with --reference-lock for an archived run made
/// elsewhere) computes its hash instead, and so selects exactly the reference's items in the
/// reference's order.
#[derive(Debug, Parser)]
#[command(name = "ib-select", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
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
    /// it names if it names one, each prompt template it names, the dataset's manifest.json and
    /// family files), one path per line, and exit. Only the spec is read; exit 3 when it is
    /// invalid.
    #[arg(long)]
    pub list_inputs: bool,
    /// How the dataset release hash keys each file: `logical` (inferbench's portable names:
    /// manifest.json, <family>.jsonl, the templates as the spec names them); `reference` (the
    /// reference runner's path strings: its standard layout, data/micro-single-task/<file> and
    /// src/openbenchmarks_inference/workflows/micro_single_task/assets/prompt_templates/<file>,
    /// or with --reference-lock that lock's); `recorded` (the hash a --reference-lock records,
    /// for a lock whose path strings do not reproduce it). The lock records which, and the keys.
    #[arg(long, value_enum, value_name = "CONVENTION", default_value_t = ReleaseHash::Logical)]
    pub release_hash: ReleaseHash,
    /// A reference run's run-lock.json: take the release hash's keys (its human_input_hashes,
    /// less the spec) or, with --release-hash recorded, the hash itself from it. Every dataset
    /// file and template must have the SHA-256 it records, or nothing is locked (exit 3).
    #[arg(long, value_name = "RUN_LOCK", required_if_eq("release_hash", "recorded"))]
    pub reference_lock: Option<PathBuf>,
}

/// `--release-hash`, as the lock records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReleaseHash {
    Logical,
    Reference,
    Recorded,
}

impl From<ReleaseHash> for ReleaseHashConvention {
    fn from(value: ReleaseHash) -> Self {
        match value {
            ReleaseHash::Logical => ReleaseHashConvention::Logical,
            ReleaseHash::Reference => ReleaseHashConvention::Reference,
            ReleaseHash::Recorded => ReleaseHashConvention::Recorded,
        }
    }
}

impl Args {
    /// The combinations clap cannot express: a reference lock means nothing to the logical
    /// convention, which would silently ignore it.
    pub fn checked(self) -> Result<Args, clap::Error> {
        if self.release_hash == ReleaseHash::Logical && self.reference_lock.is_some() {
            return Err(Args::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "--reference-lock needs --release-hash reference or recorded (the logical release hash uses no keys)",
            ));
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_shared_arguments_and_the_stages_own_parse() {
        let args = Args::try_parse_from(["ib-select", "--run", "r", "--dataset", "d", "--per-family", "2", "--sample"])
            .unwrap();
        assert_eq!((args.run.as_deref(), args.dataset.as_deref()), (Some(Path::new("r")), Some(Path::new("d"))));
        assert_eq!((args.per_family, args.sample, args.list_inputs), (Some(2), true, false));
        assert!(Args::try_parse_from(["ib-select", "--run", "r", "--per-family", "two"]).is_err());
    }

    #[test]
    fn the_release_hash_convention_and_its_reference_lock() {
        let parse = |extra: &[&str]| {
            let base = ["ib-select", "--run", "r"];
            Args::try_parse_from(base.iter().chain(extra)).and_then(Args::checked)
        };
        assert_eq!(parse(&[]).unwrap().release_hash, ReleaseHash::Logical);
        let args = parse(&["--release-hash", "reference"]).unwrap();
        assert_eq!((args.release_hash, args.reference_lock), (ReleaseHash::Reference, None));
        let args = parse(&["--release-hash", "recorded", "--reference-lock", "l.json"]).unwrap();
        assert_eq!(args.reference_lock.as_deref(), Some(Path::new("l.json")));
        let err = parse(&["--release-hash", "recorded"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument, "{err}");
        let err = parse(&["--reference-lock", "l.json"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict, "{err}");
        assert!(parse(&["--release-hash", "paths"]).is_err());
    }

    #[test]
    fn run_is_required_except_for_a_listing() {
        let err = Args::try_parse_from(["ib-select", "--spec", "s.yaml"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument, "{err}");
        let args = Args::try_parse_from(["ib-select", "--list-inputs", "--spec", "s.yaml"]).unwrap();
        assert!(args.list_inputs && args.run.is_none());
    }
}
