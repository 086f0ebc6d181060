//! One snapshot of a run: what the lock and schedule fix (the totals), what the log says so
//! far (the tally), who holds the writer lock, and the time now, turned into the figures
//! `ib-watch` shows and prints as JSON (`--once --json`; the fields are documented in
//! docs/guide/watching.md).
use crate::tally::{Final, SegmentInfo, Tally};
use inferbench_contract::lock::Lock;
use inferbench_contract::metrics::{Column, E2E_LATENCY, TTFA};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::{OperationalOutcome, Outcome, SegmentStatus};
use inferbench_judge::rules::Rules;
use inferbench_stats::percentile::Samples;
use inferbench_store::run::Writer;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// How many recent failures a snapshot lists.
pub const RECENT_FAILURES: usize = 8;
/// How many of the last closed rounds the ETA averages.
pub const ETA_ROUNDS: usize = 20;

/// What the lock and the schedule fix for the whole run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub run_id: String,
    /// The reference run an imported run came from.
    pub imported_from: Option<String>,
    /// The scheduled providers, in the lock's order.
    pub providers: Vec<String>,
    pub scheduled: BTreeMap<String, u64>,
    /// Round index → its request ids.
    pub rounds: BTreeMap<u64, Vec<String>>,
    pub requests: u64,
    /// A load run's steps (0 in the closed-loop workflow).
    pub steps: u32,
    /// The prompt-cache probe's rounds (`schedule.parquet`'s `cache_probe` set): counted in the
    /// progress, left out of the live percentiles as `ib-aggregate` leaves them out.
    pub probe_rounds: BTreeSet<u64>,
}

impl Plan {
    pub fn new(lock: &Lock, schedule: &[ScheduleRow]) -> Plan {
        let mut scheduled: BTreeMap<String, u64> = BTreeMap::new();
        let mut rounds: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for row in schedule {
            *scheduled.entry(row.provider.clone()).or_default() += 1;
            rounds.entry(row.round_index as u64).or_default().push(row.request_id.clone());
        }
        let mut providers: Vec<String> =
            lock.providers.iter().filter(|p| scheduled.contains_key(*p)).cloned().collect();
        providers.extend(scheduled.keys().filter(|p| !lock.providers.contains(p)).cloned());
        Plan {
            run_id: lock.run_id.clone(),
            imported_from: lock.imported_from.as_ref().map(|i| i.run_id.clone()),
            providers,
            scheduled,
            rounds,
            requests: schedule.len() as u64,
            steps: schedule.iter().filter_map(|r| r.step).max().map_or(0, |s| s as u32 + 1),
            probe_rounds: schedule.iter().filter(|r| r.cache_probe.is_some()).map(|r| r.round_index as u64).collect(),
        }
    }
}

/// The run's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No event log yet.
    NotStarted,
    /// `ib-fetch` holds the run's writer lock and the log is not complete.
    Running,
    /// The last segment was left open and no fetch is running: the fetch was killed.
    Stopped,
    /// The last segment was closed as `interrupted` (SIGINT/SIGTERM).
    Interrupted,
    /// The last segment was closed as `complete`: every scheduled request has a final outcome.
    Finished,
    /// `ib-import` made the run from a reference run's records; nothing is ever fetched.
    Imported,
    /// The last segment is open and this system cannot tell whether a fetch is running.
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::NotStarted => "not started",
            Status::Running => "fetch running",
            Status::Stopped => "stopped (killed)",
            Status::Interrupted => "stopped (interrupted)",
            Status::Finished => "finished",
            Status::Imported => "imported",
            Status::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    pub run_id: String,
    pub status: Status,
    pub status_detail: String,
    /// Whether `ib-fetch` holds the run's writer lock (null: this system cannot tell).
    pub fetch_running: Option<bool>,
    /// `events.parquet` exists.
    pub sealed: bool,
    /// The `seq` of the last log line read (null: no line yet). Every figure is of the log up
    /// to and including this line.
    pub last_seq: Option<u64>,
    pub segments: u32,
    /// Bytes of an unterminated last line (being written, or torn by a kill), left unread.
    pub torn_tail_bytes: usize,
    pub rules: &'static str,
    /// The rolling window: each provider's last N finished requests.
    pub window: u64,
    pub totals: Totals,
    /// Rounds whose every scheduled request has a final outcome.
    pub rounds_done: u64,
    /// Requests with a final outcome.
    pub requests_done: u64,
    /// Attempts started without a terminal event (in flight, or left open by a kill).
    pub open_attempts: u64,
    /// Time spent fetching: each segment from its opening to its last line, and the open
    /// segment of a running fetch until now.
    pub elapsed_seconds: f64,
    /// Time left at the mean duration of the last rounds (null unless a fetch is running and
    /// a round has closed; 0 once finished).
    pub eta_seconds: Option<f64>,
    pub current_round: Option<CurrentRound>,
    pub providers: Vec<ProviderRow>,
    /// The last failed final outcomes, most recent first.
    pub recent_failures: Vec<Failure>,
    /// A load run's step in progress (or its last); absent in the closed-loop workflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadNow>,
}

/// A load run's step, live.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadNow {
    /// 0-based, and how many steps the schedule holds.
    pub step: u32,
    pub steps: u32,
    pub attempt: u32,
    /// Steps closed as complete.
    pub steps_complete: u64,
    pub running: bool,
    pub sent: u64,
    pub scheduled: u64,
    /// Sends of the last second of the log, per second.
    pub achieved_rate: f64,
    /// Attempts in flight.
    pub in_flight: u64,
    /// Send lag p99 over the step so far, ms (nearest rank).
    pub send_lag_p99_ms: Option<f64>,
    pub failures: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    pub rounds: u64,
    pub requests: u64,
    pub providers: u64,
}

/// The round in progress in the running fetch's segment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurrentRound {
    pub round_index: u64,
    pub round_id: String,
    pub elapsed_seconds: f64,
    /// Its attempts started and not ended.
    pub in_flight: Vec<InFlight>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InFlight {
    pub request_id: String,
    pub provider: String,
    pub attempt: u32,
    pub elapsed_seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderRow {
    pub provider: String,
    pub scheduled: u64,
    /// Requests with a final outcome.
    pub done: u64,
    /// Final outcomes, every value of the log's terminal vocabulary but `interrupted` (never
    /// final), as judged from the events.
    pub outcomes: BTreeMap<Outcome, u64>,
    /// The same by operational class, keyed as metrics.json's `<class>_count` (`success`, `timeout`, …).
    pub classes: BTreeMap<&'static str, u64>,
    pub failed: u64,
    /// Attempts closed as `interrupted` and sent again.
    pub interrupted_attempts: u64,
    pub open_attempts: u64,
    /// p50 over every finished request so far (metrics.json's pooled `ttfa_p50`).
    pub ttfa_p50_ms: Option<f64>,
    /// p50 over every complete response so far (metrics.json's pooled `e2e_latency_p50`).
    pub e2e_p50_ms: Option<f64>,
    pub ttfa_samples: u64,
    pub e2e_samples: u64,
    pub rolling: Rolling,
}

/// The same p50s over the provider's last `window` finished requests (by when they finished).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rolling {
    pub requests: u64,
    pub ttfa_p50_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    pub seq: u64,
    pub request_id: String,
    pub provider: String,
    pub round_index: u64,
    pub attempt: u32,
    pub outcome: Outcome,
    pub class: &'static str,
    pub http_status: Option<u16>,
    pub error_type: Option<String>,
    pub error_message: Option<String>,
}

/// Everything a snapshot is made of.
pub struct Inputs<'a> {
    pub plan: &'a Plan,
    pub tally: &'a Tally,
    pub last_seq: Option<u64>,
    pub torn_tail_bytes: usize,
    pub writer: &'a Writer,
    pub sealed: bool,
    pub now_wall_ns: u64,
    pub window: u64,
    pub rules: Rules,
}

/// The live figures, each over its samples as `ib-aggregate` computes it: TTFA and E2E p50.
pub const LIVE_TTFA: Column = TTFA.at(50);
pub const LIVE_E2E: Column = E2E_LATENCY.at(50);

/// `column` over `values`, and how many samples it was computed from.
fn figure(column: Column, values: impl IntoIterator<Item = f64>) -> (Option<f64>, u64) {
    let samples = Samples::new(values);
    (samples.column(column), samples.len() as u64)
}

fn seconds(ns: f64) -> f64 {
    ns / 1e9
}

/// The wall clock of run-clock instant `t_ns` of segment `s`.
fn wall_of(s: &SegmentInfo, t_ns: u64) -> f64 {
    s.opened_wall_ns as f64 + (t_ns as f64 - s.opened_t_ns as f64)
}

pub fn build(inputs: &Inputs) -> Snapshot {
    let Inputs { plan, tally, writer, .. } = inputs;
    let fetch_running = match writer {
        Writer::Idle => Some(false),
        Writer::Held { program, .. } => Some(program.as_deref() == Some("ib-fetch")),
        Writer::Unknown => None,
    };
    let rounds_done =
        plan.rounds.values().filter(|ids| ids.iter().all(|id| tally.finals.contains_key(id))).count() as u64;
    let in_flight = tally.in_flight();
    let (status, status_detail) = status(plan, &tally.segments, writer, in_flight.len(), inputs.sealed);
    let running = status == Status::Running;
    let now = inputs.now_wall_ns as f64;
    let last_open = tally.segments.last().filter(|s| s.closed.is_none());
    let elapsed_ns: f64 = tally
        .segments
        .iter()
        .map(|s| {
            let logged = s.last_t_ns.saturating_sub(s.opened_t_ns) as f64;
            let live = running && last_open.is_some_and(|open| open.number == s.number);
            if live {
                logged.max(now - s.opened_wall_ns as f64)
            } else {
                logged
            }
        })
        .sum();
    let current_round = match (running, &tally.current_round, last_open) {
        (true, Some(round), Some(segment)) => Some(CurrentRound {
            round_index: round.round_index,
            round_id: round.round_id.clone(),
            elapsed_seconds: seconds((now - wall_of(segment, round.t_ns)).max(0.0)),
            in_flight: in_flight
                .iter()
                .filter(|s| s.segment == segment.number)
                .map(|s| InFlight {
                    request_id: s.request_id.clone(),
                    provider: s.provider.clone(),
                    attempt: s.attempt,
                    elapsed_seconds: seconds((now - wall_of(segment, s.t_ns)).max(0.0)),
                })
                .collect(),
        }),
        _ => None,
    };
    let rounds_left = plan.rounds.len() as u64 - rounds_done;
    let eta_seconds = match status {
        Status::Finished => Some(0.0),
        Status::Running => {
            let current_ms = current_round.as_ref().map(|r| r.elapsed_seconds * 1000.0);
            eta_seconds(&tally.round_ms, rounds_left, current_ms)
        }
        _ => None,
    };
    let mut failures: Vec<&Final> = tally.finals.values().filter(|f| f.class.is_failure()).collect();
    failures.sort_by_key(|f| std::cmp::Reverse(f.seq));
    Snapshot {
        run_id: plan.run_id.clone(),
        status,
        status_detail,
        fetch_running,
        sealed: inputs.sealed,
        last_seq: inputs.last_seq,
        segments: tally.segments.len() as u32,
        torn_tail_bytes: inputs.torn_tail_bytes,
        rules: inputs.rules.as_str(),
        window: inputs.window,
        totals: Totals {
            rounds: plan.rounds.len() as u64,
            requests: plan.requests,
            providers: plan.providers.len() as u64,
        },
        rounds_done,
        requests_done: tally.finals.len() as u64,
        open_attempts: in_flight.len() as u64,
        elapsed_seconds: seconds(elapsed_ns),
        eta_seconds,
        current_round,
        providers: plan.providers.iter().map(|p| provider_row(inputs, p)).collect(),
        recent_failures: failures.into_iter().take(RECENT_FAILURES).map(failure).collect(),
        load: tally.step.as_ref().map(|step| load_now(step, plan.steps, tally.steps_complete, in_flight.len())),
    }
}

fn load_now(step: &crate::tally::StepTally, steps: u32, steps_complete: u64, in_flight: usize) -> LoadNow {
    let rate = match (step.recent_sends.front(), step.recent_sends.back()) {
        (Some(first), Some(last)) if last > first => {
            (step.recent_sends.len() - 1) as f64 / ((last - first) as f64 / 1e9)
        }
        _ => 0.0,
    };
    let lags = inferbench_stats::percentile::Samples::new(step.lags_ns.iter().map(|&ns| ns as f64 / 1e6));
    LoadNow {
        step: step.step,
        steps,
        attempt: step.attempt,
        steps_complete,
        running: step.closed.is_none(),
        sent: step.sent,
        scheduled: step.scheduled,
        achieved_rate: rate,
        in_flight: in_flight as u64,
        send_lag_p99_ms: lags.upper(99),
        failures: step.failures,
    }
}

fn provider_row(inputs: &Inputs, provider: &str) -> ProviderRow {
    let tally = inputs.tally;
    let mut mine: Vec<&Final> = tally.finals.values().filter(|f| f.provider == provider).collect();
    mine.sort_by_key(|f| f.seq);
    let mut outcomes: BTreeMap<Outcome, u64> =
        Outcome::ALL.iter().filter(|o| **o != Outcome::Interrupted).map(|o| (*o, 0)).collect();
    let mut classes: BTreeMap<&'static str, u64> = OperationalOutcome::ALL.iter().map(|c| (c.label(), 0)).collect();
    for f in &mine {
        *outcomes.entry(f.outcome).or_default() += 1;
        *classes.entry(f.class.label()).or_default() += 1;
    }
    let measured = || mine.iter().filter(|f| !inputs.plan.probe_rounds.contains(&f.round_index));
    let (ttfa_p50_ms, ttfa_samples) = figure(LIVE_TTFA, measured().filter_map(|f| f.ttfa_ms));
    let (e2e_p50_ms, e2e_samples) = figure(LIVE_E2E, measured().filter_map(|f| f.e2e_ms));
    let recent = &mine[mine.len().saturating_sub(inputs.window as usize)..];
    ProviderRow {
        provider: provider.to_string(),
        scheduled: inputs.plan.scheduled.get(provider).copied().unwrap_or(0),
        done: mine.len() as u64,
        outcomes,
        classes,
        failed: mine.iter().filter(|f| f.class.is_failure()).count() as u64,
        interrupted_attempts: tally.interrupted.get(provider).copied().unwrap_or(0),
        open_attempts: tally.in_flight().iter().filter(|s| s.provider == provider).count() as u64,
        ttfa_p50_ms,
        e2e_p50_ms,
        ttfa_samples,
        e2e_samples,
        rolling: Rolling {
            requests: recent.len() as u64,
            ttfa_p50_ms: figure(LIVE_TTFA, recent.iter().filter_map(|f| f.ttfa_ms)).0,
            e2e_p50_ms: figure(LIVE_E2E, recent.iter().filter_map(|f| f.e2e_ms)).0,
        },
    }
}

fn failure(f: &Final) -> Failure {
    Failure {
        seq: f.seq,
        request_id: f.request_id.clone(),
        provider: f.provider.clone(),
        round_index: f.round_index,
        attempt: f.attempt,
        outcome: f.outcome,
        class: f.class.label(),
        http_status: f.http_status,
        error_type: f.error_type.map(|e| e.as_str().to_string()),
        error_message: f.error_message.clone(),
    }
}

/// The run's state and a sentence saying what it means.
fn status(plan: &Plan, segments: &[SegmentInfo], writer: &Writer, open: usize, sealed: bool) -> (Status, String) {
    let fetch_pid = match writer {
        Writer::Held { pid, program: Some(program) } if program == "ib-fetch" => Some(*pid),
        _ => None,
    };
    if let Some(reference) = &plan.imported_from {
        return (
            Status::Imported,
            format!("imported by ib-import from the reference run {reference}; nothing is fetched"),
        );
    }
    let Some(last) = segments.last() else {
        return match fetch_pid {
            Some(pid) => (Status::Running, format!("ib-fetch (pid {pid}) is starting")),
            None => (Status::NotStarted, "no event log yet: ib-fetch has not started".to_string()),
        };
    };
    let n = last.number;
    match (last.closed, fetch_pid, writer) {
        (Some(SegmentStatus::Complete), _, _) if sealed => {
            (Status::Finished, "every scheduled request has a final outcome; the log is sealed".to_string())
        }
        (Some(SegmentStatus::Complete), _, _) => {
            (Status::Finished, "every scheduled request has a final outcome; the log is not sealed yet".to_string())
        }
        (None, Some(pid), _) => (Status::Running, format!("ib-fetch (pid {pid}) is fetching into segment {n}")),
        (Some(_), Some(pid), _) => (Status::Running, format!("ib-fetch (pid {pid}) is resuming after segment {n}")),
        (Some(_), None, _) => (
            Status::Interrupted,
            format!("ib-fetch was stopped by a signal (segment {n} closed as interrupted); rerun it to resume"),
        ),
        (None, None, Writer::Unknown) => (
            Status::Unknown,
            format!("segment {n} is open, and this system cannot tell whether ib-fetch is running (no /proc/locks)"),
        ),
        (None, None, _) => (
            Status::Stopped,
            format!(
                "ib-fetch stopped without closing segment {n} (killed): {open} attempts left open; rerun it to resume"
            ),
        ),
    }
}

/// Seconds left: the rounds not done at the mean duration of the last [`ETA_ROUNDS`] closed
/// rounds, less what the round in progress has already taken (`current_ms`). `None` before
/// any round has closed.
pub fn eta_seconds(round_ms: &[f64], rounds_left: u64, current_ms: Option<f64>) -> Option<f64> {
    if rounds_left == 0 {
        return Some(0.0);
    }
    let recent = &round_ms[round_ms.len().saturating_sub(ETA_ROUNDS)..];
    if recent.is_empty() {
        return None;
    }
    let mean = recent.iter().sum::<f64>() / recent.len() as f64;
    let ms = match current_ms {
        Some(current) => (rounds_left - 1) as f64 * mean + (mean - current).max(0.0),
        None => rounds_left as f64 * mean,
    };
    Some(ms / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tally::tests::Log;

    /// Two rounds of providers p and q.
    fn plan() -> Plan {
        Plan {
            run_id: "run-a".into(),
            imported_from: None,
            providers: vec!["p".into(), "q".into()],
            scheduled: BTreeMap::from([("p".into(), 2), ("q".into(), 2)]),
            rounds: BTreeMap::from([(0, vec!["p0".into(), "q0".into()]), (1, vec!["p1".into(), "q1".into()])]),
            requests: 4,
            steps: 0,
            probe_rounds: BTreeSet::new(),
        }
    }

    fn snap(log: &Log, writer: Writer, now_ms: u64) -> Snapshot {
        snap_of(&plan(), log, writer, now_ms)
    }

    fn snap_of(plan: &Plan, log: &Log, writer: Writer, now_ms: u64) -> Snapshot {
        let tally = log.tally();
        build(&Inputs {
            plan,
            tally: &tally,
            last_seq: log.lines.last().map(|(_, e)| e.seq),
            torn_tail_bytes: 0,
            writer: &writer,
            sealed: false,
            // The test log's first segment opens at wall clock 1 s, run clock 0.
            now_wall_ns: 1_000_000_000 + now_ms * 1_000_000,
            window: 1,
            rules: Rules::Inferbench,
        })
    }

    #[test]
    fn a_load_step_shows_its_sends_rate_lag_in_flight_and_failures() {
        use inferbench_contract::event::{Event, RequestStarted, StepOpened};
        use inferbench_contract::testutil::{request_started, step_opened};
        let mut log = Log::new();
        log.push(0, Event::StepOpened(StepOpened { attempt: 2, ..step_opened(1, 40) }));
        // Five sends 250 ms apart, each 1 ms, 2 ms, … late; the first two end, one of them failed.
        for k in 0..5u64 {
            let due = (250 * k) * 1_000_000;
            let started = RequestStarted { step: Some(1), intended_t_ns: due, ..request_started(&format!("r{k}"), k) };
            log.push(250 * k + k + 1, Event::RequestStarted(started));
        }
        log.answer(1, "r0", 1, 100, 200);
        log.end(1100, "r1", 1, Outcome::HttpError, Some(503));
        let s = snap(&log, fetching(), 1200);
        let load = s.load.clone().expect("a load run's snapshot");
        assert_eq!((load.step, load.attempt, load.running, load.sent, load.scheduled), (1, 2, true, 5, 40));
        assert_eq!(load.failures, 1);
        assert_eq!(load.in_flight, 3);
        assert_eq!(load.send_lag_p99_ms, Some(5.0));
        assert!((load.achieved_rate - 4.0 / 1.004).abs() < 1e-9, "{}", load.achieved_rate);
        assert!(crate::text::load_line(&s).unwrap().contains("step 2/0 (run 2) running · 5/40 sent"));
        assert!(snap(&mid_run(), fetching(), 1200).load.is_none(), "the closed-loop workflow has no step");
    }

    fn fetching() -> Writer {
        Writer::Held { pid: 42, program: Some("ib-fetch".into()) }
    }

    /// Round 0 done (p answers, q gets a 503), round 1 released with p1 finished, q1 in flight.
    fn mid_run() -> Log {
        let mut log = Log::new();
        log.release(0, 0);
        log.start(0, "p0", 1, "p", 0);
        log.start(0, "q0", 1, "q", 0);
        log.answer(0, "p0", 1, 100, 300);
        log.end(400, "q0", 1, Outcome::HttpError, Some(503));
        log.close_round(1000, 0);
        log.release(1000, 1);
        log.start(1000, "p1", 1, "p", 1);
        log.start(1000, "q1", 1, "q", 1);
        log.answer(1000, "p1", 1, 200, 500);
        log
    }

    #[test]
    fn the_cache_probes_rounds_count_in_the_progress_and_in_no_live_percentile() {
        let probe = Plan { probe_rounds: BTreeSet::from([1]), ..plan() };
        let s = snap_of(&probe, &mid_run(), fetching(), 1600);
        let p = &s.providers[0];
        assert_eq!(p.done, 2, "p1 is done");
        assert_eq!((p.ttfa_p50_ms, p.e2e_p50_ms, p.ttfa_samples, p.e2e_samples), (Some(100.0), Some(300.0), 1, 1));
    }

    #[test]
    fn a_snapshot_of_a_hand_built_log_mid_run() {
        let s = snap(&mid_run(), fetching(), 1600);
        assert_eq!(s.status, Status::Running, "{}", s.status_detail);
        assert_eq!((s.rounds_done, s.requests_done, s.open_attempts), (1, 3, 1));
        assert_eq!((s.totals.rounds, s.totals.requests, s.totals.providers), (2, 4, 2));
        let p = &s.providers[0];
        assert_eq!((p.done, p.outcomes[&Outcome::Completed], p.failed, p.classes["success"]), (2, 2, 0, 2));
        // Nearest-rank p50 of two samples is the lower one; the window of 1 is the latest.
        assert_eq!((p.ttfa_p50_ms, p.e2e_p50_ms, p.ttfa_samples), (Some(100.0), Some(300.0), 2));
        assert_eq!((p.rolling.requests, p.rolling.ttfa_p50_ms, p.rolling.e2e_p50_ms), (1, Some(200.0), Some(500.0)));
        let q = &s.providers[1];
        assert_eq!((q.done, q.outcomes[&Outcome::HttpError], q.classes["http_5xx"], q.open_attempts), (1, 1, 1, 1));
        assert_eq!((q.ttfa_p50_ms, q.e2e_p50_ms), (None, None));
        assert_eq!(s.recent_failures.len(), 1);
        assert_eq!((s.recent_failures[0].request_id.as_str(), s.recent_failures[0].http_status), ("q0", Some(503)));
        let round = s.current_round.as_ref().expect("round 1 in progress");
        assert_eq!((round.round_index, round.in_flight.len()), (1, 1));
        assert_eq!(round.in_flight[0].request_id, "q1");
        assert!((round.in_flight[0].elapsed_seconds - 0.6).abs() < 1e-9, "{round:?}");
        assert!((s.elapsed_seconds - 1.6).abs() < 1e-9, "the live segment runs until now: {}", s.elapsed_seconds);
        // One round of 1 s closed; round 1 has run 0.6 s of its expected 1 s.
        assert!((s.eta_seconds.unwrap() - 0.4).abs() < 1e-9, "{:?}", s.eta_seconds);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["providers"][1]["outcomes"]["http_error"], 1);
        assert_eq!(json["status"], "running");
        assert_eq!(json["last_seq"], s.last_seq.unwrap());
    }

    #[test]
    fn a_kill_a_signal_a_resume_and_the_end_each_have_their_state() {
        let log = mid_run();
        let s = snap(&log, Writer::Idle, 5000);
        assert_eq!(s.status, Status::Stopped, "{}", s.status_detail);
        assert!(s.status_detail.contains("1 attempts left open"), "{}", s.status_detail);
        assert_eq!((s.eta_seconds, s.current_round.is_none()), (None, true), "nothing is in flight once killed");
        assert!((s.elapsed_seconds - 1.5).abs() < 1e-9, "a stopped segment counts to its last line");
        let s = snap(&log, Writer::Held { pid: 7, program: Some("ib-reconstruct".into()) }, 5000);
        assert_eq!(s.status, Status::Stopped, "another stage holding the lock is not a fetch");
        assert_eq!(snap(&log, Writer::Unknown, 5000).status, Status::Unknown);

        let mut signalled = mid_run();
        signalled.close_segment(1600, SegmentStatus::Interrupted);
        assert_eq!(snap(&signalled, Writer::Idle, 5000).status, Status::Interrupted);
        assert_eq!(snap(&signalled, fetching(), 5000).status, Status::Running, "a resume starting");

        let mut resumed = mid_run();
        resumed.open_segment();
        resumed.end(2000, "q1", 1, Outcome::Interrupted, None);
        resumed.release(2000, 1);
        resumed.start(2000, "q1", 2, "q", 1);
        let s = snap(&resumed, fetching(), 2100);
        assert_eq!((s.status, s.segments, s.requests_done), (Status::Running, 2, 3));
        assert_eq!(s.providers[1].interrupted_attempts, 1);
        assert_eq!(s.current_round.as_ref().unwrap().in_flight[0].attempt, 2);
        resumed.answer(2000, "q1", 2, 50, 80);
        resumed.close_round(2080, 1);
        resumed.close_segment(2090, SegmentStatus::Complete);
        let s = snap(&resumed, Writer::Idle, 9000);
        assert_eq!((s.status, s.rounds_done, s.requests_done, s.eta_seconds), (Status::Finished, 2, 4, Some(0.0)));
        assert_eq!(s.providers[1].outcomes[&Outcome::Completed], 1);
    }

    #[test]
    fn an_imported_run_is_imported_whatever_its_log_says() {
        let mut p = plan();
        p.imported_from = Some("run-ref".into());
        let tally = mid_run().tally();
        let s = build(&Inputs {
            plan: &p,
            tally: &tally,
            last_seq: None,
            torn_tail_bytes: 0,
            writer: &Writer::Idle,
            sealed: true,
            now_wall_ns: 0,
            window: 20,
            rules: Rules::Inferbench,
        });
        assert_eq!((s.status, s.requests_done), (Status::Imported, 3));
        assert!(s.status_detail.contains("run-ref"));
    }

    #[test]
    fn eta_is_the_mean_round_times_the_rounds_left_less_the_current_rounds_progress() {
        assert_eq!(eta_seconds(&[], 3, None), None, "no round closed yet");
        assert_eq!(eta_seconds(&[1000.0, 3000.0], 3, None), Some(6.0));
        assert_eq!(eta_seconds(&[1000.0, 3000.0], 3, Some(500.0)), Some(5.5));
        assert_eq!(eta_seconds(&[1000.0, 3000.0], 3, Some(9000.0)), Some(4.0), "an overdue round counts as done");
        assert_eq!(eta_seconds(&[], 0, None), Some(0.0));
        let many: Vec<f64> = (0..40).map(|i| if i < 20 { 100_000.0 } else { 1000.0 }).collect();
        assert_eq!(eta_seconds(&many, 2, None), Some(2.0), "only the last {ETA_ROUNDS} rounds count");
    }
}
