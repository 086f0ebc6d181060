//! What earlier fetch processes left in the log: which requests are terminal, which attempts
//! were started but never ended (closed as `interrupted` by the next fetch and re-sent), and
//! where `seq`, the segment numbers and the run clock continue, and which of a load run's
//! steps are done.
use anyhow::Result;
use inferbench_contract::event::{EndpointMode, Event, Outcome, StepStatus};
use inferbench_contract::shard::Shard;
use inferbench_contract::Error;
use inferbench_store::event_log;
use inferbench_store::run::RunDir;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default, Clone)]
pub struct LogState {
    /// Requests whose latest attempt reached a terminal outcome (other than interrupted).
    pub terminal: BTreeSet<String>,
    /// request id → highest attempt number started.
    pub attempts: BTreeMap<String, u32>,
    /// Attempts started without a terminal event: (request id, attempt).
    pub open: Vec<(String, u32)>,
    pub next_seq: u64,
    pub next_segment: u32,
    /// Wall clock of the run's first segment (the run clock's zero), if any.
    pub anchor_wall_ns: Option<u64>,
    pub last_t_ns: u64,
    pub torn_lines: usize,
    /// What the earlier segments fetched from.
    pub endpoint_mode: Option<EndpointMode>,
    /// Load steps the log shows closed as complete.
    pub steps_complete: BTreeSet<u32>,
    /// Load steps opened and never closed, as (step, attempt): a fetch stopped during them.
    pub steps_open: Vec<(u32, u32)>,
    /// Load step → the highest attempt at it the log holds.
    pub step_attempts: BTreeMap<u32, u32>,
    /// The run-clock origin the log's shards were given, if it is sharded.
    pub shard_origin_ns: Option<u64>,
}

/// Scans the log of `run`, whose lock names it `run_id` (the directory may have been copied
/// or renamed since). A log that is not gap-free and this run's alone is refused.
///
/// A shard's fetch (`shard`) continues its own shard: its segments, `seq`, clock, open
/// attempts and steps are those of its shard's segments alone (the other shards' attempts in
/// flight are theirs to close). Its fetch and the log must agree on being sharded, and on N.
pub fn scan(run: &RunDir, run_id: &str, shard: Option<Shard>) -> Result<LogState> {
    let mut state = LogState { next_segment: 1, ..LogState::default() };
    let mut ended: BTreeSet<(String, u32)> = BTreeSet::new();
    let mut started: Vec<(String, u32)> = Vec::new();
    let mut log = event_log::LogReader::open(run, run_id)?;
    // Whether the segment being read is this fetch's shard's (every segment when unsharded).
    let mut mine = true;
    for entry in log.by_ref() {
        let entry = entry?;
        if let Event::SegmentOpened(s) = &entry.env.event {
            let theirs = s.shard.as_ref().map(|o| o.shard());
            if theirs.map(|t| t.count) != shard.map(|s| s.count) {
                let log_is = theirs.map_or("unsharded".to_string(), |t| format!("fetched by {} shards", t.count));
                let this = shard.map_or("an unsharded fetch".to_string(), |s| format!("shard {s}"));
                return Err(Error::LockMismatch(format!(
                    "{}: segment {} of this run's log is {log_is}; {this} cannot add to it (every fetch of a run is \
                     unsharded, or one of the same N shards)",
                    run.events_dir().display(),
                    s.segment
                ))
                .into());
            }
            state.shard_origin_ns = s.shard.as_ref().map(|o| o.origin_unix_ns);
            state.endpoint_mode.get_or_insert(s.endpoint_mode);
            mine = theirs == shard;
        }
        if !mine {
            continue;
        }
        state.next_segment = state.next_segment.max(entry.segment + 1);
        let env = entry.env;
        state.next_seq = env.seq + 1;
        state.last_t_ns = state.last_t_ns.max(env.t_ns);
        match env.event {
            Event::SegmentOpened(s) => {
                state.anchor_wall_ns.get_or_insert(s.wall_clock_unix_ns);
            }
            Event::RequestStarted(s) => {
                let highest = state.attempts.entry(s.request_id.clone()).or_insert(0);
                *highest = (*highest).max(s.attempt);
                started.push((s.request_id, s.attempt));
            }
            Event::StepOpened(o) => {
                let highest = state.step_attempts.entry(o.step).or_insert(0);
                *highest = (*highest).max(o.attempt);
                state.steps_open.push((o.step, o.attempt));
            }
            Event::StepClosed(c) => {
                state.steps_open.retain(|open| *open != (c.step, c.attempt));
                if c.status == StepStatus::Complete {
                    state.steps_complete.insert(c.step);
                }
            }
            Event::RequestTerminal(t) => {
                if t.outcome != Outcome::Interrupted {
                    state.terminal.insert(t.request_id.clone());
                }
                ended.insert((t.request_id, t.attempt));
            }
            _ => {}
        }
    }
    let mut last_own: Option<u32> = None;
    for segment in log.segments() {
        if shard.is_some_and(|s| !s.writes(segment.number)) {
            continue;
        }
        // An empty segment file (a fetch killed before its first line) still takes its number.
        state.next_segment = state.next_segment.max(segment.number + 1);
        last_own = last_own.max(Some(segment.number));
        state.torn_lines += usize::from(segment.torn_tail.is_some());
    }
    if let Some(shard) = shard {
        state.next_segment = shard.next_segment(last_own);
    }
    state.open = started.into_iter().filter(|key| !ended.contains(key)).collect();
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::event::{Envelope, Outcome, RequestStarted, RequestTerminal, SegmentOpened};
    use inferbench_contract::testutil::{self, RUN_ID};
    use inferbench_store::jsonl::AppendWriter;

    fn env(seq: u64, event: Event) -> Envelope {
        Envelope { t_ns: seq * 10, ..testutil::envelope(seq, event) }
    }

    fn started(id: &str, attempt: u32) -> Event {
        Event::RequestStarted(RequestStarted { attempt, ..testutil::request_started(id, 0) })
    }

    fn terminal(id: &str, attempt: u32, outcome: Outcome) -> Event {
        Event::RequestTerminal(RequestTerminal { attempt, ..testutil::request_terminal(id, outcome) })
    }

    #[test]
    fn open_attempts_terminal_requests_and_continuation_points() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path().join(RUN_ID));
        std::fs::create_dir_all(run.events_dir()).unwrap();
        let mut w = AppendWriter::open(&run.segment(1)).unwrap();
        let opened = SegmentOpened { wall_clock_unix_ns: 42, scheduled_requests: 3, ..testutil::segment_opened(1) };
        w.append(&env(0, Event::SegmentOpened(opened))).unwrap();
        w.append(&env(1, started("a", 1))).unwrap();
        w.append(&env(2, started("b", 1))).unwrap();
        w.append(&env(3, terminal("a", 1, Outcome::Completed))).unwrap();
        w.append(&env(4, started("c", 1))).unwrap();
        w.append(&env(5, terminal("c", 1, Outcome::Interrupted))).unwrap();
        drop(w);
        std::fs::OpenOptions::new()
            .append(true)
            .open(run.segment(1))
            .map(|mut f| {
                use std::io::Write;
                f.write_all(b"{\"v\":1,\"torn").unwrap()
            })
            .unwrap();
        let state = scan(&run, RUN_ID, None).unwrap();
        assert_eq!(state.terminal, BTreeSet::from(["a".to_string()]));
        assert_eq!(state.open, vec![("b".to_string(), 1)]);
        assert_eq!(state.attempts["c"], 1);
        assert_eq!((state.next_seq, state.next_segment, state.last_t_ns), (6, 2, 50));
        assert_eq!(state.anchor_wall_ns, Some(42));
        assert_eq!(state.endpoint_mode, Some(EndpointMode::Simulated));
        assert_eq!(state.torn_lines, 1);
    }
}
