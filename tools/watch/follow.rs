//! Following a live event log: each poll reads only what was appended to each segment since
//! the last one, and checks every new line as every reader of the log does
//! (`event_log::Checker`: this run's id, `seq` gap-free across segments, each segment opening
//! with its own `segment_opened`).
//!
//! The one defect tolerated is the one a live or killed `ib-fetch` leaves: an unterminated
//! last line of a segment (a line being written, or the line a kill tore), which is left
//! unread until it is complete. A complete line that does not parse, a segment that shrank
//! (the log is append-only) or one that disappeared is refused as corrupt.
use inferbench_contract::event::Envelope;
use inferbench_contract::{Error, Result};
use inferbench_store::event_log::Checker;
use inferbench_store::run::{is_sealed_segment, RunDir};
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One segment file as followed so far.
#[derive(Debug)]
struct Followed {
    number: u32,
    path: PathBuf,
    /// Bytes of complete lines read.
    offset: u64,
    /// Complete lines read.
    lines: usize,
    /// Bytes of the unterminated last line at the last poll.
    torn: usize,
    /// A sealed segment read to its end (it never grows).
    finished: bool,
}

/// The log of one run, read incrementally.
pub struct Follower {
    run: RunDir,
    checker: Checker,
    segments: Vec<Followed>,
}

impl Follower {
    pub fn new(run: RunDir, run_id: &str) -> Follower {
        Follower { run, checker: Checker::new(run_id), segments: Vec::new() }
    }

    /// The `seq` of the last line read, if any.
    pub fn last_seq(&self) -> Option<u64> {
        self.checker.next_seq().checked_sub(1)
    }

    /// Bytes of the unterminated last line of the last segment, at the last poll.
    pub fn torn_tail(&self) -> usize {
        self.segments.last().map_or(0, |s| s.torn)
    }

    /// Reads what was appended since the last poll and hands each new line, checked, to
    /// `each` with its segment number, in log order.
    pub fn poll(&mut self, mut each: impl FnMut(u32, Envelope) -> Result<()>) -> Result<()> {
        let listed = self.run.segments().map_err(|e| Error::unreadable(self.run.events_dir(), e))?;
        let numbers: std::collections::BTreeSet<u32> = listed.iter().map(|(n, _)| *n).collect();
        if let Some(gone) = self.segments.iter().find(|known| !numbers.contains(&known.number)) {
            return Err(Error::bad(format!(
                "{}: disappeared while the log was being read (the log is append-only)",
                gone.path.display()
            )));
        }
        // New segments, in number order, each taken (and checked to follow its shard's last)
        // just before it is read: a sharded log's shards add theirs side by side, so a new one
        // may come before one already followed, and which shard a number is is known once the
        // log's first segment_opened is read.
        let known = self.segments.len();
        let followed: std::collections::BTreeSet<u32> = self.segments.iter().map(|s| s.number).collect();
        let mut fresh = listed.into_iter().filter(|(n, _)| !followed.contains(n));
        let mut at = 0;
        loop {
            if at >= known {
                let Some((number, path)) = fresh.next() else { break };
                self.checker.segment(number, &path)?;
                self.segments.push(Followed { number, path, offset: 0, lines: 0, torn: 0, finished: false });
            }
            let segment = &mut self.segments[at];
            at += 1;
            if segment.finished {
                continue;
            }
            // A segment sealed since the last poll: the same bytes, compressed.
            if !is_sealed_segment(&segment.path) && !segment.path.exists() {
                let sealed = self.run.sealed_segment(segment.number);
                if sealed.exists() {
                    segment.path = sealed;
                }
            }
            let sealed = is_sealed_segment(&segment.path);
            let mut reader = appended(&segment.path, segment.offset)?;
            let mut buf = Vec::new();
            segment.torn = 0;
            loop {
                buf.clear();
                let n = reader
                    .read_until(b'\n', &mut buf)
                    .map_err(|e| Error::bad(format!("{}: cannot read: {e}", segment.path.display())))?;
                if n == 0 {
                    break;
                }
                if buf.last() != Some(&b'\n') {
                    segment.torn = n;
                    break;
                }
                segment.lines += 1;
                segment.offset += n as u64;
                let env: Envelope = serde_json::from_slice(&buf[..n - 1])
                    .map_err(|e| Error::bad(format!("{}:{}: {e}", segment.path.display(), segment.lines)))?;
                self.checker.line(&segment.path, segment.number, segment.lines, &env)?;
                each(segment.number, env)?;
            }
            // A sealed segment never grows: it is read once.
            segment.finished = sealed;
        }
        Ok(())
    }
}

/// The bytes of segment file `path` from `offset` (in its JSONL, decompressed when sealed) to
/// its end now, streamed.
fn appended(path: &Path, offset: u64) -> Result<Box<dyn BufRead>> {
    let unreadable = |e| Error::unreadable(path, e);
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let shorter = |len: u64| {
        Error::bad(format!(
            "{}: {len} bytes, shorter than the {offset} already read: the log was rewritten (it is append-only)",
            path.display()
        ))
    };
    if is_sealed_segment(path) {
        let mut decoder = std::io::BufReader::new(zstd::stream::read::Decoder::new(file).map_err(unreadable)?);
        let skipped = std::io::copy(&mut (&mut decoder).take(offset), &mut std::io::sink()).map_err(unreadable)?;
        if skipped < offset {
            return Err(shorter(skipped));
        }
        return Ok(Box::new(decoder));
    }
    let len = file.metadata().map_err(unreadable)?.len();
    if len < offset {
        return Err(shorter(len));
    }
    file.seek(SeekFrom::Start(offset)).map_err(unreadable)?;
    Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, file)))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use inferbench_contract::event::{Event, SegmentOpened};
    use std::io::Write;

    /// A `segment_opened` whose wall clock is one second after the epoch, which the snapshots'
    /// elapsed times count from.
    pub fn opened(segment: u32) -> Event {
        let opened = inferbench_contract::testutil::segment_opened(segment);
        Event::SegmentOpened(SegmentOpened { wall_clock_unix_ns: 1_000_000_000, ..opened })
    }

    pub fn line(seq: u64, event: Event) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(&inferbench_contract::testutil::envelope(seq, event)).unwrap();
        bytes.push(b'\n');
        bytes
    }

    fn closed() -> Event {
        Event::RoundClosed(inferbench_contract::testutil::round_closed(0))
    }

    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap().write_all(bytes).unwrap();
    }

    fn seqs(follower: &mut Follower) -> Result<Vec<u64>> {
        let mut seen = Vec::new();
        follower.poll(|_, env| {
            seen.push(env.seq);
            Ok(())
        })?;
        Ok(seen)
    }

    fn setup() -> (tempfile::TempDir, RunDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        std::fs::create_dir_all(run.events_dir()).unwrap();
        let seg = run.segment(1);
        (dir, run, seg)
    }

    #[test]
    fn a_partial_trailing_line_is_read_once_it_is_complete() {
        let (_dir, run, seg) = setup();
        let mut follower = Follower::new(run, "run-a");
        assert_eq!(seqs(&mut follower).unwrap(), Vec::<u64>::new(), "no log yet");
        let second = line(1, closed());
        append(&seg, &line(0, opened(1)));
        append(&seg, &second[..10]);
        assert_eq!(seqs(&mut follower).unwrap(), [0]);
        assert_eq!((follower.last_seq(), follower.torn_tail()), (Some(0), 10));
        assert_eq!(seqs(&mut follower).unwrap(), Vec::<u64>::new(), "still partial: nothing new");
        append(&seg, &second[10..]);
        assert_eq!(seqs(&mut follower).unwrap(), [1]);
        assert_eq!((follower.last_seq(), follower.torn_tail()), (Some(1), 0));
    }

    #[test]
    fn a_corrupt_complete_line_is_refused_naming_file_and_line() {
        let (_dir, run, seg) = setup();
        append(&seg, &line(0, opened(1)));
        append(&seg, b"{\"v\":1,\"torn\n");
        append(&seg, &line(1, closed()));
        let err = seqs(&mut Follower::new(run, "run-a")).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("0001.jsonl:2: "), "{err}");
    }

    #[test]
    fn a_torn_line_left_by_a_kill_stays_unread_when_the_next_segment_opens() {
        let (_dir, run, seg) = setup();
        append(&seg, &line(0, opened(1)));
        append(&seg, b"{\"v\":1,\"run_id\":\"run-a\",\"se");
        append(&run.segment(2), &line(1, opened(2)));
        let mut follower = Follower::new(run, "run-a");
        assert_eq!(seqs(&mut follower).unwrap(), [0, 1]);
        assert_eq!(follower.torn_tail(), 0, "the last segment ends cleanly");
    }

    #[test]
    fn gaps_foreign_lines_and_rewritten_segments_are_refused() {
        let (_dir, run, seg) = setup();
        append(&seg, &line(0, opened(1)));
        append(&seg, &line(2, closed()));
        let err = seqs(&mut Follower::new(run.clone(), "run-a")).unwrap_err();
        assert!(err.to_string().contains("seq: 2 where 1 was expected (lines are missing)"), "{err}");
        let err = seqs(&mut Follower::new(run.clone(), "run-b")).unwrap_err();
        assert!(err.to_string().contains("is not this run"), "{err}");

        std::fs::write(&seg, line(0, opened(1))).unwrap();
        let mut follower = Follower::new(run.clone(), "run-a");
        seqs(&mut follower).unwrap();
        std::fs::write(&seg, b"").unwrap();
        let err = seqs(&mut follower).unwrap_err();
        assert!(err.to_string().contains("the log was rewritten"), "{err}");
    }
}
