//! `ib-import`: a reference runner's run directory → an inferbench run directory.
//!
//! The reference's terminal records (with their embedded stream events), plan, selection and
//! lock become `lock.json`, `selection.parquet`, `schedule.parquet` and an event log in
//! inferbench's format, so `ib-reconstruct` … `ib-report` re-score an archived reference run
//! exactly as they score inferbench's own. Nothing is written unless the whole source checks.
mod args;
mod convert;
mod fields;
mod import;
mod source;

use clap::Parser;

// The offline stages allocate on one thread and free on another; glibc's arenas serialise that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-import", import::run(args))
}
