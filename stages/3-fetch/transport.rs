//! The HTTP transport: a pool of connections per provider, each opened when a request finds
//! none idle and kept for the next, and a launch that hands a built request to an idle one at
//! once.
//!
//! A request takes the most recently used idle connection that is still open, and opens a new
//! one when none is idle, inside its measured time; nothing caps how many of a provider's
//! requests are in flight, so a provider has as many HTTP/1.1 connections as it had requests in
//! flight at once. HTTP/2 multiplexes every request on one connection (so the server's limit on
//! concurrent streams, if it sets one, bounds them: hyper queues the rest on the connection,
//! inside their measured time). An HTTP/1.1 connection goes back to the idle pool only when its
//! exchange ended cleanly: the [`ResponseBody`] holds it and hands it back when the body has been
//! read to its end; a body dropped before its end (a deadline, a size cap, a transport error, a
//! reader that stopped) drops its connection, which then closes, so no later request meets the
//! rest of an abandoned answer. Idle connections beyond [`MAX_IDLE`] are closed, the least
//! recently used first.
//!
//! HTTP/1.1 is spoken by [`h1`], inferbench's own client connection: the exchange's task writes
//! the request and reads the response from the socket itself, with no task, channel or write
//! buffer of the connection's own. hyper's HTTP/1 client, which ib-fetch used before, held
//! about 25 KB a connection (a dispatch task and its channel, an 8 KiB header buffer, an 8 KiB
//! read buffer) and passed every chunk of a body from the connection's task to the reader's;
//! a stream open at the slow provider's peak now holds its socket and a read buffer of a few
//! KiB. HTTP/2 (negotiated by TLS's ALPN) is hyper's.
//!
//! The closed-loop workflow never has more than one request of a provider in flight (one per
//! round, rounds one after the other), so its pool never holds more than one connection: a
//! round's request takes the connection the previous round's handed back when its body ended.
//! Handing a request to an idle connection takes it out of the pool, well under a microsecond;
//! the bytes are written when the exchange first runs, after the launch loop yields. A
//! pooled client (reqwest's, which ib-fetch used before hyper) spent about 16 µs a request on
//! checkout and its service stack, 16 ms from the first to the last send of a
//! thousand-provider round, and returned each connection to its pool through a task of its own
//! between rounds.
//!
//! Connections are direct: no proxy is consulted, as a proxy's latency would be measured as the
//! provider's. HTTP/2 is spoken only where TLS negotiated it by ALPN; plain http:// speaks
//! HTTP/1.1 (no prior knowledge is assumed).
use bytes::Bytes;
use http::header::{HeaderValue, HOST};
use http::Uri;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::{http2, TrySendError};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A request's body: the bytes, reference-counted (a request kept to send again shares them).
pub type Body = Bytes;
pub type Request = http::Request<Body>;
pub type Response = http::Response<ResponseBody>;

/// A request's send, from its launch to its response head.
pub type Sending = Pin<Box<dyn Future<Output = Result<Response, SendError>> + Send>>;

/// The most idle HTTP/1.1 connections a provider keeps; one handed back past it closes the
/// least recently used. The idle pool holds what a fall in concurrency leaves behind: while the
/// arrival rate holds, each connection handed back is soon taken by a later arrival, so few are
/// idle at once; when it falls (a burst over, a load step draining thousands of streams), the
/// connections stay idle for a rise that may never come, each holding a socket and its file
/// descriptor, the kernel's socket state and a TLS session. 256 keeps that small whatever the
/// peak was, and still spares a rise of up to 256 requests in flight the connects (measured in
/// its requests' times) a first rise costs. The closed-loop workflow keeps one.
pub const MAX_IDLE: usize = 256;

/// Why a request got no response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// No connection could be opened: the name, TCP, TLS or the HTTP handshake failed.
    Connect(String),
    /// No connection could be opened because this machine ran out of something of its own
    /// (file descriptors, local ports, socket buffers, memory): the client's failure.
    ClientResource(String),
    /// The request could not be built, or the connection failed before a response head.
    Request(String),
}

/// Where a provider's requests go, parsed once.
struct Target {
    /// Present for https://: the TLS client and the name its certificate must carry.
    tls: Option<(tokio_rustls::TlsConnector, ServerName<'static>)>,
    /// The host to connect to (an IPv6 address without its brackets) and the port.
    host: String,
    port: u16,
    /// HTTP/1.1's `Host`: the authority without a default port.
    host_header: HeaderValue,
    /// HTTP/1.1's request target (`/path?query`); HTTP/2 sends the absolute URI.
    origin: Uri,
    absolute: Uri,
}

/// One provider's connections. Clones share them.
#[derive(Clone)]
pub struct Transport {
    target: Arc<Target>,
    pool: Arc<Mutex<Pool>>,
}

/// The byte stream under an HTTP/1.1 connection.
pub enum Io {
    Plain(TcpStream),
    /// Boxed: a TLS session is several KiB, a plain connection a few words.
    Tls(Box<tokio_rustls::client::TlsStream<TcpStream>>),
}

impl AsyncRead for Io {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Io::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Io::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

/// An HTTP/1.1 connection of inferbench's own client.
type H1 = h1::Connection<Io>;

/// A provider's connections that no request holds.
struct Pool {
    /// The HTTP/2 connection every request is multiplexed on, once one is open; it stays here
    /// while requests use it, until it closes.
    shared: Option<http2::SendRequest<Full<Bytes>>>,
    /// The idle HTTP/1.1 connection handed back last, beside the lock: the closed loop's one
    /// connection, which a hand-over (and [`Transport::warm`]) then finds without reaching for
    /// another allocation. A connection in use is in no pool: its request's body holds it.
    last: Option<H1>,
    /// The other idle HTTP/1.1 connections, the most recently handed back last; empty when
    /// `last` is.
    older: VecDeque<H1>,
    /// [`MAX_IDLE`], but for the tests.
    max_idle: usize,
}

/// A connection, in the HTTP version its handshake settled.
enum Sender {
    H1(H1),
    H2(http2::SendRequest<Full<Bytes>>),
}

type Sent =
    Pin<Box<dyn Future<Output = Result<http::Response<Incoming>, TrySendError<http::Request<Full<Bytes>>>>> + Send>>;

fn send_h2(sender: &mut http2::SendRequest<Full<Bytes>>, request: Request) -> Sent {
    Box::pin(sender.try_send_request(request.map(Full::new)))
}

/// Whether an idle connection is still open: the server has neither closed it (its keep-alive
/// timeout) nor written to it. Asked without waiting; a connection found closed is dropped.
fn still_open(connection: &mut H1) -> bool {
    connection.poll_closed(&mut Context::from_waker(std::task::Waker::noop())).is_pending()
}

impl Pool {
    /// Where `request` goes: queued at once on the HTTP/2 connection, or given the most recently
    /// handed back HTTP/1.1 connection that is still open (taken out of the pool, its request's
    /// to hold), or a new connection. Closed connections met on the way are dropped.
    fn take(&mut self, request: Request) -> Pending {
        if let Some(shared) = &mut self.shared {
            if shared.is_ready() {
                return Pending::Kept(send_h2(shared, request));
            }
            self.shared = None;
        }
        while let Some(mut connection) = self.last.take() {
            self.last = self.older.pop_back();
            if still_open(&mut connection) {
                return Pending::Idle(connection, request);
            }
        }
        Pending::New(request)
    }

    /// Takes back a connection whose exchange ended cleanly; gives back what is not kept (the
    /// least recently used one past the bound, an HTTP/2 connection when another is shared
    /// already), for the caller to drop outside the lock.
    fn put(&mut self, sender: Sender) -> Option<Sender> {
        match sender {
            Sender::H1(connection) => {
                if let Some(previous) = self.last.replace(connection) {
                    self.older.push_back(previous);
                }
                (self.older.len() >= self.max_idle).then(|| self.older.pop_front().map(Sender::H1)).flatten()
            }
            Sender::H2(sender) if sender.is_closed() || self.shared.as_ref().is_some_and(|s| !s.is_closed()) => {
                Some(Sender::H2(sender))
            }
            Sender::H2(sender) => self.shared.replace(sender).map(Sender::H2),
        }
    }

    /// How many HTTP/1.1 connections are idle.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.older.len() + usize::from(self.last.is_some())
    }
}

/// A response body, and the HTTP/1.1 connection it comes on: the body read to its end (its end
/// seen, not only its last byte) hands the connection back to its pool; a body that fails, or
/// is dropped before its end, drops the connection, which closes. (An HTTP/2 body holds no
/// connection: the shared one stays shared, and a body dropped early resets its own stream.)
pub struct ResponseBody {
    inner: Inner,
}

enum Inner {
    /// `None` once the body ended (its connection handed back or dropped).
    H1(Option<h1::Body<Io>>, Arc<Mutex<Pool>>),
    H2(Incoming),
}

/// Why a response body could not be read to its end.
#[derive(Debug)]
pub enum BodyError {
    H1(h1::Error),
    H2(hyper::Error),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::H1(e) => e.fmt(f),
            BodyError::H2(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BodyError::H1(e) => e.source(),
            BodyError::H2(e) => e.source(),
        }
    }
}

impl ResponseBody {
    /// Whether the body's data is decoded by a task of its own (HTTP/2's connection task), so
    /// that a reader taking what has arrived must yield to it between pieces; an HTTP/1.1 body
    /// is read from the socket by its reader.
    pub fn decoded_elsewhere(&self) -> bool {
        matches!(self.inner, Inner::H2(_))
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::H1(body, _) => {
                f.debug_struct("ResponseBody").field("http", &"1.1").field("open", &body.is_some()).finish()
            }
            Inner::H2(incoming) => f.debug_struct("ResponseBody").field("http", &"2").field("inner", incoming).finish(),
        }
    }
}

fn lock(pool: &Mutex<Pool>) -> MutexGuard<'_, Pool> {
    pool.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Transport {
    /// The transport of `endpoint`, an http:// or https:// URL; `tls` is the TLS client
    /// configuration an https:// endpoint is reached with.
    pub fn new(endpoint: &str, tls: Arc<rustls::ClientConfig>) -> Result<Self, String> {
        Self::with_max_idle(endpoint, tls, MAX_IDLE)
    }

    fn with_max_idle(endpoint: &str, tls: Arc<rustls::ClientConfig>, max_idle: usize) -> Result<Self, String> {
        let uri: Uri = endpoint.parse().map_err(|e| format!("`{endpoint}` is not a URL: {e}"))?;
        let secure = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err(format!("`{endpoint}` is not an http:// or https:// URL")),
        };
        let authority = uri.authority().ok_or_else(|| format!("`{endpoint}` names no host"))?;
        let host = authority.host().trim_start_matches('[').trim_end_matches(']').to_string();
        if host.is_empty() {
            return Err(format!("`{endpoint}` names no host"));
        }
        let default_port = if secure { 443 } else { 80 };
        let port = authority.port_u16().unwrap_or(default_port);
        let host_header = match authority.port_u16() {
            Some(p) if p != default_port => format!("{}:{p}", authority.host()),
            _ => authority.host().to_string(),
        };
        let host_header = HeaderValue::from_str(&host_header).map_err(|e| format!("`{endpoint}`: {e}"))?;
        let origin: Uri = uri.path_and_query().map_or("/", |p| p.as_str()).parse().map_err(|e| format!("{e}"))?;
        let tls = if secure {
            let name = ServerName::try_from(host.clone()).map_err(|e| format!("`{endpoint}`: {e}"))?;
            Some((tokio_rustls::TlsConnector::from(tls), name))
        } else {
            None
        };
        let target = Target { tls, host, port, host_header, origin, absolute: uri };
        let pool = Pool { shared: None, last: None, older: VecDeque::new(), max_idle: max_idle.max(1) };
        Ok(Transport { target: Arc::new(target), pool: Arc::new(Mutex::new(pool)) })
    }

    /// A POST to this endpoint: for plain http:// (always HTTP/1.1) in HTTP/1.1's form, with
    /// its `Host` and the request target alone, so that nothing is rewritten at the launch.
    pub fn post(&self) -> http::request::Builder {
        let t = &*self.target;
        if t.tls.is_some() {
            return http::Request::post(t.absolute.clone());
        }
        http::Request::post(t.origin.clone()).header(HOST, t.host_header.clone())
    }

    /// Reads the state a hand-over reads (the pool, and whether it holds a connection to take),
    /// so that a round's hand-overs find it in the cache: a round's exchanges leave little of a
    /// thousand connections' state there, and a cache miss per connection is most of a
    /// hand-over's cost. The hand-over asks again.
    pub fn warm(&self) -> bool {
        let pool = lock(&self.pool);
        pool.shared.as_ref().is_some_and(http2::SendRequest::is_ready) || pool.last.is_some()
    }

    /// Hands the request of `outgoing` to an idle connection of the provider when one is open
    /// (see [`Pool::take`]): queued at once on the shared HTTP/2 one, or an HTTP/1.1 one taken out
    /// of the pool for it. Otherwise its exchange opens a new connection, inside the request's
    /// measured time. Whatever happened stays in `outgoing`, for [`Transport::sending`].
    pub fn hand_over(&self, outgoing: &mut Outgoing) {
        if !matches!(outgoing.state, Pending::Unsent(_)) {
            return;
        }
        let mut pool = lock(&self.pool);
        let Pending::Unsent(request) = std::mem::replace(&mut outgoing.state, Pending::Moving) else {
            return;
        };
        outgoing.state = pool.take(request);
    }

    /// The send of `outgoing`, from its hand-over (made now if it was not) to its response head.
    pub fn sending(&self, mut outgoing: Outgoing) -> Sending {
        self.hand_over(&mut outgoing);
        let this = self.clone();
        let Outgoing { state, spare } = outgoing;
        match state {
            Pending::Kept(sent) => Box::pin(this.on_shared(sent, spare)),
            Pending::Idle(connection, request) => Box::pin(this.on_idle(connection, request, spare)),
            Pending::New(request) => Box::pin(this.send_on_new(request)),
            // Only while `hand_over` runs: a request it lost (a panic) never left.
            Pending::Unsent(_) | Pending::Moving => {
                Box::pin(std::future::ready(Err(SendError::Request("the request was lost before it was sent".into()))))
            }
        }
    }

    /// The exchange on an idle HTTP/1.1 connection, or, when the connection turns out to have
    /// closed before any response (see [`h1::Error::ClosedBeforeHead`]), on a new one.
    async fn on_idle(self, connection: H1, request: Request, spare: Request) -> Result<Response, SendError> {
        match connection.send(request).await {
            Ok((head, body)) => Ok(self.h1_response(head, body)),
            // The keep-alive race: the server closed the idle connection as the request went
            // out, so it never saw it. It goes again, as curl sends again on a reused
            // connection that yields nothing. The send time stays the first launch's, so the
            // new connection counts in the provider's latency, and a request that fails on the
            // new connection as well fails for good.
            Err(e) if e.is_closed_before_head() => Box::pin(self.send_on_new(spare)).await,
            Err(e) => Err(SendError::Request(error_text(&e))),
        }
    }

    /// The response to a request queued on the shared HTTP/2 connection, or, when that
    /// connection lost it (see [`reused_failure`]), to the same request on a new one.
    async fn on_shared(self, sent: Sent, spare: Request) -> Result<Response, SendError> {
        match sent.await {
            Ok(response) => Ok(h2_response(response)),
            Err(e) => Box::pin(self.send_on_new(reused_failure(e, spare)?)).await,
        }
    }

    /// Sends on a new connection; an HTTP/2 one is shared at once with the requests after.
    async fn send_on_new(self, request: Request) -> Result<Response, SendError> {
        match self.connect().await? {
            Sender::H1(connection) => match connection.send(request).await {
                Ok((head, body)) => Ok(self.h1_response(head, body)),
                Err(e) => Err(SendError::Request(error_text(&e))),
            },
            Sender::H2(mut sender) => {
                let sent = send_h2(&mut sender, request);
                let dropped = lock(&self.pool).put(Sender::H2(sender));
                drop(dropped);
                match sent.await {
                    Ok(response) => Ok(h2_response(response)),
                    Err(e) => Err(SendError::Request(error_text(&e.into_error()))),
                }
            }
        }
    }

    /// The response with its body holding the connection it came on, for the pool.
    fn h1_response(self, head: http::Response<()>, body: h1::Body<Io>) -> Response {
        head.map(|()| ResponseBody { inner: Inner::H1(Some(body), self.pool) })
    }

    /// How many HTTP/1.1 connections are idle.
    #[cfg(test)]
    fn idle(&self) -> usize {
        lock(&self.pool).idle()
    }

    /// Opens a connection: TCP with TCP_NODELAY, TLS for https://, and HTTP/2's handshake
    /// where TLS negotiated it (its task runs on the fetch's runtime until it closes).
    async fn connect(&self) -> Result<Sender, SendError> {
        let t = &*self.target;
        let shown = || format!("{}:{}", t.host, t.port);
        let tcp = TcpStream::connect((t.host.as_str(), t.port)).await.map_err(|e| {
            let message = format!("tcp connect to {}: {e}", shown());
            if is_client_resource(&e) {
                SendError::ClientResource(message)
            } else {
                SendError::Connect(message)
            }
        })?;
        tcp.set_nodelay(true).map_err(|e| SendError::Connect(format!("TCP_NODELAY on {}: {e}", shown())))?;
        let Some((connector, name)) = &t.tls else {
            return Ok(Sender::H1(h1::Connection::new(Io::Plain(tcp))));
        };
        let tls = connector
            .connect(name.clone(), tcp)
            .await
            .map_err(|e| SendError::Connect(format!("TLS handshake with {}: {}", shown(), error_text(&e))))?;
        if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            return Ok(Sender::H1(h1::Connection::new(Io::Tls(Box::new(tls)))));
        }
        let (sender, connection) = http2::Builder::new(TokioExecutor::new())
            // hyper's defaults let a server send 2 MiB per stream (5 MiB per connection)
            // before the client has read any: per stream, the most HTTP/1.1 reads at once.
            .initial_stream_window_size(READ_BUFFER_BYTES as u32)
            .initial_connection_window_size(16 * READ_BUFFER_BYTES as u32)
            .handshake(TokioIo::new(tls))
            .await
            .map_err(|e| SendError::Connect(format!("HTTP/2 handshake with {}: {}", shown(), error_text(&e))))?;
        tokio::spawn(async move {
            // Its errors reach the requests on it.
            let _ = connection.await;
        });
        Ok(Sender::H2(sender))
    }
}

fn h2_response(response: http::Response<Incoming>) -> Response {
    response.map(|incoming| ResponseBody { inner: Inner::H2(incoming) })
}

/// Whether a failure to connect is this machine's: out of file descriptors (EMFILE, ENFILE),
/// local ports (EADDRNOTAVAIL, EADDRINUSE), socket buffers (ENOBUFS) or memory (ENOMEM).
fn is_client_resource(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::EADDRNOTAVAIL | libc::EADDRINUSE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// What to do when a request on the shared HTTP/2 connection got no response: the request to
/// send once more on a new connection (one that was never written, or one whose connection
/// closed before any response head: hyper's "incomplete message"), or the failure to report.
fn reused_failure(mut error: TrySendError<http::Request<Full<Bytes>>>, spare: Request) -> Result<Request, SendError> {
    if error.take_message().is_some() {
        return Ok(spare);
    }
    let error = error.into_error();
    if error.is_incomplete_message() {
        Ok(spare)
    } else {
        Err(SendError::Request(error_text(&error)))
    }
}

/// A request to launch and a copy of it, made when the request is built (not in the launch
/// loop), for a kept connection that loses it.
pub struct Outgoing {
    state: Pending,
    spare: Request,
}

/// Where a request is between its building and its exchange.
enum Pending {
    /// Not handed over yet.
    Unsent(Request),
    /// Queued on the shared HTTP/2 connection.
    Kept(Sent),
    /// Given an idle HTTP/1.1 connection, taken out of the pool (held here, then by the
    /// response body); written when its exchange first runs.
    Idle(H1, Request),
    /// To send on a new connection.
    New(Request),
    /// Only inside [`Transport::hand_over`].
    Moving,
}

impl Outgoing {
    pub fn new(request: Request) -> Outgoing {
        // The body is reference-counted bytes: the copy shares it.
        let mut spare = http::Request::new(request.body().clone());
        *spare.method_mut() = request.method().clone();
        *spare.uri_mut() = request.uri().clone();
        *spare.version_mut() = request.version();
        *spare.headers_mut() = request.headers().clone();
        Outgoing { state: Pending::Unsent(request), spare }
    }
}

/// The most of a response body the transport reads at once, per stream: HTTP/1.1's largest
/// read ([`h1::MAX_READ`]), and HTTP/2's flow-control window per stream.
pub const READ_BUFFER_BYTES: usize = h1::MAX_READ;

/// The next data of a response body; trailers are passed over. An HTTP/1.1 body read to its
/// end hands its connection back to the pool; one that fails drops it.
pub async fn next_chunk(body: &mut ResponseBody) -> Result<Option<Bytes>, BodyError> {
    match &mut body.inner {
        Inner::H1(open, pool) => {
            let Some(reading) = open.as_mut() else { return Ok(None) };
            match reading.next_chunk().await {
                Ok(Some(data)) => Ok(Some(data)),
                Ok(None) => {
                    if let Some(connection) = open.take().and_then(h1::Body::into_reusable) {
                        let dropped = lock(pool).put(Sender::H1(connection));
                        drop(dropped);
                    }
                    Ok(None)
                }
                Err(e) => {
                    *open = None;
                    Err(BodyError::H1(e))
                }
            }
        }
        Inner::H2(incoming) => {
            while let Some(frame) = incoming.frame().await {
                if let Ok(data) = frame.map_err(BodyError::H2)?.into_data() {
                    return Ok(Some(data));
                }
            }
            Ok(None)
        }
    }
}

/// An error and its causes, `: `-joined.
pub fn error_text(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

pub mod h1;
#[cfg(test)]
mod tests;
