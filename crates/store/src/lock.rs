//! Reading `lock.json` from a run (its type is the contract's, `inferbench_contract::lock`),
//! and what a run's lock binds: the files it hashes and their hashes.
use crate::atomic;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::lock::{Lock, LockFile, ReleaseHash};
use inferbench_contract::{Error, Result};
use inferbench_inputs::spec::Spec;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Reads `lock.json` at `path`, refusing a missing file or another format version.
pub fn read(path: &Path) -> Result<Lock> {
    if !path.exists() {
        return Err(Error::bad(format!("{}: missing; run ib-select first", path.display())));
    }
    let lock: Lock = atomic::read_json(path)?;
    if lock.v != inferbench_contract::FORMAT_VERSION {
        return Err(Error::bad(format!("{}: v: format version {} is not supported", path.display(), lock.v)));
    }
    Ok(lock)
}

/// Reads `lock.json` as `ib-select` wrote it: the [`Lock`] and how its release hash was made.
pub fn read_file(path: &Path) -> Result<LockFile> {
    let lock = read(path)?;
    let release_hash = atomic::read_json::<ReleaseHashOnly>(path)?.release_hash;
    Ok(LockFile { lock, release_hash })
}

/// The one key [`read_file`] reads beside the [`Lock`].
#[derive(Deserialize)]
struct ReleaseHashOnly {
    #[serde(default)]
    release_hash: ReleaseHash,
}

/// The files a run is bound to, by the logical name the lock records each under: the spec,
/// its provider table, what the dataset loader hashes (its manifest, each family's file,
/// each family's prompt template) and a load workflow's arrival trace. The lock hashes exactly these, and `ib-select
/// --list-inputs` prints them, so what `make` watches is what the lock checks.
///
/// A spec that lists its providers inline (`providers.vendors`) has no table file: they are
/// part of the spec, and what the built-in knowledge adds is bound as `providers.vendors`
/// (see [`inferbench_inputs::providers::bound_hashes`]).
pub fn bound_inputs(spec_path: &Path, spec: &Spec, dataset_dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut bound = BTreeMap::from([
        ("spec.yaml".to_string(), spec_path.to_path_buf()),
        ("manifest.json".to_string(), dataset_dir.join("manifest.json")),
    ]);
    if let Some(table) = spec.provider_table_file() {
        bound.insert(inferbench_inputs::providers::TABLE_INPUT.to_string(), table.to_path_buf());
    }
    for family in &spec.families {
        bound.insert(family.prompt_template.clone(), spec.dir().join(&family.prompt_template));
        bound.insert(format!("{}.jsonl", family.name), dataset_dir.join(format!("{}.jsonl", family.name)));
    }
    // A load run's schedule is a function of its trace: bound under the name the spec gives it.
    if let Some((name, path)) = spec.load.as_ref().and_then(|l| Some((l.trace_name.clone()?, l.trace.clone()?))) {
        bound.insert(name, path);
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

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::lock::ReleaseHashConvention;

    fn lock() -> Lock {
        Lock {
            inputs: BTreeMap::from([("spec.yaml".into(), "a".repeat(64)), ("providers.yaml".into(), "b".repeat(64))]),
            ..inferbench_contract::testutil::lock()
        }
    }

    #[test]
    fn the_release_hash_record_is_written_only_when_not_logical_and_plain_readers_ignore_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock.json");
        let plain = LockFile { lock: lock(), release_hash: ReleaseHash::default() };
        atomic::write_json(&path, &plain).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains(r#""release_hash""#));
        assert_eq!(crate::lock::read_file(&path).unwrap(), plain);
        let record = ReleaseHash {
            convention: ReleaseHashConvention::Reference,
            keys: BTreeMap::from([("manifest.json".into(), "data/micro-single-task/manifest.json".into())]),
            reference_lock_sha256: Some("c".repeat(64)),
        };
        let reference = LockFile { lock: lock(), release_hash: record };
        atomic::write_json(&path, &reference).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""convention": "reference""#), "{text}");
        assert_eq!(crate::lock::read_file(&path).unwrap(), reference);
        assert_eq!(crate::lock::read(&path).unwrap(), lock(), "every other stage reads the plain lock");
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
