//! The HTTP transport: a pool of connections per provider, each opened when a request finds
//! none idle and kept for the next, and a launch that hands a built request to an idle one at
//! once.
//!
//! A request takes the most recently used idle connection that is ready, and opens a new one when
//! none is idle, inside its measured time; nothing caps how many of a provider's requests are in
//! flight, so a provider has as many HTTP/1.1 connections as it had requests in flight at once.
//! HTTP/2 multiplexes every request on one connection (so the server's limit on concurrent streams,
//! if it sets one, bounds them: hyper queues the rest on the connection, inside their measured
//! time). An HTTP/1.1 connection goes back to the idle pool only when its exchange ended cleanly:
//! the [`ResponseBody`] carries it (a [`Lease`]) and hands it back when the body has been read to
//! its end; a body dropped before its end (a deadline, a size cap, a transport error, a reader that
//! stopped) drops its connection, which then closes, so no later request meets the rest of an
//! abandoned answer. Idle connections beyond [`MAX_IDLE`] are closed, the least recently used
//! first.
//!
//! The closed-loop workflow never has more than one request of a provider in flight (one per
//! round, rounds one after the other), so its pool never holds more than one connection: a
//! round's request takes the connection the previous round's handed back when its body ended.
//! Handing a request to an idle connection is a channel send to the connection's task, about a
//! microsecond; the bytes are written when that task runs, after the launch loop yields. A
//! connection handed back whose task has not yet seen its exchange end (not ready yet) is
//! waited for rather than passed over for a new one. A pooled client (reqwest's, which
//! ib-fetch used before) spent about 16 µs a request on checkout and its service stack, 16 ms
//! from the first to the last send of a thousand-provider round, and returned each connection
//! to its pool through a task of its own between rounds.
//!
//! Connections are direct: no proxy is consulted, as a proxy's latency would be measured as the
//! provider's. HTTP/2 is spoken only where TLS negotiated it by ALPN; plain http:// speaks
//! HTTP/1.1 (no prior knowledge is assumed).
use bytes::Bytes;
use http::header::{HeaderValue, HOST};
use http::Uri;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::client::conn::{http1, http2, TrySendError};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{ready, Context, Poll};

pub type Body = Full<Bytes>;
pub type Request = http::Request<Body>;
pub type Response = http::Response<ResponseBody>;

/// A request's send, from its launch to its response head.
pub type Sending = Pin<Box<dyn Future<Output = Result<Response, SendError>> + Send>>;

/// The most idle HTTP/1.1 connections a provider keeps; one handed back past it closes the
/// least recently used. The idle pool holds what a fall in concurrency leaves behind: while the
/// arrival rate holds, each connection handed back is soon taken by a later arrival, so few are
/// idle at once; when it falls (a burst over, a load step draining thousands of streams), the
/// connections stay idle for a rise that may never come, each holding a socket and its file
/// descriptor, the kernel's socket state, a TLS session and hyper's buffers (8 KiB to read,
/// some tens of KiB in all). 256 keeps that under about 10 MiB a provider, whatever the peak
/// was, and still spares a rise of up to 256 requests in flight the connects (measured in its
/// requests' times) a first rise costs. The closed-loop workflow keeps one.
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

/// A provider's connections that no request holds.
struct Pool {
    /// The HTTP/2 connection every request is multiplexed on, once one is open; it stays here
    /// while requests use it, until it closes.
    shared: Option<http2::SendRequest<Body>>,
    /// The idle HTTP/1.1 connection handed back last, beside the lock: the closed loop's one
    /// connection, which a hand-over (and [`Transport::warm`]) then finds without reaching for
    /// another allocation. A connection in use is in no pool: its request's [`Lease`] holds it.
    last: Option<http1::SendRequest<Body>>,
    /// The other idle HTTP/1.1 connections, the most recently handed back last; empty when
    /// `last` is.
    older: VecDeque<http1::SendRequest<Body>>,
    /// [`MAX_IDLE`], but for the tests.
    max_idle: usize,
}

/// A connection, in the HTTP version its handshake settled.
enum Sender {
    H1(http1::SendRequest<Body>),
    H2(http2::SendRequest<Body>),
}

type Sent = Pin<Box<dyn Future<Output = Result<http::Response<Incoming>, TrySendError<Request>>> + Send>>;

/// Queues `request` on an HTTP/1.1 connection now (no byte is written before its task runs);
/// the future gives its response head, or the request back when it was never written.
fn send_h1(sender: &mut http1::SendRequest<Body>, mut request: Request, target: &Target) -> Sent {
    // Built in HTTP/1.1's form already for plain http:// ([`Transport::post`]).
    if request.uri().scheme().is_some() {
        *request.uri_mut() = target.origin.clone();
        request.headers_mut().insert(HOST, target.host_header.clone());
    }
    Box::pin(sender.try_send_request(request))
}

fn send_h2(sender: &mut http2::SendRequest<Body>, request: Request) -> Sent {
    Box::pin(sender.try_send_request(request))
}

impl Pool {
    /// Where `request` goes: queued at once on the HTTP/2 connection or on the most recently
    /// handed back HTTP/1.1 connection that is ready (taken out of the pool, its request's to
    /// hold); else to wait for the most recent one that is open but not ready yet (its task has
    /// not yet seen the end of its last exchange), or for a new connection. Closed connections
    /// met on the way are dropped.
    fn take(&mut self, request: Request, target: &Target) -> Pending {
        if let Some(shared) = &mut self.shared {
            if shared.is_ready() {
                return Pending::Kept(send_h2(shared, request), None);
            }
            self.shared = None;
        }
        let ready = if self.last.as_ref().is_some_and(http1::SendRequest::is_ready) {
            std::mem::replace(&mut self.last, self.older.pop_back())
        } else {
            self.older.iter().rposition(http1::SendRequest::is_ready).and_then(|i| self.older.remove(i))
        };
        if let Some(mut sender) = ready {
            let sent = send_h1(&mut sender, request, target);
            return Pending::Kept(sent, Some(Sender::H1(sender)));
        }
        self.older.retain(|s| !s.is_closed());
        if self.last.as_ref().is_some_and(http1::SendRequest::is_closed) {
            self.last = self.older.pop_back();
        }
        let waiting = std::mem::replace(&mut self.last, self.older.pop_back());
        Pending::Waiting(waiting, request)
    }

    /// Takes back a connection whose exchange ended cleanly; gives back what is not kept (a
    /// closed connection, the least recently used one past the bound, an HTTP/2 connection when
    /// another is shared already), for the caller to drop outside the lock.
    fn put(&mut self, sender: Sender) -> Option<Sender> {
        match sender {
            Sender::H1(sender) if sender.is_closed() => Some(Sender::H1(sender)),
            Sender::H1(sender) => {
                if let Some(previous) = self.last.replace(sender) {
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

/// A connection a request holds from its hand-over to the end of its response body, and the
/// pool it goes back to then. Dropped any other way (the body abandoned before its end, or no
/// response at all), it drops the connection: an HTTP/1.1 one closes. (An HTTP/2 connection is
/// held only by the request that opened it, and stays shared: a body dropped early resets its
/// own stream, not the connection.)
struct Lease {
    sender: Sender,
    pool: Arc<Mutex<Pool>>,
}

impl Lease {
    fn hand_back(self) {
        let Lease { sender, pool } = self;
        let dropped = lock(&pool).put(sender);
        drop(dropped);
    }
}

/// A response body, and the connection it came on while the body is being read: the body read
/// to its end (its end seen, not only its last byte) hands the connection back to its pool; a
/// body that fails, or is dropped before its end, drops the connection.
pub struct ResponseBody {
    inner: Incoming,
    lease: Option<Lease>,
}

impl hyper::body::Body for ResponseBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        match &frame {
            None => {
                if let Some(lease) = self.lease.take() {
                    lease.hand_back();
                }
            }
            Some(Err(_)) => self.lease = None,
            Some(Ok(_)) => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseBody").field("inner", &self.inner).field("leased", &self.lease.is_some()).finish()
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

    /// Reads the state a hand-over reads (the pool and whether the connection it would take
    /// first is ready), so that a round's hand-overs find it in the cache: a round's exchanges
    /// leave little of a thousand connections' state there, and a cache miss per connection is
    /// most of a hand-over's cost. The hand-over asks again.
    pub fn warm(&self) -> bool {
        let pool = lock(&self.pool);
        pool.shared.as_ref().is_some_and(http2::SendRequest::is_ready)
            || pool.last.as_ref().is_some_and(http1::SendRequest::is_ready)
    }

    /// Hands the request of `outgoing` to an idle connection of the provider when one is open
    /// and ready (see [`Pool::take`]): the request is queued on it before this returns.
    /// Otherwise it waits for its exchange, which waits for the connection it took (handed back
    /// but not ready yet) or opens a new one, inside the request's measured time. Whatever
    /// happened stays in `outgoing` (a few bytes written beside the request), for
    /// [`Transport::sending`].
    pub fn hand_over(&self, outgoing: &mut Outgoing) {
        if !matches!(outgoing.state, Pending::Unsent(_)) {
            return;
        }
        let mut pool = lock(&self.pool);
        let Pending::Unsent(request) = std::mem::replace(&mut outgoing.state, Pending::Moving) else {
            return;
        };
        outgoing.state = pool.take(request, &self.target);
    }

    /// The send of `outgoing`, from its hand-over (made now if it was not) to its response head.
    pub fn sending(&self, mut outgoing: Outgoing) -> Sending {
        self.hand_over(&mut outgoing);
        let this = self.clone();
        let Outgoing { state, spare } = outgoing;
        match state {
            Pending::Kept(sent, held) => Box::pin(this.on_kept(sent, held, spare)),
            Pending::Waiting(waiting, request) => {
                Box::pin(async move { Box::pin(this.send_later(waiting, request, spare)).await })
            }
            // Only while `hand_over` runs: a request it lost (a panic inside hyper) never left.
            Pending::Unsent(_) | Pending::Moving => {
                Box::pin(std::future::ready(Err(SendError::Request("the request was lost before it was sent".into()))))
            }
        }
    }

    /// Sends on `waiting` once it is ready (a connection handed back whose task is still
    /// finishing its previous exchange), or on a new connection when there is none or it closes.
    async fn send_later(
        self,
        waiting: Option<http1::SendRequest<Body>>,
        request: Request,
        spare: Request,
    ) -> Result<Response, SendError> {
        if let Some(mut sender) = waiting.filter(|s| !s.is_closed()) {
            if sender.ready().await.is_ok() {
                let sent = send_h1(&mut sender, request, &self.target);
                return self.on_kept(sent, Some(Sender::H1(sender)), spare).await;
            }
        }
        self.send_on_new(request).await
    }

    /// The response to a request queued on a kept connection (`held`, unless it is the shared
    /// HTTP/2 one), or, when that connection lost it (see [`reused_failure`]), to the same
    /// request on a new one.
    async fn on_kept(self, sent: Sent, held: Option<Sender>, spare: Request) -> Result<Response, SendError> {
        match sent.await {
            Ok(response) => Ok(self.leased(response, held)),
            Err(e) => {
                drop(held);
                Box::pin(self.send_on_new(reused_failure(e, spare)?)).await
            }
        }
    }

    /// Sends on a new connection; an HTTP/2 one is shared at once with the requests after.
    async fn send_on_new(self, request: Request) -> Result<Response, SendError> {
        let (sent, held) = match self.connect().await? {
            Sender::H1(mut sender) => (send_h1(&mut sender, request, &self.target), Sender::H1(sender)),
            Sender::H2(mut sender) => {
                let sent = send_h2(&mut sender, request);
                let dropped = lock(&self.pool).put(Sender::H2(sender.clone()));
                drop(dropped);
                (sent, Sender::H2(sender))
            }
        };
        match sent.await {
            Ok(response) => Ok(self.leased(response, Some(held))),
            Err(e) => Err(SendError::Request(error_text(&e.into_error()))),
        }
    }

    /// The response with its body bound to the connection it came on, if the request holds one.
    fn leased(self, response: http::Response<Incoming>, held: Option<Sender>) -> Response {
        let lease = held.map(|sender| Lease { sender, pool: self.pool });
        response.map(|inner| ResponseBody { inner, lease })
    }

    /// How many HTTP/1.1 connections are idle.
    #[cfg(test)]
    fn idle(&self) -> usize {
        lock(&self.pool).idle()
    }

    /// Opens a connection: TCP with TCP_NODELAY, TLS for https://, and the HTTP handshake of
    /// the version TLS negotiated. Its task runs on the fetch's runtime until it closes.
    async fn connect(&self) -> Result<Sender, SendError> {
        let t = &*self.target;
        let shown = || format!("{}:{}", t.host, t.port);
        let tcp = tokio::net::TcpStream::connect((t.host.as_str(), t.port)).await.map_err(|e| {
            let message = format!("tcp connect to {}: {e}", shown());
            if is_client_resource(&e) {
                SendError::ClientResource(message)
            } else {
                SendError::Connect(message)
            }
        })?;
        tcp.set_nodelay(true).map_err(|e| SendError::Connect(format!("TCP_NODELAY on {}: {e}", shown())))?;
        let handshake =
            |e: hyper::Error| SendError::Connect(format!("HTTP handshake with {}: {}", shown(), error_text(&e)));
        let Some((connector, name)) = &t.tls else {
            return h1(TokioIo::new(tcp)).await.map_err(handshake);
        };
        let tls = connector
            .connect(name.clone(), tcp)
            .await
            .map_err(|e| SendError::Connect(format!("TLS handshake with {}: {}", shown(), error_text(&e))))?;
        if tls.get_ref().1.alpn_protocol() == Some(b"h2") {
            let (sender, connection) = http2::Builder::new(TokioExecutor::new())
                // hyper's defaults let a server send 2 MiB per stream (5 MiB per connection)
                // before the client has read any: per stream, the bound of HTTP/1.1's buffer.
                .initial_stream_window_size(READ_BUFFER_BYTES as u32)
                .initial_connection_window_size(16 * READ_BUFFER_BYTES as u32)
                .handshake(TokioIo::new(tls))
                .await
                .map_err(handshake)?;
            tokio::spawn(async move {
                // Its errors reach the requests on it.
                let _ = connection.await;
            });
            Ok(Sender::H2(sender))
        } else {
            h1(TokioIo::new(tls)).await.map_err(handshake)
        }
    }
}

/// Whether a failure to connect is this machine's: out of file descriptors (EMFILE, ENFILE),
/// local ports (EADDRNOTAVAIL, EADDRINUSE), socket buffers (ENOBUFS) or memory (ENOMEM).
fn is_client_resource(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::EADDRNOTAVAIL | libc::EADDRINUSE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// What to do when a request on a connection kept from an earlier exchange got no response:
/// the request to send once more on a new connection, or the failure to report.
///
/// A request that was never written (the connection closed meanwhile) goes again as it is. One
/// that was written but whose connection closed before any response head (hyper's "incomplete
/// message") met the keep-alive race: the server closed the idle connection (its keep-alive
/// timeout, say) as the request went out, so it never saw it. That one goes again too, from
/// `spare`, as curl does on a reused connection that yields nothing. The send time stays the
/// first launch's, so the new connection counts in the provider's latency, and a request that
/// fails on the new connection as well fails for good.
fn reused_failure(mut error: TrySendError<Request>, spare: Request) -> Result<Request, SendError> {
    if let Some(unsent) = error.take_message() {
        return Ok(unsent);
    }
    let error = error.into_error();
    if error.is_incomplete_message() {
        Ok(spare)
    } else {
        Err(SendError::Request(error_text(&error)))
    }
}

/// A request to launch and a copy of it, made when the request is built (not in the launch
/// loop), for a kept connection that loses it (see [`reused_failure`]).
pub struct Outgoing {
    state: Pending,
    spare: Request,
}

/// Where a request is between its building and its exchange.
enum Pending {
    /// Not handed over yet.
    Unsent(Request),
    /// Queued on a kept connection: an idle HTTP/1.1 one, taken out of the pool (held here,
    /// then by the response body), or the shared HTTP/2 one (none held).
    Kept(Sent, Option<Sender>),
    /// To send on an idle connection once it is ready (handed back, its task not yet done with
    /// its previous exchange), or on a new one.
    Waiting(Option<http1::SendRequest<Body>>, Request),
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

/// The most of a response body the transport holds before the stream reads it, per stream.
pub const READ_BUFFER_BYTES: usize = 64 * 1024;

async fn h1<T>(io: TokioIo<T>) -> hyper::Result<Sender>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    // hyper's read buffer grows to about 400 KiB on a body that arrives faster than it is
    // read (a provider writing a ten-megabyte line): 64 KiB holds a stream's memory to the
    // event cap plus this, and still reads a fast stream in few calls.
    let (sender, connection) = http1::Builder::new().max_buf_size(READ_BUFFER_BYTES).handshake::<_, Body>(io).await?;
    tokio::spawn(async move {
        // Its errors reach the request on it.
        let _ = connection.await;
    });
    Ok(Sender::H1(sender))
}

/// The next data of a response body; trailers are passed over.
pub async fn next_chunk(body: &mut ResponseBody) -> hyper::Result<Option<Bytes>> {
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            return Ok(Some(data));
        }
    }
    Ok(None)
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

#[cfg(test)]
mod tests;
