use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Generate the synthetic micro-single-task dataset.
///
/// Writes, deterministically from a seed, a dataset in the reference format: manifest.json
/// (frozen, freeze-ready, item counts per family) and one JSON Lines file per task family
/// (meeting-notes-lookup, ticket-triage, contract-terms-extraction), each row carrying the
/// prompt (the family's system template and a generated user message), the output schema,
/// the gold answer, accepted aliases and o200k_base token counts. The same seed always writes
/// byte-identical files. The result is checked with the pipeline's strict dataset loader
/// before the command succeeds; the SHA-256 of each written file is printed.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input (spec or templates).
#[derive(Debug, Parser)]
#[command(name = "ib-data", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a dataset (manifest.json and <family>.jsonl) into a directory.
    ///
    /// Every item is built from facts decided first (who owns what, which triage rule
    /// applies, which contract terms hold) and rendered into text afterwards, so the gold is
    /// correct by construction. Item i of a family depends only on the seed and i: a
    /// --sample K dataset holds exactly the first K items of each family of the full one.
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The seed. The published dataset uses 20261129.
    #[arg(long, default_value_t = 20261129)]
    pub seed: u64,
    /// The directory to write (created if missing; existing dataset files are replaced),
    /// e.g. data/micro-single-task.
    #[arg(long)]
    pub out: PathBuf,
    /// The pipeline spec: item counts per family, token bands and prompt templates.
    #[arg(long, default_value = "pipelines/micro-single-task/spec.yaml")]
    pub spec: PathBuf,
    /// Write a small sample of K items per family instead of the spec's counts (load it
    /// with the stages' --sample flag).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=9999))]
    pub sample: Option<u64>,
}
