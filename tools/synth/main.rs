//! `ib-synth`: the event log of a run of any size, written without a network, for benchmarks.
//!
//! Given a run that `ib-select` and `ib-schedule` prepared, it writes `events/0001.jsonl`
//! exactly as `ib-fetch` would have written it against fast simulated providers (the same
//! event types, the same request bodies and headers, streams of the same shape in each
//! provider's wire API's grammar: reasoning deltas, then answer deltas, the finish, usage and
//! the terminal event), with answers derived from
//! the dataset's gold (right or plausibly wrong, as `ib-sim` answers) and a seeded share of
//! failures of every class; then it seals the run with the one sealing entry point. Every
//! stage after the fetch then runs on it unchanged. The answers and the dataset's typed gold
//! are the simulator's own (`inferbench_sim`), the generator the shared one
//! (`inferbench_stats::rng`).
mod args;
mod parallel;
mod plan;
mod profiles;
mod rounds;
mod shares;
mod summary;
mod synth;
mod wire;

use clap::Parser;

// The offline stages allocate on one thread and free on another; glibc's arenas serialise that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-synth", synth::run(args))
}
