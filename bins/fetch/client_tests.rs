//! The real client against a raw TCP server that sends exactly the bytes a test gives it: how
//! hostile streams are logged and judged, and that no credential reaches the log.
use crate::client::{execute, Limits, ProviderClient, Unit};
use crate::credentials::Credentials;
use crate::log::EventLog;
use inferbench_schemas::event::{Envelope, Event, RequestTerminal};
use inferbench_schemas::providers::Provider;
use inferbench_schemas::vocab::{ErrorKind, Outcome};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

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

/// Serves one connection with `response` (raw HTTP bytes), then closes it.
async fn serve_once(response: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = sock.read(&mut buf).await;
        let _ = sock.write_all(&response).await;
        let _ = sock.shutdown().await;
    });
    format!("http://{addr}/v1/chat/completions")
}

/// One attempt against `response`; the log's records and its size in bytes.
async fn run(response: Vec<u8>, limits: Limits) -> (Vec<Envelope>, u64) {
    let endpoint = serve_once(response).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("0001.jsonl");
    let log = EventLog::open(&path, "run-x".into(), 0, 0).unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ProviderClient::new(provider(), endpoint, Credentials::for_tests(KEY)).unwrap();
    let unit = Unit {
        request_id: "r1".into(),
        round_id: "round".into(),
        round_index: 0,
        provider: "p".into(),
        task_family: inferbench_schemas::vocab::TaskFamily::TicketTriage,
        item_id: "i".into(),
        attempt: 1,
        body: serde_json::json!({}),
    };
    execute(&log, &client, &unit, 0, Duration::from_secs(10), limits).await.unwrap();
    drop(log);
    let size = std::fs::metadata(&path).unwrap().len();
    (inferbench_schemas::jsonl::read::<Envelope>(&path).unwrap().records, size)
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
