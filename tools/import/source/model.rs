//! What a reference run directory holds once read and checked: the partition, the plan's
//! units and rounds, the round artifacts, the terminal records with their stream events, and
//! the lock's and the selection's facts.
use inferbench_contract::vocab::TaskFamily;
use serde_json::Value;
use std::collections::BTreeMap;

/// Which of the reference's partitions a run directory's records belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Smoke(u32),
    Full,
}

impl Kind {
    /// `attempt-N` or `full`: the directory name under `raw/`, `artifacts/rounds/`, ….
    pub fn partition(self) -> String {
        match self {
            Kind::Smoke(n) => format!("attempt-{n}"),
            Kind::Full => "full".to_string(),
        }
    }

    /// The suffix of the partition's derived files (`metrics-attempt-1.json`, `metrics.json`).
    pub fn suffix(self) -> String {
        match self {
            Kind::Smoke(n) => format!("-attempt-{n}"),
            Kind::Full => String::new(),
        }
    }

    pub fn plan_file(self) -> String {
        match self {
            Kind::Smoke(n) => format!("artifacts/smoke-plan-attempt-{n}.json"),
            Kind::Full => "artifacts/full-plan.json".to_string(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Smoke(_) => "smoke",
            Kind::Full => "full",
        }
    }

    pub fn attempt(self) -> Option<u32> {
        match self {
            Kind::Smoke(n) => Some(n),
            Kind::Full => None,
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        if text == "full" {
            return Some(Kind::Full);
        }
        let n: u32 = text.strip_prefix("attempt-")?.parse().ok()?;
        (n >= 1).then_some(Kind::Smoke(n))
    }
}

/// One scheduled request of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub request_id: String,
    pub round_id: String,
    pub round_index: u64,
    pub provider: String,
    pub launch_index: u64,
    pub task_family: TaskFamily,
    pub item_id: String,
}

/// One paired round of the plan, its requests in launch order.
#[derive(Debug, Clone)]
pub struct Round {
    pub round_id: String,
    pub round_index: u64,
    pub units: Vec<Unit>,
}

/// The reference's record of a finished round.
#[derive(Debug, Clone)]
pub struct RoundArtifact {
    pub launch_skew_ms: f64,
    pub resumed_partial_round: bool,
}

/// How the reference ended a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    Completed,
    Timeout,
    HttpError,
    /// A transport failure of the HTTP library (reset, chunked-encoding error, …).
    TransportError,
    /// `transport_error` with error type `invalid_sse`: data that was not a JSON object, or a
    /// type, value or tokenizer error while reading the stream.
    InvalidSse,
    /// The `runner_error` the reference itself scores as a transport error (§5.9).
    HistoricalRunnerError,
    /// Any other `runner_error`: the runner failed, not the provider.
    RunnerError,
}

/// What one reference stream event held.
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    Comment(String),
    Data(String),
}

#[derive(Debug, Clone)]
pub struct RefEvent {
    pub offset_ms: f64,
    pub body: EventBody,
    pub sse_event: Option<String>,
    pub sse_id: Option<String>,
    pub sse_retry: Option<String>,
}

/// One terminal record, checked.
#[derive(Debug, Clone)]
pub struct Record {
    pub unit: Unit,
    pub start_ns: u64,
    pub ended_ns: Option<u64>,
    pub started_at: Option<String>,
    pub terminal: Terminal,
    pub http_status: Option<u16>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
    pub endpoint: String,
    pub body: Value,
    pub headers: Vec<(String, String)>,
    /// The body of a non-2xx response, as text.
    pub response_body: Option<String>,
    /// The rate-limit headers the reference captured (redacted by it).
    pub head_headers: Vec<(String, String)>,
    pub provider_request_id: Option<String>,
    pub done_marker: bool,
    /// In arrival order (the reference's offsets, stably sorted as its recompute sorts them).
    pub events: Vec<RefEvent>,
    /// The record as the reference wrote it, its events without their payloads (the log
    /// holds those): what the log has no field for, kept in the imported run.
    pub kept: Value,
}

/// The reference lock's facts the import binds or checks.
#[derive(Debug, Clone)]
pub struct RefLock {
    pub run_id: String,
    pub benchmark_slug: String,
    pub dataset_release_hash: String,
    pub selection_hash: String,
    pub execution_configuration_hash: Option<String>,
    pub resolved_adapters_sha256: Option<String>,
    /// The reference's keys are machine paths; these are their file names → SHA-256.
    pub input_hashes: BTreeMap<String, String>,
    pub execution_region: Option<String>,
    pub hostname_hash: Option<String>,
    pub sha256: String,
}

#[derive(Debug, Clone)]
pub struct RefSelection {
    pub algorithm_version: String,
    /// Family → (its full order, its seed as a decimal string).
    pub families: BTreeMap<TaskFamily, (Vec<String>, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_named_and_parsed_both_ways() {
        assert_eq!(Kind::parse("full"), Some(Kind::Full));
        assert_eq!(Kind::parse("attempt-3"), Some(Kind::Smoke(3)));
        for bad in ["attempt-0", "attempt-", "attempt-x", "attempt--1", "smoke", "Full", ""] {
            assert_eq!(Kind::parse(bad), None, "{bad:?}");
        }
        for kind in [Kind::Smoke(1), Kind::Smoke(12), Kind::Full] {
            assert_eq!(Kind::parse(&kind.partition()), Some(kind));
        }
        let smoke = Kind::Smoke(2);
        assert_eq!(
            (smoke.partition(), smoke.suffix(), smoke.plan_file(), smoke.name(), smoke.attempt()),
            ("attempt-2".into(), "-attempt-2".into(), "artifacts/smoke-plan-attempt-2.json".into(), "smoke", Some(2))
        );
        let full = Kind::Full;
        assert_eq!(
            (full.partition(), full.suffix(), full.plan_file(), full.name(), full.attempt()),
            ("full".into(), String::new(), "artifacts/full-plan.json".into(), "full", None)
        );
    }
}
