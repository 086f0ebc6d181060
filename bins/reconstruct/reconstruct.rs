//! Events → one `ResponseRow` per request.
use crate::args::Args;
use anyhow::Result;
use inferbench_schemas::event::{Envelope, Event, Outcome, RequestStarted, RequestTerminal};
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::tables::ResponseRow;
use inferbench_schemas::timing::{self, TimedEvent};
use inferbench_schemas::{jsonl, parquet_io, Error};
use std::collections::BTreeMap;

/// Everything logged about one attempt.
#[derive(Default)]
struct Attempt {
    started: Option<(u64, RequestStarted)>,
    head: Option<(u64, u16, BTreeMap<String, String>)>,
    events: Vec<(u64, Option<String>)>,
    terminal: Option<RequestTerminal>,
    first_seq: u64,
}

pub fn run(args: Args) -> Result<()> {
    let run = RunDir::new(args.run);
    let mut inputs = BTreeMap::new();
    let mut attempts: BTreeMap<(String, u32), Attempt> = BTreeMap::new();
    let segments = run.segments()?;
    if segments.is_empty() {
        return Err(Error::bad(format!("{}: no event log; run ib-fetch first", run.events_dir().display())).into());
    }
    for (number, path) in segments {
        inputs.insert(format!("events/{number:04}.jsonl"), file_sha256(&path)?);
        for env in jsonl::read::<Envelope>(&path)?.records {
            collect(&mut attempts, env);
        }
    }
    let rows = rows(attempts);
    parquet_io::write(&run.responses(), &rows, &inputs)?;
    let completed = rows.iter().filter(|r| r.complete).count();
    eprintln!("ib-reconstruct: {} responses ({completed} complete) → {}", rows.len(), run.responses().display());
    Ok(())
}

fn collect(attempts: &mut BTreeMap<(String, u32), Attempt>, env: Envelope) {
    let (t, seq) = (env.t_ns, env.seq);
    match env.event {
        Event::RequestStarted(s) => {
            let a = attempts.entry((s.request_id.clone(), s.attempt)).or_default();
            a.first_seq = seq;
            a.started = Some((t, s));
        }
        Event::ResponseHead(h) => {
            attempts.entry((h.request_id, h.attempt)).or_default().head = Some((t, h.status, h.headers))
        }
        Event::SseEvent(e) => attempts.entry((e.request_id, e.attempt)).or_default().events.push((t, e.data)),
        Event::RequestTerminal(term) => {
            let key = (term.request_id.clone(), term.attempt);
            attempts.entry(key).or_default().terminal = Some(term);
        }
        _ => {}
    }
}

/// The final attempt of each request: its highest-numbered attempt that ended.
fn rows(attempts: BTreeMap<(String, u32), Attempt>) -> Vec<ResponseRow> {
    let mut finals: BTreeMap<String, Attempt> = BTreeMap::new();
    for ((request_id, _), attempt) in attempts {
        if attempt.started.is_some() && attempt.terminal.is_some() {
            // BTreeMap order is by attempt number, so a later attempt replaces an earlier one.
            finals.insert(request_id, attempt);
        }
    }
    let mut rows: Vec<(u64, u64, ResponseRow)> = finals
        .into_values()
        .map(|a| (a.started.as_ref().map(|s| s.1.round_index).unwrap_or(0), a.first_seq, row(a)))
        .collect();
    rows.sort_by_key(|(round, seq, _)| (*round, *seq));
    rows.into_iter().map(|(_, _, r)| r).collect()
}

/// Operational class of a terminal outcome (reference §5.9, with 1xx/3xx as `other_http`).
pub fn operational_outcome(outcome: Outcome, status: Option<u16>) -> &'static str {
    match (outcome, status) {
        (Outcome::Completed, _) => "2xx",
        (Outcome::HttpError, Some(429)) => "429",
        (Outcome::HttpError, Some(400..=499)) => "other_4xx",
        (Outcome::HttpError, Some(500..=599)) => "5xx",
        (Outcome::HttpError, _) => "other_http",
        (Outcome::Timeout, _) => "timeout",
        (Outcome::TransportError | Outcome::InvalidStream | Outcome::Interrupted, _) => "transport_error",
    }
}

fn ms(from: u64, to: u64) -> f64 {
    (to as f64 - from as f64) / 1e6
}

fn row(a: Attempt) -> ResponseRow {
    let (start, s) = a.started.expect("finals have a start");
    let term = a.terminal.expect("finals have a terminal");
    let events: Vec<TimedEvent> = a
        .events
        .iter()
        .map(|(t, data)| TimedEvent { offset_ms: ms(start, *t).max(0.0), data: data.as_deref() })
        .collect();
    let completed_2xx = term.outcome == Outcome::Completed && term.http_status.is_some_and(|c| (200..300).contains(&c));
    let t = timing::compute(&events, completed_2xx);
    let headers = a.head.as_ref().map(|h| &h.2);
    let header = |name: &str| headers.and_then(|h| h.get(name)).cloned();
    ResponseRow {
        request_id: s.request_id,
        round_id: s.round_id,
        round_index: s.round_index as i64,
        provider: s.provider,
        task_family: s.task_family,
        item_id: s.item_id,
        attempt: i64::from(s.attempt),
        outcome: term.outcome.as_str().to_string(),
        operational_outcome: operational_outcome(term.outcome, term.http_status).to_string(),
        http_status: term.http_status.map(i64::from),
        error_type: term.error_type,
        error_message: term.error_message,
        retry_after: header("retry-after"),
        done_seen: term.done_seen,
        bytes_received: term.bytes_received as i64,
        sse_event_count: a.events.len() as i64,
        complete: t.complete,
        ttfo_ms: t.ttfo_ms,
        ttfa_ms: t.ttfa_ms,
        last_answer_ms: t.last_answer_ms,
        e2e_latency_ms: t.e2e_latency_ms,
        pre_answer_reasoning_tokens: t.pre_answer_reasoning_tokens,
        reasoning_emitted_before_answer: t.reasoning_emitted_before_answer,
        visible_answer_tokens: t.visible_answer_tokens,
        output_tokens_per_second: t.output_tokens_per_second,
        time_to_headers_ms: a.head.as_ref().map(|h| ms(start, h.0)),
        time_to_first_event_ms: t.first_event_ms,
        send_lag_ms: ms(s.intended_t_ns, start),
        started_t_ns: start as i64,
        provider_request_id: t.provider_request_id.or_else(|| header("x-request-id")).or_else(|| header("request-id")),
        response_model: t.response_model,
        finish_reason: t.finish_reason,
        usage_prompt_tokens: t.usage.prompt_tokens,
        usage_completion_tokens: t.usage.completion_tokens,
        usage_total_tokens: t.usage.total_tokens,
        usage_cached_tokens: t.usage.cached_tokens,
        reasoning: t.reasoning,
        answer: t.answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operational_outcomes_cover_every_status_class() {
        assert_eq!(operational_outcome(Outcome::Completed, Some(200)), "2xx");
        assert_eq!(operational_outcome(Outcome::HttpError, Some(429)), "429");
        assert_eq!(operational_outcome(Outcome::HttpError, Some(404)), "other_4xx");
        assert_eq!(operational_outcome(Outcome::HttpError, Some(503)), "5xx");
        assert_eq!(operational_outcome(Outcome::HttpError, Some(302)), "other_http");
        assert_eq!(operational_outcome(Outcome::HttpError, Some(101)), "other_http");
        assert_eq!(operational_outcome(Outcome::Timeout, Some(200)), "timeout");
        assert_eq!(operational_outcome(Outcome::InvalidStream, Some(200)), "transport_error");
        assert_eq!(operational_outcome(Outcome::Interrupted, None), "transport_error");
    }
}
