//! One test per rule: the bundled spec, broken in one place, must be refused naming the key.
use super::*;
use inferbench_contract::vocab::{ArrivalProcess, LoadMode};
use serde_json::json;

fn bundled_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/micro-single-task/spec.yaml")
}

fn bundled() -> Value {
    serde_norway::from_str(&std::fs::read_to_string(bundled_path()).unwrap()).unwrap()
}

/// The value at a dotted path, created (as mappings) when missing.
fn at<'a>(root: &'a mut Value, path: &str) -> &'a mut Value {
    path.split('.').fold(root, |v, key| {
        let map = v.as_object_mut().expect("a mapping on the way");
        map.entry(key.to_string()).or_insert_with(|| json!({}))
    })
}

fn remove(root: &mut Value, path: &str) {
    let (parent, key) = path.rsplit_once('.').unwrap_or(("", path));
    let map = if parent.is_empty() { root } else { at(root, parent) };
    map.as_object_mut().unwrap().remove(key);
}

/// The problems of the bundled spec with `path` set to `value`.
fn problems_with(path: &str, value: Value) -> Vec<String> {
    let mut root = bundled();
    *at(&mut root, path) = value;
    problems(&root)
}

fn problems(root: &Value) -> Vec<String> {
    match Spec::from_value(Path::new("spec.yaml"), root) {
        Ok(_) => Vec::new(),
        Err(Error::Invalid(list)) => list,
        Err(other) => panic!("expected a list of problems, got {other}"),
    }
}

/// Asserts exactly one problem, on `key`, containing `text`.
fn refused(path: &str, value: Value, key: &str, text: &str) {
    let found = problems_with(path, value.clone());
    assert_eq!(found.len(), 1, "{path} = {value}: {found:#?}");
    let prefix = format!("spec.yaml: {key}: ");
    assert!(found[0].starts_with(&prefix) && found[0].contains(text), "{path} = {value}: {}", found[0]);
}

#[test]
fn bands_parse_and_reject_nonsense() {
    assert_eq!(parse_band("500-1000"), Some((500, 1000)));
    assert_eq!(parse_band("50 - 100"), Some((50, 100)));
    assert_eq!(parse_band("100-50"), None);
    assert_eq!(parse_band("many"), None);
}

#[test]
fn the_bundled_spec_loads_with_its_values() {
    let spec = Spec::load(&bundled_path()).unwrap();
    assert_eq!(spec.slug, "inference-micro-single-task");
    assert_eq!(spec.families.len(), 3);
    assert_eq!(spec.families[1].input_tokens, (50, 100));
    assert_eq!(spec.inference.max_completion_tokens, 256);
    assert_eq!(spec.inference.timeout_seconds, 20.0);
    assert_eq!(spec.inference.stream_limits, StreamLimits { max_event_bytes: 64 << 10, max_response_bytes: 16 << 20 });
    assert_eq!(spec.required_columns, metric_columns());
    assert_eq!(spec.provider_source, ProviderSource::Table(spec.dir().join("providers.yaml")));
    assert_eq!(spec.providers_path, spec.dir().join("providers.yaml"));
    assert_eq!(spec.execution_plan.maximum_global_concurrency, Some(10));
    assert_eq!(spec.execution_plan.total_provider_requests, Some(6000));
}

#[test]
fn a_minimal_spec_needs_only_the_acted_upon_keys() {
    let mut root = bundled();
    for section in
        ["runner", "execution_plan", "stream_timing", "rate_limit_policy", "evaluation", "metrics", "operations"]
    {
        remove(&mut root, section);
    }
    remove(&mut root, "inference.stream_limits");
    remove(&mut root, "inference.max_attempts");
    let spec = Spec::from_value(Path::new("spec.yaml"), &root).unwrap();
    assert_eq!(spec.inference.stream_limits, StreamLimits::default());
    assert_eq!(spec.execution_plan.maximum_global_concurrency, None);
}

#[test]
fn the_reference_runners_own_sections_are_accepted_as_it_writes_them() {
    // The whole reference spec, vendors included, is tests/fixtures/reference/spec.yaml
    // (spec/vendors_tests.rs); these are its sections beside inferbench's own provider table.
    let mut root = bundled();
    let reference: Value = serde_norway::from_str(include_str!("reference_sections.yaml")).unwrap();
    for (section, value) in reference.as_object().unwrap() {
        *at(&mut root, section) = value.clone();
    }
    assert_eq!(problems(&root), Vec::<String>::new());
}

#[test]
fn timeouts_must_be_finite_positive_and_bounded() {
    for bad in [json!(-1), json!(0), json!(1e20), json!(600.5)] {
        refused("inference.timeout_seconds", bad, "inference.timeout_seconds", "greater than 0 and at most 600");
    }
    // YAML's .nan arrives as null.
    refused("inference.timeout_seconds", Value::Null, "inference.timeout_seconds", "expected a finite number");
    refused("inference.timeout_seconds", json!("20s"), "inference.timeout_seconds", "expected a finite number");
    assert!(problems_with("inference.timeout_seconds", json!(0.5)).is_empty());
}

#[test]
fn the_wire_api_and_the_structured_output_mode_are_one_of_their_values() {
    refused("inference.api", json!("completions"), "inference.api", "one of chat-completions, responses, messages");
    refused(
        "inference.structured_output.mode",
        json!("json_schema"),
        "inference.structured_output.mode",
        "json_object, prompt_only",
    );
    for api in ["chat-completions", "responses", "messages"] {
        // The spec alone: its provider table is checked against it when loaded (providers.rs).
        assert!(problems_with("inference.api", json!(api)).is_empty(), "{api}");
    }
    assert!(problems_with("inference.structured_output.mode", json!("prompt_only")).is_empty());
}

#[test]
fn settings_inferbench_does_not_implement_are_refused_with_the_reason() {
    refused("inference.max_attempts", json!(2), "inference.max_attempts", "must be 1, found 2: inferbench sends");
    refused(
        "execution_plan.per_provider_concurrency",
        json!(2),
        "execution_plan.per_provider_concurrency",
        "must be 1",
    );
    refused("inference.turns", json!(3), "inference.turns", "single-turn");
    refused("inference.streaming", json!(false), "inference.streaming", "must be true");
    refused(
        "inference.reasoning.provider_overrides",
        json!({"modal": "high"}),
        "inference.reasoning.provider_overrides",
        "must be {}",
    );
    refused("rate_limit_policy.request_retry", json!(true), "rate_limit_policy.request_retry", "never retries");
    refused("inference.top_k", json!(40), "inference.top_k", "`disabled`");
    refused(
        "operations.full_run_requires_human_approval",
        json!("yes"),
        "operations.full_run_requires_human_approval",
        "expected true or false",
    );
    // No approval gate to ask for: either value describes what inferbench does.
    assert!(problems_with("operations.full_run_requires_human_approval", json!(true)).is_empty());
    assert!(problems_with("operations.full_run_requires_human_approval", json!(false)).is_empty());
    refused(
        "smoke_run.budget",
        json!({"maximum_requests_per_attempt": 30, "maximum_cost_usd_across_attempts": 50}),
        "smoke_run.budget",
        "no smoke mode",
    );
    refused("dataset.tokenizer.encoding", json!("cl100k_base"), "dataset.tokenizer.encoding", "o200k_base");
    refused("metrics.ranking.order_by", json!("pooled_ttfa_p50 ascending"), "metrics.ranking.order_by", "ranked");
    refused(
        "execution_plan.task_family_schedule.order",
        json!(["ticket-triage"]),
        "execution_plan.task_family_schedule.order",
        "in this order",
    );
}

#[test]
fn unknown_keys_are_errors_at_every_level_and_all_reported() {
    refused("inference.max_atempts", json!(1), "inference.max_atempts", "unknown key");
    refused("surprise", json!(true), "surprise", "unknown key");
    refused(
        "execution_plan.connection_policy.warm_up",
        json!(true),
        "execution_plan.connection_policy.warm_up",
        "unknown key",
    );
    refused("dataset.task_families.poetry", json!({}), "dataset.task_families.poetry", "unknown key");
    let mut root = bundled();
    *at(&mut root, "inference.max_atempts") = json!(1);
    *at(&mut root, "reporting.colour") = json!("blue");
    *at(&mut root, "inference.timeout_seconds") = json!(-5);
    let found = problems(&root);
    assert_eq!(found.len(), 3, "{found:#?}");
}

#[test]
fn missing_required_keys_are_named() {
    let mut root = bundled();
    remove(&mut root, "inference.temperature");
    remove(&mut root, "dataset.task_families");
    assert_eq!(
        problems(&root),
        ["spec.yaml: dataset.task_families: missing", "spec.yaml: inference.temperature: missing"]
    );
    let mut root = bundled();
    remove(&mut root, "providers.table");
    assert_eq!(
        problems(&root),
        ["spec.yaml: providers.table: missing: name the provider table, e.g. `table: providers.yaml`, \
             or list the reference's providers under providers.vendors"]
    );
    assert_eq!(problems(&json!([1])), ["spec.yaml: (top level): expected a mapping, found [1]"]);
}

/// The reference's spec fixture is a faithful copy: its sections are the ones the reference
/// run recorded in its lock, except the three values the fixture documents.
#[test]
fn the_reference_spec_fixture_is_what_the_reference_run_locked() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/reference");
    let mut spec: Value = serde_norway::from_str(&std::fs::read_to_string(dir.join("spec.yaml")).unwrap()).unwrap();
    let lock: Value = serde_json::from_slice(&std::fs::read(dir.join("run-lock.json")).unwrap()).unwrap();
    let locked = &lock["resolved_execution_configuration"];
    let order: Vec<&str> = spec.as_object().unwrap().keys().map(String::as_str).collect();
    let sections = ["runner", "benchmark", "dataset", "providers", "inference", "execution_plan", "stream_timing"];
    let more = ["rate_limit_policy", "evaluation", "metrics", "persistence", "smoke_run", "reporting", "operations"];
    assert_eq!(order, [&sections[..], &more[..]].concat(), "seed-runner.md §2.1's order");
    let vendors: Vec<&str> = spec["providers"]["vendors"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(vendors, crate::known_providers::names());
    assert_eq!(spec["runner"]["local_run_root"], "runs/micro-single-task");
    assert_eq!(spec["persistence"]["local"]["source_of_truth"], true);
    for section in ["runner", "persistence"] {
        remove(&mut spec, section);
    }
    // That run's machine paths and its loopback stand-in for Modal.
    *at(&mut spec, "dataset.source") = locked["dataset"]["source"].clone();
    *at(&mut spec, "dataset.manifest") = locked["dataset"]["manifest"].clone();
    assert_eq!(locked["providers"]["vendors"]["modal"]["url"], "http://127.0.0.1:18080/v1/chat/completions");
    *at(&mut spec, "providers.vendors.modal.url") = locked["providers"]["vendors"]["modal"]["url"].clone();
    assert_eq!(inferbench_contract::canonical::sorted(&spec), inferbench_contract::canonical::sorted(locked));
}

#[test]
fn sampling_settings_are_range_checked() {
    refused("inference.temperature", json!(-0.1), "inference.temperature", "from 0 to 2");
    refused("inference.temperature", json!(true), "inference.temperature", "finite number");
    refused("inference.top_p", json!(0), "inference.top_p", "greater than 0");
    refused("inference.presence_penalty", json!(3), "inference.presence_penalty", "from -2 to 2");
    refused("inference.frequency_penalty", json!(-2.5), "inference.frequency_penalty", "from -2 to 2");
    refused("inference.max_completion_tokens", json!(0), "inference.max_completion_tokens", "integer from 1");
    refused("inference.max_completion_tokens", json!(25.5), "inference.max_completion_tokens", "integer from 1");
    refused("inference.reasoning.default_effort", json!("extreme"), "inference.reasoning.default_effort", "not one of");
}

#[test]
fn stream_limits_are_positive_bounded_and_ordered() {
    let limits = |event: Value, response: Value| json!({"max_event_bytes": event, "max_response_bytes": response});
    let key = "inference.stream_limits";
    refused(
        key,
        limits(json!(0), json!(1024)),
        "inference.stream_limits.max_event_bytes",
        "integer from 1 to 1073741824",
    );
    refused(key, limits(json!(1024), json!(-1)), "inference.stream_limits.max_response_bytes", "integer from 1");
    refused(
        key,
        limits(json!(1024), json!(2_147_483_648u64)),
        "inference.stream_limits.max_response_bytes",
        "1073741824",
    );
    refused(
        key,
        limits(json!(4096), json!(1024)),
        "inference.stream_limits.max_event_bytes",
        "exceeds max_response_bytes 1024",
    );
    refused(
        key,
        json!({"max_event_bytes": 32 << 20}),
        "inference.stream_limits.max_event_bytes",
        "exceeds max_response_bytes",
    );
    refused(key, json!({"max_line_bytes": 10}), "inference.stream_limits.max_line_bytes", "unknown key");
    let mut root = bundled();
    *at(&mut root, key) = json!({"max_event_bytes": 4096});
    let spec = Spec::from_value(Path::new("spec.yaml"), &root).unwrap();
    assert_eq!(spec.inference.stream_limits, StreamLimits { max_event_bytes: 4096, max_response_bytes: 16 << 20 });
}

#[test]
fn the_http_version_is_1_1_or_2_and_1_1_without_the_key() {
    let key = "inference.transport.http_version";
    let version =
        |root: &Value| Spec::from_value(Path::new("spec.yaml"), root).unwrap().inference.transport.http_version;
    let mut root = bundled();
    assert_eq!(version(&root), HttpVersion::Http1, "the bundled spec says 1.1");
    remove(&mut root, "inference.transport");
    assert_eq!(version(&root), HttpVersion::Http1, "the reference's spec has no such key: HTTP/1.1");
    *at(&mut root, key) = json!("2");
    assert_eq!(version(&root), HttpVersion::Http2);
    *at(&mut root, key) = json!("1.1");
    assert_eq!(version(&root), HttpVersion::Http1);
    for bad in [json!("3"), json!("2.0"), json!("HTTP/2"), json!("h2"), json!(""), json!(null), json!(["2"])] {
        refused(key, bad, key, "must be \"1.1\" or \"2\"");
    }
    // Unquoted in YAML, both are numbers: refused, saying why.
    refused(key, json!(1.1), key, "quoted");
    refused(key, json!(2), key, "quoted");
    refused("inference.transport.alpn", json!(["h2"]), "inference.transport.alpn", "unknown key");
}

#[test]
fn counts_must_agree_with_each_other() {
    refused("dataset.available_items", json!(720), "dataset.available_items", "721 in all");
    refused("dataset.selected_items", json!(300), "dataset.selected_items", "differs from 600");
    refused("execution_plan.question_rounds", json!(601), "execution_plan.question_rounds", "differs from 600");
    refused(
        "execution_plan.requests_per_provider",
        json!(6),
        "execution_plan.requests_per_provider",
        "differs from 600",
    );
    refused(
        "dataset.task_families.ticket-triage.selected_items",
        json!(100),
        "dataset.task_families.ticket-triage.selected_items",
        "differs",
    );
    refused(
        "dataset.selection.selected_items_per_task_family",
        json!(0),
        "dataset.selection.selected_items_per_task_family",
        "integer from 1",
    );
    let found = problems_with("dataset.selection.selected_items_per_task_family", json!(238));
    assert!(
        found.iter().any(|p| p.contains("238 exceeds dataset.task_families.meeting-notes-lookup.available_items 237")),
        "{found:#?}"
    );
    refused(
        "execution_plan.maximum_global_concurrency",
        json!(0),
        "execution_plan.maximum_global_concurrency",
        "integer from 1",
    );
}

#[test]
fn families_paths_and_columns_are_checked() {
    let mut root = bundled();
    let families = at(&mut root, "dataset.task_families").as_object_mut().unwrap();
    let meeting = families.shift_remove("meeting-notes-lookup").unwrap();
    families.insert("meeting-notes-lookup".into(), meeting);
    assert_eq!(problems(&root).len(), 1, "{:#?}", problems(&root));
    assert!(problems(&root)[0].contains("dataset.task_families: expected the families in the order"));
    refused(
        "dataset.task_families.ticket-triage.input_tokens",
        json!("100-50"),
        "dataset.task_families.ticket-triage.input_tokens",
        "LOW-HIGH",
    );
    refused(
        "dataset.task_families.ticket-triage.prompt_template",
        json!("/etc/passwd"),
        "dataset.task_families.ticket-triage.prompt_template",
        "inside the spec's directory",
    );
    refused(
        "dataset.task_families.ticket-triage.prompt_template",
        json!("../x.txt"),
        "dataset.task_families.ticket-triage.prompt_template",
        "without `..`",
    );
    refused(
        "dataset.task_families.ticket-triage.output_schema",
        json!({"category": "string"}),
        "dataset.task_families.ticket-triage.output_schema",
        "fixed rubric",
    );
    refused(
        "dataset.manifest",
        json!("elsewhere/manifest.json"),
        "dataset.manifest",
        "must be `data/micro-single-task/manifest.json`",
    );
    refused("benchmark.slug", json!(""), "benchmark.slug", "non-empty string");
    refused("benchmark.objectives", json!("one"), "benchmark.objectives", "list of strings");
    refused(
        "reporting.required_provider_metric_columns",
        json!(["ttfa_p50", "ttfa_p42"]),
        "reporting.required_provider_metric_columns",
        "`ttfa_p42` is not a metric",
    );
    refused(
        "reporting.required_provider_metric_columns",
        json!(["ttfa_p50", "ttfa_p50"]),
        "reporting.required_provider_metric_columns",
        "listed twice",
    );
    refused(
        "reporting.required_provider_metric_columns",
        json!([]),
        "reporting.required_provider_metric_columns",
        "at least one",
    );
}

#[test]
fn unreadable_and_unparsable_files_are_bad_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = Spec::load(&dir.path().join("spec.yaml")).unwrap_err();
    assert!(matches!(err, Error::Unreadable { .. }) && err.is_bad_input(), "{err:?}");
    let path = dir.path().join("broken.yaml");
    std::fs::write(&path, "benchmark: {slug: x\ninference: [\n").unwrap();
    let err = Spec::load(&path).unwrap_err();
    assert!(err.is_bad_input() && err.to_string().contains("broken.yaml: not valid YAML"), "{err}");
}

/// The bundled spec made a load workflow's: its `execution_plan` replaced by a `load` section.
fn load_spec(load: Value) -> Value {
    let mut root = bundled();
    remove(&mut root, "execution_plan");
    root["load"] = load;
    root
}

fn poisson() -> Value {
    json!({"mode": "open_loop", "arrivals": "poisson", "rates": [1, 2.5, 4], "step_seconds": 30,
           "warmup_seconds": 5, "cooldown_seconds": 2, "seed": 7,
           "objectives": {"ttfa_ms": 1500, "e2e_ms": 8000, "goodput_target": 0.9}})
}

#[test]
fn a_load_section_makes_a_load_workflow_with_its_values() {
    let spec = Spec::from_value(Path::new("pipelines/x/spec.yaml"), &load_spec(poisson())).unwrap();
    let plan = spec.load.expect("a load plan");
    assert_eq!(plan.mode, LoadMode::OpenLoop);
    assert_eq!(plan.arrivals, ArrivalProcess::Poisson);
    assert_eq!(plan.steps, [StepTarget::Rate(1.0), StepTarget::Rate(2.5), StepTarget::Rate(4.0)]);
    assert_eq!((plan.step_seconds, plan.warmup_seconds, plan.cooldown_seconds, plan.seed), (30.0, 5.0, 2.0, 7));
    assert_eq!(plan.window_ns(), (5_000_000_000, 28_000_000_000));
    assert_eq!(plan.objectives.ttfa_ms, Some(1500.0));
    assert_eq!(plan.objectives.ttft_ms, None);
    assert!(plan.objectives.correct, "answers must be correct unless the spec says otherwise");
    assert_eq!(plan.objectives.goodput_target, 0.9);
    assert_eq!(plan.requests_per_provider(), 225.0);
    assert!(Spec::load(&bundled_path()).unwrap().load.is_none(), "the closed-loop workflow has none");
}

#[test]
fn a_trace_is_named_inside_the_spec_directory_and_replayed_at_its_speed_ups() {
    let trace = json!({"mode": "capped", "concurrency_cap": 8, "arrivals": "trace", "trace": "traces/t.jsonl",
                       "step_seconds": 60});
    let spec = Spec::from_value(Path::new("pipelines/x/spec.yaml"), &load_spec(trace.clone())).unwrap();
    let plan = spec.load.unwrap();
    assert_eq!(plan.trace.as_deref(), Some(Path::new("pipelines/x/traces/t.jsonl")));
    assert_eq!(plan.steps, [StepTarget::Speedup(1.0)], "once, as recorded, unless speed-ups are given");
    assert_eq!(plan.concurrency_cap, Some(8));
    let mut faster = trace.clone();
    faster["speedups"] = json!([1, 2]);
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(faster)).unwrap().load.unwrap();
    assert_eq!(plan.steps, [StepTarget::Speedup(1.0), StepTarget::Speedup(2.0)]);
    let mut escaping = trace;
    escaping["trace"] = json!("../t.jsonl");
    assert!(problems(&load_spec(escaping))[0].contains("load.trace: must be a path inside"));
}

#[test]
fn a_closed_loop_has_users_and_their_requests_and_no_arrivals() {
    let closed = json!({"mode": "closed_loop", "concurrencies": [1, 8], "requests_per_user": 5, "warmup_seconds": 1});
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(closed.clone())).unwrap().load.unwrap();
    assert_eq!(plan.steps, [StepTarget::Users(1), StepTarget::Users(8)]);
    assert_eq!(plan.requests_per_user, Some(5));
    assert_eq!(plan.requests_per_provider(), 45.0);
    let refused = |key: &str, value: Value, text: &str| {
        let mut load = closed.clone();
        if value.is_null() {
            load.as_object_mut().unwrap().remove(key);
        } else {
            load[key] = value;
        }
        let found = problems(&load_spec(load));
        assert!(found.iter().any(|p| p.contains(&format!("load.{key}")) && p.contains(text)), "{key}: {found:#?}");
    };
    refused("arrivals", json!("poisson"), "has none");
    refused("step_seconds", json!(10), "has none");
    refused("concurrencies", json!(null), "missing");
    refused("concurrencies", json!([0]), "integer from 1");
    refused("requests_per_user", json!(null), "missing");
    refused("rates", json!([1]), "give `concurrencies`");
    let found = problems(&load_spec(json!({"mode": "open_loop", "arrivals": "constant", "rates": [1],
        "step_seconds": 5, "requests_per_user": 3})));
    assert!(found.iter().any(|p| p.contains("load.requests_per_user: only a closed-loop step")), "{found:#?}");
}

/// Asserts that the load section with `key` set to `value` (or removed, for null) is refused
/// with one problem on `at` containing `text`.
fn load_refused(key: &str, value: Value, at_key: &str, text: &str) {
    refused_in(poisson(), key, value, at_key, text);
}

/// Asserts that `load` with `key` (dotted, within it) set to `value` (or removed, for null)
/// is refused with one problem on `at_key` containing `text`.
fn refused_in(mut load: Value, key: &str, value: Value, at_key: &str, text: &str) {
    if value.is_null() {
        let (parent, last) = key.rsplit_once('.').unwrap_or(("", key));
        let map = if parent.is_empty() { &mut load } else { at(&mut load, parent) };
        map.as_object_mut().unwrap().remove(last);
    } else {
        *at(&mut load, key) = value.clone();
    }
    let found = problems(&load_spec(load));
    assert_eq!(found.len(), 1, "{key} = {value}: {found:#?}");
    let prefix = format!("spec.yaml: {at_key}: ");
    assert!(found[0].starts_with(&prefix) && found[0].contains(text), "{key} = {value}: {}", found[0]);
}

#[test]
fn every_bad_load_value_is_refused_naming_its_key() {
    load_refused("mode", json!("flood"), "load.mode", "not one of open_loop, closed_loop, capped");
    load_refused("arrivals", json!("uniform"), "load.arrivals", "not one of constant, poisson, gamma, trace");
    load_refused("arrivals", json!("gamma"), "load.burstiness", "missing");
    load_refused("burstiness", json!(2), "load.burstiness", "only gamma arrivals");
    let mut trace = poisson();
    trace["arrivals"] = json!("trace");
    let found = problems(&load_spec(trace));
    assert!(
        found[0].contains("load.trace: missing") && found[1].contains("load.rates: a trace is replayed"),
        "{found:#?}"
    );
    load_refused("trace", json!("t.jsonl"), "load.trace", "only trace arrivals");
    load_refused("rates", json!(null), "load.rates", "missing");
    load_refused("rates", json!([]), "load.rates", "non-empty list");
    load_refused("rates", json!([1, 0]), "load.rates[1]", "greater than 0");
    load_refused("rates", json!([1, "fast"]), "load.rates[1]", "finite number");
    load_refused("rates", json!([200_000]), "load.rates[0]", "at most 100000");
    load_refused("rates", json!(vec![100_000; 7]), "load.rates", "requests per provider");
    load_refused("speedups", json!([2]), "load.speedups", "only a trace replay");
    load_refused("concurrency_cap", json!(4), "load.concurrency_cap", "only the capped mode");
    load_refused("mode", json!("capped"), "load.concurrency_cap", "missing");
    load_refused("concurrencies", json!([2]), "load.concurrencies", "only a closed-loop step");
    load_refused("step_seconds", json!(0), "load.step_seconds", "greater than 0");
    load_refused("step_seconds", json!(null), "load.step_seconds", "missing");
    load_refused("warmup_seconds", json!(-1), "load.warmup_seconds", "0 or more");
    load_refused("warmup_seconds", json!(28), "load.warmup_seconds", "leave nothing");
    load_refused("seed", json!(-3), "load.seed", "integer");
    load_refused("objectives.e2e_ms", json!(0), "load.objectives.e2e_ms", "greater than 0");
    load_refused("objectives.goodput_target", json!(1.5), "load.objectives.goodput_target", "at most 1");
    load_refused("objectives.correct", json!("yes"), "load.objectives.correct", "true or false");
    load_refused("objectives.p99", json!(1), "load.objectives.p99", "unknown key");
    load_refused("rate", json!(1), "load.rate", "unknown key");
    let mut both = load_spec(poisson());
    both["execution_plan"] = json!({"per_provider_concurrency": 1});
    let found = problems(&both);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("execution_plan: a load workflow's plan is its `load` section"), "{}", found[0]);
}

fn search() -> Value {
    json!({"mode": "open_loop", "arrivals": "constant", "search": {"min_rate": 2, "max_rate": 64, "tolerance": 0.05},
           "step_seconds": 10, "objectives": {"e2e_ms": 500, "correct": false, "goodput_target": 0.9}})
}

#[test]
fn a_capacity_search_replaces_the_rates_with_its_bounds() {
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(search())).unwrap().load.unwrap();
    assert!(plan.steps.is_empty(), "a search's probes choose their own rates");
    let found = plan.search.expect("a search");
    assert_eq!((found.min_rate, found.max_rate, found.tolerance, found.max_probes), (2.0, 64.0, 0.05, 16));
    let refused = |edit: &dyn Fn(&mut Value), at_key: &str, text: &str| {
        let mut load = search();
        edit(&mut load);
        let found = problems(&load_spec(load));
        assert!(found.iter().any(|p| p.contains(&format!("{at_key}: ")) && p.contains(text)), "{at_key}: {found:#?}");
    };
    refused(&|l| l["search"]["max_rate"] = json!(2), "load.search.max_rate", "above min_rate");
    refused(&|l| l["search"]["tolerance"] = json!(0.001), "load.search.tolerance", "from 0.01 to 1");
    refused(&|l| l["search"]["max_probes"] = json!(1), "load.search.max_probes", "2");
    refused(&|l| l["search"] = json!([1, 2]), "load.search", "expected a map");
    refused(&|l| _ = l["search"].as_object_mut().unwrap().remove("min_rate"), "load.search.min_rate", "missing");
    refused(&|l| l["rates"] = json!([1]), "load.rates", "not both");
    refused(&|l| l["objectives"] = json!({"correct": false}), "load.objectives", "needs a latency objective");
    refused(&|l| l["search"]["bogus"] = json!(1), "load.search.bogus", "");
    refused(
        &|l| {
            l["mode"] = json!("closed_loop");
            l["concurrencies"] = json!([1]);
            l["requests_per_user"] = json!(1);
            l.as_object_mut().unwrap().remove("step_seconds");
            l.as_object_mut().unwrap().remove("arrivals");
        },
        "load.search",
        "closed loop",
    );
}

/// The Poisson load section with a synthetic workload.
fn synthetic() -> Value {
    let mut load = poisson();
    load["objectives"] = json!({"e2e_ms": 8000});
    load["workload"] = json!({"kind": "synthetic", "input_tokens": 512,
        "output_tokens": {"distribution": "normal", "mean": 128, "stddev": 32, "min": 16, "max": 256},
        "shared_prefix_tokens": 100, "ignore_eos": true});
    load
}

#[test]
fn a_synthetic_workload_has_its_lengths_prefix_and_no_scoring() {
    use inferbench_contract::documents::TokenLengths;
    use inferbench_contract::vocab::LengthDistribution;
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(synthetic())).unwrap().load.unwrap();
    let s = plan.workload.synthetic().expect("synthetic");
    let constant =
        TokenLengths { distribution: LengthDistribution::Constant, min: 512, max: 512, mean: None, stddev: None };
    assert_eq!(s.input_tokens, Some(constant));
    let normal = TokenLengths {
        distribution: LengthDistribution::Normal,
        min: 16,
        max: 256,
        mean: Some(128.0),
        stddev: Some(32.0),
    };
    assert_eq!(s.output_tokens, Some(normal));
    assert_eq!((s.shared_prefix_tokens, s.ignore_eos), (100, true));
    assert!(!plan.objectives.correct, "a synthetic answer is never scored");
    // A lognormal may leave its bounds out; a uniform has only its bounds.
    let mut load = synthetic();
    load["workload"]["input_tokens"] = json!({"distribution": "lognormal", "mean": 700, "stddev": 300, "min": 101});
    load["workload"]["output_tokens"] = json!({"distribution": "uniform", "min": 1, "max": 8});
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(load)).unwrap().load.unwrap();
    let s = plan.workload.synthetic().unwrap();
    assert_eq!((s.input_tokens.as_ref().unwrap().min, s.input_tokens.as_ref().unwrap().max), (101, MAX_INPUT_TOKENS));
    load = synthetic();
    load["workload"]["output_tokens"] = json!({"distribution": "lognormal", "mean": 70, "stddev": 30});
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(load)).unwrap().load.unwrap();
    assert_eq!(plan.workload.synthetic().unwrap().output_tokens.as_ref().unwrap().min, 1, "min defaults to 1");
    assert_eq!(s.output_tokens.as_ref().unwrap().distribution, LengthDistribution::Uniform);
    // Without a workload, and with `kind: dataset`, the dataset's items are sent and scored.
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(poisson())).unwrap().load.unwrap();
    assert_eq!(plan.workload, Workload::Dataset);
    let mut dataset = poisson();
    dataset["workload"] = json!({"kind": "dataset"});
    let plan = Spec::from_value(Path::new("s.yaml"), &load_spec(dataset)).unwrap().load.unwrap();
    assert_eq!((plan.workload, plan.objectives.correct), (Workload::Dataset, true));
}

/// Asserts that the synthetic load section with `key` set to `value` (or removed, for null)
/// is refused with one problem on `at` containing `text`.
fn synthetic_refused(key: &str, value: Value, at_key: &str, text: &str) {
    refused_in(synthetic(), key, value, at_key, text);
}

#[test]
fn every_bad_workload_value_is_refused_naming_its_key() {
    let w = "load.workload";
    synthetic_refused("workload.kind", json!("random"), &format!("{w}.kind"), "not one of dataset, synthetic");
    synthetic_refused("workload.kind", json!(null), &format!("{w}.kind"), "missing");
    synthetic_refused("workload.input_tokens", json!(null), &format!("{w}.input_tokens"), "missing");
    synthetic_refused("workload.input_tokens", json!(0), &format!("{w}.input_tokens"), "integer from 1 to 262144");
    synthetic_refused("workload.input_tokens", json!(12.5), &format!("{w}.input_tokens"), "integer from 1");
    synthetic_refused(
        "workload.input_tokens",
        json!("512"),
        &format!("{w}.input_tokens"),
        "an integer or a distribution",
    );
    synthetic_refused(
        "workload.output_tokens",
        json!(300_000),
        &format!("{w}.output_tokens"),
        "integer from 1 to 262144",
    );
    synthetic_refused(
        "workload.output_tokens.distribution",
        json!("zipf"),
        &format!("{w}.output_tokens.distribution"),
        "uniform, normal, lognormal",
    );
    synthetic_refused(
        "workload.output_tokens.distribution",
        json!("constant"),
        &format!("{w}.output_tokens.distribution"),
        "written as an integer",
    );
    synthetic_refused(
        "workload.output_tokens.distribution",
        json!(null),
        &format!("{w}.output_tokens.distribution"),
        "missing",
    );
    synthetic_refused("workload.output_tokens.mean", json!(null), &format!("{w}.output_tokens.mean"), "missing");
    synthetic_refused("workload.output_tokens.mean", json!(0), &format!("{w}.output_tokens.mean"), "greater than 0");
    synthetic_refused(
        "workload.output_tokens.mean",
        json!(300),
        &format!("{w}.output_tokens.mean"),
        "outside [min, max]",
    );
    synthetic_refused("workload.output_tokens.stddev", json!(-1), &format!("{w}.output_tokens.stddev"), "0 or more");
    synthetic_refused("workload.output_tokens.min", json!(300), &format!("{w}.output_tokens.min"), "above max 256");
    synthetic_refused("workload.output_tokens.stdev", json!(3), &format!("{w}.output_tokens.stdev"), "unknown key");
    synthetic_refused(
        "workload.input_tokens",
        json!({"distribution": "uniform", "min": 200}),
        &format!("{w}.input_tokens.max"),
        "missing",
    );
    synthetic_refused(
        "workload.input_tokens",
        json!({"distribution": "uniform", "min": 200, "max": 300, "mean": 250}),
        &format!("{w}.input_tokens.mean"),
        "a uniform distribution has none",
    );
    synthetic_refused(
        "workload.shared_prefix_tokens",
        json!(512),
        &format!("{w}.shared_prefix_tokens"),
        "leaves nothing of a 512-token prompt",
    );
    synthetic_refused(
        "workload.shared_prefix_tokens",
        json!(-1),
        &format!("{w}.shared_prefix_tokens"),
        "integer from 0",
    );
    synthetic_refused("workload.ignore_eos", json!("yes"), &format!("{w}.ignore_eos"), "true or false");
    synthetic_refused("workload.seed", json!(1), &format!("{w}.seed"), "unknown key");
    synthetic_refused("objectives.correct", json!(true), "load.objectives.correct", "not scored");
    synthetic_refused("rates", json!([100_000, 100_000]), "load.workload.input_tokens", "prompt tokens per provider");
    let mut dataset = poisson();
    dataset["workload"] = json!({"kind": "dataset", "input_tokens": 5});
    let found = problems(&load_spec(dataset));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("load.workload.input_tokens: only a synthetic workload"), "{}", found[0]);
}

#[test]
fn a_synthetic_trace_replay_sends_its_lines_sizes_or_the_specs_and_refuses_a_line_without() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"offset_ms\": 0, \"input_tokens\": 40, \"output_tokens\": 9}\n\n{\"offset_ms\": 5}\n",
    )
    .unwrap();
    let mut load = json!({"mode": "open_loop", "arrivals": "trace", "trace": "t.jsonl", "step_seconds": 2,
        "workload": {"kind": "synthetic"}});
    let spec_path = dir.path().join("spec.yaml");
    let plan = Spec::from_value(&spec_path, &load_spec(load.clone())).unwrap().load.unwrap();
    assert_eq!(plan.workload.synthetic().unwrap().input_tokens, None, "a trace may give every length");
    let err = plan.read_trace().unwrap_err().to_string();
    assert!(err.contains("t.jsonl: line 3: no input_tokens, and the spec's load.workload gives none"), "{err}");
    load["workload"]["input_tokens"] = json!(64);
    load["workload"]["output_tokens"] = json!(16);
    let plan = Spec::from_value(&spec_path, &load_spec(load.clone())).unwrap().load.unwrap();
    assert_eq!(plan.read_trace().unwrap().unwrap().arrivals.len(), 2);
    load["workload"]["shared_prefix_tokens"] = json!(40);
    let plan = Spec::from_value(&spec_path, &load_spec(load)).unwrap().load.unwrap();
    let err = plan.read_trace().unwrap_err().to_string();
    assert!(
        err.contains("line 1: input_tokens 40: a synthetic prompt has more tokens than its shared prefix (40)"),
        "{err}"
    );
}

#[test]
fn a_nonce_is_the_first_line_of_the_text_it_is_sent_with() {
    let sent = with_nonce("00ff12ab34cd56ef", "You answer in JSON.\nOnly JSON.");
    assert_eq!(sent, "[nonce 00ff12ab34cd56ef]\nYou answer in JSON.\nOnly JSON.");
    assert_ne!(sent, with_nonce("00ff12ab34cd56ee", "You answer in JSON.\nOnly JSON."), "another nonce, other bytes");
}

#[test]
fn cache_busting_and_the_probe_are_off_without_their_keys_and_read_with_them() {
    let spec = Spec::from_value(Path::new("spec.yaml"), &bundled()).unwrap();
    assert_eq!(spec.inference.cache, CacheSettings { busting: false, probe_rounds: None });
    let mut root = bundled();
    *at(&mut root, CACHE_BUSTING_KEY) = json!(true);
    *at(&mut root, "inference.cache_probe.rounds") = json!(8);
    let spec = Spec::from_value(Path::new("spec.yaml"), &root).unwrap();
    assert_eq!(spec.inference.cache, CacheSettings { busting: true, probe_rounds: Some(8) });
}

#[test]
fn bad_cache_settings_are_refused_naming_their_key() {
    refused(CACHE_BUSTING_KEY, json!("yes"), CACHE_BUSTING_KEY, "expected true or false");
    refused(CACHE_PROBE_KEY, json!({}), "inference.cache_probe.rounds", "missing");
    refused(CACHE_PROBE_KEY, json!({"rounds": 0}), "inference.cache_probe.rounds", "integer from 1");
    refused(CACHE_PROBE_KEY, json!({"repeats": 2, "rounds": 6}), "inference.cache_probe.repeats", "unknown key");
}

#[test]
fn a_load_workflow_refuses_the_probe_and_a_synthetic_workload_refuses_nonces() {
    let mut root = load_spec(poisson());
    *at(&mut root, "inference.cache_probe.rounds") = json!(6);
    *at(&mut root, CACHE_BUSTING_KEY) = json!(true);
    let found = problems(&root);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("spec.yaml: inference.cache_probe: not in a load workflow"), "{}", found[0]);
    let mut root = load_spec(synthetic());
    *at(&mut root, CACHE_BUSTING_KEY) = json!(true);
    let found = problems(&root);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("spec.yaml: inference.cache_busting: not with a synthetic workload"), "{}", found[0]);
}
