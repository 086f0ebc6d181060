//! `ib-evaluate`: scores each response of a run against the dataset's gold answers.
//!
//! Reads `responses.parquet` and writes `evaluations.parquet`; see `args.rs` for the CLI and
//! `seed-runner.md` §9 for the contract (strict JSON, one rubric per task family).
use clap::Parser;
use std::process::ExitCode;

// The offline stages allocate on one thread and free on another; glibc's arenas serialise that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod args;
mod evaluate;
mod json_strict;
mod rubric;

fn main() -> ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-evaluate", evaluate::run(args))
}
