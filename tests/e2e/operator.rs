//! What an operator does to a run directory besides running the pipeline once: starts a
//! second process on it, edits or mixes its files, copies or renames it. Each is either
//! refused (exit 6 for a run another process is writing, 3 or 4 for a broken or stale input)
//! with nothing written, or, for a copied or renamed run, works as if nothing had happened.
use crate::bad_input::snapshot;
use crate::ops::*;
use crate::support::{ok, Sim, Workspace};
use inferbench_store::stages;
use inferbench_testkit::reference_run::copy_tree;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

/// Runs `cmd`, which must refuse with `code` and every piece of `expected` in its message,
/// leaving every file of `run` (but the writer lock) as it was.
fn assert_refused(what: &str, cmd: &mut Command, run: &Path, code: i32, expected: &[&str]) {
    let before = snapshot(run);
    let out = run_bounded(cmd, LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{what}: {stderr}");
    for text in expected {
        assert!(stderr.contains(text), "{what}: stderr lacks `{text}`:\n{stderr}");
    }
    assert!(snapshot(run) == before, "{what}: the refusing stage wrote into the run");
}

/// A stage command for a refusal check: fetch pointed at a port nothing listens on, so a
/// fetch that wrongly went ahead would log failed requests rather than reach a provider.
fn stage(ws: &Workspace, name: &str, run: &Path) -> Command {
    let mut cmd = ws.stage(name, run);
    if name == "ib-fetch" {
        cmd.args(["--endpoint-base", "http://127.0.0.1:9", "--deadline-seconds", "1"]);
    }
    cmd
}

#[test]
fn a_second_fetch_and_every_later_stage_refuse_while_fetch_runs() {
    let ws = fast_workspace(0.1);
    let sim = Sim::start(&ws);
    let run = ws.run("run-busy");
    // Six rounds of about 0.3 s: the first fetch outlives every refusal below.
    select_and_schedule(&ws, &run, 2);
    let mut first = Guard(spawn_quiet(&mut fetch(&ws, &run, &sim.url, "0.3")));
    let pid = first.0.id();
    wait_for(&mut first.0, "a request in flight", LIMIT, || in_flight(&run, 1));
    let holder = format!("ib-fetch (pid {pid}) is writing this run");

    // While the first fetch is sending: the second refuses at once, the first still running.
    let out = run_bounded(&mut stage(&ws, "ib-fetch", &run), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "a second ib-fetch: {stderr}");
    assert!(stderr.contains(&holder) && stderr.contains("ib-fetch wrote nothing"), "{stderr}");
    assert!(first.0.try_wait().unwrap().is_none(), "the second fetch returned while the first still runs");

    // Stopped, the first fetch holds its lock and writes nothing, so the run can be compared
    // file by file: neither a second fetch nor any later stage writes a byte into it.
    signal(pid, "-STOP");
    assert!(first.0.try_wait().unwrap().is_none(), "the first fetch finished before it could be stopped");
    // Every stage but ib-select, which checks a locked run without taking its writer lock.
    for name in stages::STAGES.iter().map(|s| s.binary).filter(|b| *b != "ib-select") {
        let expected = [holder.as_str(), &format!("{name} wrote nothing")];
        assert_refused(&format!("{name} during fetch"), &mut stage(&ws, name, &run), &run, 6, &expected);
    }
    signal(pid, "-CONT");

    let status = first.0.wait().unwrap();
    assert!(status.success(), "the first fetch completes: {status:?}");
    let facts = check_complete_log(&run);
    assert_eq!(facts.segments, 1, "only the first fetch opened a segment");
    ws.derive(&run);
    check_responses(&run, &facts.interrupted);
}

/// One way to break a complete run, the stage that must refuse it and how.
struct Case {
    name: &'static str,
    stage: &'static str,
    /// Breaks `run`; `other` is another complete run of the same inputs.
    damage: fn(run: &Path, other: &Path),
    code: i32,
    expected: &'static [&'static str],
}

/// The (first) output each stage writes: removed before the case runs, so that "nothing
/// written" cannot hide a rewrite with the same bytes.
fn output_of(stage: &str) -> &'static str {
    stages::by_binary(stage).and_then(|s| s.files().next()).unwrap_or_else(|| panic!("no output known for {stage}"))
}

fn copy_from_other(run: &Path, other: &Path, name: &str) {
    std::fs::copy(other.join(name), run.join(name)).unwrap();
}

fn edit_lock(run: &Path, edit: fn(&mut Value)) {
    let path = run.join("lock.json");
    let mut lock: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut lock);
    std::fs::write(&path, serde_json::to_string_pretty(&lock).unwrap() + "\n").unwrap();
}

fn drop_last_provider(lock: &mut Value) {
    lock["providers"].as_array_mut().unwrap().pop();
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().split_inclusive('\n').map(str::to_string).collect()
}

fn append(path: &Path, line: &str) {
    use std::io::Write;
    std::fs::OpenOptions::new().append(true).open(path).unwrap().write_all(line.as_bytes()).unwrap();
}

/// The last line appended a second time, as a writer that retried a write would leave it.
fn duplicate_last_line(run: &Path, _: &Path) {
    let path = last_segment(run);
    append(&path, lines(&path).last().unwrap());
}

/// A line of the other run's log (the one with the seq this run's log would continue
/// with, when it has one) appended to this run's last segment, as a careless merge would.
fn append_foreign_line(run: &Path, other: &Path) {
    let total: usize =
        inferbench_store::run::RunDir::new(run).segments().unwrap().iter().map(|(_, p)| lines(p).len()).sum();
    let theirs = lines(&other.join("events/0001.jsonl"));
    let line = theirs.get(total).unwrap_or_else(|| theirs.last().unwrap());
    append(&last_segment(run), line);
}

fn delete_first_segment(run: &Path, _: &Path) {
    std::fs::remove_file(run.join("events/0001.jsonl")).unwrap();
}

fn delete_middle_line(run: &Path, _: &Path) {
    let path = run.join("events/0001.jsonl");
    let mut all = lines(&path);
    all.remove(all.len() / 2);
    std::fs::write(&path, all.concat()).unwrap();
}

const LOG_READERS: [&str; 3] = ["ib-fetch", "ib-reconstruct", "ib-report"];

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            name: "schedule.parquet from another run",
            stage: "ib-fetch",
            damage: |run, other| copy_from_other(run, other, "schedule.parquet"),
            code: 4,
            expected: &["schedule.parquet: it was derived from lock.json", "rerun ib-schedule"],
        },
        Case {
            name: "schedule.parquet from another run",
            stage: "ib-reconstruct",
            damage: |run, other| copy_from_other(run, other, "schedule.parquet"),
            code: 4,
            expected: &["schedule.parquet: it was derived from lock.json"],
        },
        Case {
            name: "schedule.parquet from another run",
            stage: "ib-aggregate",
            damage: |run, other| copy_from_other(run, other, "schedule.parquet"),
            code: 4,
            expected: &["schedule.parquet: it was derived from lock.json"],
        },
        Case {
            name: "selection.parquet from another run",
            stage: "ib-schedule",
            damage: |run, other| copy_from_other(run, other, "selection.parquet"),
            code: 4,
            expected: &["selection.parquet: it was derived from lock.json", "rerun ib-select"],
        },
        Case {
            name: "responses.parquet from another run",
            stage: "ib-evaluate",
            damage: |run, other| copy_from_other(run, other, "responses.parquet"),
            code: 4,
            expected: &["responses.parquet: it was derived from"],
        },
        Case {
            name: "evaluations.parquet from another run",
            stage: "ib-aggregate",
            damage: |run, other| copy_from_other(run, other, "evaluations.parquet"),
            code: 4,
            expected: &["evaluations.parquet: it was derived from"],
        },
        Case {
            name: "metrics.json from another run",
            stage: "ib-report",
            damage: |run, other| copy_from_other(run, other, "metrics.json"),
            code: 4,
            expected: &["metrics.json: it was derived from", "rerun ib-aggregate"],
        },
        Case {
            name: "comparisons.json from another run",
            stage: "ib-report",
            damage: |run, other| copy_from_other(run, other, "comparisons.json"),
            code: 4,
            expected: &["comparisons.json: it was derived from"],
        },
        Case {
            name: "a log segment from another run",
            stage: "ib-reconstruct",
            damage: |run, other| copy_from_other(run, other, "events/0001.jsonl"),
            code: 3,
            expected: &["events/0001.jsonl:1: run_id: `run-other` is not this run (`run-base`)"],
        },
        Case {
            name: "lock with a provider list edited",
            stage: "ib-fetch",
            damage: |run, _| edit_lock(run, drop_last_provider),
            code: 4,
            expected: &["lock.json: providers:", "differ from the provider table"],
        },
        Case {
            name: "lock with a provider list edited",
            stage: "ib-reconstruct",
            damage: |run, _| edit_lock(run, drop_last_provider),
            code: 4,
            expected: &["schedule.parquet: it was derived from lock.json"],
        },
        Case {
            name: "lock with a provider list edited",
            stage: "ib-evaluate",
            damage: |run, _| edit_lock(run, drop_last_provider),
            code: 4,
            expected: &["lock.json: providers:"],
        },
        Case {
            name: "lock with a provider list reordered",
            stage: "ib-aggregate",
            damage: |run, _| edit_lock(run, |lock| lock["providers"].as_array_mut().unwrap().reverse()),
            code: 4,
            expected: &["lock.json: providers:"],
        },
        Case {
            name: "lock with a provider list edited",
            stage: "ib-report",
            damage: |run, _| edit_lock(run, drop_last_provider),
            code: 4,
            expected: &["lock.json: providers:"],
        },
        Case {
            name: "lock with its run_id edited",
            stage: "ib-fetch",
            damage: |run, _| edit_lock(run, |lock| lock["run_id"] = "run-edited".into()),
            code: 4,
            expected: &["schedule.parquet: it was derived from lock.json"],
        },
        Case {
            name: "lock with its run_id edited",
            stage: "ib-reconstruct",
            damage: |run, _| edit_lock(run, |lock| lock["run_id"] = "run-edited".into()),
            code: 3,
            expected: &["events/0001.jsonl:1: run_id: `run-base` is not this run (`run-edited`)"],
        },
        Case {
            name: "lock with its run_id edited",
            stage: "ib-report",
            damage: |run, _| edit_lock(run, |lock| lock["run_id"] = "run-edited".into()),
            code: 3,
            expected: &["events/0001.jsonl:1: run_id: `run-base` is not this run (`run-edited`)"],
        },
        Case {
            name: "lock with the spec's hash edited",
            stage: "ib-evaluate",
            damage: |run, _| edit_lock(run, |lock| lock["inputs"]["spec.yaml"] = "0".repeat(64).into()),
            code: 4,
            expected: &["lock.json: spec.yaml changed since the run was locked"],
        },
        Case {
            name: "truncated lock",
            stage: "ib-aggregate",
            damage: |run, _| {
                let bytes = std::fs::read(run.join("lock.json")).unwrap();
                std::fs::write(run.join("lock.json"), &bytes[..bytes.len() / 2]).unwrap();
            },
            code: 3,
            expected: &["lock.json:"],
        },
    ];
    // Every reader of the log refuses a log that was edited, merged or lost a file.
    for stage in LOG_READERS {
        cases.push(Case {
            name: "a log line appended twice",
            stage,
            damage: duplicate_last_line,
            code: 3,
            expected: &["events/0002.jsonl:", "(a repeated or duplicated line)"],
        });
        cases.push(Case {
            name: "a line from another run's log",
            stage,
            damage: append_foreign_line,
            code: 3,
            expected: &["events/0002.jsonl:", "run_id: `run-other` is not this run (`run-base`)"],
        });
        cases.push(Case {
            name: "a missing segment file",
            stage,
            damage: delete_first_segment,
            code: 3,
            expected: &["events/0002.jsonl: segment 2 follows segment 0; a segment file is missing"],
        });
        cases.push(Case {
            name: "a line deleted in the middle",
            stage,
            damage: delete_middle_line,
            code: 3,
            expected: &["events/0001.jsonl:", "(lines are missing)"],
        });
    }
    cases
}

/// `run-base`, fetched in two segments with its derived files computed after the first and
/// now stale (see [`stale_run`]), and `run-other`, a complete run of the same inputs.
fn two_runs(ws: &Workspace) -> (std::path::PathBuf, std::path::PathBuf) {
    let sim = Sim::start(ws);
    let (base, other) = (ws.run("run-base"), ws.run("run-other"));
    stale_run(ws, &sim, &base);
    select_and_schedule(ws, &other, 1);
    ok(&mut fetch(ws, &other, &sim.url, "0.3"));
    (base, other)
}

#[test]
fn stale_foreign_and_edited_run_files_are_each_refused_and_nothing_written() {
    let ws = fast_workspace(0.1);
    let (base, other) = two_runs(&ws);
    ws.derive(&other);

    // The log grew after every derived file was computed: each stage refuses the stale file
    // it reads, and the chain is refreshed stage by stage.
    let stale_cases = std::cell::Cell::new(0);
    let refuse = |what: &str, stage: &str, expected: &[&str]| {
        assert_refused(what, &mut ws.stage(stage, &base), &base, 4, expected);
        stale_cases.set(stale_cases.get() + 1);
    };
    let stale_responses = ["responses.parquet:", "events/0002.jsonl is not among its inputs", "rerun ib-reconstruct"];
    refuse("responses.parquet older than the log, at ib-evaluate", "ib-evaluate", &stale_responses);
    refuse("responses.parquet older than the log, at ib-aggregate", "ib-aggregate", &stale_responses);
    refuse("responses.parquet older than the log, at ib-report", "ib-report", &stale_responses);
    let stale_comparisons = std::fs::read(base.join("comparisons.json")).unwrap();
    ok(&mut ws.stage("ib-reconstruct", &base));
    refuse(
        "metrics.json older than responses.parquet",
        "ib-report",
        &["metrics.json: it was derived from responses.parquet sha256", "rerun ib-aggregate"],
    );
    refuse(
        "evaluations.parquet older than responses.parquet",
        "ib-aggregate",
        &["evaluations.parquet: it was derived from responses.parquet sha256", "rerun ib-evaluate"],
    );
    ok(&mut ws.stage("ib-evaluate", &base));
    refuse("metrics.json older than evaluations.parquet", "ib-report", &["metrics.json: it was derived from"]);
    ok(&mut ws.stage("ib-aggregate", &base));
    // A group of aggregate outputs from two of its runs: the old comparisons, new metrics.
    let fresh_comparisons = std::fs::read(base.join("comparisons.json")).unwrap();
    std::fs::write(base.join("comparisons.json"), &stale_comparisons).unwrap();
    refuse("comparisons.json older than metrics.json", "ib-report", &["comparisons.json: it was derived from"]);
    std::fs::write(base.join("comparisons.json"), fresh_comparisons).unwrap();
    ok(&mut ws.stage("ib-report", &base));
    let stale_cases = stale_cases.get();

    // Every other case breaks a fresh copy of the now complete and current run.
    let cases = cases();
    assert!(cases.len() + stale_cases > 20, "{} cases", cases.len() + stale_cases);
    for (i, case) in cases.iter().enumerate() {
        let run = ws.run(&format!("case-{i}"));
        copy_tree(&base, &run);
        let output = output_of(case.stage);
        std::fs::remove_file(run.join(output)).unwrap();
        // The cases edit the plain segments, as they were before the seal (same bytes).
        unseal(&run);
        unseal(&other);
        (case.damage)(&run, &other);
        let what = format!("{} at {}", case.name, case.stage);
        assert_refused(&what, &mut stage(&ws, case.stage, &run), &run, case.code, case.expected);
        assert!(!run.join(output).exists(), "{what}: {output} was written");
    }

    // No stage reads events.parquet (the JSONL log is the source of truth), so a damaged one
    // is no input to refuse: the manifest calls the run incomplete, saying why, and rerunning
    // fetch on the complete run seals it again from the log.
    let sealed = std::fs::read(base.join("events.parquet")).unwrap();
    for damage in [sealed[..sealed.len() / 2].to_vec(), b"PAR1 garbage PAR1".to_vec()] {
        std::fs::write(base.join("events.parquet"), damage).unwrap();
        ok(&mut stage(&ws, "ib-report", &base));
        let manifest: inferbench_contract::manifest::Manifest =
            serde_json::from_slice(&std::fs::read(base.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest.status, "incomplete");
        assert!(manifest.status_reasons.iter().any(|r| r.starts_with("events.parquet is not the sealed copy")));
        ok(&mut stage(&ws, "ib-fetch", &base));
        assert!(std::fs::read(base.join("events.parquet")).unwrap() == sealed, "events.parquet is sealed again");
        ok(&mut stage(&ws, "ib-report", &base));
        let manifest: inferbench_contract::manifest::Manifest =
            serde_json::from_slice(&std::fs::read(base.join("manifest.json")).unwrap()).unwrap();
        assert_eq!((manifest.status.as_str(), manifest.status_reasons.len()), ("complete", 0));
    }
}

#[test]
fn a_killed_run_copied_and_renamed_resumes_as_the_same_run() {
    let ws = fast_workspace(0.1);
    let sim = Sim::start(&ws);
    let original = ws.run("run-original");
    select_and_schedule(&ws, &original, 2);
    let kill_mid_run = |run: &Path, segment: u32| {
        let mut child = Guard(spawn_quiet(&mut fetch(&ws, run, &sim.url, "0.3")));
        wait_for(&mut child.0, "a second round in flight", LIMIT, || mid_run(run, segment));
        child.0.kill().unwrap(); // SIGKILL: no chance to clean up
        child.0.wait().unwrap();
    };
    kill_mid_run(&original, 1);
    let copy = ws.run("run-copy");
    copy_tree(&original, &copy);
    kill_mid_run(&copy, 2);
    let renamed = ws.path("elsewhere/run-renamed");
    std::fs::create_dir_all(renamed.parent().unwrap()).unwrap();
    std::fs::rename(&copy, &renamed).unwrap();
    ok(&mut fetch(&ws, &renamed, &sim.url, "0.3"));
    drop(sim);

    let facts = check_complete_log(&renamed);
    assert_eq!(facts.segments, 3, "one segment per fetch: the original, the copy's, the renamed run's");
    assert!(!facts.interrupted.is_empty(), "the killed attempts were closed and sent again");
    assert!(facts.events.iter().all(|e| e.run_id == "run-original"), "the run id stays the lock's");
    ws.derive(&renamed);
    check_responses(&renamed, &facts.interrupted);
    let json = |name: &str| -> Value { serde_json::from_slice(&std::fs::read(renamed.join(name)).unwrap()).unwrap() };
    assert_eq!(json("metrics.json")["run_id"], "run-original");
    let manifest = json("manifest.json");
    assert_eq!((manifest["run_id"].as_str(), manifest["status"].as_str()), (Some("run-original"), Some("complete")));
    assert_eq!(manifest["execution"]["segments"].as_array().unwrap().len(), 3);
    let report = std::fs::read_to_string(renamed.join("report.md")).unwrap();
    assert!(report.contains("Run `run-original`."), "the report names the run by its lock");
}

/// An open-file limit too low for the run's providers is the machine's, not an input's: the
/// fetch exits 1 (the stage failed), not 3, naming the limit and how to lift it.
#[test]
fn an_open_file_limit_too_low_for_the_providers_exits_1() {
    let ws = Workspace::new();
    let run = ws.run("run-nofile");
    select_and_schedule(&ws, &run, 1);
    let fetch = stage(&ws, "ib-fetch", &run);
    // bash lowers its own limit, soft and hard, and becomes ib-fetch: 32 files, fewer than the
    // spare the fetch keeps besides one connection per provider.
    let out = Command::new("bash")
        .args(["-c", r#"ulimit -n 32 && exec "$@""#, "bash"])
        .arg(fetch.get_program())
        .args(fetch.get_args())
        .current_dir(fetch.get_current_dir().unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the hard open-file limit is 32") && stderr.contains("ulimit -Hn"), "{stderr}");
}
