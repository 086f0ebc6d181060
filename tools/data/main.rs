//! `ib-data`: the generator of the synthetic micro-single-task dataset.
//!
//! `ib-data generate --seed N --out DIR [--spec PATH] [--sample K]` writes `manifest.json`
//! and one `<family>.jsonl` per task family in the reference format. Each family has its own
//! module (`meeting`, `ticket`, `contract`) that decides an item's facts first and renders
//! text from them second, into an `item`; `names` and `pools` hold the shared vocabulary, `dates` the
//! calendar, `rounds` the even plans of kinds over the items, `write` the byte-exact
//! serialisation. Every draw comes from the shared seeded generator (`inferbench_stats::rng`).

// `*rng.pick(list)` picks a `&str` from a list of them: without the `*`, the element type would be
// inferred from where the pick goes (`str`), and clippy's auto-deref suggestion does not compile.
#![allow(clippy::explicit_auto_deref)]
mod args;
mod contract;
mod dates;
mod generate;
mod item;
mod meeting;
mod names;
mod pools;
mod rounds;
mod ticket;
mod write;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = args::Cli::parse();
    let result = match cli.command {
        args::Command::Generate(a) => generate::run(a),
    };
    inferbench_cli::finish("ib-data", result)
}

#[cfg(test)]
mod tests;
