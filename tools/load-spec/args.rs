use clap::Parser;
use inferbench_contract::vocab::{ArrivalProcess, WireApi};
use std::path::PathBuf;

/// Write a load workflow for one OpenAI-compatible endpoint.
///
/// The pipeline written (spec.yaml, providers.yaml, prompts/) is the bundled load-sweep
/// workflow's, with one provider, TARGET, serving MODEL, and one step per rate. Run it with the
/// usual stages (`make load` does: ib-select --spec DIR/spec.yaml, then the rest), or, with
/// --search, with ib-search (`make load SEARCH=…` does).
#[derive(Debug, Parser)]
#[command(name = "ib-load-spec", version, about, long_about, after_help = inferbench_cli::EXIT_CODES_HELP)]
pub struct Args {
    /// The directory to write (created; refused when it already holds a spec.yaml).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The endpoint's base URL, e.g. http://127.0.0.1:8080/v1 (the API's path, e.g.
    /// `/chat/completions`, is added unless the URL already ends with it).
    #[arg(long, value_name = "URL")]
    pub target: String,
    /// The model id the endpoint serves, sent as the request's `model`.
    #[arg(long, value_name = "ID")]
    pub model: String,
    /// Requests per second, one step each, e.g. "4 8 16" (spaces or commas).
    #[arg(long, value_name = "RATES")]
    pub rates: Option<String>,
    /// Concurrent users per step, e.g. "1 8 32" (closed loop).
    #[arg(long, value_name = "USERS", conflicts_with = "rates")]
    pub concurrency: Option<String>,
    /// A capacity search instead of fixed steps: its lowest and highest rate, e.g. "1 256";
    /// `make search` (ib-search) runs it, one probe of --duration seconds per measured rate.
    #[arg(long, value_name = "MIN MAX", conflicts_with_all = ["rates", "concurrency"])]
    pub search: Option<String>,
    /// The capacity search stops when a rate that fails is within this share of one that
    /// holds (with --search).
    #[arg(long, value_name = "SHARE", default_value_t = 0.05)]
    pub tolerance: f64,
    /// The most probes the capacity search runs (with --search).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_probes: u32,
    /// The objectives a request must meet to count in the goodput, over the template's, e.g.
    /// "e2e_ms=2000 ttft_ms=500 correct=false goodput_target=0.9" (`ttfa_ms=off` drops one).
    /// Keys: ttft_ms, ttfa_ms, tpot_ms, itl_ms, e2e_ms, correct, goodput_target.
    #[arg(long, value_name = "KEY=VALUE ...")]
    pub objectives: Option<String>,
    /// Requests each user sends in a closed-loop step (with --concurrency).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub requests_per_user: u32,
    /// Seconds per step.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub duration: f64,
    /// How the requests arrive.
    #[arg(long, value_name = "PROCESS", default_value = "poisson", value_parser = arrivals)]
    pub arrivals: ArrivalProcess,
    /// The wire API the endpoint is called through: chat-completions, responses (OpenAI
    /// Responses) or messages (Anthropic Messages, whose answers are asked for JSON by the prompt
    /// alone, and whose key goes as `x-api-key`). Its path (`/chat/completions`, `/responses`,
    /// `/messages`) is added to TARGET unless TARGET already ends with it.
    #[arg(long, value_name = "API", default_value = "chat-completions", value_parser = api)]
    pub api: WireApi,
    /// The gamma process's shape (gamma arrivals): 1 is Poisson, below 1 burstier.
    #[arg(long, value_name = "SHAPE")]
    pub burstiness: Option<f64>,
    /// The environment variable holding the endpoint's API key, sent as a bearer token (its
    /// value is never written anywhere).
    #[arg(long, value_name = "NAME", default_value = "IB_LOAD_API_KEY")]
    pub credential_env: String,
    /// The most answer tokens a request asks for (`inference.max_completion_tokens`; the
    /// template's unless given).
    #[arg(long, value_name = "TOKENS")]
    pub max_completion_tokens: Option<u32>,
    /// Each request's deadline, in seconds (`inference.timeout_seconds`; the template's unless
    /// given): a slow endpoint past its capacity needs room to show its queue.
    #[arg(long, value_name = "SECONDS", value_parser = inferbench_inputs::spec::parse_timeout_seconds)]
    pub timeout_seconds: Option<f64>,
    /// The price of a million input and output tokens in USD, for the report's cost figures
    /// (the bundled providers' list price unless given).
    #[arg(long, value_name = "INPUT OUTPUT", default_value = "0.15 0.50")]
    pub price_usd_per_million_tokens: String,
    /// Synthetic prompts of this many o200k_base tokens instead of the dataset's items: a
    /// number, or MIN-MAX for lengths drawn uniformly (needs --output-tokens).
    #[arg(long, value_name = "TOKENS", requires = "output_tokens")]
    pub input_tokens: Option<String>,
    /// The answer tokens each synthetic prompt asks for (sent as the token limit): a number, or
    /// MIN-MAX (needs --input-tokens).
    #[arg(long, value_name = "TOKENS", requires = "input_tokens")]
    pub output_tokens: Option<String>,
    /// The first TOKENS tokens of every synthetic prompt are the same (a shared prefix).
    #[arg(long, value_name = "TOKENS", requires = "input_tokens")]
    pub prefix_tokens: Option<u32>,
    /// Send `"ignore_eos": true` with each synthetic prompt, so that a server that honours it
    /// (vLLM, SGLang) answers to the requested length.
    #[arg(long, requires = "input_tokens")]
    pub ignore_eos: bool,
    /// The workflow whose tasks, prompts and settings the spec takes.
    #[arg(long, value_name = "PATH", default_value = "pipelines/load-sweep/spec.yaml")]
    pub template: PathBuf,
}

/// One of the arrival processes a quick start offers (a trace needs a spec of its own).
fn api(text: &str) -> Result<WireApi, String> {
    text.parse().map_err(|_| format!("`{text}` is not one of {}", WireApi::NAMES.join(", ")))
}

fn arrivals(text: &str) -> Result<ArrivalProcess, String> {
    match text.parse::<ArrivalProcess>() {
        Ok(ArrivalProcess::Trace) | Err(_) => Err(format!("`{text}`: one of constant, poisson, gamma")),
        Ok(process) => Ok(process),
    }
}
