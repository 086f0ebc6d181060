//! A fetch against a generated fleet of simulated providers, and the round figures of its log.
//! Shared by the e2e test (`fleet.rs`) and `make bench` (`benches/fleet.rs`).
//!
//! The figures, from the event log alone (the facts `ib-fetch` records):
//! - launch skew of a round: its latest minus its earliest send time (`request_started` t_ns),
//!   as `round_closed.launch_skew_ns` records it; recomputed here from the sends and checked
//!   against the record;
//! - gap between two rounds: the next round's earliest send time minus the previous round's
//!   latest terminal outcome (`request_terminal` t_ns): all the client does between the last
//!   answer of one round and the first request of the next (closing the round, logging,
//!   releasing the next one).
//!
//! Percentiles are nearest-rank, as everywhere in inferbench: pK is the sample of 1-based
//! rank ceil(K·n/100) in ascending order.
use inferbench_contract::event::{Envelope, Event, Outcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binaries a fleet run uses.
pub struct Bins {
    pub sim: PathBuf,
    pub select: PathBuf,
    pub schedule: PathBuf,
    pub fetch: PathBuf,
}

/// What one fleet run measured.
pub struct FleetRun {
    pub run: PathBuf,
    pub providers: usize,
    pub fetch_wall: Duration,
    pub figures: Figures,
}

#[derive(Debug, Default)]
pub struct Figures {
    pub rounds: usize,
    pub requests: usize,
    /// Requests whose (last) terminal outcome is `completed`.
    pub completed: usize,
    /// Requests with no terminal outcome at all.
    pub unterminated: usize,
    /// Per round, in order: `round_closed.launch_skew_ns`.
    pub skews_ns: Vec<u64>,
    /// Per round: latest minus earliest `request_started` t_ns.
    pub send_spreads_ns: Vec<u64>,
    /// Between consecutive rounds, in order.
    pub gaps_ns: Vec<u64>,
    /// Per round: how many requests it released.
    pub released: Vec<usize>,
    /// The fetch's peak RSS when it closed its last segment (`segment_closed`), before the seal.
    pub peak_rss_bytes: Option<u64>,
}

/// Nearest-rank percentile `k` of `samples` (any order); 0 for none.
pub fn percentile(samples: &[u64], k: u64) -> u64 {
    if samples.is_empty() {
        return 0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    let rank = (k * n).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

/// The round figures of a log, in log order.
pub fn figures(records: &[Envelope]) -> Figures {
    let mut round_of: BTreeMap<&str, u64> = BTreeMap::new();
    let mut first_send: BTreeMap<u64, u64> = BTreeMap::new();
    let mut last_send: BTreeMap<u64, u64> = BTreeMap::new();
    let mut last_terminal: BTreeMap<u64, u64> = BTreeMap::new();
    let mut outcome: BTreeMap<&str, Outcome> = BTreeMap::new();
    let mut f = Figures::default();
    for env in records {
        match &env.event {
            Event::RoundReleased(r) => f.released.push(r.request_ids.len()),
            Event::RequestStarted(s) => {
                round_of.insert(&s.request_id, s.round_index);
                let first = first_send.entry(s.round_index).or_insert(env.t_ns);
                *first = (*first).min(env.t_ns);
                let last = last_send.entry(s.round_index).or_insert(env.t_ns);
                *last = (*last).max(env.t_ns);
            }
            Event::RequestTerminal(t) => {
                outcome.insert(&t.request_id, t.outcome);
                if let Some(round) = round_of.get(t.request_id.as_str()) {
                    let last = last_terminal.entry(*round).or_insert(env.t_ns);
                    *last = (*last).max(env.t_ns);
                }
            }
            Event::RoundClosed(c) => f.skews_ns.push(c.launch_skew_ns),
            Event::SegmentClosed(c) => f.peak_rss_bytes = f.peak_rss_bytes.max(c.peak_rss_bytes),
            _ => {}
        }
    }
    f.rounds = first_send.len();
    f.requests = round_of.len();
    f.completed = outcome.values().filter(|o| **o == Outcome::Completed).count();
    f.unterminated = round_of.keys().filter(|id| !outcome.contains_key(*id)).count();
    f.send_spreads_ns = first_send.iter().map(|(round, first)| last_send[round] - first).collect();
    let rounds: Vec<u64> = first_send.keys().copied().collect();
    for pair in rounds.windows(2) {
        if let (Some(end), Some(next)) = (last_terminal.get(&pair[0]), first_send.get(&pair[1])) {
            f.gaps_ns.push(next.saturating_sub(*end));
        }
    }
    f
}

/// Kills the simulator when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ok(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed with {:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Generates a fleet of `providers` in `dir`, serves it with one `ib-sim` on port 0, and runs
/// select, schedule and fetch over `per_family` items of each task family of `dataset`.
pub fn run_fleet(
    bins: &Bins,
    repo: &Path,
    dir: &Path,
    dataset: &Path,
    providers: usize,
    per_family: usize,
    zero_latency: bool,
) -> FleetRun {
    let fleet = dir.join(format!("fleet-{providers}"));
    let mut generate = Command::new(&bins.sim);
    generate.arg("generate-fleet").arg("--providers").arg(providers.to_string()).arg("--out").arg(&fleet);
    generate.arg("--spec").arg(repo.join("pipelines/micro-single-task/spec.yaml"));
    if zero_latency {
        generate.arg("--zero-latency");
    }
    ok(&mut generate);
    let spec = fleet.join("spec.yaml");
    let url_file = dir.join(format!("sim-url-{providers}"));
    let _ = std::fs::remove_file(&url_file);
    let sim = Command::new(&bins.sim)
        .arg("--profiles")
        .arg(fleet.join("sim-profiles.yaml"))
        .arg("--spec")
        .arg(&spec)
        .arg("--dataset")
        .arg(dataset)
        .arg("--port-file")
        .arg(&url_file)
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn ib-sim");
    let _sim = Running(sim);
    let started = Instant::now();
    while !url_file.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "ib-sim did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = std::fs::read_to_string(&url_file).unwrap().trim().to_string();
    let run = dir.join(format!("run-{providers}"));
    ok(Command::new(&bins.select)
        .arg("--run")
        .arg(&run)
        .arg("--spec")
        .arg(&spec)
        .arg("--dataset")
        .arg(dataset)
        .arg("--per-family")
        .arg(per_family.to_string()));
    ok(Command::new(&bins.schedule).arg("--run").arg(&run).arg("--spec").arg(&spec));
    let fetch_started = Instant::now();
    ok(Command::new(&bins.fetch)
        .arg("--run")
        .arg(&run)
        .arg("--spec")
        .arg(&spec)
        .arg("--dataset")
        .arg(dataset)
        .arg("--endpoint-base")
        .arg(&url));
    let fetch_wall = fetch_started.elapsed();
    let figures = figures(&read_log(&run));
    FleetRun { run, providers, fetch_wall, figures }
}

/// Every envelope of a run's log, through the checked reader every stage uses.
pub fn read_log(run: &Path) -> Vec<Envelope> {
    let dir = inferbench_store::run::RunDir::new(run);
    let lock = inferbench_store::lock::read(&dir.lock()).expect("the run's lock");
    let segments = inferbench_store::event_log::read(&dir, &lock.run_id).expect("a checked log");
    segments.into_iter().flat_map(|s| s.records).collect()
}

/// Milliseconds with three decimals.
pub fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}
