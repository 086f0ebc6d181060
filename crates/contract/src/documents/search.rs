//! `search.json`: a capacity search's record, which `ib-search` writes into the search's
//! directory. A search is not one run but one per measured rate (a probe, under `probes/`),
//! each a one-step load run with its own lock, log and `metrics.json`; this document lists the
//! probes in the order they ran, each provider's verdict in each, and what the search found.
//! Every field is derived from the probes' `metrics.json`, so a rescore of the probes rewrites
//! it byte for byte.
use crate::documents::Provenance;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The format of `search.json`. Readers refuse any other.
pub const SEARCH_VERSION: &str = "inferbench-search-v1";

/// The document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchDocument {
    pub version: String,
    /// The code, and every probe's `metrics.json` by `probes/<name>/metrics.json`.
    pub provenance: Provenance,
    /// The spec's `load.search`, as applied.
    pub min_rate: f64,
    pub max_rate: f64,
    pub tolerance: f64,
    pub max_probes: u32,
    pub goodput_target: f64,
    /// The search's rule, in words.
    pub rule: Vec<String>,
    /// The probes, in the order they ran.
    pub probes: Vec<Probe>,
    /// What the search found, one entry per provider, by name.
    pub results: Vec<SearchResult>,
    /// Why the search stopped.
    pub stopped: String,
}

/// One measured rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    /// The probe's directory, relative to the search's (`probes/01`).
    pub run: String,
    /// The rate every provider was offered, in requests per second.
    pub rate: f64,
    /// One entry per provider, by name.
    pub providers: Vec<ProbeVerdict>,
}

/// One provider's figures at one probe's rate (its step's row of the probe's `metrics.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeVerdict {
    pub provider: String,
    pub verdict: Verdict,
    /// The share of the window's requests that met every objective.
    pub goodput: Option<f64>,
    pub achieved_rate: f64,
    pub completed_per_second: f64,
    pub ttft_p99_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    /// Why the step's figures are the client's, not the provider's (empty: they are the provider's).
    pub client_bound: Vec<String>,
}

/// A probe's verdict on one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The step held: at least the goodput target of its requests met every objective.
    Holds,
    /// The step did not hold.
    Fails,
    /// The client could not keep to the schedule: the probe says nothing about the provider.
    ClientBound,
    /// No request of the provider fell in the step's measured window.
    Unmeasured,
}

/// Where a provider's capacity lies, as far as the probes tell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    pub provider: String,
    pub status: SearchStatus,
    /// The highest probed rate that held below every failing one: the capacity found.
    pub holds_at: Option<f64>,
    /// The lowest probed rate that failed.
    pub fails_at: Option<f64>,
}

/// How far the search got for one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchStatus {
    /// `fails_at ≤ holds_at × (1 + tolerance)`: the capacity is `holds_at`, within the tolerance.
    Found,
    /// The lowest rate, `min_rate`, already failed.
    BelowMinRate,
    /// `max_rate` held: the capacity is at least that.
    AtLeastMaxRate,
    /// The probes ran out (`max_probes`) before the bracket narrowed to the tolerance.
    ProbesExhausted,
    /// A probe was client-bound or unmeasured, and the search stopped there.
    Stopped,
}
