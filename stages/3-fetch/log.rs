//! The event log writer: one segment file per fetch process, gap-free `seq` across segments,
//! and the run clock (monotonic within a segment, anchored to the run's first segment).
use anyhow::{Context, Result};
use inferbench_contract::event::{Event, Outcome, RequestStarted, RoundReleased, SegmentClosed, SegmentStatus};
use inferbench_store::segment_writer::{self, Lines, Prepared, SegmentWriter};
use inferbench_store::write_behind::SyncHandle;
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

pub struct EventLog {
    /// The run's lines, to serialise a round's lines before the round.
    lines: Lines,
    opened: Instant,
    /// Run-clock time at which this segment opened.
    base_ns: u64,
    inner: Mutex<Inner>,
    /// What the background flushes settle and sync the segment through. It shares the
    /// segment's file descriptor: a flush never needs a new one, which a fetch whose
    /// connections have taken every one it may open could not get.
    sync_handle: SyncHandle,
}

struct Inner {
    /// Each line is handed to the segment's writer thread as it is made (a copy under its
    /// lock): no sender waits for a `write` system call or for the disk.
    writer: SegmentWriter,
    /// Final (non-interrupted) terminal events this segment wrote.
    terminals: u64,
    /// Of those, the ones the client's own resources ended (`ErrorKind::ClientResource`).
    client_resource_errors: u64,
    /// Once `segment_closed` is written nothing more is: a request still in flight when a
    /// fetch is stopped stays open in the log, to be closed as `interrupted` by the next one.
    closed: bool,
}

impl EventLog {
    /// Opens a new segment file; `next_seq` continues the previous segments, `base_ns` is the
    /// run-clock time of this segment's start.
    pub fn open(path: &Path, run_id: String, next_seq: u64, base_ns: u64) -> Result<Self> {
        let writer = SegmentWriter::append(path, &run_id, next_seq)?;
        let sync_handle = writer.sync_handle();
        let inner = Mutex::new(Inner { writer, terminals: 0, client_resource_errors: 0, closed: false });
        Ok(EventLog { lines: Lines::new(&run_id), opened: Instant::now(), base_ns, inner, sync_handle })
    }

    /// The run clock now, in nanoseconds.
    pub fn now(&self) -> u64 {
        self.base_ns + self.opened.elapsed().as_nanos() as u64
    }

    /// The instant of run-clock time `t_ns` (of this segment).
    pub fn instant_at(&self, t_ns: u64) -> Instant {
        self.opened + std::time::Duration::from_nanos(t_ns.saturating_sub(self.base_ns))
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
        let clients = matches!(&event, Event::RequestTerminal(t) if t.error_type == Some(inferbench_contract::vocab::ErrorKind::ClientResource));
        inner.client_resource_errors += u64::from(clients);
        inner.writer.write(t_ns, &event)?;
        inner.terminals += u64::from(is_final);
        Ok(())
    }

    /// Writes `segment_closed` (counting `earlier` requests finished by previous segments plus
    /// this segment's), syncs, and stops the log; returns the count.
    pub fn close(&self, segment: u32, status: SegmentStatus, earlier: u64) -> Result<u64> {
        let t_ns = self.now();
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        let terminal_requests = earlier + inner.terminals;
        let peak_rss_bytes = segment_writer::peak_rss_bytes();
        let closed = SegmentClosed { segment, status, terminal_requests, peak_rss_bytes };
        inner.writer.write(t_ns, &Event::SegmentClosed(closed))?;
        inner.closed = true;
        inner.writer.sync()?;
        Ok(terminal_requests)
    }

    /// Requests this segment ended because the client ran out of a resource of its own.
    pub fn client_resource_errors(&self) -> u64 {
        self.inner.lock().map(|inner| inner.client_resource_errors).unwrap_or(0)
    }

    /// Requests this segment brought to a final outcome so far.
    pub fn terminals(&self) -> u64 {
        self.inner.lock().map(|inner| inner.terminals).unwrap_or(0)
    }

    /// A handle that forces the segment to stable storage from another thread, so that the
    /// flush at a round boundary does not hold up the next round's launch.
    fn sync_handle(&self) -> SyncHandle {
        self.sync_handle.clone()
    }

    /// The `request_started` line of a request, serialised now, with its `seq`, `t_ns` and
    /// `intended_t_ns` filled in when it is sent ([`EventLog::write_started`]).
    /// Its body is given as the bytes the request sends (see
    /// [`inferbench_store::segment_writer::Lines::prepare_started_with_body`]).
    pub fn started_line(&self, started: RequestStarted, body_json: &[u8]) -> Result<StartedLine> {
        Ok(StartedLine(self.lines.prepare_started_with_body(started, body_json)?))
    }

    /// The `round_released` line of a round, serialised now, with its `seq` and `t_ns` filled
    /// in when the round is released ([`EventLog::write_released`]).
    pub fn released_line(&self, released: RoundReleased) -> Result<ReleasedLine> {
        Ok(ReleasedLine(self.lines.prepare(&Event::RoundReleased(released))?))
    }

    /// Appends a prepared `round_released` line stamped now; returns its time. The line is
    /// rendered in `scratch` (see [`line_buffer`]).
    pub fn write_released(&self, line: &ReleasedLine, scratch: &mut Vec<u8>) -> Result<u64> {
        let mut stamped = None;
        self.append_rendered(scratch, |out, seq| {
            // Stamped under the log's lock, so that times follow the seq.
            let t_ns = self.now();
            line.0.render(out, seq, t_ns);
            stamped = Some(t_ns);
            1
        })?;
        Ok(stamped.unwrap_or_else(|| self.now()))
    }

    /// Appends the `request_started` lines of requests sent at `t_ns` each, released at
    /// `intended_t_ns`, in order and together, before the caller lets any of the requests'
    /// bytes go out (handed to the writer thread, which writes them within about a
    /// millisecond). They are rendered in `scratch`.
    pub fn write_started(&self, lines: &[(StartedLine, u64)], intended_t_ns: u64, scratch: &mut Vec<u8>) -> Result<()> {
        self.write_started_released(lines, intended_t_ns, None, scratch)
    }

    /// [`EventLog::write_started`] for requests a capped load step held in its queue until a
    /// slot freed at `released_t_ns`, which their lines record.
    pub fn write_started_released(
        &self,
        lines: &[(StartedLine, u64)],
        intended_t_ns: u64,
        released_t_ns: Option<u64>,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        self.append_rendered(scratch, |out, first_seq| {
            for (seq, (line, t_ns)) in (first_seq..).zip(lines) {
                line.0.render_started(out, seq, *t_ns, released_t_ns, intended_t_ns);
            }
            lines.len() as u64
        })
    }

    /// Renders lines into `scratch` from the next `seq` (`render` returns how many) and
    /// hands them over together; nothing once the log is closed.
    fn append_rendered(&self, scratch: &mut Vec<u8>, render: impl FnOnce(&mut Vec<u8>, u64) -> u64) -> Result<()> {
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        if inner.closed {
            return Ok(());
        }
        Ok(inner.writer.write_with(scratch, render)?)
    }
}

/// The log forced to stable storage on a blocking thread while the rounds go on, one flush at
/// a time, so that a round's launch never waits for the disk.
#[derive(Default)]
pub struct Flushes {
    running: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Flushes {
    /// Starts forcing `log` to stable storage unless the last flush is still running; fails
    /// when the last flush failed.
    pub async fn start(&mut self, log: &EventLog) -> Result<()> {
        if self.running.as_ref().is_some_and(|s| !s.is_finished()) {
            return Ok(());
        }
        self.finish().await?;
        let handle = log.sync_handle();
        self.running = Some(tokio::task::spawn_blocking(move || handle.sync()));
        Ok(())
    }

    /// Waits for the last flush started, if any; fails when it failed.
    pub async fn finish(&mut self) -> Result<()> {
        if let Some(done) = self.running.take() {
            done.await.context("flushing the log")?.context("flushing the log")?;
        }
        Ok(())
    }
}

/// A buffer that holds a round's `round_released` line and, in turn, all its `request_started`
/// lines, its pages already written: built ahead of the round, nothing is allocated or first
/// touched for the log between two rounds or between the sends and their bytes' going out.
pub fn line_buffer<'a>(released: &ReleasedLine, started: impl Iterator<Item = &'a StartedLine>) -> Vec<u8> {
    let size = started.map(|line| line.0.max_len()).sum::<usize>().max(released.0.max_len());
    let mut buffer = vec![1u8; size];
    buffer.clear();
    buffer
}

/// A `request_started` line serialised ahead of its send ([`EventLog::started_line`]).
pub struct StartedLine(Prepared);

/// A `round_released` line serialised ahead of its round ([`EventLog::released_line`]): the
/// ids of a thousand requests are not written out between the last answer of one round and
/// the first send of the next.
pub struct ReleasedLine(Prepared);

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::event::Envelope;
    use inferbench_contract::testutil::{self, request_started, request_terminal, round_released};
    use inferbench_store::jsonl;

    fn terminal(id: &str, outcome: Outcome) -> Event {
        Event::RequestTerminal(request_terminal(id, outcome))
    }

    /// Attempt 2 of `id`, with a quoted provider name and a redacted header.
    fn started(id: &str, body: serde_json::Value) -> RequestStarted {
        let headers = [("Authorization".to_string(), "<redacted>".to_string())].into();
        let provider = "p \"quoted\"".into();
        RequestStarted { attempt: 2, round_id: "round-1".into(), provider, body, headers, ..request_started(id, 7) }
    }

    /// Rendered templates are byte for byte the envelopes serde writes, whatever they hold
    /// (here keys and strings that look like the split points), in their places in the seq.
    #[test]
    fn prepared_lines_render_exactly_what_serde_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0001.jsonl");
        let log = EventLog::open(&path, "run-\"x\"".into(), 3, 0).unwrap();
        let tricky = serde_json::json!({"seq": 1, "t_ns": 2, "intended_t_ns": 3,
            "messages": [{"content": "\"seq\":18446744073709551557,\"t_ns\":1}}"}]});
        let released = RoundReleased {
            round_id: "r,\"t_ns\":18446744073709551533}".into(),
            nonce: Some("00ff00ff00ff00ff".into()),
            ..round_released(7, &["a", "b\"\\"])
        };
        let released_t = log.write_released(&log.released_line(released.clone()).unwrap(), &mut Vec::new()).unwrap();
        let events = [started("a", tricky), started("b", serde_json::json!({}))];
        let lines: Vec<(StartedLine, u64)> = events
            .iter()
            .zip([10, 20])
            .map(|(e, t)| (log.started_line(e.clone(), &serde_json::to_vec(&e.body).unwrap()).unwrap(), t))
            .collect();
        log.write_started(&lines, 5, &mut b"left over".to_vec()).unwrap();
        // A capped step's request, released from its queue after it was due.
        let mut queued = started("q", serde_json::json!({}));
        queued.step = Some(2);
        let queued_line =
            vec![(log.started_line(queued.clone(), &serde_json::to_vec(&queued.body).unwrap()).unwrap(), 30)];
        log.write_started_released(&queued_line, 6, Some(25), &mut Vec::new()).unwrap();
        log.emit(terminal("a", Outcome::Completed)).unwrap();
        log.inner.lock().unwrap().writer.sync().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let written: Vec<&str> = text.lines().collect();
        let envelope =
            |seq, t_ns, event| Envelope { run_id: "run-\"x\"".into(), t_ns, ..testutil::envelope(seq, event) };
        let want = envelope(3, released_t, Event::RoundReleased(released));
        assert_eq!(written[0], serde_json::to_string(&want).unwrap());
        for (i, (event, t)) in events.iter().zip([10, 20]).enumerate() {
            let mut event = event.clone();
            event.intended_t_ns = 5;
            let want = envelope(4 + i as u64, t, Event::RequestStarted(event));
            assert_eq!(written[1 + i], serde_json::to_string(&want).unwrap());
        }
        queued.released_t_ns = Some(25);
        queued.intended_t_ns = 6;
        assert_eq!(written[3], serde_json::to_string(&envelope(6, 30, Event::RequestStarted(queued))).unwrap());
        let seqs: Vec<u64> = jsonl::read::<Envelope>(&path).unwrap().records.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![3, 4, 5, 6, 7], "the prepared lines take their places in the gap-free seq");
        log.close(1, SegmentStatus::Complete, 0).unwrap();
        let line = log.released_line(round_released(8, &[]));
        log.write_released(&line.unwrap(), &mut Vec::new()).unwrap();
        assert_eq!(jsonl::read::<Envelope>(&path).unwrap().records.len(), 6, "nothing follows the close");
    }

    #[test]
    fn seq_continues_terminals_are_counted_and_nothing_follows_the_close() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0002.jsonl");
        let log = EventLog::open(&path, "run-x".into(), 40, 1_000).unwrap();
        log.emit(terminal("a", Outcome::Completed)).unwrap();
        log.emit(terminal("b", Outcome::Interrupted)).unwrap();
        log.emit(terminal("c", Outcome::Timeout)).unwrap();
        assert_eq!(log.close(2, SegmentStatus::Interrupted, 5).unwrap(), 7, "5 earlier + a and c");
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
