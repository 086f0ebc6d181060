//! The open-file limit, raised for a large fleet: every simulated provider is one connection,
//! so 1,000 providers are 1,000 sockets in `ib-fetch` and as many in `ib-sim`, past the usual
//! soft limit of 1,024. Both binaries raise it here.
//!
//! A limit that cannot be read, raised or made large enough is the machine's, not the inputs':
//! its [`Error`] is no bad input, so the binary exits 1 (the stage failed), never 3.

/// Descriptors a process needs besides its connections: the runtime, the log, stdio, files.
pub const SPARE: u64 = 64;

/// Why the open-file limit does not serve.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read the open-file limit")]
    Read(#[source] std::io::Error),
    #[error("cannot raise the open-file limit from {from} to its hard limit {to}")]
    Raise {
        from: u64,
        to: u64,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{connections} providers need about {needed} open files (one connection each), but the hard \
         open-file limit is {limit}; raise it (`ulimit -Hn {needed}` as root, or LimitNOFILE= / nofile in \
         limits.conf) or use fewer providers"
    )]
    TooLow { connections: u64, needed: u64, limit: u64 },
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the new soft limit.
pub fn raise() -> Result<u64, Error> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit through a valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(Error::Read(std::io::Error::last_os_error()));
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit reads one rlimit through a valid pointer.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            let source = std::io::Error::last_os_error();
            return Err(Error::Raise { from: limit.rlim_cur, to: limit.rlim_max, source });
        }
        limit = raised;
    }
    Ok(limit.rlim_cur)
}

/// Raises the limit and checks it leaves room for `connections` sockets; the error names the
/// limit and how to lift it (and the binary, `cli::finish`, names itself).
pub fn ensure(connections: u64) -> Result<(), Error> {
    let limit = raise()?;
    let needed = connections.saturating_add(SPARE);
    if limit < needed {
        return Err(Error::TooLow { connections, needed, limit });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{exit_for, message, Exit};

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let limit = super::raise().unwrap();
        let mut now = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut now) }, 0);
        assert_eq!((now.rlim_cur, limit), (now.rlim_max, now.rlim_max));
        let err = super::ensure(u64::MAX - super::SPARE).unwrap_err().to_string();
        assert!(err.contains("hard open-file limit is") && err.contains("ulimit -Hn"), "{err}");
    }

    /// The machine's limit is no bad input: every way the limit fails exits 1, with its cause.
    #[test]
    fn a_limit_that_cannot_be_raised_is_a_failure_not_bad_input() {
        let denied = || std::io::Error::from_raw_os_error(libc::EPERM);
        let errors = [
            super::Error::Read(denied()),
            super::Error::Raise { from: 1024, to: 4096, source: denied() },
            super::ensure(u64::MAX - super::SPARE).unwrap_err(),
        ];
        for error in errors {
            let err = anyhow::Error::new(error).context("ib-fetch");
            assert_eq!(exit_for(&err), Exit::Failed, "{err:#}");
        }
        let raise = anyhow::Error::new(super::Error::Raise { from: 1024, to: 4096, source: denied() });
        let text = message(&raise);
        assert!(text.contains("from 1024 to its hard limit 4096: Operation not permitted"), "{text}");
    }
}
