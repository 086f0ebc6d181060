//! The fetch stage: validate, resume from the log, execute the remaining rounds, seal.
use crate::args::Args;
use crate::client::{self, Limits, ProviderClient, Unit};
use crate::credentials::{read_env_file, Credentials};
use crate::log::{line_buffer, EventLog, ReleasedLine, StartedLine};
use crate::resume::{self, LogState};
use anyhow::{Context, Result};
use futures_util::StreamExt;
use inferbench_cli::nofile;
use inferbench_cli::Interrupted;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::event::{
    EndpointMode, ErrorKind, Event, Outcome, RequestTerminal, RoundClosed, RoundReleased, SegmentOpened, SegmentStatus,
};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::{Error, CODE_VERSION};
use inferbench_inputs::dataset::Dataset;
use inferbench_inputs::providers::simulated_endpoint;
use inferbench_inputs::spec::{HttpVersion, Spec, HTTP_VERSION_KEY};
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::{RunDir, WriterLock};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

struct Plan {
    run: RunDir,
    spec: Spec,
    data: Dataset,
    schedule: Vec<ScheduleRow>,
    clients: BTreeMap<String, Arc<ProviderClient>>,
    deadline: Duration,
    limits: Limits,
    endpoint_mode: EndpointMode,
    /// The run id, from the lock: a copied or renamed run directory resumes as the same run.
    run_id: String,
    /// Held for the whole fetch: a second fetch (or any stage) on this run refuses at once.
    _writer: WriterLock,
}

pub fn run(args: Args) -> Result<()> {
    // rustls is built without a default crypto provider (no C build of aws-lc); ring is
    // installed once here. It fails only if a provider is already installed, which is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    refuse_imported(&RunDir::new(&args.run))?;
    let plan = Arc::new(prepare(args)?);
    let state = Arc::new(resume::scan(&plan.run, &plan.run_id)?);
    if let Some(mode) = state.endpoint_mode.filter(|m| *m != plan.endpoint_mode) {
        return Err(Error::LockMismatch(format!(
            "{}: this run was fetched from {mode} providers; it cannot continue against {} ones (a run never \
             mixes simulated and real segments); start a new run",
            plan.run.events_dir().display(),
            plan.endpoint_mode
        ))
        .into());
    }
    let pending = plan.schedule.iter().filter(|r| !state.terminal.contains(&r.request_id)).count();
    let nothing_to_send = pending == 0 && state.open.is_empty();
    if !nothing_to_send {
        send(Arc::clone(&plan), state)?;
    }
    seal(&plan, nothing_to_send)
}

/// Sends every request the log does not hold a terminal outcome for.
fn send(plan: Arc<Plan>, state: Arc<LogState>) -> Result<()> {
    // One connection per provider: a fleet of a thousand needs more than the usual 1,024 files.
    nofile::ensure(plan.clients.len() as u64, "ib-fetch").map_err(|e| Error::bad(format!("{e:#}")))?;
    // One thread runs every request. A round's launch then queues all its requests before any
    // byte of them is written, so their `request_started` lines go to the log in one write
    // ahead of the wire, and no other work runs between two sends (see `run_round`). Preparing
    // the next round and flushing the log run on blocking threads beside it.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(execute(plan, state))
}

/// Seals the log once every request is terminal (or says it stays open). With nothing sent,
/// sealing a complete, perhaps already sealed, run again finishes a seal a kill interrupted
/// and otherwise changes nothing.
fn seal(plan: &Plan, nothing_sent: bool) -> Result<()> {
    let sealed = inferbench_store::sealed::seal(&plan.run, &plan.run_id)?;
    if nothing_sent {
        eprintln!("ib-fetch: every scheduled request is terminal; {}", sealed_summary(&sealed));
    } else {
        eprintln!("ib-fetch: {} ({})", sealed_summary(&sealed), plan.run.events_parquet().display());
    }
    Ok(())
}

fn sealed_summary(sealed: &inferbench_store::sealed::Sealed) -> String {
    let (original, compressed) =
        sealed.segments.iter().fold((0, 0), |(o, c), s| (o + s.original_bytes, c + s.compressed_bytes));
    if sealed.complete {
        format!(
            "{} events; log sealed: {} segment(s), {original} bytes compressed to {compressed}",
            sealed.events,
            sealed.segments.len()
        )
    } else {
        format!("{} events; the log stays open (requests remain)", sealed.events)
    }
}

/// An imported run's log is the reference runner's record of its fetch: nothing is ever sent
/// for it (checked before anything else, credentials included).
fn refuse_imported(run: &RunDir) -> Result<()> {
    let imported = run.lock().exists() && inferbench_store::lock::read(&run.lock())?.imported_from.is_some();
    if imported {
        return Err(Error::bad(format!(
            "{}: this run was imported from a reference run (ib-import); its log is the reference's record and is \
             never fetched again; re-score it with `make rescore RUN={}`",
            run.root().display(),
            run.root().display()
        ))
        .into());
    }
    Ok(())
}

/// Everything is checked here, before the first byte is sent.
fn prepare(args: Args) -> Result<Plan> {
    let Args {
        run,
        spec: spec_path,
        dataset: dataset_dir,
        endpoint_base,
        send_credentials_to_simulator,
        env_file,
        deadline_seconds,
    } = args;
    let mut pipeline = Pipeline::open(&run, &spec_path)?;
    let writer = pipeline.run.lock_for_writing("ib-fetch")?;
    let data = pipeline.dataset(dataset_dir.as_deref())?;
    let schedule: Vec<ScheduleRow> = pipeline.table(&pipeline.run.schedule(), "ib-schedule")?;
    let Pipeline { run, spec, providers, lock, .. } = pipeline;
    let names: Vec<&str> = lock.providers.iter().map(String::as_str).collect();
    let env_values =
        read_env_file(&env_file, &providers.providers.iter().flat_map(|p| p.credential_names()).collect::<Vec<_>>());
    let http_version = spec.inference.transport.http_version;
    let mut clients = BTreeMap::new();
    let mut missing = Vec::new();
    for provider in providers.providers.iter().filter(|p| names.contains(&p.name.as_str())) {
        let (mut creds, absent) = Credentials::resolve(provider, &env_values);
        let endpoint = match &endpoint_base {
            Some(base) => {
                // A simulator is no place for real keys (and a stale IB_ENDPOINT_BASE must
                // not send them to whatever it names).
                if !send_credentials_to_simulator || !absent.is_empty() {
                    creds = Credentials::simulated(provider);
                }
                simulated_endpoint(base, &provider.name)
            }
            None => {
                missing.extend(absent);
                provider.endpoint.clone()
            }
        };
        let client = ProviderClient::new(provider.clone(), endpoint, creds, http_version)?;
        clients.insert(provider.name.clone(), Arc::new(client));
    }
    if !missing.is_empty() {
        return Err(Error::bad(format!(
            "missing credentials (set them in the environment or {}): {}; nothing was sent",
            env_file.display(),
            missing.join(", ")
        ))
        .into());
    }
    if http_version == HttpVersion::Http2 {
        // Not an error: the log records each response's version. But the operator who asked
        // for HTTP/2 learns before the run which providers cannot speak it.
        let plain: Vec<&str> = clients
            .iter()
            .filter(|(_, c)| c.endpoint.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://")))
            .map(|(name, _)| name.as_str())
            .collect();
        if !plain.is_empty() {
            eprintln!(
                "ib-fetch: {HTTP_VERSION_KEY} is \"2\", but these endpoints are plain http:// and speak HTTP/1.1 \
                 (HTTP/2 is negotiated over TLS only): {}",
                plain.join(", ")
            );
        }
    }
    for row in &schedule {
        if data.item(row.task_family, &row.item_id).is_none() || !clients.contains_key(&row.provider) {
            return Err(Error::bad(format!(
                "{}: request {}: unknown item or provider",
                run.schedule().display(),
                row.request_id
            ))
            .into());
        }
    }
    let deadline = Duration::from_secs_f64(deadline_seconds.unwrap_or(spec.inference.timeout_seconds));
    let endpoint_mode = if endpoint_base.is_some() { EndpointMode::Simulated } else { EndpointMode::Providers };
    let stream_limits = spec.inference.stream_limits;
    let limits = Limits {
        max_event_bytes: usize::try_from(stream_limits.max_event_bytes).unwrap_or(usize::MAX),
        max_response_bytes: stream_limits.max_response_bytes,
    };
    let run_id = lock.run_id.clone();
    Ok(Plan { run, spec, data, schedule, clients, deadline, limits, endpoint_mode, run_id, _writer: writer })
}

/// The host name, hashed: runs record where they ran without naming the machine.
fn host_hash() -> String {
    let name =
        std::fs::read_to_string("/proc/sys/kernel/hostname").or_else(|_| std::env::var("HOSTNAME")).unwrap_or_default();
    inferbench_contract::canonical::sha256_hex(name.trim().as_bytes())[..16].to_string()
}

fn wall_clock_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

async fn execute(plan_owner: Arc<Plan>, state: Arc<LogState>) -> Result<()> {
    let plan = &*plan_owner;
    std::fs::create_dir_all(plan.run.events_dir())?;
    let wall = wall_clock_ns();
    // The run clock continues across processes: this segment starts at its wall-clock offset
    // from the first segment, and never before the last recorded instant.
    let base_ns = match state.anchor_wall_ns {
        Some(anchor) => wall.saturating_sub(anchor).max(state.last_t_ns + 1),
        None => 0,
    };
    let log =
        Arc::new(EventLog::open(&plan.run.segment(state.next_segment), plan.run_id.clone(), state.next_seq, base_ns)?);
    log.emit(Event::SegmentOpened(SegmentOpened {
        segment: state.next_segment,
        wall_clock_unix_ns: wall,
        code_version: CODE_VERSION.to_string(),
        schedule_sha256: file_sha256(&plan.run.schedule())?,
        scheduled_requests: plan.schedule.len() as u64,
        already_terminal: state.terminal.len() as u64,
        endpoint_mode: plan.endpoint_mode,
        deadline_ms: plan.deadline.as_millis() as u64,
        max_event_bytes: plan.limits.max_event_bytes as u64,
        max_response_bytes: plan.limits.max_response_bytes,
        http_version: Some(plan.spec.inference.transport.http_version.as_str().to_string()),
        execution_region: std::env::var("BENCHMARK_EXECUTION_REGION").unwrap_or_else(|_| "local-unspecified".into()),
        host_sha256_16: host_hash(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
    }))?;
    for (request_id, attempt) in &state.open {
        log.emit(Event::RequestTerminal(RequestTerminal {
            request_id: request_id.clone(),
            attempt: *attempt,
            outcome: Outcome::Interrupted,
            http_status: None,
            error_type: Some(ErrorKind::Interrupted),
            error_message: Some("the fetch process stopped before this attempt ended; it is sent again".into()),
            error_body: None,
            bytes_received: 0,
            done_seen: false,
        }))?;
    }
    let progress = indicatif::ProgressBar::new(plan.schedule.len() as u64);
    progress.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} round {msg} [{bar:30}] {pos}/{len} requests, {elapsed} elapsed, ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    progress.set_position(state.terminal.len() as u64);
    let before = state.terminal.len() as u64;
    // One listener for the whole run, so a signal between two rounds is not lost.
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let all_rounds = round_ranges(&plan.schedule);
    let total_rounds = all_rounds.len();
    let rounds: Vec<std::ops::Range<usize>> = all_rounds
        .into_iter()
        .filter(|range| plan.schedule[range.clone()].iter().any(|r| !state.terminal.contains(&r.request_id)))
        .collect();
    let pending_rounds = rounds.len();
    let mut prepared_rounds = spawn_preparer(&plan_owner, &state, &log, rounds)?;
    let mut syncing = None;
    let mut next = prepared_rounds.recv().await;
    let mut sent_rounds = 0;
    while let Some(prepared) = next.take() {
        let prepared = prepared.context("preparing a round")?;
        sent_rounds += 1;
        progress.set_message(format!("{}/{}", prepared.round_index + 1, total_rounds));
        // While the round runs: the log so far goes to stable storage (without the launch
        // waiting for the disk; a failed flush stops the fetch after the round) and the next
        // round is taken from its builder, which starts on another. Nothing of this, not even
        // the wake of a thread, happens between the last answer of a round and the next launch.
        let meanwhile = async { (flush(&mut syncing, &log).await, prepared_rounds.recv().await) };
        tokio::select! {
            done = run_round(plan, &log, prepared, meanwhile) => {
                let (flushed, upcoming) = done?;
                flushed?;
                next = upcoming;
            }
            _ = &mut shutdown => {
                // Stop at once: in-flight attempts stay open in the log and the next fetch
                // closes them as `interrupted` and sends them again.
                progress.finish_and_clear();
                log.close(state.next_segment, SegmentStatus::Interrupted, before)?;
                return Err(Interrupted.into());
            }
        }
        progress.set_position(before + log.terminals());
    }
    if sent_rounds != pending_rounds {
        // Its channel closed early: the thread panicked (a bug); the log stays open for a resume.
        anyhow::bail!("the thread that builds the requests stopped after {sent_rounds} of {pending_rounds} rounds");
    }
    if let Some(done) = syncing.take() {
        done.await.context("flushing the log")?.context("flushing the log")?;
    }
    progress.finish_and_clear();
    let terminal = log.close(state.next_segment, SegmentStatus::Complete, before)?;
    eprintln!("ib-fetch: {terminal} of {} scheduled requests terminal", plan.schedule.len());
    Ok(())
}

type Syncing = tokio::task::JoinHandle<std::io::Result<()>>;

/// Starts forcing the log to stable storage on a blocking thread unless the last flush is still
/// running; fails when the last flush failed.
async fn flush(syncing: &mut Option<Syncing>, log: &EventLog) -> Result<()> {
    if syncing.as_ref().is_some_and(|s| !s.is_finished()) {
        return Ok(());
    }
    if let Some(done) = syncing.take() {
        done.await.context("flushing the log")?.context("flushing the log")?;
    }
    let file = log.sync_handle()?;
    *syncing = Some(tokio::task::spawn_blocking(move || file.sync_data()));
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

fn unit(plan: &Plan, state: &LogState, row: &ScheduleRow) -> Unit {
    let item = plan.data.item(row.task_family, &row.item_id).expect("checked in prepare");
    let provider = &plan.clients[&row.provider].provider;
    Unit {
        request_id: row.request_id.clone(),
        round_id: row.round_id.clone(),
        round_index: row.round_index as u64,
        provider: row.provider.clone(),
        task_family: row.task_family,
        item_id: row.item_id.clone(),
        attempt: state.attempts.get(&row.request_id).copied().unwrap_or(0) + 1,
        body: provider.body(&plan.spec, &item.system, &item.user),
    }
}

/// How many requests are built ahead of the round being sent.
const PREPARED_AHEAD: usize = 4000;

/// A round ready to release: its requests still to send, each built and its log line
/// serialised, and its `round_released` line.
struct PreparedRound {
    round_id: String,
    round_index: u64,
    /// How many requests the schedule holds in this round (more than `requests` when a resumed
    /// fetch sends only the missing ones).
    scheduled: usize,
    requests: Vec<client::Prepared>,
    released: ReleasedLine,
    /// Room for the round's log lines ([`line_buffer`]), its send times, and its sends.
    scratch: Vec<u8>,
    times: Vec<u64>,
    sent: Vec<(StartedLine, u64)>,
}

/// The index ranges of the schedule's rounds, in order.
fn round_ranges(schedule: &[ScheduleRow]) -> Vec<std::ops::Range<usize>> {
    let mut start = 0;
    schedule
        .chunk_by(|a, b| a.round_index == b.round_index)
        .map(|round| {
            start += round.len();
            start - round.len()..start
        })
        .collect()
}

/// Builds `rounds` (ranges of the schedule), in order, on a thread of its own, a few thousand
/// requests (at least two rounds) ahead of the round being sent: a thousand requests take tens
/// of milliseconds to build, and nothing of that, not even handing the work over, happens
/// between two rounds. The thread stops at the first failure (which it sends) or when the
/// receiver is dropped.
fn spawn_preparer(
    plan: &Arc<Plan>,
    state: &Arc<LogState>,
    log: &Arc<EventLog>,
    rounds: Vec<std::ops::Range<usize>>,
) -> Result<tokio::sync::mpsc::Receiver<Result<PreparedRound>>> {
    let widest = rounds.iter().map(|r| r.len()).max().unwrap_or(1).max(1);
    let (tx, rx) = tokio::sync::mpsc::channel((PREPARED_AHEAD / widest).clamp(2, 64));
    let (plan, state, log) = (Arc::clone(plan), Arc::clone(state), Arc::clone(log));
    std::thread::Builder::new()
        .name("ib-fetch-prepare".into())
        .spawn(move || {
            for range in rounds {
                let round = prepare_round(&plan, &state, &log, &plan.schedule[range]);
                let failed = round.is_err();
                if tx.blocking_send(round).is_err() || failed {
                    return;
                }
            }
        })
        .context("starting the thread that builds the requests")?;
    Ok(rx)
}

/// A round's requests still to send, built, and its `round_released` line.
fn prepare_round(plan: &Arc<Plan>, state: &LogState, log: &EventLog, round: &[ScheduleRow]) -> Result<PreparedRound> {
    let requests = round
        .iter()
        .filter(|row| !state.terminal.contains(&row.request_id))
        .map(|row| client::prepare(log, Arc::clone(&plan.clients[&row.provider]), unit(plan, state, row)))
        .collect::<Result<Vec<_>>>()?;
    let released = log.released_line(RoundReleased {
        round_id: round[0].round_id.clone(),
        round_index: round[0].round_index as u64,
        request_ids: requests.iter().map(|p| p.unit.request_id.clone()).collect(),
    })?;
    let scratch = line_buffer(&released, requests.iter().map(|p| &p.line));
    Ok(PreparedRound {
        scratch,
        times: Vec::with_capacity(requests.len()),
        sent: Vec::with_capacity(requests.len()),
        round_id: round[0].round_id.clone(),
        round_index: round[0].round_index as u64,
        scheduled: round.len(),
        requests,
        released,
    })
}

/// Releases the prepared requests together and waits for every terminal outcome, running
/// `meanwhile` beside them once they are on their way.
///
/// The launch is one loop that never yields: per request, the send time is taken and the
/// request handed to its provider's connection at once; then each request's exchange is set
/// up and every `request_started` line goes to the log in one write. On the single-threaded
/// runtime no connection writes a byte before this function yields, so every request is in
/// the log before it is on the wire, and the launch skew (latest minus earliest send time) is
/// the cost of the hand-overs alone. Before the barrier opens, every connection's state is read
/// once, so that the hand-overs find it in the cache (that pass counts in the gap between
/// rounds, where it belongs: it is the client's work).
async fn run_round<T>(
    plan: &Plan,
    log: &Arc<EventLog>,
    round: PreparedRound,
    meanwhile: impl std::future::Future<Output = T>,
) -> Result<T> {
    let PreparedRound {
        round_id,
        round_index,
        scheduled,
        requests: mut prepared,
        released: released_line,
        mut times,
        mut scratch,
        sent: mut lines,
    } = round;
    // Every connection's state, read once before the barrier opens (see `Transport::warm`):
    // this is the client's own work between two rounds, and it keeps the cache misses of a
    // thousand connections out of the launch below.
    for request in &prepared {
        std::hint::black_box(request.client.http.warm());
    }
    let released = log.write_released(&released_line, &mut scratch)?;
    let count = prepared.len();
    // The requests run in this task, not one task each: adding one to the set costs less than
    // spawning it, and dropping the set (when a signal stops the round) drops them all.
    let mut requests = futures_util::stream::FuturesUnordered::new();
    // The launch: per request, its send time and its hand-over to its connection, nothing more
    // (the hand-over writes only beside the request).
    for request in prepared.iter_mut() {
        times.push(log.now());
        client::launch(&request.client, &mut request.request);
    }
    // Then, before any byte goes out, what follows each request to its end.
    for (client::Prepared { unit, client, line, request }, t_ns) in prepared.into_iter().zip(times.drain(..)) {
        let sending = client::sending(&client, request);
        lines.push((line, t_ns));
        let deadline_at = tokio::time::Instant::from_std(log.instant_at(t_ns)) + plan.deadline;
        let (deadline, limits) = (plan.deadline, plan.limits);
        // The exchange's state (kilobytes: the stream's reading and its draining) is made and
        // boxed when the request is first polled, after the launch, not copied in the loop.
        requests.push(async move {
            Box::pin(client::run(log, &client, &unit, sending, deadline_at, deadline, limits)).await
        });
    }
    log.write_started(&lines, released, &mut scratch)?;
    let first = lines.iter().map(|(_, t)| *t).min().unwrap_or(0);
    let last = lines.iter().map(|(_, t)| *t).max().unwrap_or(0);
    // The requests' bytes go out (their connections' tasks run) before `meanwhile` starts,
    // and before the round's lines are freed.
    tokio::task::yield_now().await;
    drop((lines, scratch, released_line));
    let answers = async {
        while let Some(result) = requests.next().await {
            result?;
        }
        anyhow::Ok(())
    };
    let (answered, value) = tokio::join!(answers, meanwhile);
    answered?;
    log.emit(Event::RoundClosed(RoundClosed {
        round_id,
        round_index,
        launch_skew_ns: last - first,
        resumed_partial_round: count != scheduled,
    }))?;
    Ok(value)
}
