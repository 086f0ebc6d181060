//! `ib-sim`'s command line: serve a profile file's providers, or `generate-fleet`.
use clap::Parser;
use inferbench_cli as cli;
use inferbench_contract::vocab::WireApi;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What the routes serve and which profile keys shape it, after the options of `--help`.
const ROUTES: &str = "Every provider of the profile file is served at three routes, the grammar of the stream \
following the route: POST /<slug>/v1/chat/completions (OpenAI chat completion chunks and [DONE]), POST \
/<slug>/v1/responses (OpenAI Responses events, response.created to response.completed) and POST \
/<slug>/v1/messages (Anthropic Messages events, message_start to message_stop), all three from the same \
profile: the same timings, tokens and fault draws. Errors before a stream are OpenAI-shaped, on /v1/messages \
Anthropic-shaped.

A profile's `dialect` keys make the Responses and Messages streams speak as real servers do: no_indices, \
data_only, done_after_terminal, reasoning_closed_late, usage_at_end, reasoning_text, no_ping. Its `faults` \
are those of every API plus response_failed, response_incomplete and cut_after_structure. The profile file's \
keys are documented in tools/sim/profile.rs and tools/sim/fault.rs.";

/// Simulated OpenAI-compatible streaming providers for inferbench.
#[derive(Debug, Parser)]
#[command(
    name = "ib-sim",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = ROUTES
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Provider profiles (YAML).
    #[arg(long, value_name = "FILE", required = true)]
    pub profiles: Option<PathBuf>,
    /// The dataset the simulated providers answer from (validated by the pipeline's loader
    /// against the spec; a sample is accepted).
    #[command(flatten)]
    pub dataset: cli::DatasetArg,
    /// The pipeline spec the dataset is validated against (families, prompt templates).
    #[command(flatten)]
    pub spec: cli::SpecArg,
    /// Address to bind; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: SocketAddr,
    /// Write the base URL here (atomically) once listening.
    #[arg(long, value_name = "PATH")]
    pub port_file: Option<PathBuf>,
    /// Append one JSON line per request here.
    #[arg(long, value_name = "PATH")]
    pub log: Option<PathBuf>,
    /// Multiply every delay by this (overrides the profile file's time_scale).
    #[arg(long, value_name = "F")]
    pub time_scale: Option<f64>,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Write a pipeline of N simulated providers into a directory: spec.yaml (the given spec
    /// sized for N providers), prompts/, providers.yaml and sim-profiles.yaml. Serve it with
    /// `ib-sim --profiles DIR/sim-profiles.yaml --spec DIR/spec.yaml` and fetch with
    /// `ib-fetch --spec DIR/spec.yaml --endpoint-base URL`.
    GenerateFleet {
        /// How many providers (1 to 9999).
        #[arg(long)]
        providers: usize,
        /// The directory to write (created if needed; the four outputs are replaced).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The spec to size (its prompts/ directory is copied beside it).
        #[command(flatten)]
        spec: cli::SpecArg,
        /// Profiles with no delay at all (`time_scale: 0`): rounds last as long as the client
        /// and the simulator take.
        #[arg(long)]
        zero_latency: bool,
        /// Wire APIs assigned to the providers in turn (chat-completions, responses,
        /// messages), each row naming its `api` with the fields that API takes; with a
        /// messages provider the spec's structured output becomes prompt_only. Without it every
        /// provider is chat completions and no row names an API.
        #[arg(long, value_name = "API,...", value_delimiter = ',')]
        apis: Vec<WireApi>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn cli_parses_all_flags() {
        let a = Args::try_parse_from([
            "ib-sim",
            "--profiles",
            "p.yaml",
            "--dataset",
            "d",
            "--spec",
            "s.yaml",
            "--addr",
            "127.0.0.1:8080",
            "--port-file",
            "u.txt",
            "--log",
            "l.jsonl",
            "--time-scale",
            "0.5",
            "--seed",
            "9",
        ])
        .unwrap();
        assert_eq!((a.addr.port(), a.time_scale, a.seed, a.spec.to_str()), (8080, Some(0.5), 9, Some("s.yaml")));
        let a = Args::try_parse_from(["ib-sim", "--profiles", "p.yaml", "--dataset", "d"]).unwrap();
        assert!(a.command.is_none());
        assert_eq!((a.addr.to_string().as_str(), a.time_scale, a.seed), ("127.0.0.1:0", None, 0));
        assert_eq!(a.spec.path, Path::new("pipelines/micro-single-task/spec.yaml"));
        assert!(Args::try_parse_from(["ib-sim", "--dataset", "d"]).is_err());
        let g =
            Args::try_parse_from(["ib-sim", "generate-fleet", "--providers", "1000", "--out", "f", "--zero-latency"])
                .unwrap();
        assert!(matches!(g.command, Some(Command::GenerateFleet { providers: 1000, zero_latency: true, .. })));
        assert!(Args::try_parse_from(["ib-sim", "--profiles", "p.yaml", "generate-fleet", "--providers", "1"]).is_err());
    }

    #[test]
    fn generate_fleet_takes_a_list_of_apis() {
        let g = Args::try_parse_from([
            "ib-sim",
            "generate-fleet",
            "--providers",
            "3",
            "--out",
            "f",
            "--apis",
            "chat-completions,responses,messages",
        ])
        .unwrap();
        let Some(Command::GenerateFleet { apis, .. }) = g.command else { panic!() };
        assert_eq!(apis, [WireApi::ChatCompletions, WireApi::Responses, WireApi::Messages]);
        let g = Args::try_parse_from(["ib-sim", "generate-fleet", "--providers", "3", "--out", "f"]).unwrap();
        assert!(matches!(g.command, Some(Command::GenerateFleet { apis, .. }) if apis.is_empty()));
        assert!(Args::try_parse_from(["ib-sim", "generate-fleet", "--providers", "3", "--out", "f", "--apis", "grpc"])
            .is_err());
    }
}
