//! Writing behind the caller: bytes handed to a [`WriteBehind`] are copied into memory under a
//! short lock and reach the file from a thread of their own, so that whoever hands them (a
//! fetch's sender, between a round's release and its first byte on the wire) never waits for
//! a `write` system call, a disk that stalls, or a flush to stable storage running beside it.
//!
//! The writer thread gathers for about a millisecond before each write (longer, up to
//! [`GATHER_IDLE`], while nothing comes), so a busy log costs one system call per millisecond,
//! not one per line. [`WriteBehind::settle`] waits until everything handed so far is written;
//! dropping the writer writes the rest and joins its thread. What a `SIGKILL` can lose is the
//! last gather's bytes, never a line in part: every write is of whole lines handed together.
//!
//! A write that fails stops the writer: nothing after it is written, and every later hand-over,
//! settle or sync returns that error, so a full disk is reported on the next line as before.
//! Bytes waiting beyond [`BACKLOG`] make the caller wait for the disk: memory stays bounded.
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the writer gathers bytes before a write while lines keep coming.
pub const GATHER: Duration = Duration::from_millis(1);
/// The longest it sleeps while nothing comes (the gather doubles up to it).
pub const GATHER_IDLE: Duration = Duration::from_millis(16);
/// Bytes waiting for the writer beyond which the caller waits for it.
pub const BACKLOG: usize = 64 << 20;

/// A writer whose `write`s are copies into memory; a thread of its own writes them to `W`.
pub struct WriteBehind {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer early: someone settles, waits for room, or closes.
    wake: Condvar,
    /// Wakes those waiting for the writer: a write done or failed.
    done: Condvar,
    backlog: usize,
}

#[derive(Default)]
struct State {
    /// Bytes handed over and not yet taken by the writer.
    waiting: Vec<u8>,
    /// Bytes handed over since the start.
    handed: u64,
    /// Bytes written since the start.
    written: u64,
    /// Callers waiting for the writer (settling or for room): it writes without gathering.
    hurry: usize,
    /// The first write that failed: (its kind, its message).
    failure: Option<(io::ErrorKind, String)>,
    closing: bool,
}

impl State {
    fn failed(&self) -> io::Result<()> {
        match &self.failure {
            Some((kind, message)) => Err(io::Error::new(*kind, message.clone())),
            None => Ok(()),
        }
    }
}

impl WriteBehind {
    /// Starts the thread that writes to `out`.
    pub fn new<W: Write + Send + 'static>(out: W) -> io::Result<WriteBehind> {
        Self::with_backlog(out, BACKLOG)
    }

    fn with_backlog<W: Write + Send + 'static>(mut out: W, backlog: usize) -> io::Result<WriteBehind> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            done: Condvar::new(),
            backlog,
        });
        let writer = Arc::clone(&shared);
        let thread = std::thread::Builder::new().name("log-writer".into()).spawn(move || writer.run(&mut out))?;
        Ok(WriteBehind { shared, thread: Some(thread) })
    }

    /// Hands `bytes` over to be written after everything handed before them; waits only when
    /// more than the backlog is already waiting. Fails once a write has failed.
    pub fn hand(&self, bytes: &[u8]) -> io::Result<()> {
        let mut state = self.shared.lock();
        state.failed()?;
        if state.waiting.len() >= self.shared.backlog {
            state.hurry += 1;
            self.shared.wake.notify_one();
            while state.waiting.len() >= self.shared.backlog && state.failure.is_none() {
                state = self.shared.done.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            state.hurry -= 1;
            state.failed()?;
        }
        state.waiting.extend_from_slice(bytes);
        state.handed += bytes.len() as u64;
        Ok(())
    }

    /// Waits until everything handed so far is written (not synced); fails when a write failed.
    pub fn settle(&self) -> io::Result<()> {
        self.shared.settle()
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state holds bytes and counters only: a panic elsewhere leaves them consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn settle(&self) -> io::Result<()> {
        let mut state = self.lock();
        let target = state.handed;
        state.hurry += 1;
        self.wake.notify_one();
        while state.written < target && state.failure.is_none() {
            state = self.done.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.hurry -= 1;
        state.failed()
    }

    /// The writer thread: gather, take what waits, write it without the lock, repeat.
    fn run(&self, out: &mut dyn Write) {
        let mut batch = Vec::new();
        let mut gather = GATHER;
        loop {
            let mut state = self.lock();
            if !state.closing && state.hurry == 0 {
                state = self.wake.wait_timeout(state, gather).unwrap_or_else(|p| p.into_inner()).0;
            }
            if state.waiting.is_empty() {
                if state.closing {
                    return;
                }
                gather = (gather * 2).min(GATHER_IDLE);
                continue;
            }
            gather = GATHER;
            std::mem::swap(&mut state.waiting, &mut batch);
            let end = state.handed;
            drop(state);
            let result = out.write_all(&batch).and_then(|()| out.flush());
            batch.clear();
            let mut state = self.lock();
            match result {
                Ok(()) => state.written = end,
                Err(e) => state.failure = Some((e.kind(), e.to_string())),
            }
            let failed = state.failure.is_some();
            drop(state);
            self.done.notify_all();
            if failed {
                return;
            }
        }
    }
}

impl Drop for WriteBehind {
    /// Writes what is waiting, then stops the thread.
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A file appended to behind its caller ([`WriteBehind`]), with a second handle to sync it.
pub struct FileBehind {
    behind: WriteBehind,
    handle: SyncHandle,
}

impl FileBehind {
    /// Opens `path` (created if absent) to append to it behind the caller.
    pub fn append(path: &Path) -> io::Result<FileBehind> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        let file = Arc::new(file);
        let behind = WriteBehind::new(AppendTo(Arc::clone(&file)))?;
        let handle = SyncHandle { shared: Arc::clone(&behind.shared), file };
        Ok(FileBehind { behind, handle })
    }

    /// A handle that settles and syncs the file from another thread while this one keeps
    /// handing bytes over; it holds no file descriptor of its own.
    pub fn sync_handle(&self) -> SyncHandle {
        self.handle.clone()
    }

    /// Writes everything handed so far and flushes the file to stable storage (fsync).
    pub fn sync(&self) -> io::Result<()> {
        self.handle.sync()
    }
}

impl Write for FileBehind {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.behind.hand(buf)?;
        Ok(buf.len())
    }

    /// Waits until everything handed so far is written.
    fn flush(&mut self) -> io::Result<()> {
        self.behind.settle()
    }
}

/// Settles a [`FileBehind`] and syncs it, from any thread.
#[derive(Clone)]
pub struct SyncHandle {
    shared: Arc<Shared>,
    file: Arc<File>,
}

impl SyncHandle {
    /// Everything handed over before this call, written and flushed to stable storage.
    pub fn sync(&self) -> io::Result<()> {
        self.shared.settle()?;
        self.file.sync_data()
    }
}

/// The writer thread's end of a shared file.
struct AppendTo(Arc<File>);

impl Write for AppendTo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self.0).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Instant;

    /// A writer that blocks in each write until the test lets it go, and keeps what it got.
    struct Stalled {
        gate: mpsc::Receiver<()>,
        got: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.gate.recv().map_err(|_| io::Error::other("gate closed"))?;
            self.got.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn stalled() -> (mpsc::SyncSender<()>, Arc<Mutex<Vec<u8>>>, Stalled) {
        let (open, gate) = mpsc::sync_channel(0);
        let got = Arc::new(Mutex::new(Vec::new()));
        (open, Arc::clone(&got), Stalled { gate, got })
    }

    #[test]
    fn bytes_arrive_whole_and_in_order_and_dropping_writes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut want = Vec::new();
        {
            let mut file = FileBehind::append(&path).unwrap();
            for i in 0..10_000 {
                let line = format!("{{\"line\":{i}}}\n");
                file.write_all(line.as_bytes()).unwrap();
                want.extend_from_slice(line.as_bytes());
                if i == 5_000 {
                    file.sync().unwrap();
                    assert_eq!(std::fs::read(&path).unwrap(), want, "a sync writes everything handed before it");
                }
            }
        }
        assert_eq!(std::fs::read(&path).unwrap(), want, "dropped, the writer wrote the rest");
    }

    /// The point of it: the caller goes on while the disk does not move.
    #[test]
    fn a_stalled_disk_never_holds_up_the_caller() {
        let (open, got, out) = stalled();
        let behind = WriteBehind::new(out).unwrap();
        behind.hand(b"first\n").unwrap();
        // The writer takes the first line and blocks in its write.
        std::thread::sleep(GATHER * 20);
        let started = Instant::now();
        for _ in 0..1_000 {
            behind.hand(b"more\n").unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(2), "handing over waits for nobody");
        assert!(got.lock().unwrap().is_empty(), "nothing has reached the stalled disk");
        let settled = std::thread::spawn(move || {
            behind.settle().unwrap();
            behind
        });
        while !settled.is_finished() {
            // Each send lets one write through; dropping the sender ends the gate.
            let _ = open.try_send(());
            std::thread::sleep(Duration::from_millis(1));
        }
        let behind = settled.join().unwrap();
        let want: Vec<u8> = [&b"first\n"[..], &b"more\n".repeat(1_000)].concat();
        assert_eq!(*got.lock().unwrap(), want);
        drop(open);
        drop(behind);
    }

    #[test]
    fn a_failed_write_is_reported_on_every_later_call() {
        let Ok(full) = std::fs::OpenOptions::new().append(true).open("/dev/full") else {
            return; // not on this system
        };
        let behind = WriteBehind::new(full).unwrap();
        behind.hand(b"line\n").unwrap();
        let err = behind.settle().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{err}");
        assert_eq!(behind.hand(b"next\n").unwrap_err().kind(), io::ErrorKind::StorageFull);
        assert_eq!(behind.settle().unwrap_err().kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn beyond_the_backlog_the_caller_waits_for_the_disk() {
        let (open, got, out) = stalled();
        let behind = Arc::new(WriteBehind::with_backlog(out, 8).unwrap());
        behind.hand(b"0\n").unwrap();
        // The writer takes the first line and blocks in its write; nine bytes then wait.
        std::thread::sleep(GATHER * 20);
        behind.hand(b"12345678\n").unwrap();
        let handing = {
            let behind = Arc::clone(&behind);
            std::thread::spawn(move || behind.hand(b"9\n"))
        };
        std::thread::sleep(GATHER * 50);
        assert!(!handing.is_finished(), "nine bytes wait: the next hand-over waits for room");
        open.send(()).unwrap();
        open.send(()).unwrap();
        handing.join().unwrap().unwrap();
        let settling = {
            let behind = Arc::clone(&behind);
            std::thread::spawn(move || behind.settle())
        };
        open.send(()).unwrap();
        settling.join().unwrap().unwrap();
        assert_eq!(*got.lock().unwrap(), b"0\n12345678\n9\n");
    }
}
