//! The event log writer: one segment file per fetch process, gap-free `seq` across segments,
//! and the run clock (monotonic within a segment, anchored to the run's first segment).
use anyhow::Result;
use inferbench_schemas::event::{Envelope, Event, Outcome, SegmentClosed};
use inferbench_schemas::jsonl::AppendWriter;
use inferbench_schemas::FORMAT_VERSION;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

pub struct EventLog {
    run_id: String,
    opened: Instant,
    /// Run-clock time at which this segment opened.
    base_ns: u64,
    inner: Mutex<Inner>,
}

struct Inner {
    writer: AppendWriter,
    next_seq: u64,
    /// Final (non-interrupted) terminal events this segment wrote.
    terminals: u64,
    /// Once `segment_closed` is written nothing more is: a request still in flight when a
    /// fetch is stopped stays open in the log, to be closed as `interrupted` by the next one.
    closed: bool,
}

impl EventLog {
    /// Opens a new segment file; `next_seq` continues the previous segments, `base_ns` is the
    /// run-clock time of this segment's start.
    pub fn open(path: &Path, run_id: String, next_seq: u64, base_ns: u64) -> Result<Self> {
        let writer = AppendWriter::open(path)?;
        let inner = Mutex::new(Inner { writer, next_seq, terminals: 0, closed: false });
        Ok(EventLog { run_id, opened: Instant::now(), base_ns, inner })
    }

    /// The run clock now, in nanoseconds.
    pub fn now(&self) -> u64 {
        self.base_ns + self.opened.elapsed().as_nanos() as u64
    }

    /// Appends an event stamped now; returns its time.
    pub fn emit(&self, event: Event) -> Result<u64> {
        let t_ns = self.now();
        self.emit_at(t_ns, event)?;
        Ok(t_ns)
    }

    /// Appends an event stamped with a time taken earlier (e.g. the arrival of its bytes).
    pub fn emit_at(&self, t_ns: u64, event: Event) -> Result<()> {
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        if inner.closed {
            return Ok(());
        }
        let is_final = matches!(&event, Event::RequestTerminal(t) if t.outcome != Outcome::Interrupted);
        self.write(&mut inner, t_ns, event)?;
        inner.terminals += u64::from(is_final);
        Ok(())
    }

    fn write(&self, inner: &mut Inner, t_ns: u64, event: Event) -> Result<()> {
        let envelope = Envelope { v: FORMAT_VERSION, run_id: self.run_id.clone(), seq: inner.next_seq, t_ns, event };
        inner.writer.append(&envelope)?;
        inner.next_seq += 1;
        Ok(())
    }

    /// Writes `segment_closed` (counting `earlier` requests finished by previous segments plus
    /// this segment's), syncs, and stops the log; returns the count.
    pub fn close(&self, segment: u32, status: &str, earlier: u64) -> Result<u64> {
        let t_ns = self.now();
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        let terminal_requests = earlier + inner.terminals;
        let closed =
            SegmentClosed { segment, status: status.to_string(), terminal_requests, peak_rss_bytes: peak_rss_bytes() };
        self.write(&mut inner, t_ns, Event::SegmentClosed(closed))?;
        inner.closed = true;
        inner.writer.sync()?;
        Ok(terminal_requests)
    }

    /// Requests this segment brought to a final outcome so far.
    pub fn terminals(&self) -> u64 {
        self.inner.lock().map(|inner| inner.terminals).unwrap_or(0)
    }

    /// Forces the segment to stable storage (at round boundaries).
    pub fn sync(&self) -> Result<()> {
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        Ok(inner.writer.sync()?)
    }
}

/// This process's peak resident set size, from `/proc/self/status` (`VmHWM:  1234 kB`).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_schemas::event::RequestTerminal;
    use inferbench_schemas::jsonl;

    fn terminal(id: &str, outcome: Outcome) -> Event {
        Event::RequestTerminal(RequestTerminal {
            request_id: id.into(),
            attempt: 1,
            outcome,
            http_status: None,
            error_type: None,
            error_message: None,
            error_body: None,
            bytes_received: 0,
            done_seen: false,
        })
    }

    #[test]
    fn seq_continues_terminals_are_counted_and_nothing_follows_the_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0002.jsonl");
        let log = EventLog::open(&path, "run-x".into(), 40, 1_000).unwrap();
        log.emit(terminal("a", Outcome::Completed)).unwrap();
        log.emit(terminal("b", Outcome::Interrupted)).unwrap();
        log.emit(terminal("c", Outcome::Timeout)).unwrap();
        assert_eq!(log.close(2, "interrupted", 5).unwrap(), 7, "5 earlier + a and c");
        log.emit(terminal("d", Outcome::Completed)).unwrap();
        let written = jsonl::read::<Envelope>(&path).unwrap().records;
        let seqs: Vec<u64> = written.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![40, 41, 42, 43], "the late event after the close is not written");
        assert!(written.iter().all(|e| e.t_ns >= 1_000));
        assert!(matches!(&written[3].event, Event::SegmentClosed(c) if c.terminal_requests == 7));
        if cfg!(target_os = "linux") {
            let Event::SegmentClosed(c) = &written[3].event else { unreachable!() };
            assert!(c.peak_rss_bytes.is_some_and(|b| b > 1 << 20), "{c:?}");
        }
    }
}
