//! The partition's plan (its rounds, each request's place in them) and the reference's record
//! of each finished round, checked against each other.
use super::{read_json, sorted_json_files, Kind, Round, RoundArtifact, Unit};
use crate::fields::{Doc, Problems};
use inferbench_schemas::vocab::TaskFamily;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn family(doc: &Doc, p: &mut Problems, key: &str) -> Option<TaskFamily> {
    let text = doc.string(p, key)?;
    match text.parse() {
        Ok(family) => Some(family),
        Err(_) => {
            p.push(format!("{}: `{text}` is not a task family of this benchmark", doc.at(key)));
            None
        }
    }
}

pub fn read_plan(dir: &Path, kind: Kind, p: &mut Problems, copied: &mut BTreeMap<String, Vec<u8>>) -> Vec<Round> {
    let rel = kind.plan_file();
    let Some((bytes, value)) = read_json(dir, &rel, p) else { return Vec::new() };
    copied.insert(rel.clone(), bytes);
    let doc = Doc::new(&rel, &value);
    if doc.get("kind").and_then(Value::as_str) != Some(kind.name()) {
        p.push(format!("{}: expected `{}`, found {}", doc.at("kind"), kind.name(), value["kind"]));
    }
    if let Kind::Smoke(n) = kind {
        if doc.get("attempt").and_then(Value::as_u64) != Some(u64::from(n)) {
            p.push(format!("{}: expected {n}, found {}", doc.at("attempt"), value["attempt"]));
        }
    }
    let Some(items) = doc.array(p, "rounds") else { return Vec::new() };
    let mut rounds = Vec::with_capacity(items.len());
    let mut seen = BTreeSet::new();
    let mut providers: Option<BTreeSet<String>> = None;
    for (i, item) in items.iter().enumerate() {
        let rd = doc.element("rounds", i, item);
        let (Some(round_id), Some(round_index), Some(fam), Some(item_id), Some(requests)) = (
            rd.string(p, "round_id"),
            rd.u64(p, "round_index"),
            family(&rd, p, "task_family"),
            rd.string(p, "item_id"),
            rd.array(p, "requests"),
        ) else {
            continue;
        };
        if round_index != i as u64 {
            p.push(format!("{}: expected {i} (rounds are in index order), found {round_index}", rd.at("round_index")));
        }
        let mut units = Vec::with_capacity(requests.len());
        for (j, request) in requests.iter().enumerate() {
            let ud = rd.element("requests", j, request);
            let (Some(request_id), Some(provider), Some(launch_index)) =
                (ud.string(p, "request_id"), ud.string(p, "provider"), ud.u64(p, "provider_launch_index"))
            else {
                continue;
            };
            let unit = Unit {
                request_id: request_id.to_string(),
                round_id: round_id.to_string(),
                round_index,
                provider: provider.to_string(),
                launch_index,
                task_family: fam,
                item_id: item_id.to_string(),
            };
            let same = |key: &str, expected: &Value| ud.get(key) == Some(expected);
            for (key, expected) in [
                ("round_id", Value::from(round_id)),
                ("round_index", Value::from(round_index)),
                ("task_family", Value::from(fam.as_str())),
                ("item_id", Value::from(item_id)),
            ] {
                if !same(key, &expected) {
                    p.push(format!("{}: differs from its round's {key} {expected}", ud.at(key)));
                }
            }
            if launch_index != j as u64 {
                p.push(format!(
                    "{}: expected {j} (its place in the round), found {launch_index}",
                    ud.at("provider_launch_index")
                ));
            }
            if !seen.insert(unit.request_id.clone()) {
                p.push(format!("{}: {request_id} is scheduled twice", ud.at("request_id")));
            }
            units.push(unit);
        }
        if let Some(order) = rd.get("provider_launch_order").and_then(Value::as_array) {
            let named: Vec<&str> = order.iter().filter_map(Value::as_str).collect();
            let actual: Vec<&str> = units.iter().map(|u| u.provider.as_str()).collect();
            if named != actual {
                p.push(format!(
                    "{}: differs from the order of its requests' providers",
                    rd.at("provider_launch_order")
                ));
            }
        }
        let set: BTreeSet<String> = units.iter().map(|u| u.provider.clone()).collect();
        if set.len() != units.len() {
            p.push(format!("{}: a provider appears twice in the round", rd.at("requests")));
        }
        match &providers {
            None => providers = Some(set),
            Some(first) if *first != set => {
                p.push(format!("{}: its providers differ from round 0's", rd.at("requests")))
            }
            _ => {}
        }
        rounds.push(Round { round_id: round_id.to_string(), round_index, units });
    }
    let total: usize = rounds.iter().map(|r| r.units.len()).sum();
    for (key, actual) in [("expected_rounds", rounds.len()), ("expected_requests", total)] {
        if let Some(n) = doc.get(key).and_then(Value::as_u64).filter(|n| *n != actual as u64) {
            p.push(format!("{}: {n}, but the plan holds {actual}", doc.at(key)));
        }
    }
    rounds
}

pub fn read_round_artifacts(
    dir: &Path,
    kind: Kind,
    rounds: &[Round],
    p: &mut Problems,
    copied: &mut BTreeMap<String, Vec<u8>>,
) -> BTreeMap<String, RoundArtifact> {
    let partition = kind.partition();
    let by_id: BTreeMap<&str, &Round> = rounds.iter().map(|r| (r.round_id.as_str(), r)).collect();
    let mut out = BTreeMap::new();
    for name in sorted_json_files(&dir.join("artifacts/rounds").join(&partition)) {
        let rel = format!("artifacts/rounds/{partition}/{name}");
        let Some((bytes, value)) = read_json(dir, &rel, p) else { continue };
        let doc = Doc::new(&rel, &value);
        let (Some(round_id), Some(skew), Some(resumed)) =
            (doc.string(p, "round_id"), doc.offset(p, "launch_skew_ms"), doc.bool(p, "resumed_partial_round"))
        else {
            continue;
        };
        let Some(round) = by_id.get(round_id) else {
            p.push(format!("{}: {round_id} is not a round of the plan", doc.at("round_id")));
            continue;
        };
        if name.strip_suffix(".json") != Some(round_id) {
            p.push(format!("{}: {round_id} is not the file's name", doc.at("round_id")));
        }
        if let Some(ids) = value.get("terminal_request_ids").and_then(Value::as_array) {
            let listed: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
            let planned: Vec<&str> = round.units.iter().map(|u| u.request_id.as_str()).collect();
            if listed != planned {
                p.push(format!("{}: differs from the plan's requests of the round", doc.at("terminal_request_ids")));
            }
        }
        copied.insert(rel.clone(), bytes);
        out.insert(round_id.to_string(), RoundArtifact { launch_skew_ms: skew, resumed_partial_round: resumed });
    }
    out
}
