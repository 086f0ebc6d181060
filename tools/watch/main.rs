//! `ib-watch`: a live, read-only view of a run from its event log alone.
//!
//! Reads `lock.json`, `schedule.parquet` and `events/*.jsonl` (following the log as `ib-fetch`
//! appends to it) and shows rounds done, each provider's outcomes and TTFA/E2E p50s (by the
//! timing function `ib-reconstruct` uses and the percentiles `ib-aggregate` uses), the
//! requests in flight, recent failures, elapsed time and ETA, and whether a fetch is running.
//! Never writes into the run and never touches the network.
mod args;
mod follow;
mod snapshot;
mod tally;
mod text;
mod tui;
mod watch;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-watch", watch::run(args))
}
