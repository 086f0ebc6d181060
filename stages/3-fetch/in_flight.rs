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
use futures_util::task::AtomicWaker;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

/// Requests per shard: one shard's poll handles at most this many responses (tens of
/// microseconds each when a stream has moved).
const SHARD: usize = 16;

/// The most a call spends polling shards before it yields to the caller's timer (at most one
/// shard's polling more).
const TURN: Duration = Duration::from_micros(200);

/// Futures in flight, polled in bounded turns (see the module docs). Only the shards whose
/// futures were woken are polled: with thousands of streams open, a turn costs what moved, not
/// a look at every shard.
pub struct InFlightSet<F> {
    shards: Vec<Shard<F>>,
    woken: Arc<Woken>,
    len: usize,
}

struct Shard<F> {
    futures: FuturesUnordered<F>,
    /// Wakes the set with this shard's index.
    waker: Waker,
    flag: Arc<ShardWaker>,
}

/// The shards to poll, in the order they were woken, and the task polling the set.
#[derive(Default)]
struct Woken {
    queue: Mutex<VecDeque<usize>>,
    parent: AtomicWaker,
}

impl Woken {
    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<usize>> {
        // Indexes only: a panic elsewhere leaves them consistent.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A shard's waker: queues the shard once (until it is next polled) and wakes the set's task.
struct ShardWaker {
    index: usize,
    queued: AtomicBool,
    woken: Arc<Woken>,
}

impl ShardWaker {
    fn enqueue(&self) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.woken.queue().push_back(self.index);
        }
    }
}

impl Wake for ShardWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.enqueue();
        self.woken.parent.wake();
    }
}

impl<F: Future + Unpin> InFlightSet<F> {
    pub fn new() -> Self {
        InFlightSet { shards: Vec::new(), woken: Arc::default(), len: 0 }
    }

    /// Futures in flight.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a future, into a shard with room (a new one when none has); its shard is polled
    /// at the next turn.
    pub fn push(&mut self, future: F) {
        let at = match self.shards.iter().position(|s| s.futures.len() < SHARD) {
            Some(at) => at,
            None => {
                let flag = Arc::new(ShardWaker {
                    index: self.shards.len(),
                    queued: AtomicBool::new(false),
                    woken: self.woken.clone(),
                });
                let waker = Waker::from(flag.clone());
                self.shards.push(Shard { futures: FuturesUnordered::new(), waker, flag });
                self.shards.len() - 1
            }
        };
        let shard = &mut self.shards[at];
        shard.futures.push(future);
        shard.flag.enqueue();
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
        self.woken.parent.register(cx.waker());
        let started = Instant::now();
        loop {
            let Some(at) = self.woken.queue().pop_front() else { return Poll::Pending };
            let shard = &mut self.shards[at];
            // Cleared before the poll: a future woken during it queues its shard again.
            shard.flag.queued.store(false, Ordering::Release);
            let polled = shard.futures.poll_next_unpin(&mut Context::from_waker(&shard.waker));
            if let Poll::Ready(Some(output)) = polled {
                // Others of the shard may be ready still: it stopped at the first to finish.
                shard.flag.enqueue();
                self.len -= 1;
                return Poll::Ready(Some(output));
            }
            if started.elapsed() >= TURN {
                // The shards still queued hold responses that moved: come back for them once
                // the caller has looked at its clock.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
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
        while !set.woken.queue().is_empty() {
            assert!(one_turn(&mut set).0.is_pending());
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
