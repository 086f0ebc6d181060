//! `ib-sim`: simulated OpenAI-compatible streaming providers on loopback.
//!
//! Each provider of the profile file is served at `POST /{slug}/v1/chat/completions` with its
//! own latency and speed distributions, reasoning, chunking, accuracy and faults; answers come
//! from the dataset's gold. With `--log`, every request's draws and the send time of each
//! answer event are appended as one JSON line: the ground truth for checking a client.
mod answer;
mod dataset;
mod draw;
mod profile;
mod rng;
mod server;
mod stream;

#[cfg(test)]
mod calibration;

use anyhow::Context;
use clap::Parser;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Simulated OpenAI-compatible streaming providers for inferbench.
#[derive(Debug, Parser)]
#[command(name = "ib-sim", version)]
struct Args {
    /// Provider profiles (YAML).
    #[arg(long, value_name = "FILE")]
    profiles: PathBuf,
    /// Dataset directory in the reference format (the three <family>.jsonl files).
    #[arg(long, value_name = "DIR")]
    dataset: PathBuf,
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

/// Exit codes, as in `inferbench_schemas::cli`: 1 failure, 2 usage (clap), 3 bad input.
const EXIT_FAILED: u8 = 1;
const EXIT_BAD_INPUT: u8 = 3;

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("ib-sim: {err:#}");
            let bad_input = err
                .chain()
                .any(|c| c.is::<profile::ProfileError>() || c.is::<dataset::DatasetError>() || c.is::<BadTimeScale>());
            ExitCode::from(if bad_input { EXIT_BAD_INPUT } else { EXIT_FAILED })
        }
    }
}

#[derive(Debug)]
struct BadTimeScale(f64);

impl std::fmt::Display for BadTimeScale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--time-scale: must be a finite number >= 0, got {}", self.0)
    }
}

impl std::error::Error for BadTimeScale {}

fn run(args: Args) -> anyhow::Result<()> {
    // All inputs are validated before binding, so a bad file never leaves a half-started
    // server or a stale port file behind.
    let profiles = profile::Profiles::load(&args.profiles)?;
    let time_scale = args.time_scale.unwrap_or(profiles.time_scale);
    if !(time_scale.is_finite() && time_scale >= 0.0) {
        return Err(BadTimeScale(time_scale).into());
    }
    let dataset = dataset::Dataset::load(&args.dataset)?;
    if !dataset.shadowed.is_empty() {
        eprintln!(
            "ib-sim: {} item(s) repeat an earlier item's user prompt and are answered as that item (first: {})",
            dataset.shadowed.len(),
            dataset.shadowed[0]
        );
    }
    let log = match &args.log {
        Some(path) => Some(
            server::RequestLog::open(path.clone()).with_context(|| format!("{}: cannot open log", path.display()))?,
        ),
        None => None,
    };
    let app = Arc::new(server::App::new(profiles, dataset, time_scale, args.seed, log));

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(args.addr).await.with_context(|| format!("cannot bind {}", args.addr))?;
        let url = format!("http://{}", listener.local_addr()?);
        if let Some(path) = &args.port_file {
            write_atomically(path, &format!("{url}\n")).with_context(|| format!("{}: cannot write", path.display()))?;
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

/// Temporary file in the same directory, fsync, rename: a reader never sees half a URL.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_parses_all_flags() {
        let a = Args::try_parse_from([
            "ib-sim",
            "--profiles",
            "p.yaml",
            "--dataset",
            "d",
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
        assert_eq!((a.addr.port(), a.time_scale, a.seed), (8080, Some(0.5), 9));
        let a = Args::try_parse_from(["ib-sim", "--profiles", "p.yaml", "--dataset", "d"]).unwrap();
        assert_eq!((a.addr.to_string().as_str(), a.time_scale, a.seed), ("127.0.0.1:0", None, 0));
        assert!(Args::try_parse_from(["ib-sim", "--dataset", "d"]).is_err());
    }

    #[test]
    fn bad_inputs_map_to_exit_3_before_binding() {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("url");
        let args = |profiles: &Path| Args {
            profiles: profiles.to_path_buf(),
            dataset: dir.path().to_path_buf(),
            addr: "127.0.0.1:0".parse().unwrap(),
            port_file: Some(port_file.clone()),
            log: None,
            time_scale: None,
            seed: 0,
        };
        let p = dir.path().join("p.yaml");
        std::fs::write(&p, "providers: {x: {model: m}}\n").unwrap();
        let err = run(args(&p)).unwrap_err();
        assert!(err.chain().any(|c| c.is::<profile::ProfileError>()), "{err:#}");
        assert!(!port_file.exists());
    }

    #[test]
    fn port_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("url");
        write_atomically(&path, "http://127.0.0.1:1\n").unwrap();
        write_atomically(&path, "http://127.0.0.1:2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "http://127.0.0.1:2\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
