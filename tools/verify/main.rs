//! `ib-verify`: checks a run on its own, from its files alone (see `verify.rs` for the order
//! of the checks, `--help` for usage), and signs a run's manifest for its publisher.
mod args;
mod failure;
mod files;
mod provenance;
mod rederive;
mod signature;
mod verify;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = args::Args::parse();
    let result = verify::run(&args);
    // A check that does not hold is exit 4 whatever it was (a file's bytes, a link of the
    // seal chain, a signature); every other error keeps the stages' codes.
    if let Err(err) = &result {
        if err.chain().any(|cause| cause.downcast_ref::<failure::Failure>().is_some()) {
            eprintln!("ib-verify: {}", inferbench_cli::message(err));
            return ExitCode::from(inferbench_cli::Exit::LockMismatch as u8);
        }
    }
    inferbench_cli::finish("ib-verify", result)
}
