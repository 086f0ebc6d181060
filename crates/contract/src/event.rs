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

pub use crate::vocab::{EndpointMode, ErrorKind, Outcome, SegmentStatus, StepStatus, TaskFamily, WireApi};

// Deserialised by hand (below): the same fields, read without buffering the whole line as
// `#[serde(flatten)]` would.
/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
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

/// The keys of an envelope.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum EnvelopeKey {
    V,
    RunId,
    Seq,
    TNs,
    Type,
    Data,
    #[serde(other)]
    Other,
}

const EVENT_TYPES: &[&str] = &[
    "segment_opened",
    "round_released",
    "request_started",
    "response_head",
    "sse_event",
    "credential_echo",
    "request_terminal",
    "round_closed",
    "segment_closed",
    "step_opened",
    "step_closed",
];

/// The `data` of an event whose `type` is known.
struct EventData<'k>(&'k str);

impl<'de> serde::de::DeserializeSeed<'de> for EventData<'_> {
    type Value = Event;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Event, D::Error> {
        Ok(match self.0 {
            "segment_opened" => Event::SegmentOpened(Deserialize::deserialize(d)?),
            "round_released" => Event::RoundReleased(Deserialize::deserialize(d)?),
            "request_started" => Event::RequestStarted(Deserialize::deserialize(d)?),
            "response_head" => Event::ResponseHead(Deserialize::deserialize(d)?),
            "sse_event" => Event::SseEvent(Deserialize::deserialize(d)?),
            "credential_echo" => Event::CredentialEcho(Deserialize::deserialize(d)?),
            "request_terminal" => Event::RequestTerminal(Deserialize::deserialize(d)?),
            "round_closed" => Event::RoundClosed(Deserialize::deserialize(d)?),
            "segment_closed" => Event::SegmentClosed(Deserialize::deserialize(d)?),
            "step_opened" => Event::StepOpened(Deserialize::deserialize(d)?),
            "step_closed" => Event::StepClosed(Deserialize::deserialize(d)?),
            other => return Err(serde::de::Error::unknown_variant(other, EVENT_TYPES)),
        })
    }
}

/// The event of type `kind` whose `data` object is the JSON text `data` (as `events.parquet`
/// holds every event but the stream's): exactly what the log line with that type and data
/// reads as.
pub fn event_from_data(kind: &str, data: &str) -> Result<Event, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(data);
    let event = serde::de::DeserializeSeed::deserialize(EventData(kind), &mut de)?;
    de.end()?;
    Ok(event)
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Envelope, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Envelope;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an event envelope")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
                use serde::de::Error;
                let (mut v, mut run_id, mut seq, mut t_ns) = (None, None, None, None);
                let mut kind: Option<String> = None;
                let mut event: Option<Event> = None;
                // `data` before `type` (never written so, but valid JSON): read once the type is.
                let mut early: Option<Value> = None;
                while let Some(key) = map.next_key::<EnvelopeKey>()? {
                    match key {
                        EnvelopeKey::V => v = Some(map.next_value()?),
                        EnvelopeKey::RunId => run_id = Some(map.next_value()?),
                        EnvelopeKey::Seq => seq = Some(map.next_value()?),
                        EnvelopeKey::TNs => t_ns = Some(map.next_value()?),
                        EnvelopeKey::Type => kind = Some(map.next_value()?),
                        EnvelopeKey::Data => match &kind {
                            Some(k) => event = Some(map.next_value_seed(EventData(k))?),
                            None => early = Some(map.next_value()?),
                        },
                        EnvelopeKey::Other => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                let kind = kind.ok_or_else(|| A::Error::missing_field("type"))?;
                let event = match (event, early) {
                    (Some(event), _) => event,
                    (None, Some(data)) => {
                        serde::de::DeserializeSeed::deserialize(EventData(&kind), data).map_err(A::Error::custom)?
                    }
                    (None, None) => return Err(A::Error::missing_field("data")),
                };
                Ok(Envelope {
                    v: v.ok_or_else(|| A::Error::missing_field("v"))?,
                    run_id: run_id.ok_or_else(|| A::Error::missing_field("run_id"))?,
                    seq: seq.ok_or_else(|| A::Error::missing_field("seq"))?,
                    t_ns: t_ns.ok_or_else(|| A::Error::missing_field("t_ns"))?,
                    event,
                })
            }
        }
        d.deserialize_map(Visit)
    }
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
    CredentialEcho(CredentialEcho),
    RequestTerminal(RequestTerminal),
    RoundClosed(RoundClosed),
    SegmentClosed(SegmentClosed),
    StepOpened(StepOpened),
    StepClosed(StepClosed),
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
    /// `providers` (endpoints of providers.yaml), `simulated` (`--endpoint-base`), or
    /// `imported` (`ib-import`: a reference run's records).
    pub endpoint_mode: EndpointMode,
    pub deadline_ms: u64,
    /// The caps this segment read with: one SSE line or event, and one response body.
    #[serde(default)]
    pub max_event_bytes: u64,
    #[serde(default)]
    pub max_response_bytes: u64,
    /// The HTTP version the segment was configured with (the spec's
    /// `inference.transport.http_version`, `1.1` or `2`); absent in logs written before it was
    /// configurable, whose client offered HTTP/2 by ALPN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_version: Option<String>,
    /// Where the client ran: `BENCHMARK_EXECUTION_REGION`, or `local-unspecified`.
    pub execution_region: String,
    /// First 16 hex digits of SHA-256 of the host name (the name itself is never recorded).
    pub host_sha256_16: String,
    pub os: String,
    pub arch: String,
    /// The shard this segment's fetch sent (`ib-fetch --shard i/N`): its place, its share and
    /// the run clock's origin every shard was given. Absent in an unsharded fetch, whose lines
    /// are then exactly what they were before shards existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::ShardOpened>,
}

/// The round's shared barrier opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundReleased {
    pub round_id: String,
    pub round_index: u64,
    /// The requests released, in launch order (a resumed round releases only its missing ones).
    pub request_ids: Vec<String>,
    /// The round's nonce (`schedule.parquet`'s `nonce`: `inference.cache_busting`, and every
    /// cache-probe round), sent as the first line of each request's first message (the
    /// bodies of its `request_started` events hold it as sent); absent when the round has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
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
    pub task_family: TaskFamily,
    pub item_id: String,
    pub endpoint: String,
    /// The wire API the request was sent through, which says how its events are read; absent
    /// for chat completions (every log written before other APIs were spoken).
    #[serde(default, skip_serializing_if = "WireApi::is_chat_completions")]
    pub api: WireApi,
    /// The exact JSON body sent.
    pub body: Value,
    /// Request headers with credentials redacted.
    pub headers: BTreeMap<String, String>,
    /// The load step the request belongs to; absent in the closed-loop workflow. (Before
    /// `intended_t_ns`, which `ib-fetch` writes last, at the send.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// A synthetic request: its prompt's exact o200k_base length and the answer tokens it asks
    /// for (the schedule's); absent for a dataset item. (Before `intended_t_ns`, which
    /// `ib-fetch` writes last, at the send.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_input_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_output_tokens: Option<u32>,
    /// A capped load step: when a slot of its provider's cap freed for the request (run clock,
    /// ns). From `intended_t_ns` to here it waited in the cap's queue, which counts in its
    /// latency; from here to the send is the client's own lag. Absent elsewhere. (Before
    /// `intended_t_ns`, which `ib-fetch` writes last, at the send.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released_t_ns: Option<u64>,
    /// When the request was due (run clock, ns): in the closed-loop workflow when the barrier
    /// released its round; in a load step its arrival (the step's `step_opened` plus its
    /// schedule offset). Its latencies are measured from here as well as from the actual send.
    pub intended_t_ns: u64,
}

/// The response status line and headers arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseHead {
    pub request_id: String,
    pub attempt: u32,
    pub status: u16,
    /// Headers that matter (request ids, rate limits, retry-after, content type and encoding),
    /// redacted.
    pub headers: BTreeMap<String, String>,
    /// The protocol version the response came in, as negotiated (`HTTP/1.1`, `HTTP/2`);
    /// absent in logs written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_version: Option<String>,
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
    /// True when a credential was removed from a field: the field then holds the received
    /// text with each credential replaced by `<redacted>` (for JSON data, the payload with its
    /// decoded strings redacted and re-serialised), not the bytes as received.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// The text a stream delivered in a channel (the answer or the reasoning, as the deltas
/// concatenate) contained a credential of the request, possibly split across events or
/// JSON-escaped. No single logged event holds it, but every file derived from the joined text
/// would: `ib-reconstruct` withholds that channel's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CredentialEcho {
    pub request_id: String,
    pub attempt: u32,
    /// `answer` and/or `reasoning`.
    pub channels: Vec<String>,
}

/// The terminal outcome of one request attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestTerminal {
    pub request_id: String,
    pub attempt: u32,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// What ended the attempt when it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<ErrorKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Redacted and capped at 4 KiB: the body of a non-2xx response, the first bytes of a 2xx
    /// body that was not an event stream, or the error object a stream reported.
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
    pub status: SegmentStatus,
    pub terminal_requests: u64,
    /// The fetch process's peak resident memory (Linux `VmHWM`), when the OS reports it: the
    /// evidence that the client's memory stayed bounded whatever the providers sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// A load step began: its requests' intended send times are this event's `t_ns` plus their
/// `intended_offset_ns` in `schedule.parquet`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepOpened {
    /// 0-based, as in `schedule.parquet`.
    pub step: u32,
    /// 1 for the step's first run. A fetch stopped during a step leaves it opened and never
    /// closed; the fetch that resumes the run closes it as interrupted and runs it again whole
    /// (every request of the step as a new attempt), as attempt 2, and so on.
    pub attempt: u32,
    /// Requests the schedule holds for the step (arrivals × providers).
    pub scheduled_requests: u64,
}

/// A load step ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepClosed {
    pub step: u32,
    pub attempt: u32,
    /// `complete`: every request of the step was sent and has ended (the step drained).
    /// `interrupted`: the fetch was stopped during the step (written by the fetch that resumes
    /// the run, which then runs the step again whole).
    pub status: StepStatus,
    /// Requests of the step this attempt sent.
    pub requests_sent: u64,
    /// The most requests in flight at once during the step.
    pub peak_in_flight: u64,
    /// CPU time (user and system) the fetch process spent during the step, in ns, when the
    /// OS reports it: the client's own cost, shown beside the step's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    /// Requests of the step that failed on a resource of the client rather than the
    /// provider's (file descriptors, local ports, memory): a step with any is client-bound.
    pub client_resource_errors: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_serialises_with_type_and_data() {
        let closed = RoundClosed { launch_skew_ns: 5, ..crate::testutil::round_closed(1) };
        let env = Envelope { t_ns: 1234, ..crate::testutil::envelope(7, Event::RoundClosed(closed)) };
        let line = serde_json::to_string(&env).unwrap();
        assert_eq!(
            line,
            r#"{"v":1,"run_id":"run-a","seq":7,"t_ns":1234,"type":"round_closed","data":{"round_id":"round-1","round_index":1,"launch_skew_ns":5,"resumed_partial_round":false}}"#
        );
        assert_eq!(serde_json::from_str::<Envelope>(&line).unwrap(), env);
    }

    #[test]
    fn logs_written_before_the_http_version_was_recorded_still_read() {
        let head = r#"{"v":1,"run_id":"r","seq":1,"t_ns":5,"type":"response_head","data":{"request_id":"q","attempt":1,"status":200,"headers":{}}}"#;
        let env: Envelope = serde_json::from_str(head).unwrap();
        assert!(matches!(env.event, Event::ResponseHead(ResponseHead { http_version: None, status: 200, .. })));
        let opened = r#"{"v":1,"run_id":"r","seq":0,"t_ns":0,"type":"segment_opened","data":{"segment":1,"wall_clock_unix_ns":1,"code_version":"c","schedule_sha256":"s","scheduled_requests":1,"already_terminal":0,"endpoint_mode":"simulated","deadline_ms":1000,"execution_region":"r","host_sha256_16":"h","os":"linux","arch":"x86_64"}}"#;
        let env: Envelope = serde_json::from_str(opened).unwrap();
        assert!(matches!(env.event, Event::SegmentOpened(SegmentOpened { http_version: None, .. })));
    }

    #[test]
    fn unknown_fields_are_ignored_for_additive_evolution() {
        let line = r#"{"v":1,"run_id":"r","seq":0,"t_ns":0,"extra":1,"type":"segment_closed","data":{"segment":1,"status":"complete","terminal_requests":3,"new":true}}"#;
        let env: Envelope = serde_json::from_str(line).unwrap();
        assert!(matches!(env.event, Event::SegmentClosed(SegmentClosed { terminal_requests: 3, .. })));
    }

    #[test]
    fn data_before_type_reads_the_same_and_an_unknown_type_or_missing_field_is_refused() {
        let line = r#"{"data":{"segment":1,"status":"complete","terminal_requests":3},"type":"segment_closed","t_ns":0,"seq":4,"run_id":"r","v":1}"#;
        let env: Envelope = serde_json::from_str(line).unwrap();
        assert_eq!(env.seq, 4);
        assert!(matches!(env.event, Event::SegmentClosed(SegmentClosed { terminal_requests: 3, .. })));
        let unknown = r#"{"v":1,"run_id":"r","seq":0,"t_ns":0,"type":"nap","data":{}}"#;
        assert!(serde_json::from_str::<Envelope>(unknown).unwrap_err().to_string().contains("unknown variant `nap`"));
        let no_seq = r#"{"v":1,"run_id":"r","t_ns":0,"type":"segment_closed","data":{"segment":1,"status":"complete","terminal_requests":3}}"#;
        assert!(serde_json::from_str::<Envelope>(no_seq).unwrap_err().to_string().contains("missing field `seq`"));
    }
}
