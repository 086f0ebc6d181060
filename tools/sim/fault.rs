//! The faults a simulated provider can inject: at most one per request, each with its
//! probability in the profile's `faults:` map, plus the parameters some of them take.
//!
//! A fault is drawn the same way on every route (`schedule.rs` places it in the same slot);
//! each grammar renders it in its own events. The comments below say what chat completions
//! sends; on Responses and Messages:
//! - `http_429`, `http_5xx`, `http_400`: the same statuses, the error body in the API's shape
//!   (Messages: `{"type": "error", "error": {"type": "rate_limit_error" | "overloaded_error" |
//!   "invalid_request_error", "message"}}`); `redirect` points under the route it came in on.
//! - `in_band_error`, `error_event`: an `error` event (Responses: `{"type": "error", "code":
//!   "server_error", "message", "param": null, "sequence_number"}`; Messages: `{"type":
//!   "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`).
//! - `malformed`: one answer delta event whose data line is cut in half.
//! - `no_done`: the terminal event (`response.completed`, `message_stop`) is left out.
//! - `data_after_done`: one more answer delta after the terminal event.
//! - `empty_data`: keep-alives in the API's form: SSE comments (`:` and `: keep-alive`) on
//!   Responses, `ping` events on Messages.
//! - `oversized_line`, `unterminated_line`: the answer delta event's `data:` line (after its
//!   `event:` line), oversized or never ended.
//! - `wrong_model`, `no_model`: the model of the response object or message.
//! - `credential_echo`: the credentials in the same fields (`credential::FIELDS`); the
//!   `event:` carrier is a `response.in_progress` or a `ping`.
//! - `non_sse` `json`: the API's non-streaming answer (a `response` object, a `message`).
use serde::{Deserialize, Serialize};

/// One way a request can go wrong. Serialized (in the `--log`) under its profile key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    None,
    /// 429 with `Retry-After`.
    #[serde(rename = "http_429")]
    Http429,
    /// 503 with an OpenAI error body.
    #[serde(rename = "http_5xx")]
    Http5xx,
    /// Headers only after `stall_before_ms`.
    StallBefore,
    /// A pause of `stall_during_ms` after the first half of the answer.
    StallDuring,
    /// The connection dropped after the first half of the answer (no chunked terminator).
    Disconnect,
    /// One event's data cut in half (not JSON) before the second half of the answer.
    Malformed,
    /// A complete stream without `[DONE]`.
    NoDone,
    /// Every chunk echoes `<model>-fp8`.
    WrongModel,
    /// After the first half of the answer: `data: {"error": {...}}`, then the body ends.
    InBandError,
    /// After the first half of the answer: `event: error` + `data: {"error": {...}}`, then
    /// the body ends.
    ErrorEvent,
    /// A 2xx that is not an event stream (`non_sse_kind`).
    NonSse,
    /// A complete stream through `[DONE]`, then the connection stays open and silent.
    DoneThenHang,
    /// One more content chunk after `[DONE]`, then the body ends.
    DataAfterDone,
    /// After the first half of the answer the body ends cleanly: no finish, no `[DONE]`.
    Truncate,
    /// A complete stream with empty-data keep-alive events (`data:` and `data: `).
    EmptyData,
    /// One extra answer delta whose `data:` line is `oversized_bytes` long.
    OversizedLine,
    /// A `data:` line that never ends, written until the client leaves.
    UnterminatedLine,
    /// A complete stream whose chunks have no `model` field.
    NoModel,
    /// A complete stream that echoes the request's credentials in every logged field.
    CredentialEcho,
    /// 400 with an OpenAI error body.
    #[serde(rename = "http_400")]
    Http400,
    /// 307 with a `Location` header and no body.
    Redirect,
    /// After the first half of the answer the response fails in band: Responses ends with a
    /// terminal `response.failed` (`response.error.code: server_error`); Messages sends its
    /// in-band `overloaded_error`; chat completions its in-band error (as `in_band_error`).
    ResponseFailed,
    /// The token ceiling is reached after the first half of the answer: the rest of the
    /// answer is not sent, the stream closes normally with the ceiling's finish reason
    /// (Responses `response.incomplete` with `incomplete_details.reason: max_output_tokens`,
    /// Messages `stop_reason: max_tokens`, chat completions `finish_reason: length`), usage
    /// counting the tokens sent.
    ResponseIncomplete,
    /// The body ends cleanly right after the grammar's opening events (Responses
    /// `response.created` and `response.in_progress`, Messages `message_start` and its
    /// `ping`, chat completions the role chunk), before any reasoning or answer delta.
    CutAfterStructure,
}

impl Fault {
    /// The order in which fault probabilities are laid out on [0, 1); fixed so a profile
    /// edit of one fault does not reshuffle which requests get the others. New faults are
    /// appended, so a profile that does not use them draws exactly the requests it drew
    /// before they existed.
    pub const ALL: [Fault; 24] = [
        Fault::Http429,
        Fault::Http5xx,
        Fault::StallBefore,
        Fault::StallDuring,
        Fault::Disconnect,
        Fault::Malformed,
        Fault::NoDone,
        Fault::WrongModel,
        Fault::InBandError,
        Fault::ErrorEvent,
        Fault::NonSse,
        Fault::DoneThenHang,
        Fault::DataAfterDone,
        Fault::Truncate,
        Fault::EmptyData,
        Fault::OversizedLine,
        Fault::UnterminatedLine,
        Fault::NoModel,
        Fault::CredentialEcho,
        Fault::Http400,
        Fault::Redirect,
        Fault::ResponseFailed,
        Fault::ResponseIncomplete,
        Fault::CutAfterStructure,
    ];

    /// The key of the fault's probability in the profile's `faults:` map.
    pub fn key(self) -> &'static str {
        match self {
            Fault::None => "none",
            Fault::Http429 => "http_429",
            Fault::Http5xx => "http_5xx",
            Fault::StallBefore => "stall_before",
            Fault::StallDuring => "stall_during",
            Fault::Disconnect => "disconnect",
            Fault::Malformed => "malformed",
            Fault::NoDone => "no_done",
            Fault::WrongModel => "wrong_model",
            Fault::InBandError => "in_band_error",
            Fault::ErrorEvent => "error_event",
            Fault::NonSse => "non_sse",
            Fault::DoneThenHang => "done_then_hang",
            Fault::DataAfterDone => "data_after_done",
            Fault::Truncate => "truncate",
            Fault::EmptyData => "empty_data",
            Fault::OversizedLine => "oversized_line",
            Fault::UnterminatedLine => "unterminated_line",
            Fault::NoModel => "no_model",
            Fault::CredentialEcho => "credential_echo",
            Fault::Http400 => "http_400",
            Fault::Redirect => "redirect",
            Fault::ResponseFailed => "response_failed",
            Fault::ResponseIncomplete => "response_incomplete",
            Fault::CutAfterStructure => "cut_after_structure",
        }
    }
}

/// What a `non_sse` fault answers instead of an event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NonSseKind {
    /// 200 `application/json`: a non-streaming `chat.completion` with the whole answer,
    /// sent when the stream would have ended.
    #[default]
    Json,
    /// 200 `text/html`: an error page, at once.
    Html,
    /// 200 `text/event-stream` with an empty body (`content-length: 0`), at once.
    Empty,
    /// 204 with no body, at once.
    NoContent,
}

/// Fault probabilities, each in [0, 1], summing to at most 1, and the faults' parameters.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    pub http_429: f64,
    pub http_5xx: f64,
    pub stall_before: f64,
    /// How long a `stall_before` request sleeps before sending headers (profile time).
    pub stall_before_ms: f64,
    pub stall_during: f64,
    /// How long a `stall_during` request pauses in the middle of its answer.
    pub stall_during_ms: f64,
    pub disconnect: f64,
    pub malformed: f64,
    pub no_done: f64,
    pub wrong_model: f64,
    pub in_band_error: f64,
    pub error_event: f64,
    pub non_sse: f64,
    pub non_sse_kind: NonSseKind,
    pub done_then_hang: f64,
    pub data_after_done: f64,
    pub truncate: f64,
    pub empty_data: f64,
    pub oversized_line: f64,
    /// Length of the oversized `data:` line, from `d` to the last byte before its line end.
    pub oversized_bytes: u64,
    pub unterminated_line: f64,
    pub no_model: f64,
    pub credential_echo: f64,
    pub http_400: f64,
    pub redirect: f64,
    pub response_failed: f64,
    pub response_incomplete: f64,
    pub cut_after_structure: f64,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            http_429: 0.0,
            http_5xx: 0.0,
            stall_before: 0.0,
            // Longer than the benchmark's 20 s client timeout, so a stall is a timeout.
            stall_before_ms: 25_000.0,
            stall_during: 0.0,
            stall_during_ms: 5_000.0,
            disconnect: 0.0,
            malformed: 0.0,
            no_done: 0.0,
            wrong_model: 0.0,
            in_band_error: 0.0,
            error_event: 0.0,
            non_sse: 0.0,
            non_sse_kind: NonSseKind::Json,
            done_then_hang: 0.0,
            data_after_done: 0.0,
            truncate: 0.0,
            empty_data: 0.0,
            oversized_line: 0.0,
            // Ten times a common 1 MB line limit: a client must refuse it, not buffer it.
            oversized_bytes: 10_000_000,
            unterminated_line: 0.0,
            no_model: 0.0,
            credential_echo: 0.0,
            http_400: 0.0,
            redirect: 0.0,
            response_failed: 0.0,
            response_incomplete: 0.0,
            cut_after_structure: 0.0,
        }
    }
}

impl Faults {
    pub fn probability(&self, fault: Fault) -> f64 {
        match fault {
            Fault::None => 1.0 - self.total(),
            Fault::Http429 => self.http_429,
            Fault::Http5xx => self.http_5xx,
            Fault::StallBefore => self.stall_before,
            Fault::StallDuring => self.stall_during,
            Fault::Disconnect => self.disconnect,
            Fault::Malformed => self.malformed,
            Fault::NoDone => self.no_done,
            Fault::WrongModel => self.wrong_model,
            Fault::InBandError => self.in_band_error,
            Fault::ErrorEvent => self.error_event,
            Fault::NonSse => self.non_sse,
            Fault::DoneThenHang => self.done_then_hang,
            Fault::DataAfterDone => self.data_after_done,
            Fault::Truncate => self.truncate,
            Fault::EmptyData => self.empty_data,
            Fault::OversizedLine => self.oversized_line,
            Fault::UnterminatedLine => self.unterminated_line,
            Fault::NoModel => self.no_model,
            Fault::CredentialEcho => self.credential_echo,
            Fault::Http400 => self.http_400,
            Fault::Redirect => self.redirect,
            Fault::ResponseFailed => self.response_failed,
            Fault::ResponseIncomplete => self.response_incomplete,
            Fault::CutAfterStructure => self.cut_after_structure,
        }
    }

    pub fn total(&self) -> f64 {
        Fault::ALL.iter().map(|&f| self.probability(f)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_are_the_profile_keys() {
        for f in Fault::ALL.into_iter().chain([Fault::None]) {
            assert_eq!(serde_json::to_value(f).unwrap(), f.key(), "{f:?}");
        }
    }

    #[test]
    fn every_fault_is_laid_out_once() {
        let mut keys: Vec<&str> = Fault::ALL.iter().map(|f| f.key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), Fault::ALL.len());
        assert!(!Fault::ALL.contains(&Fault::None));
    }

    /// The layout of the faults that existed before the hostile ones were added: changing
    /// it would move every existing profile's faults onto other requests.
    #[test]
    fn the_original_layout_is_a_prefix() {
        assert_eq!(
            Fault::ALL[..8],
            [
                Fault::Http429,
                Fault::Http5xx,
                Fault::StallBefore,
                Fault::StallDuring,
                Fault::Disconnect,
                Fault::Malformed,
                Fault::NoDone,
                Fault::WrongModel
            ]
        );
    }

    #[test]
    fn each_probability_field_is_its_own() {
        // Set each fault's probability alone through its key: exactly that fault reads it.
        for f in Fault::ALL {
            let faults: Faults = serde_norway::from_str(&format!("{}: 0.25\n", f.key())).unwrap();
            for g in Fault::ALL {
                assert_eq!(faults.probability(g), if g == f { 0.25 } else { 0.0 }, "{f:?} read as {g:?}");
            }
            assert!((faults.probability(Fault::None) - 0.75).abs() < 1e-12);
        }
    }
}
