//! Checking that a derived file was derived from the run's current files.
//!
//! Every derived file records the SHA-256 of the files it was computed from (Parquet metadata
//! `inferbench.inputs`, or a `provenance.inputs` JSON field). Before a stage uses one, it
//! compares those hashes with the files in the run now: a `schedule.parquet` copied from
//! another run names another `lock.json`; a `responses.parquet` computed before the log grew
//! names fewer segments; a `metrics.json` computed before a re-evaluation names another
//! `evaluations.parquet`. Each is refused (exit 4), naming the file, the input that changed
//! and the stage to rerun, rather than rendered into figures that belong to nothing.
use crate::run::RunDir;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::canonical::short_hash;
use inferbench_contract::{Error, Result};
use std::collections::BTreeMap;

pub use inferbench_contract::provenance::Inputs;

/// The run's own files a derived file may name, other than the log segments.
const RUN_FILES: [&str; 5] =
    [RunDir::LOCK, RunDir::SELECTION, RunDir::SCHEDULE, RunDir::RESPONSES, RunDir::EVALUATIONS];

/// Hashes of the run's files, computed once per stage.
#[derive(Debug, Default)]
pub struct Current {
    hashes: BTreeMap<String, Option<String>>,
}

impl Current {
    /// The file's SHA-256 now, `None` when it does not exist.
    fn hash(&mut self, run: &RunDir, name: &str) -> Result<Option<String>> {
        if let Some(known) = self.hashes.get(name) {
            return Ok(known.clone());
        }
        let segment = RunDir::segment_number(name);
        let path = run.root().join(name);
        let hash = if let Some(number) = segment {
            // A sealed segment is still named by its original JSONL and that file's hash.
            crate::inventory::segment_sha256(run, number)?
        } else if path.exists() {
            Some(file_sha256(&path)?)
        } else {
            None
        };
        self.hashes.insert(name.to_string(), hash.clone());
        Ok(hash)
    }

    /// Records a hash the stage computed itself (e.g. of an input it read).
    pub fn insert(&mut self, name: &str, hash: &str) {
        self.hashes.insert(name.to_string(), Some(hash.to_string()));
    }
}

/// Checks `recorded`, the provenance of the derived file `file` of `run` (written by the stage
/// `writer`), against the run's files now. `external` holds the hashes the stage verified
/// against the lock (spec, provider table, dataset files); recorded ones must equal them.
pub fn verify(
    run: &RunDir,
    current: &mut Current,
    file: &str,
    writer: &str,
    recorded: &Inputs,
    external: &Inputs,
) -> Result<()> {
    let stale = |why: String| {
        Error::LockMismatch(format!(
            "{file}: {why}, so it was not derived from this run's current files; rerun {writer} (and the stages \
             after it)"
        ))
    };
    if !recorded.contains_key(RunDir::LOCK) {
        return Err(stale(format!("records no {} among its inputs", RunDir::LOCK)));
    }
    for (name, hash) in recorded {
        let now = if RunDir::is_log_file(name) && unchanged_since(run, name, file) {
            Some(hash.clone())
        } else if RUN_FILES.contains(&name.as_str()) || RunDir::is_log_file(name) {
            current.hash(run, name)?
        } else if let Some(hash) = external.get(name) {
            Some(hash.clone())
        } else {
            continue;
        };
        match now {
            Some(now) if &now == hash => {}
            Some(now) => {
                return Err(stale(format!(
                    "it was derived from {name} sha256 {}…, but the run's {name} is {}…",
                    short_hash(hash),
                    short_hash(&now)
                )))
            }
            None => return Err(stale(format!("it was derived from {name}, which the run no longer has"))),
        }
    }
    if recorded.keys().any(|k| RunDir::is_log_file(k)) {
        let segments = run.segments().map_err(|e| Error::io(run.events_dir(), e))?;
        for (number, _) in segments {
            let name = RunDir::segment_name(number);
            if !recorded.contains_key(&name) {
                return Err(stale(format!("the run's log has grown since: {name} is not among its inputs")));
            }
        }
    }
    Ok(())
}

/// Whether the log segment `segment` was last modified before the derived file `derived`
/// was written, so that the hash `derived` recorded for it still holds: a segment is
/// append-only and closed once a later stage has read it, and any write to it (an edit, an
/// append, a copy over it) moves its mtime past the derived file's. Re-hashing the whole log
/// on every stage would cost more than the stage itself (the log of a 6,000-request run is
/// 130 MB, a million requests' tens of GB). Any doubt (no mtime, a newer segment) hashes it.
fn unchanged_since(run: &RunDir, segment: &str, derived: &str) -> bool {
    let modified = |name: &str| std::fs::metadata(run.root().join(name)).and_then(|m| m.modified()).ok();
    matches!((modified(segment), modified(derived)), (Some(s), Some(d)) if s <= d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(files: &[(&str, &str)]) -> (tempfile::TempDir, RunDir) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("events")).unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let run = RunDir::new(dir.path());
        (dir, run)
    }

    fn sha(text: &str) -> String {
        inferbench_contract::canonical::sha256_hex(text.as_bytes())
    }

    fn check(run: &RunDir, recorded: &[(&str, String)]) -> Result<()> {
        let recorded: Inputs = recorded.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let external = Inputs::from([("spec.yaml".to_string(), sha("spec"))]);
        verify(run, &mut Current::default(), "responses.parquet", "ib-reconstruct", &recorded, &external)
    }

    #[test]
    fn matching_inputs_pass() {
        let (_d, run) = run_with(&[("lock.json", "lock"), ("events/0001.jsonl", "log")]);
        check(&run, &[("lock.json", sha("lock")), ("events/0001.jsonl", sha("log")), ("spec.yaml", sha("spec"))])
            .unwrap();
    }

    #[test]
    fn another_lock_a_grown_log_and_a_missing_input_are_stale() {
        let (_d, run) = run_with(&[("lock.json", "lock"), ("events/0001.jsonl", "log"), ("events/0002.jsonl", "more")]);
        let err = check(&run, &[("lock.json", sha("other lock"))]).unwrap_err();
        assert!(matches!(err, Error::LockMismatch(_)));
        assert!(err.to_string().starts_with("responses.parquet: it was derived from lock.json sha256"), "{err}");
        assert!(err.to_string().ends_with("rerun ib-reconstruct (and the stages after it)"), "{err}");
        let err = check(&run, &[("lock.json", sha("lock")), ("events/0001.jsonl", sha("log"))]).unwrap_err();
        assert!(err.to_string().contains("events/0002.jsonl is not among its inputs"), "{err}");
        let err = check(&run, &[("lock.json", sha("lock")), ("evaluations.parquet", sha("x"))]).unwrap_err();
        assert!(err.to_string().contains("evaluations.parquet, which the run no longer has"), "{err}");
        let err = check(&run, &[("lock.json", sha("lock")), ("spec.yaml", sha("old spec"))]).unwrap_err();
        assert!(err.to_string().contains("derived from spec.yaml"), "{err}");
    }

    #[test]
    fn a_segment_older_than_the_derived_file_is_not_hashed_again_and_a_newer_one_is() {
        use std::time::{Duration, SystemTime};
        let (dir, run) = run_with(&[("lock.json", "lock"), ("events/0001.jsonl", "log"), ("responses.parquet", "t")]);
        let set = |name: &str, t: SystemTime| {
            std::fs::File::options().write(true).open(dir.path().join(name)).unwrap().set_modified(t).unwrap()
        };
        let now = SystemTime::now();
        set("events/0001.jsonl", now - Duration::from_secs(60));
        set("responses.parquet", now);
        // The recorded hash is taken as it is: the segment has not been written since.
        check(&run, &[("lock.json", sha("lock")), ("events/0001.jsonl", sha("what was read"))]).unwrap();
        // Written after the table was: hashed, and found changed.
        set("events/0001.jsonl", now + Duration::from_secs(60));
        let err = check(&run, &[("lock.json", sha("lock")), ("events/0001.jsonl", sha("what was read"))]).unwrap_err();
        assert!(err.to_string().contains("derived from events/0001.jsonl sha256"), "{err}");
        check(&run, &[("lock.json", sha("lock")), ("events/0001.jsonl", sha("log"))]).unwrap();
    }

    #[test]
    fn a_file_without_provenance_is_refused() {
        let (_d, run) = run_with(&[("lock.json", "lock")]);
        let err = check(&run, &[]).unwrap_err();
        assert!(err.to_string().contains("records no lock.json among its inputs"), "{err}");
    }
}
