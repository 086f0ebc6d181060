//! Plays a planned response against the clock, frame by frame, and reports what actually
//! went out: the ground truth of the `--log`.
use crate::schedule::Kind;
use crate::stream::Step;
use crate::wire::{self, Wire};
use axum::body::Bytes;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How a played response ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// Every planned event was handed to the connection and the body ended.
    Completed,
    /// The connection was dropped on purpose (`disconnect` fault).
    Aborted,
    /// The client went away (e.g. its timeout) before the headers.
    ClientGoneBeforeHeaders,
    /// The client went away mid-stream (for `unterminated_line`, the only way it ends).
    ClientGone,
    /// `done_then_hang`: every event was sent, then the connection stayed open and silent
    /// until the client closed it.
    HungUntilClientLeft,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Played {
    pub ending: Ending,
    /// Real ms from receipt at which the head was released.
    pub headers_offset_ms: Option<f64>,
    /// Real ms from receipt at which each answer event was completed (its last frame handed
    /// to the connection).
    pub answer_offsets_ms: Vec<f64>,
    /// Real ms from receipt of the fault's own event: the error, the oversized line (when
    /// complete), the unterminated line (when it began), the trailing chunk, the clean end of
    /// a truncated body, the start of the hang.
    pub fault_event_offset_ms: Option<f64>,
    pub events_sent: usize,
    /// Body bytes handed to the connection.
    pub body_bytes: u64,
}

pub type Frame = Result<Bytes, std::io::Error>;

/// Whether the event is the fault's own (see [`Played::fault_event_offset_ms`]).
fn is_fault_event(kind: Kind) -> bool {
    matches!(kind, Kind::Error | Kind::Oversized | Kind::Unterminated | Kind::Trailing | Kind::End | Kind::Hang)
}

/// Plays `steps`: releases the headers at `headers_at_ms`, then writes each event at its time
/// (profile ms × `time_scale` after `received`) as one or more body frames (see `wire`).
/// Runs in its own task so its outcome is logged even when the client leaves early.
///
/// tokio's timer has millisecond granularity, so an event goes out up to about 1 ms after
/// its planned time (never before); the offsets returned are the actual send times, which
/// is what the log records. `body` is a bounded channel: a long line waits for the client
/// to read, so the memory held is the channel's depth in frames of at most `wire::PIECE`.
pub async fn play(
    steps: Vec<Step>,
    headers_at_ms: f64,
    received: Instant,
    time_scale: f64,
    wire: Wire,
    mut headers: oneshot::Sender<()>,
    body: mpsc::Sender<Frame>,
) -> Played {
    let at = |ms: f64| received + Duration::from_secs_f64((ms * time_scale / 1000.0).max(0.0));
    let since = |t: Instant| t.duration_since(received).as_secs_f64() * 1000.0;
    let mut played = Played {
        ending: Ending::Completed,
        headers_offset_ms: None,
        answer_offsets_ms: Vec::new(),
        fault_event_offset_ms: None,
        events_sent: 0,
        body_bytes: 0,
    };
    // Waits also end when the client leaves (e.g. its timeout during a stall), so the log
    // line is written then, not 25 s later or never (if the simulator is stopped first).
    tokio::select! {
        _ = tokio::time::sleep_until(at(headers_at_ms)) => {}
        _ = headers.closed() => {}
    }
    let released = Instant::now();
    if headers.send(()).is_err() {
        played.ending = Ending::ClientGoneBeforeHeaders;
        return played;
    }
    played.headers_offset_ms = Some(since(released));
    for step in steps {
        tokio::select! {
            _ = tokio::time::sleep_until(at(step.at_ms)) => {}
            _ = body.closed() => {
                played.ending = Ending::ClientGone;
                return played;
            }
        }
        match step.kind {
            Kind::Abort => {
                // An error from the body stream makes hyper drop the connection without the
                // final chunk, which the client sees as a truncated response.
                let _ = body.send(Err(std::io::Error::other("simulated disconnect"))).await;
                played.ending = Ending::Aborted;
                return played;
            }
            Kind::End => {
                // Dropping the sender ends the body with the chunked terminator.
                played.fault_event_offset_ms = Some(since(Instant::now()));
                return played;
            }
            Kind::Hang => {
                // hyper notices the client's close while it waits for the next frame, and
                // drops the body, which closes the channel.
                played.fault_event_offset_ms = Some(since(Instant::now()));
                body.closed().await;
                played.ending = Ending::HungUntilClientLeft;
                return played;
            }
            _ => {}
        }
        let mut frames = wire::frames(&step.payload, wire).peekable();
        let mut first = true;
        while let Some(frame) = frames.next() {
            let now = Instant::now();
            let last = frames.peek().is_none();
            if step.kind == Kind::Unterminated && first {
                played.fault_event_offset_ms = Some(since(now));
            }
            first = false;
            let len = frame.len() as u64;
            if body.send(Ok(frame)).await.is_err() {
                played.ending = Ending::ClientGone;
                return played;
            }
            played.body_bytes += len;
            if last {
                if step.kind == Kind::Answer {
                    played.answer_offsets_ms.push(since(now));
                } else if is_fault_event(step.kind) && step.kind != Kind::Unterminated {
                    played.fault_event_offset_ms = Some(since(now));
                }
            }
        }
        played.events_sent += 1;
    }
    played
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{LineEnding, Payload};

    fn step(at_ms: f64, kind: Kind, data: &str) -> Step {
        Step { at_ms, kind, payload: Payload::data(data) }
    }

    fn steps() -> Vec<Step> {
        vec![
            step(0.0, Kind::Role, "role"),
            step(500.0, Kind::Answer, "a"),
            step(700.0, Kind::Answer, "b"),
            step(700.0, Kind::Finish, "finish"),
            step(700.0, Kind::Done, "[DONE]"),
        ]
    }

    async fn run(steps: Vec<Step>, time_scale: f64, wire: Wire) -> (Played, Vec<(Bytes, Duration)>) {
        let (htx, hrx) = oneshot::channel();
        let (btx, mut brx) = mpsc::channel(4);
        let received = Instant::now();
        let task = tokio::spawn(play(steps, 0.0, received, time_scale, wire, htx, btx));
        hrx.await.unwrap();
        let mut frames = Vec::new();
        while let Some(f) = brx.recv().await {
            frames.push((f.unwrap(), received.elapsed()));
        }
        (task.await.unwrap(), frames)
    }

    #[tokio::test]
    async fn frames_go_out_on_time() {
        // time_scale 0.05: the first answer 25 ms after receipt.
        let (played, frames) = run(steps(), 0.05, Wire::default()).await;
        assert_eq!(played.ending, Ending::Completed);
        assert_eq!((frames.len(), played.events_sent), (5, 5));
        let first = played.answer_offsets_ms[0];
        assert!((25.0..60.0).contains(&first), "{:?}", played.answer_offsets_ms);
        assert!(frames[1].1 >= Duration::from_millis(25), "{:?}", frames[1].1);
        assert_eq!(frames.last().unwrap().0, Bytes::from("data: [DONE]\n\n"));
        assert_eq!(played.body_bytes, frames.iter().map(|f| f.0.len() as u64).sum::<u64>());
    }

    #[tokio::test]
    async fn split_events_are_two_frames_with_the_offset_of_the_second() {
        let wire = Wire { line_ending: LineEnding::Crlf, split_utf8: true };
        let (played, frames) = run(steps(), 0.01, wire).await;
        assert_eq!((frames.len(), played.events_sent), (10, 5));
        assert_eq!([&frames[8].0[..], &frames[9].0[..]].concat(), b"data: [DONE]\r\n\r\n");
        assert_eq!(played.answer_offsets_ms.len(), 2);
    }

    #[tokio::test]
    async fn a_client_that_left_is_noticed() {
        let (htx, hrx) = oneshot::channel();
        let (btx, brx) = mpsc::channel(1);
        drop(hrx);
        let played = play(steps(), 0.0, Instant::now(), 0.001, Wire::default(), htx, btx).await;
        assert_eq!(played.ending, Ending::ClientGoneBeforeHeaders);
        drop(brx);

        let (htx, _hrx) = oneshot::channel();
        let (btx, brx) = mpsc::channel(1);
        drop(brx);
        let played = play(steps(), 0.0, Instant::now(), 0.001, Wire::default(), htx, btx).await;
        assert_eq!(played.ending, Ending::ClientGone);

        // A client that leaves during a 25 s stall is noticed when it leaves.
        let (htx, hrx) = oneshot::channel();
        let (btx, _brx) = mpsc::channel(1);
        let started = Instant::now();
        let task = tokio::spawn(play(steps(), 25_000.0, started, 1.0, Wire::default(), htx, btx));
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(hrx);
        assert_eq!(task.await.unwrap().ending, Ending::ClientGoneBeforeHeaders);
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_hang_lasts_until_the_client_leaves() {
        let mut s = steps();
        s.push(Step { at_ms: 700.0, kind: Kind::Hang, payload: Payload::Nothing });
        let (htx, hrx) = oneshot::channel();
        let (btx, mut brx) = mpsc::channel(8);
        let task = tokio::spawn(play(s, 0.0, Instant::now(), 0.001, Wire::default(), htx, btx));
        hrx.await.unwrap();
        for _ in 0..5 {
            brx.recv().await.unwrap().unwrap();
        }
        // Nothing more comes, and the body does not end.
        let waited = tokio::time::timeout(Duration::from_millis(100), brx.recv()).await;
        assert!(waited.is_err(), "the hang sent or ended: {waited:?}");
        assert!(!task.is_finished());
        drop(brx);
        let played = task.await.unwrap();
        assert_eq!((played.ending, played.events_sent), (Ending::HungUntilClientLeft, 5));
        assert!(played.fault_event_offset_ms.is_some());
    }

    #[tokio::test]
    async fn an_unterminated_line_is_written_while_the_client_reads() {
        let s = vec![
            step(0.0, Kind::Role, "role"),
            Step { at_ms: 0.0, kind: Kind::Unterminated, payload: Payload::Unterminated { prefix: "data: {".into() } },
        ];
        let (htx, hrx) = oneshot::channel();
        let (btx, mut brx) = mpsc::channel(2);
        let task = tokio::spawn(play(s, 0.0, Instant::now(), 0.001, Wire::default(), htx, btx));
        hrx.await.unwrap();
        let mut read = 0;
        for _ in 0..40 {
            read += brx.recv().await.unwrap().unwrap().len();
        }
        assert!(read > 38 * wire::PIECE);
        drop(brx);
        let played = task.await.unwrap();
        assert_eq!((played.ending, played.events_sent), (Ending::ClientGone, 1));
        // The bounded channel kept the writer within a few frames of the reader.
        assert!(played.body_bytes <= (read + 4 * wire::PIECE) as u64, "{} vs {read}", played.body_bytes);
    }
}
