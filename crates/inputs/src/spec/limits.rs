//! The client's bounds: the per-request deadline and the memory one response may take.
//!
//! A provider is not trusted to be small or to end: without a cap, one endless SSE line or an
//! endless body would grow the fetch process until the machine kills it, losing the round.
use super::check::Reader;

/// The longest accepted `inference.timeout_seconds` (and `ib-fetch --deadline-seconds`): ten
/// minutes. A single-user request for a few hundred tokens that takes longer measures nothing
/// useful, and the bound keeps every deadline representable: `Duration::from_secs_f64` panics
/// on negative, infinite or huge values, after the run is locked.
pub const MAX_TIMEOUT_SECONDS: f64 = 600.0;

/// `inference.stream_limits.max_event_bytes` when the spec does not set it: 256 KiB. The fetch
/// holds up to one event per open stream; an SSE event is a few hundred bytes and a tool call's
/// arguments a few KiB, and 256 KiB still takes a whole answer of tens of thousands of tokens
/// sent as one event.
pub const DEFAULT_MAX_EVENT_BYTES: u64 = 256 << 10;
/// `inference.stream_limits.max_response_bytes` when the spec does not set it: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 << 20;
/// The largest accepted value of either stream limit: 1 GiB.
pub const MAX_STREAM_LIMIT_BYTES: u64 = 1 << 30;

/// `inference.stream_limits`: the most memory one response may take in the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The cap on one SSE event (one line, or the data lines of one event), in bytes.
    pub max_event_bytes: u64,
    /// The cap on one response body, in bytes.
    pub max_response_bytes: u64,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits { max_event_bytes: DEFAULT_MAX_EVENT_BYTES, max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES }
    }
}

/// Whether `seconds` is an acceptable per-request deadline: finite, > 0, at most
/// [`MAX_TIMEOUT_SECONDS`].
pub fn check_timeout(seconds: f64) -> Result<(), String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_SECONDS {
        Ok(())
    } else {
        Err(format!(
            "must be a number of seconds greater than 0 and at most {MAX_TIMEOUT_SECONDS} (a deadline), found {seconds}"
        ))
    }
}

/// Parses a deadline given on a command line, with the spec's rules (a clap `value_parser`).
pub fn parse_timeout_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    check_timeout(seconds).map(|()| seconds)
}

/// Reads `inference.stream_limits`, defaults filled in.
pub(super) fn read(r: &mut Reader) -> StreamLimits {
    let at = "inference.stream_limits";
    let mut limits = StreamLimits::default();
    let event = r.integer(&format!("{at}.max_event_bytes"), 1, MAX_STREAM_LIMIT_BYTES);
    let response = r.integer(&format!("{at}.max_response_bytes"), 1, MAX_STREAM_LIMIT_BYTES);
    limits.max_event_bytes = event.unwrap_or(limits.max_event_bytes);
    limits.max_response_bytes = response.unwrap_or(limits.max_response_bytes);
    // Only compared when both were readable, so a bad value is reported once.
    let readable = |key: &str, value: Option<u64>| value.is_some() || r.get(&format!("{at}.{key}")).is_none();
    if readable("max_event_bytes", event)
        && readable("max_response_bytes", response)
        && limits.max_event_bytes > limits.max_response_bytes
    {
        r.push(
            &format!("{at}.max_event_bytes"),
            format!(
                "{} exceeds max_response_bytes {}: one event cannot be larger than the response holding it",
                limits.max_event_bytes, limits.max_response_bytes
            ),
        );
    }
    limits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_finite_positive_and_bounded() {
        for good in [0.001, 1.5, 20.0, MAX_TIMEOUT_SECONDS] {
            assert_eq!(check_timeout(good), Ok(()), "{good}");
        }
        for bad in [0.0, -1.0, -0.0, 600.001, 1e20, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(check_timeout(bad).is_err(), "{bad}");
        }
        // Every accepted value is a valid Duration: the reason for the bound.
        let _ = std::time::Duration::from_secs_f64(MAX_TIMEOUT_SECONDS);
    }

    #[test]
    fn command_line_deadlines_parse_with_the_same_rules() {
        assert_eq!(parse_timeout_seconds("1.5"), Ok(1.5));
        assert_eq!(parse_timeout_seconds(" 20 "), Ok(20.0));
        for bad in ["0", "-3", "1e20", "NaN", "inf", "soon", ""] {
            assert!(parse_timeout_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_defaults_are_a_quarter_and_sixteen_mebibytes() {
        let limits = StreamLimits::default();
        assert_eq!((limits.max_event_bytes, limits.max_response_bytes), (262_144, 16_777_216));
    }
}
