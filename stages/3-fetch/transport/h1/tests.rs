//! The HTTP/1.1 connection's tests: framing (length, chunks, close), interim and bodiless
//! responses, reuse, every way a response can be cut short or malformed, the bytes of a
//! request, and how data is handed out (as it arrives, from the buffer, in bounded reads).
use super::*;
use crate::transport::tests::read_request;
use futures_util::FutureExt;
use http::header::CONTENT_TYPE;
use std::collections::VecDeque;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// How a [`Scripted`] connection ends once its pieces are read.
#[derive(Clone, Copy)]
enum End {
    Close,
    Reset,
    /// Nothing more ever arrives (for a caller that polls once).
    Silent,
}

/// A connection whose reads return the scripted pieces, one a read (a piece longer than the
/// read's room is split), then its end; what is written is kept.
struct Scripted {
    pieces: VecDeque<Vec<u8>>,
    end: End,
    written: Vec<u8>,
    write_error: Option<io::ErrorKind>,
    reads: usize,
}

impl Scripted {
    fn new(pieces: Vec<Vec<u8>>, end: End) -> Self {
        assert!(pieces.iter().all(|p| !p.is_empty()), "an empty read is the end of the stream");
        Scripted { pieces: pieces.into(), end, written: Vec::new(), write_error: None, reads: 0 }
    }
}

impl AsyncRead for Scripted {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.reads += 1;
        let Some(piece) = self.pieces.front_mut() else {
            return match self.end {
                End::Close => Poll::Ready(Ok(())),
                End::Reset => Poll::Ready(Err(io::ErrorKind::ConnectionReset.into())),
                End::Silent => Poll::Pending,
            };
        };
        let n = piece.len().min(buf.remaining());
        buf.put_slice(&piece[..n]);
        piece.drain(..n);
        if piece.is_empty() {
            self.pieces.pop_front();
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Scripted {
    fn poll_write(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Some(kind) = self.write_error {
            return Poll::Ready(Err(kind.into()));
        }
        self.written.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn post() -> Request<Bytes> {
    Request::post("/v1/chat/completions").header(HOST, "provider.test").body(Bytes::from_static(b"{}")).unwrap()
}

/// What an exchange gave: the final head, the body's bytes, and how the body ended (whether
/// the connection was reusable, or the error's text).
#[derive(Debug, PartialEq)]
struct Exchange {
    status: u16,
    version: Version,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    end: Result<bool, String>,
}

fn exchanged(status: u16, headers: &[(&str, &str)], body: &[u8], end: Result<bool, &str>) -> Exchange {
    Exchange {
        status,
        version: Version::HTTP_11,
        headers: headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
        body: body.to_vec(),
        end: end.map_err(str::to_string),
    }
}

/// Reads a body to its end or its error; every piece handed out must hold data.
async fn read_body<IO: AsyncRead + AsyncWrite + Unpin>(body: &mut Body<IO>) -> (Vec<u8>, Option<Error>) {
    let mut data = Vec::new();
    loop {
        match body.next_chunk().await {
            Ok(Some(piece)) => {
                assert!(!piece.is_empty(), "an empty piece was handed out");
                data.extend_from_slice(&piece);
            }
            Ok(None) => return (data, None),
            Err(e) => return (data, Some(e)),
        }
    }
}

async fn exchange_on<IO: AsyncRead + AsyncWrite + Unpin>(
    conn: Connection<IO>,
    request: Request<Bytes>,
) -> Result<(Exchange, Option<Connection<IO>>), Error> {
    let (head, mut body) = conn.send(request).await?;
    let (data, error) = read_body(&mut body).await;
    let (end, reused) = match error {
        Some(e) => (Err(e.to_string()), None),
        None => {
            let reused = body.into_reusable();
            (Ok(reused.is_some()), reused)
        }
    };
    let headers = head.headers().iter().map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_string())).collect();
    let exchange = Exchange { status: head.status().as_u16(), version: head.version(), headers, body: data, end };
    Ok((exchange, reused))
}

/// The exchange of [`post`] on a connection reading `pieces` and then closing; a head's error
/// as its text.
async fn run(pieces: Vec<Vec<u8>>) -> Result<Exchange, String> {
    let conn = Connection::new(Scripted::new(pieces, End::Close));
    exchange_on(conn, post()).await.map(|(exchange, _)| exchange).map_err(|e| e.to_string())
}

async fn run_whole(response: &[u8]) -> Result<Exchange, String> {
    run(vec![response.to_vec()]).await
}

/// `bytes` cut into pieces of 1 to 8 bytes at places drawn from `seed`.
fn split_randomly(bytes: &[u8], seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut pieces = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        // xorshift64
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let (piece, after) = rest.split_at((1 + state % 8).min(rest.len() as u64) as usize);
        pieces.push(piece.to_vec());
        rest = after;
    }
    pieces
}

const LENGTH: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Request-Id: abc\r\n\r\nhello";
const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
    5;name=value\r\nhello\r\n6 ;a=b;c\r\n world\r\nA\t\r\n, streamed\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n";

#[tokio::test]
async fn a_content_length_body_is_read_to_its_length() {
    let expected = exchanged(200, &[("content-length", "5"), ("x-request-id", "abc")], b"hello", Ok(true));
    assert_eq!(run_whole(LENGTH).await, Ok(expected));
}

#[tokio::test]
async fn a_chunked_body_passes_over_extensions_and_trailers() {
    let expected = exchanged(200, &[("transfer-encoding", "chunked")], b"hello world, streamed", Ok(true));
    assert_eq!(run_whole(CHUNKED).await, Ok(expected));
}

#[tokio::test]
async fn every_split_of_a_response_gives_the_same_exchange() {
    let cases: [(&[u8], Result<Exchange, String>); 6] = [
        (LENGTH, Ok(exchanged(200, &[("content-length", "5"), ("x-request-id", "abc")], b"hello", Ok(true)))),
        (CHUNKED, Ok(exchanged(200, &[("transfer-encoding", "chunked")], b"hello world, streamed", Ok(true)))),
        (
            b"\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\ncontent-length: 3\n\nabc",
            Ok(exchanged(201, &[("content-length", "3")], b"abc", Ok(true))),
        ),
        (b"HTTP/1.1 200 OK\r\n\r\nuntil the close", Ok(exchanged(200, &[], b"until the close", Ok(false)))),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcX\r\n",
            Ok(exchanged(200, &[("transfer-encoding", "chunked")], b"abc", Err("missing CRLF after chunk data"))),
        ),
        (b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", Err("invalid response head: malformed header line".into())),
    ];
    for (response, expected) in cases {
        let shown = String::from_utf8_lossy(response);
        assert_eq!(run_whole(response).await, expected, "whole: {shown}");
        let bytes = response.chunks(1).map(<[u8]>::to_vec).collect();
        assert_eq!(run(bytes).await, expected, "a byte a read: {shown}");
        for seed in 1..=50 {
            assert_eq!(run(split_randomly(response, seed)).await, expected, "seed {seed}: {shown}");
        }
    }
}

/// Reads the request `post` writes.
async fn read_post(server: &mut (impl AsyncRead + Unpin)) -> Vec<u8> {
    let mut request = vec![0; encode(&post()).len()];
    server.read_exact(&mut request).await.unwrap();
    request
}

#[tokio::test]
async fn a_response_through_a_pipe_a_byte_at_a_time_gives_the_same_exchange() {
    // A pipe that holds one byte: every read of the client's gets one.
    let (client, mut server) = tokio::io::duplex(1);
    let serve = tokio::spawn(async move {
        let request = read_post(&mut server).await;
        server.write_all(CHUNKED).await.unwrap();
        request
    });
    let (exchange, _) = exchange_on(Connection::new(client), post()).await.unwrap();
    assert_eq!(exchange, exchanged(200, &[("transfer-encoding", "chunked")], b"hello world, streamed", Ok(true)));
    assert_eq!(serve.await.unwrap(), encode(&post()));
}

#[tokio::test]
async fn interim_responses_are_passed_over() {
    let response = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n\
        HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
    assert_eq!(run_whole(response).await, Ok(exchanged(200, &[("content-length", "2")], b"ok", Ok(true))));
    // 101 is final: what follows it is another protocol's.
    let switched = b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\nframes";
    assert_eq!(run_whole(switched).await, Ok(exchanged(101, &[("upgrade", "websocket")], b"", Ok(false))));
}

#[tokio::test]
async fn a_204_a_304_and_an_answer_to_head_have_no_body() {
    let no_content = b"HTTP/1.1 204 No Content\r\ncontent-length: 7\r\n\r\n";
    assert_eq!(run_whole(no_content).await, Ok(exchanged(204, &[("content-length", "7")], b"", Ok(true))));
    let not_modified = b"HTTP/1.1 304 Not Modified\r\n\r\n";
    assert_eq!(run_whole(not_modified).await, Ok(exchanged(304, &[], b"", Ok(true))));
    let conn =
        Connection::new(Scripted::new(vec![b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n".to_vec()], End::Close));
    let head = Request::head("/").header(HOST, "provider.test").body(Bytes::new()).unwrap();
    let (exchange, _) = exchange_on(conn, head).await.unwrap();
    assert_eq!(exchange, exchanged(200, &[("content-length", "9")], b"", Ok(true)));
}

#[tokio::test]
async fn a_body_without_a_length_runs_to_the_close_and_its_connection_is_not_reused() {
    let pieces = vec![b"HTTP/1.1 200 OK\r\n\r\nfirst ".to_vec(), b"second".to_vec()];
    assert_eq!(run(pieces).await, Ok(exchanged(200, &[], b"first second", Ok(false))));
    // Another final coding than chunked: to the close too.
    let gzip = b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n\x1f\x8b";
    assert_eq!(run_whole(gzip).await, Ok(exchanged(200, &[("transfer-encoding", "gzip")], b"\x1f\x8b", Ok(false))));
    // Chunked last: chunks.
    let chunked =
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\ntransfer-encoding: Chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n";
    let expected = exchanged(200, &[("transfer-encoding", "gzip"), ("transfer-encoding", "Chunked")], b"z", Ok(true));
    assert_eq!(run_whole(chunked).await, Ok(expected));
}

#[tokio::test]
async fn chunks_beside_a_content_length_frame_the_body_but_the_connection_is_not_reused() {
    let both = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    let expected = exchanged(200, &[("content-length", "100"), ("transfer-encoding", "chunked")], b"ok", Ok(false));
    assert_eq!(run_whole(both).await, Ok(expected));
}

#[tokio::test]
async fn connection_close_is_not_reused() {
    for close in ["close", "Close", "keep-alive, close"] {
        let response = format!("HTTP/1.1 200 OK\r\nconnection: {close}\r\ncontent-length: 2\r\n\r\nok");
        let expected = exchanged(200, &[("connection", close), ("content-length", "2")], b"ok", Ok(false));
        assert_eq!(run_whole(response.as_bytes()).await, Ok(expected), "{close}");
    }
}

#[tokio::test]
async fn http_1_0_is_reused_only_with_keep_alive() {
    let mut expected = exchanged(200, &[("content-length", "2")], b"ok", Ok(false));
    expected.version = Version::HTTP_10;
    assert_eq!(run_whole(b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok").await, Ok(expected));

    let kept = b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 2\r\n\r\nok";
    let mut expected = exchanged(200, &[("connection", "Keep-Alive"), ("content-length", "2")], b"ok", Ok(true));
    expected.version = Version::HTTP_10;
    assert_eq!(run_whole(kept).await, Ok(expected));

    let mut expected = exchanged(200, &[], b"to the close", Ok(false));
    expected.version = Version::HTTP_10;
    assert_eq!(run_whole(b"HTTP/1.0 200 OK\r\n\r\nto the close").await, Ok(expected));

    let chunked = b"HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n";
    assert_eq!(run_whole(chunked).await, Err("HTTP/1.0 response with a Transfer-Encoding".into()));
}

#[tokio::test]
async fn bytes_after_the_body_keep_the_connection_from_reuse() {
    let extra = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n";
    assert_eq!(run_whole(extra).await, Ok(exchanged(200, &[("content-length", "2")], b"ok", Ok(false))));
    let after_chunks = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n\r\n";
    assert_eq!(
        run_whole(after_chunks).await,
        Ok(exchanged(200, &[("transfer-encoding", "chunked")], b"ok", Ok(false)))
    );
}

#[tokio::test]
async fn a_close_before_any_byte_of_a_head_is_the_keep_alive_race() {
    let closed = Connection::new(Scripted::new(vec![], End::Close)).send(post()).await.err().unwrap();
    assert!(closed.is_closed_before_head());
    assert_eq!(closed.to_string(), "connection closed before a response head");
    assert!(std::error::Error::source(&closed).is_none());

    let reset = Connection::new(Scripted::new(vec![], End::Reset)).send(post()).await.err().unwrap();
    assert!(reset.is_closed_before_head());
    let source = std::error::Error::source(&reset).unwrap().downcast_ref::<io::Error>().unwrap();
    assert_eq!(source.kind(), io::ErrorKind::ConnectionReset);

    // A write into a connection the server closed.
    let mut broken = Scripted::new(vec![], End::Close);
    broken.write_error = Some(io::ErrorKind::BrokenPipe);
    assert!(Connection::new(broken).send(post()).await.err().unwrap().is_closed_before_head());
    let mut refused = Scripted::new(vec![], End::Close);
    refused.write_error = Some(io::ErrorKind::PermissionDenied);
    let error = Connection::new(refused).send(post()).await.err().unwrap();
    assert!(matches!(error, Error::Io(ref e) if e.kind() == io::ErrorKind::PermissionDenied), "{error:?}");
}

#[tokio::test]
async fn a_close_or_reset_in_the_middle_of_a_head_is_not_the_race() {
    let error = run(vec![b"HTTP/1.1 200 OK\r\nContent-".to_vec()]).await;
    assert_eq!(error, Err("connection closed in the middle of a response head".into()));
    // An interim response shows the server had the request.
    assert_eq!(run(vec![b"HTTP/1.1 100 Continue\r\n\r\n".to_vec()]).await, error);
    let reset = Connection::new(Scripted::new(vec![b"HTTP/1.1".to_vec()], End::Reset)).send(post()).await;
    let reset = reset.err().unwrap();
    assert!(!reset.is_closed_before_head());
    assert!(matches!(reset, Error::Io(ref e) if e.kind() == io::ErrorKind::ConnectionReset), "{reset:?}");
}

#[tokio::test]
async fn a_close_in_the_middle_of_a_body_is_an_error() {
    let cut = "connection closed before the end of the response body";
    let length = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhello";
    assert_eq!(run_whole(length).await, Ok(exchanged(200, &[("content-length", "10")], b"hello", Err(cut))));
    let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    for (rest, received) in [
        ("a\r\nhello", "hello"),
        ("5\r\nhello", "hello"),
        ("5\r\nhello\r\n", "hello"),
        ("5\r\nhello\r\n1", "hello"),
        ("5\r\nhello\r\n0\r\n", "hello"),
        ("5\r\nhello\r\n0\r\nx-trailer: 1\r\n", "hello"),
        ("", ""),
    ] {
        let response = format!("{chunked}{rest}");
        let expected = exchanged(200, &[("transfer-encoding", "chunked")], received.as_bytes(), Err(cut));
        assert_eq!(run_whole(response.as_bytes()).await, Ok(expected), "{rest:?}");
    }
}

#[tokio::test]
async fn an_invalid_chunk_size_line_is_an_error() {
    let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    for (line, error) in [
        ("zz\r\n", "invalid chunk size line"),
        ("\r\n", "invalid chunk size line"),
        (" 5\r\n", "invalid chunk size line"),
        ("5\n", "invalid chunk size line"),
        ("5 x\r\n", "invalid chunk size line"),
        ("5;a\rb\r\n", "invalid chunk size line"),
        ("-5\r\n", "invalid chunk size line"),
        ("10000000001\r\n", "chunk size over 1099511627776 bytes"),
        ("ffffffffffffffffffff\r\n", "chunk size over 1099511627776 bytes"),
    ] {
        let response = format!("{chunked}{line}hello\r\n0\r\n\r\n");
        let expected = exchanged(200, &[("transfer-encoding", "chunked")], b"", Err(error));
        assert_eq!(run_whole(response.as_bytes()).await, Ok(expected), "{line:?}");
    }
    let long = format!("{chunked}5;{}\r\nhello\r\n0\r\n\r\n", "x".repeat(MAX_CHUNK_LINE));
    let expected = exchanged(200, &[("transfer-encoding", "chunked")], b"", Err("chunk size line over 4096 bytes"));
    assert_eq!(run_whole(long.as_bytes()).await, Ok(expected));
}

#[test]
fn chunk_sizes_are_read_in_hexadecimal_up_to_the_bound() {
    assert_eq!(parse_chunk_size(b"0\r").unwrap(), 0);
    assert_eq!(parse_chunk_size(b"1aF\r").unwrap(), 0x1af);
    assert_eq!(parse_chunk_size(b"000000000000000000000005\r").unwrap(), 5);
    assert_eq!(parse_chunk_size(b"5 \t;name=\"quoted value\"\r").unwrap(), 5);
    assert_eq!(parse_chunk_size(b"10000000000\r").unwrap(), MAX_CHUNK_SIZE);
    assert!(matches!(parse_chunk_size(b"10000000001\r"), Err(Error::ChunkSizeOverflow)));
    assert!(matches!(parse_chunk_size(b"5"), Err(Error::InvalidChunkSize)));
}

#[tokio::test]
async fn chunk_data_must_end_in_crlf() {
    let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
    for after in ["X\r\n0\r\n\r\n", "\n0\r\n\r\n", "\rX0\r\n\r\n"] {
        let response = format!("{chunked}5\r\nhello{after}");
        let expected =
            exchanged(200, &[("transfer-encoding", "chunked")], b"hello", Err("missing CRLF after chunk data"));
        assert_eq!(run_whole(response.as_bytes()).await, Ok(expected), "{after:?}");
    }
}

#[tokio::test]
async fn trailers_are_bounded_and_end_in_crlf() {
    let chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n";
    let large = format!("{chunked}x-trailer: {}\r\n\r\n", "x".repeat(MAX_TRAILERS));
    let expected = exchanged(200, &[("transfer-encoding", "chunked")], b"ok", Err("trailers over 16384 bytes"));
    assert_eq!(run_whole(large.as_bytes()).await, Ok(expected));
    let bare = format!("{chunked}x-trailer: 1\n\r\n");
    let expected = exchanged(200, &[("transfer-encoding", "chunked")], b"ok", Err("trailer line not ended by CRLF"));
    assert_eq!(run_whole(bare.as_bytes()).await, Ok(expected));
}

#[tokio::test]
async fn content_lengths_must_agree_and_be_numbers() {
    let invalid = Err("invalid or conflicting Content-Length".to_string());
    for fields in [
        "content-length: 5\r\ncontent-length: 6",
        "content-length: 5, 6",
        "content-length: +5",
        "content-length: -1",
        "content-length: 5x",
        "content-length: ",
        "content-length: 99999999999999999999",
    ] {
        let response = format!("HTTP/1.1 200 OK\r\n{fields}\r\n\r\nhello");
        assert_eq!(run_whole(response.as_bytes()).await, invalid, "{fields}");
    }
    let repeated = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\nContent-Length: 5, 5\r\n\r\nhello";
    let expected = exchanged(200, &[("content-length", "5"), ("content-length", "5, 5")], b"hello", Ok(true));
    assert_eq!(run_whole(repeated).await, Ok(expected));
}

#[tokio::test]
async fn a_head_over_the_limit_is_an_error() {
    // Just under the limit: the buffer grows to take it.
    let value = "v".repeat(MAX_HEAD - 64);
    let response = format!("HTTP/1.1 200 OK\r\nx-large: {value}\r\ncontent-length: 2\r\n\r\nok");
    let expected = exchanged(200, &[("x-large", value.as_str()), ("content-length", "2")], b"ok", Ok(true));
    assert_eq!(run_whole(response.as_bytes()).await, Ok(expected));
    let too_large = format!("HTTP/1.1 200 OK\r\nx-large: {}\r\n\r\n", "v".repeat(MAX_HEAD));
    assert_eq!(run_whole(too_large.as_bytes()).await, Err("response head over 65536 bytes".into()));
    // An endless head fails at the limit, not at the close.
    let endless = format!("HTTP/1.1 200 OK\r\nx-large: {}", "v".repeat(MAX_HEAD)).into_bytes();
    let endless = Connection::new(Scripted::new(vec![endless], End::Silent)).send(post());
    let error = tokio::time::timeout(Duration::from_secs(5), endless).await.unwrap().err().unwrap();
    assert!(matches!(error, Error::HeadTooLarge), "{error:?}");
}

#[tokio::test]
async fn a_head_over_the_field_count_is_an_error() {
    let fields = |n: usize| (0..n).map(|i| format!("x-{i}: {i}\r\n")).collect::<String>();
    let most = format!("HTTP/1.1 204 No Content\r\n{}\r\n", fields(MAX_HEADERS));
    assert_eq!(run_whole(most.as_bytes()).await.unwrap().headers.len(), MAX_HEADERS);
    let too_many = format!("HTTP/1.1 204 No Content\r\n{}\r\n", fields(MAX_HEADERS + 1));
    assert_eq!(run_whole(too_many.as_bytes()).await, Err("response head with over 128 header fields".into()));
}

#[tokio::test]
async fn status_lines_and_fields_are_read_as_httparse_reads_them() {
    let no_reason = b"HTTP/1.1 503\r\ncontent-length: 0\r\n\r\n";
    assert_eq!(run_whole(no_reason).await, Ok(exchanged(503, &[("content-length", "0")], b"", Ok(true))));
    let spaced = b"HTTP/1.1 200 \r\nx-a:\t value \t\r\nx-b:\r\ncontent-length: 0\r\n\r\n";
    let expected = exchanged(200, &[("x-a", "value"), ("x-b", ""), ("content-length", "0")], b"", Ok(true));
    assert_eq!(run_whole(spaced).await, Ok(expected));
    let status = Err("invalid response head: malformed status line".to_string());
    for line in
        ["HTTP/2 200 OK", "HTTP/1.2 200 OK", "HTTP/1.1  200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 099 X", "http/1.1 200"]
    {
        assert_eq!(run_whole(format!("{line}\r\n\r\n").as_bytes()).await, status, "{line}");
    }
    let field = Err("invalid response head: malformed header line".to_string());
    for line in ["x-a : 1", " x-a: 1", "x-a 1", ": 1", "x-a: 1\r2", "x\u{1}: 1"] {
        let response = format!("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n{line}\r\n\r\n");
        assert_eq!(run_whole(response.as_bytes()).await, field, "{line:?}");
    }
}

#[tokio::test]
async fn a_request_is_written_in_origin_form_with_its_length() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serve = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let request = read_request(&mut sock).await.unwrap();
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await.unwrap();
        request
    });
    let request = Request::post("https://ignored.test/v1/chat/completions?stream=true")
        .header(HOST, "provider.test:8443")
        .header("authorization", "Bearer k")
        .header(CONTENT_TYPE, "application/json")
        // The body's own length replaces it.
        .header(CONTENT_LENGTH, "999")
        .body(Bytes::from_static(br#"{"model":"m"}"#))
        .unwrap();
    let conn = Connection::new(TcpStream::connect(address).await.unwrap());
    let (exchange, _) = exchange_on(conn, request).await.unwrap();
    assert_eq!(exchange, exchanged(200, &[("content-length", "2")], b"ok", Ok(true)));
    let expected = "POST /v1/chat/completions?stream=true HTTP/1.1\r\nhost: provider.test:8443\r\n\
        authorization: Bearer k\r\ncontent-type: application/json\r\ncontent-length: 13\r\n\r\n{\"model\":\"m\"}";
    assert_eq!(String::from_utf8(serve.await.unwrap()).unwrap(), expected);
}

#[tokio::test]
async fn the_host_is_the_uris_authority_when_the_request_has_none() {
    let response = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_vec();
    let conn = Connection::new(Scripted::new(vec![response.clone()], End::Close));
    let request = Request::post("http://provider.test:8080").body(Bytes::new()).unwrap();
    let (_, body) = conn.send(request).await.unwrap();
    let written = body.into_reusable().unwrap().into_inner().written;
    assert_eq!(written, b"POST / HTTP/1.1\r\nhost: provider.test:8080\r\ncontent-length: 0\r\n\r\n");

    let conn = Connection::new(Scripted::new(vec![response], End::Close));
    let request = Request::get("/models?page=2").header(HOST, "p.test").body(Bytes::new()).unwrap();
    let (_, body) = conn.send(request).await.unwrap();
    let written = body.into_reusable().unwrap().into_inner().written;
    assert_eq!(written, b"GET /models?page=2 HTTP/1.1\r\nhost: p.test\r\n\r\n");
}

#[tokio::test]
async fn a_connection_carries_exchanges_one_after_another() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serve = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let first = read_request(&mut sock).await.unwrap();
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfirst").await.unwrap();
        let second = read_request(&mut sock).await.unwrap();
        sock.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n6\r\nsecond\r\n0\r\n\r\n").await.unwrap();
        let third = read_request(&mut sock).await.unwrap();
        sock.write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 5\r\n\r\nthird").await.unwrap();
        (first, second, third, read_request(&mut sock).await)
    });
    let conn = Connection::new(TcpStream::connect(address).await.unwrap());
    let (first, conn) = exchange_on(conn, post()).await.unwrap();
    assert_eq!(first, exchanged(200, &[("content-length", "5")], b"first", Ok(true)));
    let (second, conn) = exchange_on(conn.unwrap(), post()).await.unwrap();
    assert_eq!(second, exchanged(200, &[("transfer-encoding", "chunked")], b"second", Ok(true)));
    let (third, conn) = exchange_on(conn.unwrap(), post()).await.unwrap();
    assert_eq!(third, exchanged(200, &[("connection", "close"), ("content-length", "5")], b"third", Ok(false)));
    assert!(conn.is_none());
    let (first, second, third, after) = serve.await.unwrap();
    for request in [first, second, third] {
        assert_eq!(request, encode(&post()));
    }
    assert_eq!(after, None, "the connection closed after `Connection: close`");
}

#[tokio::test]
async fn an_idle_connection_closed_by_the_server_is_seen_closed() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (close, closing) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        read_request(&mut sock).await.unwrap();
        sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await.unwrap();
        let _ = closing.await;
    });
    let conn = Connection::new(TcpStream::connect(address).await.unwrap());
    let (_, conn) = exchange_on(conn, post()).await.unwrap();
    let mut conn = conn.unwrap();
    assert_eq!(poll_fn(|cx| conn.poll_closed(cx)).now_or_never(), None, "open and silent");
    close.send(()).unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(5), poll_fn(|cx| conn.poll_closed(cx))).await;
    assert_eq!(closed, Ok(()));
}

#[tokio::test]
async fn an_idle_connection_holds_no_buffer() {
    let conn = Connection::new(Scripted::new(vec![LENGTH.to_vec()], End::Close));
    let (_, mut body) = conn.send(post()).await.unwrap();
    // The first read's buffer, less the head handed out of it.
    assert_eq!(body.conn.buf.capacity(), INITIAL_READ - (LENGTH.len() - b"hello".len()));
    assert_eq!(read_body(&mut body).await.0, b"hello");
    let idle = body.into_reusable().unwrap();
    assert_eq!(idle.buf.capacity(), 0);
    assert_eq!(idle.read_size, INITIAL_READ);
}

#[tokio::test]
async fn a_chunk_is_handed_out_as_its_pieces_arrive() {
    let (client, mut server) = tokio::io::duplex(64 * 1024);
    server.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n").await.unwrap();
    let (_, mut body) = Connection::new(client).send(post()).await.unwrap();
    let within = Duration::from_secs(5);
    for (sent, handed_out) in [("a\r\nhel", "hel"), ("lowor", "lowor"), ("ld\r\n0\r\n\r\n", "ld")] {
        assert!(body.next_chunk().now_or_never().is_none(), "nothing has arrived yet");
        server.write_all(sent.as_bytes()).await.unwrap();
        let piece = tokio::time::timeout(within, body.next_chunk()).await.unwrap().unwrap();
        assert_eq!(piece.as_deref(), Some(handed_out.as_bytes()));
    }
    assert_eq!(body.next_chunk().await.unwrap(), None);
    assert!(body.into_reusable().is_some());
    assert_eq!(read_post(&mut server).await, encode(&post()));
}

#[tokio::test]
async fn buffered_data_is_handed_out_without_a_read() {
    let response = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc".to_vec();
    let conn = Connection::new(Scripted::new(vec![response], End::Silent));
    let (_, mut body) = conn.send(post()).await.unwrap();
    let reads = body.conn.io.reads;
    let first = body.next_chunk().now_or_never().unwrap().unwrap();
    assert_eq!(first.as_deref(), Some(&b"hello"[..]));
    let second = body.next_chunk().now_or_never().unwrap().unwrap();
    assert_eq!(second.as_deref(), Some(&b"abc"[..]));
    assert_eq!(body.conn.io.reads, reads, "both came from the buffer");
    // Then it waits for the CRLF after the data.
    assert!(body.next_chunk().now_or_never().is_none());
    assert_eq!(body.conn.io.reads, reads + 1);
}

#[tokio::test]
async fn reads_grow_to_the_bound_for_a_fast_body_and_shrink_back_when_it_slows() {
    let head = b"HTTP/1.1 200 OK\r\ncontent-length: 1049576\r\n\r\n";
    let mut burst = head.to_vec();
    burst.extend(std::iter::repeat_n(b'x', 1 << 20));
    let mut pieces = vec![burst];
    pieces.extend((0..10).map(|_| vec![b'y'; 100]));
    let conn = Connection::new(Scripted::new(pieces, End::Close));
    let (_, mut body) = conn.send(post()).await.unwrap();
    let mut sizes = Vec::new();
    while let Some(piece) = body.next_chunk().await.unwrap() {
        sizes.push(piece.len());
    }
    let first = INITIAL_READ - head.len();
    assert_eq!(sizes[..6], [first, 8192, 16384, 32768, MAX_READ, MAX_READ]);
    assert!(sizes.iter().all(|&s| s <= MAX_READ));
    assert_eq!(sizes.iter().sum::<usize>(), (1 << 20) + 1000);
    assert_eq!(sizes[sizes.len() - 10..], [100; 10]);
    assert_eq!(body.conn.read_size, INITIAL_READ);
    assert!(body.into_reusable().is_some());
}

#[test]
fn the_read_size_doubles_when_filled_and_halves_when_barely_used() {
    assert_eq!(next_read_size(INITIAL_READ, INITIAL_READ), 2 * INITIAL_READ);
    assert_eq!(next_read_size(MAX_READ, MAX_READ), MAX_READ);
    assert_eq!(next_read_size(MAX_READ, MAX_READ / 4 - 1), MAX_READ / 2);
    assert_eq!(next_read_size(MAX_READ, MAX_READ / 4), MAX_READ);
    assert_eq!(next_read_size(INITIAL_READ, 1), INITIAL_READ);
}

#[test]
fn errors_say_what_failed_and_keep_their_cause() {
    let io = Error::Io(io::Error::new(io::ErrorKind::ConnectionReset, "reset by peer"));
    assert_eq!(io.to_string(), "connection I/O failed");
    assert_eq!(std::error::Error::source(&io).unwrap().to_string(), "reset by peer");
    assert!(!io.is_closed_before_head());
    assert_eq!(Error::ClosedInBody.to_string(), "connection closed before the end of the response body");
    assert_eq!(Error::InvalidHead("status line").to_string(), "invalid response head: malformed status line");
}

#[test]
fn a_connection_and_its_body_are_small() {
    use std::mem::size_of;
    // The stream, the buffer's handle (its allocation is on the heap, none while idle) and the
    // read size; then the framing and whether the connection is kept.
    assert_eq!(size_of::<Connection<TcpStream>>(), size_of::<TcpStream>() + 40);
    assert_eq!(size_of::<Body<TcpStream>>(), size_of::<Connection<TcpStream>>() + 24);
}
