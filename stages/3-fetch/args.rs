use clap::Parser;
use inferbench_cli::{DatasetArg, RunArg, SpecArg};
use std::path::PathBuf;

/// Execute a run's schedule, streaming, and append every event to the run's log.
///
/// Credentials are read from the environment, else from --env-file, by the variable names in
/// the provider table; their values are sent and never written anywhere. With --endpoint-base
/// every provider is reached at BASE/<provider-slug>/v1/chat/completions instead (ib-sim), and
/// missing credentials are replaced by a placeholder; otherwise a missing credential is
/// invalid input (exit 3) and nothing is sent.
///
/// Rerunning on a run whose fetch was killed resumes it: attempts that had started without a
/// terminal event are closed as `interrupted` and sent again; finished requests are skipped.
///
/// With --shard i/N, N processes (on one machine or several) each send a deterministic share
/// of the schedule into segments of their own, from one run-clock origin (--start-at); every
/// later stage reads all the shards' segments as one log. The log is sealed once every shard
/// is done: by the last shard to finish when they share the run directory, else by
/// `ib-fetch --seal-only` once their events/ files are brought together.
#[derive(Debug, Parser)]
#[command(name = "ib-fetch", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub spec: SpecArg,
    #[command(flatten)]
    pub dataset: DatasetArg,
    /// Send every request to simulated providers under this base URL (e.g. ib-sim's). They
    /// are sent placeholder credentials, never the real ones.
    #[arg(long, env = "IB_ENDPOINT_BASE", value_name = "URL")]
    pub endpoint_base: Option<String>,
    /// With --endpoint-base, send the credentials of the environment instead of placeholders
    /// — for tests of redaction only (a simulator that echoes them back).
    #[arg(long, hide = true, requires = "endpoint_base")]
    pub send_credentials_to_simulator: bool,
    /// A dotenv file with provider credentials (the environment wins).
    #[arg(long, default_value = ".env")]
    pub env_file: PathBuf,
    /// Override the spec's per-request deadline (seconds) — for tests only. Held to the
    /// spec's rule for inference.timeout_seconds (finite, > 0, at most 600), so a bad value
    /// is a usage error before anything is sent.
    #[arg(long, hide = true, value_parser = inferbench_inputs::spec::parse_timeout_seconds)]
    pub deadline_seconds: Option<f64>,
    /// Send only shard I of N's share of the schedule (0 ≤ I < N), into segments of its own:
    /// every provider's requests in the closed-loop workflow and in a capped load step, every
    /// arrival in an open-loop step, every user in a closed-loop step, unit u going to shard
    /// u mod N (see docs/reference/event-log.md, "Shards").
    #[arg(long, env = "IB_SHARD", value_name = "I/N", value_parser = inferbench_contract::shard::Shard::parse)]
    pub shard: Option<inferbench_contract::shard::Shard>,
    /// With --shard: the run clock's zero, the same for every shard, as UTC (e.g.
    /// 2026-12-01T19:00:00Z) or Unix seconds (e.g. 1764615600, as `date +%s` prints it). A shard
    /// started before it waits for it; a load run's first step opens 1 s after it. Needed by a
    /// shard's first fetch; a resumed shard takes the one its run's log records.
    #[arg(long, env = "IB_START_AT", value_name = "TIME", requires = "shard", value_parser = parse_start_at)]
    pub start_at: Option<u64>,
    /// Send nothing: seal the log (events.parquet, each segment compressed) if every request is
    /// terminal, which in a sharded run means every shard is done; otherwise say which shard is
    /// missing or not done (exit 3).
    #[arg(long, conflicts_with_all = ["shard", "start_at", "endpoint_base"])]
    pub seal_only: bool,
}

/// `--start-at`: Unix seconds (a fraction allowed), or a UTC time `YYYY-MM-DDTHH:MM:SS[.f]Z`;
/// nanoseconds since the Unix epoch.
pub fn parse_start_at(text: &str) -> Result<u64, String> {
    let bad = || format!("`{text}`: expected Unix seconds (1764615600) or a UTC time (2026-12-01T19:00:00Z)");
    if let Ok(seconds) = text.parse::<f64>() {
        if !(seconds.is_finite() && seconds > 0.0 && seconds < 1e11) {
            return Err(bad());
        }
        return Ok((seconds * 1e9).round() as u64);
    }
    let body = text.strip_suffix('Z').ok_or_else(bad)?;
    let (date, time) = body.split_once('T').ok_or_else(bad)?;
    let numbers = |s: &str, sep: char| -> Result<Vec<i64>, String> {
        s.split(sep).map(|p| p.parse::<i64>().map_err(|_| bad())).collect()
    };
    let [year, month, day] = numbers(date, '-')?[..] else { return Err(bad()) };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
    let [hour, minute, second] = numbers(clock, ':')?[..] else { return Err(bad()) };
    if !inferbench_contract::civil::is_date(year, month, day) || hour > 23 || minute > 59 || second > 59 || year < 1970
    {
        return Err(bad());
    }
    let nanos = if fraction.is_empty() {
        0
    } else if fraction.len() <= 9 && fraction.bytes().all(|b| b.is_ascii_digit()) {
        format!("{fraction:0<9}").parse::<u64>().map_err(|_| bad())?
    } else {
        return Err(bad());
    };
    let days = inferbench_contract::civil::days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
    Ok(seconds as u64 * 1_000_000_000 + nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_read_as_unix_seconds_or_utc() {
        assert_eq!(parse_start_at("1764615600"), Ok(1_764_615_600_000_000_000));
        assert_eq!(parse_start_at("2025-12-01T19:00:00Z"), Ok(1_764_615_600_000_000_000));
        assert_eq!(parse_start_at("2025-12-01T19:00:00.25Z"), Ok(1_764_615_600_250_000_000));
        assert_eq!(parse_start_at("1764615600.5"), Ok(1_764_615_600_500_000_000));
        for bad in ["", "soon", "2025-12-01T19:00:00", "2025-02-30T00:00:00Z", "-5", "NaN", "2025-12-01T24:00:00Z"] {
            assert!(parse_start_at(bad).is_err(), "{bad}");
        }
        let sharded = Args::try_parse_from(["ib-fetch", "--run", "r", "--shard", "1/2", "--start-at", "1764615600"]);
        assert_eq!(sharded.unwrap().shard, Some(inferbench_contract::shard::Shard { index: 1, count: 2 }));
        assert!(Args::try_parse_from(["ib-fetch", "--run", "r", "--shard", "2/2"]).is_err());
        assert!(Args::try_parse_from(["ib-fetch", "--run", "r", "--start-at", "1764615600"]).is_err(), "needs --shard");
    }

    #[test]
    fn the_deadline_override_is_held_to_the_specs_rule() {
        // `=` so that a negative value reaches the parser instead of reading as a flag.
        let parse =
            |value: &str| Args::try_parse_from(["ib-fetch", "--run", "r", &format!("--deadline-seconds={value}")]);
        assert_eq!(parse("1.5").unwrap().deadline_seconds, Some(1.5));
        for bad in ["-1", "0", "1e20", "NaN", "inf", "601"] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation, "{bad}: {err}");
            assert_eq!(err.exit_code(), 2, "{bad}: a usage error");
        }
    }
}
