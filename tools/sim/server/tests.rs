//! Tests of the server over real sockets, with a deliberately raw HTTP/1.1 client: nothing
//! between the socket and what is checked (status line, headers, chunk framing, bytes).
use super::*;
use inferbench_sim::dataset::fixtures;
use std::path::{Path as FsPath, PathBuf};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const PROFILES: &str = r#"
time_scale: 0.01
providers:
  Z.AI:
    model: glm-5.3-flash
    ttft_ms: {median: 3000, p99: 6000}
    tokens_per_second: {median: 2000, p05: 1000}
    reasoning_tokens: {mean: 6}
  "\u212Aelvin":
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
  always-usage:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    usage_chunk: always
  never-usage:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    usage_chunk: never
  one-slot:
    model: m
    ttft_ms: {median: 3000, p99: 3001}
    tokens_per_second: {median: 100000, p05: 99999}
    slots: 1
  caching:
    model: m
    ttft_ms: {median: 3000, p99: 3001}
    tokens_per_second: {median: 100000, p05: 99999}
    prompt_cache: {ttft_factor: 0.1}
  limited:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 100, p05: 50}
    faults: {http_429: 1.0}
  broken:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {disconnect: 1.0}
  in-band:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {in_band_error: 1.0}
  error-event:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {error_event: 1.0}
  json:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {non_sse: 1.0}
  html:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {non_sse: 1.0, non_sse_kind: html}
  empty:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {non_sse: 1.0, non_sse_kind: empty}
  no-content:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {non_sse: 1.0, non_sse_kind: no_content}
  hang:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {done_then_hang: 1.0}
  trailing:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {data_after_done: 1.0}
  truncated:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {truncate: 1.0}
  keepalive:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    reasoning_tokens: {mean: 4}
    faults: {empty_data: 1.0}
  oversized:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {oversized_line: 1.0, oversized_bytes: 3000000}
  endless:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {unterminated_line: 1.0}
  anonymous:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {no_model: 1.0}
  echo:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    reasoning_tokens: {mean: 4}
    faults: {credential_echo: 1.0}
  bad-request:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {http_400: 1.0}
  moved:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    faults: {redirect: 1.0}
  crlf:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    line_ending: crlf
  split:
    model: m
    ttft_ms: {median: 100, p99: 200}
    tokens_per_second: {median: 1000, p05: 500}
    reasoning_tokens: {mean: 6}
    split_utf8: true
"#;

struct Sim {
    addr: std::net::SocketAddr,
    log: PathBuf,
    _dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Sim {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start() -> Sim {
    let dir = tempfile::tempdir().unwrap();
    let profiles = Profiles::parse(PROFILES, FsPath::new("t.yaml")).unwrap();
    let log_path = dir.path().join("sim.jsonl");
    let log = RequestLog::open(log_path.clone()).unwrap();
    let time_scale = profiles.time_scale;
    let app = Arc::new(App::new(profiles, fixtures::dataset(), time_scale, 0, Some(log)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(serve(
        listener,
        app,
        async move {
            let _ = stopped.await;
        },
        Duration::from_secs(1),
    ));
    Sim { addr, log: log_path, _dir: dir, stop: Some(stop) }
}

struct Reply {
    head: String,
    /// The raw (chunked) body, as far as it was read.
    body: Vec<u8>,
    /// Time from the end of sending the request to the arrival of the first byte that
    /// carried answer content (when asked for).
    first_answer: Option<Duration>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }

    /// The decoded body of a complete chunked response, as text.
    fn text(&self) -> String {
        String::from_utf8(dechunk(&self.body).expect("a complete chunked body")).unwrap()
    }
}

/// A test on the bytes read so far.
type Stop<'a> = &'a dyn Fn(&[u8]) -> bool;

/// How a request is sent and when reading stops.
#[derive(Default)]
struct Send<'a> {
    headers: &'a [(&'a str, &'a str)],
    /// Stop reading (and close) once the raw bytes read satisfy this.
    until: Option<Stop<'a>>,
    time_first_answer: bool,
}

async fn send(addr: std::net::SocketAddr, path: &str, body: &str) -> Reply {
    send_with(addr, "POST", path, body, Send::default()).await
}

async fn send_with(addr: std::net::SocketAddr, method: &str, path: &str, body: &str, how: Send<'_>) -> Reply {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let extra: String = how.headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let sent = std::time::Instant::now();
    let mut raw = Vec::new();
    let mut first_answer = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = s.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if how.time_first_answer && first_answer.is_none() {
            let text = String::from_utf8_lossy(&raw);
            if text.match_indices("\"content\":\"").any(|(i, m)| !text[i + m.len()..].starts_with('"')) {
                first_answer = Some(sent.elapsed());
            }
        }
        if how.until.is_some_and(|stop| stop(&raw)) {
            break;
        }
    }
    // A connection the server aborts may be reset before the client reads anything (the
    // kernel discards unread data on RST): then there is no head at all.
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Reply { head: String::new(), body: raw, first_answer };
    };
    Reply { head: String::from_utf8_lossy(&raw[..split]).into_owned(), body: raw[split + 4..].to_vec(), first_answer }
}

/// The chunks of a chunked body, and whether the zero-length terminator came.
fn chunks(mut body: &[u8]) -> (Vec<Vec<u8>>, bool) {
    let mut out = Vec::new();
    loop {
        let Some(eol) = body.windows(2).position(|w| w == b"\r\n") else { return (out, false) };
        let Some(size) = std::str::from_utf8(&body[..eol]).ok().and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
        else {
            return (out, false);
        };
        body = &body[eol + 2..];
        if size == 0 {
            return (out, true);
        }
        let Some(data) = body.get(..size) else {
            out.push(body.to_vec());
            return (out, false);
        };
        out.push(data.to_vec());
        body = body.get(size + 2..).unwrap_or(&[]);
    }
}

/// Decodes a chunked body; `None` if it does not end with the zero-length chunk.
fn dechunk(body: &[u8]) -> Option<Vec<u8>> {
    let (chunks, complete) = chunks(body);
    complete.then(|| chunks.concat())
}

fn chat_body(user: &str) -> String {
    json!({"model": "glm-5.3-flash", "stream": true, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": user}]}).to_string()
}

fn chat_body_with_usage(user: &str) -> String {
    let mut v: Value = serde_json::from_str(&chat_body(user)).unwrap();
    v["stream_options"] = json!({"include_usage": true});
    v.to_string()
}

/// The `data:` payloads of an LF-framed event stream.
fn data_lines(text: &str) -> Vec<&str> {
    text.split("\n\n").filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data:"))).map(str::trim_start).collect()
}

fn chunk_values(text: &str) -> Vec<Value> {
    data_lines(text)
        .into_iter()
        .filter(|d| *d != "[DONE]" && !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

fn delta(c: &Value, k: &str) -> String {
    c["choices"][0]["delta"][k].as_str().unwrap_or("").to_string()
}

fn answer_of(text: &str) -> String {
    chunk_values(text).iter().map(|c| delta(c, "content")).collect()
}

fn log_lines(sim: &Sim) -> Vec<Value> {
    std::fs::read_to_string(&sim.log).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The log line of the first request to `provider`, waiting for it (streams log when they
/// end, which may be after the client has read everything).
async fn logged(sim: &Sim, provider: &str) -> Value {
    for _ in 0..500 {
        if let Some(v) = log_lines(sim).into_iter().find(|v| v["provider"] == provider) {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no log line for {provider}");
}

const TICKET: &str = fixtures::TICKET_USER;
const TICKET_ANSWER: &str = r#"{"category":"bug","priority":"p1"}"#;

mod apis;
mod faults;

#[tokio::test]
async fn streams_a_full_sse_sequence_on_time() {
    let sim = start().await;
    let how = Send { time_first_answer: true, ..Send::default() };
    let reply = send_with(sim.addr, "POST", "/z-ai/v1/chat/completions", &chat_body(TICKET), how).await;
    assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
    assert_eq!(reply.header("content-type").as_deref(), Some("text/event-stream"));
    assert_eq!(reply.header("x-request-id").as_deref(), Some("chatcmpl-z-ai-0"));
    let body = reply.text();
    let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
    assert!(events.iter().all(|e| e.starts_with("data: ")));
    assert_eq!(*events.last().unwrap(), "data: [DONE]");
    let chunks = chunk_values(&body);
    assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
    let reasoning: String = chunks.iter().map(|c| delta(c, "reasoning_content")).collect();
    assert!(!reasoning.is_empty());
    assert_eq!(answer_of(&body), TICKET_ANSWER);
    // Reasoning strictly before the answer; then the finish; no usage (not asked for).
    let first_answer = chunks.iter().position(|c| !delta(c, "content").is_empty()).unwrap();
    assert!(chunks[first_answer..].iter().all(|c| delta(c, "reasoning_content").is_empty()));
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "stop");
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert!(chunks.iter().all(|c| c["model"] == "glm-5.3-flash" && c["id"] == "chatcmpl-z-ai-0"));

    let rec = logged(&sim, "z-ai").await;
    assert_eq!((rec["item_id"].as_str(), rec["fault"].as_str()), (Some("t-1"), Some("none")));
    assert_eq!((rec["ending"].as_str(), rec["include_usage"].as_bool()), (Some("completed"), Some(false)));
    assert_eq!(rec["events_sent"].as_u64().unwrap() as usize, events.len());
    assert_eq!(rec["body_bytes"].as_u64().unwrap() as usize, body.len());
    let scaled_ttft = rec["ttft_ms"].as_f64().unwrap() * 0.01;
    let offsets: Vec<f64> =
        rec["answer_event_offsets_ms"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(offsets.len(), rec["answer_events"].as_u64().unwrap() as usize);
    assert!(offsets[0] >= scaled_ttft, "{offsets:?} vs {scaled_ttft}");
    // The client saw the first answer no earlier than the drawn TTFT.
    let seen = reply.first_answer.unwrap().as_secs_f64() * 1000.0;
    assert!(seen >= scaled_ttft, "first answer after {seen} ms, drawn TTFT {scaled_ttft} ms");
}

#[tokio::test]
async fn a_provider_with_slots_queues_what_is_over_them_first_come_first_served() {
    let sim = start().await;
    let body = chat_body(TICKET);
    let sends = (0..3).map(|_| send(sim.addr, "/one-slot/v1/chat/completions", &body));
    let replies = futures_util::future::join_all(sends).await;
    assert!(replies.iter().all(|r| r.head.starts_with("HTTP/1.1 200")));
    let mut lines = Vec::new();
    for _ in 0..500 {
        lines = log_lines(&sim).into_iter().filter(|v| v["provider"] == "one-slot").collect();
        if lines.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Each request's service, in ms since the epoch: from the end of its wait to its last event.
    let mut served: Vec<(f64, f64)> = lines
        .iter()
        .map(|v| {
            let start = v["received_unix_ms"].as_f64().unwrap() + v["queued_ms"].as_f64().expect("its wait");
            let last = v["answer_event_offsets_ms"].as_array().unwrap().last().unwrap().as_f64().unwrap();
            (start, start + last)
        })
        .collect();
    served.sort_by(|a, b| a.0.total_cmp(&b.0));
    // One at a time (ms resolution of the receipt times), and at least one waited a whole
    // service of 30 ms: requests that arrive together are queued, not served at once.
    assert!(served.windows(2).all(|w| w[1].0 >= w[0].1 - 1.0), "{served:?}");
    let longest = lines.iter().map(|v| v["queued_ms"].as_f64().unwrap()).fold(0.0, f64::max);
    assert!(longest >= 29.0, "{lines:#?}");
    let free = send(sim.addr, "/z-ai/v1/chat/completions", &body).await;
    assert!(free.head.starts_with("HTTP/1.1 200"));
    assert!(logged(&sim, "z-ai").await.get("queued_ms").is_none(), "no slots, no queue, no field");
}

#[tokio::test]
async fn a_provider_with_a_prompt_cache_answers_a_prompt_it_has_seen_sooner() {
    let sim = start().await;
    let (prompt, other) = (chat_body(TICKET), chat_body(&format!("{TICKET} ")));
    for body in [&prompt, &prompt, &other] {
        assert!(send(sim.addr, "/caching/v1/chat/completions", body).await.head.starts_with("HTTP/1.1 200"));
    }
    let mut lines = Vec::new();
    for _ in 0..500 {
        lines = log_lines(&sim).into_iter().filter(|v| v["provider"] == "caching").collect();
        if lines.len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    lines.sort_by_key(|v| v["counter"].as_u64());
    let hits: Vec<bool> = lines.iter().map(|v| v["prompt_cache_hit"].as_bool().unwrap()).collect();
    assert_eq!(hits, [false, true, false], "the repeat is a hit, another prompt is not");
    let ttft: Vec<f64> = lines.iter().map(|v| v["ttft_ms"].as_f64().unwrap()).collect();
    assert!(ttft[1] < 301.0 && ttft[0] > 2999.0 && ttft[2] > 2999.0, "{ttft:?}");
    let first_answer = |v: &Value| v["answer_event_offsets_ms"][0].as_f64().unwrap();
    assert!(first_answer(&lines[1]) < first_answer(&lines[0]) - 20.0, "{lines:#?}");
    let free = send(sim.addr, "/z-ai/v1/chat/completions", &prompt).await;
    assert!(free.head.starts_with("HTTP/1.1 200"));
    assert!(logged(&sim, "z-ai").await.get("prompt_cache_hit").is_none(), "no cache, no field");
}

#[tokio::test]
async fn usage_is_sent_if_and_only_if_asked_unless_the_provider_ignores_it() {
    let sim = start().await;
    for (provider, asked, want) in [
        ("z-ai", true, true),
        ("z-ai", false, false),
        ("always-usage", false, true),
        ("always-usage", true, true),
        ("never-usage", true, false),
    ] {
        let body = if asked { chat_body_with_usage(TICKET) } else { chat_body(TICKET) };
        let text = send(
            sim.addr,
            &inferbench_inputs::providers::simulated_endpoint(
                "",
                provider,
                inferbench_contract::vocab::WireApi::ChatCompletions,
            ),
            &body,
        )
        .await
        .text();
        let usage: Vec<Value> = chunk_values(&text).into_iter().filter(|c| c.get("usage").is_some()).collect();
        assert_eq!(usage.len(), want as usize, "{provider} asked={asked}");
        if want {
            assert_eq!(usage[0]["choices"], json!([]));
            assert!(usage[0]["usage"]["completion_tokens"].as_u64().unwrap() > 0);
            // The usage chunk comes after the finish, before [DONE].
            assert_eq!(data_lines(&text).last(), Some(&"[DONE]"));
        }
        assert_eq!(answer_of(&text), TICKET_ANSWER);
    }
    let log = log_lines(&sim);
    let flags: Vec<(bool, bool)> =
        log.iter().map(|r| (r["include_usage"].as_bool().unwrap(), r["usage_chunk"].as_bool().unwrap())).collect();
    assert_eq!(flags, [(true, true), (false, false), (false, true), (true, true), (true, false)]);
}

#[tokio::test]
async fn the_route_is_the_contract_slug() {
    let sim = start().await;
    let route = inferbench_inputs::providers::simulated_endpoint(
        "",
        "\u{212A}elvin",
        inferbench_contract::vocab::WireApi::ChatCompletions,
    );
    assert_eq!(route, "/elvin/v1/chat/completions");
    let r = send(sim.addr, &route, &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 200"), "{}", r.head);
    let r = send(sim.addr, "/kelvin/v1/chat/completions", &chat_body(TICKET)).await;
    assert!(r.head.starts_with("HTTP/1.1 404"), "{}", r.head);
}

#[tokio::test]
async fn rate_limited_provider_answers_429_with_retry_after() {
    let sim = start().await;
    let reply = send(sim.addr, "/limited/v1/chat/completions", &chat_body("x")).await;
    assert!(reply.head.starts_with("HTTP/1.1 429"), "{}", reply.head);
    assert_eq!(reply.header("retry-after").as_deref(), Some("2"));
    let body = dechunk(&reply.body).unwrap_or(reply.body.clone());
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["error"]["type"], "rate_limit_error");
    let rec = &log_lines(&sim)[0];
    assert_eq!((rec["status"].as_u64(), rec["fault"].as_str()), (Some(429), Some("http_429")));
}

#[tokio::test]
async fn disconnect_truncates_the_body() {
    let sim = start().await;
    let reply = send(sim.addr, "/broken/v1/chat/completions", &chat_body(TICKET)).await;
    if !reply.head.is_empty() {
        assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
        assert!(dechunk(&reply.body).is_none(), "the body must not end cleanly");
    }
    assert!(!String::from_utf8_lossy(&reply.body).contains("[DONE]"));
    assert_eq!(logged(&sim, "broken").await["ending"], "aborted", "the simulator records the abort either way");
}

#[tokio::test]
async fn routing_and_request_errors() {
    let sim = start().await;
    let r = send_with(sim.addr, "GET", "/healthz", "", Send::default()).await;
    assert!(r.head.starts_with("HTTP/1.1 200"));
    let r = send(sim.addr, "/nobody/v1/chat/completions", &chat_body("x")).await;
    assert!(r.head.starts_with("HTTP/1.1 404"), "{}", r.head);
    assert!(String::from_utf8_lossy(&r.body).contains("unknown provider"));
    let r = send(sim.addr, "/z-ai/v1/chat/completions", r#"{"stream":false,"messages":[]}"#).await;
    assert!(r.head.starts_with("HTTP/1.1 400"), "{}", r.head);
    let r = send(sim.addr, "/z-ai/v1/chat/completions", "not json").await;
    assert!(r.head.starts_with("HTTP/1.1 400"), "{}", r.head);
    assert!(log_lines(&sim).is_empty(), "rejected requests are not draws");
}

#[tokio::test]
async fn unknown_prompts_answer_unknown() {
    let sim = start().await;
    let text = send(sim.addr, "/z-ai/v1/chat/completions", &chat_body("never seen")).await.text();
    assert_eq!(answer_of(&text), answer::UNKNOWN);
    assert_eq!(logged(&sim, "z-ai").await["item_id"], Value::Null);
}

#[test]
fn user_text_and_prompt_tokens() {
    let req = json!({"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]});
    assert_eq!(user_text(&req).as_deref(), Some("ab"));
    assert_eq!(user_text(&json!({"messages": []})), None);
    assert_eq!(prompt_tokens(&req), 3 + (3 + 1) + (3 + 1));
}
