//! A load step's client asks the scheduler for precedence when it may.
//!
//! The fetch's one thread sleeps until each request is due (`pacer`), and the time the kernel
//! takes to run it again is send lag. On a machine whose cores are busy (the provider under
//! test on the same host, a build, other tests), a thread of ordinary priority waits its
//! turn behind them for milliseconds, and the step is client-bound (lag p99 > 1 ms) for a
//! reason that is the machine's, not the provider's. A lower nice value gives the thread a
//! larger share and earlier wake-ups; it needs root or CAP_SYS_NICE, and without them the
//! fetch runs as before and says so. The client needs little CPU, so the share it takes
//! from a provider on the same machine is small; its lag is reported either way.
/// The nice value asked for.
const NICE: i32 = -10;

/// Asks for [`NICE`]; false when not permitted (the priority is then left as it was).
pub fn raise() -> bool {
    // SAFETY: setpriority takes no pointers; `0` names the calling process.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, NICE) == 0 }
}
