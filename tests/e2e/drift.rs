//! Drift and substitution alarms of `ib-compare`, against `ib-sim`: two runs of the same
//! simulated profiles (drawn with different seeds) raise no alarm; a third run in which one
//! provider answers ten points fewer items right raises alarms for that provider only.
use crate::compare::{flags, ib_compare, integers, numbers, table, text};
use crate::support::{ok, Sim, Workspace};
use inferbench_contract::tables::{EvaluationRow, ResponseRow};
use inferbench_store::{parquet_io, stages};
use std::collections::BTreeMap;
use std::process::Command;

/// Four simulated providers of one model, alike but for their names.
fn provider_table() -> String {
    let mut table = String::from("providers:\n");
    for name in ["alpha", "beta", "gamma", "delta"] {
        let key = name.to_uppercase();
        table.push_str(&format!(
            "  - name: {name}\n    endpoint: https://{name}.invalid/v1/chat/completions\n    \
             auth: {{kind: bearer, env: IB_TEST_{key}_KEY}}\n    model_id: m-shared\n    token_limit_field: max_tokens\n    \
             reasoning: {{reasoning_effort: low}}\n    stream_usage: true\n    \
             price_usd_per_million_tokens: {{input: 0.15, output: 0.50}}\n"
        ));
    }
    table
}

const KEYS: [(&str, &str); 4] = [
    ("IB_TEST_ALPHA_KEY", "sk-alpha-1"),
    ("IB_TEST_BETA_KEY", "sk-beta-2"),
    ("IB_TEST_GAMMA_KEY", "sk-gamma-3"),
    ("IB_TEST_DELTA_KEY", "sk-delta-4"),
];

/// A run of the workspace's current profiles, `ib-sim` drawing with `seed` and no delays:
/// 60 items per family, so 180 scored responses per provider.
fn scored_run(ws: &Workspace, name: &str, seed: &str) -> std::path::PathBuf {
    let run = ws.run(&format!("workflow=drift/run={name}"));
    ok(ws.stage("ib-select", &run).args(["--per-family", "60", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    {
        // The simulator and the fetch take both cores: not beside a test that measures timing.
        let _one_at_a_time = crate::support::timed_section();
        let sim = Sim::start_with(ws, &["--seed", seed, "--time-scale", "0"]);
        ok(ws.stage("ib-fetch", &run).args(["--endpoint-base", &sim.url, "--env-file", "/nonexistent"]).envs(KEYS));
    }
    // Up to the metrics: no report is read here.
    for stage in stages::derived().take_while(|s| s.name != "report") {
        ok(&mut ws.stage(stage.binary, &run));
    }
    run
}

#[test]
fn same_profiles_raise_no_alarm_and_a_ten_point_drop_alarms_for_that_provider_only() {
    let compare = ib_compare();
    let ws = Workspace::with_table(&provider_table(), "drift-sim-profiles.yaml", |spec| spec);
    crate::ranks::full_dataset(&ws);
    scored_run(&ws, "r1", "1");
    scored_run(&ws, "r2", "2");
    let profiles = ws.path("pipeline/sim-profiles.yaml");
    let written = std::fs::read_to_string(&profiles).unwrap();
    let gamma = written.find("  gamma:").unwrap();
    let at = gamma + written[gamma..].find("accuracy: 1.0").unwrap();
    let dropped = format!("{}accuracy: 0.9{}", &written[..at], &written[at + "accuracy: 1.0".len()..]);
    std::fs::write(&profiles, dropped).unwrap();
    scored_run(&ws, "r3", "3");

    let output = ok(Command::new(&compare).args(["runs/*/*", "--out", "comparison"]).current_dir(ws.dir.path()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("drift alarms of 32 tests"), "2 later runs × 4 providers × 4 metrics: {stdout}");
    let (all, metadata) = table(&ws.path("comparison/drift.parquet"));
    let method: serde_json::Value = serde_json::from_str(&metadata["inferbench.drift"]).unwrap();
    assert_eq!(method["alpha"], 0.01);
    let (provider, metric, before, after) =
        (text(&all, "provider"), text(&all, "metric"), text(&all, "before_run_name"), text(&all, "after_run_name"));
    let alarm = flags(&all, "alarm");
    assert_eq!(provider.len(), 32);
    let alarms: Vec<(&str, &str, &str, &str)> = (0..provider.len())
        .filter(|&i| alarm[i])
        .map(|i| (provider[i].as_str(), metric[i].as_str(), before[i].as_str(), after[i].as_str()))
        .collect();
    // r1 → r2, the same profiles drawn again: no alarm.
    assert!((0..provider.len()).any(|i| after[i] == "r2"));
    assert!(!alarms.iter().any(|a| a.3 == "r2"), "no alarm between runs of the same profiles: {alarms:?}");
    assert!(!alarms.is_empty(), "the drop is found");
    assert!(
        alarms.iter().all(|a| a.0 == "gamma" && a.2 == "r2" && a.3 == "r3"),
        "alarms for gamma's r2 → r3 only: {alarms:?}"
    );
    assert!(alarms.iter().any(|a| a.1 == "task_success"), "{alarms:?}");
    // Each test's values and counts, and its Holm adjustment within its run's family.
    let (before_value, after_value) = (numbers(&all, "before_value"), numbers(&all, "after_value"));
    let (p, p_holm, family) = (numbers(&all, "p_value"), numbers(&all, "p_holm"), integers(&all, "family_size"));
    for i in 0..provider.len() {
        assert!(p[i].unwrap() <= p_holm[i].unwrap() && p_holm[i].unwrap() <= 1.0);
        assert_eq!(family[i], Some(16));
        if metric[i] == "task_success" && provider[i] == "gamma" && after[i] == "r3" {
            let (b, a) = (before_value[i].unwrap(), after_value[i].unwrap());
            assert!(b - a > 0.05 && b - a < 0.15, "a ten-point drop: {b} → {a}");
            assert!(p_holm[i].unwrap() <= 0.01);
        }
    }
    // The success rates are the runs' own pooled task_success_rate.
    for run in ["r1", "r2", "r3"] {
        let (pooled, _) = table(&ws.path(&format!("runs/workflow=drift/run={run}/pooled.parquet")));
        let (names, rates) = (text(&pooled, "provider"), numbers(&pooled, "task_success_rate"));
        for (j, name) in names.iter().enumerate() {
            let value = (0..provider.len())
                .filter(|&i| metric[i] == "task_success" && &provider[i] == name)
                .find_map(|i| {
                    if before[i] == run {
                        before_value[i]
                    } else if after[i] == run {
                        after_value[i]
                    } else {
                        None
                    }
                })
                .unwrap();
            assert!((value - rates[j].unwrap()).abs() < 1e-12, "{run} {name}: {value} vs {:?}", rates[j]);
        }
    }
    // Agreement, recomputed from the runs' typed rows: each parsed answer against the answer
    // more than half of the other providers' parsed answers to the item hold.
    let count = |name: &str| integers(&all, name);
    let (before_count, after_count) = (count("before_count"), count("after_count"));
    for run in ["r1", "r2", "r3"] {
        let dir = ws.path(&format!("runs/workflow=drift/run={run}"));
        let responses = parquet_io::read::<ResponseRow>(&dir.join("responses.parquet")).unwrap().rows;
        let evaluations = parquet_io::read::<EvaluationRow>(&dir.join("evaluations.parquet")).unwrap().rows;
        let answer: BTreeMap<&str, String> = evaluations
            .iter()
            .filter_map(|e| {
                let json = serde_json::to_value(e.parsed_output.as_ref()?).unwrap();
                fn any_value(v: &serde_json::Value) -> bool {
                    match v {
                        serde_json::Value::Null => false,
                        serde_json::Value::Object(m) => m.values().any(any_value),
                        _ => true,
                    }
                }
                any_value(&json).then(|| (e.request_id.as_str(), json.to_string()))
            })
            .collect();
        let mut by_item: BTreeMap<(String, &str), Vec<(&str, &String)>> = BTreeMap::new();
        for r in &responses {
            if let Some(a) = answer.get(r.request_id.as_str()) {
                by_item.entry((r.task_family.as_str().to_string(), &r.item_id)).or_default().push((&r.provider, a));
            }
        }
        let mut agreement: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        for votes in by_item.values() {
            for (provider, mine) in votes {
                let others: Vec<&String> = votes.iter().filter(|(p, _)| p != provider).map(|(_, a)| *a).collect();
                let held = |a: &&String| others.iter().filter(|o| o == &a).count();
                if let Some(majority) = others.iter().find(|a| 2 * held(a) > others.len()) {
                    let e = agreement.entry(provider).or_default();
                    e.1 += 1;
                    e.0 += i64::from(*majority == *mine);
                }
            }
        }
        for (provider_name, (agreeing, compared)) in agreement {
            let i = (0..provider.len())
                .find(|&i| {
                    metric[i] == "majority_agreement"
                        && provider[i] == provider_name
                        && (before[i] == run || after[i] == run)
                })
                .unwrap();
            let (value, n) =
                if before[i] == run { (before_value[i], before_count[i]) } else { (after_value[i], after_count[i]) };
            assert_eq!(n, Some(compared), "{run} {provider_name}");
            assert!((value.unwrap() - agreeing as f64 / compared as f64).abs() < 1e-12, "{run} {provider_name}");
        }
    }
    let md = std::fs::read_to_string(ws.path("comparison/summary.md")).unwrap();
    assert!(md.contains("### Drift and substitution alarms: "), "{md}");
    let line = md.lines().find(|l| l.starts_with("| gamma | task success rate | r2")).expect("gamma's alarm is listed");
    assert!(line.contains(" → r3"), "{line}");
}
