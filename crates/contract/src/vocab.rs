//! The contract's vocabulary: every value a stage writes into an outcome, classification or
//! family column is one of these enums, serialised as the strings the files have always held
//! (`completed`, `2xx`, `valid_result`, `ticket-triage`, …). Stages match on the enums and
//! never spell the strings themselves, so a new class cannot be counted by one stage and
//! missed by another.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every value, in the order the contract lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every value as written in the files, in the same order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value as written in the files.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownValue;
            fn from_str(text: &str) -> Result<Self, UnknownValue> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == text)
                    .ok_or_else(|| UnknownValue { kind: stringify!($name), value: text.to_string() })
            }
        }
    };
}

/// A string that is not a value of the vocabulary it was read as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    pub kind: &'static str,
    pub value: String,
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown {} `{}`", self.kind, self.value)
    }
}

impl std::error::Error for UnknownValue {}

string_enum! {
    /// How one request attempt ended, as `ib-fetch` logged it and `ib-reconstruct` judged it
    /// from the logged events.
    Outcome {
        /// A 2xx event stream that ended with `[DONE]`, or closed cleanly after a
        /// `finish_reason`.
        Completed => "completed",
        /// The one deadline over the whole exchange expired.
        Timeout => "timeout",
        /// A non-2xx status (including 1xx/3xx: redirects are never followed).
        HttpError => "http_error",
        /// Connect, TLS or read failure: the connection broke.
        TransportError => "transport_error",
        /// A 2xx that is not a valid event stream: another content type, no event at all, an
        /// event whose data is neither `[DONE]` nor a JSON object, or an event or body over
        /// the spec's size caps.
        InvalidStream => "invalid_stream",
        /// The provider reported an error inside a 2xx stream: a `data: {"error": …}` payload
        /// or an SSE event named `error`.
        StreamError => "stream_error",
        /// A 2xx stream that ended cleanly with neither `[DONE]` nor a `finish_reason`.
        Truncated => "truncated",
        /// The fetch process stopped before this attempt ended; recorded when a later fetch
        /// resumes. Never a request's final outcome: the request is sent again.
        Interrupted => "interrupted",
    }
}

string_enum! {
    /// The operational class of a request's final outcome: success (`2xx`) or one failure
    /// class, each with its own rate column. The reference runner's five failure classes
    /// (timeout, 429, other 4xx, 5xx, transport error) come first; inferbench tells apart four
    /// more that the reference folded into transport errors or could not classify.
    OperationalOutcome {
        /// A completed 2xx stream.
        Success => "2xx",
        Timeout => "timeout",
        Http429 => "429",
        Other4xx => "other_4xx",
        Http5xx => "5xx",
        /// The connection broke (connect, TLS, reset, body read error).
        TransportError => "transport_error",
        /// HTTP 1xx or 3xx (redirects are never followed).
        OtherHttp => "other_http",
        /// A 2xx whose body was not a valid event stream, or exceeded a size cap.
        InvalidStream => "invalid_stream",
        /// An error reported inside a 2xx stream.
        StreamError => "stream_error",
        /// A 2xx stream that ended without `[DONE]` or a `finish_reason`.
        Truncated => "truncated",
    }
}

impl OperationalOutcome {
    /// The failure classes, in the order of their columns.
    pub const FAILURES: [OperationalOutcome; 9] = [
        OperationalOutcome::Timeout,
        OperationalOutcome::Http429,
        OperationalOutcome::Other4xx,
        OperationalOutcome::Http5xx,
        OperationalOutcome::TransportError,
        OperationalOutcome::OtherHttp,
        OperationalOutcome::InvalidStream,
        OperationalOutcome::StreamError,
        OperationalOutcome::Truncated,
    ];

    /// The class of a final outcome with its HTTP status.
    pub fn of(outcome: Outcome, status: Option<u16>) -> OperationalOutcome {
        match (outcome, status) {
            (Outcome::Completed, _) => OperationalOutcome::Success,
            (Outcome::HttpError, Some(429)) => OperationalOutcome::Http429,
            (Outcome::HttpError, Some(400..=499)) => OperationalOutcome::Other4xx,
            (Outcome::HttpError, Some(500..=599)) => OperationalOutcome::Http5xx,
            (Outcome::HttpError, _) => OperationalOutcome::OtherHttp,
            (Outcome::Timeout, _) => OperationalOutcome::Timeout,
            (Outcome::InvalidStream, _) => OperationalOutcome::InvalidStream,
            (Outcome::StreamError, _) => OperationalOutcome::StreamError,
            (Outcome::Truncated, _) => OperationalOutcome::Truncated,
            (Outcome::TransportError | Outcome::Interrupted, _) => OperationalOutcome::TransportError,
        }
    }

    pub fn is_failure(self) -> bool {
        self != OperationalOutcome::Success
    }

    /// The prefix of the class's `<label>_rate` and `<label>_count` keys.
    pub fn label(self) -> &'static str {
        match self {
            OperationalOutcome::Success => "success",
            OperationalOutcome::Timeout => "timeout",
            OperationalOutcome::Http429 => "http_429",
            OperationalOutcome::Other4xx => "other_http_4xx",
            OperationalOutcome::Http5xx => "http_5xx",
            OperationalOutcome::TransportError => "transport_error",
            OperationalOutcome::OtherHttp => "other_http",
            OperationalOutcome::InvalidStream => "invalid_stream",
            OperationalOutcome::StreamError => "stream_error",
            OperationalOutcome::Truncated => "truncated",
        }
    }

    /// The error type of a `failed_request` evaluation of this class (`None` for success).
    pub fn failure_type(self) -> Option<EvaluationError> {
        Some(match self {
            OperationalOutcome::Success => return None,
            OperationalOutcome::Timeout => EvaluationError::Timeout,
            OperationalOutcome::Http429 => EvaluationError::RateLimitedHttp429,
            OperationalOutcome::Other4xx => EvaluationError::OtherHttp4xx,
            OperationalOutcome::Http5xx => EvaluationError::Http5xx,
            OperationalOutcome::TransportError => EvaluationError::TransportError,
            OperationalOutcome::OtherHttp => EvaluationError::OtherHttp,
            OperationalOutcome::InvalidStream => EvaluationError::InvalidStream,
            OperationalOutcome::StreamError => EvaluationError::StreamError,
            OperationalOutcome::Truncated => EvaluationError::Truncated,
        })
    }

    /// Whether `status` can accompany this class. Timeouts and transport errors may carry any
    /// status (the deadline can expire, or the connection break, after a 200 head); the stream
    /// failures are failures of a 2xx body.
    pub fn status_agrees(self, status: Option<u16>) -> bool {
        let two_xx = |s: Option<u16>| s.is_some_and(|s| (200..300).contains(&s));
        match self {
            OperationalOutcome::Success
            | OperationalOutcome::InvalidStream
            | OperationalOutcome::StreamError
            | OperationalOutcome::Truncated => two_xx(status),
            OperationalOutcome::Http429 => status == Some(429),
            OperationalOutcome::Other4xx => status.is_some_and(|s| (400..500).contains(&s) && s != 429),
            OperationalOutcome::Http5xx => status.is_some_and(|s| (500..600).contains(&s)),
            OperationalOutcome::OtherHttp => {
                status.is_some_and(|s| !(200..300).contains(&s) && !(400..600).contains(&s))
            }
            OperationalOutcome::Timeout | OperationalOutcome::TransportError => true,
        }
    }
}

string_enum! {
    /// What ended an attempt that did not complete: the `error_type` of a terminal event.
    ErrorKind {
        /// The request deadline expired.
        Deadline => "deadline",
        /// The connection could not be made (DNS, TCP, TLS).
        Connect => "connect",
        /// The connection could not be made because the client's machine ran out of file
        /// descriptors, local ports, socket buffers or memory: the client failed, not the
        /// provider (a load step with any is client-bound).
        ClientResource => "client_resource",
        /// The request could not be sent or its head not read.
        Request => "request",
        /// Reading the response body failed (reset, truncated chunked encoding, …).
        Body => "body",
        /// A non-2xx status.
        HttpStatus => "http_status",
        /// An event whose data is neither `[DONE]` nor a JSON object.
        InvalidSse => "invalid_sse",
        /// A 2xx whose content type is not `text/event-stream`, or a 204.
        NotEventStream => "not_event_stream",
        /// A 2xx body that ended without a single server-sent event.
        EmptyStream => "empty_stream",
        /// One line or event exceeded the spec's `max_event_bytes`.
        EventTooLarge => "event_too_large",
        /// The body exceeded the spec's `max_response_bytes`.
        ResponseTooLarge => "response_too_large",
        /// The body carried more events than its size cap allows (one per 64 bytes): a flood of
        /// keep-alives or comments that would make the log many times larger than the body.
        TooManyEvents => "too_many_events",
        /// A `data: {"error": …}` payload inside a 2xx stream, or a Responses stream's
        /// `response.failed`.
        InBandError => "in_band_error",
        /// An SSE event named `error` (or, on Responses and Messages, whose type is `error`)
        /// inside a 2xx stream.
        ErrorEvent => "error_event",
        /// The stream ended cleanly with neither `[DONE]` nor a `finish_reason`.
        NoDoneOrFinish => "no_done_or_finish",
        /// The fetch process stopped before the attempt ended.
        Interrupted => "interrupted",
        /// A Responses or Messages stream ended cleanly (or with `[DONE]`) before its grammar's
        /// terminal event (`response.completed`, `response.incomplete`, `message_stop`).
        NoTerminalEvent => "no_terminal_event",
        /// A Responses or Messages stream broke its grammar's rules: an event before the
        /// response opened, a second opening, a delta or stop for a block never started.
        GrammarViolation => "grammar_violation",
    }
}

string_enum! {
    /// The verdict on one request (reference §9).
    Classification {
        /// A 2xx answer equal to the gold.
        ValidResult => "valid_result",
        /// A 2xx answer of the task's schema that differs from the gold.
        IncorrectResult => "incorrect_result",
        /// A 2xx answer that is not strict JSON of the task's schema, or was withheld.
        InvalidResult => "invalid_result",
        /// An operational failure: no answer was judged.
        FailedRequest => "failed_request",
        /// A 2xx answer to a synthetic prompt: no rubric scores it, so it is neither correct
        /// nor wrong (and counts in no accuracy).
        NotScored => "not_scored",
    }
}

string_enum! {
    /// Why a request is not a valid result: the `error_type` of an evaluation.
    EvaluationError {
        MalformedJson => "malformed_json",
        SchemaInvalid => "schema_invalid",
        MissingRequiredField => "missing_required_field",
        /// The response echoed a credential; its text was withheld from every derived file.
        CredentialEcho => "credential_echo",
        Timeout => "timeout",
        RateLimitedHttp429 => "rate_limited_http_429",
        OtherHttp4xx => "other_http_4xx",
        Http5xx => "http_5xx",
        OtherHttp => "other_http",
        TransportError => "transport_error",
        InvalidStream => "invalid_stream",
        StreamError => "stream_error",
        Truncated => "truncated",
    }
}

string_enum! {
    /// What a request asks: one of the task families inferbench scores, in their schedule
    /// order, or a load workflow's synthetic prompt.
    TaskFamily {
        MeetingNotesLookup => "meeting-notes-lookup",
        TicketTriage => "ticket-triage",
        ContractTermsExtraction => "contract-terms-extraction",
        /// A synthetic prompt of a load workflow (`load.workload.kind: synthetic`): words of an
        /// exact o200k_base length, not a dataset item. No rubric scores its answer (its
        /// evaluation is `not_scored`).
        Synthetic => "synthetic",
    }
}

impl TaskFamily {
    /// The dataset's families, each scored by its rubric, in their schedule order.
    pub const DATASET: &'static [TaskFamily] =
        &[TaskFamily::MeetingNotesLookup, TaskFamily::TicketTriage, TaskFamily::ContractTermsExtraction];

    /// Whether a rubric scores this family's answers (every family but `synthetic`).
    pub const fn is_scored(self) -> bool {
        !matches!(self, TaskFamily::Synthetic)
    }
}

string_enum! {
    /// Where a fetch segment sent its requests (`segment_opened.endpoint_mode`, and the
    /// manifest's): a run never mixes them.
    EndpointMode {
        /// The endpoints of the provider table.
        Providers => "providers",
        /// `ib-sim` at `--endpoint-base`.
        Simulated => "simulated",
        /// `ib-import`: a reference run's records. No request was sent by inferbench, and what
        /// the reference did not time (the arrival of the response head) has no time in the
        /// tables derived from it.
        Imported => "imported",
    }
}

string_enum! {
    /// The wire API a provider is called through: its endpoint's request body, its
    /// authentication headers and the grammar of its event stream. One stream judge reads all
    /// three into the same channels (`inferbench_judge::stream`).
    WireApi {
        /// OpenAI chat completions (`/v1/chat/completions`, `chat.completion.chunk` events,
        /// `[DONE]`).
        ChatCompletions => "chat-completions",
        /// OpenAI Responses (`/v1/responses`, `response.*` events).
        Responses => "responses",
        /// Anthropic Messages (`/v1/messages`, `message_start` … `message_stop`).
        Messages => "messages",
    }
}

impl WireApi {
    /// The path an OpenAI- or Anthropic-compatible server serves the API at, under its base.
    pub const fn route(self) -> &'static str {
        match self {
            WireApi::ChatCompletions => "v1/chat/completions",
            WireApi::Responses => "v1/responses",
            WireApi::Messages => "v1/messages",
        }
    }

    /// Whether this is chat completions (which a request's log line leaves unsaid).
    pub fn is_chat_completions(&self) -> bool {
        *self == WireApi::ChatCompletions
    }
}

impl Default for WireApi {
    /// Every log written before the API was recorded is chat completions'.
    fn default() -> WireApi {
        WireApi::ChatCompletions
    }
}

string_enum! {
    /// What `ib-fetch --shard i/N` shares a run's schedule out by (`crate::shard`).
    ShareUnit {
        /// The provider's position in the lock's provider list (the launch order).
        Provider => "provider",
        /// The round: a load step's arrival, the same item for every provider.
        Round => "round",
        /// A closed-loop load step's user.
        User => "user",
    }
}

string_enum! {
    /// How a fetch segment ended: `segment_closed.status`.
    SegmentStatus {
        /// Every scheduled request is terminal.
        Complete => "complete",
        /// The fetch was stopped before the schedule was done; a later fetch resumes it.
        Interrupted => "interrupted",
    }
}

string_enum! {
    /// How a load step ended: `step_closed.status`.
    StepStatus {
        /// Every request of the step was sent and has ended.
        Complete => "complete",
        /// The fetch was stopped during the step; the step is run again whole.
        Interrupted => "interrupted",
    }
}

string_enum! {
    /// How the reference runner ended a request: the `terminal_outcome` of its records.
    ReferenceOutcome {
        /// A 2xx stream the reference read to its end.
        Completed => "completed",
        Timeout => "timeout",
        /// A non-2xx status.
        HttpError => "http_error",
        /// A failure of the HTTP library, or (error type `invalid_sse`) data it could not read.
        TransportError => "transport_error",
        /// The runner itself failed, not the provider.
        RunnerError => "runner_error",
    }
}

string_enum! {
    /// How a load run's requests are released (`load.mode` of a load workflow's spec).
    LoadMode {
        /// Each request is sent at its arrival time, whatever is still in flight: no request
        /// is ever held back by another's response.
        OpenLoop => "open_loop",
        /// N users per provider, each sending its next request when its previous one ended.
        ClosedLoop => "closed_loop",
        /// Open loop with at most `concurrency_cap` requests of a provider in flight: an
        /// arrival over the cap waits in a first-in, first-out queue, and that wait is part of
        /// its latency (it is measured from the arrival time).
        Capped => "capped",
    }
}

string_enum! {
    /// When a load step's requests arrive (`load.arrivals`).
    ArrivalProcess {
        /// Evenly spaced, `1/rate` apart.
        Constant => "constant",
        /// Exponential gaps of mean `1/rate`.
        Poisson => "poisson",
        /// Gamma-distributed gaps of mean `1/rate` and shape `burstiness` (vLLM's definition:
        /// 1 is Poisson, below 1 burstier, above 1 more even).
        Gamma => "gamma",
        /// The arrival offsets of a trace file, replayed (optionally sped up).
        Trace => "trace",
    }
}

string_enum! {
    /// What a load run sends (`load.workload.kind`).
    WorkloadKind {
        /// The dataset's items, families taking turns, every answer scored by its rubric.
        Dataset => "dataset",
        /// Synthetic prompts of exact o200k_base input lengths asking for given output lengths,
        /// optionally sharing a prefix; no rubric scores their answers.
        Synthetic => "synthetic",
    }
}

string_enum! {
    /// How a synthetic workload draws a request's token count (`load.workload.input_tokens`,
    /// `output_tokens`): every draw is rounded to a whole number of tokens and kept within
    /// `[min, max]`.
    LengthDistribution {
        /// The same count for every request (the key given as an integer).
        Constant => "constant",
        /// Every whole number of `[min, max]` equally likely.
        Uniform => "uniform",
        /// Normal of `mean` and `stddev`, clipped to `[min, max]`.
        Normal => "normal",
        /// Log-normal whose own mean and standard deviation are `mean` and `stddev` (long
        /// right tail, as measured prompt and answer lengths have), clipped to `[min, max]`.
        Lognormal => "lognormal",
    }
}

string_enum! {
    /// Which send of a cache-probe round a request is (`schedule.parquet`'s `cache_probe`):
    /// the first send of a prompt no provider has been sent before, or its repeat, the same
    /// bytes right after.
    CacheProbeSend {
        First => "first",
        Repeat => "repeat",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_serialise_as_the_strings_of_the_files() {
        assert_eq!(serde_json::to_string(&OperationalOutcome::Success).unwrap(), "\"2xx\"");
        assert_eq!(serde_json::to_string(&TaskFamily::TicketTriage).unwrap(), "\"ticket-triage\"");
        let back: Outcome = serde_json::from_str("\"stream_error\"").unwrap();
        assert_eq!(back, Outcome::StreamError);
        assert_eq!("other_4xx".parse::<OperationalOutcome>(), Ok(OperationalOutcome::Other4xx));
        let err = "418".parse::<OperationalOutcome>().unwrap_err();
        assert_eq!(err.to_string(), "unknown OperationalOutcome `418`");
        for v in Classification::ALL {
            assert_eq!(v.as_str().parse::<Classification>(), Ok(*v));
        }
        assert_eq!(serde_json::to_string(&EndpointMode::Simulated).unwrap(), "\"simulated\"");
        assert_eq!(serde_json::to_string(&SegmentStatus::Interrupted).unwrap(), "\"interrupted\"");
        assert_eq!("runner_error".parse::<ReferenceOutcome>(), Ok(ReferenceOutcome::RunnerError));
    }

    #[test]
    fn every_final_outcome_has_one_class_and_every_failure_a_type() {
        use OperationalOutcome as O;
        assert_eq!(O::of(Outcome::Completed, Some(200)), O::Success);
        assert_eq!(O::of(Outcome::HttpError, Some(429)), O::Http429);
        assert_eq!(O::of(Outcome::HttpError, Some(404)), O::Other4xx);
        assert_eq!(O::of(Outcome::HttpError, Some(503)), O::Http5xx);
        assert_eq!(O::of(Outcome::HttpError, Some(302)), O::OtherHttp);
        assert_eq!(O::of(Outcome::HttpError, Some(101)), O::OtherHttp);
        assert_eq!(O::of(Outcome::Timeout, Some(200)), O::Timeout);
        assert_eq!(O::of(Outcome::InvalidStream, Some(200)), O::InvalidStream);
        assert_eq!(O::of(Outcome::StreamError, Some(200)), O::StreamError);
        assert_eq!(O::of(Outcome::Truncated, Some(200)), O::Truncated);
        assert_eq!(O::of(Outcome::TransportError, None), O::TransportError);
        for class in O::FAILURES {
            assert!(class.is_failure() && class.failure_type().is_some(), "{class}");
        }
        assert_eq!(O::Success.failure_type(), None);
        let labels: std::collections::BTreeSet<&str> = O::FAILURES.iter().map(|c| c.label()).collect();
        assert_eq!(labels.len(), O::FAILURES.len(), "distinct column labels");
    }

    #[test]
    fn statuses_must_agree_with_their_class() {
        use OperationalOutcome as O;
        assert!(O::Truncated.status_agrees(Some(200)) && !O::Truncated.status_agrees(None));
        assert!(O::Http429.status_agrees(Some(429)) && !O::Other4xx.status_agrees(Some(429)));
        assert!(O::OtherHttp.status_agrees(Some(307)) && !O::OtherHttp.status_agrees(Some(200)));
        assert!(O::Timeout.status_agrees(None) && O::Timeout.status_agrees(Some(200)));
        assert!(!O::Success.status_agrees(Some(500)));
    }
}
