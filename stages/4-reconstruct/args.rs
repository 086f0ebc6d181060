use clap::Parser;
use inferbench_cli::RulesArg;
use inferbench_cli::RunArg;

/// Rebuild responses and timings from a run's raw event log (no network).
///
/// Reads RUN/events/*.jsonl (a torn last line from a killed fetch is ignored) and writes
/// RUN/responses.parquet. Offsets are milliseconds from the actual send of each request to
/// the arrival of the bytes that completed each event. A sealed log is read from the
/// events.parquet its seal wrote and recorded (the same lines, checked alike), unless
/// --read-jsonl is given or the table is not the recorded one.
///
/// With --rules reference, streams are judged as the reference runner judged them where
/// inferbench deliberately differs (README "Definitions"); the later stages carry the rules
/// on, and the report names them.
#[derive(Debug, Parser)]
#[command(name = "ib-reconstruct", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Read a sealed log from its compressed JSONL segments rather than from events.parquet
    /// (slower; the same lines, so the same responses.parquet).
    #[arg(long)]
    pub read_jsonl: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_run_is_taken() {
        assert!(Args::try_parse_from(["ib-reconstruct", "--run", "r"]).is_ok());
        assert!(Args::try_parse_from(["ib-reconstruct", "--run", "r", "--spec", "s.yaml"]).is_err());
        let args = Args::try_parse_from(["ib-reconstruct", "--run", "r", "--rules", "reference"]).unwrap();
        assert!(args.rules.rules.is_reference());
        assert!(Args::try_parse_from(["ib-reconstruct", "--run", "r", "--rules", "python"]).is_err());
        assert!(Args::try_parse_from(["ib-reconstruct", "--run", "r", "--read-jsonl"]).unwrap().read_jsonl);
    }
}
