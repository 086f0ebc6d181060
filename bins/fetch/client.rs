//! One request attempt: send, read the stream, log every fact, end with one terminal event.
//! One deadline covers the whole exchange (connect, headers, body); its expiry is always a
//! `timeout`, whatever stage the exchange was in.
use crate::credentials::{Credentials, REDACTED};
use crate::log::EventLog;
use crate::sse::{Frame, Parser};
use anyhow::Result;
use inferbench_schemas::event::{Event, Outcome, RequestStarted, RequestTerminal, ResponseHead, SseEvent};
use inferbench_schemas::providers::Provider;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::time::Instant;

/// Cap on a logged error body.
const ERROR_BODY_CAP: usize = 4096;

/// A provider's persistent connection and what it needs to sign requests.
pub struct ProviderClient {
    pub provider: Provider,
    pub endpoint: String,
    pub credentials: Credentials,
    pub http: reqwest::Client,
}

impl ProviderClient {
    /// One connection kept alive per provider, no retries, no redirects, TCP_NODELAY.
    pub fn new(provider: Provider, endpoint: String, credentials: Credentials) -> Result<Self> {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .tcp_nodelay(true)
            .build()?;
        Ok(ProviderClient { provider, endpoint, credentials, http })
    }
}

/// One scheduled request, ready to send.
#[derive(Debug, Clone)]
pub struct Unit {
    pub request_id: String,
    pub round_id: String,
    pub round_index: u64,
    pub provider: String,
    pub task_family: String,
    pub item_id: String,
    pub attempt: u32,
    pub body: Value,
}

#[derive(Default)]
struct Progress {
    status: Option<u16>,
    bytes: u64,
    done: bool,
    events: u32,
}

struct Ending {
    outcome: Outcome,
    error_type: Option<String>,
    error_message: Option<String>,
    error_body: Option<String>,
}

impl Ending {
    fn ok() -> Self {
        Ending { outcome: Outcome::Completed, error_type: None, error_message: None, error_body: None }
    }
    fn fail(outcome: Outcome, kind: &str, message: String) -> Self {
        Ending { outcome, error_type: Some(kind.to_string()), error_message: Some(message), error_body: None }
    }
}

/// Headers worth keeping from a response: ids, rate limits, retry hints, content type.
fn kept_headers(headers: &reqwest::header::HeaderMap, creds: &Credentials) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(name, _)| {
            let n = name.as_str();
            n == "content-type"
                || n == "retry-after"
                || n.ends_with("request-id")
                || n.contains("ratelimit")
                || n.contains("rate-limit")
                || n.contains("quota")
        })
        .map(|(name, value)| (name.as_str().to_string(), creds.redact(&String::from_utf8_lossy(value.as_bytes()))))
        .collect()
}

fn error_text(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Sends `unit` and logs everything until its terminal event.
pub async fn execute(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    intended_t_ns: u64,
    deadline: Duration,
) -> Result<u64> {
    let creds = &client.credentials;
    let mut logged_headers = BTreeMap::from([
        ("Accept".to_string(), "text/event-stream".to_string()),
        ("Content-Type".to_string(), "application/json".to_string()),
    ]);
    let auth = creds.headers(&client.provider);
    for (name, _) in &auth {
        logged_headers.insert(name.clone(), REDACTED.to_string());
    }
    let started = RequestStarted {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        round_id: unit.round_id.clone(),
        round_index: unit.round_index,
        provider: unit.provider.clone(),
        task_family: unit.task_family.clone(),
        item_id: unit.item_id.clone(),
        endpoint: client.endpoint.clone(),
        body: unit.body.clone(),
        headers: logged_headers,
        intended_t_ns,
    };
    let start_t = log.emit(Event::RequestStarted(started))?;
    let deadline_at = Instant::now() + deadline;
    let mut progress = Progress::default();
    let ending = match tokio::time::timeout_at(deadline_at, exchange(log, client, unit, &auth, &mut progress)).await {
        Ok(result) => result?,
        Err(_) => Ending::fail(
            Outcome::Timeout,
            "deadline",
            format!("no terminal response within {} ms", deadline.as_millis()),
        ),
    };
    let terminal = RequestTerminal {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        outcome: ending.outcome,
        http_status: progress.status,
        error_type: ending.error_type,
        error_message: ending.error_message.map(|m| creds.redact(&m)),
        error_body: ending.error_body.map(|b| creds.redact(&b)),
        bytes_received: progress.bytes,
        done_seen: progress.done,
    };
    log.emit(Event::RequestTerminal(terminal))?;
    Ok(start_t)
}

async fn exchange(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    auth: &[(String, String)],
    p: &mut Progress,
) -> Result<Ending> {
    let mut request = client
        .http
        .post(&client.endpoint)
        .header("Accept", "text/event-stream")
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(&unit.body)?);
    for (name, value) in auth {
        request = request.header(name.as_str(), value.as_str());
    }
    let mut response = match request.send().await {
        Ok(r) => r,
        Err(e) => {
            return Ok(Ending::fail(
                Outcome::TransportError,
                if e.is_connect() { "connect" } else { "request" },
                error_text(&e),
            ))
        }
    };
    let status = response.status().as_u16();
    p.status = Some(status);
    let head = ResponseHead {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        status,
        headers: kept_headers(response.headers(), &client.credentials),
    };
    log.emit(Event::ResponseHead(head))?;
    if !response.status().is_success() {
        let mut body = Vec::new();
        while body.len() < ERROR_BODY_CAP {
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    p.bytes += bytes.len() as u64;
                    body.extend_from_slice(&bytes);
                }
                _ => break,
            }
        }
        body.truncate(ERROR_BODY_CAP);
        let mut ending = Ending::fail(Outcome::HttpError, "http_status", format!("HTTP {status}"));
        ending.error_body = Some(String::from_utf8_lossy(&body).into_owned());
        return Ok(ending);
    }
    let mut parser = Parser::default();
    loop {
        let chunk = response.chunk().await;
        // Every frame a chunk completed is stamped with that chunk's arrival.
        let t_ns = log.now();
        let (frames, ended) = match chunk {
            Ok(Some(bytes)) => {
                p.bytes += bytes.len() as u64;
                (parser.feed(&bytes), false)
            }
            Ok(None) => (parser.finish(), true),
            Err(e) => return Ok(Ending::fail(Outcome::TransportError, "body", error_text(&e))),
        };
        for frame in frames {
            if let Some(ending) = record(log, client, unit, p, frame, t_ns)? {
                return Ok(ending);
            }
        }
        if ended {
            return Ok(Ending::ok());
        }
    }
}

/// Logs one frame; returns an ending when the stream is invalid.
fn record(
    log: &EventLog,
    client: &ProviderClient,
    unit: &Unit,
    p: &mut Progress,
    frame: Frame,
    t_ns: u64,
) -> Result<Option<Ending>> {
    let creds = &client.credentials;
    let index = p.events;
    p.events += 1;
    let mut event = SseEvent {
        request_id: unit.request_id.clone(),
        attempt: unit.attempt,
        index,
        data: None,
        event: None,
        id: None,
        retry: None,
        comment: None,
    };
    let mut invalid = None;
    match frame {
        Frame::Comment(text) => event.comment = Some(creds.redact(&text)),
        Frame::Event { data, event: kind, id, retry } => {
            if let Some(d) = &data {
                if d == "[DONE]" {
                    p.done = true;
                } else if !matches!(serde_json::from_str::<Value>(d), Ok(Value::Object(_))) {
                    invalid = Some(Ending::fail(
                        Outcome::InvalidStream,
                        "invalid_sse",
                        format!("event {index}: data is neither [DONE] nor a JSON object"),
                    ));
                }
            }
            event.data = data.map(|d| creds.redact(&d));
            event.event = kind;
            event.id = id.map(|i| creds.redact(&i));
            event.retry = retry;
        }
    }
    log.emit_at(t_ns, Event::SseEvent(event))?;
    Ok(invalid)
}
