use clap::Parser;
use std::path::PathBuf;

/// Validate inputs, select items deterministically, and lock a new run.
///
/// Creates RUN with lock.json (the hashes of every bound input, keyed by logical name) and
/// selection.parquet (each family's items in their deterministic order, the first N selected).
/// Rerunning on an existing run is a no-op when its inputs are unchanged and an error (exit 4)
/// naming what changed otherwise.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input (nothing written), 4 lock mismatch.
#[derive(Debug, Parser)]
#[command(name = "ib-select", version, about, long_about)]
pub struct Args {
    /// The run directory to create, e.g. runs/micro-single-task/run-20261129-120000.
    #[arg(long)]
    pub run: PathBuf,
    /// The pipeline spec.
    #[arg(long, default_value = "pipelines/micro-single-task/spec.yaml")]
    pub spec: PathBuf,
    /// The dataset directory (default: the spec's dataset.source).
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Items to select per task family (default: the spec's selected_items_per_task_family).
    #[arg(long, value_name = "N")]
    pub per_family: Option<usize>,
    /// Accept a small sample dataset: its manifest counts need not equal the spec's.
    #[arg(long)]
    pub sample: bool,
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
