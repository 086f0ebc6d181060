//! One run whose providers speak every wire API (chat completions, OpenAI Responses, Anthropic
//! Messages) against `ib-sim`, which serves each grammar from the same profiles: the same
//! figures on every API against the simulator's own record of what it sent, each grammar's
//! failures classified, credentials (`x-api-key` too) in no file, a rescore byte-identical.
use crate::support::{assert_no_secret, ok, Sim, Workspace};
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::tables::{EvaluationRow, EventRow, ResponseRow};
use inferbench_contract::vocab::{ErrorKind, Outcome, WireApi};
use inferbench_store::parquet_io;
use serde_json::Value;
use std::collections::BTreeMap;

const SECRETS: [(&str, &str); 3] = [
    ("IB_WIRE_CHAT_KEY", "sk-wire-chat-5c1d0e"),
    ("IB_WIRE_RESPONSES_KEY", "sk-wire-resp-a47b29"),
    ("IB_WIRE_MESSAGES_KEY", "sk-ant-wire-93e0f1"),
];

/// (name, api, credential variable).
const PROVIDERS: [(&str, &str, &str); 7] = [
    ("chat-steady", "chat-completions", "IB_WIRE_CHAT_KEY"),
    ("resp-steady", "responses", "IB_WIRE_RESPONSES_KEY"),
    ("msg-steady", "messages", "IB_WIRE_MESSAGES_KEY"),
    ("resp-failed", "responses", "IB_WIRE_RESPONSES_KEY"),
    ("resp-cut", "responses", "IB_WIRE_RESPONSES_KEY"),
    ("msg-overloaded", "messages", "IB_WIRE_MESSAGES_KEY"),
    ("msg-incomplete", "messages", "IB_WIRE_MESSAGES_KEY"),
];

fn table() -> String {
    let mut out = String::from("providers:\n");
    for (name, api, env) in PROVIDERS {
        let (limit, reasoning) = match api {
            "chat-completions" => {
                ("    token_limit_field: max_tokens\n    stream_usage: true\n", "{reasoning_effort: low}")
            }
            "responses" => ("", "{reasoning: {effort: low}}"),
            _ => ("", "{thinking: {type: enabled, budget_tokens: 1024}}"),
        };
        // The three steady providers are one endpoint reached over its three APIs.
        let (host, model) =
            if name.ends_with("steady") { ("steady", "m-steady".to_string()) } else { (name, format!("m-{name}")) };
        let route = api.parse::<WireApi>().unwrap().route();
        out.push_str(&format!(
            "  - name: {name}\n    endpoint: https://{host}.invalid/{route}\n    api: {api}\n    auth: {{kind: bearer, env: {env}}}\n    \
             model_id: {model}\n{limit}    reasoning: {reasoning}\n    price_usd_per_million_tokens: {{input: 0.15, output: 0.50}}\n"
        ));
    }
    out
}

/// The same steady provider on each API (reasoning first, then the answer), each dialect real
/// servers speak, and one fault of each grammar that always fires.
fn profiles() -> String {
    let steady = "    ttft_ms: {median: 300, p99: 320}\n    tokens_per_second: {median: 200, p05: 190}\n    \
                  reasoning_tokens: {mean: 12}\n";
    let mut out = String::from("time_scale: 1.0\nproviders:\n");
    for (name, extra) in [
        ("chat-steady", ""),
        // llama.cpp's and LiteLLM's Responses departures at once; llama.cpp's Messages ones (the
        // Anthropic SDK dispatches on `event:` lines, which every Messages server sends).
        (
            "resp-steady",
            "    dialect: {no_indices: true, data_only: true, done_after_terminal: true, reasoning_text: true}\n",
        ),
        ("msg-steady", "    dialect: {reasoning_closed_late: true, usage_at_end: true, no_ping: true}\n"),
        ("resp-failed", "    faults: {response_failed: 1.0}\n"),
        ("resp-cut", "    faults: {cut_after_structure: 1.0}\n"),
        ("msg-overloaded", "    faults: {error_event: 1.0}\n"),
        ("msg-incomplete", "    faults: {response_incomplete: 1.0}\n"),
    ] {
        let model = if name.ends_with("steady") { "m-steady".to_string() } else { format!("m-{name}") };
        out.push_str(&format!("  {name}:\n    model: {model}\n{steady}{extra}"));
    }
    out
}

#[test]
fn one_run_pairs_providers_of_every_wire_api_and_judges_each_grammar() {
    // Timing is checked against the simulator's own record, with the pipeline's bands.
    let _shared = crate::support::shared_section();
    let ws = Workspace::with_table(&table(), "sim-profiles.yaml", |spec| {
        spec.replace("    mode: json_object\n", "    mode: prompt_only\n")
    });
    std::fs::write(ws.path("pipeline/sim-profiles.yaml"), profiles()).unwrap();
    let sim = Sim::start(&ws);
    let run = ws.run("run-wire");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--endpoint-base", &sim.url, "--deadline-seconds", "5", "--env-file", "/nonexistent"])
        .arg("--send-credentials-to-simulator")
        .envs(SECRETS));
    ws.derive(&run);
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let evaluations = parquet_io::read::<EvaluationRow>(&run.join("evaluations.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 6 * PROVIDERS.len());
    let of = |provider: &str| responses.iter().filter(|r| r.provider == provider).collect::<Vec<_>>();

    // The steady provider streams the same answers with the same figures on every API.
    let valid: BTreeMap<&str, &str> =
        evaluations.iter().map(|e| (e.request_id.as_str(), e.classification.as_str())).collect();
    let answers =
        |provider: &str| of(provider).iter().map(|r| (r.item_id.clone(), r.answer.clone())).collect::<BTreeMap<_, _>>();
    for provider in ["chat-steady", "resp-steady", "msg-steady"] {
        for r in of(provider) {
            assert_eq!((r.outcome, r.http_status, r.error_type), (Outcome::Completed, Some(200), None), "{r:?}");
            assert_eq!(valid[r.request_id.as_str()], "valid_result", "{provider}: {}", r.answer);
            // Reasoning first (a loaded machine may read its last tokens and the answer's first
            // in one read, so TTFO ≤ TTFA).
            assert!(r.ttfo_ms.unwrap() <= r.ttfa_ms.unwrap() && !r.reasoning.is_empty(), "{r:?}");
            assert_eq!(r.reasoning_emitted_before_answer, Some(true), "reasoning first: {r:?}");
            assert!(
                r.e2e_latency_ms.is_some() && r.usage_completion_tokens.is_some() && r.usage_prompt_tokens.is_some(),
                "{r:?}"
            );
            assert_eq!(r.finish_reason.as_deref(), Some("stop"), "{r:?}");
            assert_eq!(r.response_model.as_deref(), Some("m-steady"));
        }
        assert_eq!(answers(provider), answers("chat-steady"), "{provider} answers as chat completions does");
    }
    check_against_the_simulators_record(&responses, &sim);

    // Each grammar's failures, classified; none is a latency or speed sample.
    let failures = [
        ("resp-failed", Outcome::StreamError, Some(ErrorKind::InBandError)),
        ("resp-cut", Outcome::Truncated, Some(ErrorKind::NoTerminalEvent)),
        ("msg-overloaded", Outcome::StreamError, Some(ErrorKind::ErrorEvent)),
    ];
    for (provider, outcome, kind) in failures {
        for r in of(provider) {
            assert_eq!((r.outcome, r.error_type), (outcome, kind), "{r:?}");
            assert!(r.e2e_latency_ms.is_none() && r.output_tokens_per_second.is_none(), "{r:?}");
        }
    }
    for r in of("resp-cut") {
        assert_eq!((r.ttfa_ms, r.ttfo_ms), (None, None), "structural events are no first token: {r:?}");
    }
    // A token ceiling is `length`, however the grammar words it.
    for r in of("msg-incomplete") {
        assert_eq!((r.outcome, r.finish_reason.as_deref()), (Outcome::Completed, Some("length")), "{r:?}");
    }

    check_the_log_records_each_api(&run);
    check_what_each_api_costs(&run, &responses);
    check_the_sdks_read_the_same_bytes_alike(&run, &responses);
    let secrets: Vec<&str> = SECRETS.iter().map(|(_, v)| *v).collect();
    assert_no_secret(&run, &secrets);
    let names = ["responses.parquet", "evaluations.parquet", "metrics.json", "comparisons.json", "report.md"];
    let before: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(run.join(n)).unwrap()).collect();
    ws.derive(&run);
    for (name, old) in names.iter().zip(before) {
        assert!(std::fs::read(run.join(name)).unwrap() == old, "{name} differs when re-derived");
    }
    // Read from the sealed JSONL instead of the events table: the same responses.
    let responses_bytes = std::fs::read(run.join("responses.parquet")).unwrap();
    ok(ws.stage("ib-reconstruct", &run).arg("--read-jsonl"));
    assert!(std::fs::read(run.join("responses.parquet")).unwrap() == responses_bytes);
}

/// The official SDKs (openai-python, anthropic-sdk-python), reading the bytes each Responses and
/// Messages attempt recorded, assemble the same answer and reasoning as inferbench did
/// (`tests/sdk/assemble.py`; `make test` installs the SDKs into target/sdk-python).
fn check_the_sdks_read_the_same_bytes_alike(run: &std::path::Path, responses: &[ResponseRow]) {
    let path = std::env::var_os("IB_SDK_PYTHONPATH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::support::repo().join("target/sdk-python"));
    let found = std::process::Command::new("python3")
        .args(["-c", "import openai, anthropic"])
        .env("PYTHONPATH", &path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "the openai and anthropic SDKs are not importable (PYTHONPATH={}): run `make test`, which installs them, or \
         set IB_SDK_PYTHONPATH",
        path.display()
    );
    let out = std::process::Command::new("python3")
        .arg(crate::support::repo().join("tests/sdk/assemble.py"))
        .arg(run)
        .env("PYTHONPATH", &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "assemble.py: {}", String::from_utf8_lossy(&out.stderr));
    let assembled: BTreeMap<String, Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut compared = 0;
    for r in responses.iter().filter(|r| r.provider == "resp-steady" || r.provider == "msg-steady") {
        let sdk = &assembled[&r.request_id];
        assert_eq!(
            (sdk["answer"].as_str(), sdk["reasoning"].as_str()),
            (Some(r.answer.as_str()), Some(r.reasoning.as_str())),
            "{}",
            r.provider
        );
        compared += 1;
    }
    assert_eq!(compared, 12, "every steady Responses and Messages attempt");
}

/// The steady endpoint over its three APIs makes three API pairs, each difference the median of
/// the per-round differences recomputed here from responses.parquet, and the report tables them.
fn check_what_each_api_costs(run: &std::path::Path, responses: &[ResponseRow]) {
    let doc: inferbench_contract::documents::ComparisonsDocument =
        serde_json::from_slice(&std::fs::read(run.join("comparisons.json")).unwrap()).unwrap();
    let pairs: Vec<(&str, &str)> =
        doc.api_pairs.iter().map(|p| (p.provider_a.as_str(), p.provider_b.as_str())).collect();
    assert_eq!(pairs, [("chat-steady", "msg-steady"), ("chat-steady", "resp-steady"), ("msg-steady", "resp-steady")]);
    for p in &doc.api_pairs {
        let by_round = |name: &str| -> BTreeMap<i64, f64> {
            responses.iter().filter(|r| r.provider == name).map(|r| (r.round_index, r.ttfa_ms.unwrap())).collect()
        };
        let (a, b) = (by_round(&p.provider_a), by_round(&p.provider_b));
        let mut differences: Vec<f64> = a.iter().map(|(round, x)| x - b[round]).collect();
        differences.sort_by(f64::total_cmp);
        assert_eq!(p.ttfa.paired_count, 6);
        // The same rounds' difference (the aggregate subtracts the same figures, rounded alike
        // to within a float's last bits).
        let median = p.ttfa.difference_p50_ms.unwrap();
        assert!(
            (median - differences[2]).abs() < 1e-9,
            "the upper-tail nearest-rank median: {median} vs {differences:?}"
        );
        let (low, high) = (p.ttfa.interval_low_ms.unwrap(), p.ttfa.interval_high_ms.unwrap());
        let slack = 1e-9;
        assert!(differences[0] - slack <= low && low <= median && median <= high && high <= differences[5] + slack);
        assert!(["a_faster", "b_faster", "inconclusive"].contains(&p.ttfa.verdict.as_str()), "{p:?}");
        assert_eq!(p.e2e.paired_count, 6);
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("### What the API costs") && report.contains("chat-steady (chat-completions)"), "{report}");
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(page.contains("id=\"view-api-cost\"") && page.contains("href=\"#view-api-cost\""));
    for i in 0..3 {
        for figure in ["ttfa", "e2e"] {
            let pointer = format!("data-comparison=\"/api_pairs/{i}/{figure}/difference_p50_ms\"");
            assert!(page.contains(&pointer), "report.html shows {pointer}");
        }
    }
}

/// Every steady response's TTFA against the moment the simulator wrote its first answer event,
/// and its visible tokens against the answer tokens the simulator sent, on every API.
fn check_against_the_simulators_record(responses: &[ResponseRow], sim: &Sim) {
    let log = std::fs::read_to_string(&sim.log).expect("ib-sim log");
    let records: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for provider in ["chat-steady", "resp-steady", "msg-steady"] {
        let sent: BTreeMap<&str, &Value> =
            records.iter().filter(|v| v["provider"] == provider).map(|v| (v["item_id"].as_str().unwrap(), v)).collect();
        assert_eq!(sent.len(), 6, "{provider}");
        let mut gaps = Vec::new();
        for r in responses.iter().filter(|r| r.provider == provider) {
            let record = sent[r.item_id.as_str()];
            let first = record["answer_event_offsets_ms"][0].as_f64().unwrap();
            let client = r.ttfa_ms.unwrap();
            assert!(
                client >= first - 1.0 && client <= first + 1000.0,
                "{provider} {}: TTFA {client} vs {first}",
                r.item_id
            );
            gaps.push(client - first);
            assert_eq!(r.visible_answer_tokens, record["answer_tokens"].as_i64().unwrap(), "{provider}: tokens exact");
        }
        gaps.sort_by(f64::total_cmp);
        assert!(gaps[gaps.len() / 2] <= 100.0, "{provider}: median client−server TTFA gap {gaps:?}");
    }
}

/// The log records each attempt's API and each API's authentication (credentials redacted),
/// and events.parquet reads each grammar's answer text into its typed column.
fn check_the_log_records_each_api(run: &std::path::Path) {
    let log = crate::ops::segment_text(run, 1);
    let mut apis = BTreeMap::new();
    for env in log.lines().map(|l| serde_json::from_str::<Envelope>(l).unwrap()) {
        if let Event::RequestStarted(s) = env.event {
            let headers: Vec<&str> = s.headers.keys().map(String::as_str).collect();
            match s.api {
                WireApi::Messages => {
                    assert_eq!(s.headers["x-api-key"], "<redacted>");
                    assert_eq!(s.headers["anthropic-version"], "2023-06-01");
                    assert!(s.endpoint.ends_with("/v1/messages") && s.body["system"].is_string(), "{}", s.endpoint);
                }
                api => {
                    assert!(headers.contains(&"Authorization") && !headers.contains(&"x-api-key"), "{headers:?}");
                    assert!(s.endpoint.ends_with(api.route()));
                }
            }
            apis.insert(s.provider, s.api);
        }
    }
    for (name, api, _) in PROVIDERS {
        assert_eq!(apis[name].as_str(), api);
    }
    let rows = parquet_io::read::<EventRow>(&run.join("events.parquet")).unwrap().rows;
    for provider in ["resp-steady", "msg-steady"] {
        let answer: String = rows
            .iter()
            .filter(|r| r.provider.as_deref() == Some(provider) && r.kind == "sse_event")
            .filter_map(|r| r.answer_delta.clone())
            .collect();
        assert!(!answer.is_empty(), "{provider}: events.parquet reads the grammar's answer deltas");
    }
}

/// The hostile end-to-end test's misbehaving providers (tests/fixtures/e2e/hostile-*.yaml),
/// each reached over Responses and over Messages: `ib-sim` renders each misbehaviour in that
/// grammar, and every one is classified as the contract says, never gains a latency or speed
/// sample, and leaks no credential.
#[test]
fn hostile_providers_on_responses_and_messages_are_classified_and_never_gain() {
    use inferbench_contract::documents::MetricsDocument;
    use inferbench_contract::vocab::{Classification, EvaluationError, OperationalOutcome};
    let _shared = crate::support::shared_section();
    let fixtures = crate::support::repo().join("tests/fixtures/e2e");
    let profiles: serde_json::Value =
        serde_norway::from_str(&std::fs::read_to_string(fixtures.join("hostile-sim-profiles.yaml")).unwrap()).unwrap();
    let names: Vec<String> = profiles["providers"].as_object().unwrap().keys().cloned().collect();
    let apis = [WireApi::Responses, WireApi::Messages];
    let mut table = String::from("providers:\n");
    let mut both = serde_json::Map::new();
    let mut secrets = Vec::new();
    for name in &names {
        for api in apis {
            let provider = format!("{name}-{api}");
            let env = format!("IB_HOSTILE_{}_KEY", provider.to_uppercase().replace('-', "_"));
            secrets.push((env.clone(), format!("sk-{provider}-4d1c88e0")));
            let reasoning = match api {
                WireApi::Responses => "{reasoning: {effort: low}}",
                _ => "{thinking: {type: enabled, budget_tokens: 1024}}",
            };
            table.push_str(&format!(
                "  - name: {provider}\n    endpoint: https://{name}.invalid/{}\n    api: {api}\n    auth: {{kind: bearer, env: {env}}}\n    \
                 model_id: m-{name}\n    reasoning: {reasoning}\n    price_usd_per_million_tokens: {{input: 0.15, output: 0.50}}\n",
                api.route()
            ));
            both.insert(provider, profiles["providers"][name].clone());
        }
    }
    let ws = Workspace::with_table(&table, "hostile-sim-profiles.yaml", |spec| {
        spec.replace("    mode: json_object\n", "    mode: prompt_only\n")
    });
    let doubled = serde_json::json!({"time_scale": profiles["time_scale"], "providers": both});
    std::fs::write(ws.path("pipeline/sim-profiles.yaml"), serde_norway::to_string(&doubled).unwrap()).unwrap();
    let sim = Sim::start(&ws);
    let run = ws.run("run-hostile-apis");
    crate::hostile::fetch_one_item_per_family(&ws, &run, &sim, &secrets);
    drop(sim);
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    let evaluations = parquet_io::read::<EvaluationRow>(&run.join("evaluations.parquet")).unwrap().rows;
    let metrics: MetricsDocument = serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    assert_eq!(responses.len(), 3 * names.len() * apis.len(), "one response per scheduled request");
    let verdicts: BTreeMap<&str, &EvaluationRow> = evaluations.iter().map(|e| (e.request_id.as_str(), e)).collect();
    for api in apis {
        let of = |name: &str| -> Vec<&ResponseRow> {
            let rows: Vec<&ResponseRow> = responses.iter().filter(|r| r.provider == format!("{name}-{api}")).collect();
            assert_eq!(rows.len(), 3, "{name}-{api}");
            rows
        };
        let pooled = |name: &str| {
            let provider = format!("{name}-{api}");
            metrics.combined_provider_metrics.iter().find(|p| p.metrics.provider == provider).unwrap().clone()
        };
        for name in ["steady", "keep-alive", "done-then-hang", "data-after-done", "crlf", "cr", "split-utf8"] {
            for r in of(name) {
                assert_eq!(
                    (r.outcome, r.http_status, r.error_type),
                    (Outcome::Completed, Some(200), None),
                    "{name}-{api}: {r:?}"
                );
                assert!(r.complete && r.e2e_latency_ms.is_some(), "{name}-{api}: {r:?}");
                assert_eq!(
                    verdicts[r.request_id.as_str()].classification,
                    Classification::ValidResult,
                    "{name}-{api}: {}",
                    r.answer
                );
            }
        }
        for r in of("data-after-done") {
            assert!(!r.answer.contains("TRAILING") && r.events_after_end >= 1, "logged, never joined: {r:?}");
        }
        for r in of("done-then-hang") {
            assert!(
                r.e2e_latency_ms.unwrap() < 2000.0,
                "the terminal event ends the response, not the deadline: {r:?}"
            );
        }
        let failing = [
            ("in-band-error", OperationalOutcome::StreamError, ErrorKind::ErrorEvent),
            ("error-event", OperationalOutcome::StreamError, ErrorKind::ErrorEvent),
            ("plain-json", OperationalOutcome::InvalidStream, ErrorKind::NotEventStream),
            ("html-page", OperationalOutcome::InvalidStream, ErrorKind::NotEventStream),
            ("empty-body", OperationalOutcome::InvalidStream, ErrorKind::EmptyStream),
            ("no-content", OperationalOutcome::InvalidStream, ErrorKind::NotEventStream),
            ("truncated", OperationalOutcome::Truncated, ErrorKind::NoTerminalEvent),
            ("oversized-line", OperationalOutcome::InvalidStream, ErrorKind::EventTooLarge),
            ("unterminated-line", OperationalOutcome::InvalidStream, ErrorKind::EventTooLarge),
            ("redirect", OperationalOutcome::OtherHttp, ErrorKind::HttpStatus),
            ("bad-request", OperationalOutcome::Other4xx, ErrorKind::HttpStatus),
        ];
        for (name, class, kind) in failing {
            for r in of(name) {
                assert_eq!((r.operational_outcome, r.error_type), (class, Some(kind)), "{name}-{api}: {r:?}");
                assert!(
                    !r.complete && r.e2e_latency_ms.is_none() && r.output_tokens_per_second.is_none(),
                    "{name}-{api}"
                );
                assert_eq!(
                    verdicts[r.request_id.as_str()].classification,
                    Classification::FailedRequest,
                    "{name}-{api}"
                );
            }
            let p = pooled(name);
            assert_eq!(p.metrics.failure_rate, Some(1.0), "{name}-{api}");
            assert_eq!(p.metrics.population("e2e_latency_ms"), 0, "{name}-{api} gains no latency sample");
            assert!(p.rank.is_none(), "{name}-{api}");
        }
        for r in of("in-band-error") {
            assert!(
                r.error_body.is_some() && r.ttfa_ms.is_some(),
                "the error kept, the partial answer's TTFA too: {r:?}"
            );
        }
        assert_eq!(pooled("no-model").model_missing_count, 3, "{api}");
        assert!(
            pooled("wrong-model").ineligibility_details.iter().any(|d| d.contains("`m-wrong-model-fp8` (3)")),
            "{api}: {:?}",
            pooled("wrong-model").ineligibility_details
        );
        for r in of("echo") {
            assert!(r.credential_echo && r.outcome == Outcome::Completed, "{r:?}");
            let v = verdicts[r.request_id.as_str()];
            assert_eq!(
                (v.classification, v.evaluation_error_type),
                (Classification::InvalidResult, Some(EvaluationError::CredentialEcho)),
                "{api}"
            );
        }
    }
    let values: Vec<&str> = secrets.iter().map(|(_, v)| v.as_str()).collect();
    assert_no_secret(&run, &values);
}
