//! The event log writer: one segment file per fetch process, gap-free `seq` across segments,
//! and the run clock (monotonic within a segment, anchored to the run's first segment).
use anyhow::Result;
use inferbench_schemas::event::{Envelope, Event, Outcome};
use inferbench_schemas::jsonl::AppendWriter;
use inferbench_schemas::FORMAT_VERSION;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub struct EventLog {
    run_id: String,
    opened: Instant,
    /// Run-clock time at which this segment opened.
    base_ns: u64,
    inner: Mutex<Inner>,
    /// Final (non-interrupted) terminal events this segment wrote.
    terminals: AtomicU64,
}

struct Inner {
    writer: AppendWriter,
    next_seq: u64,
}

impl EventLog {
    /// Opens a new segment file; `next_seq` continues the previous segments, `base_ns` is the
    /// run-clock time of this segment's start.
    pub fn open(path: &Path, run_id: String, next_seq: u64, base_ns: u64) -> Result<Self> {
        let writer = AppendWriter::open(path)?;
        let inner = Mutex::new(Inner { writer, next_seq });
        Ok(EventLog { run_id, opened: Instant::now(), base_ns, inner, terminals: AtomicU64::new(0) })
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
        let is_final = matches!(&event, Event::RequestTerminal(t) if t.outcome != Outcome::Interrupted);
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        let envelope = Envelope { v: FORMAT_VERSION, run_id: self.run_id.clone(), seq: inner.next_seq, t_ns, event };
        inner.writer.append(&envelope)?;
        inner.next_seq += 1;
        if is_final {
            self.terminals.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Requests this segment brought to a final outcome so far.
    pub fn terminals(&self) -> u64 {
        self.terminals.load(Ordering::Relaxed)
    }

    /// Forces the segment to stable storage (at round boundaries).
    pub fn sync(&self) -> Result<()> {
        let mut inner = self.inner.lock().map_err(|_| anyhow::anyhow!("event log lock poisoned"))?;
        Ok(inner.writer.sync()?)
    }
}
