//! Where a `LogReader`'s lines come from: the reader thread that reads each segment
//! file in turn (decompressing a sealed one), hashes it and cuts it into blocks of complete
//! lines for the parse workers; or, for a sealed log whose seal recorded `events.parquet`, the
//! thread that reads that table's rows as the same lines.
use crate::compress::{CompressedSegment, SegmentCompressor};
use crate::inventory::Inventory;
use crate::run::RunDir;
use inferbench_contract::event::Envelope;
use inferbench_contract::{Error, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What the reader thread sends, in log order (through the parse workers, which keep it).
pub(super) enum Item {
    /// A segment file was opened.
    Start { number: u32, path: PathBuf, sealed: bool },
    /// The next complete lines of the segment, parsed by a worker.
    Lines(Vec<std::result::Result<Envelope, serde_json::Error>>),
    /// The raw text of [`Item::Lines`] (complete lines, each ending in `\n`), on its way to
    /// a worker.
    Raw(Vec<u8>),
    /// The segment's end: its size, hash and torn tail, and its compressed frame when the
    /// reader was asked to compress the live segments it reads.
    End { bytes: u64, sha256: String, torn_tail: Option<usize>, compressed: Option<CompressedSegment> },
    /// The segment could not be opened or read.
    Failed(Error),
}

/// Bytes of complete lines a worker parses at a time.
pub(super) const BLOCK_BYTES: usize = 64 << 10;

/// A segment to read: its number, its file, and what the seal record says of it.
pub(super) type Listed = (u32, PathBuf, Option<inferbench_contract::seal::SealedSegment>);

/// What reading a sealed log from its table needs.
pub(super) struct SealedSource {
    path: PathBuf,
    run: RunDir,
    record: inferbench_contract::seal::SealRecord,
    table: inferbench_contract::seal::SealedTable,
}

/// The lines of `text` (complete lines, each ending in `\n`), parsed.
///
/// One deserializer reads the block's values one after another (it keeps its buffer for
/// unescaping strings from value to value, where a deserializer per line would grow a new
/// one for every line); a value that does not end exactly at its line's end (an empty line,
/// two values on one line, trailing spaces) or fails to parse sends the rest of the block to
/// the line-by-line reading, which gives every line exactly what parsing it alone gives.
pub(super) fn parse_lines(text: &[u8]) -> Vec<std::result::Result<Envelope, serde_json::Error>> {
    let ends: Vec<usize> = memchr::memchr_iter(b'\n', text).collect();
    let mut parsed = Vec::with_capacity(ends.len());
    // A block that is UTF-8 throughout (every block the log's writer wrote) is checked once
    // here, so the parser need not check each string again; one that is not is read as bytes,
    // and each line then fails or parses exactly as it does alone.
    match std::str::from_utf8(text) {
        Ok(text) => parse_values(serde_json::Deserializer::from_str(text), &ends, &mut parsed),
        Err(_) => parse_values(serde_json::Deserializer::from_slice(text), &ends, &mut parsed),
    }
    let mut start = parsed.len().checked_sub(1).map_or(0, |last| ends[last] + 1);
    for &end in &ends[parsed.len()..] {
        parsed.push(serde_json::from_slice(&text[start..end]));
        start = end + 1;
    }
    parsed
}

/// The values of a block, one after another, while each ends exactly at its line's end.
fn parse_values<'de, R: serde_json::de::Read<'de>>(
    de: serde_json::Deserializer<R>,
    ends: &[usize],
    parsed: &mut Vec<std::result::Result<Envelope, serde_json::Error>>,
) {
    let mut values = de.into_iter::<Envelope>();
    for &end in ends {
        match values.next() {
            Some(Ok(env)) if values.byte_offset() == end => parsed.push(Ok(env)),
            _ => break,
        }
    }
}

/// The table to read a sealed log from, if the seal recorded one for exactly the segments
/// listed and `events.parquet` is that file.
pub(super) fn sealed_source(inventory: &Inventory) -> Option<SealedSource> {
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
pub(super) fn read_table(source: SealedSource, out: &std::sync::mpsc::SyncSender<Item>) {
    if let Err(e) = send_table(&source, out) {
        let _ = out.send(Item::Failed(e));
    }
}

/// [`read_table`]'s work; `Ok` also when the `LogReader` was dropped.
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
            compressed: None,
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
/// lines, each handed to the next worker in turn; with `compress_into`, each live segment is
/// also compressed as it is read, beside its sealed name in that run (see `crate::compress`).
/// Stops when a worker is gone (the `LogReader` was dropped).
pub(super) fn read_segments(
    segments: std::collections::VecDeque<Listed>,
    workers: &[std::sync::mpsc::SyncSender<Item>],
    compress_into: Option<RunDir>,
) {
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
        let compressor = match (&compress_into, sealed) {
            (Some(run), false) => {
                let started = std::fs::metadata(&path)
                    .map_err(|e| Error::unreadable(&path, e))
                    .and_then(|m| SegmentCompressor::start(run, number, m.len()));
                match started {
                    Ok(compressor) => Some(compressor),
                    Err(e) => {
                        send(Item::Failed(e));
                        return;
                    }
                }
            }
            _ => None,
        };
        if !send(Item::Start { number, path: path.clone(), sealed }) {
            return;
        }
        match read_segment(source, hash, compressor, &path, &mut send) {
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

/// One segment's blocks (each also given to `compressor`, if any); its [`Item::End`], or
/// `None` when a worker is gone.
fn read_segment(
    mut source: Box<dyn std::io::Read>,
    mut hash: Hash,
    mut compressor: Option<SegmentCompressor>,
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
        if let Some(compressor) = compressor.as_mut() {
            compressor.write(&buf[filled..])?;
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
            let compressed = compressor.map(|c| c.finish(bytes)).transpose()?;
            return Ok(Some(Item::End { bytes, sha256, torn_tail, compressed }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A block that is not UTF-8 throughout: a line with a byte that cannot be.
        let mut not_utf8 = format!("{good}\n").into_bytes();
        not_utf8.extend(
            good.replacen("\"r\"", "\"r\u{0}\"", 1).into_bytes().iter().map(|&b| if b == 0 { 0xff } else { b }),
        );
        not_utf8.extend(format!("\n{good}\n").into_bytes());
        let texts = texts.into_iter().map(String::into_bytes).chain([not_utf8]);
        for text in texts {
            let alone: Vec<String> = text
                .split(|&b| b == b'\n')
                .take(text.iter().filter(|&&b| b == b'\n').count())
                .map(|line| format!("{:?}", serde_json::from_slice::<Envelope>(line).map_err(|e| e.to_string())))
                .collect();
            let block: Vec<String> =
                parse_lines(&text).into_iter().map(|r| format!("{:?}", r.map_err(|e| e.to_string()))).collect();
            assert_eq!(block, alone, "{:?}", String::from_utf8_lossy(&text));
        }
    }
}
