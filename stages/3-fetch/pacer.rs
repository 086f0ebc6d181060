//! Waiting until a request is due, to the microsecond, on the fetch's one thread.
//!
//! tokio's timers have a resolution of one millisecond: a sleep until an instant ends at the
//! first tick of its wheel at or after it, up to a millisecond late, which alone would spend
//! the whole send-lag budget of a load step (p99 ≤ 1 ms). A busy wait would be punctual but
//! burns the core the streams are read on. So the pacer arms a Linux timerfd at the absolute
//! instant (CLOCK_MONOTONIC, the clock `std::time::Instant` reads) and waits for it to become
//! readable through the runtime's own epoll: the thread sleeps, the kernel's high-resolution
//! timer wakes it, and every stream read in between runs as usual.
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;
use tokio::io::unix::AsyncFd;

/// One timerfd, re-armed for each instant.
pub struct Pacer {
    timer: AsyncFd<OwnedFd>,
    /// The instant the timer is armed for, so that waiting for it again (the fetch's loop asks
    /// at every wake, once per stream event) costs no system call.
    armed: Option<Instant>,
}

impl Pacer {
    /// A pacer on the current runtime (which must have its I/O driver enabled).
    pub fn new() -> io::Result<Pacer> {
        // SAFETY: timerfd_create takes no pointers; its result is checked before use.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the pacer owns the descriptor and keeps it open for as long as it is
        // registered: both end together when the pacer is dropped.
        let timer = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE)? };
        Ok(Pacer { timer, armed: None })
    }

    /// Returns at `at` or as soon after as the kernel wakes the thread (immediately when it is
    /// already past).
    pub async fn until(&mut self, at: Instant) -> io::Result<()> {
        let now = Instant::now();
        if at <= now {
            return Ok(());
        }
        if self.armed != Some(at) {
            self.arm(at, now)?;
        }
        loop {
            let mut ready = self.timer.readable().await?;
            let mut expirations = [0u8; 8];
            // SAFETY: reading 8 bytes into an 8-byte buffer from our descriptor.
            let read = unsafe { libc::read(self.timer.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
            if read == 8 {
                self.armed = None;
                return Ok(());
            }
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::WouldBlock {
                ready.clear_ready();
                continue;
            }
            return Err(err);
        }
    }

    /// Arms the timer for `at`, `now` being the instant just read.
    fn arm(&mut self, at: Instant, now: Instant) -> io::Result<()> {
        // `Instant` hides its clock reading: the deadline is the monotonic clock now plus the
        // wait (the two reads are a few tens of nanoseconds apart, always early, never late).
        let mut clock = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `clock` is a valid, writable timespec.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut clock) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let wait = at - now;
        // time_t and c_long are i64 here but 32 bits on a 32-bit target: the casts keep both.
        #[allow(clippy::unnecessary_cast)]
        let mut nanos = clock.tv_nsec as i64 + i64::from(wait.subsec_nanos());
        #[allow(clippy::unnecessary_cast)]
        let mut secs = clock.tv_sec as i64 + wait.as_secs() as i64 + nanos / 1_000_000_000;
        nanos %= 1_000_000_000;
        if nanos < 0 {
            nanos += 1_000_000_000;
            secs -= 1;
        }
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: secs as libc::time_t, tv_nsec: nanos as libc::c_long },
        };
        // SAFETY: the descriptor is ours and open; `spec` is valid; the old value is not asked for.
        let armed = unsafe {
            libc::timerfd_settime(self.timer.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if armed != 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(at);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread")]
    async fn it_never_returns_early_and_is_late_by_far_less_than_a_tokio_tick() {
        let mut pacer = Pacer::new().unwrap();
        let mut lates = Vec::new();
        for i in 0..200u64 {
            let at = Instant::now() + Duration::from_micros(300 + 37 * (i % 11));
            pacer.until(at).await.unwrap();
            let now = Instant::now();
            assert!(now >= at, "returned {:?} early", at - now);
            lates.push(now - at);
        }
        lates.sort();
        // A loaded 2-core machine can delay any wake; the median stays far below tokio's
        // millisecond, where a sleep on tokio's wheel would land.
        assert!(lates[100] < Duration::from_micros(500), "median lateness {:?}", lates[100]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_past_instant_returns_at_once_and_other_tasks_run_while_it_waits() {
        let mut pacer = Pacer::new().unwrap();
        let started = Instant::now();
        pacer.until(started - Duration::from_millis(5)).await.unwrap();
        assert!(started.elapsed() < Duration::from_millis(5));
        let ticked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ticked.clone();
        let other = tokio::spawn(async move { flag.store(true, std::sync::atomic::Ordering::SeqCst) });
        pacer.until(Instant::now() + Duration::from_millis(20)).await.unwrap();
        assert!(ticked.load(std::sync::atomic::Ordering::SeqCst), "the runtime ran another task meanwhile");
        other.await.unwrap();
    }
}
