//! `cargo bench --bench load`: how fast, how punctually and at what cost one `ib-fetch` sends
//! an open-loop load, the client and `ib-sim` sharing the machine (issues 24 and 34).
//!
//! One simulated provider at zero latency (`ib-sim generate-fleet --zero-latency`: every delay
//! of its profile is zero, so a request costs only what the client and the simulator spend on
//! it), answering with the dataset's short JSON one token per SSE event and no usage chunk:
//! the stream `make bench-peers` gives every tool (about 36 events and 6 KB per request). For
//! each arrival process of `IB_LOAD_ARRIVALS` (default `poisson,constant`) and each rate of
//! `IB_LOAD_RATES` (requests per second, default `500,1000,2000,3000`), one load spec of one
//! step of `IB_LOAD_SECONDS` (default 10) and one run of the real `ib-select`, `ib-schedule`
//! and `ib-fetch`, so that the fetch's whole-process figures belong to that step alone: its CPU
//! time (user + system, start-up and the seal of its log included) and peak resident memory,
//! from GNU time (`/usr/bin/time`, Debian's `time`) as a peer tool's are measured. The rest
//! comes from the run's event log: the requests sent, the achieved rate over the step (sends
//! between its first and its last due time), the send lag (actual minus intended send time)
//! p50, p99 and maximum, every request's outcome, the peak in flight and the fetch's own CPU
//! accounting of the step (`step_closed`) and its peak resident memory while it sent (recorded
//! as its segment closed, before the seal). The run prints a Markdown table, then, for each
//! arrival process run at several rates, the memory an open stream adds: the growth of the peak
//! resident memory while sending over the growth of the peak in flight, between its runs with
//! the fewest and the most streams open (the process's base drops out of the difference).
//!
//! `IB_LOAD_API=responses` (or `messages`) calls the provider through that wire API instead of
//! chat completions (`generate-fleet --apis`): the same answers, in that API's grammar, whose
//! events carry several times the bytes of a chat chunk.
//!
//! `IB_LOAD_TIME_SCALE=F` serves the generated fleet's profile (a first token after about
//! 300 ms, 200 tokens/s) with its delays times F instead of at zero latency: a slow provider, so
//! that many streams are open at once (at 500 requests a second and F = 20, several thousand;
//! `IB_LOAD_RATES=250,500` gives the memory per open stream).
//!
//! `IB_LOAD_PROFILE=<arrivals>:<rate>` (e.g. `poisson:2000`) also records that run's fetch
//! with `perf record` (Debian's linux-perf; a CPU-clock sample 4,999 times a second on each
//! thread) and prints where its CPU went: by thread (the sender's runtime, the log's writer,
//! the background syncs, the seal's workers) and, on the runtime's thread, by what the sampled
//! function belongs to (see [`category`]). `perf.data` is kept under `target/bench/load-profile/`.
use inferbench_contract::event::{Event, Outcome};
use inferbench_store::event_log::LogReader;
use inferbench_store::run::RunDir;
use inferbench_testkit::fleet_run::percentile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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
    let arrivals = std::env::var("IB_LOAD_ARRIVALS").unwrap_or_else(|_| "poisson,constant".into());
    let seconds: f64 = std::env::var("IB_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let profile = std::env::var("IB_LOAD_PROFILE").ok();
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
    let api = std::env::var("IB_LOAD_API").unwrap_or_else(|_| "chat-completions".into());
    generate.args(["--apis", &api]);
    ok(&mut generate);
    // The peers' stream: no usage chunk (one token per event is the profile's default).
    let profiles = fleet.join("sim-profiles.yaml");
    let text = std::fs::read_to_string(&profiles).unwrap();
    std::fs::write(&profiles, text + "    usage_chunk: never\n").unwrap();
    let base_spec = std::fs::read_to_string(fleet.join("spec.yaml")).unwrap();
    let dataset = repo.join("data/micro-single-task");
    let url_file = dir.path().join("sim-url");
    let mut sim = Command::new(env!("CARGO_BIN_EXE_ib-sim"))
        .arg("--profiles")
        .arg(&profiles)
        .arg("--spec")
        .arg(fleet.join("spec.yaml"))
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
    let gnu_time = Path::new("/usr/bin/time").exists();
    if !gnu_time {
        println!("GNU time (/usr/bin/time, Debian's `time`) is absent: no whole-process figures.");
    }
    println!("\nwire API: {api}");
    println!(
        "\n| arrivals | target req/s | sent | completed | achieved req/s | lag p50 µs | lag p99 µs | lag max µs | \
         peak in flight | step CPU s / 1,000 req | whole-process CPU s / 1,000 req | peak RSS MiB | \
         peak RSS sending MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    // Each arrival process's (peak in flight, peak RSS while sending) per rate.
    let mut memory: BTreeMap<String, Vec<(u64, u64)>> = BTreeMap::new();
    let mut profiled = None;
    for process in arrivals.split(',') {
        for rate in rates.split(',') {
            let name = format!("{process}-{rate}");
            // Beside the fleet's spec: the provider table is named relative to it.
            let spec = fleet.join(format!("spec-{name}.yaml"));
            std::fs::write(&spec, with_load(&base_spec, process, rate, seconds)).unwrap();
            let run = dir.path().join(format!("run-{name}"));
            let stage = |bin: &str| {
                let mut cmd = Command::new(bin);
                cmd.arg("--run").arg(&run).arg("--spec").arg(&spec);
                cmd
            };
            ok(stage(env!("CARGO_BIN_EXE_ib-select")).arg("--dataset").arg(&dataset).args(["--per-family", "200"]));
            ok(&mut stage(env!("CARGO_BIN_EXE_ib-schedule")));
            let times = dir.path().join(format!("time-{name}"));
            let perf_data = (profile.as_deref() == Some(&format!("{process}:{rate}"))).then(|| {
                let out = repo.join("target/bench/load-profile");
                std::fs::create_dir_all(&out).unwrap();
                out.join("perf.data")
            });
            let mut fetch = outside(gnu_time.then_some(&times), perf_data.as_deref());
            fetch.arg(env!("CARGO_BIN_EXE_ib-fetch")).arg("--run").arg(&run).arg("--spec").arg(&spec);
            ok(fetch.arg("--dataset").arg(&dataset).arg("--endpoint-base").arg(&url));
            let (steps, sending_rss) = read_steps(&RunDir::new(&run));
            let step = steps.values().next().expect("one step");
            let whole = gnu_time.then(|| std::fs::read_to_string(&times).unwrap());
            print_row(process, rate, step, whole.as_deref(), sending_rss);
            if let Some(rss) = sending_rss {
                memory.entry(process.to_string()).or_default().push((step.peak, rss));
            }
            profiled = profiled.or(perf_data);
            // Each run's log is read; the next one needs the room.
            let _ = std::fs::remove_dir_all(&run);
        }
    }
    let _ = sim.kill();
    let _ = sim.wait();
    print_memory_per_stream(&memory);
    if let Some(data) = profiled {
        print_profile(&data);
    } else if let Some(wanted) = profile {
        println!("\nIB_LOAD_PROFILE={wanted} names no run of this benchmark (arrivals:rate)");
    }
}

/// The fleet's spec with a load section of one step at `rate` with `arrivals`.
fn with_load(spec: &str, arrivals: &str, rate: &str, seconds: f64) -> String {
    let start = spec.find("execution_plan:\n").expect("an execution plan");
    let end = start + spec[start..].find("\nstream_timing:").expect("stream_timing after it");
    let load = format!(
        "load:\n  mode: open_loop\n  arrivals: {arrivals}\n  rates: [{rate}]\n  step_seconds: {seconds}\n  \
         objectives: {{correct: false}}\n"
    );
    format!("{}{load}{}", &spec[..start], &spec[end + 1..])
}

/// A command that runs the next arguments under GNU time (writing `%e %U %S %M` to `times`)
/// and `perf record` (to `perf_data`), each when given.
fn outside(times: Option<&PathBuf>, perf_data: Option<&Path>) -> Command {
    let mut words: Vec<std::ffi::OsString> = Vec::new();
    if let Some(times) = times {
        words.extend(["/usr/bin/time".into(), "-f".into(), "%e %U %S %M".into(), "-o".into(), times.into()]);
    }
    if let Some(data) = perf_data {
        words.extend(["perf".into(), "record".into(), "-q".into(), "-e".into(), "cpu-clock".into()]);
        words.extend(["-F".into(), "4999".into(), "-o".into(), data.into(), "--".into()]);
    }
    let mut cmd = Command::new(words.first().cloned().unwrap_or_else(|| "env".into()));
    cmd.args(words.iter().skip(1));
    cmd
}

fn print_row(arrivals: &str, rate: &str, step: &Step, whole: Option<&str>, sending_rss: Option<u64>) {
    let span = |times: &[u64]| match (times.iter().min(), times.iter().max()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
        _ => f64::NAN,
    };
    // Sends over the time they were due across: a client that falls behind stretches it.
    let achieved = (step.sent.saturating_sub(1)) as f64 / span(&step.sends_ns).max(span(&step.intended_ns));
    let per_1000 = step.sent.max(1) as f64 / 1000.0;
    let (cpu, rss) =
        match whole.map(|w| w.split_whitespace().map(|v| v.parse::<f64>().unwrap_or(f64::NAN)).collect::<Vec<_>>()) {
            Some(v) if v.len() >= 4 => (format!("{:.3}", (v[1] + v[2]) / per_1000), format!("{:.0}", v[3] / 1024.0)),
            _ => ("–".into(), "–".into()),
        };
    println!(
        "| {arrivals} | {rate} | {} | {} | {achieved:.1} | {} | {} | {} | {} | {:.3} | {cpu} | {rss} | {} |",
        step.sent,
        step.completed,
        percentile(&step.lags_ns, 50) / 1000,
        percentile(&step.lags_ns, 99) / 1000,
        step.lags_ns.iter().max().copied().unwrap_or(0) / 1000,
        step.peak,
        step.cpu_ns as f64 / 1e9 / per_1000,
        sending_rss.map_or("–".into(), |b| format!("{:.0}", b as f64 / (1 << 20) as f64)),
    );
}

/// The memory an open stream adds: between the runs of one arrival process with the fewest and
/// the most streams in flight at once, the growth of the peak resident memory while sending
/// over the growth of the peak in flight. A difference, so the process's base (its runtime,
/// the tokenizer's tables, the log's buffers) drops out; the seal, which runs after the last
/// send, is not in it.
fn print_memory_per_stream(memory: &BTreeMap<String, Vec<(u64, u64)>>) {
    for (process, runs) in memory {
        let (Some(low), Some(high)) = (runs.iter().min(), runs.iter().max()) else { continue };
        if high.0 <= low.0 {
            continue;
        }
        let per_stream = (high.1 as f64 - low.1 as f64) / (high.0 - low.0) as f64 / 1024.0;
        println!(
            "\n{process}: {per_stream:.1} KiB of resident memory per open stream (peak RSS while sending \
             {:.0} → {:.0} MiB as the peak in flight went {} → {})",
            low.1 as f64 / (1 << 20) as f64,
            high.1 as f64 / (1 << 20) as f64,
            low.0,
            high.0
        );
    }
}

/// Each step's figures, and the fetch's peak resident memory while it sent (recorded as each
/// segment closed, before the seal), from the log.
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

/// What `perf report` says of the profiled fetch: the share of its CPU samples per thread, then
/// the runtime thread's by [`category`].
fn print_profile(data: &Path) {
    let report = Command::new("perf")
        .args(["report", "--stdio", "--no-children", "--sort", "comm,sym", "-q", "--percent-limit", "0", "-i"])
        .arg(data)
        .output();
    let Some(report) = report.ok().filter(|r| r.status.success()) else {
        println!("\n`perf report` failed on {}: no profile", data.display());
        return;
    };
    let mut threads: BTreeMap<String, f64> = BTreeMap::new();
    let mut runtime: BTreeMap<&str, f64> = BTreeMap::new();
    for line in String::from_utf8_lossy(&report.stdout).lines() {
        let mut words = line.split_whitespace();
        let (Some(share), Some(thread), Some(space)) = (words.next(), words.next(), words.next()) else { continue };
        let Ok(share) = share.trim_end_matches('%').parse::<f64>() else { continue };
        let symbol = words.collect::<Vec<_>>().join(" ");
        *threads.entry(thread.to_string()).or_default() += share;
        if thread == "ib-fetch" {
            *runtime.entry(category(space == "[k]", &symbol)).or_default() += share;
        }
    }
    println!("\nWhere ib-fetch's CPU went ({}): share of all samples, by thread", data.display());
    println!("\n| thread | share |\n|---|---|");
    let mut by_share: Vec<_> = threads.into_iter().collect();
    by_share.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (thread, share) in by_share {
        println!("| {thread} | {share:.1}% |");
    }
    println!("\nThe runtime's thread (`ib-fetch`: sending, receiving, judging, recording), by what it ran\n");
    println!("| what | share of all samples |\n|---|---|");
    let mut by_share: Vec<_> = runtime.into_iter().collect();
    by_share.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (what, share) in by_share {
        println!("| {what} | {share:.1}% |");
    }
}

/// What a sampled function of the runtime's thread belongs to, by its name: the self time of
/// a leaf, so a `memcpy` counts as allocation and copies whoever called it, and the kernel's
/// time (system calls, the network stack, page faults) is one line.
fn category(kernel: bool, symbol: &str) -> &'static str {
    let has = |parts: &[&str]| parts.iter().any(|p| symbol.contains(p));
    if kernel {
        "kernel: system calls, network stack, faults"
    } else if has(&["malloc", "free", "realloc", "memcpy", "memmove", "memset", "alloc::", "drop_in_place"]) {
        "allocation, copies and drops"
    } else if has(&["inferbench_judge::stream", "chunk::", "Chunk", "lenient_json", "serde_json::de", "Payload"]) {
        "judging: parsing each event's JSON and its verdict"
    } else if has(&["inferbench_judge::sse", "hyper::", "http::", "httparse", "bytes::", "h2::"]) {
        "HTTP and SSE framing"
    } else if has(&[
        "segment_writer",
        "serde_json::ser",
        "write_behind",
        "log::",
        "Recorder",
        "redact",
        "credentials",
        "guard",
    ]) {
        "recording: redaction, serialising lines, handing them to the writer"
    } else if has(&["tokio::", "mio::", "futures", "parking_lot", "std::sync"]) {
        "runtime: tasks, timers, readiness"
    } else if has(&["rustls", "ring::", "aws_lc"]) {
        "TLS"
    } else {
        "other"
    }
}
