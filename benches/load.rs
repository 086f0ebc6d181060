//! `cargo bench --bench load`: how fast and how punctually one `ib-fetch` sends an open-loop
//! load, the client and `ib-sim` sharing the machine (issue 24, target 8).
//!
//! One simulated provider at zero latency (`ib-sim generate-fleet --zero-latency`: every delay
//! of its profile is zero, so a request costs only what the client and the simulator spend on
//! it; answers are the dataset's short JSON, tens of tokens streamed a few to a chunk), a load
//! spec of constant arrivals at each rate of `IB_LOAD_RATES` (requests per second, default
//! `500,1000,2000,3000`) for `IB_LOAD_SECONDS` each (default 10), and the real `ib-select`,
//! `ib-schedule` and `ib-fetch`. The figures come from the run's event log alone: per step, the
//! requests sent, the achieved rate over the step (sends between its first and its last due
//! time), the send lag (actual minus intended send time) p50, p99 and maximum, every request's
//! outcome, the peak in flight and the fetch's CPU time per 1,000 requests (`step_closed`).
//! The run prints a Markdown table, and the fetch's peak resident memory (`segment_closed`) per
//! request in flight at the peak.
//!
//! `IB_LOAD_TIME_SCALE=F` serves the generated fleet's profile (a first token after about
//! 300 ms, 200 tokens/s) with its delays times F instead of at zero latency: a slow provider, so
//! that many streams are open at once (at 2,000 requests a second and F = 20, over 10,000).
use inferbench_contract::event::{Event, Outcome};
use inferbench_store::event_log::LogReader;
use inferbench_store::run::RunDir;
use inferbench_testkit::fleet_run::percentile;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ok(cmd: &mut Command) {
    let out = cmd.output().expect("spawn");
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// One step's figures.
#[derive(Default)]
struct Step {
    sent: u64,
    completed: u64,
    lags_ns: Vec<u64>,
    sends_ns: Vec<u64>,
    intended_ns: Vec<u64>,
    cpu_ns: u64,
    peak: u64,
}

fn main() {
    let rates = std::env::var("IB_LOAD_RATES").unwrap_or_else(|_| "500,1000,2000,3000".into());
    let seconds: f64 = std::env::var("IB_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = dir.path().join("fleet");
    let time_scale: Option<f64> = std::env::var("IB_LOAD_TIME_SCALE").ok().and_then(|s| s.parse().ok());
    let mut generate = Command::new(env!("CARGO_BIN_EXE_ib-sim"));
    generate.args(["generate-fleet", "--providers", "1", "--out"]).arg(&fleet);
    generate.arg("--spec").arg(repo.join("pipelines/micro-single-task/spec.yaml"));
    if time_scale.is_none() {
        generate.arg("--zero-latency");
    }
    ok(&mut generate);
    let spec = fleet.join("spec.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let start = text.find("execution_plan:\n").expect("an execution plan");
    let end = start + text[start..].find("\nstream_timing:").expect("stream_timing after it");
    let load = format!(
        "load:\n  mode: open_loop\n  arrivals: constant\n  rates: [{rates}]\n  step_seconds: {seconds}\n  \
         objectives: {{correct: false}}\n"
    );
    std::fs::write(&spec, format!("{}{load}{}", &text[..start], &text[end + 1..])).unwrap();
    let dataset = repo.join("data/micro-single-task");
    let url_file = dir.path().join("sim-url");
    let mut sim = Command::new(env!("CARGO_BIN_EXE_ib-sim"))
        .arg("--profiles")
        .arg(fleet.join("sim-profiles.yaml"))
        .arg("--spec")
        .arg(&spec)
        .arg("--dataset")
        .arg(&dataset)
        .arg("--port-file")
        .arg(&url_file)
        .args(time_scale.map(|f| ["--time-scale".to_string(), f.to_string()]).into_iter().flatten())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn ib-sim");
    let started = Instant::now();
    while !url_file.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "ib-sim did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = std::fs::read_to_string(&url_file).unwrap().trim().to_string();
    let run = dir.path().join("run");
    let stage = |name: &str| {
        let mut cmd = Command::new(match name {
            "ib-select" => env!("CARGO_BIN_EXE_ib-select"),
            "ib-schedule" => env!("CARGO_BIN_EXE_ib-schedule"),
            _ => env!("CARGO_BIN_EXE_ib-fetch"),
        });
        cmd.arg("--run").arg(&run).arg("--spec").arg(&spec);
        cmd
    };
    ok(stage("ib-select").arg("--dataset").arg(&dataset).args(["--per-family", "200"]));
    ok(&mut stage("ib-schedule"));
    ok(stage("ib-fetch").arg("--dataset").arg(&dataset).arg("--endpoint-base").arg(&url));
    let _ = sim.kill();
    let _ = sim.wait();
    let (steps, peak_rss) = read_steps(&RunDir::new(&run));
    println!("\n| target req/s | sent | completed | achieved req/s | lag p50 µs | lag p99 µs | lag max µs | peak in flight | fetch CPU s / 1,000 req |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (rate, step) in rates.split(',').zip(steps.values()) {
        let span_s = match (step.sends_ns.iter().min(), step.sends_ns.iter().max()) {
            (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
            _ => f64::NAN,
        };
        let due_span_s = match (step.intended_ns.iter().min(), step.intended_ns.iter().max()) {
            (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
            _ => f64::NAN,
        };
        // Sends over the time they were due across: a client that falls behind stretches it.
        let achieved = (step.sent.saturating_sub(1)) as f64 / span_s.max(due_span_s);
        println!(
            "| {rate} | {} | {} | {achieved:.1} | {} | {} | {} | {} | {:.3} |",
            step.sent,
            step.completed,
            percentile(&step.lags_ns, 50) / 1000,
            percentile(&step.lags_ns, 99) / 1000,
            step.lags_ns.iter().max().copied().unwrap_or(0) / 1000,
            step.peak,
            step.cpu_ns as f64 / 1e9 / (step.sent.max(1) as f64 / 1000.0),
        );
    }
    let peak = steps.values().map(|s| s.peak).max().unwrap_or(0);
    if let Some(rss) = peak_rss {
        println!(
            "\nib-fetch peak RSS {:.1} MiB with at most {peak} requests in flight: {:.1} KiB per request in flight at most",
            rss as f64 / (1 << 20) as f64,
            rss as f64 / 1024.0 / peak.max(1) as f64
        );
    }
}

/// Each step's figures, and the fetch's peak resident memory, from the log.
fn read_steps(run: &RunDir) -> (BTreeMap<u32, Step>, Option<u64>) {
    let lock = inferbench_store::lock::read(&run.lock()).expect("lock");
    let mut steps: BTreeMap<u32, Step> = BTreeMap::new();
    let mut step_of: BTreeMap<String, u32> = BTreeMap::new();
    let mut peak_rss = None;
    for entry in LogReader::open(run, &lock.run_id).expect("the log") {
        let env = entry.expect("a line").env;
        match env.event {
            Event::RequestStarted(s) => {
                let step = s.step.expect("a load request has its step");
                let figures = steps.entry(step).or_default();
                figures.sent += 1;
                figures.lags_ns.push(env.t_ns.saturating_sub(s.intended_t_ns));
                figures.sends_ns.push(env.t_ns);
                figures.intended_ns.push(s.intended_t_ns);
                step_of.insert(s.request_id, step);
            }
            Event::RequestTerminal(t) if t.outcome == Outcome::Completed => {
                if let Some(step) = step_of.get(&t.request_id) {
                    steps.entry(*step).or_default().completed += 1;
                }
            }
            Event::SegmentClosed(c) => peak_rss = peak_rss.max(c.peak_rss_bytes),
            Event::StepClosed(c) => {
                let figures = steps.entry(c.step).or_default();
                figures.cpu_ns = c.cpu_ns.unwrap_or(0);
                figures.peak = c.peak_in_flight;
            }
            _ => {}
        }
    }
    (steps, peak_rss)
}
