//! `lock.json`: what a run is bound to. `ib-select` writes it once; every later stage
//! recomputes the hashes of the inputs it reads and refuses, naming what changed, when one
//! differs. Keys are logical names, never machine paths, so a run directory is portable.
//! Reading it from a run is the store's (`inferbench_store::lock`).
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

impl Lock {
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
