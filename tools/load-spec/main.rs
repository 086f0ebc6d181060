//! `ib-load-spec`: a load workflow for one endpoint, without writing a spec by hand.
//!
//! Writes a pipeline directory (`spec.yaml`, `providers.yaml`, `prompts/`) from the bundled
//! load-sweep workflow, its load section and its one provider taken from the command line:
//! what `make load TARGET=… MODEL=… RATES=…` runs before the pipeline's stages. Every value is
//! checked by the spec's and the provider table's own readers before anything is written.
mod args;
mod write;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = args::Args::parse();
    inferbench_cli::finish("ib-load-spec", write::run(args))
}
