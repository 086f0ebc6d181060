//! The reference's terminal records as inferbench's event log: per round, `round_released`,
//! then each request's `request_started` (at the reference's request start), its
//! `response_head`, one `sse_event` per recorded stream event (at the start plus the
//! reference's monotonic offset, to the nanosecond the reference measured), its
//! `request_terminal`, and `round_closed` with the reference's launch skew when the reference
//! closed the round. Events of a round's concurrent requests are interleaved by time, as a
//! live fetch writes them.
//!
//! What the reference's record implies but does not state is inferred, and only that: a
//! timeout or transport error with stream events had a 2xx response head (the reference reads
//! a stream only from a 2xx, then nulls the status of a timeout), logged as 200.
use crate::source::{EventBody, Record, Round, RoundArtifact, Source, Terminal};
use inferbench_contract::event::{
    Event, RequestStarted, RequestTerminal, ResponseHead, RoundClosed, RoundReleased, SegmentClosed, SegmentOpened,
    SseEvent,
};
use inferbench_contract::vocab::{ErrorKind, Outcome, SegmentStatus, WireApi};
use inferbench_judge::stream::{cap, ERROR_BODY_CAP};
use std::collections::BTreeMap;

/// The reference's fixed per-request deadline (§5.4).
pub const REFERENCE_DEADLINE_MS: u64 = 20_000;
/// The protocol of every reference exchange: its HTTP library speaks HTTP/1.1 only.
const REFERENCE_HTTP_VERSION: &str = "HTTP/1.1";

/// What the conversion counted, for the import's summary.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Counts {
    pub records: usize,
    pub scheduled: usize,
    /// Scheduled requests with no terminal record (a partial run): missing, not failures.
    pub never_finished: Vec<String>,
    /// `runner_error` records other than the historical signature: the runner failed, so
    /// they are logged as interrupted attempts (missing, not provider failures).
    pub runner_errors: Vec<String>,
    /// Historical-signature runner errors, scored as transport errors as the reference does.
    pub historical_runner_errors: Vec<String>,
    /// Timeouts and transport errors whose 2xx head the log infers from their stream events.
    pub inferred_heads: usize,
    pub events: usize,
}

struct Timed {
    t: u64,
    /// (request's place in the round, the event's place in the request): ties in time keep
    /// launch order and each request's own order.
    order: (usize, usize),
    event: Event,
}

fn offset_ns(offset_ms: f64) -> u64 {
    (offset_ms * 1e6).round() as u64
}

/// The 2xx status a record's stream implies, or the status it recorded.
fn head_status(record: &Record) -> Option<u16> {
    record.http_status.or_else(|| {
        let streamed = !record.events.is_empty();
        (streamed && matches!(record.terminal, Terminal::Timeout | Terminal::TransportError | Terminal::InvalidSse))
            .then_some(200)
    })
}

fn terminal(record: &Record, status: Option<u16>) -> RequestTerminal {
    let message = record.error_message.clone().filter(|m| !m.is_empty());
    let kind_and_outcome = match record.terminal {
        Terminal::Completed => None,
        Terminal::Timeout => Some((Outcome::Timeout, ErrorKind::Deadline, message)),
        Terminal::HttpError => {
            Some((Outcome::HttpError, ErrorKind::HttpStatus, message.or_else(|| status.map(|s| format!("HTTP {s}")))))
        }
        Terminal::TransportError => Some((
            Outcome::TransportError,
            if status.is_some() { ErrorKind::Body } else { ErrorKind::Request },
            message,
        )),
        Terminal::InvalidSse => Some((Outcome::TransportError, ErrorKind::InvalidSse, message)),
        Terminal::HistoricalRunnerError => Some((
            Outcome::TransportError,
            ErrorKind::Request,
            Some(format!(
                "the reference's runner_error {}: {} (its historical signature, which it scores as a transport error)",
                record.error_type.as_deref().unwrap_or_default(),
                record.error_message.as_deref().unwrap_or_default()
            )),
        )),
        Terminal::RunnerError => Some((
            Outcome::Interrupted,
            ErrorKind::Interrupted,
            Some(format!(
                "the reference runner failed, not the provider: runner_error {}: {}",
                record.error_type.as_deref().unwrap_or_default(),
                cap(record.error_message.as_deref().unwrap_or_default(), 1000)
            )),
        )),
    };
    let (outcome, error_type, error_message) = match kind_and_outcome {
        None => (Outcome::Completed, None, None),
        Some((outcome, kind, message)) => (outcome, Some(kind), message),
    };
    RequestTerminal {
        request_id: record.unit.request_id.clone(),
        attempt: 1,
        outcome,
        http_status: status,
        error_type,
        error_message,
        error_body: record.response_body.as_deref().map(|b| cap(b, ERROR_BODY_CAP)),
        bytes_received: 0,
        done_seen: record.done_marker,
    }
}

/// One request's events, stamped on the imported run's clock (`base` is its zero).
fn request_events(record: &Record, base: u64, position: usize, counts: &mut Counts, out: &mut Vec<Timed>) -> u64 {
    let unit = &record.unit;
    let start = record.start_ns - base;
    let push = |t: u64, event: Event, out: &mut Vec<Timed>| {
        let order = (position, out.len());
        out.push(Timed { t, order, event });
    };
    push(
        start,
        Event::RequestStarted(RequestStarted {
            request_id: unit.request_id.clone(),
            attempt: 1,
            round_id: unit.round_id.clone(),
            round_index: unit.round_index,
            provider: unit.provider.clone(),
            task_family: unit.task_family,
            item_id: unit.item_id.clone(),
            endpoint: record.endpoint.clone(),
            // The reference runner speaks chat completions only.
            api: WireApi::ChatCompletions,
            body: record.body.clone(),
            headers: record.headers.iter().cloned().collect(),
            step: None,
            target_input_tokens: None,
            target_output_tokens: None,
            released_t_ns: None,
            intended_t_ns: start,
        }),
        out,
    );
    let status = head_status(record);
    if let Some(status) = status {
        counts.inferred_heads += usize::from(record.http_status.is_none());
        let mut headers: BTreeMap<String, String> =
            record.head_headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
        if let Some(id) = &record.provider_request_id {
            headers.entry("x-request-id".into()).or_insert_with(|| id.clone());
        }
        push(
            start,
            Event::ResponseHead(ResponseHead {
                request_id: unit.request_id.clone(),
                attempt: 1,
                status,
                headers,
                // The reference's transport speaks HTTP/1.1 only (seed-runner.md §5.3).
                http_version: Some(REFERENCE_HTTP_VERSION.to_string()),
            }),
            out,
        );
    }
    let mut last = start;
    for (index, event) in record.events.iter().enumerate() {
        let t = start + offset_ns(event.offset_ms);
        last = last.max(t);
        let (data, comment) = match &event.body {
            EventBody::Comment(text) => (None, Some(text.clone())),
            EventBody::Data(text) => (Some(text.clone()), None),
        };
        push(
            t,
            Event::SseEvent(SseEvent {
                request_id: unit.request_id.clone(),
                attempt: 1,
                index: index as u32,
                data,
                event: event.sse_event.clone(),
                id: event.sse_id.clone(),
                retry: event.sse_retry.clone(),
                comment,
                redacted: false,
            }),
            out,
        );
        counts.events += 1;
    }
    let end = record.ended_ns.map_or(last, |e| e.saturating_sub(base)).max(last);
    push(end, Event::RequestTerminal(terminal(record, status)), out);
    end
}

fn round_events(
    round: &Round,
    artifact: Option<&RoundArtifact>,
    records: &BTreeMap<String, Record>,
    base: u64,
    counts: &mut Counts,
) -> Vec<Timed> {
    let present: Vec<&Record> = round.units.iter().filter_map(|u| records.get(&u.request_id)).collect();
    if present.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let released = present.iter().map(|r| r.start_ns - base).min().unwrap_or(0);
    let mut closed_at = released;
    for (position, record) in present.iter().enumerate() {
        closed_at = closed_at.max(request_events(record, base, position + 1, counts, &mut out));
    }
    out.push(Timed {
        t: released,
        order: (0, 0),
        event: Event::RoundReleased(RoundReleased {
            round_id: round.round_id.clone(),
            round_index: round.round_index,
            request_ids: present.iter().map(|r| r.unit.request_id.clone()).collect(),
            nonce: None,
        }),
    });
    out.sort_by_key(|e| (e.t, e.order));
    if let Some(artifact) = artifact.filter(|_| present.len() == round.units.len()) {
        out.push(Timed {
            t: closed_at,
            order: (usize::MAX, 0),
            event: Event::RoundClosed(RoundClosed {
                round_id: round.round_id.clone(),
                round_index: round.round_index,
                launch_skew_ns: offset_ns(artifact.launch_skew_ms),
                resumed_partial_round: artifact.resumed_partial_round,
            }),
        });
    }
    out
}

/// The whole log of the imported run: one segment, each event with its time. `opening` is the
/// segment's `segment_opened` as the store opens it, with when and on what the reference ran;
/// the rest of it is the reference's.
pub fn log(source: &Source, opening: SegmentOpened) -> (Vec<(u64, Event)>, Counts) {
    let mut counts = Counts { records: source.records.len(), ..Counts::default() };
    let base = source.records.values().map(|r| r.start_ns).min().unwrap_or(0);
    let mut timed = Vec::new();
    for round in &source.rounds {
        counts.scheduled += round.units.len();
        for unit in &round.units {
            match source.records.get(&unit.request_id).map(|r| r.terminal) {
                None => counts.never_finished.push(unit.request_id.clone()),
                Some(Terminal::RunnerError) => counts.runner_errors.push(unit.request_id.clone()),
                Some(Terminal::HistoricalRunnerError) => counts.historical_runner_errors.push(unit.request_id.clone()),
                Some(_) => {}
            }
        }
        timed.extend(round_events(
            round,
            source.round_artifacts.get(&round.round_id),
            &source.records,
            base,
            &mut counts,
        ));
    }
    let finished = counts.records - counts.runner_errors.len();
    let end = timed.iter().map(|e| e.t).max().unwrap_or(0);
    let mut events = Vec::with_capacity(timed.len() + 2);
    events.push((
        0,
        Event::SegmentOpened(SegmentOpened {
            scheduled_requests: counts.scheduled as u64,
            deadline_ms: REFERENCE_DEADLINE_MS,
            execution_region: source.lock.execution_region.clone().unwrap_or_else(|| "local-unspecified".into()),
            host_sha256_16: source.lock.hostname_hash.clone().unwrap_or_default(),
            http_version: Some("1.1".to_string()),
            ..opening
        }),
    ));
    events.extend(timed.into_iter().map(|e| (e.t, e.event)));
    events.push((
        end,
        Event::SegmentClosed(SegmentClosed {
            segment: 1,
            status: if finished == counts.scheduled { SegmentStatus::Complete } else { SegmentStatus::Interrupted },
            terminal_requests: finished as u64,
            peak_rss_bytes: None,
        }),
    ));
    (events, counts)
}

/// Nanoseconds since the Unix epoch of the reference's UTC timestamps
/// (`2026-11-29T14:53:29.493348Z`, `…+00:00`).
pub fn unix_ns(text: &str) -> Option<u64> {
    let (date, rest) = text.split_once('T')?;
    let mut parts = date.split('-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    let rest = rest.strip_suffix('Z').or_else(|| rest.strip_suffix("+00:00"))?;
    let (hms, fraction) = rest.split_once('.').unwrap_or((rest, "0"));
    let mut hms = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let digits: String = fraction.chars().chain(std::iter::repeat('0')).take(9).collect();
    let nanos: i64 = digits.parse().ok()?;
    let days = inferbench_contract::civil::days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds).ok()?.checked_mul(1_000_000_000)?.checked_add(nanos as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_timestamps_parse_to_unix_nanoseconds() {
        assert_eq!(unix_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(unix_ns("2026-11-29T14:53:29.493348Z"), Some(1_795_964_009_493_348_000));
        assert_eq!(unix_ns("2026-11-29T14:53:27.661828+00:00"), Some(1_795_964_007_661_828_000));
        assert_eq!(unix_ns("2024-02-29T23:59:59.5Z"), Some(1_709_251_199_500_000_000));
        for bad in ["2026-11-29", "2026-13-01T00:00:00Z", "2026-11-29T14:53:29+02:00", "x"] {
            assert_eq!(unix_ns(bad), None, "{bad}");
        }
    }

    #[test]
    fn offsets_round_to_the_nanosecond_the_reference_measured() {
        // The reference divides integer nanoseconds by 1e6; the import recovers them.
        for ns in [78_157_931u64, 19_999_999_999, 1, 0, 544_181_169] {
            assert_eq!(offset_ns(ns as f64 / 1e6), ns);
        }
    }
}
