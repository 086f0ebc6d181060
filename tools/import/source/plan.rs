//! The partition's plan (its rounds, each request's place in them) and the reference's record
//! of each finished round, checked against each other.
use super::json::{read_json, sorted_json_files};
use super::model::{Kind, Round, RoundArtifact, Unit};
use crate::fields::{Doc, Problems};
use inferbench_contract::vocab::TaskFamily;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fixture::{put, smoke_json, smoke_run};
    use serde_json::json;

    const PLAN: &str = "artifacts/smoke-plan-attempt-1.json";

    fn smoke_plan() -> Vec<Round> {
        let mut p = Problems::default();
        let rounds = read_plan(&smoke_run(), Kind::Smoke(1), &mut p, &mut BTreeMap::new());
        assert!(p.is_empty(), "{:?}", p.lines);
        rounds
    }

    /// The problems of the smoke plan once `change` has been made to it.
    fn plan_problems(change: impl FnOnce(&mut Value)) -> Vec<String> {
        let mut value = smoke_json(PLAN);
        change(&mut value);
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), PLAN, &serde_json::to_vec(&value).unwrap());
        let mut p = Problems::default();
        read_plan(dir.path(), Kind::Smoke(1), &mut p, &mut BTreeMap::new());
        p.lines
    }

    #[test]
    fn the_smoke_plan_is_three_rounds_of_ten_requests_in_launch_order() {
        let mut copied = BTreeMap::new();
        let rounds = read_plan(&smoke_run(), Kind::Smoke(1), &mut Problems::default(), &mut copied);
        assert_eq!(copied.keys().collect::<Vec<_>>(), [PLAN]);
        let value = smoke_json(PLAN);
        assert_eq!(rounds.len(), 3);
        for (i, round) in rounds.iter().enumerate() {
            let planned = &value["rounds"][i];
            assert_eq!((round.round_index, round.round_id.as_str()), (i as u64, planned["round_id"].as_str().unwrap()));
            let order: Vec<&str> = round.units.iter().map(|u| u.provider.as_str()).collect();
            let named: Vec<&str> =
                planned["provider_launch_order"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            assert_eq!(order, named);
            for (j, unit) in round.units.iter().enumerate() {
                assert_eq!(unit.launch_index, j as u64);
                assert_eq!((unit.round_index, &unit.round_id), (round.round_index, &round.round_id));
                assert_eq!(unit.task_family.as_str(), planned["task_family"].as_str().unwrap());
                assert_eq!(unit.request_id, planned["requests"][j]["request_id"].as_str().unwrap());
            }
        }
        assert_eq!(rounds[0].units[0].task_family, TaskFamily::MeetingNotesLookup);
    }

    #[test]
    fn a_plan_of_another_partition_is_refused() {
        let lines = plan_problems(|v| {
            v["kind"] = json!("full");
            v["attempt"] = json!(2);
        });
        assert_eq!(
            lines,
            [
                format!("{PLAN}: kind: expected `smoke`, found \"full\""),
                format!("{PLAN}: attempt: expected 1, found 2"),
            ]
        );
    }

    #[test]
    fn a_plan_that_contradicts_itself_is_reported_field_by_field() {
        let lines = plan_problems(|v| {
            let rounds = v["rounds"].as_array_mut().unwrap();
            rounds[1]["round_index"] = json!(5);
            let repeated = rounds[0]["requests"][0]["request_id"].clone();
            rounds[2]["requests"][3]["request_id"] = repeated;
            rounds[2]["requests"][4]["item_id"] = json!("mnl-0001");
            rounds[2]["requests"][5]["provider_launch_index"] = json!(9);
            rounds[0]["provider_launch_order"].as_array_mut().unwrap().reverse();
            v["expected_requests"] = json!(31);
        });
        let r1 = "rounds[1]";
        let r2 = "rounds[2]";
        assert_eq!(
            lines,
            [
                format!("{PLAN}: rounds[0].provider_launch_order: differs from the order of its requests' providers"),
                format!("{PLAN}: {r1}.round_index: expected 1 (rounds are in index order), found 5"),
                format!("{PLAN}: {r1}.requests[0].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[1].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[2].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[3].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[4].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[5].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[6].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[7].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[8].round_index: differs from its round's round_index 5"),
                format!("{PLAN}: {r1}.requests[9].round_index: differs from its round's round_index 5"),
                format!(
                    "{PLAN}: {r2}.requests[3].request_id: {} is scheduled twice",
                    smoke_json(PLAN)["rounds"][0]["requests"][0]["request_id"].as_str().unwrap()
                ),
                format!("{PLAN}: {r2}.requests[4].item_id: differs from its round's item_id \"{}\"", {
                    smoke_json(PLAN)["rounds"][2]["item_id"].as_str().unwrap().to_string()
                }),
                format!("{PLAN}: {r2}.requests[5].provider_launch_index: expected 5 (its place in the round), found 9"),
                format!("{PLAN}: expected_requests: 31, but the plan holds 30"),
            ]
        );
    }

    #[test]
    fn every_round_has_the_same_providers_once_each() {
        let lines = plan_problems(|v| {
            let rounds = v["rounds"].as_array_mut().unwrap();
            rounds[1]["requests"][1]["provider"] = rounds[1]["requests"][0]["provider"].clone();
            rounds[1].as_object_mut().unwrap().remove("provider_launch_order");
            rounds[2]["requests"][0]["provider"] = json!("newcomer");
            rounds[2].as_object_mut().unwrap().remove("provider_launch_order");
        });
        assert_eq!(
            lines,
            [
                format!("{PLAN}: rounds[1].requests: a provider appears twice in the round"),
                format!("{PLAN}: rounds[1].requests: its providers differ from round 0's"),
                format!("{PLAN}: rounds[2].requests: its providers differ from round 0's"),
            ]
        );
    }

    #[test]
    fn a_round_of_an_unknown_family_is_reported_and_left_out() {
        let lines = plan_problems(|v| v["rounds"][0]["task_family"] = json!("poetry"));
        assert_eq!(
            lines,
            [
                format!("{PLAN}: rounds[0].task_family: `poetry` is not a task family of this benchmark"),
                format!("{PLAN}: expected_rounds: 3, but the plan holds 2"),
                format!("{PLAN}: expected_requests: 30, but the plan holds 20"),
            ]
        );
    }

    #[test]
    fn each_round_artifact_names_a_planned_round_and_its_requests() {
        let rounds = smoke_plan();
        let mut copied = BTreeMap::new();
        let mut p = Problems::default();
        let artifacts = read_round_artifacts(&smoke_run(), Kind::Smoke(1), &rounds, &mut p, &mut copied);
        assert!(p.is_empty(), "{:?}", p.lines);
        assert_eq!(artifacts.len(), 3);
        assert_eq!(copied.len(), 3);
        let id = "round-1a57c9711dbae8854e2011e8";
        let rel = format!("artifacts/rounds/attempt-1/{id}.json");
        assert_eq!(artifacts[id].launch_skew_ms, 14.563801);
        assert!(!artifacts[id].resumed_partial_round);

        let dir = tempfile::tempdir().unwrap();
        let mut value = smoke_json(&rel);
        value["terminal_request_ids"].as_array_mut().unwrap().swap(0, 1);
        put(dir.path(), &format!("artifacts/rounds/attempt-1/{id}.json"), &serde_json::to_vec(&value).unwrap());
        put(dir.path(), "artifacts/rounds/attempt-1/round-other.json", &serde_json::to_vec(&value).unwrap());
        value["round_id"] = json!("round-unplanned");
        put(dir.path(), "artifacts/rounds/attempt-1/round-unplanned.json", &serde_json::to_vec(&value).unwrap());
        let mut p = Problems::default();
        let artifacts = read_round_artifacts(dir.path(), Kind::Smoke(1), &rounds, &mut p, &mut BTreeMap::new());
        let differs = "terminal_request_ids: differs from the plan's requests of the round";
        assert_eq!(
            p.lines,
            [
                format!("{rel}: {differs}"),
                format!("artifacts/rounds/attempt-1/round-other.json: round_id: {id} is not the file's name"),
                format!("artifacts/rounds/attempt-1/round-other.json: {differs}"),
                "artifacts/rounds/attempt-1/round-unplanned.json: round_id: round-unplanned is not a round of the plan"
                    .to_string(),
            ]
        );
        assert_eq!(artifacts.keys().collect::<Vec<_>>(), [id]);
    }
}
