//! Builders of the contract's values for tests, here and in the crates and binaries above
//! (feature `testutil`, which only their `[dev-dependencies]` turn on): every event, every
//! table row and the lock, with every field set to a plain value, changed with struct-update
//! syntax where a test cares, e.g. `Lock { providers, ..testutil::lock() }` or
//! `RequestStarted { step: Some(1), ..testutil::request_started("q", 0) }`. A builder takes as
//! arguments only what names the value (a request id, a round, a segment); a test says the
//! rest only when it matters to it.
//!
//! The plain values: run [`RUN_ID`], provider `p`, item `i` of `ticket-triage`, round `n` named
//! `round-n`, attempt 1, empty bodies and headers, every optional field absent. The table rows
//! of metrics (`MetricRow`, `PooledRow`) are built from a group's figures by their own `of`,
//! and an `events.parquet` row by `EventRow::new`.
use crate::event::{
    CredentialEcho, Envelope, Event, RequestStarted, RequestTerminal, ResponseHead, RoundClosed, RoundReleased,
    SegmentClosed, SegmentOpened, SseEvent, StepClosed, StepOpened,
};
use crate::lock::{Lock, LockSelection, LockTokenizer};
use crate::tables::{EvaluationRow, ResponseRow, ScheduleRow, SelectionRow};
use crate::vocab::{Classification, OperationalOutcome, Outcome, SegmentStatus, StepStatus, TaskFamily, WireApi};
use std::collections::BTreeMap;

/// The run id every builder uses.
pub const RUN_ID: &str = "run-a";

/// The id of round `round_index`.
pub fn round_id(round_index: u64) -> String {
    format!("round-{round_index}")
}

/// A `segment_opened` of `segment`, for a simulated fetch of one request.
pub fn segment_opened(segment: u32) -> SegmentOpened {
    SegmentOpened {
        segment,
        wall_clock_unix_ns: 1_700_000_000_000_000_000,
        code_version: "c".into(),
        schedule_sha256: "s".into(),
        scheduled_requests: 1,
        already_terminal: 0,
        endpoint_mode: crate::vocab::EndpointMode::Simulated,
        deadline_ms: 1000,
        max_event_bytes: 1,
        max_response_bytes: 1,
        http_version: Some("1.1".into()),
        execution_region: "r".into(),
        host_sha256_16: "h".into(),
        os: "linux".into(),
        arch: "x86_64".into(),
        shard: None,
    }
}

/// [`segment_opened`] as an event.
pub fn opened(segment: u32) -> Event {
    Event::SegmentOpened(segment_opened(segment))
}

/// [`segment_opened`] of segment `segment` as shard `index` of `count` (of one request each,
/// shared by round, from an origin one second before [`segment_opened`]'s wall clock).
pub fn shard_opened(segment: u32, index: u32, count: u32) -> Event {
    let shard = crate::shard::ShardOpened {
        index,
        count,
        unit: crate::shard::ShareUnit::Round,
        requests: 1,
        origin_unix_ns: 1_699_999_999_000_000_000,
    };
    Event::SegmentOpened(SegmentOpened { shard: Some(shard), ..segment_opened(segment) })
}

/// The release of round `round_index` with its `request_ids`, without a nonce.
pub fn round_released(round_index: u64, request_ids: &[&str]) -> RoundReleased {
    RoundReleased {
        round_id: round_id(round_index),
        round_index,
        request_ids: request_ids.iter().map(|id| id.to_string()).collect(),
        nonce: None,
    }
}

/// The first attempt of request `request_id` of round `round_index`: provider `p` asked for
/// item `i` of `ticket-triage` at `http://x` with an empty body and no headers, due at 0, in
/// the closed-loop workflow (no step, no synthetic lengths, no cap's queue).
pub fn request_started(request_id: &str, round_index: u64) -> RequestStarted {
    RequestStarted {
        request_id: request_id.into(),
        attempt: 1,
        round_id: round_id(round_index),
        round_index,
        provider: "p".into(),
        task_family: TaskFamily::TicketTriage,
        item_id: "i".into(),
        endpoint: "http://x".into(),
        api: WireApi::ChatCompletions,
        body: serde_json::json!({}),
        headers: BTreeMap::new(),
        step: None,
        target_input_tokens: None,
        target_output_tokens: None,
        released_t_ns: None,
        intended_t_ns: 0,
    }
}

/// The head of attempt 1 of `request_id`: `status` over HTTP/1.1, no headers.
pub fn response_head(request_id: &str, status: u16) -> ResponseHead {
    ResponseHead {
        request_id: request_id.into(),
        attempt: 1,
        status,
        headers: BTreeMap::new(),
        http_version: Some("HTTP/1.1".into()),
    }
}

/// Event `index` of attempt 1 of `request_id`: a `data` field of `data` and nothing else.
pub fn sse_event(request_id: &str, index: u32, data: &str) -> SseEvent {
    SseEvent {
        request_id: request_id.into(),
        attempt: 1,
        index,
        data: Some(data.into()),
        event: None,
        id: None,
        retry: None,
        comment: None,
        redacted: false,
    }
}

/// Attempt 1 of `request_id` echoed a credential in `channels`.
pub fn credential_echo(request_id: &str, channels: &[&str]) -> CredentialEcho {
    CredentialEcho {
        request_id: request_id.into(),
        attempt: 1,
        channels: channels.iter().map(|c| c.to_string()).collect(),
    }
}

/// Attempt 1 of `request_id` ended with `outcome`: no status, no error, no bytes, no `[DONE]`.
pub fn request_terminal(request_id: &str, outcome: Outcome) -> RequestTerminal {
    RequestTerminal {
        request_id: request_id.into(),
        attempt: 1,
        outcome,
        http_status: None,
        error_type: None,
        error_message: None,
        error_body: None,
        bytes_received: 0,
        done_seen: false,
    }
}

/// Round `round_index` closed, every request sent at once, none resumed.
pub fn round_closed(round_index: u64) -> RoundClosed {
    RoundClosed { round_id: round_id(round_index), round_index, launch_skew_ns: 0, resumed_partial_round: false }
}

/// Segment `segment` closed as `status`, with no terminal request and no memory figure.
pub fn segment_closed(segment: u32, status: SegmentStatus) -> SegmentClosed {
    SegmentClosed { segment, status, terminal_requests: 0, peak_rss_bytes: None }
}

/// The first run of load step `step`, of `scheduled_requests` requests.
pub fn step_opened(step: u32, scheduled_requests: u64) -> StepOpened {
    StepOpened { step, attempt: 1, scheduled_requests }
}

/// The first run of load step `step` ended as `status`, having sent nothing.
pub fn step_closed(step: u32, status: StepStatus) -> StepClosed {
    StepClosed {
        step,
        attempt: 1,
        status,
        requests_sent: 0,
        peak_in_flight: 0,
        cpu_ns: None,
        client_resource_errors: 0,
    }
}

/// The envelope of `event` as line `seq` of run [`RUN_ID`], `seq` milliseconds into the run.
pub fn envelope(seq: u64, event: Event) -> Envelope {
    Envelope { v: crate::FORMAT_VERSION, run_id: RUN_ID.into(), seq, t_ns: seq * 1_000_000, event }
}

/// A `selection.parquet` row: item `item_id` at `position` of its family's order, selected,
/// its hash all zeros.
pub fn selection_row(task_family: TaskFamily, position: i64, item_id: &str) -> SelectionRow {
    SelectionRow { task_family, position, item_id: item_id.into(), selected: true, item_sha256: "0".repeat(64) }
}

/// The `schedule.parquet` row of round `round_index` to `provider`: request
/// `req-<round>-<provider>` for item `i` of `ticket-triage`, first in its launch order, in the
/// closed-loop workflow ([`ScheduleRow::new`]).
pub fn schedule_row(round_index: i64, provider: &str) -> ScheduleRow {
    ScheduleRow::new(
        round_index,
        round_id(round_index as u64),
        TaskFamily::TicketTriage,
        "i".into(),
        provider.into(),
        0,
        format!("req-{round_index}-{provider}"),
    )
}

/// The `responses.parquet` row of request `request_id`: attempt 1 of round 0 to provider `p`
/// for item `i` of `ticket-triage`, a 2xx stream that completed with `[DONE]` and an empty
/// answer (so not `complete`), with no timing, token count, usage, chunk or load figure.
pub fn response_row(request_id: &str) -> ResponseRow {
    ResponseRow {
        request_id: request_id.into(),
        round_id: round_id(0),
        round_index: 0,
        provider: "p".into(),
        task_family: TaskFamily::TicketTriage,
        item_id: "i".into(),
        attempt: 1,
        outcome: Outcome::Completed,
        operational_outcome: OperationalOutcome::Success,
        http_status: Some(200),
        error_type: None,
        error_message: None,
        error_body: None,
        content_type: None,
        retry_after: None,
        retry_after_seconds: None,
        http_version: None,
        done_seen: true,
        bytes_received: 0,
        sse_event_count: 0,
        events_after_end: 0,
        credential_echo: false,
        reasoning: String::new(),
        answer: String::new(),
        complete: false,
        ttfo_ms: None,
        ttfa_ms: None,
        last_answer_ms: None,
        e2e_latency_ms: None,
        pre_answer_reasoning_tokens: None,
        reasoning_emitted_before_answer: None,
        reasoning_tokens: 0,
        visible_answer_tokens: 0,
        output_tokens_per_second: None,
        time_to_headers_ms: None,
        time_to_first_event_ms: None,
        send_lag_ms: 0.0,
        started_t_ns: 0,
        started_at: 0,
        response_model: None,
        provider_request_id: None,
        finish_reason: None,
        usage_prompt_tokens: None,
        usage_completion_tokens: None,
        usage_total_tokens: None,
        usage_cached_tokens: None,
        step: None,
        intended_t_ns: 0,
        released_t_ns: None,
        ended_t_ns: 0,
        target_input_tokens: None,
        target_output_tokens: None,
        answer_chunk_ms: Vec::new(),
        answer_chunk_tokens: Vec::new(),
        answer_buffered: false,
    }
}

/// The `evaluations.parquet` row of request `request_id` judged `classification`: schema-valid
/// when a valid or an incorrect result, correct when valid, without an error type or any
/// field-level figure.
pub fn evaluation_row(request_id: &str, classification: Classification) -> EvaluationRow {
    EvaluationRow {
        request_id: request_id.into(),
        classification,
        evaluation_error_type: None,
        schema_valid: matches!(classification, Classification::ValidResult | Classification::IncorrectResult),
        correct: classification == Classification::ValidResult,
        correct_field_count: None,
        field_count_total: None,
        field_correct: None,
        parsed_output: None,
    }
}

/// A lock of run [`RUN_ID`] binding nothing, for provider `p`.
pub fn lock() -> Lock {
    Lock {
        v: crate::FORMAT_VERSION,
        run_id: RUN_ID.into(),
        workflow: "micro-single-task".into(),
        benchmark_slug: "s".into(),
        code_version: "c".into(),
        inputs: BTreeMap::new(),
        dataset_release_hash: "0".repeat(64),
        selection: LockSelection {
            algorithm_version: "v".into(),
            selected_items_per_task_family: 1,
            sample: true,
            seeds: BTreeMap::new(),
        },
        tokenizer: LockTokenizer {
            encoding: "o200k_base".into(),
            implementation: "t".into(),
            vocabulary_sha256: "0".repeat(64),
        },
        providers: vec!["p".into()],
        imported_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event a builder makes is one the log reads back as written, and every row one
    /// its table's JSON form reads back.
    #[test]
    fn every_built_value_reads_back_as_written() {
        let events = [
            opened(1),
            shard_opened(2, 0, 2),
            Event::RoundReleased(round_released(0, &["q"])),
            Event::RequestStarted(request_started("q", 0)),
            Event::ResponseHead(response_head("q", 200)),
            Event::SseEvent(sse_event("q", 0, "[DONE]")),
            Event::CredentialEcho(credential_echo("q", &["answer"])),
            Event::RequestTerminal(request_terminal("q", Outcome::Completed)),
            Event::RoundClosed(round_closed(0)),
            Event::StepOpened(step_opened(0, 1)),
            Event::StepClosed(step_closed(0, StepStatus::Complete)),
            Event::SegmentClosed(segment_closed(1, SegmentStatus::Complete)),
        ];
        for (seq, event) in events.into_iter().enumerate() {
            let env = envelope(seq as u64, event);
            let line = serde_json::to_string(&env).unwrap();
            assert_eq!(serde_json::from_str::<Envelope>(&line).unwrap(), env, "{line}");
        }
        fn again<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(value: T) {
            let json = serde_json::to_value(&value).unwrap();
            assert_eq!(serde_json::from_value::<T>(json).unwrap(), value);
        }
        again(selection_row(TaskFamily::TicketTriage, 0, "i"));
        again(schedule_row(3, "p"));
        again(response_row("q"));
        again(evaluation_row("q", Classification::ValidResult));
        again(lock());
    }
}
