//! Issue 9's targets, measured on this machine:
//!
//! 1. the offline rescore (reconstruct → evaluate → aggregate → report) of a 6,000-request
//!    run, stage by stage: wall time (best of three) and peak RSS;
//! 2. a run of `BENCH_REQUESTS` requests (default 1,000,000; `0` skips it) of the same shape:
//!    its dataset, selection and schedule made by the real stages, its log by `ib-synth`,
//!    sealed by `ib-synth --seal-only` (the seal `ib-fetch` runs, in a process of its own so
//!    its peak RSS is the seal's alone), then every rescore stage once, with its peak RSS;
//! 3. the bytes per request of each complete run directory (`du -sb`);
//! 4. the rescore of a 6,000-request run on each wire API (issue 35): ten simulated providers
//!    made by `ib-sim generate-fleet --apis <api>` (the same profiles on every API), their
//!    logs written by `ib-synth` in each API's grammar, each stage's best of three, and each
//!    API's total against chat completions'.
//!
//! Every stage runs under `/usr/bin/time` (GNU time: wall and peak RSS of that process) and
//! under an address-space limit (`BENCH_MEM_LIMIT_GIB`, default 6), so a stage that does not
//! stream fails alone, reported with the limit it hit, instead of taking the shared machine's
//! memory. The large run is written under `BENCH_DIR` (default `target/bench`) and deleted
//! once measured unless `BENCH_KEEP=1`; before it is written the free disk is checked
//! against the size the 6,000-request run predicts, and the run is skipped, saying so, when
//! it would not fit.
use inferbench_inputs::spec::Spec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// One measured process.
#[derive(Debug, Clone)]
struct Measured {
    seconds: f64,
    peak_rss_bytes: u64,
    ok: bool,
    /// The last lines of its standard error when it failed.
    failure: Option<String>,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.replace('_', "").parse().ok()).unwrap_or(default)
}

fn mem_limit_kib() -> u64 {
    env_u64("BENCH_MEM_LIMIT_GIB", 6) * 1024 * 1024
}

/// Runs `program args` under GNU time and the memory limit.
fn measure(program: &str, args: &[&str]) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    let times = dir.path().join("time");
    let stderr = dir.path().join("stderr");
    let limit = format!("ulimit -v {} && exec \"$@\"", mem_limit_kib());
    let status = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%e %M")
        .arg("-o")
        .arg(&times)
        .args(["bash", "-c", &limit, "bash", program])
        .args(args)
        .current_dir(REPO)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .status()
        .expect("/usr/bin/time (GNU time) is needed by the benchmark: apt-get install time");
    let text = std::fs::read_to_string(&times).unwrap_or_default();
    // GNU time writes "Command exited with non-zero status N" first when the command fails.
    let last = text.lines().last().unwrap_or_default().to_string();
    let mut fields = last.split_whitespace();
    let seconds = fields.next().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
    let peak_rss_bytes = fields.next().and_then(|s| s.parse::<u64>().ok()).unwrap_or(0) * 1024;
    let failure = (!status.success()).then(|| {
        let err = std::fs::read_to_string(&stderr).unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
    });
    Measured { seconds, peak_rss_bytes, ok: status.success(), failure }
}

/// Runs a stage that must succeed (setup), returning its measurement.
fn setup(program: &str, args: &[&str]) -> Measured {
    let m = measure(program, args);
    assert!(m.ok, "{program} {args:?} failed: {}", m.failure.as_deref().unwrap_or(""));
    m
}

fn du_bytes(dir: &Path) -> u64 {
    let out = Command::new("du").arg("-sb").arg(dir).output().expect("du");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().and_then(|b| b.parse().ok()).unwrap_or(0)
}

fn free_bytes(dir: &Path) -> u64 {
    let out = Command::new("df").args(["-B1", "--output=avail"]).arg(dir).output().expect("df");
    String::from_utf8_lossy(&out.stdout).lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap_or(0)
}

fn mb(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / 1e6)
}

const STAGES: [&str; 4] = ["ib-reconstruct", "ib-evaluate", "ib-aggregate", "ib-report"];

fn bin(name: &str) -> String {
    match name {
        "ib-select" => env!("CARGO_BIN_EXE_ib-select"),
        "ib-schedule" => env!("CARGO_BIN_EXE_ib-schedule"),
        "ib-synth" => env!("CARGO_BIN_EXE_ib-synth"),
        "ib-data" => env!("CARGO_BIN_EXE_ib-data"),
        "ib-reconstruct" => env!("CARGO_BIN_EXE_ib-reconstruct"),
        "ib-evaluate" => env!("CARGO_BIN_EXE_ib-evaluate"),
        "ib-aggregate" => env!("CARGO_BIN_EXE_ib-aggregate"),
        "ib-report" => env!("CARGO_BIN_EXE_ib-report"),
        "ib-sim" => env!("CARGO_BIN_EXE_ib-sim"),
        other => panic!("no binary {other}"),
    }
    .to_string()
}

/// The arguments of a rescore stage on `run` with `spec` (and `dataset` for evaluate).
fn stage_args<'a>(stage: &str, run: &'a str, spec: &'a str, dataset: &'a str) -> Vec<&'a str> {
    match stage {
        "ib-reconstruct" => vec!["--run", run],
        "ib-evaluate" => vec!["--run", run, "--spec", spec, "--dataset", dataset],
        _ => vec!["--run", run, "--spec", spec],
    }
}

/// A prepared run: selected, scheduled and its log written and sealed.
struct Prepared {
    requests: u64,
    synth: Measured,
    seal: Measured,
    log_bytes: u64,
}

fn prepare(run: &Path, spec: &str, dataset: &str) -> Prepared {
    let r = run.to_str().unwrap();
    setup(&bin("ib-select"), &["--run", r, "--spec", spec, "--dataset", dataset]);
    setup(&bin("ib-schedule"), &["--run", r, "--spec", spec]);
    let synth = setup(&bin("ib-synth"), &["--run", r, "--spec", spec, "--dataset", dataset, "--no-seal"]);
    let log_bytes = du_bytes(&run.join("events"));
    let seal = measure(&bin("ib-synth"), &["--run", r, "--seal-only"]);
    let requests = schedule_rows(run);
    Prepared { requests, synth, seal, log_bytes }
}

fn schedule_rows(run: &Path) -> u64 {
    let table =
        inferbench_store::parquet_io::read::<inferbench_contract::tables::ScheduleRow>(&run.join("schedule.parquet"))
            .unwrap();
    table.rows.len() as u64
}

fn rss(m: &Measured) -> String {
    format!("{} MB", mb(m.peak_rss_bytes))
}

fn cell(m: &Measured) -> String {
    if m.ok {
        format!("{:.2} s | {}", m.seconds, rss(m))
    } else {
        let limit = env_u64("BENCH_MEM_LIMIT_GIB", 6);
        format!(
            "failed after {:.1} s (limit {limit} GiB of address space): {} | {}",
            m.seconds,
            m.failure.as_deref().unwrap_or("").replace('|', "/"),
            rss(m)
        )
    }
}

/// The four rescore stages on `run`, each `reps` times (best wall, largest peak RSS); stops
/// at the first failure.
fn rescore(run: &Path, spec: &str, dataset: &str, reps: usize) -> Vec<(&'static str, Measured)> {
    let r = run.to_str().unwrap();
    let mut out = Vec::new();
    for stage in STAGES {
        let args = stage_args(stage, r, spec, dataset);
        let runs: Vec<Measured> = (0..reps).map(|_| measure(&bin(stage), &args)).collect();
        let failed = runs.iter().find(|m| !m.ok).cloned();
        let best = failed.clone().unwrap_or_else(|| {
            let mut best = runs.iter().min_by(|a, b| a.seconds.total_cmp(&b.seconds)).unwrap().clone();
            best.peak_rss_bytes = runs.iter().map(|m| m.peak_rss_bytes).max().unwrap_or(0);
            best
        });
        out.push((stage, best));
        if failed.is_some() {
            break;
        }
    }
    out
}

fn print_rescore(title: &str, prepared: &Prepared, stages: &[(&str, Measured)], run: &Path) {
    println!("| {title} | wall | peak RSS |");
    println!("|---|---|---|");
    println!(
        "| `ib-synth` (log of {} requests, {} MB of JSONL) | {} |",
        prepared.requests,
        mb(prepared.log_bytes),
        cell(&prepared.synth)
    );
    println!("| seal (`sealed::seal`, as `ib-fetch` runs it; `ib-synth --seal-only`) | {} |", cell(&prepared.seal));
    for (stage, m) in stages {
        println!("| `{stage}` | {} |", cell(m));
    }
    let complete = stages.len() == STAGES.len() && stages.iter().all(|(_, m)| m.ok) && prepared.seal.ok;
    if complete {
        let total: f64 = stages.iter().map(|(_, m)| m.seconds).sum();
        let peak =
            stages.iter().map(|(_, m)| m.peak_rss_bytes).chain([prepared.seal.peak_rss_bytes]).max().unwrap_or(0);
        println!("| **rescore total** (reconstruct → report) | **{total:.2} s** | {} MB (largest) |", mb(peak));
        let bytes = du_bytes(run);
        println!(
            "| run directory (`du -sb`, complete and sealed) | {} MB | {:.0} B per request |",
            mb(bytes),
            bytes as f64 / prepared.requests as f64
        );
    } else {
        println!("| **rescore total** | not measured: a stage failed | |");
        println!("| run directory | {} MB so far | |", mb(du_bytes(run)));
    }
    println!();
}

/// The spec of a run with `per_family` items per family (every count the spec states scaled
/// to it, the dataset at `dataset`), beside copies of the workflow's provider table, profiles
/// and prompts.
fn scaled_pipeline(dir: &Path, per_family: u64, dataset: &Path) -> PathBuf {
    let source = Path::new(REPO).join("pipelines/micro-single-task");
    std::fs::create_dir_all(dir.join("prompts")).unwrap();
    for name in ["providers.yaml", "sim-profiles.yaml"] {
        std::fs::copy(source.join(name), dir.join(name)).unwrap();
    }
    for entry in std::fs::read_dir(source.join("prompts")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join("prompts").join(entry.file_name())).unwrap();
    }
    let original = Spec::load(&source.join("spec.yaml")).unwrap();
    let providers = inferbench_inputs::providers::ProviderTable::of_spec(&original).unwrap().providers.len() as u64;
    let families = original.families.len() as u64;
    let text = std::fs::read_to_string(source.join("spec.yaml")).unwrap();
    let rounds = per_family * families;
    let scaled: Vec<String> = text
        .lines()
        .map(|line| {
            let indent = line.len() - line.trim_start().len();
            let key = line.trim_start().split(':').next().unwrap_or("");
            let value = match (indent, key) {
                (2, "available_items" | "selected_items") => rounds.to_string(),
                (6, "available_items" | "selected_items") => per_family.to_string(),
                (_, "selected_items_per_task_family") => per_family.to_string(),
                (_, "requests_per_provider" | "question_rounds") => rounds.to_string(),
                (_, "total_provider_requests") => (rounds * providers).to_string(),
                (2, "source") => dataset.display().to_string(),
                (2, "manifest") => dataset.join("manifest.json").display().to_string(),
                _ => return line.to_string(),
            };
            format!("{}{key}: {value}", " ".repeat(indent))
        })
        .collect();
    let spec = dir.join("spec.yaml");
    std::fs::write(&spec, scaled.join("\n") + "\n").unwrap();
    let check = Spec::load(&spec).unwrap();
    assert_eq!(check.selected_per_family as u64, per_family, "the scaled spec selects {per_family} per family");
    spec
}

/// The rescore of a 6,000-request run on each wire API, side by side (issue 35's target: each
/// within 1.5× of chat completions').
fn rescore_on_every_api(dataset: &str) {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("{REPO}/pipelines/micro-single-task/spec.yaml");
    let mut rows = Vec::new();
    for api in ["chat-completions", "responses", "messages"] {
        let fleet = dir.path().join(format!("fleet-{api}"));
        let f = fleet.to_str().unwrap();
        setup(&bin("ib-sim"), &["generate-fleet", "--providers", "10", "--apis", api, "--spec", &source, "--out", f]);
        let spec = fleet.join("spec.yaml");
        let spec = spec.to_str().unwrap();
        let run = dir.path().join(format!("run-{api}"));
        let r = run.to_str().unwrap();
        setup(&bin("ib-select"), &["--run", r, "--spec", spec, "--dataset", dataset]);
        setup(&bin("ib-schedule"), &["--run", r, "--spec", spec]);
        let profiles = fleet.join("sim-profiles.yaml");
        let synth_args = ["--run", r, "--spec", spec, "--dataset", dataset, "--profiles", profiles.to_str().unwrap()];
        setup(&bin("ib-synth"), &[&synth_args[..], &["--no-seal"]].concat());
        let requests = schedule_rows(&run);
        let log_bytes = du_bytes(&run.join("events"));
        setup(&bin("ib-synth"), &["--run", r, "--seal-only"]);
        let stages = rescore(&run, spec, dataset, 3);
        rows.push((api, requests, log_bytes, stages));
    }
    println!("| 6,000-request run on each wire API (target: rescore within 1.5× of chat) | log (JSONL, before the seal) | reconstruct | evaluate | aggregate | report | rescore total | × chat |");
    println!("|---|---|---|---|---|---|---|---|");
    let total = |stages: &[(&str, Measured)]| -> Option<f64> {
        (stages.len() == STAGES.len() && stages.iter().all(|(_, m)| m.ok))
            .then(|| stages.iter().map(|(_, m)| m.seconds).sum())
    };
    let chat = total(&rows[0].3);
    for (api, requests, log_bytes, stages) in &rows {
        let cells: Vec<String> =
            stages.iter().map(|(_, m)| if m.ok { format!("{:.2} s", m.seconds) } else { cell(m) }).collect();
        let sum = total(stages);
        let ratio = match (sum, chat) {
            (Some(t), Some(c)) if c > 0.0 => format!("{:.2}", t / c),
            _ => "n/a".to_string(),
        };
        println!(
            "| `{api}` ({requests} requests) | {} MB ({:.0} B per request) | {} | {} | {ratio} |",
            mb(*log_bytes),
            *log_bytes as f64 / *requests as f64,
            cells.join(" | "),
            sum.map_or("n/a".to_string(), |t| format!("**{t:.2} s**")),
        );
    }
    println!();
}

pub fn run() {
    // 1. 6,000 requests: the reference benchmark's full run, on the bundled spec and dataset.
    let spec6k = format!("{REPO}/pipelines/micro-single-task/spec.yaml");
    let data6k = format!("{REPO}/data/micro-single-task");
    let small = tempfile::tempdir().unwrap();
    let run6k = small.path().join("run-6k");
    let prepared = prepare(&run6k, &spec6k, &data6k);
    let stages = rescore(&run6k, &spec6k, &data6k, 3);
    print_rescore(
        "6,000-request run (target 1: rescore ≤ 0.8 s; target 3: ≤ 6 KB per request)",
        &prepared,
        &stages,
        &run6k,
    );
    let bytes_per_request_6k = prepared.log_bytes as f64 / prepared.requests as f64;
    drop(small);
    rescore_on_every_api(&data6k);

    // 2. The large run.
    let requests = env_u64("BENCH_REQUESTS", 1_000_000);
    if requests == 0 {
        println!("(BENCH_REQUESTS=0: the large run is skipped)");
        return;
    }
    let providers = 10;
    let rounds = requests.div_ceil(providers);
    let per_family = rounds.div_ceil(3);
    let base = std::env::var("BENCH_DIR").map(PathBuf::from).unwrap_or_else(|_| Path::new(REPO).join("target/bench"));
    std::fs::create_dir_all(&base).unwrap();
    let dataset = base.join(format!("data-{per_family}"));
    let pipeline = base.join(format!("pipeline-{per_family}"));
    let spec = scaled_pipeline(&pipeline, per_family, &dataset);
    let spec_s = spec.to_str().unwrap().to_string();
    let data_s = dataset.to_str().unwrap().to_string();
    // ib-data is deterministic: a dataset made once for this size is kept for the next bench
    // (the marker is written only after ib-data succeeded and its loader check passed).
    let marker = base.join(format!("data-{per_family}.complete"));
    let data_gen = if marker.exists() {
        None
    } else {
        let m = setup(&bin("ib-data"), &["generate", "--spec", &spec_s, "--out", &data_s]);
        std::fs::write(&marker, b"").unwrap();
        Some(m)
    };
    let run = base.join(format!("run-{requests}"));
    if run.exists() {
        std::fs::remove_dir_all(&run).unwrap();
    }
    let expected = (bytes_per_request_6k * (per_family * 3 * providers) as f64) as u64;
    let free = free_bytes(&base);
    // The log, its sealed copy and the tables: the 6,000-request run's log size per request,
    // with room for what the seal and the stages write beside it.
    let needed = expected + expected / 2;
    if free < needed {
        println!(
            "| {requests}-request run | skipped: its log needs ~{} GB and the run ~{} GB; {} GB are free on {} |",
            mb(expected / 1000),
            mb(needed / 1000),
            mb(free / 1000),
            base.display()
        );
        return;
    }
    let r = run.to_str().unwrap().to_string();
    let started = Instant::now();
    let select = setup(&bin("ib-select"), &["--run", &r, "--spec", &spec_s, "--dataset", &data_s]);
    let schedule = setup(&bin("ib-schedule"), &["--run", &r, "--spec", &spec_s]);
    let synth = setup(&bin("ib-synth"), &["--run", &r, "--spec", &spec_s, "--dataset", &data_s, "--no-seal"]);
    let log_bytes = du_bytes(&run.join("events"));
    let seal = measure(&bin("ib-synth"), &["--run", &r, "--seal-only"]);
    let prepared = Prepared { requests: schedule_rows(&run), synth, seal, log_bytes };
    // Measured even when the seal failed: a reader of the log may still stream the unsealed
    // segments, and which stages do not is the point of the table.
    let stages = rescore(&run, &spec_s, &data_s, 1);
    println!("| setup of the {}-request run | wall | peak RSS |", prepared.requests);
    println!("|---|---|---|");
    match &data_gen {
        Some(m) => println!("| `ib-data generate` ({per_family} items per family) | {} |", cell(m)),
        None => println!("| `ib-data generate` ({per_family} items per family) | kept from an earlier bench | |"),
    }
    println!("| `ib-select` | {} |", cell(&select));
    println!("| `ib-schedule` | {} |", cell(&schedule));
    println!();
    print_rescore(
        &format!(
            "{}-request run (target 2: rescore ≤ 300 s, every stage ≤ 2 GiB, the seal included)",
            prepared.requests
        ),
        &prepared,
        &stages,
        &run,
    );
    println!("(the large run took {:.0} s in all)", started.elapsed().as_secs_f64());
    if std::env::var("BENCH_KEEP").as_deref() != Ok("1") {
        std::fs::remove_dir_all(&run).unwrap();
    }
}
