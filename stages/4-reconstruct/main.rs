//! `ib-reconstruct`: rebuild every request's answer and timings from the raw event log alone.
//!
//! Reads `events/*.jsonl`; writes `responses.parquet` (one row per request, its final attempt):
//! reasoning and answer text, TTFO, TTFA, last answer token, E2E, pre-answer reasoning tokens,
//! visible answer tokens and tokens/s, by the one timing function in
//! `inferbench_judge::timing`. Pure: the same log always gives the same bytes.
mod args;
mod reconstruct;

use clap::Parser;

// The offline stages allocate on one thread and free on another; glibc's arenas serialise that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-reconstruct", reconstruct::run(args))
}
