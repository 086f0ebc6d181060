//! The Makefile decides what is stale, checked without a network or a release build: GNU make
//! runs the repository's Makefile in a scratch workspace whose BIN holds stand-in shell
//! scripts (each logs its command line and writes its stage's outputs) and whose CARGO is one
//! too, with mtimes the test sets. Only `ib-select --list-inputs` is the real binary, so the
//! lock's prerequisites are the ones the real code lists.
use crate::support::{bin, repo, Workspace};
use inferbench_contract::canonical::file_sha256;
use inferbench_store::run::RunDir;
use inferbench_store::stages::{self, STAGES};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

/// The run directory, relative to the workspace (make runs there).
/// A Hive partition (`workflow=…/run=…`), as make lays runs out: make sees `=` in its paths.
const RUN: &str = "runs/workflow=w/run=r";

/// The stand-ins' names, in pipeline order, as they appear in the log.
const SELECT: &str = "ib-select";
const SCHEDULE: &str = "ib-schedule";
const FETCH: &str = "ib-fetch";
const RECONSTRUCT: &str = "ib-reconstruct";
const EVALUATE: &str = "ib-evaluate";
const AGGREGATE: &str = "ib-aggregate";
const REPORT: &str = "ib-report";
/// What make re-derives of a fetched run, as the stage table orders it.
fn derived() -> Vec<&'static str> {
    stages::derived().map(|s| s.binary).collect()
}
/// What a newer input runs in a fetched run: the lock check, and nothing it could change.
const CHECKED: [&str; 1] = [SELECT];

/// Every file a run holds, in the order the pipeline writes them (the stand-in fetch's log in
/// place of the log's directory).
fn run_files() -> Vec<&'static str> {
    let outputs = STAGES.iter().flat_map(|s| s.outputs.iter().copied());
    outputs.map(|name| if name == RunDir::EVENTS { "events/0000.jsonl" } else { name }).collect()
}

/// A stage as make sees it: logs `name args…`, writes its outputs (a new mtime, as the real
/// stages' atomic renames give), and fails after writing when `fail/<name>` exists. Like the
/// real one, ib-select leaves an existing lock alone, and refuses it (exit 4) when asked for
/// other settings than the lock was made with (its command line, which it records there).
const STAND_IN: &str = r#"#!/usr/bin/env bash
set -eu
name=${0##*/}
for arg; do [ "$arg" = --list-inputs ] && exec "$REAL_SELECT" "$@"; done
echo "$name $*" >>"$STAGE_LOG"
command_line="$*" run= port_file= outs=
while [ $# -gt 0 ]; do
  case $1 in --run) run=$2; shift ;; --port-file) port_file=$2; shift ;; esac
  shift
done
case $name in
  cargo)
    # Builds into target/release what differs from bin/, and leaves the rest alone, as cargo
    # leaves an up-to-date binary's mtime.
    mkdir -p target/release
    for stage in bin/ib-*; do cmp -s "$stage" "target/release/${stage##*/}" || cp "$stage" target/release/; done
    exit 0 ;;
  ib-sim) echo $$ >sim.pid; echo http://127.0.0.1:9 >"$port_file"; exec sleep 30 </dev/null >/dev/null 2>&1 ;;
  ib-select)
    if [ -f "$run/lock.json" ]; then [ "$(cat "$run/lock.json")" = "$command_line" ] || exit 4; exit 0; fi
    mkdir -p "$run"; echo "$name" >"$run/selection.parquet"; echo "$command_line" >"$run/lock.json" ;;
  ib-fetch) mkdir -p "$run/events"; echo '{}' >>"$run/events/0000.jsonl" ;;
esac
case $name in
OUTPUTS
esac
for out in $outs; do echo "$name" >"$run/$out"; done
[ ! -f "fail/$name" ]
"#;

/// The stand-in script, each stage writing the files the stage table gives it (ib-select
/// writes its own, as it leaves an existing lock alone).
fn stand_in() -> String {
    let outputs: Vec<String> = STAGES
        .iter()
        .filter(|s| s.binary != SELECT)
        .map(|s| format!("  {}) outs=\"{}\" ;;", s.binary, s.files().collect::<Vec<_>>().join(" ")))
        .collect();
    STAND_IN.replace("OUTPUTS", &outputs.join("\n"))
}

/// A scratch workspace (pipeline, dataset, runs/) with stand-ins in `bin/`.
struct Bench {
    ws: Workspace,
    /// Now, less an hour: the timeline below sits before it and real writes after it.
    base: SystemTime,
}

impl Bench {
    fn new() -> Bench {
        let ws = Workspace::new();
        let stand_ins = ws.path("bin");
        std::fs::create_dir_all(&stand_ins).unwrap();
        std::fs::create_dir_all(ws.path("fail")).unwrap();
        let stand_in = stand_in();
        for name in STAGES.iter().map(|s| s.binary).chain(["ib-sim", "cargo"]) {
            let path = stand_ins.join(name);
            std::fs::write(&path, &stand_in).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Bench { ws, base: SystemTime::now() - Duration::from_secs(3600) }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.ws.path(rel)
    }

    /// GNU make on the repository's Makefile, in the workspace, with nothing inherited (a
    /// `make test` would otherwise pass its own MAKEFLAGS down) but PATH.
    fn make(&self, args: &[&str]) -> Output {
        self.make_with_path(args, &std::env::var("PATH").unwrap_or_default())
    }

    fn make_with_path(&self, args: &[&str], path: &str) -> Output {
        std::fs::write(self.path("stages.log"), "").unwrap();
        Command::new("make")
            .arg("-f")
            .arg(repo().join("Makefile"))
            .arg("--no-print-directory")
            .args(["BIN=bin", "CARGO=bin/cargo", "SPEC=pipeline/spec.yaml", "DATASET=data"])
            .args(["SIM_PROFILES=pipeline/sim-profiles.yaml", &format!("SIM_RUN={RUN}"), "SAMPLE=--sample"])
            .args(args)
            .current_dir(self.ws.dir.path())
            .env_clear()
            .env("PATH", path)
            .env("STAGE_LOG", self.path("stages.log"))
            .env("REAL_SELECT", bin(SELECT))
            .output()
            .expect("GNU make is installed (tests/e2e/make.rs drives the Makefile)")
    }

    /// The stand-ins `make args` ran, in order, by name; make must succeed.
    fn stages(&self, args: &[&str]) -> Vec<String> {
        let out = self.make(args);
        assert!(out.status.success(), "make {args:?} failed:\n{}", text(&out));
        self.logged()
    }

    /// The run's rules alone, as the sub-make of `make run` gets them.
    fn run_rules(&self) -> Vec<String> {
        self.stages(&["run-files", &format!("RUN={RUN}"), "ENDPOINTS=providers"])
    }

    fn logged(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.path("stages.log")).unwrap();
        log.lines().map(|l| l.split(' ').next().unwrap().to_string()).collect()
    }

    fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("stages.log")).unwrap().lines().map(str::to_string).collect()
    }

    fn set_mtime(&self, rel: &str, at: SystemTime) {
        let file = std::fs::File::options().write(true).open(self.path(rel)).unwrap();
        file.set_modified(at).unwrap();
    }

    fn at(&self, seconds: u64) -> SystemTime {
        self.base + Duration::from_secs(seconds)
    }

    /// A tidy history: inputs, then binaries, then the generated input list, then the run's
    /// files (those it has) in pipeline order, all before `touch` and long before now.
    fn timeline(&self) {
        for dir in ["pipeline", "pipeline/prompts", "data"] {
            for entry in std::fs::read_dir(self.path(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    let rel = path.strip_prefix(self.ws.dir.path()).unwrap().to_str().unwrap().to_string();
                    self.set_mtime(&rel, self.at(0));
                }
            }
        }
        for entry in std::fs::read_dir(self.path("bin")).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            self.set_mtime(&format!("bin/{name}"), self.at(100));
        }
        for entry in std::fs::read_dir(self.path("runs/.deps")).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            self.set_mtime(&format!("runs/.deps/{name}"), self.at(200));
        }
        for (i, file) in run_files().into_iter().enumerate().filter(|(_, file)| self.exists(file)) {
            self.set_mtime(&format!("{RUN}/{file}"), self.at(300 + 10 * i as u64));
        }
    }

    /// `rel` as if it had just been rebuilt or edited: newer than everything of the timeline.
    fn touch(&self, rel: &str) {
        self.set_mtime(rel, self.at(1000));
    }

    fn exists(&self, file: &str) -> bool {
        self.path(&format!("{RUN}/{file}")).exists()
    }
}

/// Whether process `pid` is gone (or a zombie awaiting its reaper), waiting up to 5 s.
fn stopped(pid: &str) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) => return true,
            Ok(_) if std::time::Instant::now() > deadline => return false,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

fn text(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A bench whose run has been made once and given a tidy timeline.
fn made() -> Bench {
    let bench = Bench::new();
    bench.run_rules();
    bench.timeline();
    assert_eq!(bench.run_rules(), names(&[]), "the timeline leaves the run up to date");
    bench
}

#[test]
fn make_on_a_fresh_clone_builds_first_then_runs_every_stage_once_and_a_second_make_does_nothing() {
    let bench = Bench::new();
    // The default BIN, which does not exist when make first reads the Makefile.
    let fresh = ["BIN=target/release"];
    assert!(!bench.path("target").exists());
    let out = bench.make(&fresh);
    assert!(out.status.success(), "make failed:\n{}", text(&out));
    let all = ["cargo", SELECT, SCHEDULE, "ib-sim", FETCH, RECONSTRUCT, EVALUATE, AGGREGATE, REPORT];
    assert_eq!(bench.logged(), names(&all));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("report: {RUN}/report.md")), "{}", text(&out));
    let cargo = &bench.log_lines()[0];
    assert_eq!(cargo, "cargo build --release --locked --bins");
    let sim = std::fs::read_to_string(bench.path("sim.pid")).unwrap();
    assert!(stopped(sim.trim()), "make stops ib-sim once the fetch is done");
    assert_eq!(bench.stages(&fresh), names(&["cargo"]), "a second make runs no stage");
    let question = bench.make(&["--question", "BIN=target/release", "run-files", &format!("RUN={RUN}")]);
    assert_eq!(question.status.code(), Some(0), "make --question calls the run up to date:\n{}", text(&question));
}

#[test]
fn new_code_rederives_what_it_changes_and_a_rebuilt_fetch_sends_nothing() {
    let bench = made();
    let cases: [(&str, &[&str]); 7] = [
        (EVALUATE, &[EVALUATE, AGGREGATE, REPORT]),
        (FETCH, &[]),
        // The log was fetched for the schedule it names: new code does not re-derive it.
        (SCHEDULE, &[]),
        (RECONSTRUCT, &derived()),
        (AGGREGATE, &[AGGREGATE, REPORT]),
        (REPORT, &[REPORT]),
        // ib-select checks the existing lock (the stand-in, like it, leaves it alone).
        (SELECT, &CHECKED),
    ];
    for (rebuilt, expected) in cases {
        bench.timeline();
        bench.touch(&format!("bin/{rebuilt}"));
        assert_eq!(bench.run_rules(), names(expected), "after rebuilding {rebuilt}");
        assert_eq!(bench.run_rules(), names(&[]), "a second make after rebuilding {rebuilt}");
    }
    // A schedule newer than the log (a copied run) does not fetch again either.
    bench.timeline();
    bench.touch(&format!("{RUN}/schedule.parquet"));
    assert_eq!(bench.run_rules(), names(&[RECONSTRUCT, EVALUATE, AGGREGATE, REPORT]));

    // Before the fetch has begun, the schedule is derived like any other file.
    let unfetched = Bench::new();
    let run = format!("RUN={RUN}");
    let schedule = ["run-files", run.as_str(), "FILES=schedule.parquet"];
    assert_eq!(unfetched.stages(&schedule), names(&[SELECT, SCHEDULE]));
    unfetched.timeline();
    unfetched.touch(&format!("bin/{SCHEDULE}"));
    assert_eq!(unfetched.stages(&schedule), names(&[SCHEDULE]), "after rebuilding ib-schedule");
}

#[test]
fn the_lock_depends_on_the_files_the_spec_names_and_is_checked_first() {
    let bench = made();
    let named = [
        "pipeline/spec.yaml",
        "pipeline/providers.yaml",
        "pipeline/prompts/ticket-triage.system.txt",
        "data/manifest.json",
        "data/contract-terms-extraction.jsonl",
    ];
    for input in named {
        bench.timeline();
        bench.touch(input);
        assert_eq!(bench.run_rules(), names(&CHECKED), "after touching {input}");
        assert_eq!(bench.run_rules(), names(&[]), "a second make after touching {input}");
    }
    // Files beside them that the spec does not name are not the run's inputs.
    std::fs::write(bench.path("pipeline/prompts/unused.txt"), "x\n").unwrap();
    for other in ["pipeline/sim-profiles.yaml", "pipeline/prompts/unused.txt"] {
        bench.timeline();
        bench.touch(other);
        assert_eq!(bench.run_rules(), names(&[]), "after touching {other}");
    }
    // The lock is checked first, and the fetch stays out of it whatever else is new.
    bench.timeline();
    bench.touch("pipeline/spec.yaml");
    bench.touch(&format!("bin/{EVALUATE}"));
    bench.touch(&format!("bin/{FETCH}"));
    assert_eq!(bench.run_rules(), names(&[SELECT, EVALUATE, AGGREGATE, REPORT]));

    // Another dataset (as old as the run's), or another selection, is checked against the
    // lock, and refused, each time it is asked for; the run's own stays up to date.
    copy_dir(&bench.path("data"), &bench.path("data2"));
    for entry in std::fs::read_dir(bench.path("data2")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        bench.set_mtime(&format!("data2/{name}"), bench.at(0));
    }
    for _ in 0..2 {
        for setting in ["DATASET=data2", "PER_FAMILY=2"] {
            let out = bench.make(&["run-files", &format!("RUN={RUN}"), "ENDPOINTS=providers", setting]);
            assert!(!out.status.success(), "make {setting} succeeded:\n{}", text(&out));
            assert_eq!(bench.logged(), names(&[SELECT]), "make {setting}");
            assert!(bench.exists("lock.json") && bench.exists("selection.parquet"), "{}", text(&out));
        }
        assert_eq!(bench.run_rules(), names(&[]), "the run's own dataset and selection");
    }

    // The spec names another provider table: that one is watched, the old one no longer.
    std::fs::copy(bench.path("pipeline/providers.yaml"), bench.path("pipeline/other-providers.yaml")).unwrap();
    let spec = std::fs::read_to_string(bench.path("pipeline/spec.yaml")).unwrap();
    let edited = spec.replace("table: providers.yaml", "table: other-providers.yaml");
    assert_ne!(edited, spec, "the bundled spec names its table as `table: providers.yaml`");
    std::fs::write(bench.path("pipeline/spec.yaml"), edited).unwrap();
    assert_eq!(bench.run_rules(), names(&CHECKED), "the changed spec (the real ib-select refuses it)");
    bench.timeline();
    bench.touch("pipeline/providers.yaml");
    assert_eq!(bench.run_rules(), names(&[]), "the table the spec no longer names");
    bench.touch("pipeline/other-providers.yaml");
    assert_eq!(bench.run_rules(), names(&CHECKED), "the table the spec names now");
}

#[test]
fn ib_select_lists_exactly_the_files_the_lock_binds() {
    let ws = Workspace::new();
    let list = |spec: &Path| {
        Command::new(bin(SELECT))
            .args(["--list-inputs", "--spec"])
            .arg(spec)
            .arg("--dataset")
            .arg(ws.dataset())
            .current_dir(ws.dir.path())
            .output()
            .unwrap()
    };
    let out = list(&ws.spec());
    assert!(out.status.success(), "{}", text(&out));
    let listed: Vec<PathBuf> = String::from_utf8(out.stdout).unwrap().lines().map(PathBuf::from).collect();
    let run = ws.run("listed");
    crate::support::ok(ws.stage(SELECT, &run).args(["--per-family", "1", "--sample"]));
    let lock = inferbench_store::lock::read(&run.join("lock.json")).unwrap();
    let mut listed_hashes: Vec<String> = listed.iter().map(|p| file_sha256(p).unwrap()).collect();
    let mut locked_hashes: Vec<String> = lock.inputs.values().cloned().collect();
    listed_hashes.sort();
    locked_hashes.sort();
    assert_eq!(listed_hashes, locked_hashes, "listed: {listed:?}\nlocked: {:?}", lock.inputs);
    assert!(listed.contains(&ws.spec()) && listed.contains(&ws.path("pipeline/providers.yaml")), "{listed:?}");

    std::fs::write(ws.path("bad.yaml"), "benchmark: [\n").unwrap();
    let bad = list(&ws.path("bad.yaml"));
    assert_eq!(bad.status.code(), Some(3), "{}", text(&bad));
    assert!(bad.stdout.is_empty(), "a bad spec lists nothing");
}

#[test]
fn rescore_rederives_the_four_stages_from_the_log_whatever_the_mtimes() {
    let bench = made();
    // An untarred archive: the log older than the schedule it was fetched for, the lock
    // newest, derived files from the future, a spec newer than the lock.
    bench.set_mtime(&format!("{RUN}/events.parquet"), bench.at(10));
    bench.set_mtime(&format!("{RUN}/events/0000.jsonl"), bench.at(10));
    bench.set_mtime(&format!("{RUN}/lock.json"), bench.at(900));
    bench.set_mtime(&format!("{RUN}/report.md"), SystemTime::now() + Duration::from_secs(3600));
    bench.set_mtime(&format!("{RUN}/evaluations.parquet"), SystemTime::now() + Duration::from_secs(3600));
    bench.touch("pipeline/spec.yaml");
    bench.touch(&format!("bin/{FETCH}"));
    assert_eq!(
        bench.stages(&["rescore", &format!("RUN={RUN}")]),
        names(&["cargo", RECONSTRUCT, EVALUATE, AGGREGATE, REPORT])
    );
    let evaluate = bench.log_lines().into_iter().find(|l| l.starts_with(EVALUATE)).unwrap();
    assert!(evaluate.contains("--spec pipeline/spec.yaml --dataset data"), "SPEC and DATASET reach it: {evaluate}");
    // With the archive's mtimes tidy again, rescore still re-derives the four.
    bench.timeline();
    assert_eq!(
        bench.stages(&["rescore", &format!("RUN={RUN}")]),
        names(&["cargo", RECONSTRUCT, EVALUATE, AGGREGATE, REPORT])
    );

    // Without a log it fails at once, in one line, before building anything.
    std::fs::create_dir_all(bench.path("runs/empty")).unwrap();
    let unsealed = bench.path("runs/unsealed/events");
    std::fs::create_dir_all(&unsealed).unwrap();
    std::fs::write(unsealed.join("0000.jsonl"), "{}\n").unwrap();
    for (args, message) in [
        (vec!["rescore", "RUN=runs/empty"], "runs/empty has no event log"),
        (vec!["rescore", "RUN=runs/absent"], "runs/absent has no event log"),
        (vec!["rescore"], "which run?"),
        (vec!["rescore", "RUN=runs/unsealed"], "fetch never finished"),
    ] {
        let out = bench.make(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "make {args:?} succeeded:\n{}", text(&out));
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(message), "make {args:?}: {stderr}");
        assert_eq!(bench.logged(), names(&[]), "make {args:?} built or ran nothing");
    }
}

#[test]
fn run_is_computed_once_even_across_a_second_boundary() {
    let bench = Bench::new();
    // A `date` whose every call is the next second.
    let fake = bench.path("fake-path");
    std::fs::create_dir_all(&fake).unwrap();
    let date = fake.join("date");
    let calls = bench.path("date-calls");
    std::fs::write(
        &date,
        format!(
            "#!/usr/bin/env bash\nn=$(( $(cat {0} 2>/dev/null || echo 0) + 1 ))\necho $n >{0}\nprintf '20261129-1200%02d\\n' $n\n",
            calls.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&date, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default());
    let out = bench.make_with_path(&["-n", "run"], &path);
    assert!(out.status.success(), "make -n run failed:\n{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let runs: Vec<&str> = stdout.match_indices("run-2026").map(|(i, _)| &stdout[i..i + 19]).collect();
    assert!(runs.len() >= 3, "the run directory is named by the sub-make, the stages and the last line:\n{stdout}");
    assert!(runs.iter().all(|r| *r == runs[0]), "one run directory, not {runs:?}:\n{stdout}");
    assert_eq!(std::fs::read_to_string(&calls).unwrap().trim(), "1", "date is asked once");
}

#[test]
fn a_failed_stage_never_costs_the_run_its_lock_or_its_log() {
    let bench = Bench::new();
    // A fetch that wrote its log, sealed it and then failed: make keeps all of it.
    std::fs::write(bench.path("fail/ib-fetch"), "").unwrap();
    let out = bench.make(&["run-files", &format!("RUN={RUN}"), "ENDPOINTS=providers"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(bench.exists("events/0000.jsonl") && bench.exists("events.parquet"), "{}", text(&out));
    std::fs::remove_file(bench.path("fail/ib-fetch")).unwrap();
    // The sealed log is there: finishing the run does not fetch again.
    assert_eq!(bench.run_rules(), names(&derived()));

    // ib-select refusing to check an existing lock (exit 4) leaves the lock and selection.
    bench.timeline();
    bench.touch("pipeline/spec.yaml");
    let out = bench.make(&["run-files", &format!("RUN={RUN}"), "ENDPOINTS=providers", "PER_FAMILY=2"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(bench.logged(), names(&[SELECT]));
    assert!(bench.exists("lock.json") && bench.exists("selection.parquet"), "{}", text(&out));

    // Any other failed stage's outputs are deleted (.DELETE_ON_ERROR), so make re-runs it.
    bench.timeline();
    bench.touch(&format!("bin/{EVALUATE}"));
    std::fs::write(bench.path("fail/ib-evaluate"), "").unwrap();
    let out = bench.make(&["run-files", &format!("RUN={RUN}"), "ENDPOINTS=providers"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(!bench.exists("evaluations.parquet"), "{}", text(&out));
    std::fs::remove_file(bench.path("fail/ib-evaluate")).unwrap();
    assert_eq!(bench.run_rules(), names(&[EVALUATE, AGGREGATE, REPORT]));
}
