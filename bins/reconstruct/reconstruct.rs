//! Events → one `ResponseRow` per request.
use crate::args::Args;
use anyhow::Result;
use inferbench_schemas::canonical::short_hash;
use inferbench_schemas::event::{Envelope, Event, Outcome, RequestStarted, RequestTerminal, SseEvent};
use inferbench_schemas::lock::Lock;
use inferbench_schemas::rules::Rules;
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::tables::{ResponseRow, ScheduleRow};
use inferbench_schemas::timing::{self, TimedEvent};
use inferbench_schemas::vocab::{OperationalOutcome, TaskFamily};
use inferbench_schemas::{event_log, parquet_io, provenance, Error};
use std::collections::{BTreeMap, BTreeSet};

/// What replaces a channel's text when the response echoed a credential in it.
pub const WITHHELD: &str = "<withheld: the response echoed a credential>";

/// Everything logged about one attempt.
#[derive(Default)]
struct Attempt {
    started: Option<(u64, RequestStarted)>,
    head: Option<(u64, u16, BTreeMap<String, String>)>,
    http_version: Option<String>,
    events: Vec<(u64, SseEvent)>,
    echoed: BTreeSet<String>,
    terminal: Option<RequestTerminal>,
    first_seq: u64,
    /// Logged by `ib-import` from a reference record, which does not time the response head.
    imported: bool,
}

pub fn run(args: Args) -> Result<()> {
    let run = RunDir::new(args.run);
    let lock = Lock::read(&run.lock())?;
    let _writer = run.lock_for_writing("ib-reconstruct")?;
    let segments = event_log::read(&run, &lock.run_id)?;
    if segments.is_empty() {
        return Err(Error::bad(format!("{}: no event log; run ib-fetch first", run.events_dir().display())).into());
    }
    // The schedule the log was fetched for must itself belong to this run's lock.
    let schedule = parquet_io::read::<ScheduleRow>(&run.schedule())?;
    let mut current = provenance::Current::default();
    provenance::verify(&run, &mut current, "schedule.parquet", "ib-schedule", &schedule.inputs, &BTreeMap::new())?;
    let schedule_sha256 = file_sha256(&run.schedule())?;
    let mut inputs = BTreeMap::from([
        ("lock.json".to_string(), file_sha256(&run.lock())?),
        ("schedule.parquet".to_string(), schedule_sha256.clone()),
    ]);
    let mut attempts: BTreeMap<(String, u32), Attempt> = BTreeMap::new();
    for segment in segments {
        inputs.insert(format!("events/{:04}.jsonl", segment.number), file_sha256(&segment.path)?);
        let imported = segment.records.first().is_some_and(|env| {
            matches!(&env.event, Event::SegmentOpened(o) if o.endpoint_mode == inferbench_schemas::event::IMPORTED)
        });
        for env in segment.records {
            if let Event::SegmentOpened(opened) = &env.event {
                if opened.schedule_sha256 != schedule_sha256 {
                    return Err(Error::LockMismatch(format!(
                        "{}: segment {} fetched another schedule.parquet (sha256 {}…) than the run's ({}…)",
                        segment.path.display(),
                        opened.segment,
                        short_hash(&opened.schedule_sha256),
                        short_hash(&schedule_sha256)
                    ))
                    .into());
                }
            }
            collect(&mut attempts, env, imported);
        }
    }
    let rules = args.rules.rules;
    rules.record(&mut inputs);
    let rows = rows(attempts, rules)?;
    parquet_io::write(&run.responses(), &rows, &inputs)?;
    let completed = rows.iter().filter(|r| r.complete).count();
    eprintln!(
        "ib-reconstruct: {} responses ({completed} complete{}) → {}",
        rows.len(),
        if rules.is_reference() { ", the reference's scoring rules" } else { "" },
        run.responses().display()
    );
    Ok(())
}

fn collect(attempts: &mut BTreeMap<(String, u32), Attempt>, env: Envelope, imported: bool) {
    let (t, seq) = (env.t_ns, env.seq);
    match env.event {
        Event::RequestStarted(s) => {
            let a = attempts.entry((s.request_id.clone(), s.attempt)).or_default();
            a.first_seq = seq;
            a.imported = imported;
            a.started = Some((t, s));
        }
        Event::ResponseHead(h) => {
            let a = attempts.entry((h.request_id, h.attempt)).or_default();
            a.http_version = h.http_version;
            a.head = Some((t, h.status, h.headers));
        }
        Event::SseEvent(e) => attempts.entry((e.request_id.clone(), e.attempt)).or_default().events.push((t, e)),
        Event::CredentialEcho(c) => {
            attempts.entry((c.request_id, c.attempt)).or_default().echoed.extend(c.channels);
        }
        Event::RequestTerminal(term) => {
            let key = (term.request_id.clone(), term.attempt);
            attempts.entry(key).or_default().terminal = Some(term);
        }
        _ => {}
    }
}

/// The final attempt of each request: its highest-numbered attempt that ended other than
/// `interrupted`. A request whose every attempt was interrupted has no row: it is missing.
fn rows(attempts: BTreeMap<(String, u32), Attempt>, rules: Rules) -> Result<Vec<ResponseRow>> {
    let mut finals: BTreeMap<String, Attempt> = BTreeMap::new();
    for ((request_id, _), attempt) in attempts {
        let ended = attempt.terminal.as_ref().is_some_and(|t| t.outcome != Outcome::Interrupted);
        if attempt.started.is_some() && ended {
            // BTreeMap order is by attempt number, so a later attempt replaces an earlier one.
            finals.insert(request_id, attempt);
        }
    }
    let mut rows = Vec::with_capacity(finals.len());
    for a in finals.into_values() {
        let key = (a.started.as_ref().map(|s| s.1.round_index).unwrap_or(0), a.first_seq);
        rows.push((key, row(a, rules)?));
    }
    rows.sort_by_key(|(key, _)| *key);
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

fn ms(from: u64, to: u64) -> f64 {
    timing::ms_between(from, to)
}

fn row(a: Attempt, rules: Rules) -> Result<ResponseRow> {
    let (start, s) = a.started.expect("finals have a start");
    let term = a.terminal.expect("finals have a terminal");
    let task_family: TaskFamily =
        s.task_family.parse().map_err(|e| Error::bad(format!("events: request {}: task_family: {e}", s.request_id)))?;
    let events: Vec<TimedEvent> = a.events.iter().map(|(t, e)| TimedEvent::logged(start, *t, e)).collect();
    let logged = timing::logged_end(&term);
    let t = timing::compute_with(rules, &events, &logged, term.http_status);
    let headers = a.head.as_ref().map(|h| &h.2);
    let header = |name: &str| headers.and_then(|h| h.get(name)).cloned();
    let withhold = |channel: &str, text: String| if a.echoed.contains(channel) { WITHHELD.to_string() } else { text };
    Ok(ResponseRow {
        request_id: s.request_id,
        round_id: s.round_id,
        round_index: s.round_index as i64,
        provider: s.provider,
        task_family,
        item_id: s.item_id,
        attempt: i64::from(s.attempt),
        outcome: t.end.outcome,
        operational_outcome: OperationalOutcome::of(t.end.outcome, term.http_status),
        http_status: term.http_status.map(i64::from),
        error_type: t.end.error_type,
        error_message: t.end.message,
        error_body: t.end.error_body,
        content_type: header("content-type"),
        retry_after: header("retry-after"),
        http_version: a.http_version,
        done_seen: t.done_seen,
        bytes_received: term.bytes_received as i64,
        sse_event_count: a.events.len() as i64,
        events_after_end: (a.events.len() - t.counted_events) as i64,
        credential_echo: !a.echoed.is_empty(),
        reasoning: withhold("reasoning", t.reasoning),
        answer: withhold("answer", t.answer),
        complete: t.complete,
        ttfo_ms: t.ttfo_ms,
        ttfa_ms: t.ttfa_ms,
        last_answer_ms: t.last_answer_ms,
        e2e_latency_ms: t.e2e_latency_ms,
        pre_answer_reasoning_tokens: t.pre_answer_reasoning_tokens,
        reasoning_emitted_before_answer: t.reasoning_emitted_before_answer,
        reasoning_tokens: t.reasoning_tokens,
        visible_answer_tokens: t.visible_answer_tokens,
        output_tokens_per_second: t.output_tokens_per_second,
        time_to_headers_ms: a.head.as_ref().filter(|_| !a.imported).map(|h| ms(start, h.0)),
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
    })
}
