//! The transport's tests: the pool (connections opened, reused, closed, bounded), HTTP/2's
//! one connection, the keep-alive race, and what counts as the client's own failure.
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

/// Reads one request (its head and its Content-Length body) from `sock`; None at the end of
/// the stream. The HTTP/1.1 connection's tests read their requests with it too.
pub(super) async fn read_request(sock: &mut TcpStream) -> Option<Vec<u8>> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
            let length: usize =
                head.lines().find_map(|l| l.strip_prefix("content-length:")).map_or(0, |v| v.trim().parse().unwrap());
            if seen.len() >= end + 4 + length {
                return Some(seen);
            }
        }
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
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
        assert!(read_request(&mut first).await.is_some());
        first.write_all(OK).await.unwrap();
        assert!(read_request(&mut first).await.is_some(), "the second request comes on the kept connection");
        drop(first);
        let mut accepted = 1;
        // Answered connections stay open (kept alive) until the server stops.
        let mut open = Vec::new();
        while let Ok(Ok((mut sock, _))) =
            tokio::time::timeout(std::time::Duration::from_millis(500), listener.accept()).await
        {
            accepted += 1;
            if read_request(&mut sock).await.is_some() && later_answers {
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
                while read_request(&mut sock).await.is_some() {
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
    assert!(matches!(next.state, Pending::Idle(..)), "given the idle connection at the hand-over");
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
                tokio::spawn(async move {
                    while read_request(&mut sock).await.is_some() && sock.write_all(OK).await.is_ok() {}
                });
            }
        });
        assert!(read_request(&mut first).await.is_some());
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
                Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(Bytes::from("ok"))))
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
    let (sender, connection) = http2::Builder::new(TokioExecutor::new()).handshake(TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(connection);
    assert!(lock(&t.pool).put(Sender::H2(sender)).is_none(), "shared");
    let absolute = || Outgoing::new(http::Request::post(url.as_str()).body(Body::from("{}")).unwrap());
    let mut launched: Vec<Outgoing> = (0..8).map(|_| absolute()).collect();
    for outgoing in &mut launched {
        t.hand_over(outgoing);
        assert!(matches!(outgoing.state, Pending::Kept(_)), "queued on the shared connection, none held");
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
                while read_request(&mut sock).await.is_some() && sock.write_all(answer.as_bytes()).await.is_ok() {}
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
