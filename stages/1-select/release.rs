//! The dataset release hash that seeds the selection, under the convention `--release-hash`
//! asks for (seed-runner.md §3.3): inferbench's logical names, or the reference runner's path
//! strings, from its standard layout or from one of its run locks.
use crate::args::ReleaseHash as Choice;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::canonical::short_hash;
use inferbench_contract::lock::{ReleaseHash, ReleaseHashConvention};
use inferbench_contract::{Error, Result};
use inferbench_inputs::dataset::{self, Dataset};
use inferbench_inputs::spec::Spec;
use inferbench_store::atomic;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The release hash to seed the selection with, and how it was made (for the lock).
pub fn release_hash(
    choice: Choice,
    reference_lock: Option<&Path>,
    spec: &Spec,
    data: &Dataset,
) -> Result<(String, ReleaseHash)> {
    let Some(path) = reference_lock else {
        return match choice {
            Choice::Logical => Ok((data.release_hash.clone(), ReleaseHash::default())),
            Choice::Reference => {
                let keys = dataset::reference_layout_keys(spec);
                let hash = keyed(data, &keys, "the reference's standard layout")?;
                let record = ReleaseHash { convention: ReleaseHashConvention::Reference, keys, ..Default::default() };
                Ok((hash, record))
            }
            // clap requires the lock for `recorded`; refused here too rather than guessed.
            Choice::Recorded => Err(Error::bad("--release-hash recorded: needs --reference-lock")),
        };
    };
    let reference = ReferenceLock::read(path)?;
    let file = path.display();
    let keys = dataset::reference_lock_keys(&reference.hashes, &data.file_hashes)
        .map_err(|problems| Error::Invalid(problems.into_iter().map(|p| format!("{file}: {p}")).collect()))?;
    let computed = keyed(data, &keys, &format!("{file}'s keys"))?;
    let recorded = reference.release_hash;
    let hash = match choice {
        Choice::Reference if computed != recorded => {
            return Err(Error::bad(format!(
                "{file}: its human_input_hashes keys give the release hash {}…, but it records \
                 dataset_release_hash {}…: the lock does not hold the path strings its run hashed (were they \
                 edited?). --release-hash recorded takes the recorded hash, with every file's SHA-256 checked \
                 against the lock as now",
                short_hash(&computed),
                short_hash(&recorded)
            )));
        }
        Choice::Reference => computed,
        Choice::Recorded => recorded,
        Choice::Logical => return Err(Error::bad("--reference-lock: needs --release-hash reference or recorded")),
    };
    let record = ReleaseHash { convention: choice.into(), keys, reference_lock_sha256: Some(file_sha256(path)?) };
    Ok((hash, record))
}

/// The release hash of the dataset's files under `keys`.
fn keyed(data: &Dataset, keys: &BTreeMap<String, String>, whose: &str) -> Result<String> {
    dataset::release_hash_keyed(&data.file_hashes, keys)
        .ok_or_else(|| Error::bad(format!("{whose}: not one distinct key per dataset file and template")))
}

/// What the release hash needs of a reference run's `run-lock.json` (seed-runner.md §2.3).
struct ReferenceLock {
    /// `human_input_hashes`: path string → SHA-256.
    hashes: BTreeMap<String, String>,
    /// `dataset_release_hash`.
    release_hash: String,
}

impl ReferenceLock {
    fn read(path: &Path) -> Result<ReferenceLock> {
        let root: Value = atomic::read_json(path)?;
        let file = path.display();
        let hashes = root["human_input_hashes"].as_object().and_then(|map| {
            map.iter().map(|(k, v)| Some((k.clone(), v.as_str().filter(|h| is_sha256(h))?.to_string()))).collect()
        });
        let Some(hashes) = hashes else {
            return Err(Error::bad(format!(
                "{file}: human_input_hashes: expected an object of path string to SHA-256 (a reference run-lock.json)"
            )));
        };
        let Some(release_hash) = root["dataset_release_hash"].as_str().filter(|h| is_sha256(h)) else {
            return Err(Error::bad(format!("{file}: dataset_release_hash: expected a SHA-256 (64 hex digits)")));
        };
        Ok(ReferenceLock { hashes, release_hash: release_hash.to_string() })
    }
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selection;
    use inferbench_inputs::dataset::LoadOptions;
    use std::path::PathBuf;

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reference").join(rel)
    }

    fn load() -> (Spec, Dataset) {
        let spec = Spec::load(&fixture("spec.yaml")).unwrap();
        let data = dataset::load(&fixture("data/micro-single-task"), &spec, LoadOptions::default()).unwrap();
        (spec, data)
    }

    /// What the reference run selected (its artifacts/selection.json): per family, the seed,
    /// the whole shuffled order and the selected prefix.
    fn reference_selection() -> Value {
        serde_json::from_slice(&std::fs::read(fixture("selection.json")).unwrap()).unwrap()
    }

    /// The reference run's lock records a release hash its own keys do not give (and an
    /// execution_configuration_hash its own sections do not give: its paths were rewritten
    /// after the run). With its recorded hash, checked file by file, the selection is the
    /// reference's exactly: every family's seed, order and prefix.
    #[test]
    fn the_recorded_hash_gives_exactly_the_reference_runs_selection() {
        let (spec, data) = load();
        let lock = fixture("run-lock.json");
        let (hash, record) = release_hash(Choice::Recorded, Some(&lock), &spec, &data).unwrap();
        assert_eq!(hash, "4463dc834810f34956c6a2af023496591877845f2e61ced1de0c12563efd7b36");
        assert_eq!(record.convention, ReleaseHashConvention::Recorded);
        assert_eq!(record.keys["manifest.json"], "/home/bench/data/micro-single-task/manifest.json");
        assert_eq!(record.reference_lock_sha256, Some(file_sha256(&lock).unwrap()));
        let reference = reference_selection();
        assert_eq!(reference["dataset_release_hash"], hash.as_str());
        let (rows, seeds) = selection::select(&data, &hash, &spec.slug, &spec.task_families(), 200);
        for (family, seed) in seeds {
            let expected = &reference["families"][&family];
            assert_eq!(expected["seed"], seed.as_str(), "{family}");
            let order: Vec<&str> =
                rows.iter().filter(|r| r.task_family.as_str() == family).map(|r| r.item_id.as_str()).collect();
            assert_eq!(serde_json::to_value(&order).unwrap(), expected["full_family_order"], "{family}");
            let selected: Vec<&str> = rows
                .iter()
                .filter(|r| r.task_family.as_str() == family && r.selected)
                .map(|r| r.item_id.as_str())
                .collect();
            assert_eq!(serde_json::to_value(&selected).unwrap(), expected["selected_prefix"], "{family}");
        }
        assert_eq!(rows.iter().filter(|r| r.selected).count(), 600);
    }

    #[test]
    fn the_lock_keys_are_refused_when_they_do_not_give_the_recorded_hash() {
        let (spec, data) = load();
        let err = release_hash(Choice::Reference, Some(&fixture("run-lock.json")), &spec, &data).unwrap_err();
        let text = err.to_string();
        assert!(err.is_bad_input(), "{err:?}");
        assert!(text.contains("keys give the release hash 14922197ba0f…"), "{text}");
        assert!(text.contains("records dataset_release_hash 4463dc834810…"), "{text}");
        assert!(text.contains("--release-hash recorded"), "{text}");
    }

    /// A consistent lock (the fixture's, recording what its keys give): its keys are taken.
    #[test]
    fn a_consistent_lock_gives_its_keys_hash_and_a_changed_file_is_refused() {
        let (spec, data) = load();
        let mut lock: Value = serde_json::from_slice(&std::fs::read(fixture("run-lock.json")).unwrap()).unwrap();
        // The SHA-256 of the seven `key:hash` lines of the fixture lock (minus its spec), as
        // CPython's hashlib computes it.
        let by_keys = "14922197ba0ff389d6a002f00ae8a5b68c9b1b3bc3a344d29a4287dc867c599a";
        lock["dataset_release_hash"] = Value::from(by_keys);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-lock.json");
        std::fs::write(&path, serde_json::to_vec(&lock).unwrap()).unwrap();
        let (hash, record) = release_hash(Choice::Reference, Some(&path), &spec, &data).unwrap();
        assert_eq!((hash.as_str(), record.convention), (by_keys, ReleaseHashConvention::Reference));
        let key = "/home/bench/data/micro-single-task/ticket-triage.jsonl";
        lock["human_input_hashes"][key] = Value::from("0".repeat(64));
        std::fs::write(&path, serde_json::to_vec(&lock).unwrap()).unwrap();
        for choice in [Choice::Reference, Choice::Recorded] {
            let text = release_hash(choice, Some(&path), &spec, &data).unwrap_err().to_string();
            assert!(text.contains("ticket-triage.jsonl: its SHA-256 588fa13ee2f2… differs"), "{text}");
        }
        std::fs::write(&path, br#"{"human_input_hashes": {"a": "b"}}"#).unwrap();
        let text = release_hash(Choice::Recorded, Some(&path), &spec, &data).unwrap_err().to_string();
        assert!(text.contains("human_input_hashes: expected an object of path string to SHA-256"), "{text}");
    }

    /// The standard layout's hash of the fixture dataset, as an independent implementation
    /// (CPython's hashlib over the §3.3 key strings) computed it.
    #[test]
    fn the_standard_layout_keys_and_the_portable_default() {
        let (spec, data) = load();
        let (hash, record) = release_hash(Choice::Reference, None, &spec, &data).unwrap();
        assert_eq!(hash, "a2d4565b652facb8a54797f19c5fa7ca4551e85838223e48e054e246d497b568");
        assert_eq!(
            record.keys["prompt_templates/ticket-triage.system.txt"],
            format!("{}/ticket-triage.system.txt", dataset::REFERENCE_TEMPLATE_DIR)
        );
        assert_eq!(record.reference_lock_sha256, None);
        let (hash, record) = release_hash(Choice::Logical, None, &spec, &data).unwrap();
        assert_eq!((hash, record.is_logical()), (data.release_hash.clone(), true));
    }
}
