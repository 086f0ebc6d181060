//! Events → one `ResponseRow` per request.
use crate::args::Args;
use anyhow::Result;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::canonical::short_hash;
use inferbench_contract::event::{Envelope, Event, Outcome, RequestStarted, RequestTerminal, SseEvent};
use inferbench_contract::tables::{ResponseRow, ScheduleRow};
use inferbench_contract::vocab::OperationalOutcome;
use inferbench_contract::Error;
use inferbench_judge::rules::Rules;
use inferbench_judge::timing::{self, TimedEvent};
use inferbench_store::run::RunDir;
use inferbench_store::{event_log, execution, parquet_io, provenance};
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
    /// The run-clock time of the terminal event.
    ended_t_ns: u64,
    /// Where its `request_started` is in the log: its segment `<< 40 | seq` (see `collect`).
    first_seq: u64,
    /// Logged by `ib-import` from a reference record, which does not time the response head.
    imported: bool,
}

/// Attempts judged in flight at most: the log reader waits for the judges beyond this, so
/// memory holds a bounded number of attempts' events whatever the log's size. Enough for
/// the reading to go on while the judges wait for the tokenizer to be built (a fifth of a
/// second, a third of a 6,000-request run's reading) instead of leaving a core idle; about
/// 50 MB at most.
const QUEUED: usize = 2048;

/// A judged attempt: its request, attempt number, sort key and row (or why it has none).
type Judged = (String, u32, (u64, u64), Result<ResponseRow>);

pub fn run(args: Args) -> Result<()> {
    // Built while the log is opened and read, not in the first judge's way.
    let _ = std::thread::Builder::new().name("tokenizer".into()).spawn(inferbench_judge::tokenizer::warm);
    let run = RunDir::new(args.run);
    let lock = inferbench_store::lock::read(&run.lock())?;
    let _writer = run.lock_for_writing("ib-reconstruct")?;
    let mut log = open_log(&run, &lock.run_id, args.read_jsonl)?;
    let from_table = log.reads_table();
    // The schedule the log was fetched for must itself belong to this run's lock.
    // The log's first line is checked first (this run's id, its segment): a log from another
    // run is named as such before anything it was fetched for.
    let first = log.next().transpose()?;
    let schedule_inputs = parquet_io::read_inputs::<ScheduleRow>(&run.schedule())?;
    let mut current = provenance::Current::default();
    provenance::verify(&run, &mut current, RunDir::SCHEDULE, "ib-schedule", &schedule_inputs, &BTreeMap::new())?;
    let schedule_sha256 = file_sha256(&run.schedule())?;
    let mut inputs = BTreeMap::from([
        (RunDir::LOCK.to_string(), file_sha256(&run.lock())?),
        (RunDir::SCHEDULE.to_string(), schedule_sha256.clone()),
    ]);
    let rules = args.rules.rules;
    let mut sorter = Sorter::new(&run);
    let execution = judge_log(&mut log, first, &schedule_sha256, rules, &mut sorter)?;
    // A sharded log without one of its shards would give the others' responses as the run's.
    log.checker().require_every_shard(&run.events_dir())?;
    for segment in log.segments() {
        inputs.insert(RunDir::segment_name(segment.number), segment.sha256.clone());
    }
    rules.record(&mut inputs);
    let (total, completed) = write_responses(&run, &inputs, execution, sorter)?;
    eprintln!(
        "ib-reconstruct: {total} responses ({completed} complete{}{}) → {}",
        if rules.is_reference() { ", the reference's scoring rules" } else { "" },
        if from_table { "; the sealed log read from its events table" } else { "" },
        run.responses().display()
    );
    Ok(())
}

/// The run's event log: read from its sealed events table when the seal recorded one, else
/// (and always with `--read-jsonl`) from its JSONL segments.
fn open_log(run: &RunDir, run_id: &str, read_jsonl: bool) -> Result<event_log::LogReader> {
    let log = if read_jsonl {
        event_log::LogReader::open_jsonl(run, run_id)?
    } else {
        event_log::LogReader::open(run, run_id)?
    };
    if log.segment_count() == 0 {
        return Err(Error::bad(format!("{}: no event log; run ib-fetch first", run.events_dir().display())).into());
    }
    Ok(log)
}

/// Reads the log (and parses its JSON) on this thread and judges each attempt (timing,
/// tokenization) on a worker as soon as its terminal event is read. The sorter orders the rows
/// by their key, so the output does not depend on which worker finished first. Returns the
/// log's execution facts.
fn judge_log(
    log: &mut event_log::LogReader,
    first: Option<event_log::Entry>,
    schedule_sha256: &str,
    rules: Rules,
    sorter: &mut Sorter,
) -> Result<execution::Facts> {
    let workers = inferbench_store::worker_threads();
    let (jobs_tx, jobs_rx) = std::sync::mpsc::sync_channel::<Attempt>(QUEUED);
    let jobs_rx = std::sync::Mutex::new(jobs_rx);
    let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<Judged>(QUEUED);
    std::thread::scope(|scope| -> Result<execution::Facts> {
        for _ in 0..workers {
            let (jobs_rx, done_tx) = (&jobs_rx, done_tx.clone());
            let judge = std::thread::Builder::new().name("judge".into());
            judge.spawn_scoped(scope, move || loop {
                let next = jobs_rx.lock().map(|rx| rx.recv());
                let Ok(Ok(attempt)) = next else { break };
                let s = &attempt.started.as_ref().expect("judged attempts have a start").1;
                let (request_id, number) = (s.request_id.clone(), s.attempt);
                let key = (s.round_index, attempt.first_seq);
                if done_tx.send((request_id, number, key, row(attempt, rules))).is_err() {
                    break;
                }
            })?;
        }
        drop(done_tx);
        let sorting =
            std::thread::Builder::new().name("sorter".into()).spawn_scoped(scope, move || -> Result<()> {
                for judged in done_rx {
                    sorter.add(judged)?;
                }
                Ok(())
            })?;
        let read = read_log(log, first, schedule_sha256, &jobs_tx);
        drop(jobs_tx);
        let sorted = sorting.join().expect("the sorter does not panic");
        let execution = read?;
        sorted?;
        Ok(execution)
    })
}

/// `responses.parquet`, its rows in order; the log's execution facts ride along, so ib-report
/// need not read the log again. Returns how many rows, and how many of them complete.
fn write_responses(
    run: &RunDir,
    inputs: &BTreeMap<String, String>,
    facts: execution::Facts,
    sorter: Sorter,
) -> Result<(usize, usize)> {
    let extra = execution::metadata(&facts.finish());
    let mut writer = parquet_io::Writer::<ResponseRow>::create_with(&run.responses(), inputs, &extra)?;
    let (mut total, mut completed) = (0usize, 0usize);
    sorter.finish(|row| {
        total += 1;
        completed += usize::from(row.complete);
        writer.write(std::slice::from_ref(&row))?;
        Ok(())
    })?;
    writer.finish()?;
    Ok((total, completed))
}

/// Rows held in memory before a sorted run of them is spilled to a temporary table.
const SPILL_ROWS: usize = 16_384;

/// The rows in key order, whatever order the judges finish in, in bounded memory: rows are
/// sorted in runs of [`SPILL_ROWS`], each spilled to a temporary table beside the output, and
/// the runs merged at the end. Only each request's final attempt is written: its
/// highest-numbered attempt that ended other than `interrupted` (a request whose every
/// attempt was interrupted has no row: it is missing).
struct Sorter {
    dir: std::path::PathBuf,
    /// request id → its final attempt so far.
    finals: HashMap<String, u32>,
    held: Vec<((u64, u64), ResponseRow)>,
    /// Rows held before a run is spilled ([`SPILL_ROWS`]; smaller in tests).
    spill_rows: usize,
    /// The spilled runs: each table's path and its rows' keys, in order.
    runs: Vec<(std::path::PathBuf, Vec<(u64, u64)>)>,
    /// Attempts whose row could not be derived: (request, attempt, key, why).
    failed: Vec<(String, u32, (u64, u64), anyhow::Error)>,
}

impl Sorter {
    fn new(run: &RunDir) -> Sorter {
        Sorter {
            dir: run.root().to_path_buf(),
            finals: HashMap::new(),
            held: Vec::new(),
            spill_rows: SPILL_ROWS,
            runs: Vec::new(),
            failed: Vec::new(),
        }
    }

    fn add(&mut self, (request_id, number, key, row): Judged) -> Result<()> {
        let best = self.finals.entry(request_id.clone()).or_insert(number);
        if *best > number {
            return Ok(());
        }
        *best = number;
        match row {
            Ok(row) => self.held.push((key, row)),
            Err(e) => self.failed.push((request_id, number, key, e)),
        }
        if self.held.len() >= self.spill_rows {
            self.spill()?;
        }
        Ok(())
    }

    /// Whether `row` is its request's final attempt.
    fn is_final(finals: &HashMap<String, u32>, row: &ResponseRow) -> bool {
        finals.get(&row.request_id).is_some_and(|n| i64::from(*n) == row.attempt)
    }

    fn spill(&mut self) -> Result<()> {
        let mut held = std::mem::take(&mut self.held);
        held.sort_by_key(|(key, _)| *key);
        let path = self.dir.join(format!(".responses.sort-{}.{}.tmp", self.runs.len(), std::process::id()));
        let mut writer = parquet_io::Writer::<Spilled>::create(&path, &BTreeMap::new())?;
        let mut keys = Vec::with_capacity(held.len());
        let mut batch = Vec::with_capacity(SPILL_BATCH);
        for (key, row) in held {
            if Self::is_final(&self.finals, &row) {
                keys.push(key);
                batch.push(Spilled(row));
                if batch.len() == SPILL_BATCH {
                    writer.write(&batch)?;
                    batch.clear();
                }
            }
        }
        writer.write(&batch)?;
        writer.finish()?;
        self.runs.push((path, keys));
        Ok(())
    }

    /// Hands every final row to `each`, in key order; removes the spilled runs.
    fn finish(mut self, mut each: impl FnMut(ResponseRow) -> Result<()>) -> Result<()> {
        self.merge(&mut each)
    }

    fn merge(&mut self, each: &mut impl FnMut(ResponseRow) -> Result<()>) -> Result<()> {
        // The failure of the first final row in key order, so the error does not depend on
        // which judge finished first.
        let finals = &self.finals;
        let mut failed: Vec<_> =
            std::mem::take(&mut self.failed).into_iter().filter(|(id, n, _, _)| finals.get(id) == Some(n)).collect();
        failed.sort_by_key(|(_, _, key, _)| *key);
        if let Some((_, _, _, e)) = failed.into_iter().next() {
            return Err(e);
        }
        let mut held = std::mem::take(&mut self.held);
        held.sort_by_key(|(key, _)| *key);
        held.retain(|(_, row)| Self::is_final(&self.finals, row));
        let mut heads: Vec<(SpilledKeys, RunRows)> = Vec::new();
        for (path, keys) in &self.runs {
            heads.push((keys.clone().into_iter().peekable(), RunRows::open(path)?));
        }
        let mut memory = held.into_iter().peekable();
        loop {
            // The smallest key among the runs' next rows and the rows still in memory.
            let mut best: Option<(usize, (u64, u64))> = memory.peek().map(|(k, _)| (usize::MAX, *k));
            for (i, (keys, _)) in heads.iter_mut().enumerate() {
                if let Some(k) = keys.peek() {
                    if best.is_none_or(|(_, b)| *k < b) {
                        best = Some((i, *k));
                    }
                }
            }
            let Some((from, _)) = best else { return Ok(()) };
            let row = if from == usize::MAX {
                memory.next().expect("peeked").1
            } else {
                let (keys, rows) = &mut heads[from];
                keys.next();
                rows.next()?
            };
            // A spilled row may have been superseded by a later attempt since.
            if Self::is_final(&self.finals, &row) {
                each(row)?;
            }
        }
    }
}

impl Drop for Sorter {
    /// The spilled runs are removed however the sort ends: finished, or given up on an error
    /// (a full disk at a later spill, a row that cannot be derived).
    fn drop(&mut self) {
        for (path, _) in &self.runs {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A row of a spilled run: small row groups and batches, so that merging many runs holds
/// little of each.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
struct Spilled(ResponseRow);
impl parquet_io::Table for Spilled {
    const NAME: &'static str = "responses-sorted-run";
    const ROW_GROUP_ROWS: usize = SPILL_BATCH;
}

/// Rows per row group and per read batch of a spilled run.
const SPILL_BATCH: usize = 256;

/// A spilled run's sort keys, in order, read one ahead.
type SpilledKeys = std::iter::Peekable<std::vec::IntoIter<(u64, u64)>>;

/// The rows of a spilled run, read a batch at a time.
struct RunRows {
    reader: parquet_io::Reader<Spilled>,
    batch: std::vec::IntoIter<Spilled>,
}

impl RunRows {
    fn open(path: &std::path::Path) -> Result<RunRows> {
        Ok(RunRows { reader: parquet_io::Reader::open_batched(path, SPILL_BATCH)?, batch: Vec::new().into_iter() })
    }

    fn next(&mut self) -> Result<ResponseRow> {
        loop {
            if let Some(Spilled(row)) = self.batch.next() {
                return Ok(row);
            }
            match self.reader.next() {
                Some(batch) => self.batch = batch?.into_iter(),
                None => anyhow::bail!("a spilled run of sorted responses ended early"),
            }
        }
    }
}

/// Reads the whole log, sending each attempt that ended other than `interrupted` to the judges
/// once its terminal event is read, and gathering the run's execution facts. Only the
/// attempts still open are held.
fn read_log(
    log: &mut event_log::LogReader,
    first: Option<event_log::Entry>,
    schedule_sha256: &str,
    jobs: &std::sync::mpsc::SyncSender<Attempt>,
) -> Result<execution::Facts> {
    let mut facts = execution::Facts::default();
    let mut open = Open::default();
    let mut imported = false;
    let mut anchor_ns: i128 = 0;
    let mut first = first.map(Ok);
    while let Some(entry) = first.take().or_else(|| log.next()) {
        let entry = entry?;
        let (segment, env) = (entry.segment, entry.env);
        facts.observe(&env);
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
            imported = opened.endpoint_mode == inferbench_contract::vocab::EndpointMode::Imported;
            anchor_ns = i128::from(opened.wall_clock_unix_ns) - i128::from(env.t_ns);
        }
        if let Some(done) = collect(&mut open, segment, env, imported, anchor_ns) {
            if jobs.send(done).is_err() {
                break;
            }
        }
    }
    Ok(facts)
}

/// The attempts still open, by request id (a request has one open attempt, or a few after
/// a resumed fetch): looked up by the id each line carries, without copying it.
type Open = rustc_hash::FxHashMap<String, Vec<(u32, Attempt)>>;

/// The open attempt `(request_id, attempt)`, opened if new.
fn attempt<'a>(open: &'a mut Open, request_id: &str, number: u32) -> &'a mut Attempt {
    if !open.contains_key(request_id) {
        open.insert(request_id.to_string(), Vec::with_capacity(1));
    }
    let attempts = open.get_mut(request_id).expect("just inserted");
    let at = match attempts.iter().position(|(n, _)| *n == number) {
        Some(at) => at,
        None => {
            attempts.push((number, Attempt::default()));
            attempts.len() - 1
        }
    };
    &mut attempts[at].1
}

/// Adds one line to its attempt; returns the attempt when the line ended it other than
/// `interrupted` (an interrupted attempt is dropped: it is never scored).
fn collect(open: &mut Open, segment: u32, env: Envelope, imported: bool, anchor_ns: i128) -> Option<Attempt> {
    let (t, seq) = (env.t_ns, env.seq);
    match env.event {
        Event::RequestStarted(s) => {
            let a = attempt(open, &s.request_id, s.attempt);
            // Its place in the log: in segment order, then line order. An unsharded log's seq
            // alone gives the same order; a sharded log's shards each count their own.
            a.first_seq = (u64::from(segment) << 40) | seq;
            a.imported = imported;
            a.wall_anchor_ns = anchor_ns;
            a.started_at_us = ((anchor_ns + i128::from(t)) / 1000) as i64;
            // Most streams are a few dozen events: room for them up front, not by doubling.
            a.events.reserve(EXPECTED_EVENTS);
            a.started = Some((t, s));
        }
        Event::ResponseHead(h) => {
            let a = attempt(open, &h.request_id, h.attempt);
            a.http_version = h.http_version;
            a.head = Some((t, h.status, h.headers));
        }
        Event::SseEvent(e) => attempt(open, &e.request_id, e.attempt).events.push((t, e)),
        Event::CredentialEcho(c) => attempt(open, &c.request_id, c.attempt).echoed.extend(c.channels),
        Event::RequestTerminal(term) => {
            let mut found = None;
            if let Some(attempts) = open.get_mut(&term.request_id) {
                if let Some(at) = attempts.iter().position(|(n, _)| *n == term.attempt) {
                    found = Some(attempts.swap_remove(at).1);
                }
                if attempts.is_empty() {
                    open.remove(&term.request_id);
                }
            }
            let mut attempt = found.unwrap_or_default();
            let ended = term.outcome != Outcome::Interrupted;
            attempt.terminal = Some(term);
            attempt.ended_t_ns = t;
            if attempt.started.is_some() && ended {
                return Some(attempt);
            }
        }
        _ => {}
    }
    None
}

/// Events per attempt reserved when it starts.
const EXPECTED_EVENTS: usize = 64;

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
    let days = inferbench_contract::civil::days_from_civil(year, month, day);
    let unix = days * 86_400 + h * 3600 + m * 60 + s;
    Some(unix as f64 - now_unix_ns as f64 / 1e9)
}

fn ms(from: u64, to: u64) -> f64 {
    timing::ms_between(from, to)
}

fn row(a: Attempt, rules: Rules) -> Result<ResponseRow> {
    let (start, s) = a.started.expect("finals have a start");
    let term = a.terminal.expect("finals have a terminal");
    let events: Vec<TimedEvent> = a.events.iter().map(|(t, e)| TimedEvent::logged(start, *t, e)).collect();
    let logged = timing::logged_end(&term);
    let mut t = timing::compute_on(rules, s.api, &events, &logged, term.http_status);
    timing::ceiling_reached(&mut t, timing::ceiling(s.api, &s.body));
    let headers = a.head.as_ref().map(|h| &h.2);
    let header = |name: &str| headers.and_then(|h| h.get(name)).cloned();
    let withhold = |channel: &str, text: String| if a.echoed.contains(channel) { WITHHELD.to_string() } else { text };
    Ok(ResponseRow {
        request_id: s.request_id,
        round_id: s.round_id,
        round_index: s.round_index as i64,
        provider: s.provider,
        task_family: s.task_family,
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
        step: s.step.map(i64::from),
        intended_t_ns: s.intended_t_ns as i64,
        released_t_ns: s.released_t_ns.map(|t| t as i64),
        ended_t_ns: a.ended_t_ns as i64,
        target_input_tokens: s.target_input_tokens.map(i64::from),
        target_output_tokens: s.target_output_tokens.map(i64::from),
        answer_chunk_ms: t.answer_chunks.iter().map(|c| c.offset_ms).collect(),
        answer_chunk_tokens: t.answer_chunks.iter().map(|c| c.tokens).collect(),
        answer_buffered: t.buffered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::testutil::{request_started, request_terminal};

    fn judged(request: u32, attempt: u32, seq: u64) -> Judged {
        let started = RequestStarted { attempt, ..request_started(&format!("req-{request}"), u64::from(request / 3)) };
        let completed = request_terminal(&started.request_id, Outcome::Completed);
        let terminal = RequestTerminal { attempt, http_status: Some(200), ..completed };
        let key = (started.round_index, seq);
        let id = started.request_id.clone();
        let a =
            Attempt { started: Some((seq, started)), terminal: Some(terminal), first_seq: seq, ..Attempt::default() };
        (id, attempt, key, row(a, Rules::Inferbench))
    }

    fn sorted(order: &[Judged], spill_rows: usize, dir: &std::path::Path) -> Vec<(String, i64)> {
        let mut sorter = Sorter::new(&RunDir::new(dir));
        sorter.spill_rows = spill_rows;
        for (id, n, key, row) in order {
            let row = match row {
                Ok(row) => Ok(row.clone()),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            };
            sorter.add((id.clone(), *n, *key, row)).unwrap();
        }
        let mut out = Vec::new();
        sorter
            .finish(|r| {
                out.push((r.request_id, r.attempt));
                Ok(())
            })
            .unwrap();
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "the spilled runs are removed");
        out
    }

    #[test]
    fn rows_come_out_in_key_order_with_final_attempts_whatever_the_arrival_order_and_spilling() {
        let dir = tempfile::tempdir().unwrap();
        // Request 1's attempt 1 (seq 10) is superseded by its attempt 2, sent later (seq 90).
        let mut all: Vec<Judged> = (0..12).map(|r| judged(r, 1, u64::from(r) * 10)).collect();
        all.push(judged(1, 2, 90));
        let expected = sorted(&all, usize::MAX, dir.path());
        assert_eq!(expected.len(), 12);
        assert!(expected.contains(&("req-1".into(), 2)) && !expected.contains(&("req-1".into(), 1)));
        let mut keys: Vec<(u64, u64)> = Vec::new();
        for (id, n) in &expected {
            keys.push(all.iter().find(|j| &j.0 == id && i64::from(j.1) == *n).unwrap().2);
        }
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "key order: {keys:?}");
        let mut reversed: Vec<Judged> =
            all.iter().rev().map(|j| judged(j.0[4..].parse().unwrap(), j.1, j.2 .1)).collect();
        for spill_rows in [1, 2, 5, usize::MAX] {
            assert_eq!(sorted(&reversed, spill_rows, dir.path()), expected, "reversed, spilling every {spill_rows}");
        }
        reversed.rotate_left(5);
        assert_eq!(sorted(&reversed, 3, dir.path()), expected, "rotated, spilling every 3");
    }

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
