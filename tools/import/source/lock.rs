//! The reference's lock (`run-lock.json`) and the selection it binds
//! (`artifacts/selection.json`): the facts the import keeps, each checked.
use super::json::read_json;
use super::model::{RefLock, RefSelection};
use crate::fields::{Doc, Problems};
use inferbench_contract::vocab::TaskFamily;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub fn read_lock(dir: &Path, p: &mut Problems, copied: &mut BTreeMap<String, Vec<u8>>) -> Option<RefLock> {
    let rel = "run-lock.json";
    let (bytes, value) = read_json(dir, rel, p)?;
    let doc = Doc::new(rel, &value);
    let before = p.lines.len();
    let run_id = doc.string(p, "run_id");
    let slug = doc.string(p, "benchmark_slug");
    let release = doc.string(p, "dataset_release_hash");
    let selection_hash = doc.string(p, "selection_hash");
    let inputs = doc.string_map(p, "human_input_hashes");
    let runtime = doc.get("runtime");
    let text = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_string);
    if let Some(hash) = release.filter(|h| !is_sha256(h)) {
        p.push(format!("{rel}: dataset_release_hash: expected 64 lower-case hex digits, found {hash:?}"));
    }
    if p.lines.len() > before {
        return None;
    }
    let mut input_hashes = BTreeMap::new();
    for (path, hash) in inputs.unwrap_or_default() {
        // `/home/bench/data/micro-single-task/manifest.json` → `manifest.json`.
        let name = path.rsplit(['/', '\\']).next().unwrap_or(&path).to_string();
        input_hashes.insert(name, hash);
    }
    copied.insert(rel.to_string(), bytes.clone());
    Some(RefLock {
        run_id: run_id?.to_string(),
        benchmark_slug: slug?.to_string(),
        dataset_release_hash: release?.to_string(),
        selection_hash: selection_hash?.to_string(),
        execution_configuration_hash: text("execution_configuration_hash"),
        resolved_adapters_sha256: text("resolved_adapters_sha256"),
        input_hashes,
        execution_region: runtime.and_then(|r| r.get("execution_region")).and_then(Value::as_str).map(str::to_string),
        hostname_hash: runtime.and_then(|r| r.get("hostname_hash")).and_then(Value::as_str).map(str::to_string),
        sha256: inferbench_contract::canonical::sha256_hex(&bytes),
    })
}

fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub fn read_selection(
    dir: &Path,
    p: &mut Problems,
    copied: &mut BTreeMap<String, Vec<u8>>,
    lock: Option<&RefLock>,
) -> Option<RefSelection> {
    let rel = "artifacts/selection.json";
    let (bytes, value) = read_json(dir, rel, p)?;
    let doc = Doc::new(rel, &value);
    let algorithm_version = doc.string(p, "algorithm_version")?.to_string();
    if let Some(lock) = lock {
        if doc.get("dataset_release_hash").and_then(Value::as_str) != Some(&lock.dataset_release_hash) {
            p.push(format!("{rel}: dataset_release_hash: differs from run-lock.json's"));
        }
        if doc.get("benchmark_slug").and_then(Value::as_str) != Some(&lock.benchmark_slug) {
            p.push(format!("{rel}: benchmark_slug: differs from run-lock.json's"));
        }
        let content_hash = inferbench_contract::canonical::hash(&value);
        if content_hash != lock.selection_hash {
            p.push(format!(
                "{rel}: its content hash {}… differs from run-lock.json's selection_hash {}…",
                &content_hash[..12],
                inferbench_contract::canonical::short_hash(&lock.selection_hash)
            ));
        }
    }
    let families = doc.object(p, "families")?;
    let mut out = BTreeMap::new();
    for (name, entry) in families.value.as_object().into_iter().flatten() {
        let fam_doc = families.child(name, entry);
        let Ok(family) = name.parse::<TaskFamily>() else {
            p.push(format!("{}: `{name}` is not a task family of this benchmark", families.at(name)));
            continue;
        };
        let order: Option<Vec<String>> = fam_doc
            .array(p, "full_family_order")
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect::<Vec<_>>());
        let seed = fam_doc.string(p, "seed");
        if let (Some(order), Some(seed)) = (order, seed) {
            let unique: BTreeSet<&String> = order.iter().collect();
            if unique.len() != order.len()
                || order.len() != fam_doc.get("full_family_order").map_or(0, |v| v.as_array().map_or(0, Vec::len))
            {
                p.push(format!("{}: full_family_order: expected distinct item id strings", fam_doc.at("")));
            }
            out.insert(family, (order, seed.to_string()));
        }
    }
    copied.insert(rel.to_string(), bytes);
    Some(RefSelection { algorithm_version, families: out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fixture::{put, smoke_json, smoke_run};

    fn lock_of(value: &Value) -> (Option<RefLock>, Problems) {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "run-lock.json", &serde_json::to_vec(value).unwrap());
        let mut p = Problems::default();
        (read_lock(dir.path(), &mut p, &mut BTreeMap::new()), p)
    }

    fn selection_of(value: &Value, lock: &RefLock) -> (Option<RefSelection>, Problems) {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "artifacts/selection.json", &serde_json::to_vec(value).unwrap());
        let mut p = Problems::default();
        (read_selection(dir.path(), &mut p, &mut BTreeMap::new(), Some(lock)), p)
    }

    fn smoke_lock() -> RefLock {
        let mut p = Problems::default();
        read_lock(&smoke_run(), &mut p, &mut BTreeMap::new()).expect("the smoke run's lock reads")
    }

    #[test]
    fn the_lock_is_bound_by_its_bytes_and_names_its_inputs_by_file() {
        let mut p = Problems::default();
        let mut copied = BTreeMap::new();
        let lock = read_lock(&smoke_run(), &mut p, &mut copied).unwrap();
        assert!(p.is_empty(), "{:?}", p.lines);
        let bytes = std::fs::read(smoke_run().join("run-lock.json")).unwrap();
        assert_eq!(copied.get("run-lock.json"), Some(&bytes));
        assert_eq!(lock.sha256, inferbench_contract::canonical::sha256_hex(&bytes));
        let value = smoke_json("run-lock.json");
        assert_eq!(lock.run_id, value["run_id"].as_str().unwrap());
        assert_eq!(lock.dataset_release_hash, value["dataset_release_hash"].as_str().unwrap());
        assert_eq!(lock.execution_region.as_deref(), Some("local-peer"));
        // `/home/bench/data/micro-single-task/manifest.json` is kept as `manifest.json`.
        assert_eq!(lock.input_hashes.len(), 8);
        assert_eq!(
            lock.input_hashes.get("manifest.json").map(String::as_str),
            Some("3b461a42c2619425d7a8aa679d0fed800ac188107d971af650b82de3bd107d5b")
        );
        assert!(
            lock.input_hashes.contains_key("spec.yaml") && lock.input_hashes.contains_key("ticket-triage.system.txt")
        );
        assert!(lock.input_hashes.keys().all(|k| !k.contains('/')));
    }

    #[test]
    fn a_lock_missing_a_fact_or_with_a_bad_release_hash_is_refused() {
        let mut value = smoke_json("run-lock.json");
        value["dataset_release_hash"] = Value::from("4463DC");
        value.as_object_mut().unwrap().remove("run_id");
        let (lock, p) = lock_of(&value);
        assert!(lock.is_none());
        assert_eq!(
            p.lines,
            [
                "run-lock.json: run_id: expected a non-empty string, found nothing (the field is missing)",
                "run-lock.json: dataset_release_hash: expected 64 lower-case hex digits, found \"4463DC\"",
            ]
        );
        // Without its runtime and optional hashes, a lock still reads.
        let mut value = smoke_json("run-lock.json");
        for key in ["runtime", "execution_configuration_hash", "resolved_adapters_sha256"] {
            value.as_object_mut().unwrap().remove(key);
        }
        let (lock, p) = lock_of(&value);
        let lock = lock.expect("the optional facts are optional");
        assert!(p.is_empty(), "{:?}", p.lines);
        assert_eq!((lock.execution_region, lock.hostname_hash, lock.execution_configuration_hash), (None, None, None));
    }

    #[test]
    fn a_sha256_is_64_lower_case_hex_digits() {
        assert!(is_sha256(&"0123456789abcdef".repeat(4)));
        assert!(!is_sha256(&"0123456789ABCDEF".repeat(4)));
        assert!(!is_sha256(&"0".repeat(63)));
        assert!(!is_sha256(&"g".repeat(64)));
    }

    #[test]
    fn the_selection_is_the_one_the_lock_binds() {
        let lock = smoke_lock();
        let mut p = Problems::default();
        let selection = read_selection(&smoke_run(), &mut p, &mut BTreeMap::new(), Some(&lock)).unwrap();
        assert!(p.is_empty(), "{:?}", p.lines);
        assert_eq!(selection.families.keys().copied().collect::<Vec<_>>(), TaskFamily::DATASET);
        let value = smoke_json("artifacts/selection.json");
        for (family, (order, seed)) in &selection.families {
            let entry = &value["families"][family.as_str()];
            assert_eq!(order.len(), entry["full_family_order"].as_array().unwrap().len());
            assert_eq!(seed, entry["seed"].as_str().unwrap());
        }

        let mut changed = value.clone();
        changed["benchmark_slug"] = Value::from("another-benchmark");
        let (_, p) = selection_of(&changed, &lock);
        assert_eq!(p.lines[0], "artifacts/selection.json: benchmark_slug: differs from run-lock.json's");
        assert!(p.lines[1].contains("differs from run-lock.json's selection_hash"), "{:?}", p.lines);
        assert_eq!(p.lines.len(), 2);
    }

    #[test]
    fn a_selection_of_an_unknown_family_or_a_repeated_item_is_reported() {
        let mut lock = smoke_lock();
        let mut value = smoke_json("artifacts/selection.json");
        let families = value["families"].as_object_mut().unwrap();
        let ticket = families.get_mut("ticket-triage").unwrap();
        let first = ticket["full_family_order"][0].clone();
        ticket["full_family_order"].as_array_mut().unwrap().push(first);
        families.insert("poetry".into(), serde_json::json!({"full_family_order": [], "seed": "1"}));
        lock.selection_hash = inferbench_contract::canonical::hash(&value);
        let (selection, p) = selection_of(&value, &lock);
        // In the file's order: the added family comes last.
        assert_eq!(
            p.lines,
            [
                "artifacts/selection.json: families.ticket-triage: full_family_order: expected distinct item id strings",
                "artifacts/selection.json: families.poetry: `poetry` is not a task family of this benchmark",
            ]
        );
        assert_eq!(selection.unwrap().families.len(), 3);
    }
}
