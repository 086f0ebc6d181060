//! The `--log` file: one JSON line per request, what was drawn and what actually went out,
//! the ground truth against which a client's records are checked.
use crate::credential::EchoLog;
use crate::fault::{Fault, NonSseKind};
use crate::play::{Ending, Played};
use crate::wire::LineEnding;
use inferbench_contract::vocab::WireApi;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug, Serialize)]
pub struct LogRecord {
    /// The route the request came in on, whose grammar the stream spoke. Absent for chat
    /// completions, so chat lines read as before.
    #[serde(skip_serializing_if = "WireApi::is_chat_completions")]
    pub api: WireApi,
    pub received_unix_ms: u64,
    pub provider: String,
    /// Per-provider request number, from 0.
    pub counter: u64,
    pub id: String,
    /// The dataset item the user message matched, if any.
    pub item_id: Option<String>,
    pub body_sha256: String,
    pub requested_model: Option<String>,
    /// The fault drawn, under its profile key (`none` for a clean request).
    pub fault: Fault,
    /// Whether the answer drawn is the gold. Faults that cut the stream or add to the answer
    /// (filler, echoed credentials) change what arrives, not this.
    pub correct: bool,
    pub status: u16,
    /// The response's `content-type`, if it had one.
    pub content_type: Option<String>,
    /// Drawn TTFT in profile time; the real delay is `ttft_ms × time_scale`.
    pub ttft_ms: f64,
    pub tokens_per_second: f64,
    pub time_scale: f64,
    /// Reasoning tokens streamed (planned).
    pub reasoning_tokens: usize,
    pub answer_tokens: usize,
    /// Answer events planned.
    pub answer_events: usize,
    /// Whether the request asked for usage (`stream_options.include_usage: true`).
    pub include_usage: bool,
    /// Whether the planned stream has a usage chunk (on Responses, a terminal event with its
    /// usage; on Messages, a `message_delta`).
    pub usage_chunk: bool,
    pub line_ending: LineEnding,
    pub split_utf8: bool,
    /// For `non_sse`: what was answered instead of a stream.
    pub non_sse_kind: Option<NonSseKind>,
    /// For `oversized_line`: the length of the oversized `data:` line (without its end).
    pub oversized_bytes: Option<u64>,
    /// For `credential_echo`: the credential headers, the SHA-256 of each value, the fields
    /// that carried them. Never the values.
    pub credential_echo: Option<EchoLog>,
    /// For `redirect`: the `Location` sent.
    pub location: Option<String>,
    /// How the response ended; absent for immediate HTTP errors and redirects.
    pub ending: Option<Ending>,
    /// Real ms from receipt at which the headers were released.
    pub headers_offset_ms: Option<f64>,
    /// Real ms from receipt at which each answer event was completed.
    pub answer_event_offsets_ms: Vec<f64>,
    /// Real ms from receipt of the fault's own event (see `play::Played`).
    pub fault_event_offset_ms: Option<f64>,
    pub events_sent: usize,
    pub body_bytes: u64,
    /// For a provider with `slots`: real ms the request waited for one (the offsets above
    /// are from when it was served). Absent for a provider without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_ms: Option<f64>,
    /// For a provider with a `prompt_cache`: whether the prompt was one it had received
    /// before (then `ttft_ms` is the drawn TTFT × its `ttft_factor`). Absent for a provider
    /// without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_hit: Option<bool>,
}

impl LogRecord {
    pub fn played(&mut self, played: Played) {
        self.ending = Some(played.ending);
        self.headers_offset_ms = played.headers_offset_ms.map(round3);
        self.answer_event_offsets_ms = played.answer_offsets_ms.into_iter().map(round3).collect();
        self.fault_event_offset_ms = played.fault_event_offset_ms.map(round3);
        self.events_sent = played.events_sent;
        self.body_bytes = played.body_bytes;
    }
}

pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
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

    pub fn write(&self, record: &LogRecord) {
        let mut line = serde_json::to_string(record).unwrap_or_default();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(line.as_bytes()) {
            // Losing a log line must not take the provider down; say so once per failure.
            eprintln!("ib-sim: cannot append to {}: {e}", self.path.display());
        }
    }
}
