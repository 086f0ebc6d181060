//! Keeping a credential that a provider spells across several events out of the log.
//!
//! Each event is redacted on its own, but a key split over two deltas (`sk-ste` + `ady-…`)
//! is in no single event. The guard follows the text each channel (answer, reasoning) has
//! delivered so far: while that text ends with the start of a credential (at least four of its
//! characters), the event is held back instead of written; when the next delta completes the
//! credential, the channel's delta in every held event and in the completing one is replaced
//! (`<redacted>` in the first, nothing in the others) before they are written; otherwise they
//! are written as received. Each keeps the arrival time it was stamped with, so no figure
//! moves; only the order of lines in the log can change, never within one attempt.
use crate::credentials::{Credentials, REDACTED};
use inferbench_contract::event::SseEvent;
use inferbench_contract::lenient_json;
use serde_json::Value;

/// At most this many events are held back (a provider could stop right after a credential's
/// first characters and send keep-alives forever).
const MAX_HELD: usize = 64;

/// The delta keys a reasoning text may come from, in the timing function's order.
const REASONING_KEYS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_details"];

/// One event's deltas, as its raw payload carried them.
#[derive(Debug, Clone, Default)]
pub struct Deltas {
    pub reasoning: String,
    pub answer: String,
}

#[derive(Debug, Default)]
pub struct EchoGuard {
    /// The end of each channel's text so far (as long as the longest credential).
    reasoning_tail: String,
    answer_tail: String,
    held: Vec<(u64, SseEvent, Deltas)>,
}

impl EchoGuard {
    /// Takes the next event (already redacted field by field) with the deltas of its raw
    /// payload; returns the events that can be written now, in their order (drained from the
    /// guard's own buffer, so an event passed straight through costs no allocation).
    pub fn pass(&mut self, creds: &Credentials, t_ns: u64, event: SseEvent, deltas: Deltas) -> Released<'_> {
        let keep = creds.longest();
        let reasoning_done = extend(&mut self.reasoning_tail, &deltas.reasoning, keep, creds);
        let answer_done = extend(&mut self.answer_tail, &deltas.answer, keep, creds);
        self.held.push((t_ns, event, deltas));
        if reasoning_done || answer_done {
            let mut first = (true, true);
            for (_, event, deltas) in &mut self.held {
                if reasoning_done && !deltas.reasoning.is_empty() {
                    blank(event, Channel::Reasoning, std::mem::replace(&mut first.0, false));
                }
                if answer_done && !deltas.answer.is_empty() {
                    blank(event, Channel::Answer, std::mem::replace(&mut first.1, false));
                }
            }
            return self.flush();
        }
        let pending = creds.secret_prefix_at_end(&self.reasoning_tail).is_some()
            || creds.secret_prefix_at_end(&self.answer_tail).is_some();
        if pending && self.held.len() < MAX_HELD {
            return self.held.drain(0..0).map(without_deltas);
        }
        self.flush()
    }

    /// Every held event, for writing (at the end of the attempt).
    pub fn flush(&mut self) -> Released<'_> {
        self.held.drain(..).map(without_deltas)
    }
}

/// Events the guard lets go, with their stamps.
pub type Released<'a> =
    std::iter::Map<std::vec::Drain<'a, (u64, SseEvent, Deltas)>, fn((u64, SseEvent, Deltas)) -> (u64, SseEvent)>;

fn without_deltas((t_ns, event, _): (u64, SseEvent, Deltas)) -> (u64, SseEvent) {
    (t_ns, event)
}

/// Appends `delta` to `tail`, keeping its last `keep` bytes; true when the credential is then
/// complete in it (a delta that held it whole was redacted on its own already, but a split one
/// is only whole here).
fn extend(tail: &mut String, delta: &str, keep: usize, creds: &Credentials) -> bool {
    if delta.is_empty() || keep == 0 {
        return false;
    }
    tail.push_str(delta);
    let done = creds.contains_clear(tail);
    if done {
        tail.clear();
    } else if tail.len() > keep {
        let mut cut = tail.len() - keep;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail.drain(..cut);
    }
    done
}

#[derive(Debug, Clone, Copy)]
enum Channel {
    Reasoning,
    Answer,
}

/// Replaces the channel's delta in the event's data: `<redacted>` in the first event of a
/// credential, nothing in the ones after it.
fn blank(event: &mut SseEvent, channel: Channel, first: bool) {
    let replacement = Value::String(if first { REDACTED.to_string() } else { String::new() });
    let parsed = event.data.as_deref().and_then(lenient_json::parse);
    let Some(mut payload) = parsed else {
        event.data = Some(REDACTED.to_string());
        event.redacted = true;
        return;
    };
    if let Some(delta) = payload.pointer_mut("/choices/0/delta").and_then(Value::as_object_mut) {
        match channel {
            Channel::Answer => {
                delta.insert("content".into(), replacement);
            }
            Channel::Reasoning => {
                for key in REASONING_KEYS {
                    if delta.contains_key(key) {
                        delta.insert(key.into(), replacement.clone());
                    }
                }
            }
        }
    }
    event.data = serde_json::to_string(&payload).ok();
    event.redacted = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds() -> Credentials {
        Credentials::for_tests("sk-steady-5f0c1e9a7b")
    }

    fn event(index: u32, content: &str) -> (SseEvent, Deltas) {
        let data = serde_json::json!({"choices": [{"delta": {"content": content}}]}).to_string();
        let e = inferbench_contract::testutil::sse_event("r", index, &data);
        (e, Deltas { reasoning: String::new(), answer: content.into() })
    }

    fn pass(guard: &mut EchoGuard, index: u32, content: &str) -> Vec<(u64, SseEvent)> {
        let (e, d) = event(index, content);
        guard.pass(&creds(), u64::from(index), e, d).collect()
    }

    #[test]
    fn a_credential_split_across_deltas_never_reaches_the_log() {
        let mut guard = EchoGuard::default();
        assert_eq!(pass(&mut guard, 0, "{\"a\":\"").len(), 1, "ordinary text is written at once");
        assert!(pass(&mut guard, 1, "key sk-ste").is_empty(), "the start of a credential is held");
        let written = pass(&mut guard, 2, "ady-5f0c1e9a7b\"}");
        assert_eq!(written.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [1, 2], "in order, stamps kept");
        let text: String = written.iter().map(|(_, e)| e.data.clone().unwrap()).collect();
        assert!(!text.contains("sk-ste") && !text.contains("ady-5f0c"), "{text}");
        assert!(text.contains(REDACTED) && written.iter().all(|(_, e)| e.redacted));
    }

    #[test]
    fn a_start_that_does_not_continue_is_written_as_received() {
        let mut guard = EchoGuard::default();
        assert!(pass(&mut guard, 0, "the sk-st").is_empty());
        let written = pass(&mut guard, 1, "ory ends");
        assert_eq!(written.len(), 2);
        assert!(written.iter().all(|(_, e)| !e.redacted));
        assert!(written[0].1.data.as_deref().unwrap().contains("the sk-st"));
    }

    #[test]
    fn holding_is_bounded_and_flush_returns_the_rest() {
        let mut guard = EchoGuard::default();
        assert!(pass(&mut guard, 0, "sk-stea").is_empty());
        let mut written = 0;
        for i in 1..=MAX_HELD as u32 {
            written += pass(&mut guard, i, "").len();
        }
        assert_eq!(written, MAX_HELD, "released once the bound is reached");
        assert!(pass(&mut guard, 100, "sk-s").is_empty());
        assert_eq!(guard.flush().count(), 2, "the last empty one and this one");
    }
}
