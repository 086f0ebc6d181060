//! A load run's steps, one after the other, into this fetch's segment of the log.
//!
//! A step opens (`step_opened`: its time is the zero of its requests' intended send times),
//! then each of its rounds (an arrival: the same item for every provider) is launched when it
//! is due, whatever is still in flight: open loop, no request ever waits for another's
//! response. The pacer wakes the fetch's one thread at the due instant; the round's requests
//! are handed to their providers' connections together and their `request_started` lines,
//! which carry the intended time, reach the log before any of their bytes leave, exactly as a
//! closed-loop round's do. Every request runs to its terminal outcome inside the step: when
//! the last round is launched the step drains, and only then is it closed (`step_closed`:
//! what it sent, its peak in flight, the client's CPU time) and the next one opened.
//!
//! A capped step (`load.mode: capped`) holds a provider's request while `concurrency_cap` of
//! its requests are in flight: it waits in that provider's queue, first come first served, and
//! is launched the moment one of them ends, its line recording that moment (`released_t_ns`)
//! beside its arrival (`intended_t_ns`), so the wait counts in its latency and is never taken
//! for the client's lag.
//!
//! Resuming: a step is the unit. A step the log shows closed as complete is kept; a step
//! opened and never closed (the fetch was stopped during it) is closed as interrupted and run
//! again whole, each of its requests as a new attempt, so a step's figures always come from one
//! uninterrupted run of it.
use crate::client;
use crate::log::{EventLog, Flushes};
use crate::pacer::Pacer;
use crate::plan::Plan;
use crate::prepared::{round_ranges, spawn_preparer, PreparedRound};
use crate::resume::LogState;
use crate::rounds::shutdown_signal;
use crate::segment;
use anyhow::{Context, Result};
use futures_util::StreamExt;
use inferbench_cli::Interrupted;
use inferbench_contract::event::{Event, RoundClosed, SegmentStatus, StepClosed, StepOpened, StepStatus};
use inferbench_contract::vocab::LoadMode;
use inferbench_inputs::spec::StepTarget;
use std::collections::HashMap;
use std::sync::Arc;

/// The steps the log does not hold as complete, in order.
pub fn remaining(plan: &Plan, state: &LogState) -> Vec<u32> {
    let steps = plan.spec.load.as_ref().map_or(0, |l| l.steps.len() as u32);
    (0..steps).filter(|s| !state.steps_complete.contains(s)).collect()
}

/// Runs every step that remains, on the runtime's one thread, and closes the segment.
pub async fn execute(plan_owner: Arc<Plan>, state: Arc<LogState>) -> Result<()> {
    let plan = &*plan_owner;
    let log = Arc::new(segment::open(plan, &state)?);
    // A step an earlier fetch left open is closed as interrupted, and run again whole.
    for &(step, attempt) in &state.steps_open {
        log.emit(Event::StepClosed(StepClosed {
            step,
            attempt,
            status: StepStatus::Interrupted,
            requests_sent: 0,
            peak_in_flight: 0,
            cpu_ns: None,
            client_resource_errors: 0,
        }))?;
    }
    // Every request of a step is sent in each run of it, terminal before or not; the attempt
    // numbers still follow the log's.
    let sending = Arc::new(LogState { terminal: Default::default(), ..(*state).clone() });
    let before = state.terminal.len() as u64;
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let mut pacer = Pacer::new().context("the pacer's timer")?;
    let mut flushes = Flushes::default();
    for step in remaining(plan, &state) {
        let attempt = state.step_attempts.get(&step).copied().unwrap_or(0) + 1;
        tokio::select! {
            ran = run_step(&plan_owner, &sending, &log, &mut pacer, &mut flushes, step, attempt) => ran?,
            _ = &mut shutdown => {
                // Stop at once: the step stays open in the log, and the next fetch runs it again.
                log.close(state.next_segment, SegmentStatus::Interrupted, before)?;
                return Err(Interrupted.into());
            }
        }
    }
    flushes.finish().await?;
    let terminal = log.close(state.next_segment, SegmentStatus::Complete, before)?;
    eprintln!("ib-fetch: {terminal} requests terminal; every step complete");
    Ok(())
}

/// How often the log is forced to stable storage while a step runs.
const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// How late past its planned opening a shard may come to a step and still open it at the plan:
/// a busy machine wakes the pacer milliseconds late, and the arrivals due meanwhile are then
/// sent at once, their lateness counted as send lag (the client's, which marks the step
/// client-bound). A shard later than this was resumed after a kill, or was still draining the
/// step before: sending a whole step's overdue arrivals at once would measure nothing.
const ON_TIME_NS: u64 = 1_000_000_000;

/// Opens a step (`step_opened`), returning its zero, the instant its intended send times count
/// from. Unsharded, that is now. A shard waits for the step's planned opening
/// ([`crate::plan::step_zeros`]), the same in every shard, and stamps the step with it (also
/// when it came up to [`ON_TIME_NS`] late, so that its lines' times may then step back once); a
/// shard that comes to a step later than that opens it at once, from now: its share of the step
/// then runs on its own time, which the step's opening in its segment shows.
async fn open_step(
    plan: &Plan,
    log: &EventLog,
    pacer: &mut Pacer,
    step: u32,
    attempt: u32,
    scheduled: u64,
) -> Result<u64> {
    let opened = Event::StepOpened(StepOpened { step, attempt, scheduled_requests: scheduled });
    let Some(zero) = plan.shard.as_ref().and_then(|s| s.step_zeros.get(step as usize).copied()) else {
        return log.emit(opened);
    };
    if log.now() < zero {
        pacer.until(log.instant_at(zero)).await.context("the pacer's timer")?;
    }
    if log.now() <= zero + ON_TIME_NS {
        log.emit_at(zero, opened)?;
        return Ok(zero);
    }
    eprintln!(
        "ib-fetch: step {step} opens {:.3} s after its planned opening; this shard's share of it runs on its own time",
        (log.now() - zero) as f64 / 1e9
    );
    log.emit(opened)
}

/// A round launched and not yet ended: what its `round_closed` says.
struct OpenRound {
    round_id: String,
    remaining: usize,
    first_t_ns: u64,
    last_t_ns: u64,
}

/// Runs one step: opened, every round launched when due (or, in a closed loop, each user's
/// requests one after the other), drained, closed.
async fn run_step(
    plan_owner: &Arc<Plan>,
    state: &Arc<LogState>,
    log: &Arc<EventLog>,
    pacer: &mut Pacer,
    flushes: &mut Flushes,
    step: u32,
    attempt: u32,
) -> Result<()> {
    let closed = plan_owner.spec.load.as_ref().is_some_and(|l| matches!(l.steps[step as usize], StepTarget::Users(_)));
    if closed {
        run_closed_step(plan_owner, state, log, pacer, flushes, step, attempt).await
    } else {
        run_open_step(plan_owner, state, log, pacer, flushes, step, attempt).await
    }
}

/// A closed-loop step: every request of it built first, then each user of each provider sends
/// its first request at the step's opening and each next one the moment the one before ended
/// (its intended time is that moment). No round is released together, so the step writes no
/// round lines.
async fn run_closed_step(
    plan_owner: &Arc<Plan>,
    state: &Arc<LogState>,
    log: &Arc<EventLog>,
    pacer: &mut Pacer,
    flushes: &mut Flushes,
    step: u32,
    attempt: u32,
) -> Result<()> {
    let plan = &**plan_owner;
    let rows = |range: &std::ops::Range<usize>| plan.schedule[range.start].step == Some(i64::from(step));
    let ranges: Vec<std::ops::Range<usize>> = round_ranges(&plan.schedule).into_iter().filter(rows).collect();
    let user_of: HashMap<u64, i64> = ranges
        .iter()
        .map(|r| (plan.schedule[r.start].round_index as u64, plan.schedule[r.start].user.unwrap_or(0)))
        .collect();
    let scheduled = ranges.iter().map(|r| r.len() as u64).sum::<u64>();
    let progress = progress_bar(step, plan, scheduled);
    let mut prepared = spawn_preparer(plan_owner, state, log, ranges)?;
    let mut queues: std::collections::BTreeMap<(String, i64), std::collections::VecDeque<Waiting>> = Default::default();
    while let Some(round) = prepared.recv().await {
        let round = round?;
        let user = user_of.get(&round.round_index).copied().unwrap_or(0);
        for request in round.requests {
            let key = (request.unit.provider.clone(), user);
            queues.entry(key).or_default().push_back(Waiting {
                request,
                intended_t_ns: 0,
                round_index: round.round_index,
            });
        }
    }
    let account = StepAccount::start(log);
    let opened_t_ns = open_step(plan, log, pacer, step, attempt, scheduled).await?;
    let mut in_flight = futures_util::stream::FuturesUnordered::new();
    let (mut sent, mut peak) = (0u64, 0u64);
    for queue in queues.values_mut() {
        if let Some(first) = queue.pop_front() {
            launch_released(plan, log, Waiting { intended_t_ns: opened_t_ns, ..first }, None, &mut in_flight)?;
            sent += 1;
        }
    }
    peak = peak.max(in_flight.len() as u64);
    let mut last_flush = std::time::Instant::now();
    while let Some((round_index, provider, result)) = in_flight.next().await {
        result?;
        let user = user_of.get(&round_index).copied().unwrap_or(0);
        if let Some(next) = queues.get_mut(&(provider, user)).and_then(|q| q.pop_front()) {
            let ready = log.now();
            launch_released(plan, log, Waiting { intended_t_ns: ready, ..next }, None, &mut in_flight)?;
            sent += 1;
            progress.set_position(sent);
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            flushes.start(log).await?;
            last_flush = std::time::Instant::now();
        }
    }
    progress.finish_and_clear();
    account.close(log, step, attempt, sent, peak)?;
    eprintln!("ib-fetch: step {step}: {sent} requests sent by {} users", queues.len());
    Ok(())
}

/// An open-loop (or capped) step: opened, every round launched when due, drained, closed.
async fn run_open_step(
    plan_owner: &Arc<Plan>,
    state: &Arc<LogState>,
    log: &Arc<EventLog>,
    pacer: &mut Pacer,
    flushes: &mut Flushes,
    step: u32,
    attempt: u32,
) -> Result<()> {
    let plan = &**plan_owner;
    let rows = |range: &std::ops::Range<usize>| plan.schedule[range.start].step == Some(i64::from(step));
    let ranges: Vec<std::ops::Range<usize>> = round_ranges(&plan.schedule).into_iter().filter(rows).collect();
    let offsets: Vec<u64> =
        ranges.iter().map(|r| plan.schedule[r.start].intended_offset_ns.unwrap_or(0).max(0) as u64).collect();
    let scheduled = ranges.iter().map(|r| r.len() as u64).sum::<u64>();
    let progress = progress_bar(step, plan, scheduled);
    let mut prepared = spawn_preparer(plan_owner, state, log, ranges)?;
    // The rounds are built ahead; the first is ready before the step opens.
    let mut next: Option<PreparedRound> = prepared.recv().await.transpose()?;
    let account = StepAccount::start(log);
    let opened_t_ns = open_step(plan, log, pacer, step, attempt, scheduled).await?;
    let mut offsets = offsets.into_iter();
    let mut due = offsets.next().map(|o| opened_t_ns + o);
    let mut in_flight = futures_util::stream::FuturesUnordered::new();
    let mut open: HashMap<u64, OpenRound> = HashMap::new();
    let (mut sent, mut peak) = (0u64, 0u64);
    let mut exhausted = next.is_none();
    let mut last_flush = std::time::Instant::now();
    let mut cap = Cap::of(plan);
    loop {
        tokio::select! {
            biased;
            woke = pacer.until(log.instant_at(due.unwrap_or(0))), if next.is_some() => {
                woke.context("the pacer's timer")?;
                let round = next.take().expect("guarded");
                let intended = due.expect("a round has its due time");
                let launched = launch(plan, log, round, intended, &mut cap, &mut in_flight)?;
                sent += launched.1 as u64;
                peak = peak.max(in_flight.len() as u64);
                open.insert(launched.0, OpenRound { round_id: launched.2, remaining: launched.5, first_t_ns: launched.3, last_t_ns: launched.4 });
                due = offsets.next().map(|o| opened_t_ns + o);
                progress.set_position(sent);
                // The log goes to stable storage in the background, a few times a second: not
                // after every round, which at thousands a second would be a sync per round.
                if last_flush.elapsed() >= FLUSH_EVERY {
                    flushes.start(log).await?;
                    last_flush = std::time::Instant::now();
                }
            }
            Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                let (round_index, provider, result): (u64, String, Result<()>) = done;
                result?;
                close_round(log, &mut open, round_index)?;
                // Its slot goes to the request of its provider that waited longest, if any.
                if let Some(waiting) = cap.finished(&provider) {
                    launch_released(plan, log, waiting, Some(log.now()), &mut in_flight)?;
                    sent += 1;
                    peak = peak.max(in_flight.len() as u64);
                }
                progress.set_message(format!("{} in flight", in_flight.len()));
            }
            round = prepared.recv(), if next.is_none() && !exhausted => {
                match round {
                    Some(round) => next = Some(round?),
                    None => exhausted = true,
                }
            }
            else => break,
        }
    }
    if due.is_some() {
        // The builder's channel closed early: the thread panicked (a bug); the step stays open.
        anyhow::bail!("the thread that builds the requests stopped before step {step} was sent");
    }
    progress.finish_and_clear();
    account.close(log, step, attempt, sent, peak)?;
    eprintln!("ib-fetch: step {step}: {sent} requests sent, at most {peak} in flight");
    Ok(())
}

/// A request in flight: its round, its provider and how its exchange ended.
type InFlight<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = (u64, String, Result<()>)> + 'a>>;

/// A request a capped step holds until its provider has a free slot.
struct Waiting {
    request: client::Prepared,
    intended_t_ns: u64,
    round_index: u64,
}

/// A capped step's bound on each provider's requests in flight (`load.concurrency_cap`), and
/// the requests waiting for a slot, first come first served. Without a cap every request is
/// launched when it is due.
struct Cap {
    limit: Option<usize>,
    active: HashMap<String, usize>,
    waiting: HashMap<String, std::collections::VecDeque<Waiting>>,
}

impl Cap {
    fn of(plan: &Plan) -> Cap {
        let load = plan.spec.load.as_ref();
        let limit = load.filter(|l| l.mode == LoadMode::Capped).and_then(|l| l.concurrency_cap).map(|c| c as usize);
        Cap { limit, active: HashMap::new(), waiting: HashMap::new() }
    }

    /// Whether `provider` has a free slot; takes it if so.
    fn take(&mut self, provider: &str) -> bool {
        let active = self.active.entry(provider.to_string()).or_default();
        if self.limit.is_some_and(|limit| *active >= limit) {
            return false;
        }
        *active += 1;
        true
    }

    /// A request of `provider` ended: the request waiting longest for its slot, which it takes.
    fn finished(&mut self, provider: &str) -> Option<Waiting> {
        if let Some(active) = self.active.get_mut(provider) {
            *active = active.saturating_sub(1);
        }
        let next = self.waiting.get_mut(provider)?.pop_front()?;
        *self.active.entry(provider.to_string()).or_default() += 1;
        Some(next)
    }
}

/// Launches one request on its own: one a capped step held, now that a slot freed at
/// `released` (its line records when), or a closed-loop user's next.
fn launch_released<'a>(
    plan: &'a Plan,
    log: &'a Arc<EventLog>,
    waiting: Waiting,
    released: Option<u64>,
    in_flight: &mut futures_util::stream::FuturesUnordered<InFlight<'a>>,
) -> Result<()> {
    let Waiting { request: client::Prepared { unit, client, line, mut request }, intended_t_ns, round_index } = waiting;
    let t_ns = log.now();
    client::launch(&client, &mut request);
    let sending = client::sending(&client, request);
    log.write_started_released(&[(line, t_ns)], intended_t_ns, released, &mut Vec::new())?;
    let deadline_at = tokio::time::Instant::from_std(log.instant_at(t_ns)) + plan.deadline;
    let (deadline, limits) = (plan.deadline, plan.limits);
    in_flight.push(Box::pin(async move {
        let provider = unit.provider.clone();
        (
            round_index,
            provider,
            Box::pin(client::run(log, &client, &unit, sending, deadline_at, deadline, limits)).await,
        )
    }));
    Ok(())
}

/// Launches a prepared round at once, its requests' lines logged with `intended_t_ns`, but for
/// those a capped step holds until their provider has a free slot; returns (round index,
/// requests launched, round id, first and last send time, requests in the round).
fn launch<'a>(
    plan: &'a Plan,
    log: &'a Arc<EventLog>,
    round: PreparedRound,
    intended_t_ns: u64,
    cap: &mut Cap,
    in_flight: &mut futures_util::stream::FuturesUnordered<InFlight<'a>>,
) -> Result<(u64, usize, String, u64, u64, usize)> {
    let PreparedRound {
        round_id,
        round_index,
        requests: mut prepared,
        released,
        mut times,
        mut scratch,
        sent: mut lines,
        ..
    } = round;
    log.write_released(&released, &mut scratch)?;
    let in_round = prepared.len();
    if cap.limit.is_some() {
        let (now, later): (Vec<_>, Vec<_>) = prepared.into_iter().partition(|p| cap.take(&p.unit.provider));
        for request in later {
            let waiting = Waiting { request, intended_t_ns, round_index };
            cap.waiting.entry(waiting.request.unit.provider.clone()).or_default().push_back(waiting);
        }
        prepared = now;
    }
    for request in prepared.iter_mut() {
        times.push(log.now());
        client::launch(&request.client, &mut request.request);
    }
    let count = prepared.len();
    for (client::Prepared { unit, client, line, request }, t_ns) in prepared.into_iter().zip(times.drain(..)) {
        let sending = client::sending(&client, request);
        lines.push((line, t_ns));
        let deadline_at = tokio::time::Instant::from_std(log.instant_at(t_ns)) + plan.deadline;
        let (deadline, limits) = (plan.deadline, plan.limits);
        in_flight.push(Box::pin(async move {
            let provider = unit.provider.clone();
            (
                round_index,
                provider,
                Box::pin(client::run(log, &client, &unit, sending, deadline_at, deadline, limits)).await,
            )
        }));
    }
    log.write_started(&lines, intended_t_ns, &mut scratch)?;
    let first = lines.iter().map(|(_, t)| *t).min().unwrap_or(0);
    let last = lines.iter().map(|(_, t)| *t).max().unwrap_or(0);
    Ok((round_index, count, round_id, first, last, in_round))
}

/// Counts one request of `round_index` ended; the round's last one closes it.
fn close_round(log: &EventLog, open: &mut HashMap<u64, OpenRound>, round_index: u64) -> Result<()> {
    let Some(round) = open.get_mut(&round_index) else { return Ok(()) };
    round.remaining -= 1;
    if round.remaining == 0 {
        let round = open.remove(&round_index).expect("present");
        log.emit(Event::RoundClosed(RoundClosed {
            round_id: round.round_id,
            round_index,
            launch_skew_ns: round.last_t_ns - round.first_t_ns,
            resumed_partial_round: false,
        }))?;
    }
    Ok(())
}

fn progress_bar(step: u32, plan: &Plan, scheduled: u64) -> indicatif::ProgressBar {
    let steps = plan.spec.load.as_ref().map_or(0, |l| l.steps.len());
    let progress = indicatif::ProgressBar::new(scheduled);
    progress.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} step {}/{steps} [{{bar:30}}] {{pos}}/{{len}} sent, {{msg}}, {{elapsed}}",
            step + 1
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    progress
}

/// What a step's `step_closed` says of the client, counted from the step's opening.
struct StepAccount {
    cpu_ns: Option<u64>,
    client_resource_errors: u64,
}

impl StepAccount {
    fn start(log: &EventLog) -> StepAccount {
        StepAccount { cpu_ns: cpu_ns(), client_resource_errors: log.client_resource_errors() }
    }

    /// Closes the step as complete: what it sent, its peak in flight, the client's CPU time and
    /// resource errors since it opened.
    fn close(&self, log: &EventLog, step: u32, attempt: u32, sent: u64, peak: u64) -> Result<()> {
        log.emit(Event::StepClosed(StepClosed {
            step,
            attempt,
            status: StepStatus::Complete,
            requests_sent: sent,
            peak_in_flight: peak,
            cpu_ns: cpu_ns().zip(self.cpu_ns).map(|(after, before)| after.saturating_sub(before)),
            client_resource_errors: log.client_resource_errors() - self.client_resource_errors,
        }))?;
        Ok(())
    }
}

/// The process's CPU time so far (user and system), ns; `None` when the OS does not say.
fn cpu_ns() -> Option<u64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage through a valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: initialised by the successful call.
    let usage = unsafe { usage.assume_init() };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    Some(ns(usage.ru_utime) + ns(usage.ru_stime))
}
