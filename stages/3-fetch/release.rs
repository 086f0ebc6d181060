//! One round released and awaited: every prepared request launched together behind one
//! barrier, its `request_started` line in the log before its bytes are on the wire, and the
//! round closed once every request has its terminal outcome.
use crate::client;
use crate::log::EventLog;
use crate::plan::Plan;
use crate::prepared::PreparedRound;
use anyhow::Result;
use futures_util::StreamExt;
use inferbench_contract::event::{Event, RoundClosed};
use std::sync::Arc;

/// Releases the prepared requests together and waits for every terminal outcome, running
/// `meanwhile` beside them once they are on their way.
///
/// The launch is one loop that never yields: per request, the send time is taken and the
/// request handed to its provider's connection at once; then each request's exchange is set
/// up and every `request_started` line is handed to the log together. On the single-threaded
/// runtime no connection writes a byte before this function yields, so every request is in
/// the log before it is on the wire (the log's writer thread writes it within about a
/// millisecond, so the launch never waits for the disk), and the launch skew (latest minus earliest send time) is
/// the cost of the hand-overs alone. Before the barrier opens, every connection's state is read
/// once, so that the hand-overs find it in the cache (that pass counts in the gap between
/// rounds, where it belongs: it is the client's work).
pub async fn run_round<T>(
    plan: &Plan,
    log: &Arc<EventLog>,
    round: PreparedRound,
    meanwhile: impl std::future::Future<Output = T>,
) -> Result<T> {
    let PreparedRound {
        round_id,
        round_index,
        scheduled,
        requests: mut prepared,
        released: released_line,
        mut times,
        mut scratch,
        sent: mut lines,
    } = round;
    // Every connection's state, read once before the barrier opens (see `Transport::warm`):
    // this is the client's own work between two rounds, and it keeps the cache misses of a
    // thousand connections out of the launch below.
    for request in &prepared {
        std::hint::black_box(request.client.http.warm());
    }
    let released = log.write_released(&released_line, &mut scratch)?;
    let count = prepared.len();
    // The requests run in this task, not one task each: adding one to the set costs less than
    // spawning it, and dropping the set (when a signal stops the round) drops them all.
    let mut requests = futures_util::stream::FuturesUnordered::new();
    // The launch: per request, its send time and its hand-over to its connection, nothing more
    // (the hand-over writes only beside the request).
    for request in prepared.iter_mut() {
        times.push(log.now());
        client::launch(&request.client, &mut request.request);
    }
    // Then, before any byte goes out, what follows each request to its end.
    for (client::Prepared { unit, client, line, request }, t_ns) in prepared.into_iter().zip(times.drain(..)) {
        let sending = client::sending(&client, request);
        lines.push((line, t_ns));
        let deadline_at = tokio::time::Instant::from_std(log.instant_at(t_ns)) + plan.deadline;
        let (deadline, limits) = (plan.deadline, plan.limits);
        // The exchange's state (kilobytes: the stream's reading and its draining) is made and
        // boxed when the request is first polled, after the launch, not copied in the loop.
        requests.push(async move {
            Box::pin(client::run(log, &client, &unit, sending, deadline_at, deadline, limits)).await
        });
    }
    log.write_started(&lines, released, &mut scratch)?;
    let first = lines.iter().map(|(_, t)| *t).min().unwrap_or(0);
    let last = lines.iter().map(|(_, t)| *t).max().unwrap_or(0);
    // The requests' bytes go out (their connections' tasks run) before `meanwhile` starts,
    // and before the round's lines are freed.
    tokio::task::yield_now().await;
    drop((lines, scratch, released_line));
    let answers = async {
        while let Some(result) = requests.next().await {
            result?;
        }
        anyhow::Ok(())
    };
    let (answered, value) = tokio::join!(answers, meanwhile);
    answered?;
    log.emit(Event::RoundClosed(RoundClosed {
        round_id,
        round_index,
        launch_skew_ns: last - first,
        resumed_partial_round: count != scheduled,
    }))?;
    Ok(value)
}
