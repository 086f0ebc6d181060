//! The log of a run streamed across all its segments, in order, every line checked.
use super::checker::Checker;
use super::source::{parse_lines, read_segments, read_table, sealed_source, Item, Listed, SealedSource};
use crate::inventory::Inventory;
use crate::run::RunDir;
use inferbench_contract::event::Envelope;
use inferbench_contract::{Error, Result};
use std::path::PathBuf;

/// One segment as a [`LogReader`] read it (complete once the reader moved past it).
#[derive(Debug, Clone, PartialEq)]
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
    /// The live segment compressed as it was read, when the reader was asked to
    /// ([`LogReader::compressing`]), under its temporary name.
    pub compressed: Option<crate::compress::CompressedSegment>,
}

/// One checked line of the log.
#[derive(Debug)]
pub struct Entry {
    pub segment: u32,
    /// 1-based line number within its segment.
    pub line: usize,
    pub env: Envelope,
}

/// The log of a run, streamed across all its segments, every line checked by the same
/// [`Checker`] rules (and messages) as every other reader. After the last line,
/// [`LogReader::segments`] lists every segment with its size and hash.
///
/// Reading, decompressing and hashing run on a thread of their own, and the lines are
/// parsed by workers a block at a time; block `i` goes to worker `i mod n` and is taken
/// back in the same turn, so the lines come out in log order and at most a few blocks per
/// worker are in memory, whatever the log's size. The checks run here, in order, so a
/// damaged log is refused at the same line with the same message as a line-by-line read.
pub struct LogReader {
    /// The segments still to read: each one's number, its file, and what `events/seal.json`
    /// records of it (read when the log is opened).
    pending: std::collections::VecDeque<Listed>,
    listed: usize,
    outputs: Vec<std::sync::mpsc::Receiver<Item>>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// The turn: which worker's output holds the next item.
    turn: usize,
    /// Lines of the current block not yet handed out.
    block: std::vec::IntoIter<std::result::Result<Envelope, serde_json::Error>>,
    /// The segment being read; its `lines` count those handed out.
    current: Option<SegmentRead>,
    checker: Checker,
    done: Vec<SegmentRead>,
    failed: bool,
    /// A sealed log whose seal recorded `events.parquet`, and that table is the one it
    /// recorded: its rows are read instead of the JSONL.
    table: Option<SealedSource>,
    reads_table: bool,
    /// The run whose live segments are compressed as they are read (the seal's one read).
    compress_into: Option<RunDir>,
}

impl LogReader {
    /// Opens the log of `run`, whose lock names it `run_id`. No segment at all is an empty log.
    ///
    /// A sealed log is read from `events.parquet` when its seal recorded that table and the
    /// file is the one recorded (its SHA-256): the same lines, checked by the same rules,
    /// without parsing the JSONL again (the seal wrote the table from exactly those lines).
    /// Any other log, or a table that is missing or not the recorded one, is read from its
    /// JSONL, which stays the source of truth.
    pub fn open(run: &RunDir, run_id: &str) -> Result<LogReader> {
        let inventory = Inventory::take(run)?;
        let mut reader = Self::jsonl(&inventory, run_id);
        reader.table = sealed_source(&inventory);
        reader.reads_table = reader.table.is_some();
        Ok(reader)
    }

    /// Opens the log of `run` to read from its JSONL segments (live or sealed) whatever else
    /// the run holds.
    pub fn open_jsonl(run: &RunDir, run_id: &str) -> Result<LogReader> {
        Ok(Self::jsonl(&Inventory::take(run)?, run_id))
    }

    /// Reads the JSONL segments `inventory` lists, whose run's lock names it `run_id`.
    pub fn jsonl(inventory: &Inventory, run_id: &str) -> LogReader {
        LogReader {
            table: None,
            reads_table: false,
            listed: inventory.listed().len(),
            pending: inventory
                .listed()
                .iter()
                .map(|(number, path)| (*number, path.clone(), inventory.sealed(*number).cloned()))
                .collect(),
            outputs: Vec::new(),
            threads: Vec::new(),
            turn: 0,
            block: Vec::new().into_iter(),
            current: None,
            checker: Checker::new(run_id),
            done: Vec::new(),
            failed: false,
            compress_into: None,
        }
    }

    /// Also compresses each live segment as it is read, for the seal to publish: every
    /// [`SegmentRead`] of a live segment then holds its checked frame (see `crate::compress`),
    /// left under a temporary name the caller renames or removes.
    pub fn compressing(mut self, run: &RunDir) -> LogReader {
        self.compress_into = Some(run.clone());
        self
    }

    /// The segments read to their end so far (all of them once the iterator is exhausted).
    pub fn segments(&self) -> &[SegmentRead] {
        &self.done
    }

    /// The checks made so far; after the last line, the log's sharding and any shard missing.
    pub fn checker(&self) -> &Checker {
        &self.checker
    }

    /// The segment being read, if any.
    pub fn current(&self) -> Option<&SegmentRead> {
        self.current.as_ref()
    }

    /// Segment files listed (read or not).
    pub fn segment_count(&self) -> usize {
        self.listed
    }

    /// Whether the lines come from the sealed `events.parquet` (see [`LogReader::open`]).
    pub fn reads_table(&self) -> bool {
        self.reads_table
    }

    /// Starts the reader thread and the parse workers (or the thread that reads the table).
    fn spawn(&mut self) {
        if let Some(source) = self.table.take() {
            self.pending.clear();
            let (to_reader, from_table) = std::sync::mpsc::sync_channel::<Item>(2);
            self.outputs.push(from_table);
            let read = std::thread::Builder::new().name("log-table".into());
            self.threads.push(read.spawn(move || read_table(source, &to_reader)).expect("a thread"));
            return;
        }
        let workers = crate::worker_threads();
        let mut inputs = Vec::new();
        for _ in 0..workers {
            let (to_worker, worker_in) = std::sync::mpsc::sync_channel::<Item>(2);
            let (worker_out, from_worker) = std::sync::mpsc::sync_channel::<Item>(2);
            inputs.push(to_worker);
            self.outputs.push(from_worker);
            let parse = std::thread::Builder::new().name("log-parse".into());
            self.threads.push(
                parse
                    .spawn(move || {
                        for item in worker_in {
                            let item = match item {
                                Item::Raw(text) => Item::Lines(parse_lines(&text)),
                                other => other,
                            };
                            if worker_out.send(item).is_err() {
                                return;
                            }
                        }
                    })
                    .expect("a thread"),
            );
        }
        let segments = std::mem::take(&mut self.pending);
        let compress_into = self.compress_into.clone();
        let read = std::thread::Builder::new().name("log-read".into());
        self.threads.push(read.spawn(move || read_segments(segments, &inputs, compress_into)).expect("a thread"));
    }

    fn step(&mut self) -> Result<Option<Entry>> {
        loop {
            if let Some(parsed) = self.block.next() {
                let current = self.current.as_mut().expect("lines belong to an open segment");
                let line = current.lines + 1;
                current.lines = line;
                let env = parsed.map_err(|e| Error::bad(format!("{}:{line}: {e}", current.path.display())))?;
                self.checker.line(&current.path, current.number, line, &env)?;
                return Ok(Some(Entry { segment: current.number, line, env }));
            }
            if self.outputs.is_empty() {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                self.spawn();
            }
            let Ok(item) = self.outputs[self.turn].recv() else {
                // Every item was taken: the reader and the workers are done.
                return Ok(None);
            };
            self.turn = (self.turn + 1) % self.outputs.len();
            match item {
                Item::Start { number, path, sealed } => {
                    self.checker.segment(number, &path)?;
                    self.current = Some(SegmentRead {
                        number,
                        path,
                        sealed,
                        bytes: 0,
                        sha256: String::new(),
                        lines: 0,
                        torn_tail: None,
                        compressed: None,
                    });
                }
                Item::Lines(parsed) => self.block = parsed.into_iter(),
                Item::End { bytes, sha256, torn_tail, compressed } => {
                    let mut read = self.current.take().expect("an end follows a start");
                    (read.bytes, read.sha256, read.torn_tail, read.compressed) = (bytes, sha256, torn_tail, compressed);
                    self.done.push(read);
                }
                Item::Failed(e) => return Err(e),
                Item::Raw(_) => unreachable!("workers parse every block"),
            }
        }
    }

    /// Stops the threads (a reader dropped before the end, or after an error).
    fn stop(&mut self) {
        self.outputs.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

impl Drop for LogReader {
    fn drop(&mut self) {
        self.stop();
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
                self.stop();
                Some(Err(e))
            }
        }
    }
}
