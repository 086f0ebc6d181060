use clap::Parser;
use inferbench_cli::{RunArg, SpecArg};

/// Build the paired-round schedule of a locked run.
///
/// Reads RUN/lock.json and RUN/selection.parquet (and verifies the spec and provider table
/// against the lock); writes RUN/schedule.parquet: one row per request, in round order and,
/// within a round, launch order.
#[derive(Debug, Parser)]
#[command(name = "ib-schedule", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub spec: SpecArg,
}
