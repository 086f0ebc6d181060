//! Test inputs: three providers with hand-picked figures. `b` is ranked first (E2E p99
//! 3,228.8 ms, 95.83% success), `a` second, and `c` is faster but ineligible for its failures.
use crate::inputs::ReportInputs;
use inferbench_contract::documents::{
    AnswerStreaming, ComparisonsDocument, Cost, EligibilityPolicy, FailureCounts, FieldDiagnostics, FlatPercentiles,
    GroupMetrics, MetricSummaries, MetricsDocument, PairRow, PercentileValue, Percentiles, PooledMetrics, PriceUsd,
    Provenance, ProviderEligibility, RankRange, RankSeparation, RateDetail, SpreadFigures, StreamDiagnostics, Summary,
    Usage, WinRow, METRICS_VERSION,
};
use inferbench_contract::lock::{Lock, LockSelection, LockTokenizer};
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

pub const FAMILIES: [&str; 3] = ["meeting-notes-lookup", "ticket-triage", "contract-terms-extraction"];

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
    serde_norway::from_str(&format!("providers:\n{}{}{}", entry("a"), entry("b"), entry("c"))).unwrap()
}

/// A summary of `population` samples out of 600 with percentiles `[p50, p95, p99]`.
fn summary(population: i64, [p50, p95, p99]: [Option<f64>; 3]) -> Summary {
    let value = |value| PercentileValue { value, ..PercentileValue::NONE };
    Summary {
        population_count: population,
        submitted_count: 600,
        missing_sample_count: 600 - population,
        population_rate: Some(population as f64 / 600.0),
        percentiles: Percentiles { p50: value(p50), p95: value(p95), p99: value(p99) },
    }
}

fn detail(value: f64, numerator: i64, denominator: i64) -> RateDetail {
    RateDetail { value: Some(value), numerator, denominator, missing_sample_count: 600 - denominator, interval: None }
}

/// Streams of ~12 chunks a token each, 20 ms apart; `buffered` of them flushed at once.
fn answer_streaming(answers: i64, buffered: i64) -> AnswerStreaming {
    let spread = |count, p50, p99, max| SpreadFigures { count, p50: Some(p50), p99: Some(p99), max: Some(max) };
    AnswerStreaming {
        answer_count: answers,
        chunks_per_answer: spread(answers, 12.0, 20.0, 31.0),
        tokens_per_chunk: spread(answers * 12, 1.0, 2.0, if buffered > 0 { 14.0 } else { 3.0 }),
        inter_chunk_gap_ms: spread(answers * 11, 20.0, 45.5, 130.25),
        buffered: RateDetail {
            value: Some(buffered as f64 / answers as f64),
            numerator: buffered,
            denominator: answers,
            missing_sample_count: 600 - answers,
            interval: None,
        },
    }
}

/// A metrics row of 600 requests. `e2e` = (p50, p99); rates are fractions; every failure is a
/// timeout.
fn row(provider: &str, family: &str, e2e: (f64, f64), success: f64, failure: f64) -> GroupMetrics {
    let (correct, failed) = ((success * 600.0).round() as i64, (failure * 600.0).round() as i64);
    let summaries = MetricSummaries {
        ttfo_ms: summary(598, [Some(250.0), Some(900.0), Some(1500.5)]),
        ttfa_ms: summary(598, [Some(287.1), Some(1160.0), Some(2000.0)]),
        pre_answer_reasoning_tokens: summary(598, [Some(12.0), Some(40.0), Some(1234.0)]),
        e2e_latency_ms: summary(597, [Some(e2e.0), Some(2000.0), Some(e2e.1)]),
        output_tokens_per_second: summary(590, [Some(240.5), Some(61.6), None]),
    };
    GroupMetrics {
        provider: provider.into(),
        task_family: family.into(),
        scheduled_count: 600,
        submitted_count: 600,
        missing_response_count: 0,
        correct_count: correct,
        failed_request_count: failed,
        invalid_result_count: 1,
        incorrect_result_count: 2,
        task_success_rate: Some(success),
        task_success_rate_detail: detail(success, correct, 600),
        failure_rate: Some(failure),
        failure_rate_detail: detail(failure, failed, 600),
        failures: FailureCounts {
            timeout_rate: Some(failure),
            timeout_count: failed,
            ..FailureCounts::new([0; 9], 600)
        },
        reasoning_emission_rate: Some(0.5),
        reasoning_emission_detail: detail(0.5, 299, 598),
        percentiles: FlatPercentiles::of(&summaries),
        summaries,
        usage: Usage {
            reported_count: 300,
            submitted_count: 600,
            missing_count: 300,
            coverage_rate: Some(0.5),
            input_tokens: 30_000,
            output_tokens: 15_000,
            total_tokens: 45_000,
        },
        stream_diagnostics: StreamDiagnostics {
            ended_stream_count: 600 - failed,
            missing_done_count: 0,
            missing_finish_reason_count: 0,
            usage_reported_count: 300,
            usage_mismatch_count: 0,
            answer_streaming: answer_streaming(600 - failed, if provider.ends_with('c') { 30 } else { 0 }),
        },
        cost: Cost {
            reported_count: 300,
            submitted_count: 600,
            missing_count: 300,
            coverage_rate: Some(0.5),
            known_cost_usd: 0.0123456789,
            total_cost_usd: None,
            price_usd_per_million_tokens: PriceUsd { input: 1.0, output: 2.0 },
        },
        contract_field_diagnostics: (family == FAMILIES[2]).then_some(FieldDiagnostics {
            field_count_total: 10,
            returned_object_count: 590,
            median_correct_fields_returned: Some(9.5),
        }),
    }
}

/// Each provider's (name, E2E (p50, p99), success, failure).
const PROVIDERS: [(&str, (f64, f64), f64, f64); 3] =
    [("a", (400.0, 5000.0), 0.99, 0.0), ("b", (330.8, 3228.8), 0.9583333, 0.0), ("c", (200.0, 1000.0), 0.98, 0.0148)];

const FAILURES: &str = "operational failure rate above 1%";

fn pooled((p, e2e, s, f): (&str, (f64, f64), f64, f64)) -> PooledMetrics {
    let (rank, reasons) = match p {
        "b" => (Some(1), vec![]),
        "a" => (Some(2), vec![]),
        _ => (None, vec![FAILURES.to_string()]),
    };
    PooledMetrics {
        metrics: row(p, "pooled", e2e, s, f),
        weighting: "pooled_balanced_requests".into(),
        task_family_count: 3,
        expected_task_family_count: 3,
        missing_task_families: vec![],
        task_family_submitted_counts: FAMILIES.iter().map(|f| (f.to_string(), 600)).collect(),
        balanced: true,
        expected_models: vec![format!("model-{p}")],
        models_returned: BTreeMap::from([(format!("model-{p}"), 600)]),
        model_mismatch_count: 0,
        model_missing_count: 0,
        configuration_compatible: true,
        artifact_graph_complete: true,
        eligible: reasons.is_empty(),
        ineligibility_details: reasons.clone(),
        ineligibility_reasons: reasons,
        rank_range: rank.map(|r| RankRange::new(r, r)),
        rank,
    }
}

fn provenance() -> Provenance {
    Provenance {
        code_version: "inferbench test".into(),
        inputs: BTreeMap::from([("lock.json".to_string(), "11".repeat(32))]),
    }
}

const CONVENTION: &str =
    "nearest-rank, integer ranks: upper pK = ceil(K·n/100); lower floor pK = n − ceil(K·n/100) + 1";

pub fn metrics_document() -> MetricsDocument {
    let families =
        PROVIDERS.iter().flat_map(|(p, e2e, s, f)| FAMILIES.iter().map(move |fam| row(p, fam, *e2e, *s, *f))).collect();
    MetricsDocument {
        metrics_version: METRICS_VERSION.into(),
        benchmark_slug: "inference-micro-single-task".into(),
        run_id: "run-sample".into(),
        percentile_convention: CONVENTION.into(),
        eligibility: EligibilityPolicy { min_task_success_rate: 0.95, max_failure_rate: 0.01 },
        task_family_metrics: families,
        combined_provider_metrics: PROVIDERS.map(pooled).to_vec(),
        ranking: vec!["b".into(), "a".into()],
        rank_separation: vec![RankSeparation {
            better: "b".into(),
            worse: "a".into(),
            key: "e2e_latency_p99".into(),
            shared_rounds: 600,
            difference: Some(120.5),
            lower: Some(40.0),
            upper: Some(210.25),
            min_rounds: 299,
            distinguishable: true,
            rounds_to_separate: Some(260),
        }],
        rank_separation_method: "paired bootstrap".into(),
        load: None,
        cache_probe: None,
        provenance: provenance(),
    }
}

/// `metrics.json` as JSON.
pub fn metrics() -> Value {
    serde_json::to_value(metrics_document()).unwrap()
}

/// The reference's reason for leaving a provider out of the pairs (c lacks responses).
const INCOMPLETE: &str = "incomplete or internally inconsistent local artifact graph";

fn eligibility(provider: &str) -> ProviderEligibility {
    let reasons: Vec<String> = match provider {
        "c" => vec![INCOMPLETE.into()],
        _ => vec![],
    };
    ProviderEligibility {
        provider: provider.into(),
        configuration_compatible: true,
        artifact_graph_complete: reasons.is_empty(),
        eligible: reasons.is_empty(),
        exclusion_reasons: reasons,
    }
}

fn win(provider: &str, credited: f64, outright: i64, tied: i64) -> WinRow {
    let e = eligibility(provider);
    let samples = if e.eligible { 600 } else { 0 };
    WinRow {
        provider: provider.into(),
        configuration_compatible: e.configuration_compatible,
        artifact_graph_complete: e.artifact_graph_complete,
        eligible: e.eligible,
        exclusion_reasons: e.exclusion_reasons,
        credited_wins: credited,
        outright_wins: outright,
        tied_fastest_rounds: tied,
        eligible_round_count: 600,
        eligible_e2e_sample_count: samples,
        excluded_or_missing_sample_count: 600 - samples,
        total_round_count: 600,
        win_rate: e.eligible.then_some(credited / 600.0),
    }
}

fn pair(a: &str, b: &str, diffs: [Option<f64>; 3], paired: i64) -> PairRow {
    let eligible = b != "c";
    let reasons = match eligible {
        true => vec![],
        false => vec![format!("c: {INCOMPLETE}")],
    };
    PairRow {
        provider_a: a.into(),
        provider_b: b.into(),
        difference_definition: "provider_a_e2e_latency_ms - provider_b_e2e_latency_ms".into(),
        eligible_comparison: eligible,
        exclusion_reasons: reasons,
        paired_count: paired,
        total_round_count: 600,
        missing_pair_count: 600 - paired,
        coverage_rate: Some(paired as f64 / 600.0),
        difference_p50_ms: diffs[0],
        difference_p95_ms: diffs[1],
        difference_p99_ms: diffs[2],
    }
}

pub fn comparisons_document() -> ComparisonsDocument {
    ComparisonsDocument {
        metrics_version: METRICS_VERSION.into(),
        benchmark_slug: "inference-micro-single-task".into(),
        run_id: "run-sample".into(),
        percentile_convention: CONVENTION.into(),
        tie_rule: "exact E2E ties split one round's credit equally (1/k each)".into(),
        provider_eligibility: ["a", "b", "c"].map(eligibility).to_vec(),
        fastest_provider_wins: vec![win("a", 200.5, 200, 1), win("b", 399.5, 399, 1), win("c", 0.0, 0, 0)],
        pairwise_e2e_latency_differences: vec![
            pair("a", "b", [Some(-20.0), Some(1500.25), Some(3000.0)], 597),
            pair("a", "c", [None, None, None], 0),
            pair("b", "c", [None, None, None], 0),
        ],
        api_pairs: Vec::new(),
        provenance: provenance(),
    }
}

/// `comparisons.json` as JSON.
pub fn comparisons() -> Value {
    serde_json::to_value(comparisons_document()).unwrap()
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
        imported_from: None,
    }
}

/// The sample as loaded inputs (the checks pass on it).
pub fn inputs() -> ReportInputs {
    let metrics = metrics_document();
    let comparisons = comparisons_document();
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
        metrics_text: serde_json::to_string(&metrics).unwrap(),
        comparisons_text: serde_json::to_string(&comparisons).unwrap(),
        metrics,
        comparisons,
        hashes,
        scheduled_requests: 1800,
        responses: crate::responses::Responses::default(),
        files: BTreeMap::new(),
        execution: inferbench_contract::manifest::Execution {
            segments: Vec::new(),
            wall_clock_period: None,
            clock: "CLOCK_MONOTONIC".into(),
            endpoint_mode: Some(inferbench_contract::vocab::EndpointMode::Providers),
            resumed_rounds: 0,
            resent_attempts: 0,
            steps: Vec::new(),
        },
        parity: None,
        _writer: None,
    }
}
