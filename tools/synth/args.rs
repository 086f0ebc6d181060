use clap::Parser;
use inferbench_cli::{DatasetArg, RunArg, SpecArg};
use std::path::PathBuf;

/// Write the event log of a scheduled run without a network, for benchmarks.
///
/// Reads RUN/lock.json, RUN/schedule.parquet (ib-select and ib-schedule made them), the spec,
/// its provider table and the dataset; writes RUN/events/0001.jsonl as ib-fetch writes it
/// against fast simulated providers, then seals the run (as ib-fetch does when its schedule is
/// done). Every later stage (ib-reconstruct … ib-report) runs on it unchanged. Each
/// provider's streams are in the grammar of its wire API (chat completions, Responses or
/// Messages, from its row's `api` or the spec's `inference.api`).
///
/// Each provider answers as its profile in --profiles says (reasoning tokens and field,
/// tokens per chunk, accuracy, time to first token and speed, times --time-scale); failures
/// are drawn from the shares below, the same for every provider, stratified per block of
/// 1,000 requests of a provider so a run holds each class's share to within a request per
/// block. The same inputs and seed always write the same bytes.
#[derive(Debug, Parser)]
#[command(name = "ib-synth", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArg,
    #[command(flatten)]
    pub spec: SpecArg,
    #[command(flatten)]
    pub dataset: DatasetArg,
    /// The simulated providers' profiles (ib-sim's format); only the keys that shape a
    /// stream are read.
    #[arg(long, value_name = "FILE", default_value = "pipelines/micro-single-task/sim-profiles.yaml")]
    pub profiles: PathBuf,
    /// Seed of every draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Multiplies the profiles' times: 0.001 makes a 1.4 s time to first token 1.4 ms, a
    /// fast simulated provider. The deadline is not scaled: a timeout ends at the spec's
    /// timeout, as in a real fetch.
    #[arg(long, default_value_t = 0.001, value_name = "F")]
    pub time_scale: f64,
    /// Share of requests (0..1) that time out (no response head, or a stream that stalls).
    #[arg(long, default_value_t = 0.001, value_name = "R")]
    pub timeout: f64,
    /// Share answered HTTP 429 with Retry-After.
    #[arg(long = "http-429", default_value_t = 0.002, value_name = "R")]
    pub http_429: f64,
    /// Share answered HTTP 503.
    #[arg(long = "http-5xx", default_value_t = 0.001, value_name = "R")]
    pub http_5xx: f64,
    /// Share whose connection breaks mid-stream.
    #[arg(long = "transport-error", default_value_t = 0.001, value_name = "R")]
    pub transport_error: f64,
    /// Share whose stream carries an event that is not JSON (a chunk cut in half).
    #[arg(long = "invalid-stream", default_value_t = 0.001, value_name = "R")]
    pub invalid_stream: f64,
    /// Share whose stream ends with neither finish_reason nor [DONE].
    #[arg(long, default_value_t = 0.001, value_name = "R")]
    pub truncated: f64,
    /// Share whose stream reports an error in band (an OpenAI error object).
    #[arg(long = "stream-error", default_value_t = 0.001, value_name = "R")]
    pub stream_error: f64,
    /// Share of completed answers that are right, for every provider [default: each
    /// profile's accuracy].
    #[arg(long, value_name = "R")]
    pub accuracy: Option<f64>,
    /// Write the log only; seal it later with --seal-only (e.g. to measure the seal alone).
    #[arg(long, conflicts_with = "seal_only")]
    pub no_seal: bool,
    /// Seal the run's existing log and write nothing else.
    #[arg(long)]
    pub seal_only: bool,
}
