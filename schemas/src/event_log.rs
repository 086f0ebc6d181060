//! Reading a run's event log, checked: every line is this run's, `seq` runs from 0 without a
//! gap or a repeat across the segments in order, and each segment opens with its own
//! `segment_opened`. A duplicated, foreign or missing line means the log was edited, merged
//! from another run or written by two processes at once, and every figure derived from it
//! would be wrong, so it is refused (bad input, naming the file and line) rather than read.
//! The one tolerated defect is the torn last line of a killed fetch.
//!
//! Every reader goes through [`LogReader`], which streams the log a line at a time (bounded
//! memory whatever its size) and reads each segment in either of its two forms: the live
//! `events/NNNN.jsonl` that `ib-fetch` appends, or the sealed `events/NNNN.jsonl.zst` that
//! [`seal`] leaves once the run is complete (see [`crate::sealed`]).
use crate::event::{Envelope, Event};
use crate::run::RunDir;
use crate::{Error, Result, FORMAT_VERSION};
use sha2::{Digest, Sha256};
use std::io::BufRead;
use std::path::{Path, PathBuf};

pub use crate::sealed::{seal, segment_sha256, Sealed};

/// One segment as a [`LogReader`] read it (complete once the reader moved past it).
#[derive(Debug, Clone)]
pub struct SegmentRead {
    pub number: u32,
    /// The file read: `NNNN.jsonl`, or `NNNN.jsonl.zst` when sealed.
    pub path: PathBuf,
    pub sealed: bool,
    /// Bytes of the segment's JSONL (decompressed when sealed).
    pub bytes: u64,
    /// SHA-256 of those bytes: the hash provenance records as `events/NNNN.jsonl`.
    pub sha256: String,
    /// Complete lines.
    pub lines: usize,
    /// Bytes of an unterminated last line that was skipped.
    pub torn_tail: Option<usize>,
}

/// One checked line of the log.
#[derive(Debug)]
pub struct Entry {
    pub segment: u32,
    /// 1-based line number within its segment.
    pub line: usize,
    pub env: Envelope,
}

/// One segment file being read.
struct Open {
    read: SegmentRead,
    lines: Box<dyn BufRead + Send>,
    hasher: Sha256,
    buf: Vec<u8>,
}

/// The log of a run, streamed a line at a time across all its segments, every line checked
/// by the same [`Checker`] rules (and messages) as every other reader. After the last line,
/// [`LogReader::segments`] lists every segment with its size and hash.
pub struct LogReader {
    pending: std::collections::VecDeque<(u32, PathBuf)>,
    open: Option<Open>,
    checker: Checker,
    done: Vec<SegmentRead>,
    failed: bool,
}

impl LogReader {
    /// Opens the log of `run`, whose lock names it `run_id`. No segment at all is an empty log.
    pub fn open(run: &RunDir, run_id: &str) -> Result<LogReader> {
        let listed = run.segments().map_err(|e| Error::unreadable(run.events_dir(), e))?;
        Ok(LogReader {
            pending: listed.into(),
            open: None,
            checker: Checker::new(run_id),
            done: Vec::new(),
            failed: false,
        })
    }

    /// The segments read to their end so far (all of them once the iterator is exhausted).
    pub fn segments(&self) -> &[SegmentRead] {
        &self.done
    }

    /// The segment being read, if any.
    pub fn current(&self) -> Option<&SegmentRead> {
        self.open.as_ref().map(|o| &o.read)
    }

    /// Segment files listed (read or not).
    pub fn segment_count(&self) -> usize {
        self.done.len() + usize::from(self.open.is_some()) + self.pending.len()
    }

    fn start(&mut self, number: u32, path: PathBuf) -> Result<()> {
        let sealed = crate::run::is_sealed_segment(&path);
        let file = std::fs::File::open(&path).map_err(|e| Error::unreadable(&path, e))?;
        let lines: Box<dyn BufRead + Send> = if sealed {
            let decoder = zstd::stream::read::Decoder::new(file).map_err(|e| Error::unreadable(&path, e))?;
            Box::new(std::io::BufReader::with_capacity(1 << 16, decoder))
        } else {
            Box::new(std::io::BufReader::with_capacity(1 << 16, file))
        };
        self.checker.segment(number, &path)?;
        let read = SegmentRead { number, path, sealed, bytes: 0, sha256: String::new(), lines: 0, torn_tail: None };
        self.open = Some(Open { read, lines, hasher: Sha256::new(), buf: Vec::with_capacity(1 << 12) });
        Ok(())
    }

    fn step(&mut self) -> Result<Option<Entry>> {
        loop {
            let Some(open) = self.open.as_mut() else {
                let Some((number, path)) = self.pending.pop_front() else { return Ok(None) };
                self.start(number, path)?;
                continue;
            };
            open.buf.clear();
            let n = open.lines.read_until(b'\n', &mut open.buf).map_err(|e| {
                Error::bad(format!("{}: cannot read (corrupt or truncated?): {e}", open.read.path.display()))
            })?;
            open.hasher.update(&open.buf);
            open.read.bytes += n as u64;
            if n == 0 || open.buf.last() != Some(&b'\n') {
                // The end of the segment, after a torn last line if the buffer holds one.
                let mut open = self.open.take().expect("open");
                open.read.torn_tail = (n > 0).then_some(n);
                open.read.sha256 = crate::canonical::hex(&open.hasher.finalize());
                self.done.push(open.read);
                continue;
            }
            open.read.lines += 1;
            let line = open.read.lines;
            let text = &open.buf[..n - 1];
            let env: Envelope = serde_json::from_slice(text)
                .map_err(|e| Error::bad(format!("{}:{line}: {e}", open.read.path.display())))?;
            self.checker.line(&open.read.path, open.read.number, line, &env)?;
            return Ok(Some(Entry { segment: open.read.number, line, env }));
        }
    }
}

impl Iterator for LogReader {
    type Item = Result<Entry>;
    fn next(&mut self) -> Option<Result<Entry>> {
        if self.failed {
            return None;
        }
        match self.step() {
            Ok(entry) => entry.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// One segment file as read whole by [`read`].
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
