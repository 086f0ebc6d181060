//! `ib-schedule`: turn the selection into paired rounds.
//!
//! Families round-robin (meeting, ticket, contract, meeting, …), every provider in every
//! round, the launch order rotated by one provider per round, and request ids derived from
//! the round's content exactly as the reference runner derives them. Writes
//! `schedule.parquet`; pure: the same lock and selection always give the same bytes, but for
//! the rounds' nonces (`inference.cache_busting`, the cache probe: `cache.rs`), drawn afresh
//! for every run.
mod args;
mod arrivals;
mod cache;
mod load;
mod rounds;
mod schedule;
mod workload;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-schedule", schedule::run(args))
}
