//! The bytes of an event stream: how one planned event becomes HTTP body frames. Every frame
//! is its own HTTP chunk, so the frame boundaries chosen here are what a client's reader
//! sees as separate reads (split UTF-8, a line delivered in 64 KiB pieces).
use axum::body::Bytes;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// The line terminator of every line the simulator writes in an event stream (the WHATWG
/// parser accepts all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineEnding {
    #[default]
    Lf,
    Crlf,
    Cr,
}

impl LineEnding {
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
            LineEnding::Cr => "\r",
        }
    }
}

/// How a stream is written, for the whole response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wire {
    pub line_ending: LineEnding,
    pub split_utf8: bool,
}

/// What one planned event puts on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// An SSE event: these lines (without terminators), each ended, then one empty line.
    Lines(Vec<String>),
    /// One `data:` line of exactly `prefix + filler + suffix` bytes, ended like an event; the
    /// filler is ASCII text without quotes or backslashes, so the line stays valid JSON.
    Oversized { prefix: String, filler: u64, suffix: String },
    /// `prefix`, then filler bytes forever: no line end ever comes.
    Unterminated { prefix: String },
    /// Nothing is written (an abort, the end of the body, a hang).
    Nothing,
}

impl Payload {
    /// A one-line `data:` event.
    pub fn data(data: &str) -> Payload {
        Payload::Lines(vec![format!("data: {data}")])
    }
}

/// The largest frame written: the memory a stream holds per frame is bounded by this (times
/// the channel depth), however long the line.
pub const PIECE: usize = 64 * 1024;

/// ASCII filler text for oversized and unterminated lines, built once and shared by
/// reference (a `Bytes` slice of it costs no copy).
static FILLER: LazyLock<Bytes> = LazyLock::new(|| {
    const TEXT: &[u8] = b"lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor ";
    Bytes::from(TEXT.iter().copied().cycle().take(PIECE).collect::<Vec<u8>>())
});

/// The body frames of one payload, produced lazily (an unterminated line never ends).
pub fn frames(payload: &Payload, wire: Wire) -> Box<dyn Iterator<Item = Bytes> + Send> {
    let end = wire.line_ending.as_str();
    match payload {
        Payload::Lines(lines) => {
            let mut text = String::new();
            for line in lines {
                text.push_str(line);
                text.push_str(end);
            }
            text.push_str(end);
            if wire.split_utf8 {
                let cut = split_point(&text);
                let bytes = Bytes::from(text);
                Box::new([bytes.slice(..cut), bytes.slice(cut..)].into_iter())
            } else {
                Box::new(std::iter::once(Bytes::from(text)))
            }
        }
        Payload::Oversized { prefix, filler, suffix } => {
            let head = std::iter::once(Bytes::from(prefix.clone()));
            let tail = std::iter::once(Bytes::from(format!("{suffix}{end}{end}")));
            Box::new(head.chain(filler_pieces(Some(*filler))).chain(tail))
        }
        Payload::Unterminated { prefix } => {
            Box::new(std::iter::once(Bytes::from(prefix.clone())).chain(filler_pieces(None)))
        }
        Payload::Nothing => Box::new(std::iter::empty()),
    }
}

/// `total` filler bytes in pieces of at most [`PIECE`], or endless pieces for `None`.
fn filler_pieces(total: Option<u64>) -> impl Iterator<Item = Bytes> + Send {
    let mut left = total;
    std::iter::from_fn(move || {
        let n = match left {
            Some(0) => return None,
            Some(l) => {
                let n = l.min(PIECE as u64);
                left = Some(l - n);
                n as usize
            }
            None => PIECE,
        };
        Some(FILLER.slice(..n))
    })
}

/// Where a split_utf8 event is cut: one byte into its first multi-byte character (so the
/// first frame ends with an incomplete UTF-8 sequence), else in the middle.
pub fn split_point(text: &str) -> usize {
    match text.char_indices().find(|(_, c)| c.len_utf8() > 1) {
        Some((i, _)) => i + 1,
        None => text.len() / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(p: &Payload, wire: Wire) -> Vec<Bytes> {
        frames(p, wire).collect()
    }

    #[test]
    fn line_endings_end_every_line_and_the_event() {
        let p = Payload::Lines(vec!["event: error".into(), "data: {}".into()]);
        for (le, want) in [
            (LineEnding::Lf, "event: error\ndata: {}\n\n"),
            (LineEnding::Crlf, "event: error\r\ndata: {}\r\n\r\n"),
            (LineEnding::Cr, "event: error\rdata: {}\r\r"),
        ] {
            assert_eq!(collect(&p, Wire { line_ending: le, split_utf8: false }), [Bytes::from(want)]);
        }
    }

    #[test]
    fn split_utf8_cuts_inside_the_first_multibyte_character() {
        let wire = Wire { line_ending: LineEnding::Lf, split_utf8: true };
        let f = collect(&Payload::data(r#"{"content":"Tomás"}"#), wire);
        assert_eq!(f.len(), 2);
        assert!(std::str::from_utf8(&f[0]).is_err(), "the first frame ends inside á");
        assert!(f[0].ends_with(&[0xC3]));
        assert_eq!([&f[0][..], &f[1][..]].concat(), "data: {\"content\":\"Tomás\"}\n\n".as_bytes());
        // ASCII only: cut in the middle.
        let f = collect(&Payload::data("[DONE]"), wire);
        assert_eq!((f[0].len(), f[1].len()), (7, 7));
    }

    #[test]
    fn oversized_lines_have_the_exact_length_in_bounded_pieces() {
        let p = Payload::Oversized { prefix: "data: {\"c\":\"".into(), filler: 200_000, suffix: "\"}".into() };
        let f = collect(&p, Wire::default());
        assert!(f.iter().all(|b| b.len() <= PIECE));
        let all: Vec<u8> = f.concat();
        assert_eq!(all.len(), 12 + 200_000 + 2 + 2);
        assert!(all.ends_with(b"\"}\n\n"));
        let line = &all[6..all.len() - 2];
        let v: serde_json::Value = serde_json::from_slice(line).unwrap();
        assert_eq!(v["c"].as_str().unwrap().len(), 200_000);
        assert_eq!(all.iter().filter(|&&b| b == b'\n').count(), 2);
    }

    #[test]
    fn unterminated_lines_never_end() {
        let p = Payload::Unterminated { prefix: "data: {".into() };
        let first: Vec<Bytes> = frames(&p, Wire::default()).take(100).collect();
        assert_eq!(first.len(), 100);
        assert_eq!(first[0], "data: {");
        assert!(first[1..].iter().all(|b| b.len() == PIECE && !b.contains(&b'\n') && !b.contains(&b'\r')));
        assert!(collect(&Payload::Nothing, Wire::default()).is_empty());
    }
}
