//! `ib-select`: validate the spec, the provider table and the dataset, select each task
//! family's items deterministically, and bind the run to its inputs.
//!
//! Reads `spec.yaml`, the provider table and a dataset in the reference format; writes
//! `lock.json` and `selection.parquet` into a new run directory. Nothing is created when any
//! input is invalid; every violation is reported as `file:line: field: what is wrong`.
mod args;
mod cpython_random;
mod release;
mod select;
mod selection;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse().checked().unwrap_or_else(|e| e.exit());
    inferbench_cli::finish("ib-select", select::run(args))
}
