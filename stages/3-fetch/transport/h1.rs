//! An HTTP/1.1 client connection read and written in place: no task and no channel between the
//! socket and the reader of a response body, and no write buffer kept between requests.
//!
//! hyper's HTTP/1 client costs about 25 KiB a connection (a dispatch task and its channel, an
//! 8 KiB header write buffer, an 8 KiB read buffer and more). Here a [`Connection`] is its
//! socket and one read buffer, allocated at the first read and let go when the connection goes
//! idle: a request is written from one contiguous allocation (head then body) that is freed
//! once written, and a response is read into a buffer of [`INITIAL_READ`] bytes that grows only
//! for a head that does not fit (up to [`MAX_HEAD`]) or a body that arrives faster than it is
//! read (reads of up to [`MAX_READ`]). Body data is handed out as slices of that buffer (no
//! copy), as soon as it arrives: a chunk split across reads is handed out piece by piece, since
//! the reader times each piece's arrival.
//!
//! The framing follows RFC 9112 §6.3 for a client: interim (1xx) responses are passed over, 204
//! and 304 (and any answer to HEAD) have no body, a Transfer-Encoding ending in `chunked` frames
//! the body in chunks, any other Transfer-Encoding runs to the connection's close, else a
//! Content-Length gives its length, else the body runs to the close. Where hyper is strict (a
//! chunk's lines end in CRLF, not a bare LF) this is too; where it is lenient (empty lines
//! before a status line, a head's lines ending in a bare LF, whitespace after a chunk size,
//! repeated identical Content-Lengths) this is too.
use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::header::{HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use http::{Method, Request, Response, StatusCode, Version};
use std::fmt;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// The largest response head read (status line and header fields, each interim head on its
/// own); hyper's default bound is about 400 KiB, but no provider's head nears 64 KiB.
pub const MAX_HEAD: usize = 64 * 1024;

/// The most header fields a response head may carry (hyper takes 100).
pub const MAX_HEADERS: usize = 128;

/// The most bytes of trailer fields after a chunked body, which are read and discarded
/// (hyper's bound).
pub const MAX_TRAILERS: usize = 16 * 1024;

/// The longest chunk size line, extensions included.
pub const MAX_CHUNK_LINE: usize = 4 * 1024;

/// The largest chunk size taken (a terabyte): a larger one is a broken or hostile server, not
/// a body.
pub const MAX_CHUNK_SIZE: u64 = 1 << 40;

/// The first read of an exchange, and the size reads come back to once a stream slows down:
/// a response head and the first events of a stream fit.
pub const INITIAL_READ: usize = 4 * 1024;

/// The largest read: a body arriving faster than it is read (a provider writing a ten-megabyte
/// line) is read in pieces of at most this, each handed out before the next read.
pub const MAX_READ: usize = 64 * 1024;

/// Why an exchange failed. The texts are logged as the failure of a provider's request; an
/// I/O error's own text is its [`source`](std::error::Error::source).
#[derive(Debug)]
pub enum Error {
    /// Reading or writing the connection failed.
    Io(io::Error),
    /// The connection closed (or was reset) before any byte of a response head, the reset
    /// being the source if there was one. On a connection kept from an earlier exchange this
    /// is the keep-alive race (the server closed the idle connection as the request went
    /// out), and the request may go again on a new connection.
    ClosedBeforeHead(Option<io::Error>),
    /// The connection closed after part of a response head (or after an interim response).
    ClosedInHead,
    /// The status line or a header line is not HTTP/1.1's; the text names which.
    InvalidHead(&'static str),
    /// The response head is longer than [`MAX_HEAD`].
    HeadTooLarge,
    /// The response head has more than [`MAX_HEADERS`] header fields.
    TooManyHeaders,
    /// A Content-Length is not a number, or several disagree.
    InvalidContentLength,
    /// An HTTP/1.0 response carries a Transfer-Encoding, which HTTP/1.0 does not have (RFC 9112
    /// §6.1: its framing cannot be trusted).
    TransferEncodingInHttp10,
    /// A chunk size line is not a hexadecimal size, optional whitespace and extensions, CRLF.
    InvalidChunkSize,
    /// A chunk size is larger than [`MAX_CHUNK_SIZE`].
    ChunkSizeOverflow,
    /// A chunk size line is longer than [`MAX_CHUNK_LINE`].
    ChunkLineTooLong,
    /// A chunk's data is not followed by CRLF.
    MissingChunkCrlf,
    /// A trailer line does not end in CRLF.
    InvalidTrailer,
    /// The trailer fields are longer than [`MAX_TRAILERS`].
    TrailersTooLarge,
    /// The connection closed before the end of a body framed by its length or in chunks.
    ClosedInBody,
}

impl Error {
    /// Whether the connection closed before any byte of a response head: see
    /// [`Error::ClosedBeforeHead`].
    pub fn is_closed_before_head(&self) -> bool {
        matches!(self, Error::ClosedBeforeHead(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(_) => f.write_str("connection I/O failed"),
            Error::ClosedBeforeHead(_) => f.write_str("connection closed before a response head"),
            Error::ClosedInHead => f.write_str("connection closed in the middle of a response head"),
            Error::InvalidHead(part) => write!(f, "invalid response head: malformed {part}"),
            Error::HeadTooLarge => write!(f, "response head over {MAX_HEAD} bytes"),
            Error::TooManyHeaders => write!(f, "response head with over {MAX_HEADERS} header fields"),
            Error::InvalidContentLength => f.write_str("invalid or conflicting Content-Length"),
            Error::TransferEncodingInHttp10 => f.write_str("HTTP/1.0 response with a Transfer-Encoding"),
            Error::InvalidChunkSize => f.write_str("invalid chunk size line"),
            Error::ChunkSizeOverflow => write!(f, "chunk size over {MAX_CHUNK_SIZE} bytes"),
            Error::ChunkLineTooLong => write!(f, "chunk size line over {MAX_CHUNK_LINE} bytes"),
            Error::MissingChunkCrlf => f.write_str("missing CRLF after chunk data"),
            Error::InvalidTrailer => f.write_str("trailer line not ended by CRLF"),
            Error::TrailersTooLarge => write!(f, "trailers over {MAX_TRAILERS} bytes"),
            Error::ClosedInBody => f.write_str("connection closed before the end of the response body"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) | Error::ClosedBeforeHead(Some(e)) => Some(e),
            _ => None,
        }
    }
}

/// One HTTP/1.1 connection over any byte stream (plain TCP or TLS), carrying one exchange at
/// a time: [`Connection::send`] takes it, and the response [`Body`] gives it back, read to its
/// end, if it can carry another.
pub struct Connection<IO> {
    io: IO,
    /// What has been read and not yet handed out; empty, without an allocation, while idle.
    buf: BytesMut,
    /// The size of the next read: from [`INITIAL_READ`], doubled after a read that filled it,
    /// halved after one that filled less than a quarter, up to [`MAX_READ`].
    read_size: usize,
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Connection<IO> {
    /// A connection over `io`, which is connected (and through its TLS handshake) already.
    pub fn new(io: IO) -> Self {
        Connection { io, buf: BytesMut::new(), read_size: INITIAL_READ }
    }

    /// The byte stream, and with it the connection (the tests read what was written).
    #[cfg(test)]
    pub fn into_inner(self) -> IO {
        self.io
    }

    /// Writes `request` (its method, origin-form target, header fields, and the body with its
    /// Content-Length) in one write, then reads the response head, passing over interim (1xx)
    /// responses. Returns the head and the body's reader, which holds the connection.
    ///
    /// The `Host` is the request's own, else its URI's authority. The request's Content-Length
    /// and Transfer-Encoding, if any, are replaced by the body's length. A write that finds the
    /// connection reset (or the pipe broken) fails as [`Error::ClosedBeforeHead`]: the server
    /// closed it before the request arrived.
    pub async fn send(mut self, request: Request<Bytes>) -> Result<(Response<()>, Body<IO>), Error> {
        let asks_head_only = request.method() == Method::HEAD;
        self.write_request(&request).await?;
        drop(request);
        let mut received = false;
        loop {
            let length = self.read_head(&mut received).await?;
            let head = parse_head(&self.buf[..length])?;
            // The fields were copied out, so the buffer stays the connection's alone.
            self.buf.advance(length);
            if is_interim(head.status()) {
                continue;
            }
            let (framing, keep_alive) = framing(&head, asks_head_only)?;
            return Ok((head, Body { conn: self, framing, keep_alive }));
        }
    }

    /// Ready once this idle connection can carry no request any more: the server closed or
    /// reset it, or sent bytes no request asked for. Pending while it stays open and silent,
    /// `cx` then woken when that changes. Without a task reading an idle connection, nothing
    /// else notices a server closing it (its keep-alive timeout): a pool asks this (with
    /// `now_or_never`) before reusing one, so that only a close racing the request's write is
    /// left to [`Error::ClosedBeforeHead`]. A connection found closed must be dropped (a byte
    /// of what the server sent may have been consumed).
    pub fn poll_closed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        // A byte on the stack: no allocation for a connection that stays idle.
        let mut byte = [0u8; 1];
        let mut probe = ReadBuf::new(&mut byte);
        Pin::new(&mut self.io).poll_read(cx, &mut probe).map(|_| ())
    }

    async fn write_request(&mut self, request: &Request<Bytes>) -> Result<(), Error> {
        let bytes = encode(request);
        let written = async {
            self.io.write_all(&bytes).await?;
            // TLS holds what it encrypted until flushed.
            self.io.flush().await
        };
        written.await.map_err(|e| if is_reset(&e) { Error::ClosedBeforeHead(Some(e)) } else { Error::Io(e) })
    }

    /// Reads until the buffer starts with a whole response head (after any empty lines, which
    /// are dropped); returns the head's length. `received` tells whether any byte arrived since
    /// the request was written: a close before the first one is the keep-alive race.
    async fn read_head(&mut self, received: &mut bool) -> Result<usize, Error> {
        // Where the search for the head's end resumes, so that a head arriving a byte at a time
        // is not searched from its start at every byte.
        let mut searched = 0;
        loop {
            if skip_empty_lines(&mut self.buf) {
                searched = 0;
            }
            if let Some(end) = find_head_end(&self.buf, searched) {
                return if end > MAX_HEAD { Err(Error::HeadTooLarge) } else { Ok(end) };
            }
            if self.buf.len() > MAX_HEAD {
                return Err(Error::HeadTooLarge);
            }
            // An LF in the last two bytes may yet be followed by the empty line.
            searched = self.buf.len().saturating_sub(2);
            let want = self.read_size;
            match poll_fn(|cx| self.poll_fill(cx, want)).await {
                Ok(0) if *received => return Err(Error::ClosedInHead),
                Ok(0) => return Err(Error::ClosedBeforeHead(None)),
                Ok(_) => *received = true,
                Err(e) if !*received && is_reset(&e) => return Err(Error::ClosedBeforeHead(Some(e))),
                Err(e) => return Err(Error::Io(e)),
            }
        }
    }

    /// Reads at most `want` bytes onto the end of the buffer; 0 at the end of the stream.
    fn poll_fill(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<io::Result<usize>> {
        self.make_room(want);
        let mut room = (&mut self.buf).limit(want);
        let read = ready!(pin!(self.io.read_buf(&mut room)).poll(cx))?;
        // A read held under the read size (the end of a length) never fills it, so it can
        // shrink it but not grow it.
        self.read_size = next_read_size(self.read_size, read);
        Poll::Ready(Ok(read))
    }

    /// Makes room for `want` more bytes. An empty buffer's allocation is used again when no
    /// piece handed out holds it any more and it is at most twice the read size; otherwise a
    /// new one of `want` bytes replaces it, so a stream that slowed down after a burst holds a
    /// small buffer again, and a piece a caller keeps holds only its own allocation.
    fn make_room(&mut self, want: usize) {
        if !self.buf.is_empty() {
            self.buf.reserve(want);
        } else if !(self.buf.try_reclaim(want) && self.buf.capacity() <= 2 * self.read_size) {
            self.buf = BytesMut::with_capacity(want);
        }
    }

    /// The connection going idle: its buffer (empty) is let go, and the next exchange starts
    /// with small reads again.
    fn idle(mut self) -> Self {
        self.buf = BytesMut::new();
        self.read_size = INITIAL_READ;
        self
    }
}

/// The size of the read after one of `size` bytes that read `read`.
fn next_read_size(size: usize, read: usize) -> usize {
    if read == size {
        (size * 2).min(MAX_READ)
    } else if read < size / 4 {
        (size / 2).max(INITIAL_READ)
    } else {
        size
    }
}

/// Whether an I/O error means the peer closed the connection abruptly.
fn is_reset(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted | io::ErrorKind::BrokenPipe
    )
}

/// The request's bytes: the request line, the header fields, the empty line and the body, in
/// one allocation of the exact size.
fn encode(request: &Request<Bytes>) -> Vec<u8> {
    let method = request.method().as_str();
    let uri = request.uri();
    // The origin form (RFC 9112 §3.2.1): an absolute URI is sent as its path and query.
    let query = uri.query().map_or(&b""[..], str::as_bytes);
    let query_mark: &[u8] = if query.is_empty() { b"" } else { b"?" };
    let headers = request.headers();
    let host = if headers.contains_key(HOST) { None } else { uri.authority() };
    let fields = || headers.iter().filter(|(name, _)| **name != CONTENT_LENGTH && **name != TRANSFER_ENCODING);
    let body = request.body();
    let length = (!body.is_empty() || expects_content(request.method())).then(|| body.len().to_string());
    let request_line = [method.as_bytes(), b" ", uri.path().as_bytes(), query_mark, query, b" HTTP/1.1\r\n"];
    let size = request_line.iter().map(|part| part.len()).sum::<usize>()
        + host.map_or(0, |h| field_size("host", h.as_str().as_bytes()))
        + fields().map(|(name, value)| field_size(name.as_str(), value.as_bytes())).sum::<usize>()
        + length.as_ref().map_or(0, |l| field_size("content-length", l.as_bytes()))
        + 2
        + body.len();
    let mut out = Vec::with_capacity(size);
    for part in request_line {
        out.extend_from_slice(part);
    }
    if let Some(host) = host {
        put_field(&mut out, "host", host.as_str().as_bytes());
    }
    for (name, value) in fields() {
        put_field(&mut out, name.as_str(), value.as_bytes());
    }
    if let Some(length) = &length {
        put_field(&mut out, "content-length", length.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    debug_assert_eq!(out.len(), size);
    out
}

/// Whether a request of `method` states its body's length even when empty (RFC 9110 §8.6).
fn expects_content(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH)
}

fn field_size(name: &str, value: &[u8]) -> usize {
    name.len() + 2 + value.len() + 2
}

fn put_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    // A HeaderValue holds no CR or LF, so a value cannot end its line early.
    for part in [name.as_bytes(), b": ", value, b"\r\n"] {
        out.extend_from_slice(part);
    }
}

/// Drops the empty lines at the start of `buf` (a server may send one after a body); whether
/// there were any.
fn skip_empty_lines(buf: &mut BytesMut) -> bool {
    let mut skipped = 0;
    loop {
        match &buf[skipped..] {
            [b'\n', ..] => skipped += 1,
            [b'\r', b'\n', ..] => skipped += 2,
            _ => break,
        }
    }
    buf.advance(skipped);
    skipped > 0
}

/// The length of the head at the start of `buf` (through its empty line, CRLF or a bare LF),
/// looking at line ends from `from` on; None while the empty line has not arrived.
fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(offset) = find_lf(&buf[at..]) {
        let lf = at + offset;
        match &buf[lf + 1..] {
            [b'\n', ..] => return Some(lf + 2),
            [b'\r', b'\n', ..] => return Some(lf + 3),
            _ => at = lf + 1,
        }
    }
    None
}

fn find_lf(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// The status line and header fields of a whole head (empty lines before it dropped already).
fn parse_head(head: &[u8]) -> Result<Response<()>, Error> {
    let mut lines = head.split_inclusive(|&b| b == b'\n').map(line_text);
    let (version, status) = parse_status_line(lines.next().unwrap_or_default())?;
    let mut response = Response::new(());
    *response.version_mut() = version;
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for line in lines.take_while(|line| !line.is_empty()) {
        if headers.len() == MAX_HEADERS {
            return Err(Error::TooManyHeaders);
        }
        let (name, value) = parse_field(line)?;
        headers.append(name, value);
    }
    Ok(response)
}

/// A line without its LF and the CR before it, if any.
fn line_text(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `HTTP/1.1 200 OK`: the version, one space, three digits, and an optional reason after a
/// space (as httparse takes it, which hyper uses).
fn parse_status_line(line: &[u8]) -> Result<(Version, StatusCode), Error> {
    let invalid = || Error::InvalidHead("status line");
    let (version, rest) = match line.strip_prefix(b"HTTP/1.").ok_or_else(invalid)? {
        [b'1', b' ', rest @ ..] => (Version::HTTP_11, rest),
        [b'0', b' ', rest @ ..] => (Version::HTTP_10, rest),
        _ => return Err(invalid()),
    };
    let (code, reason) = rest.split_at_checked(3).ok_or_else(invalid)?;
    let status = StatusCode::from_bytes(code).map_err(|_| invalid())?;
    match reason {
        [] => Ok((version, status)),
        [b' ', reason @ ..] if reason.iter().all(|&b| is_text(b)) => Ok((version, status)),
        _ => Err(invalid()),
    }
}

/// Whether `b` may stand in a reason phrase or a field value: a visible character, a space, a
/// tab, or an obsolete non-ASCII byte.
fn is_text(b: u8) -> bool {
    b == b'\t' || (b >= b' ' && b != 0x7f)
}

/// `Name: value`: a token, a colon, the value without the whitespace around it. A line
/// starting with whitespace (an obsolete folded continuation) or with whitespace before its
/// colon is invalid, as in hyper.
fn parse_field(line: &[u8]) -> Result<(HeaderName, HeaderValue), Error> {
    let invalid = || Error::InvalidHead("header line");
    let colon = line.iter().position(|&b| b == b':').ok_or_else(invalid)?;
    let name = HeaderName::from_bytes(&line[..colon]).map_err(|_| invalid())?;
    let value = HeaderValue::from_bytes(trim_whitespace(&line[colon + 1..])).map_err(|_| invalid())?;
    Ok((name, value))
}

/// `bytes` without the spaces and tabs around it.
fn trim_whitespace(mut bytes: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = bytes {
        bytes = rest;
    }
    bytes
}

/// An interim response, passed over for the final one. 101 is not: after it the connection
/// speaks another protocol.
fn is_interim(status: StatusCode) -> bool {
    status.is_informational() && status != StatusCode::SWITCHING_PROTOCOLS
}

/// How the body of the response `head` is framed (RFC 9112 §6.3), and whether the connection
/// can carry another request after it.
fn framing(head: &Response<()>, asks_head_only: bool) -> Result<(Framing, bool), Error> {
    let headers = head.headers();
    let keep_alive = keeps_alive(head.version(), headers);
    if head.status() == StatusCode::SWITCHING_PROTOCOLS {
        return Ok((Framing::Spent, false));
    }
    if asks_head_only || matches!(head.status(), StatusCode::NO_CONTENT | StatusCode::NOT_MODIFIED) {
        return Ok((Framing::Complete, keep_alive));
    }
    if headers.contains_key(TRANSFER_ENCODING) {
        if head.version() == Version::HTTP_10 {
            return Err(Error::TransferEncodingInHttp10);
        }
        if !is_chunked(headers) {
            return Ok((Framing::UntilClose, false));
        }
        // The Transfer-Encoding frames the body and a Content-Length beside it is ignored, but
        // a server sending both is suspect (response splitting): its connection is not reused.
        let reusable = keep_alive && !headers.contains_key(CONTENT_LENGTH);
        return Ok((Framing::Chunked(Chunk::Size), reusable));
    }
    match content_length(headers)? {
        Some(0) => Ok((Framing::Complete, keep_alive)),
        Some(length) => Ok((Framing::Length(length), keep_alive)),
        None => Ok((Framing::UntilClose, false)),
    }
}

/// Whether the server keeps the connection open after this response: HTTP/1.1 unless a
/// `Connection` field says `close`, HTTP/1.0 only when one says `keep-alive` (and none `close`).
fn keeps_alive(version: Version, headers: &HeaderMap) -> bool {
    let options =
        || headers.get_all(CONNECTION).iter().flat_map(|v| v.to_str().unwrap_or_default().split(',')).map(str::trim);
    if options().any(|option| option.eq_ignore_ascii_case("close")) {
        return false;
    }
    version == Version::HTTP_11 || options().any(|option| option.eq_ignore_ascii_case("keep-alive"))
}

/// Whether the final transfer coding (the last of the last Transfer-Encoding field) is chunked.
fn is_chunked(headers: &HeaderMap) -> bool {
    let last = headers.get_all(TRANSFER_ENCODING).iter().next_back();
    last.and_then(|v| v.to_str().ok())
        .and_then(|v| v.rsplit(',').next())
        .is_some_and(|coding| coding.trim().eq_ignore_ascii_case("chunked"))
}

/// The Content-Length, if any: every value (and every comma-separated item of one) must be
/// the same decimal number.
fn content_length(headers: &HeaderMap) -> Result<Option<u64>, Error> {
    let mut length = None;
    for value in headers.get_all(CONTENT_LENGTH) {
        for item in value.to_str().map_err(|_| Error::InvalidContentLength)?.split(',') {
            let item = item.trim();
            // u64's parse would take a leading `+`.
            if item.is_empty() || !item.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Error::InvalidContentLength);
            }
            let parsed = item.parse::<u64>().map_err(|_| Error::InvalidContentLength)?;
            if length.is_some_and(|l| l != parsed) {
                return Err(Error::InvalidContentLength);
            }
            length = Some(parsed);
        }
    }
    Ok(length)
}

/// A response body being read, and the connection it comes on.
pub struct Body<IO> {
    conn: Connection<IO>,
    framing: Framing,
    /// Whether the response lets the connection carry another request after the body.
    keep_alive: bool,
}

/// Where a body's reading stands.
enum Framing {
    /// A Content-Length body: the bytes still to come (never 0).
    Length(u64),
    Chunked(Chunk),
    /// A body that ends when the connection closes.
    UntilClose,
    /// The body's end was read where its framing put it.
    Complete,
    /// Nothing more will be read: the connection closed at the end of an until-close body, an
    /// error ended the body, or the server switched protocols.
    Spent,
}

/// Where a chunked body's reading stands.
#[derive(Clone, Copy)]
enum Chunk {
    /// Before a chunk size line.
    Size,
    /// In a chunk's data: the bytes still to come (never 0).
    Data(u64),
    /// Before the CRLF after a chunk's data.
    DataEnd,
    /// In the trailer fields after the last chunk: how many bytes of them were read.
    Trailers(usize),
}

/// What the buffered bytes gave.
enum Step {
    Data(Bytes),
    End,
    /// Nothing without another read.
    More,
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Body<IO> {
    /// The next piece of body data (never empty), as soon as it has arrived; None at the body's
    /// end. Trailer fields are read and discarded. After an error, None.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>, Error> {
        poll_fn(|cx| self.poll_next_chunk(cx)).await
    }

    /// [`Body::next_chunk`] as a poll: data already buffered is handed out without a read, so
    /// that a caller polling once (`now_or_never`) takes what has arrived.
    pub fn poll_next_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, Error>> {
        loop {
            match self.decode() {
                Ok(Step::Data(data)) => return Poll::Ready(Ok(Some(data))),
                Ok(Step::End) => return Poll::Ready(Ok(None)),
                Ok(Step::More) => {}
                Err(error) => return Poll::Ready(Err(self.fail(error))),
            }
            let want = self.read_size();
            match ready!(self.conn.poll_fill(cx, want)) {
                Ok(0) => return Poll::Ready(self.at_close()),
                Ok(_) => {}
                Err(error) => return Poll::Ready(Err(self.fail(Error::Io(error)))),
            }
        }
    }

    /// The connection, after [`Body::next_chunk`] gave None, if it can carry another request:
    /// the response kept it alive (HTTP/1.1 without `Connection: close`, HTTP/1.0 with
    /// `keep-alive`), its body was framed by a length or in chunks and read to its end, and no
    /// byte came after it. None otherwise (the connection then closes).
    pub fn into_reusable(self) -> Option<Connection<IO>> {
        let clean = matches!(self.framing, Framing::Complete) && self.keep_alive && self.conn.buf.is_empty();
        clean.then(|| self.conn.idle())
    }

    /// Hands out what the buffer holds of the body, or its end, without reading.
    fn decode(&mut self) -> Result<Step, Error> {
        let buf = &mut self.conn.buf;
        match &mut self.framing {
            Framing::Length(remaining) => {
                if buf.is_empty() {
                    return Ok(Step::More);
                }
                let data = split_data(buf, *remaining);
                *remaining -= data.len() as u64;
                if *remaining == 0 {
                    self.framing = Framing::Complete;
                }
                Ok(Step::Data(data))
            }
            Framing::Chunked(chunk) => {
                let step = decode_chunked(buf, chunk)?;
                if matches!(step, Step::End) {
                    self.framing = Framing::Complete;
                }
                Ok(step)
            }
            Framing::UntilClose if buf.is_empty() => Ok(Step::More),
            Framing::UntilClose => Ok(Step::Data(buf.split().freeze())),
            Framing::Complete | Framing::Spent => Ok(Step::End),
        }
    }

    /// The most to read next: a read past a length-framed body would only take bytes the
    /// connection must not carry.
    fn read_size(&self) -> usize {
        match self.framing {
            Framing::Length(remaining) => {
                usize::try_from(remaining).map_or(self.conn.read_size, |r| r.min(self.conn.read_size))
            }
            _ => self.conn.read_size,
        }
    }

    /// The end of the stream: the end of an until-close body, else a body cut short.
    fn at_close(&mut self) -> Result<Option<Bytes>, Error> {
        let until_close = matches!(self.framing, Framing::UntilClose);
        self.framing = Framing::Spent;
        if until_close {
            Ok(None)
        } else {
            Err(Error::ClosedInBody)
        }
    }

    fn fail(&mut self, error: Error) -> Error {
        self.framing = Framing::Spent;
        error
    }
}

/// Up to `limit` bytes from the front of `buf`, without a copy.
fn split_data(buf: &mut BytesMut, limit: u64) -> Bytes {
    let length = usize::try_from(limit).map_or(buf.len(), |limit| limit.min(buf.len()));
    buf.split_to(length).freeze()
}

/// Advances a chunked body through what `buf` holds: its next data, its end (after the
/// trailers), or More when a line or the data has not arrived yet.
fn decode_chunked(buf: &mut BytesMut, chunk: &mut Chunk) -> Result<Step, Error> {
    loop {
        match *chunk {
            Chunk::Size => {
                let Some(lf) = find_lf(buf) else {
                    return if buf.len() > MAX_CHUNK_LINE { Err(Error::ChunkLineTooLong) } else { Ok(Step::More) };
                };
                if lf > MAX_CHUNK_LINE {
                    return Err(Error::ChunkLineTooLong);
                }
                let size = parse_chunk_size(&buf[..lf])?;
                buf.advance(lf + 1);
                *chunk = if size == 0 { Chunk::Trailers(0) } else { Chunk::Data(size) };
            }
            Chunk::Data(remaining) => {
                if buf.is_empty() {
                    return Ok(Step::More);
                }
                // Handed out at once, even when the rest of the chunk is still to come.
                let data = split_data(buf, remaining);
                let left = remaining - data.len() as u64;
                *chunk = if left == 0 { Chunk::DataEnd } else { Chunk::Data(left) };
                return Ok(Step::Data(data));
            }
            Chunk::DataEnd => match buf[..] {
                [b'\r', b'\n', ..] => {
                    buf.advance(2);
                    *chunk = Chunk::Size;
                }
                [] | [b'\r'] => return Ok(Step::More),
                _ => return Err(Error::MissingChunkCrlf),
            },
            Chunk::Trailers(seen) => {
                let Some(lf) = find_lf(buf) else {
                    return if seen + buf.len() > MAX_TRAILERS { Err(Error::TrailersTooLarge) } else { Ok(Step::More) };
                };
                if seen + lf + 1 > MAX_TRAILERS {
                    return Err(Error::TrailersTooLarge);
                }
                if lf == 0 || buf[lf - 1] != b'\r' {
                    return Err(Error::InvalidTrailer);
                }
                buf.advance(lf + 1);
                // The empty line (a lone CRLF) ends the trailers and the body.
                if lf == 1 {
                    return Ok(Step::End);
                }
                *chunk = Chunk::Trailers(seen + lf + 1);
            }
        }
    }
}

/// The size of a chunk size line (without its LF): hexadecimal digits, optional spaces or
/// tabs, optional `;` extensions (ignored), and the CR (hyper takes no bare LF there).
fn parse_chunk_size(line: &[u8]) -> Result<u64, Error> {
    let line = line.strip_suffix(b"\r").ok_or(Error::InvalidChunkSize)?;
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 {
        return Err(Error::InvalidChunkSize);
    }
    let mut size = 0u64;
    for &digit in &line[..digits] {
        size = size * 16 + u64::from(char::from(digit).to_digit(16).unwrap_or_default());
        if size > MAX_CHUNK_SIZE {
            return Err(Error::ChunkSizeOverflow);
        }
    }
    let mut rest = &line[digits..];
    while let [b' ' | b'\t', after @ ..] = rest {
        rest = after;
    }
    match rest {
        [] => Ok(size),
        [b';', extensions @ ..] if !extensions.contains(&b'\r') => Ok(size),
        _ => Err(Error::InvalidChunkSize),
    }
}

#[cfg(test)]
mod tests;
