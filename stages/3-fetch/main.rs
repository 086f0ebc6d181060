//! `ib-fetch`: execute a run's schedule against the providers and record every byte.
//!
//! Per round, all providers are released together behind one barrier and the next round
//! waits for every terminal outcome. Every fact (request sent, response head, each SSE event
//! with the arrival time of its bytes, the terminal outcome) is appended to
//! `events/<segment>.jsonl` as it happens (by a writer thread, about a millisecond behind); a
//! stopped fetch loses nothing already received, a killed one at most that last millisecond,
//! and rerunning the same command resumes. When every scheduled request is terminal the log is
//! sealed into `events.parquet`.
mod allocator;
mod args;
mod client;
mod credentials;
mod echo;
mod fetch;
mod log;
mod pacer;
mod plan;
mod prepared;
mod priority;
mod release;
mod resume;
mod rounds;
mod seal;
mod segment;
mod steps;
mod transport;

use clap::Parser;

fn main() -> std::process::ExitCode {
    allocator::keep_c_library_memory();
    let args = args::Args::parse();
    inferbench_cli::finish("ib-fetch", fetch::run(args))
}
