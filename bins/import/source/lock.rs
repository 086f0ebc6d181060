//! The reference's lock (`run-lock.json`) and the selection it binds
//! (`artifacts/selection.json`): the facts the import keeps, each checked.
use super::{read_json, RefLock, RefSelection};
use crate::fields::{Doc, Problems};
use inferbench_schemas::vocab::TaskFamily;
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
        sha256: inferbench_schemas::canonical::sha256_hex(&bytes),
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
        let content_hash = inferbench_schemas::canonical::hash(&value);
        if content_hash != lock.selection_hash {
            p.push(format!(
                "{rel}: its content hash {}… differs from run-lock.json's selection_hash {}…",
                &content_hash[..12],
                inferbench_schemas::canonical::short_hash(&lock.selection_hash)
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
