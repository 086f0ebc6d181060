//! `ib-compare`: many run directories (inferbench's own and imported ones, of any age) as one
//! dataset: the leaderboard over time, each headline metric's trend per provider, provider
//! against provider across runs, a seeded paired bootstrap interval for every pair of
//! providers in every run, and a load run's figures per step and provider with each
//! provider's capacity across runs. Reads only; writes into `--out`. See `--help`.
mod args;
mod bootstrap;
mod compare;
mod discover;
mod drift;
mod load;
mod render;
mod search;
mod stage;
mod stats;
mod tables;
mod under_load;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    inferbench_cli::finish("ib-compare", stage::run(args::Args::parse()))
}
