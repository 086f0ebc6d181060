//! `manifest.json`: a run's inventory, status, and where and when it ran (the run's
//! [`Execution`] facts, whole). Written by `ib-report` as the last step of a run or a
//! re-scoring.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::execution::{Execution, Period, SegmentFacts, StepFacts};
pub use crate::vocab::{EndpointMode, StepStatus};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Manifest {
    pub v: u32,
    pub run_id: String,
    pub workflow: String,
    pub benchmark_slug: String,
    /// `complete` (every scheduled request has a response and every derived file exists and
    /// was derived from the run's current files) or `incomplete`.
    pub status: String,
    /// Why the run is incomplete; empty when it is complete.
    pub status_reasons: Vec<String>,
    /// Requests in `schedule.parquet` (null when it is missing).
    pub scheduled_requests: Option<usize>,
    /// Rows in `responses.parquet` (null when it is missing).
    pub responses: Option<usize>,
    /// The code that wrote this manifest.
    pub written_by: String,
    /// The code that created the run (`lock.json`).
    pub locked_by: String,
    /// The run's execution facts, as `responses.parquet` records them.
    pub execution: Execution,
    /// Every file of the run except this one, by path relative to the run directory.
    pub files: BTreeMap<String, FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileEntry {
    pub bytes: u64,
    pub sha256: String,
}
