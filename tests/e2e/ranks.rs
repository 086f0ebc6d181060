//! Ranks with their uncertainty, against `ib-sim`: two providers with one profile cannot be
//! told apart and share a rank range; a clearly faster one holds its rank alone.
use crate::support::{ok, repo, Sim, Workspace};
use serde_json::Value;
use std::path::Path;

const TABLE: &str = "providers:
  - name: quick
    endpoint: https://quick.invalid/v1/chat/completions
    auth: {kind: bearer, env: IB_TEST_QUICK_KEY}
    model_id: m-quick
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 0.15, output: 0.50}
  - name: twin-a
    endpoint: https://twin-a.invalid/v1/chat/completions
    auth: {kind: bearer, env: IB_TEST_TWIN_A_KEY}
    model_id: m-twin
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 0.15, output: 0.50}
  - name: twin-b
    endpoint: https://twin-b.invalid/v1/chat/completions
    auth: {kind: bearer, env: IB_TEST_TWIN_B_KEY}
    model_id: m-twin
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 0.15, output: 0.50}
";

/// The full dataset in place of the workspace's six-item sample: a verdict on a p99 needs
/// 299 shared rounds, and 100 items per family give 300.
pub fn full_dataset(ws: &Workspace) {
    let data = ws.dataset();
    std::fs::remove_dir_all(&data).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    for entry in std::fs::read_dir(repo().join("data/micro-single-task")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, data.join(path.file_name().unwrap())).unwrap();
    }
}

fn pooled<'a>(metrics: &'a Value, provider: &str) -> &'a Value {
    let rows = metrics["combined_provider_metrics"].as_array().unwrap();
    rows.iter().find(|r| r["provider"] == provider).unwrap()
}

#[test]
fn identical_profiles_share_a_rank_range_and_a_clearly_faster_provider_ranks_alone() {
    let ws = Workspace::with_table(TABLE, "ranks-sim-profiles.yaml", |spec| spec);
    full_dataset(&ws);
    let run = ws.run("run-ranks");
    {
        // Only the fetch is timed: the derived stages read its log, whatever runs beside them.
        let _beside_others = crate::support::shared_section();
        let sim = Sim::start(&ws);
        ok(ws.stage("ib-select", &run).args(["--per-family", "100", "--sample"]));
        ok(&mut ws.stage("ib-schedule", &run));
        ok(ws.stage("ib-fetch", &run).args(["--endpoint-base", &sim.url, "--env-file", "/nonexistent"]).envs([
            ("IB_TEST_QUICK_KEY", "sk-quick-1"),
            ("IB_TEST_TWIN_A_KEY", "sk-twin-a-2"),
            ("IB_TEST_TWIN_B_KEY", "sk-twin-b-3"),
        ]));
    }
    ws.derive(&run);
    let metrics: Value = serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    let ranking: Vec<&str> = metrics["ranking"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(ranking[0], "quick", "{ranking:?}");
    assert_eq!(ranking.len(), 3, "every provider ranked: {ranking:?}");
    let label = |p: &str| pooled(&metrics, p)["rank_range"]["label"].as_str().unwrap().to_string();
    assert_eq!(label("quick"), "1");
    assert_eq!((label("twin-a"), label("twin-b")), ("2–3".to_string(), "2–3".to_string()));
    let separations = metrics["rank_separation"].as_array().unwrap();
    assert_eq!(separations.len(), 2);
    assert_eq!(separations[0]["shared_rounds"], 300);
    assert_eq!(separations[0]["distinguishable"], true, "{:?}", separations[0]);
    assert_eq!(separations[1]["distinguishable"], false, "{:?}", separations[1]);
    // The figures carry their intervals: 300 samples resolve a p99, and its interval holds it.
    let p99 = &pooled(&metrics, "twin-a")["e2e_latency_ms"]["percentiles"]["p99"];
    let (value, lower, upper) = (
        p99["value"].as_f64().unwrap(),
        p99["interval"]["lower"].as_f64().unwrap(),
        p99["interval"]["upper"].as_f64().unwrap(),
    );
    assert!(lower <= value && value <= upper, "{p99}");
    check_tables_and_report(&run);
}

fn check_tables_and_report(run: &Path) {
    use inferbench_contract::tables::PooledRow;
    let rows = inferbench_store::parquet_io::read::<PooledRow>(&run.join("pooled.parquet")).unwrap().rows;
    let ranges: Vec<(&str, Option<i64>, Option<i64>)> =
        rows.iter().map(|r| (r.provider.as_str(), r.rank_first, r.rank_last)).collect();
    assert_eq!(ranges[0], ("quick", Some(1), Some(1)));
    assert!(ranges[1..].iter().all(|(_, first, last)| (*first, *last) == (Some(2), Some(3))), "{ranges:?}");
    assert!(rows.iter().all(|r| r.e2e_latency_p99_lower.is_some() && r.task_success_rate_lower.is_some()));
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("| 2–3 | twin-"), "the leaderboard shows the shared range");
    assert!(report.contains("### Which ranks the run tells apart"));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("Which ranks the run tells apart"));
}
