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
            let (sender, connection) =
                http2::Builder::new(TokioExecutor::new()).handshake(TokioIo::new(tls)).await.map_err(handshake)?;
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

async fn h1<T>(io: TokioIo<T>) -> hyper::Result<Sender>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http1::Builder::new().handshake::<_, Body>(io).await?;
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
mod tests {
    use super::*;

    #[test]
    fn running_out_of_descriptors_ports_or_memory_is_the_clients_failure() {
        for errno in [libc::EMFILE, libc::ENFILE, libc::EADDRNOTAVAIL, libc::EADDRINUSE, libc::ENOBUFS, libc::ENOMEM] {
            assert!(is_client_resource(&std::io::Error::from_raw_os_error(errno)), "errno {errno}");
        }
        for errno in [libc::ECONNREFUSED, libc::ETIMEDOUT, libc::EHOSTUNREACH, libc::ECONNRESET] {
            assert!(!is_client_resource(&std::io::Error::from_raw_os_error(errno)), "errno {errno}");
        }
    }
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// Reads one request (head and its Content-Length body) from `sock`; false at end of stream.
    async fn read_request(sock: &mut TcpStream) -> bool {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if seen.len() >= end + 4 + length {
                    return true;
                }
            }
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    }

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

    /// A server whose first connection answers one request and then takes the next one and
    /// closes without a word (a keep-alive timeout firing as the request arrives); every later
    /// connection does what `later_answers` says (answers one request and stays open, or closes
    /// without a word too). The task returns the connections it accepted.
    async fn server(later_answers: bool) -> (String, tokio::task::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/chat/completions", listener.local_addr().unwrap());
        let served = tokio::spawn(async move {
            let (mut first, _) = listener.accept().await.unwrap();
            assert!(read_request(&mut first).await);
            first.write_all(OK).await.unwrap();
            assert!(read_request(&mut first).await, "the second request comes on the kept connection");
            drop(first);
            let mut accepted = 1;
            // Answered connections stay open (kept alive) until the server stops.
            let mut open = Vec::new();
            while let Ok(Ok((mut sock, _))) =
                tokio::time::timeout(std::time::Duration::from_millis(500), listener.accept()).await
            {
                accepted += 1;
                if read_request(&mut sock).await && later_answers {
                    sock.write_all(OK).await.unwrap();
                    open.push(sock);
                }
            }
            accepted
        });
        (url, served)
    }

    fn transport(url: &str) -> Transport {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        Transport::new(url, Arc::new(tls)).unwrap()
    }

    fn request(t: &Transport) -> Outgoing {
        Outgoing::new(t.post().body(Body::from("{}")).unwrap())
    }

    async fn body(response: Response) -> Vec<u8> {
        let mut incoming = response.into_body();
        let mut all = Vec::new();
        while let Some(chunk) = next_chunk(&mut incoming).await.unwrap() {
            all.extend_from_slice(&chunk);
        }
        all
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_request_the_server_drops_on_a_kept_connection_goes_once_more_on_a_new_one() {
        let (url, served) = server(true).await;
        let t = transport(&url);
        assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, b"ok");
        let second = t.sending(request(&t)).await.expect("sent again on a new connection");
        assert_eq!((second.status().as_u16(), body(second).await), (200, b"ok".to_vec()));
        assert_eq!(served.await.unwrap(), 2, "one new connection, no more");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_request_dropped_on_its_new_connection_too_fails_without_another_try() {
        let (url, served) = server(false).await;
        let t = transport(&url);
        assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, b"ok");
        match t.sending(request(&t)).await {
            Err(SendError::Request(message)) => assert!(message.contains("closed"), "{message}"),
            other => panic!("expected a request error, got {other:?}"),
        }
        assert_eq!(served.await.unwrap(), 2, "sent on one new connection only");
    }

    /// A keep-alive server: every connection answers each request with `OK` until the client
    /// closes it, except that the first `hold` requests (over all connections) are answered only
    /// once all of them have arrived, so a client that does not send them at once never gets
    /// an answer. The counter says how many connections it accepted, the other how many of them
    /// the client has closed.
    async fn keep_alive_server(hold: usize) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/chat/completions", listener.local_addr().unwrap());
        let (accepted, closed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (a, c) = (Arc::clone(&accepted), Arc::clone(&closed));
        let barrier = Arc::new(tokio::sync::Barrier::new(hold.max(1)));
        let requests = Arc::new(AtomicUsize::new(0));
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                a.fetch_add(1, SeqCst);
                let (c, barrier, requests) = (Arc::clone(&c), Arc::clone(&barrier), Arc::clone(&requests));
                tokio::spawn(async move {
                    while read_request(&mut sock).await {
                        if requests.fetch_add(1, SeqCst) < hold {
                            barrier.wait().await;
                        }
                        if sock.write_all(OK).await.is_err() {
                            break;
                        }
                    }
                    c.fetch_add(1, SeqCst);
                });
            }
        });
        (url, accepted, closed)
    }

    /// Waits (a little) for `counter` to reach `n`.
    async fn reaches(counter: &AtomicUsize, n: usize) -> usize {
        for _ in 0..200 {
            if counter.load(SeqCst) >= n {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        counter.load(SeqCst)
    }

    /// Sends `n` requests at once (every one handed over before any is awaited) and reads each
    /// answer to its end.
    async fn all_at_once(t: &Transport, n: usize) -> Vec<Vec<u8>> {
        let mut launched: Vec<Outgoing> = (0..n).map(|_| request(t)).collect();
        for outgoing in &mut launched {
            t.hand_over(outgoing);
        }
        let sends = launched.into_iter().map(|outgoing| {
            let sending = t.sending(outgoing);
            async move { body(sending.await.expect("an answer")).await }
        });
        let all = futures_util::future::join_all(sends);
        tokio::time::timeout(std::time::Duration::from_secs(10), all).await.expect("every request in flight at once")
    }

    #[tokio::test(flavor = "current_thread")]
    async fn concurrent_requests_open_a_connection_each_and_all_complete() {
        let (url, accepted, closed) = keep_alive_server(8).await;
        let t = transport(&url);
        // The server answers none of the eight before all eight are in.
        assert_eq!(all_at_once(&t, 8).await, vec![b"ok".to_vec(); 8]);
        assert_eq!(accepted.load(SeqCst), 8, "one connection per request in flight");
        assert_eq!(t.idle(), 8, "each handed back when its body ended");
        // A second wave takes the idle ones, opening none.
        assert_eq!(all_at_once(&t, 8).await, vec![b"ok".to_vec(); 8]);
        assert_eq!((accepted.load(SeqCst), closed.load(SeqCst), t.idle()), (8, 0, 8));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn sequential_requests_reuse_one_connection() {
        let (url, accepted, _) = keep_alive_server(0).await;
        let t = transport(&url);
        for _ in 0..5 {
            // Sent the moment the last body ended: a connection handed back before its task saw
            // the end of its exchange is waited for, never passed over for a new one.
            assert!(t.idle() <= 1);
            assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, b"ok");
        }
        assert_eq!((accepted.load(SeqCst), t.idle()), (1, 1));
        // As a closed-loop round launches: the hand-over finds the connection ready.
        tokio::task::yield_now().await;
        assert!(t.warm(), "the connection handed back is ready for the next round");
        let mut next = request(&t);
        t.hand_over(&mut next);
        assert!(matches!(next.state, Pending::Kept(_, Some(Sender::H1(_)))), "queued at the hand-over");
        assert_eq!(t.idle(), 0, "taken out of the pool while its exchange runs");
        assert_eq!(body(t.sending(next).await.unwrap()).await, b"ok");
        assert_eq!((accepted.load(SeqCst), t.idle()), (1, 1));
    }

    /// A server whose first connection answers its one request with a chunked body it never
    /// ends (one chunk, then silence until the client closes), and whose later connections
    /// answer `OK`. The task returns whether the first connection was closed by the client.
    async fn endless_first_answer() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<bool>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/chat/completions", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(1));
        let later = Arc::clone(&accepted);
        let first = tokio::spawn(async move {
            let (mut first, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                while let Ok((mut sock, _)) = listener.accept().await {
                    later.fetch_add(1, SeqCst);
                    tokio::spawn(
                        async move { while read_request(&mut sock).await && sock.write_all(OK).await.is_ok() {} },
                    );
                }
            });
            assert!(read_request(&mut first).await);
            let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
            first.write_all(head).await.unwrap();
            let mut rest = [0u8; 64];
            let closed = tokio::time::timeout(std::time::Duration::from_secs(5), first.read(&mut rest)).await;
            matches!(closed, Ok(Ok(0)) | Ok(Err(_)))
        });
        (url, accepted, first)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_connection_whose_body_is_abandoned_is_closed_not_returned() {
        let (url, accepted, first) = endless_first_answer().await;
        let t = transport(&url);
        let mut abandoned = t.sending(request(&t)).await.unwrap().into_body();
        assert_eq!(next_chunk(&mut abandoned).await.unwrap().as_deref(), Some(&b"hello"[..]));
        // A deadline, a size cap or a reader that stopped: the body goes before its end.
        drop(abandoned);
        assert_eq!(t.idle(), 0, "never handed back");
        assert!(first.await.unwrap(), "the abandoned connection is closed");
        assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, b"ok");
        assert_eq!((accepted.load(SeqCst), t.idle()), (2, 1), "the next request opened a connection");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_response_without_an_answer_read_drops_its_connection() {
        let (url, accepted, closed) = keep_alive_server(0).await;
        let t = transport(&url);
        // The head alone, its body never read (a request whose deadline struck then).
        drop(t.sending(request(&t)).await.unwrap());
        assert_eq!(t.idle(), 0);
        assert_eq!(reaches(&closed, 1).await, 1, "closed by the client");
        assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, b"ok");
        assert_eq!(accepted.load(SeqCst), 2);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn idle_connections_past_the_bound_are_closed_the_least_recently_used_first() {
        let (url, accepted, closed) = keep_alive_server(5).await;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let t = Transport::with_max_idle(&url, Arc::new(tls), 2).unwrap();
        assert_eq!(all_at_once(&t, 5).await.len(), 5);
        assert_eq!((accepted.load(SeqCst), t.idle()), (5, 2));
        assert_eq!(reaches(&closed, 3).await, 3, "the three past the bound are closed");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_kept_connection_that_loses_the_request_is_not_pooled_and_the_new_one_is() {
        let (url, served) = server(true).await;
        let t = transport(&url);
        assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, b"ok");
        assert_eq!(t.idle(), 1);
        let second = t.sending(request(&t)).await.expect("sent again on a new connection");
        assert_eq!(t.idle(), 0, "the lost connection is gone, the new one in use");
        assert_eq!(body(second).await, b"ok");
        assert_eq!(t.idle(), 1, "the new connection is kept");
        assert_eq!(served.await.unwrap(), 2);
    }

    /// An HTTP/2 server (prior knowledge, no TLS) answering `ok` to every request; the counter
    /// says how many connections it accepted.
    async fn h2_server() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&accepted);
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                counted.fetch_add(1, SeqCst);
                let answer = hyper::service::service_fn(|_request| async {
                    Ok::<_, std::convert::Infallible>(http::Response::new(Body::from("ok")))
                });
                let server = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
                tokio::spawn(server.serve_connection(TokioIo::new(sock), answer));
            }
        });
        (addr, accepted)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn requests_on_an_http2_connection_are_multiplexed_on_it_and_it_stays_shared() {
        let (addr, accepted) = h2_server().await;
        let url = format!("http://{addr}/v1/chat/completions");
        let t = transport(&url);
        // As TLS would have negotiated it (ALPN): the provider's connection speaks HTTP/2.
        let tcp = TcpStream::connect(addr).await.unwrap();
        let (sender, connection) =
            http2::Builder::new(TokioExecutor::new()).handshake(TokioIo::new(tcp)).await.unwrap();
        tokio::spawn(connection);
        assert!(lock(&t.pool).put(Sender::H2(sender)).is_none(), "shared");
        let absolute = || Outgoing::new(http::Request::post(url.as_str()).body(Body::from("{}")).unwrap());
        let mut launched: Vec<Outgoing> = (0..8).map(|_| absolute()).collect();
        for outgoing in &mut launched {
            t.hand_over(outgoing);
            assert!(matches!(outgoing.state, Pending::Kept(_, None)), "queued on the shared connection, none held");
        }
        for outgoing in launched {
            assert_eq!(body(t.sending(outgoing).await.unwrap()).await, b"ok");
        }
        assert_eq!((accepted.load(SeqCst), t.idle()), (1, 0));
        assert!(t.warm() && lock(&t.pool).shared.is_some(), "still shared");
    }

    /// A keep-alive server whose n-th connection answers every request with the body `n`.
    async fn numbered_server() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1/chat/completions", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut n = 0;
            while let Ok((mut sock, _)) = listener.accept().await {
                let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n{n}");
                n += 1;
                tokio::spawn(async move {
                    while read_request(&mut sock).await && sock.write_all(answer.as_bytes()).await.is_ok() {}
                });
            }
        });
        url
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_connection_handed_back_last_is_taken_first() {
        let url = numbered_server().await;
        let t = transport(&url);
        let (mut a, mut b) = (request(&t), request(&t));
        t.hand_over(&mut a);
        t.hand_over(&mut b);
        let (a, b) = tokio::join!(t.sending(a), t.sending(b));
        // Two connections; the one whose body ends last is the most recently used.
        let (first, last) = (body(a.unwrap()).await, body(b.unwrap()).await);
        assert_ne!(first, last);
        assert_eq!(t.idle(), 2);
        for _ in 0..3 {
            assert_eq!(body(t.sending(request(&t)).await.unwrap()).await, last);
        }
    }
}
