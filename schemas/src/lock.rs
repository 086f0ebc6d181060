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
    /// Logical name → SHA-256 of every bound input: `spec.yaml`, `providers.yaml`,
    /// `manifest.json`, `<family>.jsonl`, `prompts/<file>`.
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
pub fn bound_inputs(spec_path: &Path, spec: &Spec, dataset_dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut bound = BTreeMap::from([
        ("spec.yaml".to_string(), spec_path.to_path_buf()),
        ("providers.yaml".to_string(), spec.providers_path.clone()),
        ("manifest.json".to_string(), dataset_dir.join("manifest.json")),
    ]);
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
    fn verify_accepts_equal_hashes_and_names_a_changed_input() {
        let l = lock();
        l.verify(&BTreeMap::from([("spec.yaml".into(), "a".repeat(64))])).unwrap();
        let err = l.verify(&BTreeMap::from([("providers.yaml".into(), "c".repeat(64))])).unwrap_err();
        assert!(matches!(err, Error::LockMismatch(_)));
        assert!(err.to_string().contains("providers.yaml changed since the run was locked"), "{err}");
    }
}
