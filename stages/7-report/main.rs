//! `ib-report`: a run's `metrics.json` and `comparisons.json` in, `report.md` and the run's
//! `manifest.json` out. A pure function of the run directory's files and the spec; see
//! `report.rs` for the order of work, `render.rs` for the document's sections, `manifest.rs`
//! for the inventory, and `--help` for usage.
mod args;
mod cache;
mod failures;
mod format;
mod html;
mod inputs;
mod labels;
mod leaderboard;
mod load;
mod manifest;
mod paired;
mod parity;
mod render;
mod report;
mod responses;
mod results;
#[cfg(test)]
mod sample;
mod speed;

use clap::Parser;
use std::process::ExitCode;

// The offline stages allocate on one thread and free on another; glibc's arenas serialise that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-report", report::run(args))
}
