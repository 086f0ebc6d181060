//! `ib-sim`: simulated OpenAI-compatible streaming providers on loopback.
//!
//! Each provider of the profile file is served at `POST /{slug}/v1/chat/completions` with its
//! own latency and speed distributions, reasoning, chunking, accuracy and faults; answers come
//! from the dataset's gold. With `--log`, every request's draws and the send time of each
//! answer event are appended as one JSON line: the ground truth for checking a client.
//! Besides the latency and speed of the published providers it reproduces hostile wire
//! behaviour (see `fault.rs`): mid-stream errors, non-SSE answers, hangs, endless and
//! oversized lines, echoed credentials, odd line endings and split UTF-8.
//!
//! `ib-sim generate-fleet --providers N --out DIR [--zero-latency]` writes a pipeline of N
//! simulated providers (spec, prompts, provider table, profiles) for measuring one `ib-fetch`
//! against a large round; one `ib-sim` serves all of them (see `fleet.rs`).
mod chunk;
mod credential;
mod draw;
mod fault;
mod fleet;
mod log;
mod nofile;
mod play;
mod profile;
mod schedule;
mod server;
mod stratified;
mod stream;
mod wire;

#[cfg(test)]
mod calibration;

use anyhow::Context;
use clap::Parser;
use inferbench_schemas::spec::Spec;
use inferbench_schemas::{atomic, cli, Error};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Simulated OpenAI-compatible streaming providers for inferbench.
#[derive(Debug, Parser)]
#[command(name = "ib-sim", version, args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// Provider profiles (YAML).
    #[arg(long, value_name = "FILE", required = true)]
    profiles: Option<PathBuf>,
    /// The dataset the simulated providers answer from (validated by the pipeline's loader
    /// against the spec; a sample is accepted).
    #[command(flatten)]
    dataset: cli::DatasetArg,
    /// The pipeline spec the dataset is validated against (families, prompt templates).
    #[command(flatten)]
    spec: cli::SpecArg,
    /// Address to bind; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
    /// Write the base URL here (atomically) once listening.
    #[arg(long, value_name = "PATH")]
    port_file: Option<PathBuf>,
    /// Append one JSON line per request here.
    #[arg(long, value_name = "PATH")]
    log: Option<PathBuf>,
    /// Multiply every delay by this (overrides the profile file's time_scale).
    #[arg(long, value_name = "F")]
    time_scale: Option<f64>,
    /// Seed of every random draw.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
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
    },
}

/// Exit codes are the contract's (`inferbench_schemas::cli`): 0 ok, 1 failure, 2 usage
/// (clap), 3 bad input (profiles, time scale, spec contents, dataset).
fn main() -> ExitCode {
    cli::finish("ib-sim", run(Args::parse()))
}

fn run(args: Args) -> anyhow::Result<()> {
    if let Some(Command::GenerateFleet { providers, out, spec, zero_latency }) = args.command {
        let fleet = fleet::Fleet { providers, out, spec: spec.path, zero_latency };
        fleet::generate(&fleet).map_err(|e| Error::bad(format!("{e:#}")))?;
        println!("wrote a fleet of {providers} simulated providers to {}", fleet.out.display());
        return Ok(());
    }
    let profiles_path = args.profiles.as_deref().ok_or_else(|| Error::bad("--profiles is required"))?;
    // All inputs are validated before binding, so a bad file never leaves a half-started
    // server or a stale port file behind.
    let profiles = profile::Profiles::load(profiles_path).map_err(Error::from)?;
    let time_scale = args.time_scale.unwrap_or(profiles.time_scale);
    if !(time_scale.is_finite() && time_scale >= 0.0) {
        return Err(Error::bad(format!("--time-scale: must be a finite number >= 0, got {time_scale}")).into());
    }
    let spec = Spec::load(&args.spec)?;
    let dataset_dir = args.dataset.as_deref().unwrap_or(&spec.dataset_source).to_path_buf();
    let dataset = inferbench_sim::dataset::Dataset::load(&dataset_dir, &spec)?;
    if !dataset.shadowed.is_empty() {
        eprintln!(
            "ib-sim: {} item(s) repeat an earlier item's user prompt and are answered as that item (first: {})",
            dataset.shadowed.len(),
            dataset.shadowed[0]
        );
    }
    let log = match &args.log {
        Some(path) => {
            Some(log::RequestLog::open(path.clone()).with_context(|| format!("{}: cannot open log", path.display()))?)
        }
        None => None,
    };
    // One connection per provider per client: a fleet needs more than the usual 1,024 files.
    nofile::ensure(profiles.providers.len() as u64, "ib-sim").map_err(|e| Error::bad(format!("{e:#}")))?;
    let app = Arc::new(server::App::new(profiles, dataset, time_scale, args.seed, log));

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("cannot bind {}", args.addr))?;
        let url = format!("http://{}", listener.local_addr()?);
        if let Some(path) = &args.port_file {
            atomic::write(path, format!("{url}\n").as_bytes())?;
        }
        // Flushed explicitly: a parent reading our piped stdout waits for this line.
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {url}")?;
        out.flush()?;
        drop(out);
        server::serve(listener, app, shutdown_signal(), Duration::from_secs(2)).await?;
        Ok(())
    })
}

/// Resolves on SIGINT (ctrl-c) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_schemas::cli::{exit_for, Exit};
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

    /// Every bad input is the contract's exit code 3, and nothing is bound or written.
    #[test]
    fn bad_inputs_map_to_exit_3_before_binding() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("url");
        let good_profiles = repo.join("tests/fixtures/e2e/sim-profiles.yaml");
        let bad_profiles = dir.path().join("p.yaml");
        std::fs::write(&bad_profiles, "providers: {x: {model: m}}\n").unwrap();
        let sample = repo.join("data/micro-single-task-sample");
        let args = |profiles: &Path, dataset: &Path, time_scale: Option<f64>| Args {
            command: None,
            profiles: Some(profiles.to_path_buf()),
            dataset: cli::DatasetArg { path: Some(dataset.to_path_buf()) },
            spec: repo.join("pipelines/micro-single-task/spec.yaml").into(),
            addr: "127.0.0.1:0".parse().unwrap(),
            port_file: Some(port_file.clone()),
            log: None,
            time_scale,
            seed: 0,
        };
        let cases = [
            (args(&bad_profiles, &sample, None), "providers.x"),
            (args(&good_profiles, &sample, Some(f64::NAN)), "--time-scale"),
            (args(&good_profiles, &sample, Some(-1.0)), "--time-scale"),
            // Not a dataset: the contract's loader lists what is missing.
            (args(&good_profiles, dir.path(), None), "manifest.json"),
        ];
        for (a, want) in cases {
            let err = run(a).unwrap_err();
            assert_eq!(exit_for(&err), Exit::BadInput, "{err:#}");
            assert!(format!("{err:#}").contains(want), "{err:#}");
            assert!(!port_file.exists());
        }
        // A spec that is not there is bad input, as in every stage.
        let mut a = args(&good_profiles, &sample, None);
        a.spec = dir.path().join("missing.yaml").into();
        assert_eq!(exit_for(&run(a).unwrap_err()), Exit::BadInput);
    }
}
