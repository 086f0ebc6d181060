//! The real client against a raw TCP server that sends exactly the bytes a test gives it: how
//! hostile streams are logged and judged, and that no credential reaches the log.
use crate::client::{execute, version_name, Limits, ProviderClient, Unit};
use crate::credentials::Credentials;
use crate::log::EventLog;
use inferbench_contract::event::{Envelope, Event, RequestStarted, RequestTerminal, ResponseHead};
use inferbench_contract::vocab::{ErrorKind, Outcome, WireApi};
use inferbench_inputs::providers::Provider;
use inferbench_inputs::spec::{HttpVersion, Spec};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;

const KEY: &str = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd";
const LIMITS: Limits = Limits { max_event_bytes: 1 << 20, max_response_bytes: 16 << 20 };
const ANSWER: &str = r#"{"choices":[{"delta":{"content":"{\"a\":1}"}}]}"#;

fn provider() -> Provider {
    serde_norway::from_str(
        "{name: p, endpoint: 'http://x', auth: {kind: bearer, env: K}, model_id: m, token_limit_field: max_tokens, \
         price_usd_per_million_tokens: {input: 1, output: 1}}",
    )
    .unwrap()
}

/// Serves one connection with `response` (raw HTTP bytes), then closes it; the task returns
/// the request head it read.
async fn serve_once(response: Vec<u8>) -> (String, JoinHandle<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buf = vec![0u8; 65536];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => request.extend_from_slice(&buf[..n]),
            }
        }
        let _ = sock.write_all(&response).await;
        let _ = sock.shutdown().await;
        let end = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(request.len());
        String::from_utf8_lossy(&request[..end]).into_owned()
    });
    (format!("http://{addr}/v1/chat/completions"), served)
}

/// One attempt against `response`; the log's records and its size in bytes.
async fn run(response: Vec<u8>, limits: Limits) -> (Vec<Envelope>, u64) {
    let (events, size, _) = attempt(response, limits, HttpVersion::default()).await;
    (events, size)
}

/// One attempt against `response` with a client for `http_version`; the log's records, its
/// size in bytes, and the request head the server read.
async fn attempt(response: Vec<u8>, limits: Limits, http_version: HttpVersion) -> (Vec<Envelope>, u64, String) {
    attempt_on(WireApi::ChatCompletions, response, limits, http_version).await
}

/// [`attempt`] through `api`.
async fn attempt_on(
    api: WireApi,
    response: Vec<u8>,
    limits: Limits,
    http_version: HttpVersion,
) -> (Vec<Envelope>, u64, String) {
    let (endpoint, served) = serve_once(response).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("0001.jsonl");
    let log = EventLog::open(&path, "run-x".into(), 0, 0).unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ProviderClient::new(provider(), api, endpoint, Credentials::for_tests(KEY), http_version).unwrap();
    let unit = Unit {
        request_id: "r1".into(),
        round_id: "round".into(),
        round_index: 0,
        provider: "p".into(),
        task_family: inferbench_contract::vocab::TaskFamily::TicketTriage,
        item_id: "i".into(),
        attempt: 1,
        body: serde_json::json!({}),
        step: None,
        target_input_tokens: None,
        target_output_tokens: None,
    };
    execute(&log, &client, &unit, 0, Duration::from_secs(10), limits).await.unwrap();
    drop(log);
    let size = std::fs::metadata(&path).unwrap().len();
    let request = served.await.unwrap();
    (inferbench_store::jsonl::read::<Envelope>(&path).unwrap().records, size, request)
}

fn http(status: &str, content_type: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n", body.len());
    if let Some(c) = content_type {
        head.push_str(&format!("Content-Type: {c}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn sse(body: &str) -> Vec<u8> {
    http("200 OK", Some("text/event-stream"), body.as_bytes())
}

fn terminal(events: &[Envelope]) -> RequestTerminal {
    events.iter().find_map(|e| if let Event::RequestTerminal(t) = &e.event { Some(t.clone()) } else { None }).unwrap()
}

fn sse_count(events: &[Envelope]) -> usize {
    events.iter().filter(|e| matches!(&e.event, Event::SseEvent(_))).count()
}

fn whole_log(events: &[Envelope]) -> String {
    events.iter().map(|e| serde_json::to_string(e).unwrap()).collect::<Vec<_>>().join("\n")
}

fn echoed(events: &[Envelope]) -> bool {
    events.iter().any(|e| matches!(&e.event, Event::CredentialEcho(_)))
}

#[tokio::test]
async fn a_credential_cut_by_the_error_body_cap_is_masked() {
    let mut body = "x".repeat(4096 - 30);
    body.push_str(&format!(" invalid key {KEY}"));
    let (events, _) = run(http("401 Unauthorized", Some("text/plain"), body.as_bytes()), LIMITS).await;
    let stored = terminal(&events).error_body.unwrap();
    assert!(!stored.contains(&KEY[..8]) && stored.ends_with("<redacted>"), "…{}", &stored[stored.len() - 40..]);
}

#[tokio::test]
async fn a_credential_cut_by_the_error_message_cap_is_masked() {
    let message = format!("{} {KEY}", "m".repeat(1024 - 20));
    let data = serde_json::json!({"error": {"message": message}}).to_string();
    let (events, _) = run(sse(&format!("data: {data}\n\n")), LIMITS).await;
    let t = terminal(&events);
    assert_eq!(t.outcome, Outcome::StreamError);
    let m = t.error_message.unwrap();
    assert!(!m.contains(&KEY[..8]), "…{}", &m[m.len() - 30..]);
    assert!(!whole_log(&events).contains(&KEY[..12]));
}

#[tokio::test]
async fn a_credential_split_across_two_deltas_is_in_no_line_of_the_log() {
    let (a, b) = KEY.split_at(20);
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        serde_json::json!({"choices": [{"delta": {"content": a}}]}),
        serde_json::json!({"choices": [{"delta": {"content": b}}]}),
    );
    let (events, _) = run(sse(&body), LIMITS).await;
    let log = whole_log(&events);
    assert!(!log.contains(a) && !log.contains(b), "{log}");
    assert!(echoed(&events), "the request is flagged");
    assert_eq!((terminal(&events).outcome, sse_count(&events)), (Outcome::Completed, 3));
}

#[tokio::test]
async fn text_after_done_never_flags_the_answer() {
    let late = serde_json::json!({"choices": [{"delta": {"content": KEY}}]});
    let (events, _) = run(sse(&format!("data: {ANSWER}\n\ndata: [DONE]\n\ndata: {late}\n\n")), LIMITS).await;
    assert!(!echoed(&events), "nothing after [DONE] joins the answer");
    assert_eq!(terminal(&events).outcome, Outcome::Completed);
    assert!(!whole_log(&events).contains(KEY), "it is still redacted in the log");
}

#[tokio::test]
async fn done_before_an_oversized_line_in_the_same_chunk_completes() {
    let limits = Limits { max_event_bytes: 200, max_response_bytes: 1 << 20 };
    let body = format!("data: {ANSWER}\n\ndata: [DONE]\n\n: {}", "z".repeat(300));
    let (events, _) = run(sse(&body), limits).await;
    assert_eq!((terminal(&events).outcome, sse_count(&events)), (Outcome::Completed, 2));
}

#[tokio::test]
async fn done_within_the_body_cap_completes_even_if_its_chunk_goes_past_it() {
    let limits = Limits { max_event_bytes: 1 << 20, max_response_bytes: 100 };
    let body = format!("data: {ANSWER}\n\ndata: [DONE]\n\n{}", "\n".repeat(100));
    let (events, _) = run(sse(&body), limits).await;
    assert_eq!(terminal(&events).outcome, Outcome::Completed);
}

#[tokio::test]
async fn an_answer_past_the_body_cap_is_invalid() {
    let limits = Limits { max_event_bytes: 1 << 20, max_response_bytes: 100 };
    let body = format!("data: {ANSWER}\n\ndata: {ANSWER}\n\ndata: [DONE]\n\n");
    let (events, _) = run(sse(&body), limits).await;
    let t = terminal(&events);
    assert_eq!((t.outcome, t.error_type), (Outcome::InvalidStream, Some(ErrorKind::ResponseTooLarge)));
}

#[tokio::test]
async fn a_flood_of_keep_alives_is_cut_off_before_it_swamps_the_log() {
    let limits = Limits { max_event_bytes: 1 << 20, max_response_bytes: 1 << 20 };
    let body = ":\n".repeat(200_000);
    let (events, size) = run(sse(&body), limits).await;
    let t = terminal(&events);
    assert_eq!((t.outcome, t.error_type), (Outcome::InvalidStream, Some(ErrorKind::TooManyEvents)));
    assert_eq!(sse_count(&events), limits.max_events() as usize);
    assert!(size < 8 * limits.max_response_bytes, "log {size} bytes for a {} byte cap", limits.max_response_bytes);
}

#[tokio::test]
async fn a_2xx_without_a_content_type_is_read_as_an_event_stream() {
    let (events, _) = run(http("200 OK", None, format!("data: {ANSWER}\n\ndata: [DONE]\n\n").as_bytes()), LIMITS).await;
    assert_eq!(terminal(&events).outcome, Outcome::Completed);
}

fn started(events: &[Envelope]) -> RequestStarted {
    events.iter().find_map(|e| if let Event::RequestStarted(s) = &e.event { Some(s.clone()) } else { None }).unwrap()
}

fn head(events: &[Envelope]) -> ResponseHead {
    events.iter().find_map(|e| if let Event::ResponseHead(h) = &e.event { Some(h.clone()) } else { None }).unwrap()
}

/// The HTTP version the bundled spec asks for.
fn bundled_http_version() -> HttpVersion {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/spec.yaml");
    Spec::load(&path).unwrap().inference.transport.http_version
}

/// The request head's header lines, names lowercased (HTTP/1.1 names are case-insensitive).
fn header_lines(request: &str) -> Vec<String> {
    request
        .lines()
        .skip(1)
        .map(|line| match line.split_once(':') {
            Some((name, value)) => format!("{}: {}", name.to_ascii_lowercase(), value.trim()),
            None => line.to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_bearer_credential_goes_as_x_api_key_with_the_anthropic_version_on_messages_and_as_authorization_elsewhere() {
    let answer = sse(&format!("data: {ANSWER}\n\ndata: [DONE]\n\n"));
    let (events, _, request) = attempt_on(WireApi::Messages, answer.clone(), LIMITS, HttpVersion::default()).await;
    let sent = header_lines(&request);
    assert!(sent.contains(&format!("x-api-key: {KEY}")), "{sent:#?}");
    assert!(sent.contains(&format!("anthropic-version: {}", crate::client::ANTHROPIC_VERSION)), "{sent:#?}");
    assert!(!sent.iter().any(|l| l.starts_with("authorization:")), "{sent:#?}");
    let logged = started(&events);
    assert_eq!(logged.api, WireApi::Messages);
    assert_eq!(logged.headers["x-api-key"], crate::credentials::REDACTED);
    assert_eq!(logged.headers["anthropic-version"], crate::client::ANTHROPIC_VERSION);
    let (events, _, request) = attempt_on(WireApi::Responses, answer, LIMITS, HttpVersion::default()).await;
    let sent = header_lines(&request);
    assert!(sent.contains(&format!("authorization: Bearer {KEY}")), "{sent:#?}");
    assert!(!sent.iter().any(|l| l.starts_with("x-api-key:") || l.starts_with("anthropic-version:")), "{sent:#?}");
    assert_eq!(started(&events).api, WireApi::Responses);
}

#[tokio::test]
async fn the_default_client_sends_http_1_1_uncompressed_with_its_user_agent_and_logs_what_it_sent() {
    assert_eq!(bundled_http_version(), HttpVersion::Http1);
    let answer = sse(&format!("data: {ANSWER}\n\ndata: [DONE]\n\n"));
    let (events, _, request) = attempt(answer, LIMITS, bundled_http_version()).await;
    assert!(request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"), "{request}");
    let sent = header_lines(&request);
    let user_agent = format!("user-agent: inferbench/{}", env!("CARGO_PKG_VERSION"));
    for line in ["accept-encoding: identity", user_agent.as_str(), "accept: text/event-stream"] {
        assert!(sent.iter().any(|l| l == line), "`{line}` not in {sent:#?}");
    }
    // Every logged header was sent as logged, except the credential, which is only named.
    let logged = started(&events).headers;
    assert!(logged.contains_key("User-Agent") && logged.contains_key("Accept-Encoding"), "{logged:?}");
    for (name, value) in &logged {
        let name = name.to_ascii_lowercase();
        if value == crate::credentials::REDACTED {
            assert!(sent.iter().any(|l| l.starts_with(&format!("{name}: "))), "{name} not sent");
        } else {
            assert!(sent.contains(&format!("{name}: {value}")), "{name}: {value} logged but not sent: {sent:#?}");
        }
    }
    assert_eq!(head(&events).http_version.as_deref(), Some("HTTP/1.1"));
    assert_eq!(terminal(&events).outcome, Outcome::Completed);
}

#[tokio::test]
async fn http_2_over_plain_http_speaks_http_1_1_and_logs_it() {
    let answer = sse(&format!("data: {ANSWER}\n\ndata: [DONE]\n\n"));
    let (events, _, request) = attempt(answer, LIMITS, HttpVersion::Http2).await;
    assert!(request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"), "no h2c prior knowledge: {request}");
    assert_eq!(head(&events).http_version.as_deref(), Some("HTTP/1.1"));
}

#[tokio::test]
async fn the_content_encoding_of_a_response_is_logged() {
    let mut response = http("200 OK", Some("text/event-stream"), b"\x1f\x8b\x08\x00");
    let at = response.windows(2).position(|w| w == b"\r\n").unwrap() + 2;
    response.splice(at..at, b"Content-Encoding: gzip\r\n".iter().copied());
    let (events, _) = run(response, LIMITS).await;
    assert_eq!(head(&events).headers.get("content-encoding").map(String::as_str), Some("gzip"));
}

/// The protocols a TLS ClientHello offers by ALPN (RFC 7301), read from its raw record.
fn alpn_offered(hello: &[u8]) -> Vec<String> {
    assert_eq!((hello[0], hello[5]), (0x16, 0x01), "a handshake record holding a ClientHello");
    let byte = |i: usize| usize::from(hello[i]);
    let short = |i: usize| byte(i) << 8 | byte(i + 1);
    // Record header 5, handshake header 4, client version 2, random 32.
    let mut at = 5 + 4 + 2 + 32;
    at += 1 + byte(at); // session id
    at += 2 + short(at); // cipher suites
    at += 1 + byte(at); // compression methods
    let end = at + 2 + short(at);
    at += 2;
    while at + 4 <= end {
        let (kind, len) = (short(at), short(at + 2));
        at += 4;
        if kind == 16 {
            let mut protocols = Vec::new();
            let mut p = at + 2;
            while p < at + len {
                protocols.push(String::from_utf8_lossy(&hello[p + 1..p + 1 + byte(p)]).into_owned());
                p += 1 + byte(p);
            }
            return protocols;
        }
        at += len;
    }
    Vec::new()
}

/// What a client for `http_version` offers by ALPN to an https:// endpoint: its ClientHello
/// is read off a raw TCP socket (no handshake follows, so the request then fails).
async fn offered_by(http_version: HttpVersion) -> Vec<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("https://{}/v1/chat/completions", listener.local_addr().unwrap());
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ProviderClient::new(
        provider(),
        WireApi::ChatCompletions,
        endpoint.clone(),
        Credentials::for_tests(KEY),
        http_version,
    )
    .unwrap();
    let request = http::Request::post(endpoint.as_str()).body(crate::transport::Body::default()).unwrap();
    let request =
        tokio::spawn(async move { client.http.sending(crate::transport::Outgoing::new(request)).await.is_ok() });
    let (mut sock, _) = listener.accept().await.unwrap();
    let mut hello = Vec::new();
    let mut buf = vec![0u8; 65536];
    while hello.len() < 5 || hello.len() < 5 + (usize::from(hello[3]) << 8 | usize::from(hello[4])) {
        let n = sock.read(&mut buf).await.unwrap();
        assert!(n > 0, "the client closed before its ClientHello was complete");
        hello.extend_from_slice(&buf[..n]);
    }
    drop(sock);
    assert!(!request.await.unwrap(), "no TLS server answered");
    alpn_offered(&hello)
}

#[tokio::test]
async fn the_default_client_offers_only_http_1_1_over_tls_and_http_2_offers_both() {
    assert_eq!(offered_by(bundled_http_version()).await, ["http/1.1"]);
    assert_eq!(offered_by(HttpVersion::Http2).await, ["h2", "http/1.1"]);
}

#[test]
fn protocol_versions_are_logged_in_their_usual_spelling() {
    assert_eq!(version_name(http::Version::HTTP_11), "HTTP/1.1");
    assert_eq!(version_name(http::Version::HTTP_2), "HTTP/2");
    assert_eq!(version_name(http::Version::HTTP_10), "HTTP/1.0");
}

/// A keep-alive server that answers the n-th request it reads (over all its connections) with
/// `responses[n]`, raw, and reads the next request on the same connection; the counter says
/// how many connections it accepted.
async fn serve_in_turn(responses: Vec<Vec<u8>>) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    let next = Arc::new(AtomicUsize::new(0));
    let responses = Arc::new(responses);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            counted.fetch_add(1, SeqCst);
            let (next, responses) = (Arc::clone(&next), Arc::clone(&responses));
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = vec![0u8; 65536];
                loop {
                    // One request: its head and its Content-Length body.
                    let complete = |seen: &[u8]| {
                        let end = seen.windows(4).position(|w| w == b"\r\n\r\n")?;
                        let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap());
                        (seen.len() >= end + 4 + length).then_some(end + 4 + length)
                    };
                    while complete(&seen).is_none() {
                        match sock.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => seen.extend_from_slice(&buf[..n]),
                        }
                    }
                    seen.drain(..complete(&seen).unwrap());
                    let response = &responses[next.fetch_add(1, SeqCst)];
                    if sock.write_all(response).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}/v1/chat/completions"), accepted)
}

/// An event stream answered with its length and the connection kept open.
fn kept_alive_sse(body: &str) -> Vec<u8> {
    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n", body.len());
    [head.as_bytes(), body.as_bytes()].concat()
}

#[tokio::test(flavor = "current_thread")]
async fn a_completed_exchange_hands_its_connection_to_the_next_request_and_an_abandoned_one_does_not() {
    use std::sync::atomic::Ordering::SeqCst;
    let done = kept_alive_sse(&format!("data: {ANSWER}\n\ndata: [DONE]\n\n"));
    let too_large = kept_alive_sse(&format!("data: {ANSWER}\n\n{}", ": padding\n\n".repeat(100)));
    // A stream that never ends: its head and one comment, then silence.
    let endless =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n:\n\n\r\n"
            .to_vec();
    let error = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy".to_vec();
    let responses = vec![done.clone(), done.clone(), too_large, done.clone(), endless, error, done];
    let (endpoint, accepted) = serve_in_turn(responses).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("0001.jsonl");
    let log = EventLog::open(&path, "run-x".into(), 0, 0).unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ProviderClient::new(
        provider(),
        WireApi::ChatCompletions,
        endpoint,
        Credentials::for_tests(KEY),
        HttpVersion::default(),
    )
    .unwrap();
    let limits = Limits { max_event_bytes: 1 << 20, max_response_bytes: 500 };
    // Each request, what it ends with, and how many connections the server has accepted then.
    let expected = [
        (Outcome::Completed, 1),
        (Outcome::Completed, 1),
        // The body cap: the rest of that answer is never read, so its connection closes.
        (Outcome::InvalidStream, 1),
        (Outcome::Completed, 2),
        // The deadline strikes mid-stream.
        (Outcome::Timeout, 2),
        // An error answer read to its end keeps its connection.
        (Outcome::HttpError, 3),
        (Outcome::Completed, 3),
    ];
    for (i, (_, connections)) in expected.into_iter().enumerate() {
        let unit = Unit {
            request_id: format!("r{i}"),
            round_id: format!("round{i}"),
            round_index: i as u64,
            provider: "p".into(),
            task_family: inferbench_contract::vocab::TaskFamily::TicketTriage,
            item_id: "i".into(),
            attempt: 1,
            body: serde_json::json!({}),
            step: None,
            target_input_tokens: None,
            target_output_tokens: None,
        };
        execute(&log, &client, &unit, 0, Duration::from_millis(300), limits).await.unwrap();
        assert_eq!(accepted.load(SeqCst), connections, "connections after request {i}");
    }
    drop(log);
    let events = inferbench_store::jsonl::read::<Envelope>(&path).unwrap().records;
    let outcomes: Vec<Outcome> = events
        .iter()
        .filter_map(|e| if let Event::RequestTerminal(t) = &e.event { Some(t.outcome) } else { None })
        .collect();
    assert_eq!(outcomes, expected.map(|(outcome, _)| outcome));
}

/// An event stream in chunked transfer encoding, one HTTP chunk per event, all sent at once.
fn chunked_sse(events: &[&str]) -> Vec<u8> {
    let mut bytes =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for event in events {
        let data = format!("data: {event}\n\n");
        bytes.extend_from_slice(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes());
    }
    bytes.extend_from_slice(b"0\r\n\r\n");
    bytes
}

#[tokio::test]
async fn chunks_that_arrive_together_are_stamped_together_however_long_logging_takes() {
    let delta = |text: &str| serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]}).to_string();
    let (first, second, third) = (delta("{\"answer\": "), delta("\"flushed\""), delta("}"));
    let (events, _) = run(chunked_sse(&[&first, &second, &third, "[DONE]"]), LIMITS).await;
    assert_eq!(terminal(&events).outcome, Outcome::Completed);
    let stamps: Vec<u64> = events.iter().filter(|e| matches!(&e.event, Event::SseEvent(_))).map(|e| e.t_ns).collect();
    assert_eq!(stamps.len(), 4, "{}", whole_log(&events));
    assert!(stamps.iter().all(|&t| t == stamps[0]), "one write, one arrival: {stamps:?}");
}
