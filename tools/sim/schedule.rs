//! When each event of a response goes out and what it carries, without its wire format: the
//! timing the calibration simulates thousands of runs with, and the skeleton `stream::plan`
//! dresses in JSON.
use crate::draw::Draw;
use crate::fault::{Fault, NonSseKind};
use crate::profile::Profile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Role,
    Reasoning,
    Answer,
    /// An event whose data is not JSON.
    Malformed,
    Finish,
    Usage,
    Done,
    /// Drop the connection without ending the body.
    Abort,
    /// credential_echo: an empty-delta chunk whose SSE `event:` field is the credential.
    Echo,
    /// in_band_error, error_event, response_failed: the mid-stream error; the body ends
    /// after it.
    Error,
    /// empty_data: a keep-alive event with empty data (`index` 0: `data:`, 1: `data: `).
    KeepAlive,
    /// oversized_line: one extra answer delta with a line of `oversized_bytes`.
    Oversized,
    /// unterminated_line: a data line that never ends.
    Unterminated,
    /// data_after_done: a content chunk after `[DONE]`; the body ends after it.
    Trailing,
    /// truncate, cut_after_structure: the body ends cleanly here.
    End,
    /// done_then_hang: nothing more is sent; the connection stays open until the client
    /// leaves.
    Hang,
    /// Never scheduled: an event a grammar adds around the slot it renders (Responses: an
    /// item or content part opened or closed, Messages: a block started or stopped, a
    /// `ping`), sent at that slot's time. Chat completions has none.
    Structure,
}

/// When an event goes out and which chunk it carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    pub at_ms: f64,
    pub kind: Kind,
    /// The reasoning or answer chunk (for `Malformed`, `Error`, `Oversized`, `End`: the
    /// answer chunk it comes before; for `KeepAlive`: its form).
    pub index: usize,
}

/// The timing of one response: when the headers go out (profile ms from receipt) and the
/// events after them. A `non_sse` response has no events: its whole body goes with the
/// headers.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub headers_at_ms: f64,
    pub slots: Vec<Slot>,
}

/// The event times of a response with `reasoning_chunks` reasoning chunks and answer chunks
/// ending at the given token indices (exclusive); `usage`: whether a usage chunk follows the
/// finish.
///
/// Answer chunk 0 goes out at TTFT; chunk c > 0 when its last token is generated, at
/// TTFT + (last token index) / rate. The client therefore measures exactly the drawn rate,
/// (N - 1) / (t_last - t_first), and E2E = TTFT + (N - 1) / rate. Reasoning is spread evenly
/// over the profile's fraction window of the TTFT. Mid-stream faults strike after the first
/// half of the answer chunks (at least one); a one-chunk answer has no middle, so there they
/// strike before the finish.
pub fn schedule(
    profile: &Profile,
    draw: &Draw,
    reasoning_chunks: usize,
    answer_ends: &[usize],
    usage: bool,
) -> Schedule {
    let slot = |at_ms, kind, index| Slot { at_ms, kind, index };
    let fault = draw.fault;
    let t0 = if fault == Fault::StallBefore { profile.faults.stall_before_ms } else { 0.0 };
    let ttft = draw.ttft_ms;
    let per_token_ms = 1000.0 / draw.tokens_per_second;
    let base = |c: usize| t0 + ttft + if c == 0 { 0.0 } else { (answer_ends[c] - 1) as f64 * per_token_ms };
    let n = answer_ends.len();
    if fault == Fault::NonSse {
        // A non-streaming answer comes when the whole answer is generated; the error pages
        // of a proxy at once.
        let at = match profile.faults.non_sse_kind {
            NonSseKind::Json if n > 0 => base(n - 1),
            NonSseKind::Json => t0 + ttft,
            _ => t0,
        };
        return Schedule { headers_at_ms: at, slots: Vec::new() };
    }
    let done = |slots| Schedule { headers_at_ms: t0, slots };
    let mut slots = vec![slot(t0, Kind::Role, 0)];
    if fault == Fault::CutAfterStructure {
        slots.push(slot(t0, Kind::End, 0));
        return done(slots);
    }
    let (start, end) = (profile.reasoning.start_fraction, profile.reasoning.end_fraction);
    match fault {
        // Keep-alives while the model is still silent, both empty forms.
        Fault::EmptyData => {
            slots.push(slot(t0, Kind::KeepAlive, 0));
            slots.push(slot(t0 + ttft * start / 2.0, Kind::KeepAlive, 1));
        }
        Fault::CredentialEcho => slots.push(slot(t0, Kind::Echo, 0)),
        _ => {}
    }
    for j in 0..reasoning_chunks {
        let frac =
            if reasoning_chunks > 1 { start + (end - start) * j as f64 / (reasoning_chunks - 1) as f64 } else { start };
        slots.push(slot(t0 + ttft * frac, Kind::Reasoning, j));
    }
    if fault == Fault::UnterminatedLine {
        slots.push(slot(t0 + ttft, Kind::Unterminated, 0));
        return done(slots);
    }
    let mid = n.div_ceil(2).max(1);
    let mut shift = 0.0;
    let mut last_base = t0 + ttft;
    let mut prev_at = None;
    for c in 0..n {
        let at = base(c) + shift;
        if let (Fault::EmptyData, Some(prev)) = (fault, prev_at) {
            slots.push(slot((prev + at) / 2.0, Kind::KeepAlive, c % 2));
        }
        if c == mid && mid_stream_fault(&mut slots, fault, at, c) {
            return done(slots);
        }
        // The token ceiling: the answer stops after its first half, the stream ends as usual.
        if c == mid && fault == Fault::ResponseIncomplete {
            break;
        }
        slots.push(slot(at, Kind::Answer, c));
        last_base = base(c);
        prev_at = Some(at);
        if c + 1 == mid && fault == Fault::StallDuring {
            shift = profile.faults.stall_during_ms;
        }
    }
    let end_at = last_base + shift;
    if n <= 1 && mid_stream_fault(&mut slots, fault, end_at, 0) {
        return done(slots);
    }
    slots.push(slot(end_at, Kind::Finish, 0));
    if usage {
        slots.push(slot(end_at, Kind::Usage, 0));
    }
    if fault != Fault::NoDone {
        slots.push(slot(end_at, Kind::Done, 0));
    }
    match fault {
        Fault::DoneThenHang => slots.push(slot(end_at, Kind::Hang, 0)),
        Fault::DataAfterDone => slots.push(slot(end_at, Kind::Trailing, 0)),
        _ => {}
    }
    done(slots)
}

/// Adds the mid-stream fault's event before answer chunk `c`; true when the stream ends
/// there.
fn mid_stream_fault(slots: &mut Vec<Slot>, fault: Fault, at_ms: f64, index: usize) -> bool {
    let kind = match fault {
        Fault::Disconnect => Kind::Abort,
        Fault::Malformed => Kind::Malformed,
        Fault::InBandError | Fault::ErrorEvent | Fault::ResponseFailed => Kind::Error,
        Fault::Truncate => Kind::End,
        Fault::OversizedLine => Kind::Oversized,
        _ => return false,
    };
    slots.push(Slot { at_ms, kind, index });
    matches!(kind, Kind::Abort | Kind::Error | Kind::End)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profiles;
    use inferbench_stats::rng::SplitMix64;
    use std::path::Path;

    fn profile(extra: &str) -> Profile {
        let text = format!(
            "providers:\n  p:\n    model: m-1\n    ttft_ms: {{median: 1000, p99: 4000}}\n    tokens_per_second: {{median: 100, p05: 40}}\n{extra}"
        );
        Profiles::parse(&text, Path::new("t.yaml")).unwrap().providers["p"].clone()
    }

    fn draw(fault: Fault) -> Draw {
        Draw {
            fault,
            correct: true,
            ttft_ms: 500.0,
            tokens_per_second: 50.0,
            reasoning_tokens: 0,
            rng: SplitMix64::new(0),
        }
    }

    /// Six answer chunks of two tokens each, at 500 ms (TTFT) and then when each chunk's last
    /// token is generated at 50 tokens/s: 560, 600, 640, 680, 720.
    const ENDS: [usize; 6] = [2, 4, 6, 8, 10, 12];

    fn kinds(s: &Schedule) -> Vec<Kind> {
        s.slots.iter().map(|s| s.kind).collect()
    }

    fn of(s: &Schedule, kind: Kind) -> Vec<Slot> {
        s.slots.iter().copied().filter(|s| s.kind == kind).collect()
    }

    #[test]
    fn a_clean_stream_ends_with_finish_usage_done() {
        let p = profile("");
        let s = schedule(&p, &draw(Fault::None), 2, &ENDS, true);
        use Kind::*;
        assert_eq!(
            kinds(&s),
            [Role, Reasoning, Reasoning, Answer, Answer, Answer, Answer, Answer, Answer, Finish, Usage, Done]
        );
        let times: Vec<f64> = of(&s, Answer).iter().map(|s| s.at_ms).collect();
        assert_eq!(times, [500.0, 560.0, 600.0, 640.0, 680.0, 720.0]);
        // Without a usage request there is no usage chunk.
        assert!(of(&schedule(&p, &draw(Fault::None), 2, &ENDS, false), Usage).is_empty());
    }

    #[test]
    fn mid_stream_errors_and_truncation_end_the_stream_after_half_the_answer() {
        let p = profile("");
        for (fault, last) in [
            (Fault::InBandError, Kind::Error),
            (Fault::ErrorEvent, Kind::Error),
            (Fault::Truncate, Kind::End),
            (Fault::Disconnect, Kind::Abort),
        ] {
            let s = schedule(&p, &draw(fault), 0, &ENDS, true);
            assert_eq!(of(&s, Kind::Answer).len(), 3, "{fault:?}");
            let end = s.slots.last().unwrap();
            assert_eq!((end.kind, end.index, end.at_ms), (last, 3, 640.0), "{fault:?}");
            assert!(of(&s, Kind::Finish).is_empty() && of(&s, Kind::Done).is_empty(), "{fault:?}");
            // A one-chunk answer: after its only chunk.
            let s = schedule(&p, &draw(fault), 0, &[12], true);
            assert_eq!(kinds(&s), [Kind::Role, Kind::Answer, last], "{fault:?}");
        }
    }

    #[test]
    fn an_oversized_delta_goes_in_the_middle_and_the_stream_goes_on() {
        let p = profile("");
        let s = schedule(&p, &draw(Fault::OversizedLine), 0, &ENDS, false);
        let k = kinds(&s);
        let at = k.iter().position(|k| *k == Kind::Oversized).unwrap();
        assert_eq!(k[at - 1..at + 2], [Kind::Answer, Kind::Oversized, Kind::Answer]);
        assert_eq!(of(&s, Kind::Answer).len(), 6);
        assert_eq!(k[k.len() - 2..], [Kind::Finish, Kind::Done]);
    }

    #[test]
    fn keep_alives_come_before_the_first_token_and_between_answer_chunks() {
        let p = profile("");
        let s = schedule(&p, &draw(Fault::EmptyData), 3, &ENDS, false);
        let ka = of(&s, Kind::KeepAlive);
        assert_eq!(ka.len(), 2 + 5);
        assert_eq!((ka[0].at_ms, ka[0].index, ka[1].at_ms, ka[1].index), (0.0, 0, 75.0, 1));
        // Between answers: at the midpoint, both forms in turn.
        assert_eq!((ka[2].at_ms, ka[3].at_ms), (530.0, 580.0));
        assert_eq!((ka[2].index, ka[3].index), (1, 0));
        // Answer timing is that of a clean stream: the client must ignore keep-alives.
        let clean = schedule(&p, &draw(Fault::None), 3, &ENDS, false);
        assert_eq!(of(&s, Kind::Answer), of(&clean, Kind::Answer));
        // Events stay in time order.
        assert!(s.slots.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "{:?}", s.slots);
    }

    #[test]
    fn after_done_a_hang_or_a_trailing_chunk() {
        let p = profile("");
        let s = schedule(&p, &draw(Fault::DoneThenHang), 0, &ENDS, false);
        assert_eq!(kinds(&s)[kinds(&s).len() - 2..], [Kind::Done, Kind::Hang]);
        let s = schedule(&p, &draw(Fault::DataAfterDone), 0, &ENDS, false);
        assert_eq!(kinds(&s)[kinds(&s).len() - 2..], [Kind::Done, Kind::Trailing]);
    }

    #[test]
    fn response_failed_is_a_mid_stream_error() {
        let s = schedule(&profile(""), &draw(Fault::ResponseFailed), 0, &ENDS, true);
        assert_eq!(of(&s, Kind::Answer).len(), 3);
        let end = s.slots.last().unwrap();
        assert_eq!((end.kind, end.index, end.at_ms), (Kind::Error, 3, 640.0));
    }

    #[test]
    fn response_incomplete_ends_normally_after_half_the_answer() {
        let s = schedule(&profile(""), &draw(Fault::ResponseIncomplete), 1, &ENDS, true);
        use Kind::*;
        assert_eq!(kinds(&s), [Role, Reasoning, Answer, Answer, Answer, Finish, Usage, Done]);
        // The finish comes when the last chunk sent is generated.
        assert_eq!(s.slots.last().unwrap().at_ms, 600.0);
        let s = schedule(&profile(""), &draw(Fault::ResponseIncomplete), 0, &[12], false);
        assert_eq!(kinds(&s), [Role, Answer, Finish, Done]);
    }

    #[test]
    fn cut_after_structure_ends_after_the_role() {
        let s = schedule(&profile(""), &draw(Fault::CutAfterStructure), 3, &ENDS, true);
        assert_eq!(kinds(&s), [Kind::Role, Kind::End]);
        assert!(s.slots.iter().all(|s| s.at_ms == 0.0));
    }

    #[test]
    fn an_unterminated_line_replaces_the_answer() {
        let p = profile("");
        let s = schedule(&p, &draw(Fault::UnterminatedLine), 2, &ENDS, true);
        assert_eq!(kinds(&s), [Kind::Role, Kind::Reasoning, Kind::Reasoning, Kind::Unterminated]);
        assert_eq!(s.slots.last().unwrap().at_ms, 500.0);
    }

    #[test]
    fn credential_echo_adds_the_event_field_carrier_after_the_role() {
        let s = schedule(&profile(""), &draw(Fault::CredentialEcho), 0, &ENDS, false);
        assert_eq!(kinds(&s)[..3], [Kind::Role, Kind::Echo, Kind::Answer]);
        assert_eq!(kinds(&s).last(), Some(&Kind::Done));
    }

    #[test]
    fn non_sse_bodies_go_with_the_headers() {
        let s = schedule(&profile(""), &draw(Fault::NonSse), 0, &ENDS, true);
        assert_eq!((s.headers_at_ms, s.slots.len()), (720.0, 0), "json: when the stream would have ended");
        for kind in ["html", "empty", "no_content"] {
            let p = profile(&format!("    faults: {{non_sse_kind: {kind}}}\n"));
            assert_eq!(schedule(&p, &draw(Fault::NonSse), 0, &ENDS, true).headers_at_ms, 0.0, "{kind}");
        }
    }

    #[test]
    fn stalls_move_the_headers_or_the_second_half() {
        let p = profile("    faults: {stall_before_ms: 25000, stall_during_ms: 3000}\n");
        let clean = schedule(&p, &draw(Fault::None), 0, &ENDS, false);
        let s = schedule(&p, &draw(Fault::StallBefore), 0, &ENDS, false);
        assert_eq!((s.headers_at_ms, s.slots[1].at_ms), (25_000.0, 25_500.0));
        let s = schedule(&p, &draw(Fault::StallDuring), 0, &ENDS, false);
        assert_eq!(s.slots.last().unwrap().at_ms, clean.slots.last().unwrap().at_ms + 3000.0);
        assert_eq!(s.slots[1].at_ms, clean.slots[1].at_ms);
    }
}
