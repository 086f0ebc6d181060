//! Where each shard of a sharded log stands (`ib-fetch --shard i/N`): which shards have
//! written segments, whether each one's share is done, and what is missing, so that the log is
//! sealed once, when every shard is done, and a shard missing or cut short is named.
use crate::event_log::LogReader;
use crate::run::RunDir;
use inferbench_contract::event::{Event, Outcome, SegmentStatus};
use inferbench_contract::shard::Shard;
use inferbench_contract::Result;
use std::collections::{BTreeMap, BTreeSet};

/// One shard, as its segments record it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardProgress {
    pub shard: Shard,
    /// Its segments, in order (none: the shard never ran here, or its files were not copied).
    pub segments: Vec<u32>,
    /// Requests in its share, as its `segment_opened` records.
    pub requests: u64,
    /// Of those, requests with a final outcome.
    pub terminal: u64,
    /// Attempts started without a terminal event.
    pub open: u64,
    /// How its last segment ended: `None` while it is open (a fetch runs, or was killed, or its
    /// file was copied before it finished).
    pub last_closed: Option<SegmentStatus>,
}

impl ShardProgress {
    /// Every request of its share is terminal and its last segment closed as complete.
    pub fn done(&self) -> bool {
        !self.segments.is_empty()
            && self.terminal >= self.requests
            && self.open == 0
            && self.last_closed == Some(SegmentStatus::Complete)
    }

    /// Why it is not done, in words.
    pub fn why_not(&self) -> String {
        let shard = self.shard;
        if self.segments.is_empty() {
            return format!(
                "shard {shard} has no segment here (segments {}, {}, …): it has not run, or its events/ files were not \
                 copied into this run",
                shard.segment(1),
                shard.segment(2)
            );
        }
        let last = self.segments.last().copied().unwrap_or(0);
        let state = match self.last_closed {
            None => format!("its last segment {last} is not closed: its fetch is running, was killed (rerun it to resume), or the file was copied before it finished"),
            Some(SegmentStatus::Complete) => format!("its last segment {last} closed as complete"),
            Some(status) => format!("its last segment {last} closed as {status} (rerun it to resume)"),
        };
        format!(
            "shard {shard}: {} of its {} requests terminal, {} in flight; {state}",
            self.terminal, self.requests, self.open
        )
    }
}

/// Each shard of `run`'s log (whose lock names it `run_id`), in order; empty when the log is
/// not sharded. The log is read and checked whole, as every reader checks it.
pub fn progress(run: &RunDir, run_id: &str) -> Result<Vec<ShardProgress>> {
    let mut log = LogReader::open_jsonl(run, run_id)?;
    let mut shards: BTreeMap<u32, ShardProgress> = BTreeMap::new();
    let mut terminal: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    let mut started: BTreeMap<u32, BTreeSet<(String, u32)>> = BTreeMap::new();
    let mut current: Option<Shard> = None;
    for entry in &mut log {
        let entry = entry?;
        match &entry.env.event {
            Event::SegmentOpened(s) => {
                current = s.shard.as_ref().map(|o| o.shard());
                if let Some(opened) = &s.shard {
                    let progress = shards.entry(opened.index).or_insert_with(|| empty(opened.shard()));
                    progress.segments.push(s.segment);
                    progress.requests = opened.requests;
                    progress.last_closed = None;
                }
            }
            _ => {
                let Some(shard) = current else { continue };
                let progress = shards.get_mut(&shard.index).expect("opened");
                match &entry.env.event {
                    Event::SegmentClosed(c) => progress.last_closed = Some(c.status),
                    Event::RequestStarted(s) => {
                        started.entry(shard.index).or_default().insert((s.request_id.clone(), s.attempt));
                    }
                    Event::RequestTerminal(t) => {
                        started.entry(shard.index).or_default().remove(&(t.request_id.clone(), t.attempt));
                        if t.outcome != Outcome::Interrupted {
                            terminal.entry(shard.index).or_default().insert(t.request_id.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let Some(count) = log.checker().shard_count() else { return Ok(Vec::new()) };
    Ok((0..count)
        .map(|index| {
            let mut progress = shards.remove(&index).unwrap_or_else(|| empty(Shard { index, count }));
            progress.terminal = terminal.get(&index).map_or(0, |t| t.len() as u64);
            progress.open = started.get(&index).map_or(0, |s| s.len() as u64);
            progress
        })
        .collect())
}

fn empty(shard: Shard) -> ShardProgress {
    ShardProgress { shard, segments: Vec::new(), requests: 0, terminal: 0, open: 0, last_closed: None }
}
