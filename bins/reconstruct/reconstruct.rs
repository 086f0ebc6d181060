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
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What replaces a channel's text when the response echoed a credential in it.
pub const WITHHELD: &str = "<withheld: the response echoed a credential>";

/// Everything logged about one attempt.
#[derive(Default)]
struct Attempt {
    started: Option<(u64, RequestStarted)>,
    /// The send time on the wall clock, µs since the Unix epoch.
    started_at_us: i64,
    /// The run clock's zero on the wall clock (ns), from the attempt's segment.
    wall_anchor_ns: i128,
    head: Option<(u64, u16, BTreeMap<String, String>)>,
    http_version: Option<String>,
    events: Vec<(u64, SseEvent)>,
    echoed: BTreeSet<String>,
    terminal: Option<RequestTerminal>,
    first_seq: u64,
    /// Logged by `ib-import` from a reference record, which does not time the response head.
    imported: bool,
}

/// Attempts judged in flight at most: the log reader waits for the judges beyond this, so
/// memory holds a bounded number of attempts' events whatever the log's size.
const QUEUED: usize = 256;

/// A judged attempt: its request, attempt number, sort key and row (or why it has none).
type Judged = (String, u32, (u64, u64), Result<ResponseRow>);

pub fn run(args: Args) -> Result<()> {
    let run = RunDir::new(args.run);
    let lock = Lock::read(&run.lock())?;
    let _writer = run.lock_for_writing("ib-reconstruct")?;
    let mut log = event_log::LogReader::open(&run, &lock.run_id)?;
    if log.segment_count() == 0 {
        return Err(Error::bad(format!("{}: no event log; run ib-fetch first", run.events_dir().display())).into());
    }
    // The schedule the log was fetched for must itself belong to this run's lock.
    let schedule_inputs = parquet_io::read_inputs::<ScheduleRow>(&run.schedule())?;
    let mut current = provenance::Current::default();
    provenance::verify(&run, &mut current, "schedule.parquet", "ib-schedule", &schedule_inputs, &BTreeMap::new())?;
    let schedule_sha256 = file_sha256(&run.schedule())?;
    let mut inputs = BTreeMap::from([
        ("lock.json".to_string(), file_sha256(&run.lock())?),
        ("schedule.parquet".to_string(), schedule_sha256.clone()),
    ]);
    let rules = args.rules.rules;
    // The log is read (and its JSON parsed) on this thread; each attempt is judged (timing,
    // tokenization) on a worker as soon as its terminal event is read. Rows are ordered by
    // their key at the end, so the output does not depend on which worker finished first.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4);
    let (jobs_tx, jobs_rx) = std::sync::mpsc::sync_channel::<Attempt>(QUEUED);
    let jobs_rx = std::sync::Mutex::new(jobs_rx);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<Judged>();
    let judged: Vec<Judged> = std::thread::scope(|scope| -> Result<Vec<Judged>> {
        for _ in 0..workers {
            let (jobs_rx, done_tx) = (&jobs_rx, done_tx.clone());
            scope.spawn(move || loop {
                let next = jobs_rx.lock().map(|rx| rx.recv());
                let Ok(Ok(attempt)) = next else { break };
                let s = &attempt.started.as_ref().expect("judged attempts have a start").1;
                let (request_id, number) = (s.request_id.clone(), s.attempt);
                let key = (s.round_index, attempt.first_seq);
                if done_tx.send((request_id, number, key, row(attempt, rules))).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        let read = read_log(&mut log, &schedule_sha256, &jobs_tx);
        drop(jobs_tx);
        let judged: Vec<Judged> = done_rx.iter().collect();
        read?;
        Ok(judged)
    })?;
    for segment in log.segments() {
        inputs.insert(format!("events/{:04}.jsonl", segment.number), segment.sha256.clone());
    }
    rules.record(&mut inputs);
    // The final attempt of each request: its highest-numbered attempt that ended other than
    // `interrupted`. A request whose every attempt was interrupted has no row: it is missing.
    let mut finals: HashMap<String, (u32, (u64, u64), Result<ResponseRow>)> = HashMap::new();
    for (request_id, number, key, row) in judged {
        match finals.entry(request_id) {
            std::collections::hash_map::Entry::Occupied(mut e) if e.get().0 < number => {
                *e.get_mut() = (number, key, row);
            }
            std::collections::hash_map::Entry::Occupied(_) => {}
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((number, key, row));
            }
        }
    }
    let mut rows: Vec<((u64, u64), Result<ResponseRow>)> = finals.into_values().map(|(_, k, r)| (k, r)).collect();
    rows.sort_by_key(|(key, _)| *key);
    let mut writer = parquet_io::Writer::<ResponseRow>::create(&run.responses(), &inputs)?;
    let (mut total, mut completed) = (0usize, 0usize);
    for (_, row) in rows {
        let row = row?;
        total += 1;
        completed += usize::from(row.complete);
        writer.write(std::slice::from_ref(&row))?;
    }
    writer.finish()?;
    eprintln!(
        "ib-reconstruct: {total} responses ({completed} complete{}) → {}",
        if rules.is_reference() { ", the reference's scoring rules" } else { "" },
        run.responses().display()
    );
    Ok(())
}

/// Reads the whole log, sending each attempt that ended other than `interrupted` to the judges
/// once its terminal event is read. Only the attempts still open are held.
fn read_log(
    log: &mut event_log::LogReader,
    schedule_sha256: &str,
    jobs: &std::sync::mpsc::SyncSender<Attempt>,
) -> Result<()> {
    let mut open: HashMap<(String, u32), Attempt> = HashMap::new();
    let mut imported = false;
    let mut anchor_ns: i128 = 0;
    while let Some(entry) = log.next() {
        let env = entry?.env;
        if let Event::SegmentOpened(opened) = &env.event {
            if opened.schedule_sha256 != schedule_sha256 {
                let path = log.current().map(|s| s.path.display().to_string()).unwrap_or_default();
                return Err(Error::LockMismatch(format!(
                    "{path}: segment {} fetched another schedule.parquet (sha256 {}…) than the run's ({}…)",
                    opened.segment,
                    short_hash(&opened.schedule_sha256),
                    short_hash(schedule_sha256)
                ))
                .into());
            }
            imported = opened.endpoint_mode == inferbench_schemas::event::IMPORTED;
            anchor_ns = i128::from(opened.wall_clock_unix_ns) - i128::from(env.t_ns);
        }
        if let Some(done) = collect(&mut open, env, imported, anchor_ns) {
            if jobs.send(done).is_err() {
                break;
            }
        }
    }
    Ok(())
}

/// Adds one line to its attempt; returns the attempt when the line ended it other than
/// `interrupted` (an interrupted attempt is dropped: it is never scored).
fn collect(
    open: &mut HashMap<(String, u32), Attempt>,
    env: Envelope,
    imported: bool,
    anchor_ns: i128,
) -> Option<Attempt> {
    let (t, seq) = (env.t_ns, env.seq);
    match env.event {
        Event::RequestStarted(s) => {
            let a = open.entry((s.request_id.clone(), s.attempt)).or_default();
            a.first_seq = seq;
            a.imported = imported;
            a.wall_anchor_ns = anchor_ns;
            a.started_at_us = ((anchor_ns + i128::from(t)) / 1000) as i64;
            a.started = Some((t, s));
        }
        Event::ResponseHead(h) => {
            let a = open.entry((h.request_id, h.attempt)).or_default();
            a.http_version = h.http_version;
            a.head = Some((t, h.status, h.headers));
        }
        Event::SseEvent(e) => open.entry((e.request_id.clone(), e.attempt)).or_default().events.push((t, e)),
        Event::CredentialEcho(c) => {
            open.entry((c.request_id, c.attempt)).or_default().echoed.extend(c.channels);
        }
        Event::RequestTerminal(term) => {
            let key = (term.request_id.clone(), term.attempt);
            let mut attempt = open.remove(&key).unwrap_or_default();
            let ended = term.outcome != Outcome::Interrupted;
            attempt.terminal = Some(term);
            if attempt.started.is_some() && ended {
                return Some(attempt);
            }
        }
        _ => {}
    }
    None
}

/// `Retry-After` in seconds from `now_unix_ns`: delta-seconds, or an IMF-fixdate HTTP-date
/// (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) minus now.
fn retry_after_seconds(value: &str, now_unix_ns: i128) -> Option<f64> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<f64>().ok();
    }
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .iter()
        .position(|m| m == month)? as i64
        + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else { return None };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 {
        return None;
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let unix = days * 86_400 + h * 3600 + m * 60 + s;
    Some(unix as f64 - now_unix_ns as f64 / 1e9)
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
        retry_after_seconds: header("retry-after").and_then(|v| {
            let head_t = a.head.as_ref().map_or(start, |h| h.0);
            retry_after_seconds(&v, a.wall_anchor_ns + i128::from(head_t))
        }),
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
        started_at: a.started_at_us,
        provider_request_id: t.provider_request_id.or_else(|| header("x-request-id")).or_else(|| header("request-id")),
        response_model: t.response_model,
        finish_reason: t.finish_reason,
        usage_prompt_tokens: t.usage.prompt_tokens,
        usage_completion_tokens: t.usage.completion_tokens,
        usage_total_tokens: t.usage.total_tokens,
        usage_cached_tokens: t.usage.cached_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_delta_seconds_or_an_http_date() {
        assert_eq!(retry_after_seconds("120", 0), Some(120.0));
        assert_eq!(retry_after_seconds(" 7 ", 5), Some(7.0));
        // 1994-11-06T08:49:37Z is 784111777 s after the epoch.
        let now = 784_111_770i128 * 1_000_000_000;
        assert_eq!(retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(7.0));
        assert_eq!(retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT", now + 10_000_000_000), Some(-3.0));
        assert_eq!(retry_after_seconds("soon", 0), None);
        assert_eq!(retry_after_seconds("-1", 0), None);
        assert_eq!(retry_after_seconds("Sun, 06 Foo 1994 08:49:37 GMT", 0), None);
    }
}
