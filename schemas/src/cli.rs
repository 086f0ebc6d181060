//! Exit codes and the error-to-exit-code mapping shared by every stage's `main`.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the stage failed (an output could not be written, unexpected state) |
//! | 2 | usage error (clap: unknown flag, bad flag value) |
//! | 3 | bad input: a file is missing, unreadable, malformed or invalid; nothing was written |
//! | 4 | the run's lock does not match the inputs given; nothing was written |
//! | 5 | interrupted (SIGINT/SIGTERM); what was written so far is kept and a rerun resumes |
use crate::Error;
use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    Ok = 0,
    Failed = 1,
    Usage = 2,
    BadInput = 3,
    LockMismatch = 4,
    Interrupted = 5,
}

/// Marker error for a stage stopped by a signal; `finish` maps it to [`Exit::Interrupted`].
#[derive(Debug, thiserror::Error)]
#[error("interrupted; rerun the same command to resume")]
pub struct Interrupted;

/// Classifies an error chain into an exit code. The first cause that says what went wrong
/// decides: the library's typed errors carry that decision (see [`Error::is_bad_input`]).
pub fn exit_for(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if cause.downcast_ref::<Interrupted>().is_some() {
            return Exit::Interrupted;
        }
        match cause.downcast_ref::<Error>() {
            Some(e) if e.is_bad_input() => return Exit::BadInput,
            Some(Error::LockMismatch(_)) => return Exit::LockMismatch,
            _ => {}
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::BrokenPipe {
                return Exit::Ok;
            }
        }
    }
    Exit::Failed
}

/// Prints the error chain (one line of context per cause) and returns the exit code.
pub fn finish(program: &str, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let code = exit_for(&err);
            if code != Exit::Ok {
                eprintln!("{program}: {err:#}");
            }
            ExitCode::from(code as u8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn bad_input_behind_context_maps_to_exit_3() {
        let err = Err::<(), _>(Error::bad("x.jsonl:3: id: duplicate")).context("loading dataset").unwrap_err();
        assert_eq!(exit_for(&err), Exit::BadInput);
    }

    #[test]
    fn lock_mismatch_maps_to_exit_4_and_plain_errors_to_1() {
        let lock = anyhow::Error::new(Error::LockMismatch("spec.yaml changed".into()));
        assert_eq!(exit_for(&lock), Exit::LockMismatch);
        assert_eq!(exit_for(&anyhow::anyhow!("boom")), Exit::Failed);
        assert_eq!(exit_for(&anyhow::Error::new(Interrupted)), Exit::Interrupted);
    }

    #[test]
    fn an_unreadable_input_is_exit_3_and_a_failed_write_exit_1() {
        let gone = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let read = anyhow::Error::new(Error::unreadable("spec.yaml", gone())).context("loading the spec");
        assert_eq!(exit_for(&read), Exit::BadInput);
        let write = anyhow::Error::new(Error::io("runs/x/lock.json", gone()));
        assert_eq!(exit_for(&write), Exit::Failed);
        let encode = anyhow::Error::new(Error::Parquet { path: "t".into(), message: "m".into() });
        assert_eq!(exit_for(&encode), Exit::Failed);
        let pipe = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert_eq!(exit_for(&pipe), Exit::Ok, "a closed stdout (| head) is not a failure");
    }
}
