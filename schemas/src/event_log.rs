//! Reading a run's whole event log, checked: every line is this run's, `seq` runs from 0
//! without a gap or a repeat across the segments in order, and each segment opens with its
//! own `segment_opened`. A duplicated, foreign or missing line means the log was edited,
//! merged from another run or written by two processes at once, and every figure derived
//! from it would be wrong, so it is refused (bad input, naming the file and line) rather than
//! read. The one tolerated defect is the torn last line of a killed fetch.
use crate::event::{Envelope, Event};
use crate::run::{file_sha256, RunDir};
use crate::tables::EventRow;
use crate::{jsonl, parquet_io, Error, Result, FORMAT_VERSION};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One segment file as read.
#[derive(Debug)]
pub struct Segment {
    pub number: u32,
    pub path: PathBuf,
    pub records: Vec<Envelope>,
    /// Bytes of an unterminated last line that was skipped.
    pub torn_tail: Option<usize>,
}

/// The checks every reader of the log applies, segment by segment and line by line, so that
/// [`read`] (the whole log at once) and a reader following a live log (`ib-watch`) refuse
/// exactly the same logs with the same messages.
#[derive(Debug, Clone)]
pub struct Checker {
    run_id: String,
    next_seq: u64,
    next_segment: u32,
}

impl Checker {
    /// A checker for the log of the run whose lock names it `run_id`.
    pub fn new(run_id: &str) -> Checker {
        Checker { run_id: run_id.to_string(), next_seq: 0, next_segment: 1 }
    }

    /// The `seq` the next line must carry.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Segment file `number` (at `path`) follows the segments checked so far.
    pub fn segment(&mut self, number: u32, path: &Path) -> Result<()> {
        if number != self.next_segment {
            return Err(Error::bad(format!(
                "{}: segment {number} follows segment {}; a segment file is missing",
                path.display(),
                self.next_segment - 1
            )));
        }
        self.next_segment += 1;
        Ok(())
    }

    /// Line `line` (1-based) of segment `number`, at `path`.
    pub fn line(&mut self, path: &Path, number: u32, line: usize, env: &Envelope) -> Result<()> {
        let at = || format!("{}:{line}", path.display());
        if env.v != FORMAT_VERSION {
            return Err(Error::bad(format!("{}: v: format version {} is not supported", at(), env.v)));
        }
        if env.run_id != self.run_id {
            return Err(Error::bad(format!(
                "{}: run_id: `{}` is not this run (`{}`); a line from another run's log",
                at(),
                env.run_id,
                self.run_id
            )));
        }
        if env.seq != self.next_seq {
            let what = if env.seq < self.next_seq { "a repeated or duplicated line" } else { "lines are missing" };
            return Err(Error::bad(format!(
                "{}: seq: {} where {} was expected ({what})",
                at(),
                env.seq,
                self.next_seq
            )));
        }
        match (&env.event, line) {
            (Event::SegmentOpened(s), 1) if s.segment == number => {}
            (_, 1) => return Err(Error::bad(format!("{}: a segment must open with its own segment_opened", at()))),
            (Event::SegmentOpened(_), _) => {
                return Err(Error::bad(format!("{}: segment_opened in the middle of a segment", at())))
            }
            _ => {}
        }
        self.next_seq += 1;
        Ok(())
    }
}

/// Reads every segment of `run`, checking it belongs to `run_id`.
pub fn read(run: &RunDir, run_id: &str) -> Result<Vec<Segment>> {
    let listed = run.segments().map_err(|e| Error::io(run.events_dir(), e))?;
    let mut segments = Vec::with_capacity(listed.len());
    let mut checker = Checker::new(run_id);
    for (number, path) in listed {
        let log = jsonl::read::<Envelope>(&path)?;
        checker.segment(number, &path)?;
        for (line, env) in log.records.iter().enumerate() {
            checker.line(&path, number, line + 1, env)?;
        }
        segments.push(Segment { number, path, records: log.records, torn_tail: log.torn_tail });
    }
    Ok(segments)
}

/// Seals the log: its segments copied into one columnar `events.parquet` for analysis, one
/// row per line. The JSONL stays the source of truth; the Parquet is re-derivable from it byte
/// for byte. Returns the number of rows.
pub fn seal(run: &RunDir, run_id: &str) -> Result<usize> {
    let mut rows = Vec::new();
    let mut inputs = BTreeMap::from([("lock.json".to_string(), file_sha256(&run.lock())?)]);
    let path = run.events_parquet();
    let unencodable = |e: serde_json::Error| Error::Parquet { path: path.clone(), message: e.to_string() };
    for seg in read(run, run_id)? {
        let segment = seg.number;
        inputs.insert(format!("events/{segment:04}.jsonl"), file_sha256(&seg.path)?);
        for env in seg.records {
            let value = serde_json::to_value(&env).map_err(unencodable)?;
            let data = value.get("data").cloned().unwrap_or(Value::Null);
            rows.push(EventRow {
                segment: i64::from(segment),
                seq: env.seq as i64,
                t_ns: env.t_ns as i64,
                kind: value["type"].as_str().unwrap_or_default().to_string(),
                request_id: data.get("request_id").and_then(Value::as_str).map(str::to_string),
                attempt: data.get("attempt").and_then(Value::as_i64),
                data: serde_json::to_string(&data).map_err(unencodable)?,
            });
        }
    }
    parquet_io::write(&path, &rows, &inputs)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{RoundClosed, SegmentOpened};
    use crate::jsonl::AppendWriter;

    fn opened(segment: u32) -> Event {
        Event::SegmentOpened(SegmentOpened {
            segment,
            wall_clock_unix_ns: 1,
            code_version: "c".into(),
            schedule_sha256: "s".into(),
            scheduled_requests: 1,
            already_terminal: 0,
            endpoint_mode: "simulated".into(),
            deadline_ms: 1000,
            max_event_bytes: 1,
            max_response_bytes: 1,
            http_version: Some("1.1".into()),
            execution_region: "r".into(),
            host_sha256_16: "h".into(),
            os: "linux".into(),
            arch: "x86_64".into(),
        })
    }

    fn closed() -> Event {
        Event::RoundClosed(RoundClosed {
            round_id: "r".into(),
            round_index: 0,
            launch_skew_ns: 0,
            resumed_partial_round: false,
        })
    }

    fn write(run: &RunDir, segment: u32, lines: &[(&str, u64, Event)]) {
        std::fs::create_dir_all(run.events_dir()).unwrap();
        let mut w = AppendWriter::open(&run.segment(segment)).unwrap();
        for (run_id, seq, event) in lines {
            w.append(&Envelope { v: 1, run_id: run_id.to_string(), seq: *seq, t_ns: *seq, event: event.clone() })
                .unwrap();
        }
    }

    fn read_err(run: &RunDir) -> String {
        read(run, "run-a").unwrap_err().to_string()
    }

    #[test]
    fn a_clean_log_reads_across_segments() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        write(&run, 1, &[("run-a", 0, opened(1)), ("run-a", 1, closed())]);
        write(&run, 2, &[("run-a", 2, opened(2))]);
        let segments = read(&run, "run-a").unwrap();
        assert_eq!(segments.iter().map(|s| s.records.len()).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn duplicated_foreign_and_missing_lines_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        write(&run, 1, &[("run-a", 0, opened(1)), ("run-a", 1, closed()), ("run-a", 1, closed())]);
        assert!(read_err(&run).ends_with("0001.jsonl:3: seq: 1 where 2 was expected (a repeated or duplicated line)"));
        write(&run, 1, &[]);
        std::fs::write(run.segment(1), "").unwrap();
        write(&run, 1, &[("run-a", 0, opened(1)), ("run-b", 1, closed())]);
        assert!(read_err(&run).contains("0001.jsonl:2: run_id: `run-b` is not this run (`run-a`)"));
        std::fs::write(run.segment(1), "").unwrap();
        write(&run, 1, &[("run-a", 0, opened(1)), ("run-a", 3, closed())]);
        assert!(read_err(&run).contains("seq: 3 where 1 was expected (lines are missing)"));
        std::fs::write(run.segment(1), "").unwrap();
        write(&run, 1, &[("run-a", 0, closed())]);
        assert!(read_err(&run).contains("a segment must open with its own segment_opened"));
    }

    #[test]
    fn a_missing_segment_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        write(&run, 2, &[("run-a", 0, opened(2))]);
        assert!(read_err(&run).contains("segment 2 follows segment 0; a segment file is missing"));
    }
}
