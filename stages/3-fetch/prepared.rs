//! Rounds built ahead of their release, on a thread of their own: each request's body,
//! headers and `request_started` line, and the round's `round_released` line, ready before the
//! round before it has ended, so that nothing of this runs between two rounds.
use crate::client::{self, Unit};
use crate::log::{line_buffer, EventLog, ReleasedLine, StartedLine};
use crate::plan::Plan;
use crate::resume::LogState;
use anyhow::{Context, Result};
use inferbench_contract::event::RoundReleased;
use inferbench_contract::tables::ScheduleRow;
use inferbench_inputs::spec::with_nonce;
use std::sync::Arc;

/// How many requests are built ahead of the round being sent.
const PREPARED_AHEAD: usize = 4000;

/// A round ready to release: its requests still to send, each built and its log line
/// serialised, and its `round_released` line.
pub struct PreparedRound {
    pub round_id: String,
    pub round_index: u64,
    /// How many requests the schedule holds in this round (more than `requests` when a resumed
    /// fetch sends only the missing ones).
    pub scheduled: usize,
    pub requests: Vec<client::Prepared>,
    pub released: ReleasedLine,
    /// Room for the round's log lines ([`line_buffer`]), its send times, and its sends.
    pub scratch: Vec<u8>,
    pub times: Vec<u64>,
    pub sent: Vec<(StartedLine, u64)>,
}

/// The index ranges of the schedule's rounds, in order.
pub fn round_ranges(schedule: &[ScheduleRow]) -> Vec<std::ops::Range<usize>> {
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
pub fn spawn_preparer(
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
        .map(|row| {
            let unit = unit(plan, state, row);
            client::prepare(log, Arc::clone(&plan.clients[&row.provider]), unit)
        })
        .collect::<Result<Vec<_>>>()?;
    let released = log.released_line(RoundReleased {
        round_id: round[0].round_id.clone(),
        round_index: round[0].round_index as u64,
        request_ids: requests.iter().map(|p| p.unit.request_id.clone()).collect(),
        nonce: round[0].nonce.clone(),
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

/// What request `row` sends: its body for its provider, as its attempt after those the log holds.
/// A synthetic request's prompt is the schedule's, byte for byte. A round's nonce is the first
/// line of the first message (the spec refuses nonces with synthetic prompts).
fn unit(plan: &Plan, state: &LogState, row: &ScheduleRow) -> Unit {
    let provider = &plan.clients[&row.provider].provider;
    let target = |n: Option<i64>| n.map(|n| n as u32);
    let body = match (&row.prompt, target(row.target_output_tokens)) {
        (Some(prompt), Some(output)) => {
            let ignore_eos = plan.spec.load.as_ref().and_then(|l| l.workload.synthetic()).is_some_and(|w| w.ignore_eos);
            provider.synthetic_body(&plan.spec, prompt, output, ignore_eos)
        }
        _ => {
            let item = plan.data.item(row.task_family, &row.item_id).expect("checked in plan::prepare");
            let system = match &row.nonce {
                Some(nonce) => std::borrow::Cow::Owned(with_nonce(nonce, &item.system)),
                None => std::borrow::Cow::Borrowed(item.system.as_str()),
            };
            provider.body(&plan.spec, &system, &item.user)
        }
    };
    Unit {
        request_id: row.request_id.clone(),
        round_id: row.round_id.clone(),
        round_index: row.round_index as u64,
        provider: row.provider.clone(),
        task_family: row.task_family,
        item_id: row.item_id.clone(),
        attempt: state.attempts.get(&row.request_id).copied().unwrap_or(0) + 1,
        body,
        step: row.step.map(|s| s as u32),
        target_input_tokens: target(row.target_input_tokens),
        target_output_tokens: target(row.target_output_tokens),
    }
}
