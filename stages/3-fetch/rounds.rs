//! Sending what remains, round after round, into this fetch's segment of the log: each round
//! built ahead ([`crate::prepared`]), released and awaited ([`crate::release`]), the log
//! flushed while it runs, and the segment closed as complete, or as interrupted by a signal.
use crate::log::Flushes;
use crate::plan::Plan;
use crate::prepared::{round_ranges, spawn_preparer};
use crate::release::run_round;
use crate::resume::LogState;
use crate::segment;
use anyhow::{Context, Result};
use inferbench_cli::Interrupted;
use inferbench_contract::event::SegmentStatus;
use std::sync::Arc;

/// Sends every request the log does not hold a terminal outcome for, on the runtime's one
/// thread, and closes the segment.
pub async fn execute(plan_owner: Arc<Plan>, state: Arc<LogState>) -> Result<()> {
    let plan = &*plan_owner;
    let log = Arc::new(segment::open(plan, &state)?);
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
    let mut flushes = Flushes::default();
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
        let meanwhile = async { (flushes.start(&log).await, prepared_rounds.recv().await) };
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
    flushes.finish().await?;
    progress.finish_and_clear();
    let terminal = log.close(state.next_segment, SegmentStatus::Complete, before)?;
    eprintln!("ib-fetch: {terminal} of {} scheduled requests terminal", plan.schedule.len());
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
