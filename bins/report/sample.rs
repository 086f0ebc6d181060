//! Test inputs: three providers with hand-picked figures. `b` is ranked first (E2E p99
//! 3,228.8 ms, 95.83% success), `a` second, and `c` is faster but ineligible for its failures.
use crate::inputs::{Comparisons, Metrics, ReportInputs};
use inferbench_schemas::lock::{Lock, LockSelection, LockTokenizer};
use inferbench_schemas::providers::ProviderTable;
use inferbench_schemas::spec::Spec;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

pub const FAMILIES: [&str; 3] = [
    "meeting-notes-lookup",
    "ticket-triage",
    "contract-terms-extraction",
];

pub fn bundled_spec_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/spec.yaml")
}

pub fn provider_table() -> ProviderTable {
    let entry = |name: &str| {
        format!(
            "  - name: {name}\n    label: Provider {name}\n    endpoint: http://127.0.0.1/{name}\n    \
             auth: {{kind: bearer, env: KEY_{name}}}\n    model_id: model-x\n    token_limit_field: max_tokens\n    \
             reasoning: {{reasoning_effort: low}}\n    price_usd_per_million_tokens: {{input: 1.0, output: 2.0}}\n"
        )
    };
    serde_norway::from_str(&format!(
        "providers:\n{}{}{}",
        entry("a"),
        entry("b"),
        entry("c")
    ))
    .unwrap()
}

/// A metrics row with every required column. `e2e` = (p50, p99); rates are fractions.
fn row(provider: &str, family: &str, e2e: (f64, f64), success: f64, failure: f64) -> Value {
    let mut v = json!({
        "provider": provider, "task_family": family, "scheduled_count": 600, "submitted_count": 600,
        "correct_count": (success * 600.0).round() as i64, "failed_request_count": (failure * 600.0).round() as i64,
        "invalid_result_count": 1, "incorrect_result_count": 2,
        "ttfo_ms": {"population_count": 598, "submitted_count": 600},
        "ttfa_ms": {"population_count": 598, "submitted_count": 600},
        "e2e_latency_ms": {"population_count": 597, "submitted_count": 600},
        "output_tokens_per_second": {"population_count": 590, "submitted_count": 600},
        "usage": {"reported_count": 300, "submitted_count": 600},
        "cost": {"known_cost_usd": 0.0123456789},
        "ttfo_p50": 250.0, "ttfo_p95": 900.0, "ttfo_p99": 1500.5,
        "ttfa_p50": 287.1, "ttfa_p95": 1160.0, "ttfa_p99": 2000.0,
        "pre_answer_reasoning_tokens_p50": 12.0, "pre_answer_reasoning_tokens_p95": 40.0, "pre_answer_reasoning_tokens_p99": 1234.0,
        "reasoning_emission_rate": 0.5,
        "e2e_latency_p50": e2e.0, "e2e_latency_p95": 2000.0, "e2e_latency_p99": e2e.1,
        "output_tokens_per_second_p50": 240.5, "output_tokens_per_second_p95": 61.6, "output_tokens_per_second_p99": null,
        "task_success_rate": success, "failure_rate": failure, "timeout_rate": failure, "http_429_rate": 0.0,
        "other_http_4xx_rate": 0.0, "http_5xx_rate": 0.0, "transport_error_rate": 0.0, "other_http_rate": 0.0
    });
    if family == FAMILIES[2] {
        v["contract_field_diagnostics"] = json!({"field_count_total": 10, "returned_object_count": 590, "median_correct_fields_returned": 9.5});
    }
    v
}

pub fn metrics() -> Value {
    let providers = [
        ("a", (400.0, 5000.0), 0.99, 0.0),
        ("b", (330.8, 3228.8), 0.9583333, 0.0),
        ("c", (200.0, 1000.0), 0.98, 0.0148),
    ];
    let families: Vec<Value> = providers
        .iter()
        .flat_map(|(p, e2e, s, f)| FAMILIES.iter().map(move |fam| row(p, fam, *e2e, *s, *f)))
        .collect();
    let pooled: Vec<Value> = providers
        .iter()
        .map(|(p, e2e, s, f)| {
            let mut v = row(p, "pooled", *e2e, *s, *f);
            let (rank, reasons) = match *p {
                "b" => (json!(1), json!([])),
                "a" => (json!(2), json!([])),
                _ => (Value::Null, json!(["operational failure rate above 1%"])),
            };
            v["rank"] = rank;
            v["eligible"] = json!(*p != "c");
            v["ineligibility_reasons"] = reasons;
            v["balanced"] = json!(true);
            v
        })
        .collect();
    json!({
        "metrics_version": "inferbench-metrics-v1", "benchmark_slug": "inference-micro-single-task", "run_id": "run-sample",
        "percentile_convention": "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1",
        "task_family_metrics": families, "combined_provider_metrics": pooled, "ranking": ["b", "a"],
        "provenance": {"code_version": "inferbench test", "inputs": {"lock.json": "11".repeat(32)}}
    })
}

pub fn comparisons() -> Value {
    let win = |p: &str, credited: f64, outright: i64, tied: i64, eligible: bool| {
        json!({"provider": p, "eligible": eligible, "credited_wins": credited, "outright_wins": outright, "tied_fastest_rounds": tied,
               "eligible_e2e_sample_count": if eligible { 600 } else { 0 }, "total_round_count": 600,
               "win_rate": if eligible { json!(credited / 600.0) } else { Value::Null }})
    };
    let pair = |a: &str, b: &str, eligible: bool, diffs: [Option<f64>; 3], paired: i64| {
        let reasons = if eligible {
            json!([])
        } else {
            json!([format!("c: operational failure rate above 1%")])
        };
        json!({"provider_a": a, "provider_b": b, "eligible_comparison": eligible, "exclusion_reasons": reasons,
               "paired_count": paired, "total_round_count": 600, "coverage_rate": paired as f64 / 600.0,
               "difference_p50_ms": diffs[0], "difference_p95_ms": diffs[1], "difference_p99_ms": diffs[2]})
    };
    json!({
        "metrics_version": "inferbench-metrics-v1", "run_id": "run-sample",
        "fastest_provider_wins": [win("a", 200.5, 200, 1, true), win("b", 399.5, 399, 1, true), win("c", 0.0, 0, 0, false)],
        "pairwise_e2e_latency_differences": [
            pair("a", "b", true, [Some(-20.0), Some(1500.25), Some(3000.0)], 597),
            pair("a", "c", false, [None, None, None], 0),
            pair("b", "c", false, [None, None, None], 0),
        ],
        "provenance": {"code_version": "inferbench test", "inputs": {"lock.json": "11".repeat(32)}}
    })
}

pub fn lock() -> Lock {
    Lock {
        v: 1,
        run_id: "run-sample".into(),
        workflow: "micro-single-task".into(),
        benchmark_slug: "inference-micro-single-task".into(),
        code_version: "inferbench test".into(),
        inputs: BTreeMap::from([
            ("manifest.json".to_string(), "22".repeat(32)),
            ("spec.yaml".to_string(), "33".repeat(32)),
        ]),
        dataset_release_hash: "44".repeat(32),
        selection: LockSelection {
            algorithm_version: "sel-v1".into(),
            selected_items_per_task_family: 200,
            sample: false,
            seeds: BTreeMap::new(),
        },
        tokenizer: LockTokenizer {
            encoding: "o200k_base".into(),
            implementation: "tiktoken-rs".into(),
            vocabulary_sha256: "55".repeat(32),
        },
        providers: vec!["a".into(), "b".into(), "c".into()],
    }
}

/// The sample as loaded inputs (the checks pass on it).
pub fn inputs() -> ReportInputs {
    let metrics: Metrics = serde_json::from_value(metrics()).unwrap();
    let comparisons: Comparisons = serde_json::from_value(comparisons()).unwrap();
    let hashes = BTreeMap::from([
        ("comparisons.json".to_string(), "66".repeat(32)),
        ("lock.json".to_string(), "11".repeat(32)),
        ("metrics.json".to_string(), "77".repeat(32)),
    ]);
    let spec = Spec::load(&bundled_spec_path()).unwrap();
    ReportInputs {
        spec,
        table: provider_table(),
        lock: lock(),
        metrics,
        comparisons,
        hashes,
    }
}
