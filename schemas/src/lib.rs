//! `inferbench-schemas`: the contract between inferbench's stage binaries.
//!
//! Every stage talks to the others only through files in a run directory. This crate owns
//! the shape of those files and the code that reads and writes them, so no two stages can
//! disagree about a format:
//!
//! - [`event`]: the raw event log that `ib-fetch` appends (JSON Lines, one envelope a line).
//! - [`tables`]: the rows of every Parquet table (`selection`, `schedule`, `responses`,
//!   `evaluations`, `metrics`), with [`parquet_io`] to write them atomically with provenance.
//! - [`jsonl`]: the append-only writer and the tolerant reader (a torn last line is ignored).
//! - [`run`]: the run-directory layout; [`lock`]: what a run is bound to and its verification;
//!   [`pipeline`]: a run's inputs opened and verified against its lock in one call.
//! - [`documents`]: the `metrics.json` and `comparisons.json` documents.
//! - [`spec`], [`providers`], [`dataset`]: the human inputs (pipeline spec, provider table,
//!   dataset in the reference format) and their strict validation; [`known_providers`]: the
//!   built-in wire details of the reference runner's ten providers, which complete a spec
//!   that lists them inline as the reference does.
//! - [`vocab`]: the enums of every outcome, classification and family value the files hold.
//! - [`chunk`]: one stream chunk read once into the fields the judge and the timing use.
//! - [`stream`]: when a 2xx event stream is over and how it ended, for fetch (live) and
//!   reconstruct (replay); [`lenient_json`] reads payloads as the reference's parser does.
//! - [`timing`]: the one timing function that turns logged SSE events into TTFO, TTFA, E2E and
//!   tokens/s; `ib-reconstruct` and `ib-watch` both call it, so they can never disagree.
//! - [`percentile`]: the nearest-rank percentiles in integer ranks that `ib-aggregate` reports
//!   and `ib-watch` shows live.
//! - [`cli`]: shared exit codes and the error-to-exit-code mapping every `main` uses.
//!
//! The generated JSON Schema of each format lives in `schemas/json/` and a test keeps it in
//! step with these types.

pub mod atomic;
pub mod canonical;
pub mod chunk;
pub mod civil;
pub mod cli;
pub mod dataset;
pub mod documents;
pub mod error;
pub mod event;
pub mod event_log;
pub mod events_table;
pub mod execution;
pub mod json_schema;
pub mod jsonl;
pub mod known_providers;
pub mod lenient_json;
pub mod lock;
pub mod manifest;
pub mod parquet_io;
pub mod percentile;
pub mod pipeline;
pub mod provenance;
pub mod providers;
pub mod reference_records;
pub mod rules;
pub mod run;
pub mod sealed;
pub mod spec;
pub mod stream;
pub mod tables;
pub mod timing;
pub mod tokenizer;
pub mod vocab;

pub use error::{Error, Result};

/// The major version of every file format this crate writes. Readers reject other majors.
pub const FORMAT_VERSION: u32 = 1;

/// The code version stamped into every output: the package version and, when built from a
/// git checkout, the commit it was built from.
pub const CODE_VERSION: &str = concat!("inferbench ", env!("CARGO_PKG_VERSION"), " (", env!("IB_GIT_COMMIT"), ")");

/// The `User-Agent` of every request: an RFC 9110 product token with the package version (the
/// commit stays in the log's `code_version`; a provider has no use for it).
pub const USER_AGENT: &str = concat!("inferbench/", env!("CARGO_PKG_VERSION"));

/// Worker threads for a stage's parallel work: the machine's cores, at most four (beyond
/// that the stages wait on their reader, not on the workers).
pub fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4)
}
