//! Writing the event log: one segment file of envelope lines. `ib-fetch`, `ib-synth` and
//! `ib-import` all write through here, so a log's bytes do not depend on which of them wrote it.
//!
//! A line is `{"v":…,"run_id":…,"seq":…,"t_ns":…,"type":…,"data":{…}}` and `\n`: exactly what
//! serde_json writes for the contract's `Envelope` (whose event is flattened into it), made
//! without building one. The head up to `"seq":` is rendered once per writer ([`Lines`]) and the
//! event serialised after the two numbers, its opening `{` turned into the comma that joins it
//! to them, so a line costs no allocation once the writer's buffer has grown. A line can also be
//! serialised ahead of its writing ([`Prepared`]), leaving only its numbers for the moment it
//! is written.
//!
//! A segment opens with its `segment_opened` ([`opening`] fills in what every writer records the
//! same way) and ends with its `segment_closed` (with [`peak_rss_bytes`]); its `seq` runs on
//! without a gap from the number the writer was opened at.
use crate::run::RunDir;
use crate::write_behind::{FileBehind, SyncHandle};
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::event::{EndpointMode, Event, RequestStarted, SegmentOpened, SseEvent};
use inferbench_contract::{Error, Result, CODE_VERSION, FORMAT_VERSION};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The lines of one run's log: its envelope head, rendered once.
#[derive(Debug, Clone)]
pub struct Lines {
    /// `{"v":…,"run_id":"…","seq":`
    head: Vec<u8>,
}

const T_KEY: &[u8] = b",\"t_ns\":";
/// The key that a `request_started` line ends with, before its number.
const INTENDED_KEY: &[u8] = b",\"intended_t_ns\":";
const RELEASED_KEY: &[u8] = b",\"released_t_ns\":";
/// A value that no field of a prepared `request_started` line can hold by chance where the
/// split looks for it.
const INTENDED_MARK: u64 = 18_446_744_073_709_551_521;

impl Lines {
    /// The lines of the log of the run whose lock names it `run_id`.
    pub fn new(run_id: &str) -> Lines {
        let mut head = format!("{{\"v\":{FORMAT_VERSION},\"run_id\":").into_bytes();
        push_json(&mut head, run_id);
        head.extend_from_slice(b",\"seq\":");
        Lines { head }
    }

    /// Appends the line of `event`, number `seq`, stamped `t_ns`, to `out`.
    pub fn render(&self, out: &mut Vec<u8>, seq: u64, t_ns: u64, event: &Event) -> serde_json::Result<()> {
        stamp(out, &self.head, seq, t_ns);
        if let Event::SseEvent(sse) = event {
            render_sse(out, sse);
            return Ok(());
        }
        let at = out.len();
        serde_json::to_writer(&mut *out, event)?;
        // The event is the object `{"type":…,"data":…}`; its fields go on the envelope's.
        out[at] = b',';
        out.push(b'\n');
        Ok(())
    }

    /// The lines of `events` (each with its time), numbered from `first_seq`.
    pub fn render_all(&self, first_seq: u64, events: &[(u64, Event)]) -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(events.len() * 512);
        for (seq, (t_ns, event)) in (first_seq..).zip(events) {
            self.render(&mut out, seq, *t_ns, event)?;
        }
        Ok(out)
    }

    /// `event`'s line serialised now, its `seq` and `t_ns` given when it is written.
    pub fn prepare(&self, event: &Event) -> serde_json::Result<Prepared> {
        let mut tail = serde_json::to_vec(event)?;
        tail[0] = b',';
        tail.push(b'\n');
        Ok(Prepared { head: self.head.clone(), tail, end: None })
    }

    /// A `request_started` line serialised now, its `seq`, `t_ns`, `intended_t_ns` (its last
    /// field) and `released_t_ns` given when it is written ([`Prepared::render_started`]).
    pub fn prepare_started(&self, mut started: RequestStarted) -> Result<Prepared> {
        started.intended_t_ns = INTENDED_MARK;
        let mut line = self.prepare(&Event::RequestStarted(started)).map_err(|e| Error::bad(e.to_string()))?;
        // `intended_t_ns` is the last field of the last object: the split is unambiguous.
        let last = format!(",\"intended_t_ns\":{INTENDED_MARK}}}}}\n");
        if !line.tail.ends_with(last.as_bytes()) {
            return Err(Error::bad("request_started does not end with intended_t_ns"));
        }
        line.tail.truncate(line.tail.len() - last.len() + INTENDED_KEY.len());
        line.end = Some(b"}}\n");
        Ok(line)
    }

    /// [`Lines::prepare_started`] of `started` with its body given already serialised
    /// (`body_json`, `serde_json`'s compact bytes of it: the bytes the request sends, so a
    /// prompt is escaped once, not twice): the same line, byte for byte. `started.body` is not
    /// read.
    pub fn prepare_started_with_body(&self, mut started: RequestStarted, body_json: &[u8]) -> Result<Prepared> {
        started.body = serde_json::Value::Null;
        let mut line = self.prepare_started(started)?;
        // Every string serialised before the body has its quotes escaped (`\"`), so the first
        // `"body":null` in the line is the key and its placeholder.
        const PLACEHOLDER: &[u8] = b"\"body\":null";
        let at = line
            .tail
            .windows(PLACEHOLDER.len())
            .position(|w| w == PLACEHOLDER)
            .ok_or_else(|| Error::bad("request_started has no body"))?;
        let value = at + b"\"body\":".len();
        line.tail.splice(value..at + PLACEHOLDER.len(), body_json.iter().copied());
        Ok(line)
    }
}

/// A line serialised ahead of its writing, split where the numbers known only then go:
/// `{"v":…,"run_id":…,"seq":` SEQ `,"t_ns":` T `,"type":…,"data":{…}}`, and for a
/// `request_started` line also its last field, `…,"intended_t_ns":` I `}}`. Rendering is a
/// copy and two or three integers.
pub struct Prepared {
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Present when the line ends with `intended_t_ns`: what follows its number.
    end: Option<&'static [u8]>,
}

impl Prepared {
    /// An upper bound of the rendered length.
    pub fn max_len(&self) -> usize {
        self.head.len() + T_KEY.len() + self.tail.len() + 4 * 20 + 3 + RELEASED_KEY.len()
    }

    /// Appends the line, number `seq`, stamped `t_ns`, to `out`.
    pub fn render(&self, out: &mut Vec<u8>, seq: u64, t_ns: u64) {
        self.render_started(out, seq, t_ns, None, 0);
    }

    /// [`Prepared::render`], with a `request_started` line's `intended_t_ns` and its
    /// `released_t_ns` (which serde writes just before `intended_t_ns`, and omits when absent).
    pub fn render_started(
        &self,
        out: &mut Vec<u8>,
        seq: u64,
        t_ns: u64,
        released_t_ns: Option<u64>,
        intended_t_ns: u64,
    ) {
        stamp(out, &self.head, seq, t_ns);
        match (self.end, released_t_ns) {
            (Some(end), Some(released)) => {
                let cut = self.tail.len() - INTENDED_KEY.len();
                out.extend_from_slice(&self.tail[..cut]);
                out.extend_from_slice(RELEASED_KEY);
                push_json(out, &released);
                out.extend_from_slice(INTENDED_KEY);
                push_json(out, &intended_t_ns);
                out.extend_from_slice(end);
            }
            (Some(end), None) => {
                out.extend_from_slice(&self.tail);
                push_json(out, &intended_t_ns);
                out.extend_from_slice(end);
            }
            (None, _) => out.extend_from_slice(&self.tail),
        }
    }
}

/// The head and the two numbers of a line.
fn stamp(out: &mut Vec<u8>, head: &[u8], seq: u64, t_ns: u64) {
    out.extend_from_slice(head);
    push_json(out, &seq);
    out.extend_from_slice(T_KEY);
    push_json(out, &t_ns);
}

/// The rest of an `sse_event` line (from the comma after `t_ns`), byte for byte what serde_json
/// writes for it: the fetch writes one line per event it receives, most of it the event's
/// `data` escaped, and serde_json's escaping looks at a byte at a time
/// (`lines_are_the_envelopes_serde_writes` holds the two to the same bytes).
fn render_sse(out: &mut Vec<u8>, e: &SseEvent) {
    out.extend_from_slice(b",\"type\":\"sse_event\",\"data\":{\"request_id\":");
    push_json_str(out, &e.request_id);
    out.extend_from_slice(b",\"attempt\":");
    push_json(out, &e.attempt);
    out.extend_from_slice(b",\"index\":");
    push_json(out, &e.index);
    let optional =
        [("data", &e.data), ("event", &e.event), ("id", &e.id), ("retry", &e.retry), ("comment", &e.comment)];
    for (key, value) in optional {
        if let Some(value) = value {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\":");
            push_json_str(out, value);
        }
    }
    if e.redacted {
        out.extend_from_slice(b",\"redacted\":true");
    }
    out.extend_from_slice(b"}}\n");
}

/// `text` as a JSON string, escaped as serde_json escapes it: `"` and `\\` with a backslash,
/// the control characters below U+0020 as `\\b`, `\\t`, `\\n`, `\\f`, `\\r` or `\\u00xx`, and
/// every other character as it is. Eight bytes are looked at at once while none needs escaping.
fn push_json_str(out: &mut Vec<u8>, text: &str) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether any byte of `w` is zero, or below 0x20 (exact for "any byte", SWAR).
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH != 0;
    let needs_escape = |w: u64| {
        w.wrapping_sub(ONES * 0x20) & !w & HIGH != 0 || has_zero(w ^ (ONES * 0x22)) || has_zero(w ^ (ONES * 0x5c))
    };
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            if !needs_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0a => b'n',
            0x0c => b'f',
            0x0d => b'r',
            0x00..=0x1f => b'u',
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        out.push(b'\\');
        out.push(short);
        if short == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// A number or string as serde_json writes it (which cannot fail into memory).
fn push_json<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("numbers and strings serialise");
}

/// One segment file of the log, written line by line with gap-free `seq`. `W` is the file
/// written behind its caller ([`FileBehind`]) when lines are made while something must not wait
/// for the disk (a fetch: its senders hand a line over and go on; a killed process loses only
/// the last millisecond or so of lines, each whole), or a buffer over the file when nothing
/// needs a line before the next is made (a generated or imported log, synced once at its end).
pub struct SegmentWriter<W: Write = FileBehind> {
    path: PathBuf,
    out: W,
    lines: Lines,
    next_seq: u64,
    bytes: u64,
    /// The line being written, its room kept from line to line.
    line: Vec<u8>,
}

impl SegmentWriter<FileBehind> {
    /// Opens segment file `path` (creating it and the `events/` directory it stands in) to
    /// append lines numbered from `next_seq`, written behind the caller.
    pub fn append(path: &Path, run_id: &str, next_seq: u64) -> Result<Self> {
        create_parent(path)?;
        let file = FileBehind::append(path).map_err(|e| Error::io(path, e))?;
        Ok(Self::over(path, file, run_id, next_seq))
    }

    /// A handle to write out and sync the segment from another thread while this one keeps
    /// appending; it needs no file descriptor of its own.
    pub fn sync_handle(&self) -> SyncHandle {
        self.out.sync_handle()
    }

    /// Writes out every line so far and flushes the file to stable storage (fsync).
    pub fn sync(&mut self) -> Result<()> {
        self.out.sync().map_err(|e| Error::io(&self.path, e))
    }
}

impl SegmentWriter<BufWriter<File>> {
    /// Creates segment file `path` (and the `events/` directory it stands in) to write a whole
    /// log from `seq` 0 through a buffer; an existing file is an error (a log is never
    /// overwritten).
    pub fn create(path: &Path, run_id: &str) -> Result<Self> {
        create_parent(path)?;
        let file = OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| Error::io(path, e))?;
        Ok(Self::over(path, BufWriter::with_capacity(4 << 20, file), run_id, 0))
    }

    /// Flushes and syncs the segment.
    pub fn finish(self) -> Result<()> {
        let path = self.path;
        let file = self.out.into_inner().map_err(|e| Error::io(&path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&path, e))
    }
}

impl<W: Write> SegmentWriter<W> {
    fn over(path: &Path, out: W, run_id: &str, next_seq: u64) -> Self {
        let line = Vec::with_capacity(64 << 10);
        SegmentWriter { path: path.to_path_buf(), out, lines: Lines::new(run_id), next_seq, bytes: 0, line }
    }

    /// Writes `event`'s line, stamped `t_ns`, with the next `seq`.
    pub fn write(&mut self, t_ns: u64, event: &Event) -> Result<()> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let rendered = self.lines.render(&mut line, self.next_seq, t_ns, event);
        let written = match rendered {
            // Our own record failing to serialise is a failure of the writer, not bad input.
            Err(e) => Err(Error::io(&self.path, std::io::Error::new(std::io::ErrorKind::InvalidData, e))),
            Ok(()) => self.write_rendered(&line, 1),
        };
        self.line = line;
        written
    }

    /// Writes `count` lines rendered elsewhere (each ending in `\n`, numbered from
    /// [`SegmentWriter::next_seq`] on) with one `write`.
    pub fn write_rendered(&mut self, lines: &[u8], count: u64) -> Result<()> {
        if !lines.is_empty() && !lines.ends_with(b"\n") {
            let err = std::io::Error::new(std::io::ErrorKind::InvalidInput, "a batch of lines must end with a newline");
            return Err(Error::io(&self.path, err));
        }
        self.out.write_all(lines).map_err(|e| Error::io(&self.path, e))?;
        self.bytes += lines.len() as u64;
        self.next_seq += count;
        Ok(())
    }

    /// Renders lines into `scratch` from the next `seq` (`render` returns how many) and writes
    /// them with one `write`: many lines reach the kernel together for one system call.
    pub fn write_with(&mut self, scratch: &mut Vec<u8>, render: impl FnOnce(&mut Vec<u8>, u64) -> u64) -> Result<()> {
        scratch.clear();
        let count = render(scratch, self.next_seq);
        self.write_rendered(scratch, count)
    }

    /// The `seq` of the next line.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Bytes written by this writer.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The lines this writer writes, to render some elsewhere ([`Lines::render_all`]).
    pub fn lines(&self) -> &Lines {
        &self.lines
    }
}

fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e)),
        _ => Ok(()),
    }
}

/// Segment `segment`'s `segment_opened` as every writer fills it in: this code's version, the
/// run's `schedule.parquet` by hash, the wall clock now, this machine's OS and architecture,
/// and `endpoint_mode`. What it does not know is empty (no requests, limits or deadline, no
/// region, host or shard): the writer gives its own with struct update syntax.
pub fn opening(run: &RunDir, segment: u32, endpoint_mode: EndpointMode) -> Result<SegmentOpened> {
    Ok(SegmentOpened {
        segment,
        wall_clock_unix_ns: wall_clock_ns(),
        code_version: CODE_VERSION.to_string(),
        schedule_sha256: file_sha256(&run.schedule())?,
        scheduled_requests: 0,
        already_terminal: 0,
        endpoint_mode,
        deadline_ms: 0,
        max_event_bytes: 0,
        max_response_bytes: 0,
        http_version: None,
        execution_region: String::new(),
        host_sha256_16: String::new(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        shard: None,
    })
}

/// Nanoseconds since the Unix epoch now.
pub fn wall_clock_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// This process's peak resident set size, for its segment's `segment_closed`: Linux's
/// `VmHWM:  1234 kB` in `/proc/self/status`; `None` elsewhere.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::event::{Envelope, RoundReleased};
    use inferbench_contract::testutil::{self, opened, round_released};

    fn envelope(run_id: &str, seq: u64, t_ns: u64, event: Event) -> String {
        let line = Envelope { run_id: run_id.into(), t_ns, ..testutil::envelope(seq, event) };
        serde_json::to_string(&line).unwrap() + "\n"
    }

    fn released(round_id: &str) -> Event {
        Event::RoundReleased(RoundReleased {
            round_id: round_id.into(),
            nonce: Some("00ff".into()),
            ..round_released(7, &["a", "b\"\\"])
        })
    }

    /// Rendered lines are byte for byte the envelopes serde writes, whatever their strings hold
    /// (here a run id and values that look like the envelope's own keys).
    #[test]
    fn lines_are_the_envelopes_serde_writes() {
        let run_id = "run-\"x\",\"seq\":1";
        let lines = Lines::new(run_id);
        let events = [(5, opened(1)), (9, released("r,\"t_ns\":3}")), (u64::MAX, released(""))];
        let mut want = String::new();
        for (seq, (t_ns, event)) in (1 << 40..).zip(&events) {
            want += &envelope(run_id, seq, *t_ns, event.clone());
        }
        assert_eq!(String::from_utf8(lines.render_all(1 << 40, &events).unwrap()).unwrap(), want);
        let prepared = lines.prepare(&events[1].1).unwrap();
        let mut out = Vec::new();
        prepared.render(&mut out, 3, 4);
        assert_eq!(String::from_utf8(out).unwrap(), envelope(run_id, 3, 4, events[1].1.clone()));
    }

    #[test]
    fn an_sse_line_is_the_bytes_serde_writes_whatever_its_text() {
        // Every ASCII byte (each control character, the quote and the backslash), multi-byte
        // characters, at every offset of the eight-byte window and at a string's either end.
        let mut texts: Vec<String> = vec![String::new(), "é€😀\u{7f}\u{80}".into()];
        for b in 0u8..0x80 {
            let c = char::from(b);
            for at in 0..10 {
                texts.push(format!("{}{c}{}", "a".repeat(at), "é".repeat(at % 3)));
            }
            texts.push(format!("{c}{c}{c}abcdefghijklmnop{c}"));
        }
        texts.push(r#"{"choices":[{"delta":{"content":"{\"a\": \"b\\n\"}"}}]}"#.into());
        let lines = Lines::new("run-a");
        for (n, text) in texts.iter().enumerate() {
            let some = |k: usize| (n % 6 != k).then(|| text.clone());
            let event = Event::SseEvent(SseEvent {
                attempt: n as u32,
                data: some(0),
                event: some(1),
                id: some(2),
                retry: some(3),
                comment: some(4),
                redacted: n % 2 == 0,
                ..testutil::sse_event(&format!("req-{text}"), u32::MAX - n as u32, "")
            });
            let mut out = Vec::new();
            lines.render(&mut out, n as u64, 7, &event).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), envelope("run-a", n as u64, 7, event), "{text:?}");
        }
    }

    #[test]
    fn a_writer_numbers_its_lines_on_from_where_it_opened_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events/0002.jsonl");
        let mut log = SegmentWriter::append(&path, "run-a", 40).unwrap();
        log.write(1, &opened(2)).unwrap();
        let mut scratch = Vec::new();
        log.write_with(&mut scratch, |out, seq| {
            for (i, round) in ["r1", "r2"].into_iter().enumerate() {
                Lines::new("run-a").render(out, seq + i as u64, 2, &released(round)).unwrap();
            }
            2
        })
        .unwrap();
        log.sync().unwrap();
        let want = envelope("run-a", 40, 1, opened(2))
            + &envelope("run-a", 41, 2, released("r1"))
            + &envelope("run-a", 42, 2, released("r2"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
        assert_eq!((log.next_seq(), log.bytes()), (43, want.len() as u64));
        assert!(log.write_rendered(b"{}", 1).is_err(), "a batch ends with a newline");
        assert!(SegmentWriter::create(&path, "run-a").is_err(), "a log is never overwritten");
        let fresh = dir.path().join("events/0003.jsonl");
        let mut log = SegmentWriter::create(&fresh, "run-a").unwrap();
        log.write(0, &opened(3)).unwrap();
        log.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), envelope("run-a", 0, 0, opened(3)));
    }

    /// A `request_started` line whose body is given serialised is the line serde writes with
    /// that body, whatever the strings before it hold (here the placeholder's own text).
    #[test]
    fn a_request_started_line_with_its_body_given_serialised_is_the_same_line() {
        let lines = Lines::new("run-1");
        let bodies = [
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "say \"hi\"\n\u{1F600} \\"}]}),
            serde_json::json!({"body": null, "x": [1, 2.5, null]}),
            serde_json::json!({}),
        ];
        for body in bodies {
            let started = RequestStarted {
                request_id: "r\"body\":null\\".into(),
                endpoint: "http://h/\"body\":null".into(),
                item_id: "\"body\":null".into(),
                body: body.clone(),
                ..testutil::request_started("r", 3)
            };
            let whole = lines.prepare_started(started.clone()).unwrap();
            let given = lines
                .prepare_started_with_body(
                    RequestStarted { body: serde_json::Value::Null, ..started },
                    &serde_json::to_vec(&body).unwrap(),
                )
                .unwrap();
            for released in [None, Some(41)] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                whole.render_started(&mut a, 9, 40, released, 39);
                given.render_started(&mut b, 9, 40, released, 39);
                assert_eq!(String::from_utf8(b).unwrap(), String::from_utf8(a).unwrap());
            }
        }
    }
}
