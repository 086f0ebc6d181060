//! SIGKILL at random moments, drawn from fixed-seed generators so a failure replays with the
//! same delays: of `ib-fetch` (the run resumes to one final outcome per request and a
//! gap-free log) and of every later stage (the next writer leaves no temporary or journal,
//! groups of outputs are never mixed, a stale output is never accepted). A short-lived stage
//! is rarely caught inside its group commit, so each point of the commit is also left on disk
//! by hand, as a killed process would leave it, and the next stage must recover from it.
use crate::ops::*;
use crate::support::{ok, Sim, Workspace};
use inferbench_contract::event::{Event, Outcome};
use inferbench_store::stages::{self, Stage};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn forty_sigkills_of_fetch_leave_one_outcome_per_request_and_an_identical_rescore() {
    let ws = fast_workspace(0.08);
    let sim = Sim::start(&ws);
    let run = ws.run("run-kills");
    // 18 rounds of 7 requests, each round about as long as the staller's 0.2 s deadline: 40
    // kills within half a second of each start land all along the run, not in its first round.
    select_and_schedule(&ws, &run, 6);
    let fetch_cmd = || fetch(&ws, &run, &sim.url, "0.2");
    let mut delays = SplitMix(0x6b11_5eed);
    let (mut killed, mut finished) = (0, 0);
    while killed < 40 {
        assert!(killed + finished < 200, "the kills never land: {killed} of {}", killed + finished);
        let delay = delays.delay(Duration::from_millis(500));
        let mut child = Guard(spawn_quiet(&mut fetch_cmd()));
        std::thread::sleep(delay);
        child.0.kill().unwrap(); // SIGKILL: no chance to clean up
        let status = child.0.wait().unwrap();
        if status.signal() == Some(9) {
            killed += 1;
        } else {
            assert!(status.success(), "a fetch that was not killed completes: {status:?}");
            finished += 1;
        }
    }
    ok(&mut fetch_cmd());
    drop(sim);

    let facts = check_complete_log(&run);
    assert_no_leftovers(&run, "the fetch after 40 kills");
    // The kills reached requests in flight in several rounds, not only processes starting.
    let mut rounds = BTreeMap::new();
    for e in &facts.events {
        if let Event::RequestStarted(s) = &e.event {
            rounds.insert((s.request_id.clone(), s.attempt), s.round_index);
        }
    }
    let interrupted_rounds: BTreeSet<u64> = facts
        .events
        .iter()
        .filter_map(|e| match &e.event {
            Event::RequestTerminal(t) if t.outcome == Outcome::Interrupted => {
                Some(rounds[&(t.request_id.clone(), t.attempt)])
            }
            _ => None,
        })
        .collect();
    eprintln!(
        "fetch kills: {killed} landed, {finished} fetches finished first; {} segments ({} torn), {} requests \
         interrupted in rounds {interrupted_rounds:?}",
        facts.segments,
        facts.torn,
        facts.interrupted.len()
    );
    assert!(interrupted_rounds.len() >= 3, "kills interrupted requests in only {interrupted_rounds:?}");

    ws.derive(&run);
    check_responses(&run, &facts.interrupted);
    let first = derived(&run);
    ws.derive(&run);
    for (name, bytes) in derived(&run) {
        assert!(bytes == first[name], "{name} differs when re-derived");
    }
    assert_no_leftovers(&run, "the rescore");
}

/// Each later stage, with the outputs it writes (one group commit for more than one).
fn later() -> Vec<&'static Stage> {
    stages::derived().collect()
}

/// The derived files of the run's two states: computed from the first log segment (old),
/// and from the whole log (new).
struct Versions {
    old: BTreeMap<&'static str, Vec<u8>>,
    new: BTreeMap<&'static str, Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Version {
    Old,
    New,
}

impl Versions {
    /// Sets the run's derived files as a killed run of stage `i` finds them: the stages
    /// before it have written the new files, it and those after it not yet.
    fn before_stage(&self, run: &Path, i: usize) {
        for (j, stage) in later().iter().enumerate() {
            let files = if j < i { &self.new } else { &self.old };
            for name in stage.outputs {
                std::fs::write(run.join(name), &files[name]).unwrap();
            }
        }
    }

    /// Which version `name` holds: any other bytes are a torn or foreign write.
    fn of(&self, run: &Path, name: &str) -> Version {
        let bytes = std::fs::read(run.join(name)).unwrap();
        match (bytes == self.old[name], bytes == self.new[name]) {
            (true, _) => Version::Old,
            (_, true) => Version::New,
            _ => panic!("{name} is neither the old nor the new file: a torn or mixed write"),
        }
    }

    /// The version every output of stage `i` holds; they must agree.
    fn group(&self, run: &Path, i: usize) -> Version {
        let outputs = later()[i].outputs;
        let versions: Vec<Version> = outputs.iter().map(|name| self.of(run, name)).collect();
        assert!(versions.iter().all(|v| *v == versions[0]), "a mixed group: {outputs:?} are {versions:?}");
        versions[0]
    }
}

/// After a killed run of stage `i` left its outputs at `version` (once recovered), the next
/// stage takes the writer lock (finishing or dropping the group) and must accept the new
/// outputs and refuse the old, stale ones; nothing a killed writer left survives it.
fn check_next_writer(ws: &Workspace, run: &Path, versions: &Versions, i: usize, version: Version) {
    let (next, stale) = match i {
        0 => ("ib-evaluate", Some(["responses.parquet: ", "rerun ib-reconstruct"])),
        1 => ("ib-aggregate", Some(["evaluations.parquet: it was derived from", "rerun ib-evaluate"])),
        2 => ("ib-report", Some(["metrics.json: it was derived from", "rerun ib-aggregate"])),
        // Nothing reads the report: any stage that takes the lock recovers its group.
        _ => ("ib-evaluate", None),
    };
    let out = run_bounded(&mut ws.stage(next, run), LIMIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let what = format!("{next} after a killed {} left its outputs {version:?}", later()[i].binary);
    match (version, stale) {
        (Version::Old, Some(messages)) => {
            assert_eq!(out.status.code(), Some(4), "{what}: a stale input is refused: {stderr}");
            assert!(messages.iter().all(|m| stderr.contains(m)), "{what}: {stderr}");
        }
        _ => assert!(out.status.success(), "{what}: {stderr}"),
    }
    assert_no_leftovers(run, &what);
    assert_eq!(versions.group(run, i), version, "{what}: the group is not the one the killed stage left");
    check_groups(run, i);
}

fn check_groups(run: &Path, i: usize) {
    match i {
        2 => check_metrics_group(run),
        3 => check_report_group(run),
        _ => {}
    }
}

/// The next run of stage `i` itself: it completes, writes the new files and leaves nothing.
fn rerun(ws: &Workspace, run: &Path, versions: &Versions, i: usize) {
    ok(&mut ws.stage(later()[i].binary, run));
    assert_no_leftovers(run, &format!("the rerun of {}", later()[i].binary));
    assert_eq!(versions.group(run, i), Version::New);
    check_groups(run, i);
}

/// Where a kill landed, as read from what it left.
#[derive(Debug, Default)]
struct Landed {
    before_writing: usize,
    temporaries: usize,
    journal: usize,
    after: usize,
}

/// How a killed group commit is left on disk: `Temporaries(k)`: killed while writing the
/// k-th temporary (the earlier ones whole, it half); `JournalTemporary`: killed while writing
/// the journal, before its rename (the commit point); `Committed(r)`: killed after the commit
/// point with the first r outputs renamed into place.
#[derive(Debug, Clone, Copy)]
enum Point {
    Temporaries(usize),
    JournalTemporary,
    Committed(usize),
}

/// The pid in a killed writer's temporary names (atomic.rs: `.<name>.<pid>.tmp`).
const DEAD_PID: u32 = 4_000_001;

fn temporary(name: &str) -> String {
    format!(".{name}.{DEAD_PID}.tmp")
}

/// Leaves `outputs`' group commit of the new files at `point`, in atomic.rs's own layout:
/// temporaries beside the outputs, then the journal `.commit.json` naming every
/// (temporary, output) pair, then the renames.
fn leave(run: &Path, outputs: &[&str], new: &BTreeMap<&str, Vec<u8>>, point: Point) {
    let write_temporaries = |count: usize| {
        for name in &outputs[..count] {
            std::fs::write(run.join(temporary(name)), &new[name]).unwrap();
        }
    };
    let renames: Vec<[String; 2]> = outputs.iter().map(|name| [temporary(name), name.to_string()]).collect();
    let journal = serde_json::to_vec(&serde_json::json!({ "renames": renames })).unwrap();
    match point {
        Point::Temporaries(k) => {
            write_temporaries(k - 1);
            let half = &new[outputs[k - 1]][..new[outputs[k - 1]].len() / 2];
            std::fs::write(run.join(temporary(outputs[k - 1])), half).unwrap();
        }
        Point::JournalTemporary => {
            write_temporaries(outputs.len());
            std::fs::write(run.join(temporary(".commit.json")), &journal).unwrap();
        }
        Point::Committed(renamed) => {
            write_temporaries(outputs.len());
            std::fs::write(run.join(".commit.json"), &journal).unwrap();
            for name in &outputs[..renamed] {
                std::fs::rename(run.join(temporary(name)), run.join(name)).unwrap();
            }
        }
    }
}

#[test]
fn killed_later_stages_leave_whole_groups_and_no_stale_outputs() {
    let ws = fast_workspace(0.1);
    let run = ws.run("run-stages");
    let old = {
        let sim = Sim::start(&ws);
        stale_run(&ws, &sim, &run);
        derived(&run)
    };
    ws.derive(&run);
    let versions = Versions { old, new: derived(&run) };
    for name in stages::derived_files() {
        assert!(versions.old[name] != versions.new[name], "{name}: the two states must differ to tell them apart");
    }

    // Real kills at random moments of each stage's run.
    let mut delays = SplitMix(0x57a6_e5ed);
    for (i, &Stage { binary: stage, outputs, .. }) in later().iter().enumerate() {
        // An unkilled run first: how long it takes is the window the kill delays are drawn from.
        versions.before_stage(&run, i);
        let started = Instant::now();
        rerun(&ws, &run, &versions, i);
        let took = started.elapsed();
        let kills = if i == 0 { 5 } else { 8 };
        let mut landed = Landed::default();
        for _ in 0..kills {
            versions.before_stage(&run, i);
            let mut child = Guard(spawn_quiet(&mut ws.stage(stage, &run)));
            std::thread::sleep(delays.delay(took.mul_f64(1.2)));
            child.0.kill().unwrap();
            child.0.wait().unwrap();
            // Every output is whole, old or new; with no journal, no rename has begun, so
            // they agree; with one, the next writer finishes the renames.
            let journal = run.join(".commit.json").exists();
            let on_disk: Vec<Version> = outputs.iter().map(|name| versions.of(&run, name)).collect();
            let version = if journal { Version::New } else { versions.group(&run, i) };
            match (journal, on_disk[0], leftovers(&run).is_empty()) {
                (true, ..) => landed.journal += 1,
                (false, Version::New, _) => landed.after += 1,
                (false, Version::Old, true) => landed.before_writing += 1,
                (false, Version::Old, false) => landed.temporaries += 1,
            }
            check_next_writer(&ws, &run, &versions, i, version);
            versions.before_stage(&run, i);
            rerun(&ws, &run, &versions, i);
        }
        eprintln!("{stage}: {kills} kills within {took:?}: {landed:?}");
    }

    // Every point of a group commit, left by hand.
    for i in [2, 3] {
        let outputs = later()[i].outputs;
        let mut points: Vec<Point> = (1..=outputs.len()).map(Point::Temporaries).collect();
        points.push(Point::JournalTemporary);
        points.extend((0..=outputs.len()).map(Point::Committed));
        for point in points {
            versions.before_stage(&run, i);
            leave(&run, outputs, &versions.new, point);
            let version = if matches!(point, Point::Committed(_)) { Version::New } else { Version::Old };
            check_next_writer(&ws, &run, &versions, i, version);
            versions.before_stage(&run, i);
            leave(&run, outputs, &versions.new, point);
            rerun(&ws, &run, &versions, i);
        }
    }
}
