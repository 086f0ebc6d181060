//! The execution facts: how a run was made, as its event log records it. Each fetch segment
//! (where and on what it ran, with which code, against which endpoints, with which deadline),
//! the wall-clock period of the log, how much of it was resumed, and a load run's steps.
//!
//! They are a run output of their own, derived from the log by `ib-reconstruct` with the
//! responses and stored beside them: `responses.parquet`'s key-value metadata holds them as
//! one JSON object under [`METADATA_KEY`] (schema `json/execution.schema.json`). `ib-aggregate`
//! reads a load run's steps from there and `ib-report` states them in the report and copies
//! them whole into `manifest.json`'s `execution`, neither reading the log again.
use crate::vocab::{EndpointMode, StepStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The key of `responses.parquet`'s metadata that holds the run's [`Execution`] as JSON.
pub const METADATA_KEY: &str = "inferbench.execution";

/// The execution facts of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Execution {
    /// One entry per `ib-fetch` process that appended to the log.
    pub segments: Vec<SegmentFacts>,
    /// First and last instant of the log, in UTC (null before any fetch).
    pub wall_clock_period: Option<Period>,
    /// The clock every `t_ns` and offset is measured on.
    pub clock: String,
    /// `simulated` (ib-sim), `providers` (the provider table's endpoints) or `imported`
    /// (ib-import): a run never mixes them. Null before any fetch.
    pub endpoint_mode: Option<EndpointMode>,
    /// Rounds that a resumed fetch completed after an earlier one stopped part-way (their
    /// requests were not all sent together).
    pub resumed_rounds: u64,
    /// Attempts sent again because a stopped fetch left them without an outcome; the
    /// interrupted attempts stay in the log and are never scored.
    pub resent_attempts: u64,
    /// A load run's steps as the log records them, one entry per run of a step, in log
    /// order; absent in the closed-loop workflow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepFacts>,
}

/// One run of a load step, from its `step_opened` and `step_closed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepFacts {
    pub step: u32,
    pub attempt: u32,
    /// When it opened, on the run clock (ns): the zero of its requests' intended times.
    pub opened_t_ns: u64,
    /// When it closed; null when the log holds no `step_closed` for it (a fetch still
    /// running or stopped without a resume).
    pub closed_t_ns: Option<u64>,
    pub status: Option<StepStatus>,
    pub scheduled_requests: u64,
    pub requests_sent: u64,
    pub peak_in_flight: u64,
    /// The fetch process's CPU time during the step, ns.
    pub cpu_ns: Option<u64>,
    pub client_resource_errors: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SegmentFacts {
    pub segment: u32,
    /// The shard whose fetch wrote it (`ib-fetch --shard i/N`); absent when unsharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
    /// UTC time the segment opened, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub opened_at: String,
    pub code_version: String,
    /// `providers`, `simulated` or `imported`.
    pub endpoint_mode: EndpointMode,
    pub deadline_ms: u64,
    pub execution_region: String,
    /// First 16 hex digits of SHA-256 of the host name.
    pub host_sha256_16: String,
    pub os: String,
    pub arch: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Period {
    pub start: String,
    pub end: String,
}
