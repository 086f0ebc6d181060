use clap::Parser;
use std::path::PathBuf;

/// Execute a run's schedule, streaming, and append every event to the run's log.
///
/// Credentials are read from the environment, else from --env-file, by the variable names in
/// the provider table; their values are sent and never written anywhere. With --endpoint-base
/// every provider is reached at BASE/<provider-slug>/v1/chat/completions instead (ib-sim), and
/// missing credentials are replaced by a placeholder.
///
/// Rerunning on a run whose fetch was killed resumes it: attempts that had started without a
/// terminal event are closed as `interrupted` and sent again; finished requests are skipped.
///
/// Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input or missing credentials (nothing
/// sent), 4 lock mismatch.
#[derive(Debug, Parser)]
#[command(name = "ib-fetch", version, about, long_about)]
pub struct Args {
    /// The run directory (with lock.json and schedule.parquet).
    #[arg(long)]
    pub run: PathBuf,
    /// The pipeline spec the run was locked with.
    #[arg(long, default_value = "pipelines/micro-single-task/spec.yaml")]
    pub spec: PathBuf,
    /// The dataset directory the run was locked with (default: the spec's dataset.source).
    #[arg(long)]
    pub dataset: Option<PathBuf>,
    /// Send every request to simulated providers under this base URL (e.g. ib-sim's).
    #[arg(long, env = "IB_ENDPOINT_BASE", value_name = "URL")]
    pub endpoint_base: Option<String>,
    /// A dotenv file with provider credentials (the environment wins).
    #[arg(long, default_value = ".env")]
    pub env_file: PathBuf,
    /// Override the spec's per-request deadline (seconds) — for tests only.
    #[arg(long, hide = true)]
    pub deadline_seconds: Option<f64>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
