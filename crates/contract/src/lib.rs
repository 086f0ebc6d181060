//! `inferbench-contract`: the shape of every file a run holds, and the words in them.
//!
//! Every stage talks to the others only through files in a run directory; this crate says
//! what those files are, so no two stages can disagree about a format. It holds types, their
//! serde shape, their JSON Schema and their pure checks, and the hashes that bind them
//! ([`canonical`], whose `file_digest` is its one read of a file). It knows nothing of where a
//! run lives, how a stream is judged or how a spec is read: giving these types
//! their meaning is the job of the crates above it (`inferbench-judge`, `inferbench-inputs`,
//! `inferbench-store`).
//!
//! - [`event`]: the envelope and events of the raw log that `ib-fetch` appends.
//! - [`tables`]: the rows of every Parquet table, and the [`tables::Table`] trait that names one.
//! - [`documents`]: `metrics.json` and `comparisons.json`; [`manifest`]: `manifest.json`;
//!   [`execution`]: the execution facts, in `responses.parquet`'s metadata;
//!   [`lock`]: `lock.json`; [`seal`]: `events/seal.json`; [`provenance`]: what a derived
//!   file records of its inputs; [`shard`]: how `ib-fetch --shard i/N` shares a run out.
//! - [`metrics`]: the metric catalogue: every reported metric's name, unit, direction,
//!   percentiles and label.
//! - [`vocab`]: the enums of every outcome, classification and family value the files hold.
//! - [`chunk`] and [`lenient_json`]: the providers' wire format, one stream chunk read once.
//! - [`canonical`]: canonical JSON and SHA-256, the hashes every lock and provenance holds.
//! - [`json_schema`]: the generated JSON Schema of each format, committed in `json/`.

pub mod canonical;
pub mod chunk;
pub mod civil;
pub mod documents;
pub mod error;
pub mod event;
pub mod execution;
pub mod family;
pub mod json_schema;
pub mod lenient_json;
pub mod lock;
pub mod manifest;
pub mod metrics;
pub mod provenance;
pub mod seal;
pub mod shard;
pub mod signature;
pub mod tables;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
pub mod vocab;

pub use error::{Error, Result};

/// The major version of every file format inferbench writes. Readers reject other majors.
pub const FORMAT_VERSION: u32 = 1;

/// The code version stamped into every output: the package version and, when built from a
/// git checkout, the commit it was built from.
pub const CODE_VERSION: &str = concat!("inferbench ", env!("CARGO_PKG_VERSION"), " (", env!("IB_GIT_COMMIT"), ")");

/// The `User-Agent` of every request: an RFC 9110 product token with the package version (the
/// commit stays in the log's `code_version`; a provider has no use for it).
pub const USER_AGENT: &str = concat!("inferbench/", env!("CARGO_PKG_VERSION"));
