//! `inferbench-testkit`: what the end-to-end tests and the benchmarks both drive, kept in one
//! crate so neither compiles the other's files. A dev-only crate: nothing that ships uses it.
//!
//! - [`reference_run`]: reference-format run directories, built from the reference runner's
//!   own smoke run (`tests/fixtures/reference/smoke-run`), with failures, or grown to any size.
//! - [`fleet_run`]: a fetch against a generated fleet of simulated providers, and the round
//!   figures (launch skew, gap between rounds) of its event log.

pub mod fleet_run;
pub mod reference_run;

/// The repository's root, where the fixtures and the bundled pipeline are.
pub fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
