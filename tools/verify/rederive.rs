//! Re-deriving the stages after the run's record (reconstruct → evaluate → aggregate →
//! report, as `inferbench_store::stages` orders them and gives their flags) into a temporary
//! copy of the run that shares its raw inputs, with the stage binaries beside `ib-verify`, and comparing each
//! derived file byte for byte. Every stage is deterministic (`make rescore` rewrites the same
//! bytes), and `manifest.json`'s host facts come from the log's own records, not from the
//! machine that re-derives, so all of them compare whole.
use crate::failure::Failure;
use anyhow::Context;
use inferbench_contract::manifest::Manifest;
use inferbench_store::run::RunDir;
use inferbench_store::stages::{self, Flag};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the stages are run: a directory removed when done with.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The flags of the stages that read them.
pub struct Stages<'a> {
    pub spec: &'a Path,
    pub dataset: Option<&'a Path>,
    /// `reference` when the run's responses were derived under the reference's rules.
    pub rules: &'a str,
}

/// Re-derives the run's derived files from its inputs and compares them with the run's.
/// Returns how many files were compared.
pub fn check(run: &RunDir, manifest: &Manifest, stages: &Stages) -> anyhow::Result<usize> {
    let bin_dir =
        std::env::current_exe().context("where ib-verify is")?.parent().map(Path::to_path_buf).unwrap_or_default();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let scratch = Scratch(std::env::temp_dir().join(format!("ib-verify-{}-{nanos}", std::process::id())));
    let copy = RunDir::new(scratch.0.join("run"));
    // Everything but what the derived stages write is their input.
    let derived: Vec<&str> = stages::derived_files().collect();
    for name in manifest.files.keys().filter(|n| !derived.contains(&n.as_str())) {
        share(&run.root().join(name), &copy.root().join(name))?;
    }
    let spec = absolute(stages.spec)?;
    let dataset = stages.dataset.map(absolute).transpose()?;
    for derived in stages::derived() {
        let mut command = stage(&bin_dir, derived.binary, &copy);
        for flag in derived.flags {
            let value = match flag {
                Flag::Spec => Some(spec.as_os_str()),
                Flag::Rules => Some(std::ffi::OsStr::new(stages.rules)),
                // Not given: the spec's dataset.source, as the stage itself defaults.
                Flag::Dataset => dataset.as_deref().map(Path::as_os_str),
            };
            if let Some(value) = value {
                command.arg(flag.name()).arg(value);
            }
        }
        let first_output = derived.outputs[0];
        let program = command.get_program().to_string_lossy().into_owned();
        let out = command.output().with_context(|| format!("{program}: cannot run (is it built beside ib-verify?)"))?;
        if !out.status.success() {
            return Err(Failure::new(
                first_output,
                format!(
                    "cannot be re-derived: {} exited {}: {} (give --spec and --dataset the run was locked with)",
                    Path::new(&program).file_name().unwrap_or_default().to_string_lossy(),
                    out.status.code().map_or("on a signal".to_string(), |c| c.to_string()),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            )
            .into());
        }
    }
    let mut compared = 0;
    for name in derived {
        let ours = run.root().join(name);
        if !ours.exists() {
            continue;
        }
        let theirs = copy.root().join(name);
        let old = std::fs::read(&ours).with_context(|| format!("{}: cannot read", ours.display()))?;
        let new = std::fs::read(&theirs).map_err(|_| Failure::new(name, "the re-derivation wrote no such file"))?;
        if old != new {
            return Err(Failure::new(name, differs(&old, &new, manifest)).into());
        }
        compared += 1;
    }
    Ok(compared)
}

/// What differs between a file and its re-derivation.
fn differs(old: &[u8], new: &[u8], manifest: &Manifest) -> String {
    let at = old.iter().zip(new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
    let mut text = format!(
        "differs from its re-derivation from the run's inputs, first at byte {at} ({} bytes in the run, {} re-derived)",
        old.len(),
        new.len()
    );
    if manifest.written_by != inferbench_contract::CODE_VERSION {
        text.push_str(&format!(
            "; the run was derived by {}, and this is {}: verify with the code that derived it, or --skip-rederive",
            manifest.written_by,
            inferbench_contract::CODE_VERSION
        ));
    }
    text
}

fn stage(bin_dir: &Path, name: &str, run: &RunDir) -> Command {
    let mut command = Command::new(bin_dir.join(name));
    command.arg("--run").arg(run.root());
    // The flags are given; none of the verifier's own environment chooses another run.
    for var in ["IB_RUN", "IB_SPEC", "IB_DATASET", "IB_RULES"] {
        command.env_remove(var);
    }
    command
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("{}: cannot resolve", path.display()))
}

/// `to` shares `from`'s bytes: a hard link (no copy of a large log), or a copy across file
/// systems. The stages replace their outputs by renaming, never writing into an input, so a
/// shared input is never changed.
fn share(from: &Path, to: &Path) -> anyhow::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("{}: cannot create", parent.display()))?;
    }
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).with_context(|| format!("{}: cannot copy to {}", from.display(), to.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_is_placed_and_the_code_versions_named_when_they_differ() {
        let mut manifest: Manifest = serde_json::from_value(serde_json::json!({
            "v": 1, "run_id": "r", "workflow": "w", "benchmark_slug": "b", "status": "complete",
            "status_reasons": [], "scheduled_requests": 1, "responses": 1,
            "written_by": inferbench_contract::CODE_VERSION, "locked_by": "x",
            "execution": {"segments": [], "wall_clock_period": null, "clock": "c", "endpoint_mode": null,
                          "resumed_rounds": 0, "resent_attempts": 0},
            "files": {}
        }))
        .unwrap();
        let text = differs(b"abcd", b"abXd", &manifest);
        assert!(text.contains("first at byte 2 (4 bytes in the run, 4 re-derived)"), "{text}");
        assert!(!text.contains("derived by"));
        assert!(differs(b"ab", b"abc", &manifest).contains("first at byte 2"));
        manifest.written_by = "inferbench 0.0.1 (old)".into();
        assert!(differs(b"a", b"b", &manifest).contains("derived by inferbench 0.0.1 (old)"));
    }
}
