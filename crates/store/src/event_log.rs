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
//! `crate::sealed::seal` leaves once the run is complete, as the log's [`Inventory`] lists them.
use crate::inventory::Inventory;
use crate::run::RunDir;
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::shard::{Shard, ShardOpened};
use inferbench_contract::{Error, Result, FORMAT_VERSION};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

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
}

/// One checked line of the log.
#[derive(Debug)]
pub struct Entry {
    pub segment: u32,
    /// 1-based line number within its segment.
    pub line: usize,
    pub env: Envelope,
}

/// What the reader thread sends, in log order (through the parse workers, which keep it).
enum Item {
    /// A segment file was opened.
    Start { number: u32, path: PathBuf, sealed: bool },
    /// The next complete lines of the segment, parsed by a worker.
    Lines(Vec<std::result::Result<Envelope, serde_json::Error>>),
    /// The raw text of [`Item::Lines`] (complete lines, each ending in `\n`), on its way to
    /// a worker.
    Raw(Vec<u8>),
    /// The segment's end: its size, hash and torn tail.
    End { bytes: u64, sha256: String, torn_tail: Option<usize> },
    /// The segment could not be opened or read.
    Failed(Error),
}

/// Bytes of complete lines a worker parses at a time.
const BLOCK_BYTES: usize = 64 << 10;

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
}

/// A segment to read: its number, its file, and what the seal record says of it.
type Listed = (u32, PathBuf, Option<inferbench_contract::seal::SealedSegment>);

/// What reading a sealed log from its table needs.
struct SealedSource {
    path: PathBuf,
    run: RunDir,
    record: inferbench_contract::seal::SealRecord,
    table: inferbench_contract::seal::SealedTable,
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
        }
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
        let read = std::thread::Builder::new().name("log-read".into());
        self.threads.push(read.spawn(move || read_segments(segments, &inputs)).expect("a thread"));
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
                    });
                }
                Item::Lines(parsed) => self.block = parsed.into_iter(),
                Item::End { bytes, sha256, torn_tail } => {
                    let mut read = self.current.take().expect("an end follows a start");
                    (read.bytes, read.sha256, read.torn_tail) = (bytes, sha256, torn_tail);
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

/// The lines of `text` (complete lines, each ending in `\n`), parsed.
///
/// One deserializer reads the block's values one after another (it keeps its buffer for
/// unescaping strings from value to value, where a deserializer per line would grow a new
/// one for every line); a value that does not end exactly at its line's end (an empty line,
/// two values on one line, trailing spaces) or fails to parse sends the rest of the block to
/// the line-by-line reading, which gives every line exactly what parsing it alone gives.
fn parse_lines(text: &[u8]) -> Vec<std::result::Result<Envelope, serde_json::Error>> {
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', text).collect();
    let mut parsed = Vec::with_capacity(ends.len());
    let mut values = serde_json::Deserializer::from_slice(text).into_iter::<Envelope>();
    for &end in &ends {
        match values.next() {
            Some(Ok(env)) if values.byte_offset() == end => parsed.push(Ok(env)),
            _ => break,
        }
    }
    let mut start = parsed.len().checked_sub(1).map_or(0, |last| ends[last] + 1);
    for &end in &ends[parsed.len()..] {
        parsed.push(serde_json::from_slice(&text[start..end]));
        start = end + 1;
    }
    parsed
}

/// The table to read a sealed log from, if the seal recorded one for exactly the segments
/// listed and `events.parquet` is that file.
fn sealed_source(inventory: &Inventory) -> Option<SealedSource> {
    let (run, listed) = (inventory.run(), inventory.listed());
    let record = inventory.record()?;
    let table = record.table.as_ref()?;
    let numbers: Vec<u32> = listed.iter().map(|(n, _)| *n).collect();
    let all_sealed = listed.iter().all(|(_, path)| crate::run::is_sealed_segment(path));
    let recorded: Vec<u32> = record.segments.iter().map(|s| s.segment).collect();
    let counted: Vec<u32> = table.segments.iter().map(|s| s.segment).collect();
    if numbers.is_empty() || !all_sealed || numbers != recorded || numbers != counted {
        return None;
    }
    let path = run.root().join(&table.file);
    let bytes = std::fs::metadata(&path).ok()?.len();
    if bytes != table.bytes || inferbench_contract::canonical::file_sha256(&path).ok()? != table.sha256 {
        return None;
    }
    Some(SealedSource { path, run: run.clone(), record: record.clone(), table: table.clone() })
}

/// The table reader's thread: the lines of every segment, in order, as the JSONL reader
/// sends them (a start, blocks of lines, an end with the segment's recorded size and hash),
/// each segment holding exactly the lines the seal counted in it.
fn read_table(source: SealedSource, out: &std::sync::mpsc::SyncSender<Item>) {
    if let Err(e) = send_table(&source, out) {
        let _ = out.send(Item::Failed(e));
    }
}

/// [`read_table`]'s work; `Ok` also when the [`LogReader`] was dropped.
fn send_table(source: &SealedSource, out: &std::sync::mpsc::SyncSender<Item>) -> Result<()> {
    let SealedSource { path, run, record, table } = source;
    let segments: Vec<(&inferbench_contract::seal::SealedSegment, &inferbench_contract::seal::TableSegment)> =
        record.segments.iter().zip(&table.segments).collect();
    // The segment being read (its index) and its lines so far; the next segment's index.
    let mut current: Option<(usize, u64)> = None;
    let mut next = 0usize;
    let close = |current: Option<(usize, u64)>| -> Result<Option<Item>> {
        let Some((at, lines)) = current else { return Ok(None) };
        let (sealed, counted) = segments[at];
        if lines != counted.lines {
            return Err(Error::bad(format!(
                "{}: holds {lines} lines of segment {}, where {} records {}; the table is not the sealed log's",
                path.display(),
                sealed.segment,
                run.seal_record().display(),
                counted.lines
            )));
        }
        Ok(Some(Item::End {
            bytes: sealed.original_bytes,
            sha256: sealed.original_sha256.clone(),
            torn_tail: counted.torn_tail_bytes.map(|n| n as usize),
        }))
    };
    // Starts segment `number` (closing the current one and any in between, which hold no
    // lines); false when the reader is gone.
    let start = |current: &mut Option<(usize, u64)>, next: &mut usize, number: Option<u32>| -> Result<bool> {
        loop {
            if let Some(end) = close(current.take())? {
                if out.send(end).is_err() {
                    return Ok(false);
                }
            }
            let Some(&(sealed, _)) = segments.get(*next) else {
                return match number {
                    None => Ok(true),
                    Some(n) => Err(Error::bad(format!(
                        "{}: a line of segment {n}, which {} does not list after segment {}",
                        path.display(),
                        run.seal_record().display(),
                        segments.last().map_or(0, |(s, _)| s.segment)
                    ))),
                };
            };
            // The compressed file is still the one sealed: the table stands for the log only
            // while the log is intact, and a modified log is refused as the JSONL reader
            // refuses it.
            let path = run.sealed_segment(sealed.segment);
            crate::inventory::check_compressed(&path, sealed)?;
            if out.send(Item::Start { number: sealed.segment, path, sealed: true }).is_err() {
                return Ok(false);
            }
            *current = Some((*next, 0));
            *next += 1;
            if number == Some(sealed.segment) {
                return Ok(true);
            }
        }
    };
    for batch in crate::table_lines::LogLines::open(path, &record.run_id)? {
        let mut block = Vec::new();
        for (segment, line) in batch? {
            let number = current.map(|(at, _)| segments[at].0.segment);
            if number != Some(segment) {
                if !block.is_empty() && out.send(Item::Lines(std::mem::take(&mut block))).is_err() {
                    return Ok(());
                }
                if !start(&mut current, &mut next, Some(segment))? {
                    return Ok(());
                }
            }
            if let Some((_, lines)) = current.as_mut() {
                *lines += 1;
            }
            block.push(line);
        }
        if !block.is_empty() && out.send(Item::Lines(block)).is_err() {
            return Ok(());
        }
    }
    // The last segment's end, and those of any segments after it that hold no lines.
    start(&mut current, &mut next, None)?;
    Ok(())
}

/// How a segment's hash (that of its JSONL, which provenance records) is established.
enum Hash {
    /// Over the bytes read: a live segment, or a sealed one that seal.json does not list.
    Text(Sha256),
    /// A sealed segment: over its compressed file, which must be the one it was sealed into,
    /// whose JSONL is then the one seal.json names (the seal compared the two byte for byte).
    Sealed { compressed: std::sync::Arc<std::sync::Mutex<Sha256>>, entry: inferbench_contract::seal::SealedSegment },
}

/// The reader thread: every segment in order, read, hashed and cut into blocks of complete
/// lines, each handed to the next worker in turn. Stops when a worker is gone (the
/// [`LogReader`] was dropped).
fn read_segments(segments: std::collections::VecDeque<Listed>, workers: &[std::sync::mpsc::SyncSender<Item>]) {
    let mut turn = 0;
    let mut send = |item: Item| -> bool {
        let sent = workers[turn].send(item).is_ok();
        turn = (turn + 1) % workers.len();
        sent
    };
    for (number, path, entry) in segments {
        let sealed = crate::run::is_sealed_segment(&path);
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) => {
                send(Item::Failed(Error::unreadable(&path, e)));
                return;
            }
        };
        let (source, hash): (Box<dyn std::io::Read>, Hash) = if sealed {
            let (file, hash): (Box<dyn std::io::Read>, Hash) = match entry {
                Some(entry) => {
                    let compressed = std::sync::Arc::new(std::sync::Mutex::new(Sha256::new()));
                    let hasher = std::sync::Arc::clone(&compressed);
                    (Box::new(SharedHashing { inner: file, hasher }), Hash::Sealed { compressed, entry })
                }
                None => (Box::new(file), Hash::Text(Sha256::new())),
            };
            match zstd::stream::read::Decoder::new(file) {
                Ok(decoder) => (Box::new(decoder), hash),
                Err(e) => {
                    send(Item::Failed(Error::unreadable(&path, e)));
                    return;
                }
            }
        } else {
            (Box::new(file), Hash::Text(Sha256::new()))
        };
        if !send(Item::Start { number, path: path.clone(), sealed }) {
            return;
        }
        match read_segment(source, hash, &path, &mut send) {
            Ok(Some(end)) => {
                if !send(end) {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                send(Item::Failed(e));
                return;
            }
        }
    }
}

/// A reader that hashes the bytes passing through it into a hasher the reader thread reads
/// back once the decoder over it is done.
struct SharedHashing<R> {
    inner: R,
    hasher: std::sync::Arc<std::sync::Mutex<Sha256>>,
}

impl<R: std::io::Read> std::io::Read for SharedHashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.lock().expect("one reader").update(&buf[..n]);
        Ok(n)
    }
}

/// One segment's blocks; its [`Item::End`], or `None` when a worker is gone.
fn read_segment(
    mut source: Box<dyn std::io::Read>,
    mut hash: Hash,
    path: &Path,
    send: &mut impl FnMut(Item) -> bool,
) -> Result<Option<Item>> {
    let mut bytes = 0u64;
    // Complete lines from the start of `buf`, then the start of a line still being read.
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK_BYTES * 2);
    loop {
        let filled = buf.len();
        buf.resize(filled + BLOCK_BYTES, 0);
        let n = loop {
            match source.read(&mut buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(Error::bad(format!("{}: cannot read (corrupt or truncated?): {e}", path.display())))
                }
            }
        };
        buf.truncate(filled + n);
        if let Hash::Text(hasher) = &mut hash {
            hasher.update(&buf[filled..]);
        }
        bytes += n as u64;
        let end = n == 0;
        if !end && buf.len() < BLOCK_BYTES {
            continue;
        }
        if let Some(last) = memchr::memrchr(b'\n', &buf) {
            let text = buf[..=last].to_vec();
            buf.drain(..=last);
            if !send(Item::Raw(text)) {
                return Ok(None);
            }
        }
        if end {
            // The end of the segment, after a torn last line if the buffer holds one.
            let torn_tail = (!buf.is_empty()).then_some(buf.len());
            let sha256 = match hash {
                Hash::Text(hasher) => inferbench_contract::canonical::hex(&hasher.finalize()),
                Hash::Sealed { compressed, entry } => {
                    drop(source);
                    let now =
                        inferbench_contract::canonical::hex(&compressed.lock().expect("one reader").clone().finalize());
                    if now != entry.compressed_sha256 || bytes != entry.original_bytes {
                        return Err(entry.modified(path, &now));
                    }
                    entry.original_sha256
                }
            };
            return Ok(Some(Item::End { bytes, sha256, torn_tail }));
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
                self.stop();
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
///
/// A sharded log (`ib-fetch --shard i/N`) is N logs in one directory, each checked as an
/// unsharded log is: shard `i` writes segments `i + 1`, `i + 1 + N`, … (no gap among them),
/// numbers its own lines from 0 without a gap or a repeat, and opens each segment with its own
/// `segment_opened`, which names the shard. Every shard must name the same N, share unit and
/// run-clock origin, and a log is either sharded or not, never both. Whether a shard is
/// missing altogether is for the reader to ask ([`Checker::missing_shards`]): while a run is
/// fetched, a shard may not have begun.
#[derive(Debug, Clone)]
pub struct Checker {
    run_id: String,
    /// Lines checked, in every shard.
    lines: u64,
    /// An unsharded log's next `seq`.
    next_seq: u64,
    /// The next segment of an unsharded log (or of one whose sharding is not known yet).
    next_segment: u32,
    sharding: Sharding,
    /// Segments taken before any `segment_opened` said whether the log is sharded, checked once
    /// one does (a sharded log's first segment here need not be segment 1).
    deferred: Vec<(u32, PathBuf)>,
}

/// What the log's `segment_opened` lines have said of its shards so far.
#[derive(Debug, Clone)]
enum Sharding {
    /// No `segment_opened` read yet.
    Unknown,
    Unsharded,
    Sharded {
        first: ShardOpened,
        shards: std::collections::BTreeMap<u32, ShardRead>,
    },
}

/// One shard of a sharded log, as checked so far.
#[derive(Debug, Clone, Default)]
struct ShardRead {
    next_seq: u64,
    last_segment: Option<u32>,
}

impl Checker {
    /// A checker for the log of the run whose lock names it `run_id`.
    pub fn new(run_id: &str) -> Checker {
        Checker {
            run_id: run_id.to_string(),
            lines: 0,
            next_seq: 0,
            next_segment: 1,
            sharding: Sharding::Unknown,
            deferred: Vec::new(),
        }
    }

    /// Lines checked so far: in an unsharded log, the `seq` the next line must carry.
    pub fn next_seq(&self) -> u64 {
        self.lines
    }

    /// The log's shard count, once a `segment_opened` named one; `None` while unsharded.
    pub fn shard_count(&self) -> Option<u32> {
        match &self.sharding {
            Sharding::Sharded { first, .. } => Some(first.count),
            _ => None,
        }
    }

    /// The shards of a sharded log with no segment read: a shard that never ran, or whose files
    /// were not brought into this run's `events/`.
    pub fn missing_shards(&self) -> Vec<Shard> {
        match &self.sharding {
            Sharding::Sharded { first, shards } => (0..first.count)
                .filter(|i| shards.get(i).is_none_or(|s| s.last_segment.is_none()))
                .map(|index| Shard { index, count: first.count })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// [`Checker::missing_shards`] as an error naming them, for a reader that needs the whole log.
    pub fn require_every_shard(&self, events: &Path) -> Result<()> {
        let missing = self.missing_shards();
        if missing.is_empty() {
            return Ok(());
        }
        let names: Vec<String> =
            missing.iter().map(|s| format!("shard {s} (segments {}, {}, …)", s.segment(1), s.segment(2))).collect();
        Err(Error::bad(format!(
            "{}: the log has no segment of {}: a shard that has not run, or whose events/ files were not copied here",
            events.display(),
            names.join(", ")
        )))
    }

    /// Segment file `number` (at `path`) follows the segments checked so far.
    pub fn segment(&mut self, number: u32, path: &Path) -> Result<()> {
        if let Sharding::Unknown = self.sharding {
            self.deferred.push((number, path.to_path_buf()));
            return Ok(());
        }
        self.take_segment(number, path)
    }

    fn take_segment(&mut self, number: u32, path: &Path) -> Result<()> {
        if let Sharding::Sharded { first, shards } = &mut self.sharding {
            let shard = Shard::of_segment(number, first.count);
            let read = shards.entry(shard.index).or_default();
            let expected = shard.next_segment(read.last_segment);
            if number != expected {
                return Err(Error::bad(match read.last_segment {
                    Some(last) => format!(
                        "{}: segment {number} of shard {shard} follows its segment {last}; segment {expected} is missing",
                        path.display()
                    ),
                    None => format!(
                        "{}: segment {number} is shard {shard}'s first; its segment {expected} is missing",
                        path.display()
                    ),
                }));
            }
            read.last_segment = Some(number);
            return Ok(());
        }
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
        if let (Event::SegmentOpened(s), 1) = (&env.event, line) {
            if s.segment == number {
                self.sharding(path, number, line, s.shard.as_ref())?;
            }
        }
        let next_seq = match &mut self.sharding {
            Sharding::Sharded { first, shards } => {
                &mut shards.entry(Shard::of_segment(number, first.count).index).or_default().next_seq
            }
            _ => &mut self.next_seq,
        };
        if env.seq != *next_seq {
            let what = if env.seq < *next_seq { "a repeated or duplicated line" } else { "lines are missing" };
            return Err(Error::bad(format!("{}: seq: {} where {} was expected ({what})", at(), env.seq, *next_seq)));
        }
        match (&env.event, line) {
            (Event::SegmentOpened(s), 1) if s.segment == number => {}
            (_, 1) => return Err(Error::bad(format!("{}: a segment must open with its own segment_opened", at()))),
            (Event::SegmentOpened(_), _) => {
                return Err(Error::bad(format!("{}: segment_opened in the middle of a segment", at())))
            }
            _ => {}
        }
        *next_seq += 1;
        self.lines += 1;
        Ok(())
    }

    /// Takes what segment `number`'s `segment_opened` says of its shard: the log's sharding,
    /// once known, must stay the same, and the segment must be its shard's by its number.
    fn sharding(&mut self, path: &Path, number: u32, line: usize, shard: Option<&ShardOpened>) -> Result<()> {
        let at = || format!("{}:{line}", path.display());
        let mixed = || {
            Error::bad(format!(
                "{}: shard: a log is fetched either whole or by shards (ib-fetch --shard), never both; this segment \
                 is {}, the ones before it are not",
                at(),
                if shard.is_some() { "a shard's" } else { "unsharded" }
            ))
        };
        match (&mut self.sharding, shard) {
            (Sharding::Unknown, None) => self.sharding = Sharding::Unsharded,
            (Sharding::Unknown, Some(opened)) => {
                self.sharding = Sharding::Sharded { first: opened.clone(), shards: Default::default() }
            }
            (Sharding::Unsharded, None) => {}
            (Sharding::Unsharded, Some(_)) | (Sharding::Sharded { .. }, None) => return Err(mixed()),
            (Sharding::Sharded { first, .. }, Some(opened)) => {
                if (opened.count, opened.unit, opened.origin_unix_ns) != (first.count, first.unit, first.origin_unix_ns)
                {
                    return Err(Error::bad(format!(
                        "{}: shard: shard {} was started as one of {} shards by {:?} from origin {} ns, the log's first \
                         shard as one of {} by {:?} from {} ns; every shard of a run is given the same --shard N and \
                         --start-at",
                        at(),
                        opened.shard(),
                        opened.count,
                        opened.unit,
                        opened.origin_unix_ns,
                        first.count,
                        first.unit,
                        first.origin_unix_ns
                    )));
                }
            }
        }
        for (number, path) in std::mem::take(&mut self.deferred) {
            self.take_segment(number, &path)?;
        }
        if let (Sharding::Sharded { first, .. }, Some(opened)) = (&self.sharding, shard) {
            let by_number = Shard::of_segment(number, first.count);
            if by_number != opened.shard() {
                return Err(Error::bad(format!(
                    "{}: shard: segment {number} is shard {by_number}'s by its number, but it names shard {}",
                    at(),
                    opened.shard()
                )));
            }
        }
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
    use crate::jsonl::AppendWriter;
    use inferbench_contract::testutil::{envelope, opened, round_closed};
    use std::io::Write;

    fn closed() -> Event {
        Event::RoundClosed(round_closed(0))
    }

    fn write(run: &RunDir, segment: u32, lines: &[(&str, u64, Event)]) {
        std::fs::create_dir_all(run.events_dir()).unwrap();
        let mut w = AppendWriter::open(&run.segment(segment)).unwrap();
        for (run_id, seq, event) in lines {
            w.append(&Envelope { run_id: run_id.to_string(), t_ns: *seq, ..envelope(*seq, event.clone()) }).unwrap();
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
    fn a_log_of_many_blocks_reads_in_order_with_its_size_hash_and_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let n = 40 * BLOCK_BYTES / 100;
        let lines: Vec<(&str, u64, Event)> =
            std::iter::once(("run-a", 0, opened(1))).chain((1..n as u64).map(|seq| ("run-a", seq, closed()))).collect();
        write(&run, 1, &lines);
        std::fs::OpenOptions::new().append(true).open(run.segment(1)).unwrap().write_all(b"{\"v\":1,\"ru").unwrap();
        let text = std::fs::read(run.segment(1)).unwrap();
        assert!(text.len() > 20 * BLOCK_BYTES, "{} bytes: many blocks", text.len());
        let mut reader = LogReader::open(&run, "run-a").unwrap();
        let entries: Vec<Entry> = reader.by_ref().map(Result::unwrap).collect();
        assert_eq!(entries.len(), n);
        assert!(entries.iter().enumerate().all(|(i, e)| e.line == i + 1 && e.env.seq == i as u64));
        let read = &reader.segments()[0];
        assert_eq!((read.bytes, read.lines, read.torn_tail), (text.len() as u64, n, Some(10)));
        assert_eq!(read.sha256, inferbench_contract::canonical::sha256_hex(&text));
    }

    #[test]
    fn a_block_parses_each_line_exactly_as_alone_whatever_breaks_it() {
        let good = r#"{"v":1,"run_id":"a","seq":0,"t_ns":0,"type":"round_closed","data":{"round_id":"r","round_index":0,"launch_skew_ns":0,"resumed_partial_round":false}}"#;
        let texts = [
            format!("{good}\n{good}\n"),
            format!("{good}\n\n{good}\n"),
            format!("{good}\n{good}{good}\n{good}\n"),
            format!("{good}  \n{good}\n"),
            format!("{good}\n{{\"v\":\n{good}\n"),
            format!("  {good}\n{good}\n"),
        ];
        for text in texts {
            let alone: Vec<String> = text
                .split_terminator('\n')
                .map(|line| format!("{:?}", serde_json::from_str::<Envelope>(line).map_err(|e| e.to_string())))
                .collect();
            let block: Vec<String> = parse_lines(text.as_bytes())
                .into_iter()
                .map(|r| format!("{:?}", r.map_err(|e| e.to_string())))
                .collect();
            assert_eq!(block, alone, "{text:?}");
        }
    }

    #[test]
    fn a_sharded_log_reads_as_one_each_shard_checked_as_a_log_of_its_own() {
        use inferbench_contract::testutil::shard_opened;
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        // Shard 0 wrote segments 1 and 3 (it was resumed), shard 1 segment 2; each counts its
        // own lines from 0.
        write(&run, 1, &[("run-a", 0, shard_opened(1, 0, 2)), ("run-a", 1, closed())]);
        write(&run, 2, &[("run-a", 0, shard_opened(2, 1, 2)), ("run-a", 1, closed()), ("run-a", 2, closed())]);
        write(&run, 3, &[("run-a", 2, shard_opened(3, 0, 2))]);
        let mut reader = LogReader::open(&run, "run-a").unwrap();
        let lines: Vec<(u32, u64)> = reader.by_ref().map(|e| e.map(|e| (e.segment, e.env.seq)).unwrap()).collect();
        assert_eq!(lines, [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (3, 2)], "segment by segment, in number order");
        assert_eq!(reader.checker().shard_count(), Some(2));
        assert!(reader.checker().missing_shards().is_empty());
        assert_eq!(reader.checker().next_seq(), 6, "lines checked in every shard");

        // A gap in one shard's lines, or in its segments, is that shard's.
        write(&run, 3, &[("run-a", 4, closed())]);
        let err = read_err(&run);
        assert!(err.ends_with("0003.jsonl:2: seq: 4 where 3 was expected (lines are missing)"), "{err}");
        std::fs::remove_file(run.segment(3)).unwrap();
        write(&run, 5, &[("run-a", 2, shard_opened(5, 0, 2))]);
        let err = read_err(&run);
        assert!(err.contains("segment 5 of shard 0/2 follows its segment 1; segment 3 is missing"), "{err}");
        std::fs::remove_file(run.segment(5)).unwrap();

        // A segment that names another shard than its number's, another N, or no shard.
        write(&run, 3, &[("run-a", 3, shard_opened(3, 1, 2))]);
        assert!(read_err(&run).contains("segment 3 is shard 0/2's by its number, but it names shard 1/2"));
        std::fs::remove_file(run.segment(3)).unwrap();
        write(&run, 3, &[("run-a", 2, shard_opened(3, 0, 3))]);
        assert!(read_err(&run).contains("every shard of a run is given the same --shard N and --start-at"));
        std::fs::remove_file(run.segment(3)).unwrap();
        write(&run, 3, &[("run-a", 2, opened(3))]);
        assert!(read_err(&run).contains("a log is fetched either whole or by shards"));
        std::fs::remove_file(run.segment(3)).unwrap();

        // A shard none of whose segments is here is named by whoever needs the whole log.
        std::fs::remove_file(run.segment(2)).unwrap();
        let mut reader = LogReader::open(&run, "run-a").unwrap();
        assert_eq!(reader.by_ref().count(), 2);
        assert_eq!(reader.checker().missing_shards(), [Shard { index: 1, count: 2 }]);
        let err = reader.checker().require_every_shard(&run.events_dir()).unwrap_err().to_string();
        assert!(err.contains("no segment of shard 1/2 (segments 2, 4, …)"), "{err}");
    }

    #[test]
    fn an_unsharded_segment_after_shards_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        write(&run, 1, &[("run-a", 0, opened(1))]);
        write(&run, 2, &[("run-a", 0, inferbench_contract::testutil::shard_opened(2, 1, 2))]);
        assert!(read_err(&run).contains("0002.jsonl:1: shard: a log is fetched either whole or by shards"));
    }

    #[test]
    fn a_missing_segment_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        write(&run, 2, &[("run-a", 0, opened(2))]);
        assert!(read_err(&run).contains("segment 2 follows segment 0; a segment file is missing"));
    }
}
