//! The open-file limit, raised for a large fleet: every simulated provider is one connection,
//! so 1,000 providers are 1,000 sockets in `ib-fetch` and as many in `ib-sim`, past the usual
//! soft limit of 1,024. Both binaries raise it here.
use anyhow::{bail, Result};

/// Descriptors a process needs besides its connections: the runtime, the log, stdio, files.
pub const SPARE: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the new soft limit.
pub fn raise() -> Result<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit through a valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        bail!("cannot read the open-file limit: {}", std::io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit reads one rlimit through a valid pointer.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            bail!(
                "cannot raise the open-file limit from {} to its hard limit {}: {}",
                limit.rlim_cur,
                limit.rlim_max,
                std::io::Error::last_os_error()
            );
        }
        limit = raised;
    }
    Ok(limit.rlim_cur as u64)
}

/// Raises the limit and checks it leaves room for `connections` sockets; the error names the
/// limit and how to lift it.
pub fn ensure(connections: u64, who: &str) -> Result<()> {
    let limit = raise()?;
    let needed = connections + SPARE;
    if limit < needed {
        bail!(
            "{who}: {connections} providers need about {needed} open files (one connection each), but the hard \
             open-file limit is {limit}; raise it (`ulimit -Hn {needed}` as root, or LimitNOFILE= / nofile in \
             limits.conf) or use fewer providers"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let limit = super::raise().unwrap();
        let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!((now.rlim_cur, limit), (now.rlim_max, now.rlim_max as u64));
        let err = super::ensure(u64::MAX - super::SPARE, "ib-test").unwrap_err().to_string();
        assert!(err.contains("hard open-file limit is") && err.contains("ib-test"), "{err}");
    }
}
