//! `lock.json`: what a run is bound to. `ib-select` writes it once; every later stage
//! recomputes the hashes of the inputs it reads and refuses, naming what changed, when one
//! differs. Keys are logical names, never machine paths, so a run directory is portable.
use crate::run::file_sha256;
use crate::spec::Spec;
use crate::{atomic, Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lock {
    pub v: u32,
    pub run_id: String,
    pub workflow: String,
    pub benchmark_slug: String,
    /// The code that created the run.
    pub code_version: String,
    /// Logical name → SHA-256 of every bound input: `spec.yaml`, the providers
    /// (`providers.yaml`, the table file; or `providers.vendors`, the canonical JSON of the
    /// table a spec's inline vendors resolve to), `manifest.json`, `<family>.jsonl`, and each
    /// prompt template under the path the spec names it by (`prompts/<file>`).
    pub inputs: BTreeMap<String, String>,
    pub dataset_release_hash: String,
    pub selection: LockSelection,
    pub tokenizer: LockTokenizer,
    /// Provider names, in launch-rotation base order.
    pub providers: Vec<String>,
    /// Set when `ib-import` made the run from a reference runner's run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<ImportedFrom>,
}

/// The reference run an imported run was made from, as the reference's own lock identifies it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ImportedFrom {
    /// `openbench-inference` (the reference runner).
    pub runner: String,
    pub run_id: String,
    /// `smoke` or `full`.
    pub kind: String,
    /// The smoke attempt; null for the full run.
    pub attempt: Option<u32>,
    /// The reference's directory of the records imported: `attempt-N` or `full`.
    pub partition: String,
    /// SHA-256 of the reference's `run-lock.json` (its bytes, as copied to `reference/`).
    pub run_lock_sha256: String,
    pub dataset_release_hash: String,
    pub selection_hash: String,
    pub execution_configuration_hash: Option<String>,
    pub resolved_adapters_sha256: Option<String>,
    /// The reference lock's `human_input_hashes`, keyed by file name instead of its machine
    /// paths.
    pub input_hashes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LockSelection {
    pub algorithm_version: String,
    pub selected_items_per_task_family: usize,
    /// True when the dataset was accepted with the `--sample` relaxation of its counts.
    pub sample: bool,
    /// Family → shuffle seed (decimal string of the 256-bit integer).
    pub seeds: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LockTokenizer {
    pub encoding: String,
    pub implementation: String,
    pub vocabulary_sha256: String,
}

/// The files a run is bound to, by the logical name the lock records each under: the spec,
/// its provider table, and what the dataset loader hashes (its manifest, each family's file,
/// each family's prompt template). The lock hashes exactly these, and `ib-select
/// --list-inputs` prints them, so what `make` watches is what the lock checks.
///
/// A spec that lists its providers inline (`providers.vendors`) has no table file: they are
/// part of the spec, and what the built-in knowledge adds is bound as `providers.vendors`
/// (see [`crate::providers::bound_hashes`]).
pub fn bound_inputs(spec_path: &Path, spec: &Spec, dataset_dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut bound = BTreeMap::from([
        ("spec.yaml".to_string(), spec_path.to_path_buf()),
        ("manifest.json".to_string(), dataset_dir.join("manifest.json")),
    ]);
    if let Some(table) = spec.provider_table_file() {
        bound.insert(crate::providers::TABLE_INPUT.to_string(), table.to_path_buf());
    }
    for family in &spec.families {
        bound.insert(family.prompt_template.clone(), spec.dir().join(&family.prompt_template));
        bound.insert(format!("{}.jsonl", family.name), dataset_dir.join(format!("{}.jsonl", family.name)));
    }
    bound
}

/// The lock's `inputs`: each bound file's SHA-256. The dataset loader hashed its files as it
/// validated them (`loaded`); those hashes must be the bound files', name for name, or the
/// listing and the lock would disagree about what the run depends on.
pub fn input_hashes(
    bound: &BTreeMap<String, PathBuf>,
    loaded: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>> {
    let mut hashes = BTreeMap::new();
    for (name, path) in bound {
        hashes.insert(name.clone(), file_sha256(path)?);
    }
    for (name, hash) in loaded {
        match (hashes.get(name), bound.get(name)) {
            (Some(bound_hash), _) if bound_hash == hash => {}
            (Some(_), Some(path)) => {
                return Err(Error::bad(format!("{}: changed while it was being read; run again", path.display())))
            }
            _ => {
                return Err(Error::bad(format!(
                    "the dataset loader hashed {name}, which the lock does not bind; lock::bound_inputs is out of date"
                )))
            }
        }
    }
    Ok(hashes)
}

/// How `dataset_release_hash` was computed. The default, [`ReleaseHashConvention::Logical`],
/// keys each file's SHA-256 by its logical name, so the release hash (hence the seeds and
/// the selection) is the same wherever the run is made. The reference runner keys them by
/// path strings (seed-runner.md §3.3); reproducing one of its selections needs its keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseHashConvention {
    /// `manifest.json`, `<family>.jsonl` and the templates' spec paths (inferbench's own).
    #[default]
    Logical,
    /// The reference's path strings: its standard layout's, or a reference run-lock.json's.
    Reference,
    /// The hash a reference run-lock.json records, taken as it is after every file's SHA-256
    /// was checked against that lock: for a lock whose path strings do not reproduce it.
    Recorded,
}

/// The convention of the dataset release hash and the key each file was hashed under.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReleaseHash {
    pub convention: ReleaseHashConvention,
    /// Logical name → the key the file's SHA-256 was joined under (empty for `logical`, where
    /// the two are the same).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, String>,
    /// SHA-256 of the reference run-lock.json the keys or the hash were taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_lock_sha256: Option<String>,
}

impl ReleaseHash {
    pub fn is_logical(&self) -> bool {
        *self == ReleaseHash::default()
    }
}

/// `lock.json` as `ib-select` writes and re-checks it: the [`Lock`] every stage verifies, and
/// how its release hash was made, which only the selection depends on (absent: `logical`, so
/// a default lock is the plain [`Lock`]). Kept beside [`Lock`] rather than in it so that the
/// code building a `Lock` by hand needs no change; [`Lock::read`] ignores the extra key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LockFile {
    #[serde(flatten)]
    pub lock: Lock,
    #[serde(default, skip_serializing_if = "ReleaseHash::is_logical")]
    pub release_hash: ReleaseHash,
}

impl LockFile {
    pub fn read(path: &Path) -> Result<LockFile> {
        let lock = Lock::read(path)?;
        let release_hash = atomic::read_json::<ReleaseHashOnly>(path)?.release_hash;
        Ok(LockFile { lock, release_hash })
    }
}

/// The one key [`LockFile::read`] reads beside the [`Lock`].
#[derive(Deserialize)]
struct ReleaseHashOnly {
    #[serde(default)]
    release_hash: ReleaseHash,
}

impl Lock {
    pub fn read(path: &Path) -> Result<Lock> {
        if !path.exists() {
            return Err(Error::bad(format!("{}: missing; run ib-select first", path.display())));
        }
        let lock: Lock = atomic::read_json(path)?;
        if lock.v != crate::FORMAT_VERSION {
            return Err(Error::bad(format!("{}: v: format version {} is not supported", path.display(), lock.v)));
        }
        Ok(lock)
    }

    /// Checks each given input against the locked hash. Names every input that differs.
    pub fn verify(&self, current: &BTreeMap<String, String>) -> Result<()> {
        let mut changed = Vec::new();
        for (name, hash) in current {
            match self.inputs.get(name) {
                Some(locked) if locked == hash => {}
                Some(locked) => changed.push(format!(
                    "{name} changed since the run was locked (locked sha256 {}…, now {}…)",
                    crate::canonical::short_hash(locked),
                    crate::canonical::short_hash(hash)
                )),
                None => changed.push(format!("{name} is not bound by this run's lock")),
            }
        }
        if changed.is_empty() {
            Ok(())
        } else {
            Err(Error::LockMismatch(format!(
                "lock.json: {}; start a new run (or restore the locked inputs)",
                changed.join("; ")
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock {
            v: 1,
            run_id: "r".into(),
            workflow: "micro-single-task".into(),
            benchmark_slug: "s".into(),
            code_version: "c".into(),
            inputs: BTreeMap::from([("spec.yaml".into(), "a".repeat(64)), ("providers.yaml".into(), "b".repeat(64))]),
            dataset_release_hash: "0".repeat(64),
            selection: LockSelection {
                algorithm_version: "v".into(),
                selected_items_per_task_family: 2,
                sample: true,
                seeds: BTreeMap::new(),
            },
            tokenizer: LockTokenizer {
                encoding: "o200k_base".into(),
                implementation: "x".into(),
                vocabulary_sha256: "y".into(),
            },
            providers: vec!["p".into()],
            imported_from: None,
        }
    }

    #[test]
    fn the_release_hash_record_is_written_only_when_not_logical_and_plain_readers_ignore_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock.json");
        let plain = LockFile { lock: lock(), release_hash: ReleaseHash::default() };
        atomic::write_json(&path, &plain).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains(r#""release_hash""#));
        assert_eq!(LockFile::read(&path).unwrap(), plain);
        let record = ReleaseHash {
            convention: ReleaseHashConvention::Reference,
            keys: BTreeMap::from([("manifest.json".into(), "data/micro-single-task/manifest.json".into())]),
            reference_lock_sha256: Some("c".repeat(64)),
        };
        let reference = LockFile { lock: lock(), release_hash: record };
        atomic::write_json(&path, &reference).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""convention": "reference""#), "{text}");
        assert_eq!(LockFile::read(&path).unwrap(), reference);
        assert_eq!(Lock::read(&path).unwrap(), lock(), "every other stage reads the plain lock");
    }

    #[test]
    fn verify_accepts_equal_hashes_and_names_a_changed_input() {
        let l = lock();
        l.verify(&BTreeMap::from([("spec.yaml".into(), "a".repeat(64))])).unwrap();
        let err = l.verify(&BTreeMap::from([("providers.yaml".into(), "c".repeat(64))])).unwrap_err();
        assert!(matches!(err, Error::LockMismatch(_)));
        assert!(err.to_string().contains("providers.yaml changed since the run was locked"), "{err}");
    }
}
