//! Exit codes and the error-to-exit-code mapping shared by every stage's `main`.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the stage failed (I/O, unexpected state) |
//! | 2 | usage error (clap) |
//! | 3 | bad input: a file is malformed or invalid; nothing was written |
//! | 4 | the run's lock does not match the inputs given; nothing was written |
//! | 5 | interrupted (SIGINT/SIGTERM); what was written so far is kept and a rerun resumes |
//! | 6 | another stage is writing the run (it holds the run's writer lock); nothing was written |
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
    Busy = 6,
}

/// Marker error for a stage stopped by a signal; `finish` maps it to [`Exit::Interrupted`].
#[derive(Debug, thiserror::Error)]
#[error("interrupted; rerun the same command to resume")]
pub struct Interrupted;

/// Classifies an error chain into an exit code.
pub fn exit_for(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if cause.downcast_ref::<Interrupted>().is_some() {
            return Exit::Interrupted;
        }
        match cause.downcast_ref::<Error>() {
            Some(Error::BadInput(_)) | Some(Error::Invalid(_)) => return Exit::BadInput,
            Some(Error::LockMismatch(_)) => return Exit::LockMismatch,
            Some(Error::Busy(_)) => return Exit::Busy,
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
}
