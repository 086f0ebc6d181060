//! A load step's requests in flight, read a few at a time so that the launch loop that polls
//! them gets back to its timer within a bound, however many are open.
//!
//! One `FuturesUnordered` of every request in flight polls, in one call, every request whose
//! response has moved before it says none has finished, until tokio's cooperative budget (128
//! operations on the runtime's timers and sockets per task poll) runs out: at tens of
//! microseconds of judging and logging each, milliseconds, during which a send that falls due
//! waits (a send-lag p99 of 8.5 ms at 500 requests a second with 3,800 streams open on a slow
//! provider). Here the requests are held in shards of [`SHARD`], polled one shard after another
//! from where the last call stopped; a call that has spent [`TURN`] without a request finishing
//! asks to be polled again and returns, so the caller's `select!` (its timer first) runs between
//! turns.
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::future::Future;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Requests per shard: one shard's poll handles at most this many responses (tens of
/// microseconds each when a stream has moved).
const SHARD: usize = 16;

/// The most a call spends polling shards before it yields to the caller's timer (at most one
/// shard's polling more).
const TURN: Duration = Duration::from_micros(200);

/// Futures in flight, polled in bounded turns (see the module docs).
pub struct InFlightSet<F> {
    shards: Vec<FuturesUnordered<F>>,
    /// The shard the next poll starts at.
    cursor: usize,
    len: usize,
}

impl<F: Future + Unpin> InFlightSet<F> {
    pub fn new() -> Self {
        InFlightSet { shards: Vec::new(), cursor: 0, len: 0 }
    }

    /// Futures in flight.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a future, into a shard with room (a new one when none has).
    pub fn push(&mut self, future: F) {
        let shard = match self.shards.iter().position(|s| s.len() < SHARD) {
            Some(i) => i,
            None => {
                self.shards.push(FuturesUnordered::new());
                self.shards.len() - 1
            }
        };
        self.shards[shard].push(future);
        self.len += 1;
    }

    /// The next future to finish, or `None` when none is in flight.
    pub fn next(&mut self) -> impl Future<Output = Option<F::Output>> + '_ {
        std::future::poll_fn(move |cx| self.poll_turn(cx))
    }

    fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<Option<F::Output>> {
        if self.len == 0 {
            return Poll::Ready(None);
        }
        let started = Instant::now();
        for _ in 0..self.shards.len() {
            let at = self.cursor;
            self.cursor = (self.cursor + 1) % self.shards.len();
            let shard = &mut self.shards[at];
            if shard.is_empty() {
                continue;
            }
            if let Poll::Ready(Some(output)) = shard.poll_next_unpin(cx) {
                self.len -= 1;
                return Poll::Ready(Some(output));
            }
            if started.elapsed() >= TURN {
                // The shards not polled yet may hold responses that moved: come back for them
                // once the caller has looked at its clock.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;

    type Boxed = Pin<Box<dyn Future<Output = usize>>>;

    /// One poll of `set`, and how long it took. Outside a runtime: tokio's cooperative budget
    /// (which makes a task's futures yield after 128 operations on its resources) does not
    /// apply, as it does not to the response bodies a stream reads.
    fn one_turn(set: &mut InFlightSet<Boxed>) -> (Poll<Option<usize>>, Duration) {
        let start = Instant::now();
        let polled = set.poll_turn(&mut Context::from_waker(std::task::Waker::noop()));
        (polled, start.elapsed())
    }

    #[test]
    fn a_turn_is_bounded_however_many_streams_moved_and_every_future_finishes_once() {
        // 4,000 streams, each woken from outside (as a connection's task wakes its response) and
        // spending 20 µs on what arrived before it waits again: one FuturesUnordered polls all
        // of them in one call, 80 ms.
        let spin = || {
            let start = Instant::now();
            while start.elapsed() < Duration::from_micros(20) {}
        };
        let mut set: InFlightSet<Boxed> = InFlightSet::new();
        let mut senders = Vec::new();
        for i in 0..4000 {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
            senders.push(tx);
            set.push(Box::pin(async move {
                rx.recv().await;
                spin();
                rx.recv().await;
                i
            }));
        }
        assert_eq!(set.len(), 4000);
        // Every future polled once, waiting for its first message: a turn then finds nothing to do.
        for _ in 0..1000 {
            one_turn(&mut set);
        }
        senders.iter().for_each(|tx| tx.send(()).unwrap());
        let (polled, took) = one_turn(&mut set);
        assert!(polled.is_pending());
        // Its budget plus one shard's polling (16 × 20 µs), with room for a loaded machine.
        assert!(took < Duration::from_millis(20), "a turn took {took:?}");
        senders.iter().for_each(|tx| tx.send(()).unwrap());
        let mut seen = vec![false; 4000];
        loop {
            match one_turn(&mut set).0 {
                Poll::Ready(Some(i)) => assert!(!std::mem::replace(&mut seen[i], true), "future {i} finished twice"),
                Poll::Ready(None) => break,
                Poll::Pending => {}
            }
        }
        assert!(seen.iter().all(|&s| s) && set.is_empty());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn futures_pushed_while_others_wait_are_all_reached() {
        let mut set: InFlightSet<Boxed> = InFlightSet::new();
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..100).map(|_| tokio::sync::oneshot::channel::<usize>()).unzip();
        for r in receivers {
            set.push(Box::pin(async move { r.await.unwrap() }));
        }
        for (i, s) in senders.into_iter().enumerate().rev() {
            s.send(i).unwrap();
        }
        let mut got = Vec::new();
        while let Some(i) = set.next().await {
            got.push(i);
            if i == 50 {
                set.push(Box::pin(async { 1000 }));
            }
        }
        got.sort();
        let mut want: Vec<usize> = (0..100).collect();
        want.push(1000);
        assert_eq!(got, want);
    }
}
