//! The HTTP side: routes, the chat-completions handler, the request log, and serving with
//! TCP_NODELAY and graceful shutdown.
use crate::answer::{self, tokenize};
use crate::dataset::Dataset;
use crate::draw::Drawer;
use crate::profile::{Fault, Profile, Profiles};
use crate::stream::{self, Ending, Frame, Request};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use inferbench_schemas::tokenizer;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Everything the handlers share.
pub struct App {
    providers: HashMap<String, Provider>,
    dataset: Dataset,
    time_scale: f64,
    log: Option<RequestLog>,
}

struct Provider {
    profile: Profile,
    drawer: Drawer,
    /// Requests received so far; part of every draw's key.
    counter: AtomicU64,
}

impl App {
    pub fn new(profiles: Profiles, dataset: Dataset, time_scale: f64, seed: u64, log: Option<RequestLog>) -> App {
        let providers = profiles
            .providers
            .into_iter()
            .map(|(slug, profile)| {
                let drawer = Drawer::new(seed, &slug, profiles.sampling);
                (slug, Provider { profile, drawer, counter: AtomicU64::new(0) })
            })
            .collect();
        App { providers, dataset, time_scale, log }
    }
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/{provider}/v1/chat/completions", post(chat))
        .fallback(|| async {
            error(StatusCode::NOT_FOUND, "not_found_error", "no such route; use POST /{provider}/v1/chat/completions")
        })
        .with_state(app)
}

/// Serves until `shutdown` resolves, then lets in-flight streams finish for at most
/// `grace` (a request stalled for 25 s must not hold up a `make` that stops the simulator).
pub async fn serve(
    listener: TcpListener,
    app: Arc<App>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    grace: Duration,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    // Without TCP_NODELAY, Nagle's algorithm holds small SSE frames back ~40 ms.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = tokio::spawn(async move {
        axum::serve(listener, router(app))
            .with_graceful_shutdown(async move {
                let _ = stop_rx.await;
            })
            .await
    });
    shutdown.await;
    let _ = stop_tx.send(());
    match tokio::time::timeout(grace, server).await {
        Ok(joined) => joined.map_err(std::io::Error::other)?,
        Err(_) => Ok(()),
    }
}

/// An OpenAI-style error response.
fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, Json(json!({"error": {"message": message, "type": kind, "code": status.as_u16()}}))).into_response()
}

async fn chat(State(app): State<Arc<App>>, Path(slug): Path<String>, body: Bytes) -> Response {
    // The clock every offset is measured from: as close to receipt as axum lets us be (the
    // body is already read, which on loopback takes microseconds).
    let received = Instant::now();
    let received_unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let Some(provider) = app.providers.get(&slug) else {
        return error(StatusCode::NOT_FOUND, "not_found_error", &format!("unknown provider \"{slug}\""));
    };
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => return error(StatusCode::BAD_REQUEST, "invalid_request_error", "the body must be a JSON object"),
    };
    if request.get("stream") != Some(&Value::Bool(true)) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "this simulator only streams: send \"stream\": true",
        );
    }
    let profile = &provider.profile;
    let counter = provider.counter.fetch_add(1, Ordering::SeqCst);
    let body_sha256: [u8; 32] = Sha256::digest(&body).into();
    let item = user_text(&request).and_then(|u| app.dataset.lookup(&u));
    let mut draw = provider.drawer.draw(profile, &body_sha256, counter);
    let id = format!("chatcmpl-{slug}-{counter}");
    let include_usage = request.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
    let usage = profile.usage_chunk.sends(include_usage);

    let mut record = LogRecord {
        received_unix_ms,
        provider: slug.clone(),
        counter,
        id: id.clone(),
        item_id: item.map(|i| i.id.clone()),
        body_sha256: hex(&body_sha256),
        requested_model: request.get("model").and_then(Value::as_str).map(str::to_string),
        fault: draw.fault,
        correct: item.is_some() && draw.correct,
        status: 200,
        ttft_ms: round3(draw.ttft_ms),
        tokens_per_second: round3(draw.tokens_per_second),
        time_scale: app.time_scale,
        reasoning_tokens: draw.reasoning_tokens,
        answer_tokens: 0,
        answer_events: 0,
        include_usage,
        usage_chunk: usage,
        ending: None,
        answer_event_offsets_ms: Vec::new(),
    };
    match draw.fault {
        Fault::Http429 => {
            record.status = 429;
            app.write_log(&record);
            let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "rate limit reached, retry later");
            r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("2"));
            r.headers_mut().insert("x-ratelimit-remaining-requests", header::HeaderValue::from_static("0"));
            return r;
        }
        Fault::Http5xx => {
            record.status = 503;
            app.write_log(&record);
            return error(StatusCode::SERVICE_UNAVAILABLE, "server_error", "the model is overloaded, try again");
        }
        _ => {}
    }

    let text = answer::answer(item, draw.correct, &app.dataset, &mut draw.rng);
    let answer = tokenize(&text, profile.tokens_per_chunk);
    let reasoning = answer::reasoning(draw.reasoning_tokens, profile.tokens_per_chunk);
    let steps = stream::plan(&Request {
        profile,
        draw: &draw,
        id: &id,
        answer: &answer,
        reasoning: &reasoning,
        prompt_tokens: prompt_tokens(&request),
        usage,
    });
    record.answer_tokens = answer.token_count;
    record.answer_events = answer.chunks.len();
    let headers_at = stream::headers_at_ms(profile, &draw);

    let (head_tx, head_rx) = oneshot::channel();
    let (body_tx, mut body_rx) = mpsc::channel::<Frame>(16);
    let time_scale = app.time_scale;
    let app_for_log = Arc::clone(&app);
    tokio::spawn(async move {
        let played = stream::play(steps, headers_at, received, time_scale, head_tx, body_tx).await;
        record.ending = Some(played.ending);
        record.answer_event_offsets_ms = played.answer_offsets_ms.into_iter().map(round3).collect();
        app_for_log.write_log(&record);
    });
    if head_rx.await.is_err() {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "stream task ended early");
    }
    // Each frame becomes its own HTTP chunk, written as soon as it is produced.
    let frames = futures_util::stream::poll_fn(move |cx| body_rx.poll_recv(cx));
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .header("x-request-id", id)
        .body(Body::from_stream(frames))
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "bad response"))
}

/// The text of the (last) user message: a string, or the concatenated text parts.
fn user_text(request: &Value) -> Option<String> {
    let messages = request.get("messages")?.as_array()?;
    let msg = messages.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    content_text(msg.get("content")?)
}

fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect()),
        _ => None,
    }
}

/// OpenAI's accounting for chat prompts: the content tokens plus 3 per message plus 3.
fn prompt_tokens(request: &Value) -> usize {
    let messages = request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    3 + messages
        .iter()
        .map(|m| 3 + m.get("content").and_then(content_text).map(|t| tokenizer::count(&t)).unwrap_or(0))
        .sum::<usize>()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// One line of the `--log` file: what was drawn for a request and when its answer events
/// were handed to the connection, the ground truth against which a client's timing is
/// checked.
#[derive(Debug, Serialize)]
pub struct LogRecord {
    pub received_unix_ms: u64,
    pub provider: String,
    /// Per-provider request number, from 0.
    pub counter: u64,
    pub id: String,
    /// The dataset item the user message matched, if any.
    pub item_id: Option<String>,
    pub body_sha256: String,
    pub requested_model: Option<String>,
    pub fault: Fault,
    /// Whether the answer streamed (if any) is the gold.
    pub correct: bool,
    pub status: u16,
    /// Drawn TTFT in profile time; the real delay is `ttft_ms × time_scale`.
    pub ttft_ms: f64,
    pub tokens_per_second: f64,
    pub time_scale: f64,
    pub reasoning_tokens: usize,
    pub answer_tokens: usize,
    /// Answer events planned.
    pub answer_events: usize,
    /// Whether the request asked for usage (`stream_options.include_usage: true`).
    pub include_usage: bool,
    /// Whether the stream ends with a usage chunk (absent for HTTP errors).
    pub usage_chunk: bool,
    /// How the stream ended; absent for HTTP errors.
    pub ending: Option<Ending>,
    /// Real ms from receipt at which each answer event was written.
    pub answer_event_offsets_ms: Vec<f64>,
}

/// The append-only request log. Each record is one `write` of one line on a file opened
/// with O_APPEND, so concurrent requests never interleave.
pub struct RequestLog {
    file: Mutex<std::fs::File>,
    path: PathBuf,
}

impl RequestLog {
    pub fn open(path: PathBuf) -> std::io::Result<RequestLog> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(RequestLog { file: Mutex::new(file), path })
    }
}

impl App {
    fn write_log(&self, record: &LogRecord) {
        let Some(log) = &self.log else { return };
        let mut line = serde_json::to_string(record).unwrap_or_default();
        line.push('\n');
        let mut file = log.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(line.as_bytes()) {
            // Losing a log line must not take the provider down; say so once per failure.
            eprintln!("ib-sim: cannot append to {}: {e}", log.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixtures;
    use std::path::Path as FsPath;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    const PROFILES: &str = "
time_scale: 0.01
providers:
  Z.AI:
    model: glm-5.3-flash
    ttft_ms: {median: 3000, p99: 6000}
    tokens_per_second: {median: 2000, p05: 1000}
    reasoning_tokens: {mean: 6}
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
";

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
        let dataset = fixtures::dataset();
        let log_path = dir.path().join("sim.jsonl");
        let log = RequestLog::open(log_path.clone()).unwrap();
        let time_scale = profiles.time_scale;
        let app = Arc::new(App::new(profiles, dataset, time_scale, 0, Some(log)));
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
        /// The raw (chunked) body.
        body: Vec<u8>,
        /// Time from the end of sending the request to the arrival of the first byte that
        /// carried answer content.
        first_answer: Option<Duration>,
    }

    /// A deliberately raw HTTP/1.1 client: nothing between the socket and the timing.
    async fn send(addr: std::net::SocketAddr, method: &str, path: &str, body: &str) -> Reply {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let sent = std::time::Instant::now();
        let mut raw = Vec::new();
        let mut first_answer = None;
        let mut buf = [0u8; 4096];
        loop {
            let n = s.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&raw);
            if first_answer.is_none()
                && text.match_indices("\"content\":\"").any(|(i, m)| !text[i + m.len()..].starts_with('"'))
            {
                first_answer = Some(sent.elapsed());
            }
        }
        // A connection the server aborts may be reset before the client reads anything (the
        // kernel discards unread data on RST): then there is no head at all.
        let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
            return Reply { head: String::new(), body: raw, first_answer };
        };
        Reply {
            head: String::from_utf8_lossy(&raw[..split]).into_owned(),
            body: raw[split + 4..].to_vec(),
            first_answer,
        }
    }

    /// Decodes a chunked body; `None` if it does not end with the zero-length chunk.
    fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let eol = body.windows(2).position(|w| w == b"\r\n")?;
            let size = usize::from_str_radix(std::str::from_utf8(&body[..eol]).ok()?.trim(), 16).ok()?;
            body = &body[eol + 2..];
            if size == 0 {
                return Some(out);
            }
            out.extend_from_slice(body.get(..size)?);
            body = body.get(size + 2..)?;
        }
    }

    fn chat_body(user: &str) -> String {
        json!({"model": "glm-5.3-flash", "stream": true, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": user}]}).to_string()
    }

    fn chat_body_with_usage(user: &str) -> String {
        let mut v: Value = serde_json::from_str(&chat_body(user)).unwrap();
        v["stream_options"] = json!({"include_usage": true});
        v.to_string()
    }

    fn log_lines(sim: &Sim) -> Vec<Value> {
        std::fs::read_to_string(&sim.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn streams_a_full_sse_sequence_on_time() {
        let sim = start().await;
        let reply =
            send(sim.addr, "POST", "/z-ai/v1/chat/completions", &chat_body_with_usage(fixtures::TICKET_USER)).await;
        assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
        assert!(reply.head.to_lowercase().contains("content-type: text/event-stream"));
        let body = String::from_utf8(dechunk(&reply.body).expect("complete chunked body")).unwrap();
        let events: Vec<&str> = body.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert!(events.iter().all(|e| e.starts_with("data: ")));
        assert_eq!(*events.last().unwrap(), "data: [DONE]");
        let chunks: Vec<Value> =
            events[..events.len() - 1].iter().map(|e| serde_json::from_str(&e[6..]).unwrap()).collect();
        assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
        let delta = |c: &Value, k: &str| c["choices"][0]["delta"][k].as_str().unwrap_or("").to_string();
        let reasoning: String = chunks.iter().map(|c| delta(c, "reasoning_content")).collect();
        let answer: String = chunks.iter().map(|c| delta(c, "content")).collect();
        assert!(!reasoning.is_empty());
        assert_eq!(answer, r#"{"category":"bug","priority":"p1"}"#);
        // Reasoning strictly before the answer; then finish, usage.
        let first_answer = chunks.iter().position(|c| !delta(c, "content").is_empty()).unwrap();
        assert!(chunks[first_answer..].iter().all(|c| delta(c, "reasoning_content").is_empty()));
        let n = chunks.len();
        assert_eq!(chunks[n - 2]["choices"][0]["finish_reason"], "stop");
        assert!(chunks[n - 1]["usage"]["completion_tokens"].as_u64().unwrap() > 0);
        assert!(chunks.iter().all(|c| c["model"] == "glm-5.3-flash" && c["id"] == "chatcmpl-z-ai-0"));

        let log = log_lines(&sim);
        assert_eq!(log.len(), 1);
        let rec = &log[0];
        assert_eq!(
            (rec["provider"].as_str(), rec["item_id"].as_str(), rec["fault"].as_str()),
            (Some("z-ai"), Some("t-1"), Some("none"))
        );
        assert_eq!(rec["ending"], "completed");
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
    async fn usage_is_sent_if_and_only_if_asked_unless_the_provider_ignores_it() {
        let sim = start().await;
        for (provider, asked, want) in [
            ("z-ai", true, true),
            ("z-ai", false, false),
            ("always-usage", false, true),
            ("always-usage", true, true),
            ("never-usage", true, false),
        ] {
            let user = fixtures::TICKET_USER;
            let body = if asked { chat_body_with_usage(user) } else { chat_body(user) };
            let reply = send(sim.addr, "POST", &format!("/{provider}/v1/chat/completions"), &body).await;
            let text = String::from_utf8(dechunk(&reply.body).unwrap()).unwrap();
            let usage = text.split("\n\n").filter(|e| e.contains("\"usage\":")).count();
            assert_eq!(usage, want as usize, "{provider} asked={asked}");
            assert!(text.ends_with("data: [DONE]\n\n"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let flags: Vec<(bool, bool)> = log_lines(&sim)
            .iter()
            .map(|r| (r["include_usage"].as_bool().unwrap(), r["usage_chunk"].as_bool().unwrap()))
            .collect();
        assert_eq!(flags, [(true, true), (false, false), (false, true), (true, true), (true, false)]);
    }

    #[tokio::test]
    async fn rate_limited_provider_answers_429_with_retry_after() {
        let sim = start().await;
        let reply = send(sim.addr, "POST", "/limited/v1/chat/completions", &chat_body("x")).await;
        assert!(reply.head.starts_with("HTTP/1.1 429"), "{}", reply.head);
        assert!(reply.head.to_lowercase().contains("retry-after: 2"), "{}", reply.head);
        let body = dechunk(&reply.body).unwrap_or(reply.body.clone());
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["error"]["type"], "rate_limit_error");
        assert_eq!(log_lines(&sim)[0]["status"], 429);
    }

    #[tokio::test]
    async fn disconnect_truncates_the_body() {
        let sim = start().await;
        let reply = send(sim.addr, "POST", "/broken/v1/chat/completions", &chat_body(fixtures::TICKET_USER)).await;
        if !reply.head.is_empty() {
            assert!(reply.head.starts_with("HTTP/1.1 200"), "{}", reply.head);
            assert!(dechunk(&reply.body).is_none(), "the body must not end cleanly");
        }
        assert!(!String::from_utf8_lossy(&reply.body).contains("[DONE]"));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(log_lines(&sim)[0]["ending"], "aborted", "the simulator records the abort either way");
    }

    #[tokio::test]
    async fn routing_and_request_errors() {
        let sim = start().await;
        let r = send(sim.addr, "GET", "/healthz", "").await;
        assert!(r.head.starts_with("HTTP/1.1 200"));
        let r = send(sim.addr, "POST", "/nobody/v1/chat/completions", &chat_body("x")).await;
        assert!(r.head.starts_with("HTTP/1.1 404"), "{}", r.head);
        assert!(String::from_utf8_lossy(&r.body).contains("unknown provider"));
        let r = send(sim.addr, "POST", "/z-ai/v1/chat/completions", r#"{"stream":false,"messages":[]}"#).await;
        assert!(r.head.starts_with("HTTP/1.1 400"), "{}", r.head);
        let r = send(sim.addr, "POST", "/z-ai/v1/chat/completions", "not json").await;
        assert!(r.head.starts_with("HTTP/1.1 400"), "{}", r.head);
        assert!(log_lines(&sim).is_empty(), "rejected requests are not draws");
    }

    #[tokio::test]
    async fn unknown_prompts_answer_unknown() {
        let sim = start().await;
        let reply = send(sim.addr, "POST", "/z-ai/v1/chat/completions", &chat_body("never seen")).await;
        let body = String::from_utf8(dechunk(&reply.body).unwrap()).unwrap();
        assert!(body.contains("unknown"));
        assert_eq!(log_lines(&sim)[0]["item_id"], Value::Null);
    }

    /// The route of a provider is the contract's slug of its name: U+212A KELVIN SIGN is
    /// not ASCII, so "\u{212A}elvin" is served at `/elvin`, where the fetch client calls it.
    #[tokio::test]
    async fn the_route_is_the_contract_slug() {
        let dir = tempfile::tempdir().unwrap();
        let text = "providers:\n  \"\\u212Aelvin\":\n    model: m\n    ttft_ms: {median: 1, p99: 2}\n    tokens_per_second: {median: 1000, p05: 500}\n";
        let profiles = Profiles::parse(text, FsPath::new("t.yaml")).unwrap();
        let log = RequestLog::open(dir.path().join("log")).unwrap();
        let app = Arc::new(App::new(profiles, fixtures::dataset(), 0.01, 0, Some(log)));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, app, std::future::pending(), Duration::from_secs(1)));
        let route = inferbench_schemas::providers::slug("\u{212A}elvin");
        assert_eq!(route, "elvin");
        let r = send(addr, "POST", &format!("/{route}/v1/chat/completions"), &chat_body(fixtures::TICKET_USER)).await;
        assert!(r.head.starts_with("HTTP/1.1 200"), "{}", r.head);
        let r = send(addr, "POST", "/kelvin/v1/chat/completions", &chat_body(fixtures::TICKET_USER)).await;
        assert!(r.head.starts_with("HTTP/1.1 404"), "{}", r.head);
    }

    #[test]
    fn user_text_and_prompt_tokens() {
        let req = json!({"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]});
        assert_eq!(user_text(&req).as_deref(), Some("ab"));
        assert_eq!(user_text(&json!({"messages": []})), None);
        assert_eq!(prompt_tokens(&req), 3 + (3 + 1) + (3 + 1));
    }
}
