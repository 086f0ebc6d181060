//! One request attempt: send, read the stream, log every fact, end with one terminal event.
//!
//! One deadline covers the whole exchange (connect, headers, body); its expiry is always a
//! `timeout`, whatever stage the exchange was in. A 2xx body is read as an event stream and
//! judged event by event (`schemas::stream`): `[DONE]`, an error the provider reports in the
//! stream, or data that is not JSON end the attempt; what the server sends after that, within
//! a short grace, is still logged but never joins the answer. Sizes are capped by the spec:
//! one line or event, and one body. A connection serves a later request only when its exchange
//! was read to the end of its body; one abandoned (the deadline, a cap) is closed.
//!
//! The transport is the reference runner's unless the spec says otherwise: HTTP/1.1 only
//! (`inference.transport.http_version`), uncompressed bodies, and the negotiated protocol
//! version of every response in the log.
use crate::credentials::{Credentials, REDACTED};
use crate::echo::{Deltas, EchoGuard};
use crate::log::{EventLog, StartedLine};
use crate::transport::{self, error_text, SendError, Sending, Transport};
use anyhow::Result;
use futures_util::FutureExt;
use inferbench_contract::event::{
    CredentialEcho, ErrorKind, Event, Outcome, RequestStarted, RequestTerminal, ResponseHead, SseEvent,
};
use inferbench_contract::vocab::WireApi;
use inferbench_contract::USER_AGENT;
use inferbench_inputs::providers::Provider;
use inferbench_inputs::spec::HttpVersion;
use inferbench_judge::sse::{Frame, Parser};
use inferbench_judge::stream::{Judge, Payload, StreamEnd, ERROR_BODY_CAP};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How long the body is still read (and logged) after the stream ended, for a server that
/// sends more after `[DONE]` or keeps the connection open.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// The headers every request carries besides its credentials, sent and logged alike.
/// `identity`: the client times the body's bytes as they arrive, so none may come compressed
/// (the transport decompresses nothing; this tells the server).
const REQUEST_HEADERS: [(&str, &str); 4] = [
    ("Accept", "text/event-stream"),
    ("Accept-Encoding", "identity"),
    ("Content-Type", "application/json"),
    ("User-Agent", USER_AGENT),
];

/// Headers an API requires of every request, sent and logged in clear.
fn api_headers(api: WireApi) -> &'static [(&'static str, &'static str)] {
    match api {
        WireApi::Messages => &[("anthropic-version", ANTHROPIC_VERSION)],
        WireApi::ChatCompletions | WireApi::Responses => &[],
    }
}

/// The Messages API version inferbench speaks (Anthropic's `anthropic-version` header).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A provider's connections (a pool, see [`Transport`]) and what it needs to sign requests.
#[derive(Clone)]
pub struct ProviderClient {
    pub provider: Provider,
    /// The wire API it is called through (the row's, else the spec's).
    pub api: WireApi,
    pub endpoint: String,
    pub credentials: Credentials,
    pub http: Transport,
}

impl ProviderClient {
    /// A pool of kept connections per provider (see [`Transport`]: as many as the provider has
    /// requests in flight, one in the closed loop; a request a kept connection loses before any
    /// answer goes once more on a new one, nothing else is retried), no redirects, TCP_NODELAY,
    /// and the TLS offer of the spec's HTTP version.
    pub fn new(
        provider: Provider,
        api: WireApi,
        endpoint: String,
        credentials: Credentials,
        http_version: HttpVersion,
    ) -> Result<Self> {
        let tls = Arc::new(tls_config(http_version)?);
        // The endpoint never holds a credential (only headers do), but the message is redacted
        // like every other.
        let http = Transport::new(&endpoint, tls)
            .map_err(|e| anyhow::anyhow!("provider {}: endpoint {}", provider.name, credentials.redacted(&e)))?;
        Ok(ProviderClient { provider, api, endpoint, credentials, http })
    }
}

/// The platform's certificate verifier, made once per process: made per provider, it would load
/// and parse the system's root certificates again for each (seconds, for a fleet of a thousand).
static VERIFIER: std::sync::OnceLock<std::result::Result<Arc<rustls_platform_verifier::Verifier>, String>> =
    std::sync::OnceLock::new();

/// The TLS client of every https:// provider (TLS 1.2 and 1.3, the platform's verifier), with
/// the ALPN offer of `http_version`: `http/1.1` alone, or `h2` then `http/1.1`.
fn tls_config(http_version: HttpVersion) -> Result<rustls::ClientConfig> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let verifier = VERIFIER
        .get_or_init(|| {
            rustls_platform_verifier::Verifier::new(Arc::clone(&provider)).map(Arc::new).map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("the platform's TLS certificate verifier: {e}"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = match http_version {
        HttpVersion::Http1 => vec![b"http/1.1".to_vec()],
        HttpVersion::Http2 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
    };
    Ok(config)
}

/// The size caps every stream is read with.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_event_bytes: usize,
    pub max_response_bytes: u64,
}

impl Limits {
    /// The most events one response may log. A logged event costs a couple of hundred bytes
    /// of envelope whatever its size, so a body of two-byte keep-alives would otherwise turn a
    /// 16 MiB body into gigabytes of log; one event per 64 bytes of the body cap leaves every
    /// real stream far below it.
    pub fn max_events(&self) -> u32 {
        u32::try_from((self.max_response_bytes / 64).max(1024)).unwrap_or(u32::MAX)
    }
}

/// One scheduled request, ready to send.
#[derive(Debug, Clone)]
pub struct Unit {
    pub request_id: String,
    pub round_id: String,
    pub round_index: u64,
    pub provider: String,
    pub task_family: inferbench_contract::vocab::TaskFamily,
    pub item_id: String,
    pub attempt: u32,
    /// The request's body, until [`prepare`] moves it into the request's bytes and its
    /// `request_started` line (null after: no prompt is held for the whole exchange).
    pub body: Value,
    /// A load run's step.
    pub step: Option<u32>,
    /// A synthetic request's prompt length and requested answer length (the schedule's).
    pub target_input_tokens: Option<u32>,
    pub target_output_tokens: Option<u32>,
}

/// What the attempt has received so far.
#[derive(Default)]
struct Progress {
    status: Option<u16>,
    bytes: u64,
    done: bool,
    events: u32,
    /// The text the stream delivered per channel up to its end (what joins the answer and
    /// the reasoning), to find a credential split across deltas or escaped.
    answer: String,
    reasoning: String,
    /// Holds back events that may carry the start of a credential (see `echo`).
    guard: EchoGuard,
}

/// A body whose stream has ended but which may still carry bytes worth logging.
struct Drain {
    body: Arrivals,
    parser: Parser,
}

/// Most bytes one burst holds before its last chunk (what a stream may hold unprocessed).
const BURST_BYTES: usize = 64 * 1024;

/// A response body read burst by burst, each chunk with its arrival on the run clock.
///
/// A chunk is stamped when the read that brought it returns, and the chunks already there with
/// it (the rest of the same read, which the body hands over one chunk at a time) are taken at
/// once, before any is processed, and stamped alike. Logging one chunk's events takes time, more
/// on a loaded machine; stamped one by one, a second chunk of the same packet would carry that
/// time, and an answer the server flushed at once would look streamed. An HTTP/1.1 body is read
/// from the socket by this reader, so the burst is what the read brought (and what the socket
/// holds already); an HTTP/2 body is decoded by the connection's task, so taking a burst costs a
/// yield to it per chunk, and a chunk that reached the socket during that yield is stamped a few
/// microseconds early.
struct Arrivals {
    body: transport::ResponseBody,
    /// The current burst's chunks not yet handed out, in order.
    ready: std::collections::VecDeque<Result<Option<bytes::Bytes>, transport::BodyError>>,
    /// The arrival of the current burst.
    t_ns: u64,
}

impl Arrivals {
    fn new(body: transport::ResponseBody) -> Arrivals {
        Arrivals { body, ready: Default::default(), t_ns: 0 }
    }

    /// The next chunk (`None` at the body's end) and its arrival; a burst takes no more than
    /// `room` bytes (what the body cap still admits), so a body past its cap is not read on.
    /// Cancel-safe: whatever it has taken from the body is handed out by the next call.
    async fn next(&mut self, log: &EventLog, room: u64) -> (Result<Option<bytes::Bytes>, transport::BodyError>, u64) {
        if self.ready.is_empty() {
            let first = transport::next_chunk(&mut self.body).await;
            self.t_ns = log.now();
            let taken = match &first {
                Ok(Some(bytes)) => Some(bytes.len()),
                _ => None,
            };
            self.ready.push_back(first);
            if let Some(taken) = taken {
                let limit = usize::try_from(room).unwrap_or(usize::MAX).min(BURST_BYTES);
                self.take_burst(taken, limit).await;
            }
        }
        let chunk = self.ready.pop_front().expect("a burst holds at least its first chunk");
        (chunk, self.t_ns)
    }

    /// Takes the chunks that are there already while the burst holds under `limit` bytes.
    async fn take_burst(&mut self, mut taken: usize, limit: usize) {
        let mut yielded = false;
        while taken < limit {
            let Some(chunk) = transport::next_chunk(&mut self.body).now_or_never() else {
                if yielded || !self.body.decoded_elsewhere() {
                    return;
                }
                // The connection's task decodes the next chunk once this one was asked for.
                tokio::task::yield_now().await;
                yielded = true;
                continue;
            };
            yielded = false;
            let more = match &chunk {
                Ok(Some(bytes)) => {
                    taken += bytes.len();
                    true
                }
                _ => false,
            };
            self.ready.push_back(chunk);
            if !more {
                return;
            }
        }
    }
}

/// Headers worth keeping from a response: ids, rate limits, retry hints, content type, and
/// content encoding (a server that compresses despite `identity` sends a body that cannot
/// parse; the log then says why).
fn kept_headers(headers: &http::HeaderMap, creds: &Credentials) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(name, _)| {
            let n = name.as_str();
            n == "content-type"
                || n == "content-encoding"
                || n == "retry-after"
                || n.ends_with("request-id")
                || n.contains("ratelimit")
                || n.contains("rate-limit")
                || n.contains("quota")
        })
        .map(|(name, value)| {
            (creds.redacted(name.as_str()), creds.redacted(&String::from_utf8_lossy(value.as_bytes())))
        })
        .collect()
}

/// A response's protocol version as the log spells it.
pub fn version_name(version: http::Version) -> String {
    match version {
        http::Version::HTTP_09 => "HTTP/0.9".into(),
        http::Version::HTTP_10 => "HTTP/1.0".into(),
        http::Version::HTTP_11 => "HTTP/1.1".into(),
        http::Version::HTTP_2 => "HTTP/2".into(),
        http::Version::HTTP_3 => "HTTP/3".into(),
        // `Version` may grow; its debug form is `HTTP/x.y`.
        other => format!("{other:?}"),
    }
}

/// One request ready to launch, built ahead of the round so that the launch does nothing
/// else: its HTTP request (or why it could not be built) and its `request_started` line.
pub struct Prepared {
    pub unit: Unit,
    pub client: Arc<ProviderClient>,
    pub request: Result<transport::Outgoing, String>,
    pub line: StartedLine,
}

/// Builds `unit`'s request (body, headers, credentials) and its log line.
pub fn prepare(log: &EventLog, client: Arc<ProviderClient>, mut unit: Unit) -> Result<Prepared> {
    let creds = &client.credentials;
    let mut logged_headers: BTreeMap<String, String> =
        REQUEST_HEADERS.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect();
    let auth = creds.headers(&client.provider, client.api);
    for (name, value) in api_headers(client.api) {
        // Unless the provider's own headers set it.
        if !auth.iter().any(|(h, _)| h.eq_ignore_ascii_case(name)) {
            logged_headers.insert(name.to_string(), value.to_string());
        }
    }
    for (name, _) in &auth {
        logged_headers.insert(name.clone(), REDACTED.to_string());
    }
    let endpoint = creds.redacted(&client.endpoint);
    let mut request = client.http.post();
    for (name, value) in REQUEST_HEADERS {
        request = request.header(name, value);
    }
    for (name, value) in
        api_headers(client.api).iter().filter(|(h, _)| !auth.iter().any(|(a, _)| a.eq_ignore_ascii_case(h)))
    {
        request = request.header(*name, *value);
    }
    for (name, value) in &auth {
        request = request.header(name.as_str(), value.as_str());
    }
    // A header the HTTP grammar refuses (a credential with a line break, say) fails this one
    // request as a `request` error, as every other reason it cannot be sent does; the message
    // names no value.
    // Serialised once: the request's bytes, and its log line's body.
    let body = bytes::Bytes::from(serde_json::to_vec(&std::mem::take(&mut unit.body))?);
    let request = request
        .body(transport::Body::from(body.clone()))
        .map(transport::Outgoing::new)
        .map_err(|e| format!("building the request: {}", error_text(&e)));
    let started = RequestStarted {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        round_id: unit.round_id.clone(),
        round_index: unit.round_index,
        provider: unit.provider.clone(),
        task_family: unit.task_family,
        item_id: unit.item_id.clone(),
        endpoint,
        api: client.api,
        body: Value::Null,
        headers: logged_headers,
        step: unit.step,
        target_input_tokens: unit.target_input_tokens,
        target_output_tokens: unit.target_output_tokens,
        // Both filled in at the release.
        released_t_ns: None,
        intended_t_ns: 0,
    };
    let line = log.started_line(started, &body)?;
    Ok(Prepared { unit, client, request, line })
}

/// Hands a prepared request to one of its provider's connections (see [`Transport::hand_over`]):
/// queued on an idle one at once, or connected (or waited for) when its exchange starts. On the fetch's
/// single-threaded runtime no byte of it is written until the caller yields, which is how the
/// caller logs `request_started` first. A request that could not be built has nothing to hand.
pub fn launch(client: &ProviderClient, request: &mut Result<transport::Outgoing, String>) {
    if let Ok(outgoing) = request {
        client.http.hand_over(outgoing);
    }
}

/// The send of a launched request, from its launch to its response head.
pub fn sending(client: &ProviderClient, request: Result<transport::Outgoing, String>) -> Sending {
    match request {
        Ok(outgoing) => client.http.sending(outgoing),
        Err(message) => Box::pin(std::future::ready(Err(SendError::Request(message)))),
    }
}

/// Sends one prepared request on its own: launched now, its line logged, then run.
#[cfg(test)]
pub async fn execute(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    intended_t_ns: u64,
    deadline: Duration,
    limits: Limits,
) -> Result<u64> {
    let mut prepared = prepare(log, Arc::new(client.clone()), unit.clone())?;
    let t_ns = log.now();
    let deadline_at = Instant::now() + deadline;
    launch(client, &mut prepared.request);
    let sending = sending(client, prepared.request);
    log.write_started(&[(prepared.line, t_ns)], intended_t_ns, &mut Vec::new())?;
    run(log, client, unit, sending, deadline_at, deadline, limits).await?;
    Ok(t_ns)
}

/// Reads the response of a launched request and logs everything until its terminal event.
pub async fn run(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    sending: Sending,
    deadline_at: Instant,
    deadline: Duration,
    limits: Limits,
) -> Result<()> {
    let creds = &client.credentials;
    let mut progress = Progress::default();
    let exchange = exchange(log, client, unit, sending, limits, &mut progress);
    let end = match tokio::time::timeout_at(deadline_at, exchange).await {
        Ok(result) => {
            let (end, drain) = result?;
            if let Some(drain) = drain {
                let until = (Instant::now() + DRAIN_GRACE).min(deadline_at);
                drain_after_end(log, client, unit, &mut progress, drain, until, limits).await?;
            }
            end
        }
        Err(_) => StreamEnd::failed(
            Outcome::Timeout,
            ErrorKind::Deadline,
            format!("no terminal response within {} ms", deadline.as_millis()),
        ),
    };
    for (t_ns, event) in progress.guard.flush() {
        log.emit_at(t_ns, Event::SseEvent(event))?;
    }
    let echoed: Vec<String> = [("answer", &progress.answer), ("reasoning", &progress.reasoning)]
        .into_iter()
        .filter(|(_, text)| creds.found_in(text))
        .map(|(channel, _)| channel.to_string())
        .collect();
    if !echoed.is_empty() {
        let echo = CredentialEcho { request_id: unit.request_id.clone(), attempt: unit.attempt, channels: echoed };
        log.emit(Event::CredentialEcho(echo))?;
    }
    let terminal = RequestTerminal {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        outcome: end.outcome,
        http_status: progress.status,
        error_type: end.error_type,
        // Both were cut to a cap, which may have cut a credential too.
        error_message: end.message.map(|m| creds.redacted_capped(&m)),
        error_body: end.error_body.map(|b| creds.redacted_capped(&b)),
        bytes_received: progress.bytes,
        done_seen: progress.done,
    };
    log.emit(Event::RequestTerminal(terminal))?;
    Ok(())
}

/// The exchange up to the end of the stream, and the body still to drain when the stream
/// ended before the body did.
async fn exchange(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    sending: Sending,
    limits: Limits,
    p: &mut Progress,
) -> Result<(StreamEnd, Option<Drain>)> {
    let (response, mut body) = match sending.await {
        Ok(r) => r.into_parts(),
        Err(SendError::Connect(message)) => {
            return Ok((StreamEnd::failed(Outcome::TransportError, ErrorKind::Connect, message), None))
        }
        Err(SendError::ClientResource(message)) => {
            return Ok((StreamEnd::failed(Outcome::TransportError, ErrorKind::ClientResource, message), None))
        }
        Err(SendError::Request(message)) => {
            return Ok((StreamEnd::failed(Outcome::TransportError, ErrorKind::Request, message), None))
        }
    };
    let status = response.status.as_u16();
    p.status = Some(status);
    let headers = kept_headers(&response.headers, &client.credentials);
    let content_type = headers.get("content-type").cloned();
    log.emit(Event::ResponseHead(ResponseHead {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        status,
        headers,
        http_version: Some(version_name(response.version)),
    }))?;
    if !response.status.is_success() {
        let body = first_bytes(&mut body, p).await;
        let mut end = StreamEnd::failed(Outcome::HttpError, ErrorKind::HttpStatus, format!("HTTP {status}"));
        end.error_body = Some(String::from_utf8_lossy(&body).into_owned());
        return Ok((end, None));
    }
    let event_stream =
        content_type.as_deref().is_none_or(|t| t.trim().to_ascii_lowercase().starts_with("text/event-stream"));
    if status == 204 || !event_stream {
        let body = first_bytes(&mut body, p).await;
        let shown = content_type.as_deref().map_or("no content type".to_string(), |t| format!("content type `{t}`"));
        let mut end = StreamEnd::failed(
            Outcome::InvalidStream,
            ErrorKind::NotEventStream,
            format!("HTTP {status} with {shown}: not an event stream"),
        );
        end.error_body = Some(String::from_utf8_lossy(&body).into_owned());
        return Ok((end, None));
    }
    read_stream(log, client, unit, Arrivals::new(body), limits, p).await
}

/// Up to [`ERROR_BODY_CAP`] bytes of a body that is not read as a stream.
async fn first_bytes(response: &mut transport::ResponseBody, p: &mut Progress) -> Vec<u8> {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_CAP {
        match transport::next_chunk(response).await {
            Ok(Some(bytes)) => {
                p.bytes += bytes.len() as u64;
                body.extend_from_slice(&bytes);
            }
            _ => break,
        }
    }
    body.truncate(ERROR_BODY_CAP);
    body
}

async fn read_stream(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    mut body: Arrivals,
    limits: Limits,
    p: &mut Progress,
) -> Result<(StreamEnd, Option<Drain>)> {
    let mut parser = Parser::new(limits.max_event_bytes);
    let mut judge = Judge::on(inferbench_judge::rules::Rules::Inferbench, client.api);
    // The first bytes of the body: the evidence when it turns out to hold no event at all.
    let mut head = Vec::new();
    loop {
        // What the body cap still admits; every frame a chunk completed is stamped with that
        // chunk's arrival.
        let room = limits.max_response_bytes.saturating_sub(p.bytes);
        let (chunk, t_ns) = body.next(log, room).await;
        let bytes = match chunk {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                let (frames, oversized) = parser.finish();
                let rec = Recorder { log, client, unit, t_ns, limits };
                if let Some(end) = rec.frames(p, frames, &mut judge)? {
                    return Ok((end, None));
                }
                // The body ended inside an event over the cap: refused as with its blank line.
                if oversized.is_some() {
                    return Ok((too_large(ErrorKind::EventTooLarge, limits.max_event_bytes as u64), None));
                }
                let mut end = judge.closed();
                if end.error_type == Some(ErrorKind::EmptyStream) {
                    end.error_body = Some(String::from_utf8_lossy(&head).into_owned());
                }
                return Ok((end, None));
            }
            Err(e) => return Ok((StreamEnd::failed(Outcome::TransportError, ErrorKind::Body, body_error(&e)), None)),
        };
        if head.len() < ERROR_BODY_CAP {
            head.extend_from_slice(&bytes[..bytes.len().min(ERROR_BODY_CAP - head.len())]);
        }
        // Only the bytes within the body cap are parsed: what arrived before the cap (a
        // `[DONE]`, say) still counts, and nothing past it is buffered.
        p.bytes += bytes.len() as u64;
        let within = &bytes[..bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        let (frames, oversized) = parser.feed(within);
        let rec = Recorder { log, client, unit, t_ns, limits };
        if let Some(end) = rec.frames(p, frames, &mut judge)? {
            return Ok((end, Some(Drain { body, parser })));
        }
        if oversized.is_some() {
            return Ok((too_large(ErrorKind::EventTooLarge, limits.max_event_bytes as u64), None));
        }
        if within.len() < bytes.len() {
            return Ok((too_large(ErrorKind::ResponseTooLarge, limits.max_response_bytes), None));
        }
    }
}

/// A body that broke off, in the words runs have always logged it with (the text of the HTTP
/// client before this one), so that one failure reads the same in every run.
fn body_error(err: &transport::BodyError) -> String {
    format!("error decoding response body: {}", error_text(err))
}

fn too_large(kind: ErrorKind, limit: u64) -> StreamEnd {
    let what = match kind {
        ErrorKind::EventTooLarge => "one line or event exceeded",
        ErrorKind::ResponseTooLarge => "the response body exceeded",
        _ => "the response sent more events than",
    };
    let unit = if kind == ErrorKind::TooManyEvents { "" } else { " bytes" };
    StreamEnd::failed(Outcome::InvalidStream, kind, format!("{what} {limit}{unit} (the spec's stream limits)"))
}

/// Reads what the server still sends after the stream ended, until `until`, and logs it. A body
/// read to its end here hands its connection back to the provider's pool (see
/// [`transport::ResponseBody`]); one still open at `until`, or past the body cap, is dropped with
/// its connection.
async fn drain_after_end(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    p: &mut Progress,
    mut drain: Drain,
    until: Instant,
    limits: Limits,
) -> Result<()> {
    loop {
        let room = limits.max_response_bytes.saturating_sub(p.bytes);
        let (chunk, t_ns) = match tokio::time::timeout_at(until, drain.body.next(log, room)).await {
            Ok((Ok(Some(bytes)), t_ns)) => (bytes, t_ns),
            Ok((Ok(None), t_ns)) => {
                let rec = Recorder { log, client, unit, t_ns, limits };
                rec.after_end(p, drain.parser.finish().0)?;
                return Ok(());
            }
            _ => return Ok(()),
        };
        let rec = Recorder { log, client, unit, t_ns, limits };
        p.bytes += chunk.len() as u64;
        let within = &chunk[..chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX))];
        let (frames, oversized) = drain.parser.feed(within);
        rec.after_end(p, frames)?;
        if oversized.is_some() || within.len() < chunk.len() {
            return Ok(());
        }
    }
}

/// Logs the frames one chunk completed.
struct Recorder<'a> {
    log: &'a EventLog,
    client: &'a ProviderClient,
    unit: &'a Unit,
    /// The arrival of the chunk.
    t_ns: u64,
    limits: Limits,
}

impl Recorder<'_> {
    /// Logs and judges `frames`; returns how the stream ended when one of them ended it (the
    /// frames after it are still logged).
    fn frames(&self, p: &mut Progress, frames: Vec<Frame>, judge: &mut Judge) -> Result<Option<StreamEnd>> {
        let mut frames = frames.into_iter();
        while let Some(frame) = frames.next() {
            if let Some(end) = self.record(p, frame, Some(&mut *judge))? {
                self.after_end(p, frames.collect())?;
                return Ok(Some(end));
            }
        }
        Ok(None)
    }

    /// Logs frames that arrived after the stream ended: recorded, never judged or joined.
    fn after_end(&self, p: &mut Progress, frames: Vec<Frame>) -> Result<()> {
        for frame in frames {
            if p.events >= self.limits.max_events() {
                break;
            }
            self.record(p, frame, None)?;
        }
        Ok(())
    }

    /// Logs one frame, redacted. With a judge, returns how the stream ended when this frame
    /// ends it; without one (after the end), the frame is only recorded.
    fn record(&self, p: &mut Progress, frame: Frame, judge: Option<&mut Judge>) -> Result<Option<StreamEnd>> {
        let creds = &self.client.credentials;
        let index = p.events;
        p.events += 1;
        let mut event = SseEvent {
            request_id: self.unit.request_id.clone(),
            attempt: self.unit.attempt,
            index,
            data: None,
            event: None,
            id: None,
            retry: None,
            comment: None,
            redacted: false,
        };
        let judging = judge.is_some();
        let mut end = None;
        let mut deltas = Deltas::default();
        let mut redacted = false;
        let mut redact = |text: String| {
            let (clean, hit) = creds.redact(text);
            redacted |= hit;
            clean
        };
        match frame {
            Frame::Comment(text) => event.comment = Some(redact(text)),
            Frame::Event { data, event: kind, id, retry } => {
                let payload = Payload::read(self.client.api, kind.as_deref(), data.as_deref());
                if let Some(judge) = judge {
                    end = judge.observe(index, kind.as_deref(), &payload);
                    p.done |= payload == Payload::Done && end.is_some();
                }
                // The chunk's deltas, taken from it rather than copied: the judge is done with it.
                if let Payload::Object(chunk) = payload {
                    (deltas.reasoning, deltas.answer) = (chunk.fields.reasoning, chunk.fields.answer);
                }
                if judging && end.is_none() {
                    // Only what joins the answer can put a credential into derived files.
                    p.reasoning.push_str(&deltas.reasoning);
                    p.answer.push_str(&deltas.answer);
                }
                let data = data.map(&mut redact);
                let kind = kind.map(&mut redact);
                let id = id.map(&mut redact);
                let retry = retry.map(&mut redact);
                (event.data, event.event, event.id, event.retry) = (data, kind, id, retry);
            }
        }
        // Comments and keep-alives count too: each costs a log line, however small it is.
        if judging && end.is_none() && p.events >= self.limits.max_events() {
            end = Some(too_large(ErrorKind::TooManyEvents, u64::from(self.limits.max_events())));
        }
        event.redacted = redacted;
        for (t_ns, event) in p.guard.pass(creds, self.t_ns, event, deltas) {
            self.log.emit_at(t_ns, Event::SseEvent(event))?;
        }
        Ok(end)
    }
}

#[cfg(test)]
mod tests;
