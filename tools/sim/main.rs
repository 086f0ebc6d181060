//! `ib-sim`: simulated OpenAI-compatible streaming providers on loopback.
//!
//! Each provider of the profile file is served at `POST /{slug}/v1/chat/completions`,
//! `POST /{slug}/v1/responses` and `POST /{slug}/v1/messages`, each route in its API's
//! streaming grammar (`stream.rs`, `stream/responses.rs`, `stream/messages.rs`), with its own
//! latency and speed distributions, reasoning, chunking, accuracy, faults and grammar dialect;
//! answers come from the dataset's gold. With `--log`, every request's draws and the send time of each
//! answer event are appended as one JSON line: the ground truth for checking a client.
//! Besides the latency and speed of the published providers it reproduces hostile wire
//! behaviour (see `fault.rs`): mid-stream errors, non-SSE answers, hangs, endless and
//! oversized lines, echoed credentials, odd line endings and split UTF-8.
//! `ib-sim generate-fleet --providers N --out DIR [--zero-latency]` writes a pipeline of N
//! simulated providers (spec, prompts, provider table, profiles) for measuring one `ib-fetch`
//! against a large round; one `ib-sim` serves all of them (see `fleet.rs`).
mod args;
mod chunk;
mod credential;
mod draw;
mod fault;
mod fleet;
mod listen;
mod log;
mod play;
mod profile;
mod schedule;
mod server;
mod startup;
mod stratified;
mod stream;
mod wire;

#[cfg(test)]
mod calibration;

use clap::Parser;

/// Exit codes are the contract's: 0 ok, 1 failure, 2 usage, 3 bad input (see `startup.rs`).
fn main() -> std::process::ExitCode {
    inferbench_cli::finish("ib-sim", startup::run(args::Args::parse()))
}
