//! An arrival trace a load step replays (`load.trace`): JSONL, one request per line, in the
//! order they arrived:
//!
//! ```json
//! {"offset_ms": 0.0, "input_tokens": 374, "output_tokens": 44}
//! {"offset_ms": 12.5}
//! ```
//!
//! `offset_ms` is the request's arrival after the trace's start, in milliseconds (a finite
//! number, 0 or more, never less than the line before: a trace is a record of arrivals, and a
//! shuffled one is a mistake to report, not to sort away). `input_tokens` and `output_tokens`
//! (integers, 0 or more) are the request's sizes as recorded, as the public Azure LLM
//! inference traces give them (`ContextTokens`, `GeneratedTokens`); they are read and kept, and
//! a dataset workload sends its own items in their place. Blank lines are passed over; any other
//! key, and a line that is not such an object, is refused naming its line.
use inferbench_contract::{Error, Result};
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;

/// The most arrivals a trace may hold.
pub const MAX_ARRIVALS: usize = 20_000_000;
/// The longest line read: a line of a trace is a few dozen bytes.
pub const MAX_LINE_BYTES: usize = 4096;

/// One recorded arrival.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arrival {
    pub offset_ms: f64,
    #[serde(default)]
    pub input_tokens: Option<u64>,
    #[serde(default)]
    pub output_tokens: Option<u64>,
}

/// A trace's arrivals, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub arrivals: Vec<Arrival>,
}

impl Trace {
    /// Reads and checks the trace at `path`.
    pub fn load(path: &Path) -> Result<Trace> {
        Self::load_with(path, |_| Ok(()))
    }

    /// [`Trace::load`], each arrival also checked by `check` (which says what is wrong with
    /// it), so a refusal names its line.
    pub fn load_with(path: &Path, check: impl Fn(&Arrival) -> std::result::Result<(), String>) -> Result<Trace> {
        let file = std::fs::File::open(path).map_err(|e| Error::unreadable(path, e))?;
        Self::read_with(std::io::BufReader::new(file), &path.display().to_string(), check)
    }

    /// Reads and checks a trace; `name` names it in messages.
    pub fn read(reader: impl BufRead, name: &str) -> Result<Trace> {
        Self::read_with(reader, name, |_| Ok(()))
    }

    /// [`Trace::read`], each arrival also checked by `check`.
    pub fn read_with(
        mut reader: impl BufRead,
        name: &str,
        check: impl Fn(&Arrival) -> std::result::Result<(), String>,
    ) -> Result<Trace> {
        let bad = |line: usize, what: String| Error::bad(format!("{name}: line {line}: {what}"));
        let mut arrivals: Vec<Arrival> = Vec::new();
        let mut buf = Vec::new();
        let mut line = 0usize;
        loop {
            buf.clear();
            line += 1;
            // Bounded: a file that is not a trace (one huge line) is refused after a few KiB.
            let read = std::io::Read::take(&mut reader, MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| Error::bad(format!("{name}: line {line}: unreadable: {e}")))?;
            if read == 0 {
                break;
            }
            if buf.len() > MAX_LINE_BYTES && !buf.ends_with(b"\n") {
                return Err(bad(line, format!("longer than {MAX_LINE_BYTES} bytes: not a line of a trace")));
            }
            let text = std::str::from_utf8(&buf).map_err(|_| bad(line, "not UTF-8".into()))?.trim();
            if text.is_empty() {
                continue;
            }
            let expected = "expected {\"offset_ms\": …, \"input_tokens\": …, \"output_tokens\": …}";
            // serde reads a struct from a list too: a line must be an object.
            if !text.starts_with('{') {
                return Err(bad(line, format!("{expected}, found `{}`", text.chars().take(40).collect::<String>())));
            }
            let arrival: Arrival = serde_json::from_str(text).map_err(|e| bad(line, format!("{expected}: {e}")))?;
            if !arrival.offset_ms.is_finite() || arrival.offset_ms < 0.0 {
                return Err(bad(
                    line,
                    format!("offset_ms must be a finite number, 0 or more, found {}", arrival.offset_ms),
                ));
            }
            if let Some(before) = arrivals.last().filter(|a| a.offset_ms > arrival.offset_ms) {
                return Err(bad(
                    line,
                    format!(
                        "offset_ms {} comes after {}: a trace lists its arrivals in the order they came",
                        arrival.offset_ms, before.offset_ms
                    ),
                ));
            }
            check(&arrival).map_err(|why| bad(line, why))?;
            if arrivals.len() == MAX_ARRIVALS {
                return Err(bad(line, format!("more than {MAX_ARRIVALS} arrivals")));
            }
            arrivals.push(arrival);
        }
        if arrivals.is_empty() {
            return Err(Error::bad(format!("{name}: no arrivals: a trace lists at least one")));
        }
        Ok(Trace { arrivals })
    }

    /// The arrivals' offsets in ns from the trace's start, replayed `speedup` times faster.
    pub fn offsets_ns(&self, speedup: f64) -> impl Iterator<Item = u64> + '_ {
        self.arrivals.iter().map(move |a| (a.offset_ms * 1e6 / speedup).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Trace> {
        Trace::read(text.as_bytes(), "t.jsonl")
    }

    fn refused(text: &str, what: &str) {
        let err = read(text).unwrap_err().to_string();
        assert!(err.contains(what), "{err}");
    }

    #[test]
    fn arrivals_are_read_with_their_sizes_when_given() {
        let trace = read("{\"offset_ms\": 0, \"input_tokens\": 374, \"output_tokens\": 44}\n\n{\"offset_ms\": 12.5}\n{\"offset_ms\": 12.5}").unwrap();
        assert_eq!(trace.arrivals.len(), 3);
        assert_eq!(trace.arrivals[0].input_tokens, Some(374));
        assert_eq!(trace.arrivals[1], Arrival { offset_ms: 12.5, input_tokens: None, output_tokens: None });
        assert_eq!(trace.offsets_ns(1.0).collect::<Vec<_>>(), [0, 12_500_000, 12_500_000]);
        assert_eq!(trace.offsets_ns(2.0).collect::<Vec<_>>(), [0, 6_250_000, 6_250_000]);
    }

    #[test]
    fn every_malformed_line_is_refused_naming_it() {
        refused("{\"offset_ms\": 5}\n{\"offset_ms\": 4}\n", "line 2: offset_ms 4 comes after 5");
        refused("{\"offset_ms\": -1}\n", "line 1: offset_ms must be a finite number, 0 or more");
        refused("{\"offset_ms\": 1, \"timestamp\": 3}\n", "line 1: expected");
        refused("{\"offset_ms\": 1, \"input_tokens\": -3}\n", "line 1: expected");
        refused("{\"input_tokens\": 3}\n", "missing field `offset_ms`");
        refused("[1, 2]\n", "line 1");
        refused("\n\n", "no arrivals");
        refused(&format!("{{\"offset_ms\": 1}}\n{}", "x".repeat(10_000)), "line 2: longer than 4096 bytes");
        let mut latin = b"{\"offset_ms\": 1}\n".to_vec();
        latin.extend_from_slice(b"\xff\n");
        assert!(Trace::read(&latin[..], "t").unwrap_err().to_string().contains("line 2: not UTF-8"));
    }
}
