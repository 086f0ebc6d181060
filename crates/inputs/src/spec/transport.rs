//! `inference.transport`: the HTTP version the client speaks.
//!
//! The reference runner (Python `requests`) speaks HTTP/1.1 only. HTTP/2 changes what is
//! measured: one multiplexed connection, another flow control, other framing of the body as it
//! arrives. So inferbench speaks HTTP/1.1 unless the spec asks for HTTP/2, and a spec without
//! the key (the reference's own) measures what the reference measures.
use super::check::{shown, Reader};
use std::fmt;

/// The key, as messages name it.
pub const HTTP_VERSION_KEY: &str = "inference.transport.http_version";

/// `inference.transport.http_version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HttpVersion {
    /// `"1.1"` (the default): HTTP/1.1 only, and TLS offers only `http/1.1` by ALPN.
    #[default]
    Http1,
    /// `"2"`: TLS offers `h2` and `http/1.1` by ALPN and the server chooses. A plain `http://`
    /// endpoint still speaks HTTP/1.1: HTTP/2 without TLS needs prior knowledge that the server
    /// speaks it, which would fail every HTTP/1.1-only server, so the client never assumes it.
    Http2,
}

impl HttpVersion {
    /// The spec's spelling, also recorded in the log's `segment_opened.http_version`.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http1 => "1.1",
            HttpVersion::Http2 => "2",
        }
    }
}

impl fmt::Display for HttpVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `inference.transport`: how requests travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Transport {
    pub http_version: HttpVersion,
}

/// Reads `inference.transport`, defaults filled in.
pub(super) fn read(r: &mut Reader) -> Transport {
    let Some(value) = r.get(HTTP_VERSION_KEY) else {
        return Transport::default();
    };
    let http_version = match value.as_str() {
        Some("1.1") => HttpVersion::Http1,
        Some("2") => HttpVersion::Http2,
        // An unquoted 1.1 or 2 is a YAML number; refused rather than read, so `1.10` or `2.0`
        // never pass for a version.
        _ => {
            let quote = if value.is_number() { " (quoted: YAML reads an unquoted 1.1 as a number)" } else { "" };
            let what = format!("must be \"1.1\" or \"2\"{quote}, found {}", shown(value));
            r.push(HTTP_VERSION_KEY, what);
            HttpVersion::default()
        }
    };
    Transport { http_version }
}
