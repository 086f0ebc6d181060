use clap::Parser;
use std::path::PathBuf;

/// Build the paired-round schedule of a locked run.
///
/// Reads RUN/lock.json and RUN/selection.parquet (and verifies the spec and provider table
/// against the lock); writes RUN/schedule.parquet: one row per request, in round order and,
/// within a round, launch order.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input, 4 lock mismatch.
#[derive(Debug, Parser)]
#[command(name = "ib-schedule", version, about, long_about)]
pub struct Args {
    /// The run directory (created by ib-select).
    #[arg(long)]
    pub run: PathBuf,
    /// The pipeline spec the run was locked with.
    #[arg(long, default_value = "pipelines/micro-single-task/spec.yaml")]
    pub spec: PathBuf,
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
