//! Embeds the git commit into `CODE_VERSION`, so every output names the code that wrote it.
//!
//! Cargo reruns this script only when the commit can have changed: the files git reads to
//! resolve HEAD (found with `git rev-parse --git-path`, so a worktree, whose `.git` is a file,
//! works too). A path that does not exist would make cargo rerun it, and relink every binary,
//! on every build, so only existing paths are watched.
use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok().filter(|o| o.status.success())?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown commit".to_string());
    println!("cargo:rustc-env=IB_GIT_COMMIT={commit}");
    let mut watched: Vec<PathBuf> = Vec::new();
    for name in ["HEAD", "packed-refs"] {
        watched.extend(git(&["rev-parse", "--git-path", name]).map(PathBuf::from));
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.extend(git(&["rev-parse", "--git-path", &branch]).map(PathBuf::from));
    }
    let existing: Vec<&PathBuf> = watched.iter().filter(|p| p.exists()).collect();
    if existing.is_empty() {
        // Not a git checkout: the commit cannot change, and the script's own source is the
        // only input.
        println!("cargo:rerun-if-changed=build.rs");
    }
    for path in existing {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
