use clap::Parser;
use inferbench_cli::RulesArg;
use inferbench_cli::RunArg;
use std::time::Duration;

/// A live, read-only view of a run, from its event log alone (no network).
///
/// Reads RUN/lock.json, RUN/schedule.parquet and RUN/events/*.jsonl, following the log while
/// ib-fetch appends to it (the partial last line of a line being written is left for the next
/// refresh; any other unreadable line is refused, exit 3, naming the file and line). It never
/// writes into the run: no file is created or modified, and the run's writer lock is never
/// taken; whether a fetch is running is read from the kernel's table of held locks.
///
/// It shows: the run's state (not started, fetch running, stopped after a kill with its
/// segment left open, stopped by a signal, finished, or imported by ib-import); rounds and
/// requests done of the schedule's totals; per provider, requests by outcome (the log's
/// terminal vocabulary, judged from the logged events as ib-reconstruct judges them), the
/// attempts interrupted and left open, and the TTFA and E2E p50 over every finished request
/// so far and over the last --window finished requests; the current round's requests in
/// flight with their elapsed time; recent failures with their error; elapsed fetch time and
/// an ETA.
///
/// The p50s are computed as the run's metrics are: TTFA and E2E by the one timing function of
/// ib-reconstruct (inferbench_judge::timing) and the nearest-rank p50 of ib-aggregate
/// (inferbench_stats::percentile) over the same population as metrics.json's pooled
/// ttfa_p50 and e2e_latency_p50: each provider's requests with a final outcome (its last
/// attempt not interrupted), a TTFA sample wherever a visible answer token arrived (whatever
/// the outcome), an E2E sample for complete responses only. On a finished run they equal
/// metrics.json's.
///
/// Without --once, a terminal view refreshes in place every --interval seconds; q, Esc or
/// Ctrl-C quits and restores the terminal (so do SIGTERM and SIGHUP). --once prints one plain-text snapshot; --once
/// --json one JSON snapshot for scripts (its fields are listed in docs/guide/watching.md; last_seq is
/// the last log line it read, so a script can check it against the log up to that line).
#[derive(Debug, Parser)]
#[command(name = "ib-watch", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    /// Seconds between refreshes of the terminal view (0.1 to 3600).
    #[arg(long, value_name = "SECONDS", default_value = "2", value_parser = parse_interval)]
    pub interval: Duration,
    /// The rolling p50s are over each provider's last N finished requests.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub window: u64,
    /// Print one snapshot and exit (plain text, or JSON with --json) instead of the terminal view.
    #[arg(long)]
    pub once: bool,
    /// With --once: print the snapshot as one JSON document.
    #[arg(long, requires = "once")]
    pub json: bool,
    #[command(flatten)]
    pub rules: RulesArg,
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(0.1..=3600.0).contains(&seconds) {
        return Err(format!("{seconds} s is outside 0.1 to 3600 seconds"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_checked() {
        let args = Args::try_parse_from(["ib-watch", "--run", "r"]).unwrap();
        assert_eq!((args.interval, args.window, args.once, args.json), (Duration::from_secs(2), 20, false, false));
        let args = Args::try_parse_from(["ib-watch", "--run", "r", "--once", "--json", "--window", "5"]).unwrap();
        assert!(args.once && args.json && args.window == 5);
        assert!(Args::try_parse_from(["ib-watch", "--run", "r", "--json"]).is_err(), "--json needs --once");
        assert!(Args::try_parse_from(["ib-watch", "--run", "r", "--window", "0"]).is_err());
        assert!(Args::try_parse_from(["ib-watch", "--run", "r", "--interval", "0"]).is_err());
        assert!(Args::try_parse_from(["ib-watch", "--run", "r", "--interval", "soon"]).is_err());
        assert!(Args::try_parse_from(["ib-watch", "--once"]).is_err(), "--run is required");
    }
}
