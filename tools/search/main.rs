//! `ib-search`: a capacity search, run as one probe (a one-step load run) per measured rate.
mod args;
mod probe;
mod record;
mod rule;
mod search;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-search", search::run(args))
}
