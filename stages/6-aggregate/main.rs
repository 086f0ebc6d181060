//! `ib-aggregate`: a run's responses and evaluations in; metrics, ranking and paired
//! comparisons out (`metrics.json`, `metrics.parquet`, `pooled.parquet`, `comparisons.json`).
//! A pure function of the run directory's files: it never touches the network. See
//! `aggregate.rs` for the order of work and `--help` for usage.
mod aggregate;
mod api_pairs;
mod args;
mod cache;
mod comparisons;
mod error;
mod facts;
mod figures;
#[cfg(test)]
mod fixture;
mod group;
mod inputs;
mod join;
mod load;
mod metrics;
mod output;
mod pooled;
mod separation;
mod timeline;

use clap::Parser;
use std::process::ExitCode;

// The offline stages allocate on one thread and free on another; glibc's arenas serialise that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-aggregate", aggregate::run(args))
}
