//! What every stage's command line shares: the `--run`, `--spec` and `--dataset` arguments,
//! the exit codes, and the error-to-exit-code mapping every `main` uses.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | the stage failed (an output could not be written, unexpected state) |
//! | 2 | usage error (clap: unknown flag, bad flag value) |
//! | 3 | bad input: a file is missing, unreadable, malformed or invalid; nothing was written |
//! | 4 | the run's lock does not match the inputs given; nothing was written |
//! | 5 | interrupted (SIGINT/SIGTERM); what was written so far is kept and a rerun resumes |
//! | 6 | another stage is writing the run (it holds the run's writer lock); nothing was written |
//!
//! The shared arguments are clap `Args` structs that each stage flattens into its own
//! `Args` (`#[command(flatten)] pub run: RunArg`), so the flags are spelled, documented and
//! read from the environment (`IB_RUN`, `IB_SPEC`, `IB_DATASET`) the same way everywhere. Each
//! dereferences to the path it holds, so a stage passes `&args.run` wherever a `&Path` goes.
pub mod nofile;

use inferbench_contract::Error;
use inferbench_judge::rules::Rules;
use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The exit codes, as every stage's `--help` lists them (`#[command(after_help = ...)]`).
pub const EXIT_CODES_HELP: &str = "Exit codes: 0 success; 1 failure (an output could not be written, or something \
unexpected happened); 2 usage error; 3 invalid input (a file is missing, unreadable, corrupt, truncated or invalid; \
nothing written); 4 the inputs differ from the run's lock.json, or a derived file is stale or from another run \
(nothing written); 5 interrupted (rerun the same command to resume); 6 another process is writing the run (it holds \
the run's writer lock; nothing written).";

/// The bundled spec, relative to the repository root (where `make` runs the stages).
pub const DEFAULT_SPEC: &str = "pipelines/micro-single-task/spec.yaml";

/// `--run DIR`: the run directory.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct RunArg {
    /// The run directory, e.g. runs/workflow=micro-single-task/run=run-20261129-120000. ib-select creates
    /// it; every later stage reads its inputs from it and writes its outputs into it.
    #[arg(id = "run", long = "run", value_name = "DIR", env = "IB_RUN")]
    pub path: PathBuf,
}

/// `--spec PATH`: the pipeline spec.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct SpecArg {
    /// The pipeline spec (spec.yaml). Its providers.table names the provider table, resolved
    /// against the spec's directory. Every stage after ib-select refuses (exit 4) a spec or
    /// provider table that differs from what the run's lock.json recorded.
    #[arg(id = "spec", long = "spec", value_name = "PATH", env = "IB_SPEC", default_value = DEFAULT_SPEC)]
    pub path: PathBuf,
}

/// `--dataset DIR`: the dataset directory, defaulting to the spec's.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct DatasetArg {
    /// The dataset directory in the reference format (manifest.json and one <family>.jsonl
    /// per task family) [default: the spec's dataset.source, relative to the working
    /// directory]. Stages after ib-select refuse one that differs from the run's lock.
    #[arg(id = "dataset", long = "dataset", value_name = "DIR", env = "IB_DATASET")]
    pub path: Option<PathBuf>,
}

impl DatasetArg {
    /// The directory given, if any (`None`: the spec's `dataset.source`).
    pub fn as_deref(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

/// The conversions that let a stage use a path argument as the path it holds.
macro_rules! path_arg {
    ($name:ident) => {
        impl Deref for $name {
            type Target = Path;
            fn deref(&self) -> &Path {
                &self.path
            }
        }
        impl AsRef<Path> for $name {
            fn as_ref(&self) -> &Path {
                &self.path
            }
        }
        // Also gives `PathBuf: From<&$name>` (std's blanket impl), so `RunDir::new(&args.run)`.
        impl AsRef<OsStr> for $name {
            fn as_ref(&self) -> &OsStr {
                self.path.as_os_str()
            }
        }
        impl From<PathBuf> for $name {
            fn from(path: PathBuf) -> Self {
                $name { path }
            }
        }
        impl From<&Path> for $name {
            fn from(path: &Path) -> Self {
                $name { path: path.to_path_buf() }
            }
        }
        impl From<$name> for PathBuf {
            fn from(arg: $name) -> PathBuf {
                arg.path
            }
        }
    };
}
path_arg!(RunArg);
path_arg!(SpecArg);

impl From<Option<PathBuf>> for DatasetArg {
    fn from(path: Option<PathBuf>) -> Self {
        DatasetArg { path }
    }
}

/// `--rules`: the shared flag of the stages whose results the rules change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
pub struct RulesArg {
    /// The scoring rules: `inferbench` (its definitions) or `reference` (the reference
    /// runner's behaviour where inferbench deliberately differs, to show that a re-scored
    /// reference run differs from the reference's figures only by the documented deviations).
    #[arg(long = "rules", env = "IB_RULES", default_value = "inferbench", value_parser = rules_parser())]
    pub rules: Rules,
}

/// The judge's rules as clap values, each with its help (the judge knows no command line).
fn rules_parser() -> impl clap::builder::TypedValueParser<Value = Rules> {
    use clap::builder::TypedValueParser;
    let values = Rules::ALL.map(|r| clap::builder::PossibleValue::new(r.as_str()).help(r.help()));
    clap::builder::PossibleValuesParser::new(values).map(|name: String| Rules::named(&name).unwrap_or_default())
}

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
                eprintln!("{program}: {}", message(&err));
            }
            ExitCode::from(code as u8)
        }
    }
}

/// The error chain as one line, `context: cause: cause`, as anyhow's `{:#}` writes it, but a
/// cause that its outer error already ends with is not repeated: the typed errors name their
/// I/O cause in their own text (`spec.yaml: cannot read: No such file…`) and keep it as their
/// source too, for the exit code.
pub fn message(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let cause = cause.to_string();
        if text.is_empty() {
            text = cause;
        } else if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;
    use clap::{CommandFactory, Parser};

    #[test]
    fn a_cause_the_message_already_names_is_said_once() {
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        let err = anyhow::Error::new(Error::unreadable("spec.yaml", gone)).context("loading the spec");
        let text = message(&err);
        assert_eq!(text.matches("entity not found").count(), 1, "{text}");
        assert!(text.starts_with("loading the spec: spec.yaml: cannot read: "), "{text}");
        let plain = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(message(&plain), "outer: middle: inner");
    }

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

    /// A stage's arguments as a stage declares them.
    #[derive(Debug, Parser)]
    #[command(name = "ib-test")]
    struct Stage {
        #[command(flatten)]
        run: RunArg,
        #[command(flatten)]
        spec: SpecArg,
        #[command(flatten)]
        dataset: DatasetArg,
    }

    #[test]
    fn the_shared_arguments_flatten_into_a_stage() {
        Stage::command().debug_assert();
        let args = Stage::try_parse_from(["ib-test", "--run", "runs/x", "--dataset", "d"]).unwrap();
        assert_eq!(&*args.run, Path::new("runs/x"));
        assert_eq!(PathBuf::from(&args.spec), PathBuf::from(DEFAULT_SPEC));
        assert_eq!(args.dataset.as_deref(), Some(Path::new("d")));
        let err = Stage::try_parse_from(["ib-test", "--spec", "s.yaml"]).unwrap_err();
        assert_eq!(err.exit_code(), Exit::Usage as i32, "--run is required");
    }

    #[test]
    fn help_names_the_environment_fallbacks() {
        let help = Stage::command().render_long_help().to_string();
        for text in ["--run <DIR>", "IB_RUN", "--spec <PATH>", "IB_SPEC", "--dataset <DIR>", "IB_DATASET"] {
            assert!(help.contains(text), "help lacks `{text}`:\n{help}");
        }
    }
}
