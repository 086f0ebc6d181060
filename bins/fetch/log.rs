//! The event log writer: one segment file per fetch process, gap-free `seq` across segments,
//! and the run clock (monotonic within a segment, anchored to the run's first segment).
use anyhow::Result;
use inferbench_schemas::event::{Envelope, Event, Outcome, RequestStarted, SegmentClosed};
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

    /// A handle that forces the segment to stable storage from another thread, so that the
    /// flush at a round boundary does not hold up the next round's launch.
    pub fn sync_handle(&self) -> Result<std::fs::File> {
        let inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        Ok(inner.writer.sync_handle()?)
    }

    /// The `request_started` line of a request, serialised now, with its `seq`, `t_ns` and
    /// `intended_t_ns` filled in when it is sent ([`EventLog::write_started`]).
    pub fn started_line(&self, started: RequestStarted) -> Result<StartedLine> {
        StartedLine::new(&self.run_id, started)
    }

    /// Appends the `request_started` lines of requests sent at `t_ns` each, released at
    /// `intended_t_ns`, in order and with one write: they reach the kernel together, before
    /// the caller lets any of the requests' bytes go out.
    pub fn write_started(&self, lines: &[(StartedLine, u64)], intended_t_ns: u64) -> Result<()> {
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        if inner.closed {
            return Ok(());
        }
        let size: usize = lines.iter().map(|(line, _)| line.len() + 3 * 20).sum();
        let mut batch = Vec::with_capacity(size);
        let mut seq = inner.next_seq;
        for (line, t_ns) in lines {
            line.render(&mut batch, seq, *t_ns, intended_t_ns);
            seq += 1;
        }
        inner.writer.append_lines(&batch)?;
        inner.next_seq = seq;
        Ok(())
    }
}

/// A `request_started` envelope serialised ahead of its send, split where its three numbers
/// go: `{"v":…,"run_id":…,"seq":` SEQ `,"t_ns":` T `,"type":"request_started","data":{…,
/// "intended_t_ns":` I `}}`. Rendering is a copy and three integers, so a round of a thousand
/// requests is launched without serialising a thousand bodies between the sends.
pub struct StartedLine {
    head: Vec<u8>,
    middle: Vec<u8>,
    tail: Vec<u8>,
}

/// Distinct 20-digit values that no field of the template can hold by chance where the split
/// looks for them.
const SEQ_MARK: u64 = 18_446_744_073_709_551_557;
const T_MARK: u64 = 18_446_744_073_709_551_533;
const INTENDED_MARK: u64 = 18_446_744_073_709_551_521;

impl StartedLine {
    fn new(run_id: &str, mut started: RequestStarted) -> Result<StartedLine> {
        started.intended_t_ns = INTENDED_MARK;
        let envelope = Envelope {
            v: FORMAT_VERSION,
            run_id: run_id.to_string(),
            seq: SEQ_MARK,
            t_ns: T_MARK,
            event: Event::RequestStarted(started),
        };
        let text = serde_json::to_vec(&envelope)?;
        let seq_key = format!("\"seq\":{SEQ_MARK},\"t_ns\":{T_MARK},");
        let end = format!(",\"intended_t_ns\":{INTENDED_MARK}}}}}");
        // The envelope's own keys come before `data` (whose strings escape every quote), and
        // `intended_t_ns` is the last field of the last object: both splits are unambiguous.
        let at = find(&text, seq_key.as_bytes())
            .ok_or_else(|| anyhow::anyhow!("request_started envelope without its seq and t_ns"))?;
        if !text.ends_with(end.as_bytes()) {
            anyhow::bail!("request_started envelope does not end with intended_t_ns");
        }
        let head = text[..at + "\"seq\":".len()].to_vec();
        let tail_start = at + seq_key.len() - 1;
        let tail = text[tail_start..text.len() - end.len() + ",\"intended_t_ns\":".len()].to_vec();
        Ok(StartedLine { head, middle: b",\"t_ns\":".to_vec(), tail })
    }

    fn len(&self) -> usize {
        self.head.len() + self.middle.len() + self.tail.len() + 3
    }

    fn render(&self, out: &mut Vec<u8>, seq: u64, t_ns: u64, intended_t_ns: u64) {
        use std::io::Write as _;
        out.extend_from_slice(&self.head);
        let _ = write!(out, "{seq}");
        out.extend_from_slice(&self.middle);
        let _ = write!(out, "{t_ns}");
        out.extend_from_slice(&self.tail);
        let _ = write!(out, "{intended_t_ns}");
        out.extend_from_slice(b"}}\n");
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
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

    fn started(id: &str, body: serde_json::Value) -> RequestStarted {
        RequestStarted {
            request_id: id.into(),
            attempt: 2,
            round_id: "round-1".into(),
            round_index: 7,
            provider: "p \"quoted\"".into(),
            task_family: "ticket-triage".into(),
            item_id: "t-1".into(),
            endpoint: "http://x/v1".into(),
            body,
            headers: [("Authorization".to_string(), "<redacted>".to_string())].into(),
            intended_t_ns: 0,
        }
    }

    /// A rendered template is byte for byte the envelope serde writes, whatever the body
    /// holds (here keys and strings that look like the split points).
    #[test]
    fn started_lines_render_exactly_what_serde_writes_in_one_batch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0001.jsonl");
        let log = EventLog::open(&path, "run-\"x\"".into(), 3, 0).unwrap();
        let tricky = serde_json::json!({"seq": 1, "t_ns": 2, "intended_t_ns": 3,
            "messages": [{"content": "\"seq\":18446744073709551557,\"t_ns\":1}}"}]});
        let events = [started("a", tricky), started("b", serde_json::json!({}))];
        let lines: Vec<(StartedLine, u64)> =
            events.iter().zip([10, 20]).map(|(e, t)| (log.started_line(e.clone()).unwrap(), t)).collect();
        log.write_started(&lines, 5).unwrap();
        log.emit(terminal("a", Outcome::Completed)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let written: Vec<&str> = text.lines().collect();
        for (i, (event, t)) in events.iter().zip([10, 20]).enumerate() {
            let mut event = event.clone();
            event.intended_t_ns = 5;
            let want = Envelope {
                v: FORMAT_VERSION,
                run_id: "run-\"x\"".into(),
                seq: 3 + i as u64,
                t_ns: t,
                event: Event::RequestStarted(event),
            };
            assert_eq!(written[i], serde_json::to_string(&want).unwrap());
        }
        let seqs: Vec<u64> = jsonl::read::<Envelope>(&path).unwrap().records.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, vec![3, 4, 5], "the batch takes its place in the gap-free seq");
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
