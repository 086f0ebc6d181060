//! What `make` reads to decide what is stale, checked against the code that decides it.
use crate::support::{bin, Workspace};
use inferbench_schemas::lock::Lock;
use inferbench_schemas::run::file_sha256;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SELECT: &str = "ib-select";

fn text(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
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
    let lock = Lock::read(&run.join("lock.json")).unwrap();
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
