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
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Args::command().debug_assert();
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
