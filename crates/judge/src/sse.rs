//! Server-sent-event framing per the WHATWG rules: lines end at CR, LF or CRLF (also when the
//! CR and LF arrive in different chunks); U+2028 and other Unicode separators inside a JSON
//! payload are data, not line ends; a line starting with `:` is a comment; `field: value`
//! loses one leading space; `data` lines join with `\n`; a blank line dispatches. Pure and
//! incremental: feed it bytes as they arrive and it returns the frames each chunk completed,
//! so each frame can be stamped with the arrival time of the bytes that completed it.
//!
//! Memory is bounded: the line being read and the pending event's fields (its joined data, its
//! `event`, `id` and `retry`) together hold at most `max_event_bytes`, counted as the capacity
//! of their buffers between two reads; past that the parser refuses the stream ([`TooLarge`])
//! instead of growing without end (a provider that never sends a newline would otherwise fill
//! the machine). The end of the body is held to the same cap: an event the body's end
//! dispatches is refused as it would be with its blank line.

/// A dispatched event or a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Event { data: Option<String>, event: Option<String>, id: Option<String>, retry: Option<String> },
    Comment(String),
}

impl Frame {
    /// The bytes of text the frame holds.
    fn size(&self) -> usize {
        match self {
            Frame::Event { data, event, id, retry } => {
                [data, event, id, retry].iter().map(|f| f.as_ref().map_or(0, String::len)).sum()
            }
            Frame::Comment(text) => text.len(),
        }
    }
}

/// A line or an event exceeded the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    pub max_event_bytes: usize,
}

/// The line being read. Its first 64 KiB grow by doubling, as a vector does, but never past
/// the room the cap leaves; past that it is kept in blocks of 64 KiB (the last one cut to the
/// room). A long line (a provider writing megabytes without a newline) thus takes
/// its own length in blocks of one size, which every stream's long line can reuse once freed,
/// rather than the chain of ever larger buffers a growing vector leaves behind (freed, but
/// kept by the allocator: twice the line, measured with 80 such streams at once).
#[derive(Debug, Default)]
struct Line {
    head: Vec<u8>,
    full: Vec<Vec<u8>>,
}

/// The size of a long line's blocks.
const BLOCK: usize = 64 * 1024;

impl Line {
    fn len(&self) -> usize {
        self.head.len() + self.full.len() * BLOCK
    }

    fn is_empty(&self) -> bool {
        self.head.is_empty() && self.full.is_empty()
    }

    /// Appends `b`; the line's buffers then hold at most `room` bytes (at least its length:
    /// the caller refuses a line that would not fit).
    fn push(&mut self, b: u8, room: usize) {
        if self.head.len() == BLOCK {
            let rest = room.saturating_sub((self.full.len() + 1) * BLOCK).clamp(1, BLOCK);
            let full = std::mem::replace(&mut self.head, Vec::with_capacity(rest));
            self.full.push(full);
        } else if self.head.len() == self.head.capacity() {
            // Doubling (from 64 bytes) keeps pushes amortised; the room keeps it within the cap.
            let rest = room.saturating_sub(self.full.len() * BLOCK);
            let grown = (self.head.capacity() * 2).clamp(64, BLOCK).min(rest).max(self.head.len() + 1);
            self.head.reserve_exact(grown - self.head.len());
        }
        self.head.push(b);
    }

    /// Appends `bytes` as [`Line::push`] would one by one: the same buffers, grown the same way.
    fn extend(&mut self, mut bytes: &[u8], room: usize) {
        while let Some(&first) = bytes.first() {
            self.push(first, room);
            let take = (self.head.capacity() - self.head.len()).min(BLOCK - self.head.len()).min(bytes.len() - 1);
            self.head.extend_from_slice(&bytes[1..1 + take]);
            bytes = &bytes[1 + take..];
        }
    }

    /// The line's bytes in one buffer of their length, the line left empty.
    fn take(&mut self) -> Vec<u8> {
        if self.full.is_empty() {
            return std::mem::take(&mut self.head);
        }
        let mut bytes = Vec::with_capacity(self.len());
        for block in self.full.drain(..) {
            bytes.extend_from_slice(&block);
        }
        bytes.extend_from_slice(&self.head);
        self.head = Vec::new();
        bytes
    }
}

#[derive(Debug)]
pub struct Parser {
    max_event_bytes: usize,
    line: Line,
    after_cr: bool,
    started: bool,
    data: Option<String>,
    event: Option<String>,
    id: Option<String>,
    retry: Option<String>,
}

impl Parser {
    pub fn new(max_event_bytes: usize) -> Parser {
        Parser {
            max_event_bytes,
            line: Line::default(),
            after_cr: false,
            started: false,
            data: None,
            event: None,
            id: None,
            retry: None,
        }
    }

    /// Feeds the next chunk of the body; returns the frames it completed. When a line or an
    /// event grows past the cap, the frames completed before it are still returned, with
    /// `TooLarge`; the parser then holds nothing and must not be fed again.
    pub fn feed(&mut self, bytes: &[u8]) -> (Vec<Frame>, Option<TooLarge>) {
        let mut frames = Vec::new();
        let mut rest = bytes;
        while let Some(&first) = rest.first() {
            if std::mem::take(&mut self.after_cr) && first == b'\n' {
                rest = &rest[1..];
                continue;
            }
            // The line's bytes up to its end (or the chunk's), taken as a run rather than byte
            // by byte: one search, one copy.
            let run_end = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
            if run_end > 0 {
                // The line and the event's fields never hold more than the cap between them.
                let room = self.max_event_bytes.saturating_sub(self.fields());
                if run_end > room.saturating_sub(self.line.len()) {
                    *self = Parser::new(self.max_event_bytes);
                    return (frames, Some(TooLarge { max_event_bytes: self.max_event_bytes }));
                }
                let (run, after) = rest.split_at(run_end);
                rest = after;
                match after.first() {
                    // A whole line within this chunk (the common case): read from the chunk,
                    // its text copied once, at its length.
                    Some(_) if self.line.is_empty() => self.end_line_in(&mut frames, run),
                    Some(_) => {
                        self.line.extend(run, room);
                        let line = self.line.take();
                        self.end_line(&mut frames, line);
                    }
                    None => {
                        self.line.extend(run, room);
                        break;
                    }
                }
            } else {
                let line = self.line.take();
                self.end_line(&mut frames, line);
            }
            // `rest` starts with the line's end.
            self.after_cr = rest[0] == b'\r';
            rest = &rest[1..];
            let pending = self.line.len() + self.fields();
            let oversized = frames.last().is_some_and(|f: &Frame| f.size() > self.max_event_bytes);
            if pending > self.max_event_bytes || oversized {
                if oversized {
                    frames.pop();
                }
                *self = Parser::new(self.max_event_bytes);
                return (frames, Some(TooLarge { max_event_bytes: self.max_event_bytes }));
            }
        }
        (frames, None)
    }

    /// The stream ended: a pending event without its final blank line is still dispatched,
    /// so a provider that drops the last newline does not lose its answer. An event (or a
    /// comment) over the cap is refused as [`Parser::feed`] refuses it, whether or not its
    /// blank line came.
    pub fn finish(&mut self) -> (Vec<Frame>, Option<TooLarge>) {
        let mut frames = Vec::new();
        if !self.line.is_empty() {
            let line = self.line.take();
            self.end_line(&mut frames, line);
        }
        self.dispatch(&mut frames);
        let cap = self.max_event_bytes;
        *self = Parser::new(cap);
        if frames.iter().any(|f| f.size() > cap) {
            let kept = frames.into_iter().take_while(|f| f.size() <= cap).collect();
            return (kept, Some(TooLarge { max_event_bytes: cap }));
        }
        (frames, None)
    }

    /// The bytes the pending event's fields hold (each buffer is exactly its text's length).
    fn fields(&self) -> usize {
        [&self.data, &self.event, &self.id, &self.retry].iter().map(|f| f.as_ref().map_or(0, String::len)).sum()
    }

    /// A line read whole from one chunk: its text is taken from the chunk, and only what the
    /// frame keeps is copied (the data without its `data: `, at its length).
    fn end_line_in(&mut self, frames: &mut Vec<Frame>, raw: &[u8]) {
        match std::str::from_utf8(raw) {
            Ok(text) if self.started || !text.starts_with('\u{feff}') => {
                self.started = true;
                if let Some(value) = self.field(frames, text) {
                    self.data = Some(value.to_string());
                }
            }
            _ => self.end_line(frames, raw.to_vec()),
        }
    }

    fn end_line(&mut self, frames: &mut Vec<Frame>, raw: Vec<u8>) {
        // Valid UTF-8 becomes the text in place, without a copy of the line beside it.
        let mut text = String::from_utf8(raw).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        if !self.started {
            self.started = true;
            if let Some(rest) = text.strip_prefix('\u{feff}') {
                text = rest.to_string();
            }
        }
        let Some(value) = self.field(frames, &text) else { return };
        // The line becomes the data in place: a long one is not copied beside itself. Its
        // spare capacity is given back (memory the cap does not count).
        let value_start = text.len() - value.len();
        text.replace_range(..value_start, "");
        text.shrink_to_fit();
        self.data = Some(text);
    }

    /// Takes one line's field; returns the value of a `data` line that starts the event's
    /// data, for the caller to keep (as it can, without a copy of a long line).
    fn field<'t>(&mut self, frames: &mut Vec<Frame>, text: &'t str) -> Option<&'t str> {
        if text.is_empty() {
            self.dispatch(frames);
            return None;
        }
        if let Some(comment) = text.strip_prefix(':') {
            frames.push(Frame::Comment(comment.strip_prefix(' ').unwrap_or(comment).to_string()));
            return None;
        }
        // The value as a slice of the line (empty at its end when there is no colon).
        let (field_end, value_start) = match text.find(':') {
            Some(colon) => (colon, colon + 1 + usize::from(text[colon + 1..].starts_with(' '))),
            None => (text.len(), text.len()),
        };
        let (field, value) = (&text[..field_end], &text[value_start..]);
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    // Exactly the joined length: spare capacity would be memory the cap does
                    // not count (an event of several data lines is rare; one realloc each).
                    data.reserve_exact(1 + value.len());
                    data.push('\n');
                    data.push_str(value);
                }
                None => return Some(value),
            },
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|c| c.is_ascii_digit()) => {
                self.retry = Some(value.to_string())
            }
            _ => {}
        }
        None
    }

    /// The bytes the parser holds between feeds: every buffer's capacity, used or not.
    #[cfg(test)]
    fn held(&self) -> usize {
        let fields = [&self.data, &self.event, &self.id, &self.retry];
        self.line.head.capacity()
            + self.line.full.iter().map(Vec::capacity).sum::<usize>()
            + fields.iter().map(|f| f.as_ref().map_or(0, String::capacity)).sum::<usize>()
    }

    fn dispatch(&mut self, frames: &mut Vec<Frame>) {
        let data = self.data.take();
        let (event, id, retry) = (self.event.take(), self.id.take(), self.retry.take());
        if data.is_some() || event.is_some() || id.is_some() || retry.is_some() {
            frames.push(Frame::Event { data, event, id, retry });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(s: &str) -> Frame {
        Frame::Event { data: Some(s.to_string()), event: None, id: None, retry: None }
    }

    #[test]
    fn an_endless_line_never_takes_more_than_the_cap() {
        let cap = 1 << 20;
        let mut p = Parser::new(cap);
        let chunk = vec![b'x'; 64 * 1024];
        let mut refused = None;
        for _ in 0..40 {
            let (_, too_large) = p.feed(&chunk);
            let held = p.line.head.capacity() + p.line.full.iter().map(Vec::capacity).sum::<usize>();
            assert!(held <= cap, "{held} bytes held for a cap of {cap}");
            assert!(p.line.full.iter().all(|b| b.capacity() == BLOCK), "a long line is held in blocks of one size");
            if too_large.is_some() {
                refused = too_large;
                break;
            }
        }
        assert_eq!(refused, Some(TooLarge { max_event_bytes: cap }), "refused at the cap");
        // Data lines joined into one event are held to the cap too.
        let mut p = Parser::new(4096);
        let (_, too_large) = p.feed(
            &b"data: abcdefghijklmno
"
            .repeat(300),
        );
        assert!(too_large.is_some());
        let mut p = Parser::new(4096);
        ok(p.feed(
            &b"data: abcdefghijklmno
"
            .repeat(150),
        ));
        assert!(p.data.as_ref().unwrap().capacity() <= 4096, "{}", p.data.as_ref().unwrap().capacity());
    }

    #[test]
    fn lf_crlf_and_cr_line_ends_all_frame_events() {
        let mut p = Parser::new(1 << 20);
        let frames = ok(p.feed(b"data: a\n\ndata: b\r\n\r\ndata: c\r\r"));
        assert_eq!(frames, vec![data("a"), data("b"), data("c")]);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let mut p = Parser::new(1 << 20);
        assert!(ok(p.feed(b"data: x\r")).is_empty());
        assert!(ok(p.feed(b"\n")).is_empty(), "the LF completes the CRLF, not a blank line");
        assert_eq!(ok(p.feed(b"\r\n")), vec![data("x")]);
    }

    #[test]
    fn multi_line_data_joins_with_newline_and_keeps_empty_lines() {
        let mut p = Parser::new(1 << 20);
        assert_eq!(ok(p.feed(b"data: one\r\ndata:\r\ndata: two\r\n\r\n")), vec![data("one\n\ntwo")]);
    }

    #[test]
    fn unicode_line_separator_inside_json_is_data() {
        let payload = "{\"content\":\"a\u{2028}b\u{85}c\"}";
        let mut p = Parser::new(1 << 20);
        let frames = ok(p.feed(format!("data: {payload}\n\n").as_bytes()));
        assert_eq!(frames, vec![data(payload)]);
    }

    #[test]
    fn comments_fields_and_byte_at_a_time_feeding() {
        let input = b": keep-alive\nevent: chunk\nid: 7\nretry: 100\nretry: soon\nfoo: bar\ndata:{\"a\":1}\n\n";
        let mut p = Parser::new(1 << 20);
        let mut frames = Vec::new();
        for b in input.iter() {
            frames.extend(ok(p.feed(&[*b])));
        }
        assert_eq!(
            frames,
            vec![
                Frame::Comment("keep-alive".into()),
                Frame::Event {
                    data: Some("{\"a\":1}".into()),
                    event: Some("chunk".into()),
                    id: Some("7".into()),
                    retry: Some("100".into())
                },
            ]
        );
    }

    #[test]
    fn blank_lines_alone_dispatch_nothing_and_eof_flushes_a_pending_event() {
        let mut p = Parser::new(1 << 20);
        assert!(ok(p.feed(b"\n\n\n")).is_empty());
        assert!(ok(p.feed(b"data: [DONE]")).is_empty());
        assert_eq!(p.finish(), (vec![data("[DONE]")], None));
    }

    #[test]
    fn an_unterminated_line_or_an_oversized_event_is_refused_and_freed() {
        let too_large = Some(TooLarge { max_event_bytes: 16 });
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: 0123456789"), (vec![], None));
        assert_eq!(p.feed(b"abcdef"), (vec![], too_large), "22 bytes pending, no newline");
        assert!(p.line.head.capacity() == 0 && p.line.full.is_empty() && p.data.is_none(), "the buffers are freed");
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: 0123456789\ndata: 0123456789\n").1, too_large, "joined data over the cap");
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: 0123456789abcdefgh\n\n").1, too_large, "a complete but oversized event");
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: 0123456789\n\ndata: 0123456789\n\n").0.len(), 2);
    }

    #[test]
    fn the_frames_before_an_overflow_are_kept() {
        let mut p = Parser::new(16);
        let (frames, too_large) = p.feed(b"data: a\n\ndata: [DONE]\n\ndata: 0123456789abcdefghijkl");
        assert_eq!(frames, vec![data("a"), data("[DONE]")]);
        assert_eq!(too_large, Some(TooLarge { max_event_bytes: 16 }));
    }

    /// The frames of a feed that must not overflow.
    fn ok((frames, too_large): (Vec<Frame>, Option<TooLarge>)) -> Vec<Frame> {
        assert_eq!(too_large, None);
        frames
    }

    #[test]
    fn the_cap_counts_every_field_of_the_event_and_every_byte_of_capacity() {
        // `event`, `id` and `retry` were held beside the cap (an event of four times the cap);
        // they count now, as they do in the frame's size.
        let line = |field: &str| format!("{field}: {}\n", "1".repeat(30));
        let mut p = Parser::new(100);
        let (_, too_large) =
            p.feed(format!("{}{}{}{}", line("event"), line("id"), line("retry"), line("data")).as_bytes());
        assert_eq!(too_large, Some(TooLarge { max_event_bytes: 100 }));
        // A line grows by doubling, but never past the cap: 65 bytes under a cap of 100 took 128.
        let mut p = Parser::new(100);
        ok(p.feed(&[b'x'; 65]));
        assert!(p.held() <= 100, "{} bytes held", p.held());
        // ... and a long line's last block is cut to the cap (100,000 took two blocks, 131,072).
        let mut p = Parser::new(100_000);
        ok(p.feed(&vec![b'x'; 99_999]));
        assert!(p.held() <= 100_000, "{} bytes held", p.held());
        // A first data line gives its spare capacity back; a second one takes just its bytes.
        let mut p = Parser::new(1000);
        ok(p.feed(format!("data: {}\ndata: {}\n", "a".repeat(300), "b".repeat(300)).as_bytes()));
        assert_eq!(p.held(), 601);
    }

    #[test]
    fn the_end_of_the_body_refuses_an_event_over_the_cap_as_its_blank_line_would() {
        // Three bytes of invalid UTF-8 become three replacement characters of three bytes.
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: ok\n\ndata: \xff\xff\xff\xff\xff\xff"), (vec![data("ok")], None));
        assert_eq!(p.finish(), (vec![], Some(TooLarge { max_event_bytes: 16 })));
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: \xff\xff\xff\xff\xff\xff\n\n"), (vec![], Some(TooLarge { max_event_bytes: 16 })));
        let mut p = Parser::new(16);
        assert_eq!(p.feed(b"data: 0123456789"), (vec![], None));
        assert_eq!(p.finish(), (vec![data("0123456789")], None), "within the cap it is dispatched");
    }

    #[test]
    fn a_data_line_without_a_colon_is_empty_data() {
        // `data` alone names the field with an empty value (WHATWG). Its value was once taken
        // as an offset from an unrelated empty string: a panic in a debug build, a wrapped
        // index (and a panic) in a release one, from a provider's single line.
        let mut p = Parser::new(1 << 20);
        assert_eq!(ok(p.feed(b"data\n\ndata\ndata: a\n\n")), vec![data(""), data("\na")]);
        assert_eq!(p.feed(b"data"), (vec![], None));
        assert_eq!(p.finish(), (vec![data("")], None));
    }

    #[test]
    fn leading_byte_order_mark_is_ignored() {
        let mut p = Parser::new(1 << 20);
        assert_eq!(ok(p.feed("\u{feff}data: a\n\n".as_bytes())), vec![data("a")]);
    }
}

/// Property tests: mangled realistic streams, cut into reads at arbitrary points
/// ([`crate::streams`]). What they hold the framer to:
/// - it never panics;
/// - the frames (and whether, and after which frame, it refused the stream) do not depend on
///   how the body was cut into reads: any cutting, one read, and one byte at a time agree;
/// - what it frames is what a whole-body reading of the same rules frames ([`reference`]);
/// - no frame is larger than the cap, a line or an event larger than the cap is refused, and
///   a stream whose lines and events are all within half the cap is not;
/// - between reads it holds at most the cap, measured as its buffers' capacities.
#[cfg(test)]
mod props {
    use super::*;
    use crate::streams::{chunked, config, cuts, mangled};
    use proptest::prelude::*;

    /// What a parser made of a body: its frames, and whether it refused the body.
    #[derive(Debug, PartialEq)]
    struct Framed {
        frames: Vec<Frame>,
        refused: bool,
    }

    /// Feeds the reads one by one, as `ib-fetch` does, and returns the most the parser held
    /// between two reads.
    fn frame(reads: &[&[u8]], cap: usize) -> (Framed, usize) {
        let mut p = Parser::new(cap);
        let (mut frames, mut held) = (Vec::new(), 0);
        for read in reads {
            let (completed, too_large) = p.feed(read);
            frames.extend(completed);
            held = held.max(p.held());
            if too_large.is_some() {
                return (Framed { frames, refused: true }, held);
            }
        }
        let (last, too_large) = p.finish();
        frames.extend(last);
        (Framed { frames, refused: too_large.is_some() }, held)
    }

    /// The same rules over the whole body at once, without caps: split into lines, then read
    /// line by line. Returns the frames and the longest line (in bytes, without its end).
    fn reference(bytes: &[u8]) -> (Vec<Frame>, usize) {
        let mut lines = Vec::new();
        let (mut start, mut i) = (0, 0);
        while i < bytes.len() {
            if bytes[i] == b'\r' || bytes[i] == b'\n' {
                lines.push(&bytes[start..i]);
                i += if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                start = i;
            } else {
                i += 1;
            }
        }
        if start < bytes.len() {
            lines.push(&bytes[start..]);
        }
        let longest = lines.iter().map(|l| l.len()).max().unwrap_or(0);
        let mut frames = Vec::new();
        let (mut data, mut event, mut id, mut retry): (Option<String>, _, _, _) = (None, None, None, None);
        let dispatch = |frames: &mut Vec<Frame>,
                        data: &mut Option<String>,
                        event: &mut Option<String>,
                        id: &mut Option<String>,
                        retry: &mut Option<String>| {
            if data.is_some() || event.is_some() || id.is_some() || retry.is_some() {
                frames.push(Frame::Event {
                    data: data.take(),
                    event: event.take(),
                    id: id.take(),
                    retry: retry.take(),
                });
            }
        };
        for (n, line) in lines.iter().enumerate() {
            let text = String::from_utf8_lossy(line);
            let text = if n == 0 { text.strip_prefix('\u{feff}').unwrap_or(&text) } else { &text };
            if text.is_empty() {
                dispatch(&mut frames, &mut data, &mut event, &mut id, &mut retry);
            } else if let Some(comment) = text.strip_prefix(':') {
                frames.push(Frame::Comment(comment.strip_prefix(' ').unwrap_or(comment).to_string()));
            } else {
                let (field, value) =
                    text.split_once(':').map_or((text, ""), |(f, v)| (f, v.strip_prefix(' ').unwrap_or(v)));
                match field {
                    "data" => match &mut data {
                        Some(d) => *d = format!("{d}\n{value}"),
                        None => data = Some(value.to_string()),
                    },
                    "event" => event = Some(value.to_string()),
                    "id" if !value.contains('\0') => id = Some(value.to_string()),
                    "retry" if !value.is_empty() && value.bytes().all(|c| c.is_ascii_digit()) => {
                        retry = Some(value.to_string())
                    }
                    _ => {}
                }
            }
        }
        dispatch(&mut frames, &mut data, &mut event, &mut id, &mut retry);
        (frames, longest)
    }

    fn check(bytes: &[u8], cut: &[proptest::sample::Index], cap: usize) -> Result<(), TestCaseError> {
        let (whole, held_whole) = frame(&[bytes], cap);
        let (cut_up, held_cut) = frame(&chunked(bytes, cut), cap);
        prop_assert_eq!(&cut_up, &whole, "cut into reads");
        let (bytewise, held_bytewise) = if bytes.len() <= 4096 {
            let singles: Vec<&[u8]> = bytes.chunks(1).collect();
            frame(&singles, cap)
        } else {
            let (f, h) = frame(&chunked(bytes, cut), cap);
            (f, h)
        };
        prop_assert_eq!(&bytewise, &whole, "one byte at a time");
        let held = held_whole.max(held_cut).max(held_bytewise);
        prop_assert!(held <= cap, "held {} bytes for a cap of {}", held, cap);
        for f in &whole.frames {
            prop_assert!(f.size() <= cap, "a frame of {} bytes for a cap of {}", f.size(), cap);
        }
        let (expected, longest) = reference(bytes);
        let largest = expected.iter().map(Frame::size).max().unwrap_or(0);
        if whole.refused {
            prop_assert!(expected.starts_with(&whole.frames), "the frames before a refusal are the stream's");
            prop_assert!(2 * longest > cap || 2 * largest > cap, "refused a stream within half the cap");
        } else {
            prop_assert_eq!(&whole.frames, &expected, "the whole-body reading");
            prop_assert!(
                longest <= cap && largest <= cap,
                "a line of {} or an event of {} within a cap of {}",
                longest,
                largest,
                cap
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(config(512))]

        #[test]
        fn mangled_streams_frame_alike_in_any_reads_and_within_the_cap(
            bytes in mangled(6, 3000),
            cut in cuts(12),
            cap in prop_oneof![Just(16usize), Just(100), Just(700), Just(4096), Just(1 << 20)],
        ) {
            check(&bytes, &cut, cap)?;
        }
    }

    proptest! {
        // Long lines that take the 64 KiB blocks: fewer cases, each a few hundred KiB.
        #![proptest_config(config(24))]

        #[test]
        fn long_lines_in_blocks_frame_alike_and_within_the_cap(
            bytes in mangled(3, 300_000),
            cut in cuts(6),
            cap in prop_oneof![Just(BLOCK), Just(100_000usize), Just(1 << 18)],
        ) {
            check(&bytes, &cut, cap)?;
        }
    }
}
