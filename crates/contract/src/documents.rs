//! `metrics.json` and `comparisons.json`: the documents `ib-aggregate` writes and `ib-report`
//! reads. Both stages use these types, so the writer and the reader cannot drift apart.
//!
//! Field order is the order in the file.
//!
//! - [`metrics`]: `metrics.json`, its per-group rows and the balanced pooled rows.
//! - [`figures`]: the parts of a row: rates with their counts, failure classes, each
//!   percentile metric's summary and flat keys, usage, cost.
//! - [`comparisons`]: `comparisons.json`, the paired analysis over the run's rounds.
//! - [`load`]: `metrics.json`'s `load` section, a load run's figures per step and provider.
//! - [`search`]: `search.json`, a capacity search's probes and what they found.
//! - [`cache`]: `metrics.json`'s `cache_probe` section, the prompt-cache probe's figures.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod cache;
mod comparisons;
mod figures;
mod load;
mod metrics;
mod search;

pub use cache::*;
pub use comparisons::*;
pub use figures::*;
pub use load::*;
pub use metrics::*;
pub use search::*;

/// The format of both documents. Readers refuse any other.
pub const METRICS_VERSION: &str = "inferbench-metrics-v1";

/// The code that wrote a file and the files it was derived from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Provenance {
    /// The code version that wrote the file: package version and git commit.
    pub code_version: String,
    /// Logical file name (never a path) → SHA-256 of every file it was derived from.
    pub inputs: BTreeMap<String, String>,
}

impl Provenance {
    /// Provenance stamped with this build's code version.
    pub fn new(inputs: &BTreeMap<String, String>) -> Self {
        Provenance { code_version: crate::CODE_VERSION.to_string(), inputs: inputs.clone() }
    }
}
