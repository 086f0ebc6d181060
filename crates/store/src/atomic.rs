//! Atomic publication of derived files: temporary file in the same directory, fsync, rename.
//! A reader (or `make`) never sees a half-written output, and a failed stage leaves the
//! previous output untouched.
//!
//! Outputs written together (`metrics.json`, `metrics.parquet` and `comparisons.json`;
//! `report.md` and `manifest.json`) are published as a [`Group`]: all temporary files are
//! written and synced first, then a journal naming them is renamed into place (the commit
//! point), then each is renamed over its output. A stage killed before the commit point
//! leaves the old outputs; killed after it, the next stage to take the run's writer lock
//! finishes the renames ([`recover`]). Either way the group is all old or all new, and no
//! temporary file outlives the next run of a stage.
//!
//! A write that fails (a full disk at the write, the sync or the rename) removes its
//! temporary file, and so does a group that fails or is dropped before its commit point: a
//! failed stage leaves the run as it found it. Only a group whose journal is in place keeps
//! its temporaries after a failure, for [`recover`] to finish publishing.
use inferbench_contract::{Error, Result};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The journal of a group commit in progress, in the outputs' directory.
pub const JOURNAL: &str = ".commit.json";

fn parent(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

pub(crate) fn temporary(path: &Path) -> Result<PathBuf> {
    // A path without a file name is the caller's bug, not the user's input: a write failure.
    let name = path
        .file_name()
        .ok_or_else(|| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path")))?;
    Ok(parent(path).join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id())))
}

/// The steps of an atomic write that can fail, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Write,
    Sync,
    Rename,
}

#[cfg(test)]
thread_local! {
    /// The step at which this thread's writes fail: how the tests reach every failure path.
    static FAIL_AT: std::cell::Cell<Option<Step>> = const { std::cell::Cell::new(None) };
}

/// Before `step`: a failure injected by a test (a full disk), else nothing.
fn before(step: Step) -> std::io::Result<()> {
    #[cfg(test)]
    if FAIL_AT.with(|f| f.get()) == Some(step) {
        return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, format!("no space left ({step:?})")));
    }
    let _ = step;
    Ok(())
}

/// Writes `bytes` to a new file and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    let (head, tail) = bytes.split_at(bytes.len() / 2);
    file.write_all(head)?;
    // A disk that fills mid-write leaves part of the bytes written.
    before(Step::Write)?;
    file.write_all(tail)?;
    before(Step::Sync)?;
    file.sync_all()
}

fn rename(from: &Path, to: &Path) -> std::io::Result<()> {
    before(Step::Rename)?;
    std::fs::rename(from, to)
}

/// Makes the directory's entries (the renames) durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Writes `bytes` to `path` atomically. The parent directory must exist.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temporary(path)?;
    let result = write_synced(&tmp, bytes).and_then(|()| rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Pretty JSON with a trailing newline.
pub fn json_bytes<T: serde::Serialize>(path: &Path, value: &T) -> Result<Vec<u8>> {
    // Our own value failing to serialise is a failure of the stage (exit 1), not bad input.
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    text.push('\n');
    Ok(text.into_bytes())
}

/// Serialises `value` as pretty JSON with a trailing newline and writes it atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    write(path, &json_bytes(path, value)?)
}

/// Outputs published together: all new or all old. Dropped without a commit (or failing
/// before its commit point), it removes the temporary files it wrote.
#[derive(Debug)]
pub struct Group {
    dir: PathBuf,
    /// (temporary file, output) pairs, written and synced.
    files: Vec<(PathBuf, PathBuf)>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    /// (temporary file name, output file name) pairs, relative to the journal's directory.
    renames: Vec<(String, String)>,
}

impl Group {
    /// A group of outputs in `dir`.
    pub fn new(dir: &Path) -> Group {
        Group { dir: dir.to_path_buf(), files: Vec::new() }
    }

    /// Writes one output's bytes to its temporary file.
    pub fn add(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        if parent(path) != self.dir {
            let outside = std::io::Error::new(std::io::ErrorKind::InvalidInput, "outside the group's directory");
            return Err(Error::io(path, outside));
        }
        let tmp = temporary(path)?;
        if let Err(e) = write_synced(&tmp, bytes) {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(path, e));
        }
        self.files.push((tmp, path.to_path_buf()));
        Ok(())
    }

    /// Publishes every output of the group. A failure before the commit point removes the
    /// temporary files; after it, they stay with the journal for [`recover`] to publish.
    pub fn commit(mut self) -> Result<()> {
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let journal = Journal { renames: self.files.iter().map(|(tmp, out)| (name(tmp), name(out))).collect() };
        let journal_path = self.dir.join(JOURNAL);
        let bytes = serde_json::to_vec(&journal)
            .map_err(|e| Error::io(&journal_path, std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        // The journal's own rename is the commit point.
        write(&journal_path, &bytes)?;
        self.files.clear();
        finish(&self.dir, &journal)
    }

    /// Removes the temporary files of a group that will not be committed (as dropping it does).
    pub fn abandon(self) {}
}

impl Drop for Group {
    fn drop(&mut self) {
        for (tmp, _) in self.files.drain(..) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

fn finish(dir: &Path, journal: &Journal) -> Result<()> {
    for (tmp, out) in &journal.renames {
        let (tmp, out) = (dir.join(tmp), dir.join(out));
        if tmp.exists() {
            rename(&tmp, &out).map_err(|e| Error::io(&out, e))?;
        }
    }
    sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    std::fs::remove_file(dir.join(JOURNAL)).map_err(|e| Error::io(dir.join(JOURNAL), e))?;
    sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// What [`recover`] found.
#[derive(Debug, Default, PartialEq)]
pub struct Recovered {
    /// A group commit that a killed stage left half done, now finished.
    pub finished_commit: bool,
    /// Temporary files of killed writers, removed.
    pub removed_temporaries: Vec<String>,
}

/// Finishes a committed group and removes stray temporary files in `dir`. Call it only while
/// holding the directory's writer lock: no one else may be writing.
pub fn recover(dir: &Path) -> Result<Recovered> {
    let mut recovered = Recovered::default();
    let journal_path = dir.join(JOURNAL);
    if journal_path.exists() {
        let journal: Journal = read_json(&journal_path)?;
        finish(dir, &journal)?;
        recovered.finished_commit = true;
    }
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') && name.ends_with(".tmp") && path.is_file() {
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            recovered.removed_temporaries.push(name);
        }
    }
    recovered.removed_temporaries.sort();
    Ok(recovered)
}

/// Reads a whole input file, naming it in the error. A file that cannot be read (missing, a
/// directory, no permission) is bad input: the caller was given a wrong path.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::unreadable(path, e))
}

/// Reads and parses a JSON file, naming the file, line and column of a syntax error.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = read(path)?;
    serde_json::from_slice(&bytes).map_err(|e| Error::bad(format!("{}:{}: {e}", path.display(), e.line())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_content_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
    }

    #[test]
    fn a_group_is_published_whole_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        write(&a, b"old a").unwrap();
        write(&b, b"old b").unwrap();
        let mut group = Group::new(dir.path());
        group.add(&a, b"new a").unwrap();
        group.add(&b, b"new b").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"old a", "nothing is visible before the commit");
        group.commit().unwrap();
        assert_eq!((std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()), (b"new a".to_vec(), b"new b".to_vec()));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_commit_killed_after_its_journal_is_finished_and_one_killed_before_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        write(&a, b"old a").unwrap();
        write(&b, b"old b").unwrap();
        // Killed after the commit point, with only the first rename done.
        let mut group = Group::new(dir.path());
        group.add(&a, b"new a").unwrap();
        group.add(&b, b"new b").unwrap();
        let journal = Journal {
            renames: group
                .files
                .iter()
                .map(|(t, o)| {
                    (t.file_name().unwrap().to_string_lossy().into(), o.file_name().unwrap().to_string_lossy().into())
                })
                .collect(),
        };
        write(&dir.path().join(JOURNAL), &serde_json::to_vec(&journal).unwrap()).unwrap();
        std::fs::rename(&group.files[0].0, &a).unwrap();
        let recovered = recover(dir.path()).unwrap();
        assert!(recovered.finished_commit);
        assert_eq!((std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()), (b"new a".to_vec(), b"new b".to_vec()));
        // Killed before the commit point: the temporaries go, the outputs stay.
        let mut group = Group::new(dir.path());
        group.add(&a, b"newer a").unwrap();
        group.add(&b, b"newer b").unwrap();
        std::mem::forget(group);
        let recovered = recover(dir.path()).unwrap();
        assert_eq!((recovered.finished_commit, recovered.removed_temporaries.len()), (false, 2));
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    /// Runs `f` with this thread's writes failing at `step`, if any.
    fn failing_at<T>(step: Option<Step>, f: impl FnOnce() -> T) -> T {
        FAIL_AT.with(|s| s.set(step));
        let out = f();
        FAIL_AT.with(|s| s.set(None));
        out
    }

    #[test]
    fn a_write_that_fails_at_any_step_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        write(&path, b"old report").unwrap();
        for step in [Step::Write, Step::Sync, Step::Rename] {
            let err = failing_at(Some(step), || write(&path, b"a new report, longer than the old")).unwrap_err();
            assert!(matches!(err, Error::Io { .. }) && err.to_string().contains("no space left"), "{step:?}: {err}");
            assert_eq!(names(dir.path()), ["report.md"], "{step:?}");
            assert_eq!(std::fs::read(&path).unwrap(), b"old report");
        }
    }

    #[test]
    fn a_group_that_fails_before_its_commit_point_leaves_the_old_outputs_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let [md, html, manifest] = ["report.md", "report.html", "manifest.json"].map(|n| dir.path().join(n));
        for path in [&md, &html, &manifest] {
            write(path, b"old").unwrap();
        }
        let before = names(dir.path());
        let publish = |at_second: Option<Step>, at_commit: Option<Step>| -> Result<()> {
            let mut group = Group::new(dir.path());
            group.add(&md, b"new report")?;
            failing_at(at_second, || group.add(&html, b"new page"))?;
            group.add(&manifest, b"new manifest")?;
            failing_at(at_commit, || group.commit())
        };
        let unchanged = |what: &str| {
            assert_eq!(names(dir.path()), before, "{what}: no temporary, no journal");
            assert_eq!(std::fs::read(&md).unwrap(), b"old", "{what}");
        };
        // The disk fills at the second output, at its write or its sync: the first output's
        // temporary goes too.
        for step in [Step::Write, Step::Sync] {
            assert!(publish(Some(step), None).is_err());
            unchanged(&format!("second output, {step:?}"));
        }
        // Or at the journal, the commit point: its write, its sync or its rename.
        for step in [Step::Write, Step::Sync, Step::Rename] {
            assert!(publish(None, Some(step)).is_err());
            unchanged(&format!("journal, {step:?}"));
        }
        // Or the stage gives up on an error of its own and drops the group.
        let mut group = Group::new(dir.path());
        group.add(&md, b"new report").unwrap();
        drop(group);
        unchanged("dropped");
        publish(None, None).unwrap();
        assert_eq!((names(dir.path()), std::fs::read(&md).unwrap()), (before, b"new report".to_vec()));
    }

    #[test]
    fn write_into_missing_directory_fails_with_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/out.json");
        let err = write(&path, b"x").unwrap_err();
        assert!(err.to_string().contains("missing/out.json"), "{err}");
        assert!(matches!(err, Error::Io { .. }), "a failed write is a failure of the stage, not bad input");
    }

    #[test]
    fn reading_a_missing_or_broken_input_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(&dir.path().join("absent.json")).unwrap_err();
        assert!(matches!(err, Error::Unreadable { .. }), "{err:?}");
        assert!(err.is_bad_input());
        assert!(read(dir.path()).unwrap_err().is_bad_input(), "a directory is not a readable file");
        std::fs::write(dir.path().join("torn.json"), b"{\"a\": [1,").unwrap();
        let err = read_json::<serde_json::Value>(&dir.path().join("torn.json")).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("torn.json:1:"), "{err}");
    }
}
