use clap::Parser;
use inferbench_cli::{DatasetArg, RunArg, SpecArg};
use std::path::PathBuf;

/// Import a reference runner's run directory as an inferbench run, to re-score it offline.
///
/// Reads FROM (the reference's run directory: run-lock.json, plan.json, raw/<partition>/ with
/// one terminal record per request and its embedded stream events, artifacts/) and writes a
/// new run directory RUN that every later stage accepts unchanged: lock.json (binding the
/// spec, provider table and dataset given, and recording the reference's run id and lock
/// hashes), selection.parquet and schedule.parquet with the reference's ids, rounds and launch
/// order, and events/0001.jsonl whose events carry the reference's recorded payloads and times
/// (its request start as the send time, its per-event monotonic offsets as arrival times),
/// sealed into events.parquet. What the reference recorded that the log has no field for
/// (classification labels, adapter metadata, cost inputs, configuration evidence) and what it
/// derived (evaluations, metrics, paired comparisons) are kept under RUN/reference/.
///
/// A smoke attempt, an interrupted full run (its unfinished requests are missing, not
/// failures) and a complete full run all import. FROM is never modified. The dataset must be
/// the one the reference ran on (checked against its lock's file hashes). Any invalid or
/// inconsistent source record is refused with its file and field, and nothing is written.
/// Then `make rescore RUN=<RUN> SPEC=<SPEC> DATASET=<DIR>` re-scores it like any run.
#[derive(Debug, Parser)]
#[command(name = "ib-import", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    /// The reference run directory (the one holding run-lock.json).
    #[arg(long, value_name = "DIR", env = "IB_IMPORT_FROM")]
    pub from: PathBuf,
    /// Which records to import: `full` or `attempt-N` (a smoke attempt) [default: the full
    /// run when the directory has one, else its last smoke attempt].
    #[arg(long, value_name = "PARTITION")]
    pub partition: Option<String>,
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub spec: SpecArg,
    #[command(flatten)]
    pub dataset: DatasetArg,
    /// Accept a small sample dataset: its manifest counts need not equal the spec's.
    #[arg(long)]
    pub sample: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_and_run_are_required() {
        let err = Args::try_parse_from(["ib-import", "--run", "r"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        let args =
            Args::try_parse_from(["ib-import", "--from", "f", "--run", "r", "--partition", "attempt-2"]).unwrap();
        assert_eq!(args.partition.as_deref(), Some("attempt-2"));
    }
}
