//! `ib-watch` against live, killed, resumed, finished and imported runs: every snapshot's
//! counts equal what the log says up to the snapshot's `last_seq` (read here independently,
//! line by line, as plain JSON), the finished run's outcome counts and p50s equal
//! `metrics.json`'s and `responses.parquet`'s, and the run directory is never touched. The
//! terminal view is driven in tmux.
use crate::support::{bin, ok, Sim, Workspace};
use inferbench_contract::tables::{ResponseRow, ScheduleRow};
use inferbench_store::parquet_io;
use inferbench_testkit::reference_run as rr;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

fn watch(run: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ib-watch")).arg("--run").arg(run).args(extra).output().expect("spawn ib-watch")
}

/// One `--once --json` snapshot.
fn snapshot(run: &Path, extra: &[&str]) -> Value {
    let out = watch(run, &[&["--once", "--json"], extra].concat());
    assert!(out.status.success(), "ib-watch failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("the snapshot is JSON")
}

/// Name → (size, mtime) of every file and directory under `dir`, hidden ones included.
fn inventory(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::metadata(&path).unwrap();
            out.insert(path.clone(), (meta.len(), meta.modified().unwrap()));
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    out
}

/// Asserts that watching `run` in every mode leaves its files as they were.
fn assert_untouched_by_watch(run: &Path) {
    let before = inventory(run);
    snapshot(run, &[]);
    ok(Command::new(bin_watch()).arg("--run").arg(run).arg("--once"));
    assert_eq!(inventory(run), before, "ib-watch created, removed or modified a file of the run");
}

fn bin_watch() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ib-watch"))
}

/// What the log says up to a seq, read without inferbench's code: complete lines only, as JSON.
#[derive(Debug, Default)]
struct LogCounts {
    /// request id → (provider, logged final outcome).
    finals: BTreeMap<String, (String, String)>,
    interrupted: BTreeMap<String, u64>,
    open: BTreeMap<String, u64>,
    segments: u64,
}

impl LogCounts {
    fn read(run: &Path, upto: Option<u64>) -> LogCounts {
        let mut counts = LogCounts::default();
        let Some(upto) = upto else { return counts };
        let names: Vec<(u32, PathBuf)> = inferbench_store::run::RunDir::new(run).segments().unwrap_or_default();
        let mut provider_of: BTreeMap<(String, u64), String> = BTreeMap::new();
        let mut open: BTreeSet<(String, u64)> = BTreeSet::new();
        for (number, _) in names {
            let bytes = crate::ops::segment_text(run, number).into_bytes();
            let complete = &bytes[..bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)];
            let mut any = false;
            for line in complete.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                let env: Value = serde_json::from_slice(line).unwrap();
                if env["seq"].as_u64().unwrap() > upto {
                    continue;
                }
                any = true;
                let data = &env["data"];
                let key = || (data["request_id"].as_str().unwrap().to_string(), data["attempt"].as_u64().unwrap());
                match env["type"].as_str().unwrap() {
                    "request_started" => {
                        provider_of.insert(key(), data["provider"].as_str().unwrap().to_string());
                        open.insert(key());
                    }
                    "request_terminal" => {
                        open.remove(&key());
                        let Some(provider) = provider_of.get(&key()).cloned() else { continue };
                        let outcome = data["outcome"].as_str().unwrap().to_string();
                        if outcome == "interrupted" {
                            *counts.interrupted.entry(provider).or_default() += 1;
                        } else {
                            counts.finals.insert(key().0, (provider, outcome));
                        }
                    }
                    _ => {}
                }
            }
            counts.segments += u64::from(any);
        }
        for key in open {
            *counts.open.entry(provider_of[&key].clone()).or_default() += 1;
        }
        counts
    }

    fn outcomes(&self, provider: &str) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for (p, outcome) in self.finals.values() {
            if p == provider {
                *out.entry(outcome.clone()).or_default() += 1;
            }
        }
        out
    }
}

/// The outcome counts a snapshot gives a provider, zeros left out.
fn outcomes_of(row: &Value) -> BTreeMap<String, u64> {
    row["outcomes"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn provider_row<'a>(s: &'a Value, provider: &str) -> &'a Value {
    s["providers"].as_array().unwrap().iter().find(|p| p["provider"] == provider).unwrap_or_else(|| {
        panic!("the snapshot has no row for {provider}: {s}");
    })
}

/// Checks a snapshot against the log up to its `last_seq` and against the schedule.
/// `logged_outcomes`: compare the outcomes with the logged terminal outcomes (a log fetched by
/// ib-fetch, whose live verdicts are the replayed ones).
fn check(run: &Path, schedule: &[ScheduleRow], s: &Value, logged_outcomes: bool) -> LogCounts {
    let log = LogCounts::read(run, s["last_seq"].as_u64());
    let mut rounds: BTreeMap<i64, Vec<&str>> = BTreeMap::new();
    for row in schedule {
        rounds.entry(row.round_index).or_default().push(&row.request_id);
    }
    let done = rounds.values().filter(|ids| ids.iter().all(|id| log.finals.contains_key(*id))).count();
    let at = format!("at seq {}", s["last_seq"]);
    assert_eq!(s["totals"]["requests"], schedule.len(), "{at}");
    assert_eq!(s["totals"]["rounds"], rounds.len(), "{at}");
    assert_eq!(s["rounds_done"], done, "{at}: rounds done");
    assert_eq!(s["requests_done"], log.finals.len(), "{at}: requests done");
    assert_eq!(s["open_attempts"], log.open.values().sum::<u64>(), "{at}: open attempts");
    assert_eq!(s["segments"], log.segments, "{at}: segments");
    let providers: BTreeSet<&str> = schedule.iter().map(|r| r.provider.as_str()).collect();
    assert_eq!(s["totals"]["providers"], providers.len());
    for provider in providers {
        let row = provider_row(s, provider);
        let logged = log.outcomes(provider);
        assert_eq!(row["done"], logged.values().sum::<u64>(), "{at}: {provider} done");
        if logged_outcomes {
            assert_eq!(outcomes_of(row), logged, "{at}: {provider} outcomes");
        }
        assert_eq!(row["open_attempts"], log.open.get(provider).copied().unwrap_or(0), "{at}: {provider} open");
        let interrupted = log.interrupted.get(provider).copied().unwrap_or(0);
        assert_eq!(row["interrupted_attempts"], interrupted, "{at}: {provider} interrupted");
        let scheduled = schedule.iter().filter(|r| r.provider == provider).count();
        assert_eq!(row["scheduled"], scheduled, "{at}: {provider} scheduled");
    }
    log
}

fn fetch(ws: &Workspace, sim: &Sim, run: &Path) -> Child {
    ws.stage("ib-fetch", run)
        .args(["--endpoint-base", &sim.url, "--deadline-seconds", "1.0"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Snapshots taken every 50 ms while `fetch` runs, each checked, until `stop` says so (then
/// the fetch is still running) or the fetch exits. Returns the snapshots.
fn follow(run: &Path, schedule: &[ScheduleRow], fetch: &mut Child, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
    let started = Instant::now();
    let mut seen = Vec::new();
    loop {
        let exited = fetch.try_wait().unwrap().is_some();
        let s = snapshot(run, &[]);
        check(run, schedule, &s, true);
        let done = exited || stop(&s);
        seen.push(s);
        if done {
            return seen;
        }
        assert!(started.elapsed() < Duration::from_secs(90), "the fetch took too long");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn watch_follows_a_fetch_through_a_kill_a_resume_and_the_end() {
    let _one_at_a_time = crate::support::timed_section();
    let ws = Workspace::new();
    let sim = Sim::start(&ws);
    let run = ws.run("run-watch");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    let schedule = parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows;

    let s = snapshot(&run, &[]);
    assert_eq!((s["status"].as_str(), s["last_seq"].is_null()), (Some("not_started"), true), "{s}");
    check(&run, &schedule, &s, true);
    assert_untouched_by_watch(&run);

    // A live fetch, stopped by SIGKILL in its third round with requests in flight. Each round
    // takes about a second (one provider stalls to the deadline), so many snapshots fall
    // inside it.
    let mut child = fetch(&ws, &sim, &run);
    let live = follow(&run, &schedule, &mut child, |s| {
        s["rounds_done"].as_u64() >= Some(2) && s["open_attempts"].as_u64() > Some(0)
    });
    assert!(child.try_wait().unwrap().is_none(), "the fetch finished before it could be killed");
    child.kill().unwrap();
    child.wait().unwrap();
    let running: Vec<&Value> = live.iter().filter(|s| s["status"] == "running").collect();
    assert!(running.len() >= 5, "only {} snapshots of the running fetch", running.len());
    assert!(running.iter().all(|s| s["fetch_running"] == true));
    let last = live.last().unwrap();
    let round = &last["current_round"];
    assert!(!round["in_flight"].as_array().unwrap().is_empty(), "the round in progress lists its requests: {last}");
    assert!(round["in_flight"].as_array().unwrap().iter().all(|r| r["elapsed_seconds"].as_f64().unwrap() >= 0.0));
    assert!(
        running.iter().any(|s| s["eta_seconds"].as_f64().is_some_and(|eta| eta > 0.0)),
        "an ETA once a round closed"
    );
    let seqs: Vec<u64> = live.iter().filter_map(|s| s["last_seq"].as_u64()).collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]) && seqs.len() >= 5, "snapshots follow the log: {seqs:?}");

    let stopped = snapshot(&run, &[]);
    let log = check(&run, &schedule, &stopped, true);
    assert_eq!(stopped["status"], "stopped", "{stopped}");
    assert_eq!(stopped["fetch_running"], false);
    assert!(stopped["current_round"].is_null() && stopped["eta_seconds"].is_null(), "nothing runs once killed");
    assert!(log.finals.len() < schedule.len());
    assert!(stopped["status_detail"].as_str().unwrap().contains("segment 1"), "{stopped}");
    assert_untouched_by_watch(&run);

    // The resume: a new segment closes the open attempts as interrupted and re-sends them.
    let mut child = fetch(&ws, &sim, &run);
    let resumed = follow(&run, &schedule, &mut child, |_| false);
    assert!(child.wait().unwrap().success(), "the resumed fetch finished");
    let in_segment_2: Vec<&Value> = resumed.iter().filter(|s| s["status"] == "running" && s["segments"] == 2).collect();
    assert!(in_segment_2.len() >= 5, "only {} snapshots of the resumed fetch", in_segment_2.len());

    let finished = snapshot(&run, &[]);
    let log = check(&run, &schedule, &finished, true);
    assert_eq!(
        (finished["status"].as_str(), finished["sealed"].as_bool()),
        (Some("finished"), Some(true)),
        "{finished}"
    );
    assert_eq!(finished["requests_done"], schedule.len());
    assert_eq!(finished["rounds_done"], finished["totals"]["rounds"]);
    assert_eq!(finished["eta_seconds"], 0.0);
    let open_at_kill: u64 = stopped["open_attempts"].as_u64().unwrap();
    assert_eq!(log.interrupted.values().sum::<u64>(), open_at_kill, "each attempt the kill left open was interrupted");

    // The finished run scored: the same outcomes as responses.parquet, the same p50s as
    // metrics.json's pooled rows.
    ok(&mut ws.stage("ib-reconstruct", &run));
    ok(&mut ws.stage("ib-evaluate", &run));
    ok(&mut ws.stage("ib-aggregate", &run));
    assert_untouched_by_watch(&run);
    let finished = snapshot(&run, &[]);
    assert_same_as_metrics(&run, &finished);
    let whole = snapshot(&run, &["--window", "100000"]);
    for row in whole["providers"].as_array().unwrap() {
        assert_eq!(row["rolling"]["ttfa_p50_ms"], row["ttfa_p50_ms"], "a window over every request is the whole p50");
        assert_eq!(row["rolling"]["e2e_p50_ms"], row["e2e_p50_ms"]);
        assert_eq!(row["rolling"]["requests"], row["done"]);
    }

    // A torn last line is left unread; a corrupt complete line is refused, naming it.
    let copy = ws.path("runs/run-watch-copy");
    rr::copy_tree(&run, &copy);
    // The finished run is sealed; a copy with its plain segments back shows the same.
    crate::ops::unseal(&copy);
    assert_eq!(snapshot(&copy, &[])["last_seq"], finished["last_seq"], "the sealed and plain logs read alike");
    let segment = copy.join("events/0002.jsonl");
    let mut bytes = std::fs::read(&segment).unwrap();
    let partial = b"{\"v\":1,\"run_id\":\"run-w";
    bytes.extend_from_slice(partial);
    std::fs::write(&segment, &bytes).unwrap();
    let torn = snapshot(&copy, &[]);
    assert_eq!(torn["last_seq"], finished["last_seq"], "a torn last line is not read");
    assert_eq!(torn["torn_tail_bytes"], partial.len());
    let text = std::fs::read_to_string(copy.join("events/0001.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "{\"v\":1,\"seq\":";
    std::fs::write(copy.join("events/0001.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = watch(&copy, &["--once"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("0001.jsonl:4: "), "{stderr}");
}

/// Per provider: the snapshot's outcomes are responses.parquet's, its classes, failures and
/// p50s metrics.json's pooled row's.
fn assert_same_as_metrics(run: &Path, s: &Value) {
    let metrics: Value = serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let pooled = metrics["combined_provider_metrics"].as_array().unwrap();
    assert_eq!(pooled.len(), s["providers"].as_array().unwrap().len());
    for m in pooled {
        let provider = m["provider"].as_str().unwrap();
        let row = provider_row(s, provider);
        let mut outcomes = BTreeMap::new();
        for r in responses.iter().filter(|r| r.provider == provider) {
            *outcomes.entry(r.outcome.as_str().to_string()).or_insert(0u64) += 1;
        }
        assert_eq!(outcomes_of(row), outcomes, "{provider}: outcomes as responses.parquet");
        assert_eq!(row["done"], m["submitted_count"], "{provider}");
        assert_eq!(row["failed"], m["failed_request_count"], "{provider}");
        for (label, count) in row["classes"].as_object().unwrap() {
            if label != "success" {
                assert_eq!(count, &m[format!("{label}_count")], "{provider}: {label}");
            }
        }
        assert_eq!(row["ttfa_p50_ms"], m["ttfa_p50"], "{provider}: TTFA p50");
        assert_eq!(row["e2e_p50_ms"], m["e2e_latency_p50"], "{provider}: E2E p50");
        assert_eq!(row["ttfa_samples"], m["ttfa_ms"]["population_count"], "{provider}: the same TTFA population");
        assert_eq!(row["e2e_samples"], m["e2e_latency_ms"]["population_count"], "{provider}: the same E2E population");
    }
    let with_samples = pooled.iter().filter(|m| m["e2e_latency_p50"].is_number()).count();
    assert!(with_samples > 0, "some provider has latency figures to compare");
}

/// The reference's smoke run (3 rounds of 10 providers), imported.
fn imported_run(dir: &Path) -> PathBuf {
    let run = dir.join("runs/imported");
    ok(Command::new(bin("ib-import"))
        .arg("--from")
        .arg(rr::fixture("smoke-run"))
        .arg("--run")
        .arg(&run)
        .arg("--spec")
        .arg(rr::fixture("spec.yaml"))
        .arg("--dataset")
        .arg(rr::fixture("data/micro-single-task")));
    run
}

#[test]
fn watch_shows_an_imported_run_with_every_request_counted() {
    let dir = tempfile::tempdir().unwrap();
    let run = imported_run(dir.path());
    let schedule = parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows;
    let s = snapshot(&run, &[]);
    let log = check(&run, &schedule, &s, false);
    assert_eq!(s["status"], "imported", "{s}");
    assert!(s["status_detail"].as_str().unwrap().contains("run-20261129-145326"), "{s}");
    assert!(!log.finals.is_empty());
    assert_eq!(s["requests_done"], log.finals.len());
    assert_eq!(s["rounds_done"], 3, "not `completed: 0` for a run that is all there");
    assert!(s["eta_seconds"].is_null() && s["current_round"].is_null());
    for stage in ["ib-reconstruct", "ib-evaluate", "ib-aggregate"] {
        let mut cmd = Command::new(bin(stage));
        cmd.arg("--run").arg(&run);
        if stage != "ib-reconstruct" {
            cmd.arg("--spec").arg(rr::fixture("spec.yaml"));
        }
        if stage == "ib-evaluate" {
            cmd.arg("--dataset").arg(rr::fixture("data/micro-single-task"));
        }
        ok(&mut cmd);
    }
    assert_untouched_by_watch(&run);
    assert_same_as_metrics(&run, &snapshot(&run, &[]));
}

/// A tmux server of its own (`-L`), killed on drop with its sessions.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start() -> Tmux {
        let found = Command::new("tmux").arg("-V").output();
        if !found.is_ok_and(|o| o.status.success()) {
            panic!("tmux is not installed: this test drives ib-watch's terminal view in tmux; install the Debian package `tmux` (apt-get install tmux)");
        }
        Tmux { socket: format!("ib-watch-test-{}", std::process::id()) }
    }

    fn cmd(&self, args: &[&str]) -> std::process::Output {
        // Its own server, also when the tests themselves run inside tmux.
        let out = Command::new("tmux").arg("-L").arg(&self.socket).args(args).env_remove("TMUX").output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    fn screen(&self, session: &str) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", session]).stdout).into_owned()
    }

    /// Waits until the pane shows everything in `texts`; returns the screen.
    fn wait_for(&self, session: &str, texts: &[&str]) -> String {
        let started = Instant::now();
        loop {
            let screen = self.screen(session);
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the pane never showed {texts:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-L").arg(&self.socket).arg("kill-server").output();
    }
}

#[test]
fn the_terminal_view_shows_rounds_and_providers_and_quits_on_q_ctrl_c_or_sigterm() {
    let tmux = Tmux::start();
    let dir = tempfile::tempdir().unwrap();
    let run = imported_run(dir.path());
    let schedule = parquet_io::read::<ScheduleRow>(&run.join("schedule.parquet")).unwrap().rows;
    let providers: BTreeSet<&str> = schedule.iter().map(|r| r.provider.as_str()).collect();
    let before = inventory(&run);
    for (session, key) in [("q", "q"), ("ctrl-c", "C-c"), ("sigterm", "TERM")] {
        let shell = format!(
            "'{}' --run '{}' --interval 0.2; echo \"ib-watch exited with $?\"; sleep 60",
            bin_watch().display(),
            run.display()
        );
        tmux.cmd(&["new-session", "-d", "-x", "120", "-y", "40", "-s", session, &shell]);
        let mut expected = vec!["rounds 3/3 done", "requests 30/30", "imported"];
        expected.extend(providers.iter().copied());
        let screen = tmux.wait_for(session, &expected);
        for provider in &providers {
            let row = screen.lines().any(|l| l.contains(provider) && l.contains("3/3"));
            assert!(row, "no row of {provider} with its requests done of scheduled:\n{screen}");
        }
        if key == "TERM" {
            // The pane's shell runs ib-watch as its child.
            let shell = String::from_utf8(tmux.cmd(&["display-message", "-p", "-t", session, "#{pane_pid}"]).stdout);
            let children = Command::new("ps").args(["-o", "pid=", "--ppid", shell.unwrap().trim()]).output().unwrap();
            let pid = String::from_utf8(children.stdout).unwrap().trim().to_string();
            assert!(!pid.is_empty() && !pid.contains(char::is_whitespace), "one child of the pane's shell: {pid:?}");
            ok(Command::new("kill").args(["-TERM", &pid]));
        } else {
            tmux.cmd(&["send-keys", "-t", session, key]);
        }
        let after = tmux.wait_for(session, &["ib-watch exited with 0"]);
        assert!(
            !after.contains("rounds 3/3 done"),
            "{key}: the terminal is restored (alternate screen left):\n{after}"
        );
    }
    assert_eq!(inventory(&run), before, "the terminal view changed nothing in the run");
}
