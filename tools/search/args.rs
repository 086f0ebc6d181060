use clap::Parser;
use std::path::PathBuf;

/// Finds each provider's capacity: the highest rate at which a load step still holds its
/// objectives (the spec's `load.search` and `load.objectives`), by probing one rate at a time.
///
/// Each probe is a one-step load run of its own under DIR/probes/NN/, made by the probe command
/// from the search's spec with `load.rates: [rate]` in place of `load.search`; the next rate is
/// chosen from the probes measured so far (doubling from min_rate until a provider fails, then
/// bisecting the widest bracket geometrically until it is within the tolerance). DIR/search.json
/// records every probe and what was found, and DIR/report.md shows it. A search that is stopped
/// resumes where it was when run again; `--rescore` re-scores its probes and rewrites the record.
#[derive(Debug, Parser)]
#[command(name = "ib-search", version, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    /// The search's spec: a load spec whose `load` section has `search` instead of `rates`
    /// [default: DIR/pipeline/spec.yaml]. It is copied there, with the files it names, when the
    /// search begins; a search directory is refused a different spec (exit 4).
    #[arg(long, value_name = "PATH")]
    pub spec: Option<PathBuf>,
    /// The search's directory: search.json, report.md and probes/ go there.
    #[arg(long, value_name = "DIR")]
    pub run: PathBuf,
    /// The shell command that runs one probe to its metrics.json, with IB_PROBE_RUN (the
    /// probe's run directory) and IB_PROBE_SPEC (its spec) in its environment; `make search`
    /// passes the pipeline's own rules (`make run-files`).
    #[arg(long, value_name = "COMMAND")]
    pub probe_command: String,
    /// Run the command for every probe already made (a rescore, say) and rewrite the record
    /// from their metrics, without probing any new rate.
    #[arg(long)]
    pub rescore: bool,
}
