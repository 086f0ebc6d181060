//! The raw event log written by `ib-fetch`: facts only, never conclusions.
//!
//! Each line of `events/<segment>.jsonl` is an [`Envelope`]:
//! `{"v":1,"run_id":…,"seq":N,"t_ns":…,"type":"…","data":{…}}`.
//! `seq` is gap-free across all segments of a run. `t_ns` is a monotonic clock anchored at the
//! run's first fetch: within one segment (one `ib-fetch` process) it is `CLOCK_MONOTONIC`
//! since the segment opened plus the segment's wall-clock offset from the run's start, so all
//! intervals inside one request are exact monotonic differences.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Envelope {
    /// Format major version ([`crate::FORMAT_VERSION`]).
    pub v: u32,
    pub run_id: String,
    /// Gap-free position in the run's log, starting at 0.
    pub seq: u64,
    /// Nanoseconds on the run's monotonic clock.
    pub t_ns: u64,
    #[serde(flatten)]
    pub event: Event,
}

/// Every fact the log can hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
pub enum Event {
    SegmentOpened(SegmentOpened),
    RoundReleased(RoundReleased),
    RequestStarted(RequestStarted),
    ResponseHead(ResponseHead),
    SseEvent(SseEvent),
    RequestTerminal(RequestTerminal),
    RoundClosed(RoundClosed),
    SegmentClosed(SegmentClosed),
}

/// A fetch process started appending to the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SegmentOpened {
    /// 1-based segment number: `events/<segment as 4 digits>.jsonl`.
    pub segment: u32,
    /// Wall clock (UTC, ns since the Unix epoch) when the segment opened: the anchor only.
    pub wall_clock_unix_ns: u64,
    pub code_version: String,
    /// SHA-256 of `schedule.parquet`.
    pub schedule_sha256: String,
    pub scheduled_requests: u64,
    /// Requests already terminal from earlier segments.
    pub already_terminal: u64,
    /// `providers` (endpoints of providers.yaml) or `simulated` (`--endpoint-base`).
    pub endpoint_mode: String,
    pub deadline_ms: u64,
    /// Where the client ran: `BENCHMARK_EXECUTION_REGION`, or `local-unspecified`.
    pub execution_region: String,
    /// First 16 hex digits of SHA-256 of the host name (the name itself is never recorded).
    pub host_sha256_16: String,
    pub os: String,
    pub arch: String,
}

/// The round's shared barrier opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundReleased {
    pub round_id: String,
    pub round_index: u64,
    /// The requests released, in launch order (a resumed round releases only its missing ones).
    pub request_ids: Vec<String>,
}

/// A request is about to be sent. `t_ns` of the envelope is the actual send time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestStarted {
    pub request_id: String,
    /// 1 for the first try; a resumed fetch re-sends an interrupted request as attempt 2, …
    pub attempt: u32,
    pub round_id: String,
    pub round_index: u64,
    pub provider: String,
    pub task_family: String,
    pub item_id: String,
    pub endpoint: String,
    /// The exact JSON body sent.
    pub body: Value,
    /// Request headers with credentials redacted.
    pub headers: BTreeMap<String, String>,
    /// When the barrier released this request (run clock, ns).
    pub intended_t_ns: u64,
}

/// The response status line and headers arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseHead {
    pub request_id: String,
    pub attempt: u32,
    pub status: u16,
    /// Headers that matter (request ids, rate limits, retry-after, content type), redacted.
    pub headers: BTreeMap<String, String>,
}

/// One dispatched server-sent event (or comment); `t_ns` is the arrival of the bytes that
/// completed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SseEvent {
    pub request_id: String,
    pub attempt: u32,
    /// 0-based position among this attempt's events.
    pub index: u32,
    /// The joined `data` field (redacted); absent for a comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
    /// A comment line's text (after the colon); such a record has no `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// How a request attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A 2xx response whose stream ended (with or without `[DONE]`).
    Completed,
    /// The one deadline over the whole exchange expired.
    Timeout,
    /// A non-2xx status (including 1xx/3xx: redirects are never followed).
    HttpError,
    /// Connect, TLS or read failure.
    TransportError,
    /// A 2xx stream carried an event whose data is neither `[DONE]` nor a JSON object.
    InvalidStream,
    /// The fetch process stopped before this attempt ended; recorded when a later fetch resumes.
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Timeout => "timeout",
            Outcome::HttpError => "http_error",
            Outcome::TransportError => "transport_error",
            Outcome::InvalidStream => "invalid_stream",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// The terminal outcome of one request attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestTerminal {
    pub request_id: String,
    pub attempt: u32,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Short machine-readable error kind, e.g. `deadline`, `connect`, `body`, `invalid_sse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The error response body, redacted and capped at 4 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_body: Option<String>,
    pub bytes_received: u64,
    pub done_seen: bool,
}

/// Every request of a round reached a terminal outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundClosed {
    pub round_id: String,
    pub round_index: u64,
    /// Latest minus earliest actual send time of the requests released together.
    pub launch_skew_ns: u64,
    /// True when only part of the round was (re)sent by this segment.
    pub resumed_partial_round: bool,
}

/// A fetch process finished its schedule or was stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SegmentClosed {
    pub segment: u32,
    /// `complete` (every scheduled request is terminal) or `interrupted`.
    pub status: String,
    pub terminal_requests: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_serialises_with_type_and_data() {
        let env = Envelope {
            v: 1,
            run_id: "r1".into(),
            seq: 7,
            t_ns: 1234,
            event: Event::RoundClosed(RoundClosed {
                round_id: "round-1".into(),
                round_index: 0,
                launch_skew_ns: 5,
                resumed_partial_round: false,
            }),
        };
        let line = serde_json::to_string(&env).unwrap();
        assert_eq!(
            line,
            r#"{"v":1,"run_id":"r1","seq":7,"t_ns":1234,"type":"round_closed","data":{"round_id":"round-1","round_index":0,"launch_skew_ns":5,"resumed_partial_round":false}}"#
        );
        assert_eq!(serde_json::from_str::<Envelope>(&line).unwrap(), env);
    }

    #[test]
    fn unknown_fields_are_ignored_for_additive_evolution() {
        let line = r#"{"v":1,"run_id":"r","seq":0,"t_ns":0,"extra":1,"type":"segment_closed","data":{"segment":1,"status":"complete","terminal_requests":3,"new":true}}"#;
        let env: Envelope = serde_json::from_str(line).unwrap();
        assert!(matches!(env.event, Event::SegmentClosed(SegmentClosed { terminal_requests: 3, .. })));
    }
}
