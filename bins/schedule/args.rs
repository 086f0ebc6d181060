use clap::Parser;
use inferbench_schemas::cli::{RunArg, SpecArg};

/// Build the paired-round schedule of a locked run.
///
/// Reads RUN/lock.json and RUN/selection.parquet (and verifies the spec and provider table
/// against the lock); writes RUN/schedule.parquet: one row per request, in round order and,
/// within a round, launch order.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input (a missing, unreadable or corrupt
/// file; nothing written), 4 lock mismatch.
#[derive(Debug, Parser)]
#[command(name = "ib-schedule", version, about, long_about)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub spec: SpecArg,
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
