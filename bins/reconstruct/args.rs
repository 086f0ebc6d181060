use clap::Parser;
use std::path::PathBuf;

/// Rebuild responses and timings from a run's raw event log (no network).
///
/// Reads RUN/events/*.jsonl (a torn last line from a killed fetch is ignored) and writes
/// RUN/responses.parquet. Offsets are milliseconds from the actual send of each request to
/// the arrival of the bytes that completed each event.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input.
#[derive(Debug, Parser)]
#[command(name = "ib-reconstruct", version, about, long_about)]
pub struct Args {
    /// The run directory.
    #[arg(long)]
    pub run: PathBuf,
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
