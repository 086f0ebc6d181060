//! The HTTP side: routes (every provider at each wire API's route, the grammar following the
//! route), the request handler, and serving with TCP_NODELAY and graceful shutdown.
use crate::credential::Echo;
use crate::draw::Drawer;
use crate::fault::Fault;
use crate::log::{round3, LogRecord, RequestLog};
use crate::play::{self, Frame};
use crate::profile::{Profile, Profiles};
use crate::schedule::Kind;
use crate::stream::{self, HeadBody, Request};
use crate::wire::Wire;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use inferbench_contract::vocab::WireApi;
use inferbench_judge::tokenizer;
use inferbench_sim::answer::{self, tokenize};
use inferbench_sim::dataset::Dataset;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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
    /// The profile's `slots`: a permit is held from when a request is served until its
    /// stream ends, and tokio's semaphore hands permits out first come, first served.
    slots: Option<Arc<tokio::sync::Semaphore>>,
    /// The profile's `prompt_cache`: the SHA-256 of every prompt (`messages`) received.
    seen_prompts: std::sync::Mutex<std::collections::HashSet<[u8; 32]>>,
}

impl Provider {
    /// Whether the provider has received `request`'s prompt (its `messages`) before; it has
    /// now.
    fn seen_prompt(&self, request: &Value) -> bool {
        let messages = request.get("messages").map(Value::to_string).unwrap_or_default();
        let key: [u8; 32] = Sha256::digest(messages.as_bytes()).into();
        let mut seen = self.seen_prompts.lock().unwrap_or_else(|e| e.into_inner());
        !seen.insert(key)
    }
}

impl App {
    pub fn new(profiles: Profiles, dataset: Dataset, time_scale: f64, seed: u64, log: Option<RequestLog>) -> App {
        let providers = profiles
            .providers
            .into_iter()
            .map(|(slug, profile)| {
                let drawer = Drawer::new(seed, &slug, profiles.sampling);
                let slots = profile.slots.map(|n| Arc::new(tokio::sync::Semaphore::new(n as usize)));
                let seen_prompts = Default::default();
                (slug, Provider { profile, drawer, counter: AtomicU64::new(0), slots, seen_prompts })
            })
            .collect();
        App { providers, dataset, time_scale, log }
    }

    fn write_log(&self, record: &LogRecord) {
        if let Some(log) = &self.log {
            log.write(record);
        }
    }
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(&format!("/{{provider}}/{}", WireApi::ChatCompletions.route()), post(chat))
        .route(&format!("/{{provider}}/{}", WireApi::Responses.route()), post(responses))
        .route(&format!("/{{provider}}/{}", WireApi::Messages.route()), post(messages))
        .fallback(|| async {
            let routes: Vec<String> = [WireApi::ChatCompletions, WireApi::Responses, WireApi::Messages]
                .iter()
                .map(|api| format!("POST /{{provider}}/{}", api.route()))
                .collect();
            let message = format!("no such route; use {}", routes.join(", "));
            error(StatusCode::NOT_FOUND, "not_found_error", &message)
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

/// An error response in the shape of `api`: OpenAI's (as [`error`]) on chat completions and
/// Responses, Anthropic's on Messages (`{"type": "error", "error": {"type", "message"}}`,
/// with Anthropic's type names: `api_error` for a server error, `overloaded_error` for 503).
fn api_error(api: WireApi, status: StatusCode, kind: &str, message: &str) -> Response {
    if api != WireApi::Messages {
        return error(status, kind, message);
    }
    let kind = match kind {
        "server_error" if status == StatusCode::SERVICE_UNAVAILABLE => "overloaded_error",
        "server_error" => "api_error",
        other => other,
    };
    (status, Json(json!({"type": "error", "error": {"type": kind, "message": message}}))).into_response()
}

/// Where a `redirect` fault points: a path the simulator does not serve, so a client that
/// follows it gets a 404 instead of a second draw.
#[cfg(test)]
pub fn redirect_location(slug: &str) -> String {
    redirect_location_for(slug, WireApi::ChatCompletions)
}

/// [`redirect_location`] of the route of `api`.
pub fn redirect_location_for(slug: &str, api: WireApi) -> String {
    format!("/{slug}/redirected/{}", api.route())
}

async fn chat(State(app): State<Arc<App>>, Path(slug): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    handle(WireApi::ChatCompletions, app, slug, headers, body).await
}

async fn responses(State(app): State<Arc<App>>, Path(slug): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    handle(WireApi::Responses, app, slug, headers, body).await
}

async fn messages(State(app): State<Arc<App>>, Path(slug): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    handle(WireApi::Messages, app, slug, headers, body).await
}

/// A request on the route of `api`. Its body is read as the chat completions request it
/// stands for ([`as_chat`]), so the dataset lookup, the prompt cache, the token limit and the
/// credentials work alike on every route; the stream is planned in the grammar of `api`.
async fn handle(api: WireApi, app: Arc<App>, slug: String, headers: HeaderMap, body: Bytes) -> Response {
    let error = |status, kind: &str, message: &str| api_error(api, status, kind, message);
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
    let request = match as_chat(api, request) {
        Ok(request) => request,
        Err(message) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", &message),
    };
    if request.get("stream") != Some(&Value::Bool(true)) {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "this simulator only streams: send \"stream\": true",
        );
    }
    // A provider with slots queues the request here until one is free (a client that leaves
    // meanwhile drops this future and its place in the queue); everything after is timed
    // from when it is served.
    let slot = match &provider.slots {
        Some(slots) => match Arc::clone(slots).acquire_owned().await {
            Ok(permit) => Some(permit),
            Err(_) => return error(StatusCode::SERVICE_UNAVAILABLE, "server_error", "the simulator is stopping"),
        },
        None => None,
    };
    let queued_ms = slot.as_ref().map(|_| round3(received.elapsed().as_secs_f64() * 1000.0));
    let received = if slot.is_some() { Instant::now() } else { received };
    let profile = &provider.profile;
    let counter = provider.counter.fetch_add(1, Ordering::SeqCst);
    let body_sha256: [u8; 32] = Sha256::digest(&body).into();
    let item = user_text(&request).and_then(|u| app.dataset.lookup(&u));
    let mut draw = provider.drawer.draw(profile, &body_sha256, counter);
    let prompt_cache_hit = profile.prompt_cache.map(|cache| {
        let hit = provider.seen_prompt(&request);
        if hit {
            draw.ttft_ms *= cache.ttft_factor;
        }
        hit
    });
    let id = match api {
        WireApi::ChatCompletions => format!("chatcmpl-{slug}-{counter}"),
        WireApi::Responses => format!("resp_{slug}-{counter}"),
        WireApi::Messages => format!("msg_{slug}-{counter}"),
    };
    // Responses and Messages cannot ask for usage: their terminal events always carry it.
    let include_usage = request.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));

    let mut record = LogRecord {
        api,
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
        content_type: Some("application/json".into()),
        ttft_ms: round3(draw.ttft_ms),
        tokens_per_second: round3(draw.tokens_per_second),
        time_scale: app.time_scale,
        reasoning_tokens: draw.reasoning_tokens,
        answer_tokens: 0,
        answer_events: 0,
        include_usage,
        usage_chunk: false,
        line_ending: profile.line_ending,
        split_utf8: profile.split_utf8,
        non_sse_kind: (draw.fault == Fault::NonSse).then_some(profile.faults.non_sse_kind),
        oversized_bytes: (draw.fault == Fault::OversizedLine).then_some(profile.faults.oversized_bytes),
        credential_echo: None,
        location: None,
        ending: None,
        headers_offset_ms: None,
        answer_event_offsets_ms: Vec::new(),
        fault_event_offset_ms: None,
        events_sent: 0,
        body_bytes: 0,
        queued_ms,
        prompt_cache_hit,
    };
    match draw.fault {
        Fault::Http429 => {
            record.status = 429;
            app.write_log(&record);
            let mut r = error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_error", "rate limit reached, retry later");
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            r.headers_mut().insert("x-ratelimit-remaining-requests", HeaderValue::from_static("0"));
            return r;
        }
        Fault::Http5xx => {
            record.status = 503;
            app.write_log(&record);
            return error(StatusCode::SERVICE_UNAVAILABLE, "server_error", "the model is overloaded, try again");
        }
        Fault::Http400 => {
            record.status = 400;
            app.write_log(&record);
            let message = "Unsupported parameter: 'top_p' is not supported with this model.";
            return error(StatusCode::BAD_REQUEST, "invalid_request_error", message);
        }
        Fault::Redirect => {
            let location = redirect_location_for(&slug, api);
            record.status = 307;
            record.content_type = None;
            record.location = Some(location.clone());
            app.write_log(&record);
            return Response::builder()
                .status(StatusCode::TEMPORARY_REDIRECT)
                .header(header::LOCATION, location)
                .body(Body::empty())
                .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "bad response"));
        }
        _ => {}
    }

    let tokens_per_chunk = profile.tokens_per_chunk;
    let mut text = match (item, filler_tokens(&request)) {
        // A prompt of no dataset item (a load workflow's synthetic prompt) asking the server to
        // ignore its end of sequence is answered, as such a server does, with exactly its token
        // limit: words of one o200k_base token each.
        (None, Some(tokens)) => inferbench_judge::synthetic::text(tokens, &mut draw.rng),
        _ => answer::answer(item, draw.correct, &app.dataset, &mut draw.rng),
    };
    if profile.split_utf8 {
        text = answer::for_split_utf8(&text);
    }
    let echo = (draw.fault == Fault::CredentialEcho).then(|| Echo::from_headers(&headers));
    record.credential_echo = echo.as_ref().map(Echo::log);
    let echo = echo.filter(|e| !e.is_empty());
    let usual_reasoning = answer::reasoning(draw.reasoning_tokens, tokens_per_chunk, profile.split_utf8);
    let (answer, reasoning) = match &echo {
        Some(e) => (e.answer(&text, tokens_per_chunk), e.reasoning(&usual_reasoning)),
        None => (tokenize(&text, tokens_per_chunk), usual_reasoning),
    };
    let chat_api = api == WireApi::ChatCompletions;
    let usage = !chat_api || profile.usage_chunk.sends(include_usage);
    let plan = stream::plan_for(
        &Request {
            profile,
            draw: &draw,
            id: &id,
            answer: &answer,
            reasoning: &reasoning,
            // Counted only for a usage chunk: tokenizing a long prompt costs more than the rest
            // of the request, and a fleet of a thousand providers receives the same prompt at once.
            prompt_tokens: if usage { prompt_tokens(&request) } else { 0 },
            usage,
            echo: echo.as_ref(),
        },
        api,
    );
    record.status = plan.head.status;
    record.content_type = plan.head.content_type.map(str::to_string);
    record.reasoning_tokens = reasoning.token_count;
    record.answer_tokens = answer.token_count;
    record.answer_events = answer.chunks.len();
    // On Responses the usage is in the terminal event.
    record.usage_chunk =
        plan.steps.iter().any(|s| s.kind == Kind::Usage || (api == WireApi::Responses && s.kind == Kind::Done));

    let (head_tx, head_rx) = oneshot::channel();
    // Bounded: a long or endless line is written no faster than the client reads it.
    let (body_tx, mut body_rx) = mpsc::channel::<Frame>(16);
    let time_scale = app.time_scale;
    let wire = Wire { line_ending: profile.line_ending, split_utf8: profile.split_utf8 };
    let app_for_log = Arc::clone(&app);
    let steps = plan.steps;
    let headers_at = plan.headers_at_ms;
    tokio::spawn(async move {
        let played = play::play(steps, headers_at, received, time_scale, wire, head_tx, body_tx).await;
        drop(slot);
        record.played(played);
        app_for_log.write_log(&record);
    });
    if head_rx.await.is_err() {
        return error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "stream task ended early");
    }
    let head = plan.head;
    let body = match head.body {
        // Each frame becomes its own HTTP chunk, written as soon as it is produced.
        HeadBody::Stream => Body::from_stream(futures_util::stream::poll_fn(move |cx| body_rx.poll_recv(cx))),
        HeadBody::Full(text) => Body::from(text),
        HeadBody::Empty => Body::empty(),
    };
    let mut response = Response::builder()
        .status(StatusCode::from_u16(head.status).unwrap_or(StatusCode::OK))
        .header(header::CACHE_CONTROL, "no-cache");
    if let Some(ct) = head.content_type {
        response = response.header(header::CONTENT_TYPE, ct);
    }
    // An echoed credential that is not a valid header value is left out of this one field.
    if let Ok(v) = HeaderValue::from_str(&head.request_id) {
        response = response.header("x-request-id", v);
    }
    response.body(body).unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "bad response"))
}

/// The text of the (last) user message: a string, or the concatenated text parts.
/// The answer tokens of a request with `"ignore_eos": true`: its token limit (`max_tokens`
/// or `max_completion_tokens`), at most [`MAX_FILLER_TOKENS`].
fn filler_tokens(request: &Value) -> Option<usize> {
    (request.get("ignore_eos") == Some(&Value::Bool(true))).then_some(())?;
    let limit = ["max_completion_tokens", "max_tokens"].iter().find_map(|k| request.get(*k)?.as_u64())?;
    Some(limit.min(MAX_FILLER_TOKENS) as usize)
}

/// The longest answer the simulator writes to a request ignoring its end of sequence.
const MAX_FILLER_TOKENS: u64 = 262_144;

/// A Responses or Messages request as the chat completions request it stands for: its
/// system prompt (`instructions`, `system`) and input messages (`input`, `messages`) as
/// `messages`, its token limit (`max_output_tokens`, `max_tokens`) as `max_tokens`, every
/// other field as it is. A chat completions request is returned as it is. `Err`: what is
/// wrong with the body.
fn as_chat(api: WireApi, request: Value) -> Result<Value, String> {
    let Value::Object(mut body) = request else { return Err("the body must be a JSON object".into()) };
    let system = match api {
        WireApi::ChatCompletions => return Ok(Value::Object(body)),
        WireApi::Responses => body.remove("instructions"),
        WireApi::Messages => body.remove("system"),
    };
    let mut messages = Vec::new();
    match system {
        None | Some(Value::Null) => {}
        Some(s @ Value::String(_)) => messages.push(json!({"role": "system", "content": s})),
        Some(blocks @ Value::Array(_)) if api == WireApi::Messages => {
            messages.push(json!({"role": "system", "content": blocks}))
        }
        Some(_) if api == WireApi::Responses => return Err("instructions: expected a string".into()),
        Some(_) => return Err("system: expected a string or a list of text blocks".into()),
    }
    match api {
        WireApi::Responses => {
            match body.remove("input") {
                Some(s @ Value::String(_)) => messages.push(json!({"role": "user", "content": s})),
                Some(Value::Array(items)) => {
                    // Message items (with or without `type: message`); other items carry no prompt.
                    messages.extend(items.into_iter().filter(|i| i.get("role").is_some()));
                }
                _ => return Err("input: expected a string or a list of input items".into()),
            }
            if let Some(limit) = body.remove("max_output_tokens") {
                body.insert("max_tokens".into(), limit);
            }
        }
        _ => {
            match body.remove("messages") {
                Some(Value::Array(items)) => messages.extend(items),
                _ => return Err("messages: Field required (a list of messages)".into()),
            }
            if !matches!(body.get("max_tokens").and_then(Value::as_u64), Some(1..)) {
                return Err("max_tokens: Field required (a positive integer)".into());
            }
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    Ok(Value::Object(body))
}

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
        .map(|m| 3 + m.get("content").and_then(content_text).map(|t| count_once(&t)).unwrap_or(0))
        .sum::<usize>()
}

/// Texts whose token counts are remembered: the dataset's prompts repeat from request to request
/// (tokenizing each again cost the simulator a quarter of its time at 2,000 requests a second,
/// on every route that reports usage); a workload of unique prompts stops filling it here.
const COUNTED_TEXTS: usize = 8192;

/// `tokenizer::count(text)`, remembered by the text's hash.
fn count_once(text: &str) -> usize {
    use std::hash::{Hash, Hasher};
    static COUNTS: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<u64, usize>>> =
        std::sync::LazyLock::new(Default::default);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let key = hasher.finish();
    if let Some(n) = COUNTS.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return *n;
    }
    let n = tokenizer::count(text);
    let mut counts = COUNTS.lock().unwrap_or_else(|p| p.into_inner());
    if counts.len() < COUNTED_TEXTS {
        counts.insert(key, n);
    }
    n
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests;
