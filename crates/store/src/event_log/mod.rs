//! Reading a run's event log, checked: every line is this run's, `seq` runs from 0 without a
//! gap or a repeat across the segments in order, and each segment opens with its own
//! `segment_opened`. A duplicated, foreign or missing line means the log was edited, merged
//! from another run or written by two processes at once, and every figure derived from it
//! would be wrong, so it is refused (bad input, naming the file and line) rather than read.
//! The one tolerated defect is the torn last line of a killed fetch.
//!
//! Every reader goes through [`LogReader`] (`reader`), which streams the log a line at a time
//! (bounded memory whatever its size) and reads each segment in either of its two forms: the
//! live `events/NNNN.jsonl` that `ib-fetch` appends, or the sealed `events/NNNN.jsonl.zst` that
//! `crate::sealed::seal` leaves once the run is complete, as the log's inventory lists them
//! (`source`: the threads that read, decompress, hash and parse them). Every line passes the
//! [`Checker`] (`checker`), the rules every reader of the log applies.
mod checker;
mod reader;
mod source;

pub use checker::Checker;
pub use reader::{Entry, LogReader, SegmentRead};

use crate::run::RunDir;
use inferbench_contract::event::Envelope;
use inferbench_contract::Result;
use std::path::PathBuf;

/// One segment file as read whole by [`read`].
#[derive(Debug)]
pub struct Segment {
    pub number: u32,
    pub path: PathBuf,
    pub records: Vec<Envelope>,
    /// Bytes of an unterminated last line that was skipped.
    pub torn_tail: Option<usize>,
}

/// Reads the whole log of `run` into memory, checking it belongs to `run_id`: for tests and
/// small logs only. Stages stream it with [`LogReader`].
pub fn read(run: &RunDir, run_id: &str) -> Result<Vec<Segment>> {
    let mut reader = LogReader::open(run, run_id)?;
    let mut records: Vec<(u32, Envelope)> = Vec::new();
    for entry in &mut reader {
        let entry = entry?;
        records.push((entry.segment, entry.env));
    }
    let mut records = records.into_iter().peekable();
    let mut segments = Vec::new();
    for seg in reader.segments() {
        let mut mine = Vec::new();
        while let Some((_, env)) = records.next_if(|(n, _)| *n == seg.number) {
            mine.push(env);
        }
        segments.push(Segment { number: seg.number, path: seg.path.clone(), records: mine, torn_tail: seg.torn_tail });
    }
    Ok(segments)
}

#[cfg(test)]
mod tests;
