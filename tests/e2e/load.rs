//! The load workflow end to end against `ib-sim`: paired open-loop steps scheduled, fetched on
//! their schedule, re-derived and reported; a trace replayed at its offsets; a fetch killed
//! mid-step resumed by running the step again whole.
use crate::support::{ok, timed_section, Sim, Workspace};
use inferbench_contract::documents::{
    LoadMetrics, MetricsDocument, Provenance, SearchDocument, SearchResult, SearchStatus, StepMetrics, SEARCH_VERSION,
};
use inferbench_contract::tables::{ResponseRow, ScheduleRow, Table};
use inferbench_store::parquet_io;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Two simulated providers of the e2e fixtures that answer every request.
pub const TABLE: &str = r#"providers:
  - name: steady
    endpoint: https://steady.example/v1/chat/completions
    auth: {kind: bearer, env: STEADY_KEY}
    model_id: m-steady
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 1, output: 2}
  - name: reasoner-ai
    endpoint: https://reasoner.example/v1/chat/completions
    auth: {kind: bearer, env: REASONER_KEY}
    model_id: m-reasoner-2026-11
    token_limit_field: max_tokens
    reasoning: {reasoning_effort: low}
    price_usd_per_million_tokens: {input: 1, output: 2}
"#;

/// The bundled spec with its execution plan replaced by `load` (YAML, indented by two).
pub fn load_workspace(load: &str) -> Workspace {
    let load = load.to_string();
    Workspace::with_table(TABLE, "sim-profiles.yaml", move |spec| {
        let start = spec.find("execution_plan:\n").expect("the bundled spec has an execution plan");
        let end = start + spec[start..].find("\nstream_timing:").expect("stream_timing follows it");
        format!("{}load:\n{load}{}", &spec[..start], &spec[end..])
    })
}

pub fn table<T: Table>(path: &Path) -> Vec<T> {
    parquet_io::read::<T>(path).unwrap().rows
}

pub fn metrics(run: &Path) -> MetricsDocument {
    serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap()
}

/// Select, schedule, fetch against a fresh `ib-sim` (the only part timed: it holds the
/// [`timed_section`]), and derive everything to the report.
fn run_load(ws: &Workspace, run: &Path) {
    ok(ws.stage("ib-select", run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", run));
    {
        let _timed = timed_section();
        let sim = Sim::start(ws);
        ok(ws.stage("ib-fetch", run).arg("--endpoint-base").arg(&sim.url));
    }
    ws.derive(run);
}

#[test]
fn a_paired_open_loop_sweep_is_sent_on_its_schedule_and_reported_per_step() {
    let ws = load_workspace(
        "  mode: open_loop\n  arrivals: constant\n  rates: [4, 8]\n  step_seconds: 3\n  warmup_seconds: 0.5\n  \
         cooldown_seconds: 0.5\n  objectives: {e2e_ms: 5000, correct: false, goodput_target: 0.9}\n",
    );
    let run = ws.run("load");
    run_load(&ws, &run);
    let schedule: Vec<ScheduleRow> = table(&run.join("schedule.parquet"));
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    assert_eq!(schedule.len(), (12 + 24) * 2, "3 s at 4 and 8 req/s, to each of 2 providers");
    assert_eq!(responses.len(), schedule.len(), "every request answered, none dropped");
    // Paired: each round's requests share their intended time and item, whatever the provider.
    let mut rounds: BTreeMap<i64, Vec<&ResponseRow>> = BTreeMap::new();
    for r in &responses {
        rounds.entry(r.round_index).or_default().push(r);
    }
    for round in rounds.values() {
        assert_eq!(round.len(), 2);
        assert_eq!(round[0].intended_t_ns, round[1].intended_t_ns, "round {}", round[0].round_index);
        assert_eq!(round[0].item_id, round[1].item_id);
    }
    // The intended times are the schedule's offsets from each step's start.
    let offsets: BTreeMap<&str, i64> =
        schedule.iter().map(|s| (s.request_id.as_str(), s.intended_offset_ns.unwrap())).collect();
    for step in [0, 1] {
        let rows: Vec<&ResponseRow> = responses.iter().filter(|r| r.step == Some(step)).collect();
        let starts: std::collections::BTreeSet<i64> =
            rows.iter().map(|r| r.intended_t_ns - offsets[r.request_id.as_str()]).collect();
        assert_eq!(starts.len(), 1, "step {step}: one start for every request: {starts:?}");
        // The client keeps its schedule on a loaded machine within a generous band.
        let mut lags: Vec<i64> = rows.iter().map(|r| r.started_t_ns - r.intended_t_ns).collect();
        lags.sort();
        assert!(lags[0] >= 0, "no request leaves before it is due");
        assert!(lags[lags.len() / 2] < 5_000_000, "step {step}: median send lag {} ns", lags[lags.len() / 2]);
    }
    let load = metrics(&run).load.expect("a load run's metrics have a load section");
    assert_eq!(load.steps.len(), 4, "2 steps × 2 providers");
    let first = &load.steps[0];
    assert_eq!((first.step, first.requests), (0, 8), "arrivals at 0.5 … 2.25 s of the window [0.5, 2.5)");
    assert!((first.offered_rate - 4.0).abs() < 1e-9, "{}", first.offered_rate);
    assert!(first.achieved_rate > 3.0, "achieved {}", first.achieved_rate);
    assert_eq!(first.completed, 8);
    assert!(first.e2e_ms.p50.unwrap() >= first.e2e_from_send_ms.p50.unwrap());
    assert_eq!(first.e2e_ms.too_few_samples, ["p90", "p95", "p99"], "8 samples resolve a p50 only");
    // A provider has a knee exactly when one of its steps is not client-bound (on a loaded
    // machine a step may be: its send lag p99 over 1 ms).
    for provider in ["reasoner-ai", "steady"] {
        let measured = load.steps.iter().any(|s| s.provider == provider && s.client_bound.is_empty());
        assert_eq!(load.knees.iter().any(|k| k.provider == provider), measured, "{provider}");
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Under load"), "{report}");
    assert!(report.contains("### Knees"));
    // report.html leads with the load view, every figure of it checked against metrics.json in
    // Chromium, offline (the browser takes its own turn at the cores).
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("id=\"view-load\"") && html.contains("data-chart=\"load-latency\""));
    assert!(html.contains("data-chart=\"load-goodput\""), "goodput and accuracy against the offered rate");
    assert!(html.contains("data-chart=\"load-lag\""), "the send lag per step");
    // ib-compare reads a load run in the Hive layout as any other, under its own workflow.
    let hive = ws.path("hive/workflow=load-sweep/run=load");
    std::fs::create_dir_all(hive.parent().unwrap()).unwrap();
    inferbench_testkit::reference_run::copy_tree(&run, &hive);
    // Beside it, a capacity search's directory: no run, skipped with its reason, its result listed.
    let search = ws.path("hive/workflow=load-sweep/run=search");
    std::fs::create_dir_all(&search).unwrap();
    std::fs::write(search.join("search.json"), serde_json::to_vec(&search_record()).unwrap()).unwrap();
    let out = ws.path("compared");
    let compared =
        ok(std::process::Command::new(crate::compare::ib_compare()).arg("--out").arg(&out).arg(ws.path("hive/*/*")));
    let stderr = String::from_utf8_lossy(&compared.stderr);
    assert!(stderr.contains("run=search: a capacity search's directory, holding search.json, not a run"), "{stderr}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("## Workflow `load-sweep`: 1 runs"), "{summary}");
    assert!(summary.contains("## Capacity searches: 1") && summary.contains("| steady | 12.00 | 16.00 | found |"));
    compared_load_run(&out, &summary, &load);
    let files = |name: &str| run.join(name);
    crate::browser::assert_passes(
        "load",
        &files("report.html"),
        &files("metrics.json"),
        &files("comparisons.json"),
        &ws.path("browser"),
    );
}

/// A capacity search's record, as `ib-search` writes one.
fn search_record() -> SearchDocument {
    SearchDocument {
        version: SEARCH_VERSION.into(),
        provenance: Provenance::new(&BTreeMap::new()),
        min_rate: 4.0,
        max_rate: 64.0,
        tolerance: 0.5,
        max_probes: 6,
        goodput_target: 0.9,
        rule: vec![],
        probes: vec![],
        results: vec![SearchResult {
            provider: "steady".into(),
            status: SearchStatus::Found,
            holds_at: Some(12.0),
            fails_at: Some(16.0),
        }],
        stopped: "every provider's capacity is found".into(),
    }
}

/// ib-compare's view of the load run: `load_steps.parquet` is the run's `load` section row for
/// row, and the summary gives each provider's knee and highest rate held as the section does.
fn compared_load_run(out: &Path, summary: &str, load: &LoadMetrics) {
    use crate::compare::{flags, integers, numbers, table, text};
    // metrics.json's numbers as two JSON readers parse them: the same, or one ulp apart.
    let same = |got: Option<f64>, want: Option<f64>, column: &str| match (got, want) {
        (Some(g), Some(w)) => assert!(g.to_bits().abs_diff(w.to_bits()) <= 1, "{column}: {g} vs {w}"),
        (g, w) => assert_eq!(g, w, "{column}"),
    };
    let (steps, _) = table(&out.join("load_steps.parquet"));
    assert_eq!(text(&steps, "provider").len(), load.steps.len(), "one row per step and provider");
    for (i, s) in load.steps.iter().enumerate() {
        assert_eq!(
            (text(&steps, "run_workflow")[i].as_str(), text(&steps, "run_name")[i].as_str()),
            ("load-sweep", "load")
        );
        assert_eq!(
            (text(&steps, "provider")[i].as_str(), integers(&steps, "step")[i]),
            (s.provider.as_str(), Some(s.step.into()))
        );
        same(numbers(&steps, "target_rate")[i], s.target_rate, "target_rate");
        same(numbers(&steps, "offered_rate")[i], Some(s.offered_rate), "offered_rate");
        same(numbers(&steps, "achieved_rate")[i], Some(s.achieved_rate), "achieved_rate");
        same(numbers(&steps, "completed_per_second")[i], Some(s.completed_per_second), "completed_per_second");
        same(numbers(&steps, "ttft_p50_ms")[i], s.ttft_ms.p50, "ttft_p50_ms");
        same(numbers(&steps, "e2e_latency_p99_ms")[i], s.e2e_ms.p99, "e2e_latency_p99_ms");
        same(numbers(&steps, "send_lag_p99_ms")[i], s.send_lag_ms.p99, "send_lag_p99_ms");
        same(numbers(&steps, "goodput")[i], s.goodput, "goodput");
        same(numbers(&steps, "accuracy")[i], s.accuracy, "accuracy");
        assert_eq!(flags(&steps, "holds")[i], s.holds);
        assert_eq!(flags(&steps, "client_bound")[i], !s.client_bound.is_empty());
        let knee = load.knees.iter().any(|k| k.provider == s.provider && k.step == s.step);
        assert_eq!(flags(&steps, "knee")[i], knee, "{} step {}", s.provider, s.step);
    }
    let section =
        &summary[summary.find("### Under load: each provider's capacity across 1 load runs").expect(summary)..];
    let providers: BTreeSet<&str> = load.steps.iter().map(|s| s.provider.as_str()).collect();
    for provider in providers {
        let line = section.lines().find(|l| l.starts_with(&format!("| {provider} | "))).expect(section);
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let rows: Vec<&StepMetrics> = load.steps.iter().filter(|s| s.provider == provider).collect();
        // The knee is metrics.json's, by its rate, offered rate and goodput per second.
        match load.knees.iter().find(|k| k.provider == provider) {
            Some(knee) => {
                let row = rows.iter().find(|s| s.step == knee.step).unwrap();
                let expected = [
                    format!("{} req/s", row.target_rate.unwrap()),
                    format!("{:.2}", knee.offered_rate),
                    format!("{:.2}", knee.goodput_per_second),
                ];
                assert_eq!(cells[4..7], expected, "{line}");
            }
            None => assert_eq!(cells[4], "— (every step client-bound)", "{line}"),
        }
        // The highest offered rate held, never a client-bound step's.
        let held =
            rows.iter().filter(|s| s.holds && s.client_bound.is_empty()).map(|s| s.offered_rate).max_by(f64::total_cmp);
        match held {
            Some(rate) => assert_eq!(cells[7], format!("{rate:.2}"), "{line}"),
            None => assert!(cells[7].starts_with("— (every step") || cells[7] == "none held", "{line}"),
        }
        let bound = rows.iter().filter(|s| !s.client_bound.is_empty()).count();
        assert_eq!(cells[9], if bound == 0 { "2".to_string() } else { format!("2 ({bound} client-bound)") }, "{line}");
    }
    // Every client-bound step is listed apart, with its reasons.
    for s in load.steps.iter().filter(|s| !s.client_bound.is_empty()) {
        let listed = format!("| {} req/s | {} |", s.target_rate.unwrap(), s.provider);
        assert!(section.contains(&listed) && section.contains(&s.client_bound.join("; ")), "{listed}\n{section}");
    }
}

#[test]
fn a_trace_is_replayed_at_its_offsets() {
    let ws = load_workspace(
        "  mode: open_loop\n  arrivals: trace\n  trace: trace.jsonl\n  speedups: [1, 2]\n  step_seconds: 2\n",
    );
    std::fs::write(
        ws.path("pipeline/trace.jsonl"),
        "{\"offset_ms\": 0}\n{\"offset_ms\": 250.5, \"input_tokens\": 40}\n{\"offset_ms\": 900}\n{\"offset_ms\": 3000}\n",
    )
    .unwrap();
    let run = ws.run("trace");
    run_load(&ws, &run);
    let schedule: Vec<ScheduleRow> = table(&run.join("schedule.parquet"));
    let mut offsets: Vec<(i64, i64)> =
        schedule.iter().map(|s| (s.step.unwrap(), s.intended_offset_ns.unwrap())).collect();
    offsets.dedup();
    assert_eq!(
        offsets,
        [(0, 0), (0, 250_500_000), (0, 900_000_000), (1, 0), (1, 125_250_000), (1, 450_000_000), (1, 1_500_000_000)],
        "the trace's offsets, sped up, cut at the step's end"
    );
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    let by_id: BTreeMap<&str, &ScheduleRow> = schedule.iter().map(|s| (s.request_id.as_str(), s)).collect();
    for step in [0, 1] {
        let rows: Vec<&ResponseRow> = responses.iter().filter(|r| r.step == Some(step)).collect();
        let start = rows[0].intended_t_ns - by_id[rows[0].request_id.as_str()].intended_offset_ns.unwrap();
        for r in rows {
            assert_eq!(r.intended_t_ns - start, by_id[r.request_id.as_str()].intended_offset_ns.unwrap());
        }
    }
}

#[test]
fn a_fetch_killed_mid_step_runs_the_step_again_whole_and_loses_nothing() {
    let ws = load_workspace(
        "  mode: open_loop\n  arrivals: constant\n  rates: [5, 5]\n  step_seconds: 3\n  \
         objectives: {correct: false}\n",
    );
    let run = ws.run("killed");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    {
        let _timed = timed_section();
        let sim = Sim::start(&ws);
        // Killed (SIGKILL, no chance to clean up) half-way through the first step.
        let mut child = ws.stage("ib-fetch", &run).arg("--endpoint-base").arg(&sim.url).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        child.kill().unwrap();
        child.wait().unwrap();
        ok(ws.stage("ib-fetch", &run).arg("--endpoint-base").arg(&sim.url));
    }
    ws.derive(&run);
    let schedule: Vec<ScheduleRow> = table(&run.join("schedule.parquet"));
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    assert_eq!(responses.len(), schedule.len(), "one outcome per request, none lost");
    // The step ran again whole: every response of it is from one run of it (one start), and
    // the requests sent before the kill were sent again as their next attempt.
    let offsets: BTreeMap<&str, i64> =
        schedule.iter().map(|s| (s.request_id.as_str(), s.intended_offset_ns.unwrap())).collect();
    let first_step: Vec<&ResponseRow> = responses.iter().filter(|r| r.step == Some(0)).collect();
    let starts: std::collections::BTreeSet<i64> =
        first_step.iter().map(|r| r.intended_t_ns - offsets[r.request_id.as_str()]).collect();
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert!(first_step.iter().any(|r| r.attempt >= 2), "the requests sent before the kill were sent again");
    assert!(responses.iter().filter(|r| r.step == Some(1)).all(|r| r.attempt == 1));
    let load = metrics(&run).load.unwrap();
    let step0 = load.steps.iter().find(|s| s.step == 0).unwrap();
    assert_eq!(step0.attempt, 2, "its figures come from the run that completed");
    assert!(step0.client_bound.iter().all(|r| !r.contains("did not complete")), "{:?}", step0.client_bound);
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"status\": \"complete\""), "{manifest}");
}

/// A fetch allowed too few file descriptors for the load it is asked to send: the requests it
/// cannot connect fail as the client's (`client_resource`), and the step says it measured the
/// client, never the providers.
#[test]
fn a_client_out_of_file_descriptors_is_named_and_its_step_client_bound() {
    let ws = load_workspace(
        "  mode: open_loop\n  arrivals: constant\n  rates: [150]\n  step_seconds: 1.5\n  \
         objectives: {correct: false}\n",
    );
    let run = ws.run("squeezed");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    {
        let _timed = timed_section();
        let sim = Sim::start(&ws);
        // 48 descriptors, hard: about 30 connections once the log, the runtime and the rest are
        // open, against some 100 in flight (150 requests a second to each of 2 providers
        // answering in 0.3 s).
        let fetch = ws.stage("ib-fetch", &run);
        let mut args: Vec<String> = fetch.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        args.extend(["--endpoint-base".to_string(), sim.url.clone()]);
        ok(std::process::Command::new("prlimit")
            .arg("--nofile=48:48")
            .arg(crate::support::bin("ib-fetch"))
            .args(&args)
            .current_dir(ws.path("")));
    }
    ws.derive(&run);
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    let squeezed = responses
        .iter()
        .filter(|r| r.error_type == Some(inferbench_contract::vocab::ErrorKind::ClientResource))
        .count();
    assert!(squeezed > 0, "some requests found no descriptor for their connection");
    let load = metrics(&run).load.unwrap();
    for row in &load.steps {
        assert!(
            row.client_bound.iter().any(|r| r.contains("failed on a resource of the client")),
            "{}: {:?}",
            row.provider,
            row.client_bound
        );
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("(client-bound)"), "the report never presents the step as the providers'");
}

/// A capped step: at most one request of a provider in flight. Arrivals faster than a provider
/// answers wait in its queue; the wait counts in their latency (measured from the arrival) and
/// is never taken for the client's lag.
#[test]
fn a_capped_step_queues_what_is_over_its_cap_and_counts_the_wait() {
    let ws = load_workspace(
        "  mode: capped\n  concurrency_cap: 1\n  arrivals: constant\n  rates: [6]\n  step_seconds: 1.5\n  \
         objectives: {correct: false}\n",
    );
    let run = ws.run("capped");
    run_load(&ws, &run);
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    assert_eq!(responses.len(), 9 * 2, "every arrival answered, none dropped");
    for provider in ["steady", "reasoner-ai"] {
        let mut mine: Vec<&ResponseRow> = responses.iter().filter(|r| r.provider == provider).collect();
        mine.sort_by_key(|r| r.started_t_ns);
        // One at a time: each send after the one before ended (its terminal lies past its E2E).
        for pair in mine.windows(2) {
            let before_end = pair[0].started_t_ns + (pair[0].e2e_latency_ms.unwrap() * 1e6) as i64;
            assert!(pair[1].started_t_ns >= before_end, "{provider}: two requests in flight at once");
        }
        let queued: Vec<&ResponseRow> = mine.iter().copied().filter(|r| r.released_t_ns.is_some()).collect();
        assert!(queued.len() >= 5, "{provider}: arrivals every 167 ms, answers taking longer, queue: {}", queued.len());
        let last = mine.last().unwrap();
        let waited_ms = (last.released_t_ns.unwrap() - last.intended_t_ns) as f64 / 1e6;
        assert!(waited_ms > 500.0, "{provider}: the last arrival waited {waited_ms} ms for its slot");
        for r in &queued {
            let lag_ms = (r.started_t_ns - r.released_t_ns.unwrap()) as f64 / 1e6;
            assert!((0.0..50.0).contains(&lag_ms), "{provider}: sent {lag_ms} ms after its slot freed");
        }
    }
    let load = metrics(&run).load.unwrap();
    for row in &load.steps {
        assert!(row.queued_ms.max.unwrap() > 500.0, "{row:?}");
        assert!(row.e2e_ms.max.unwrap() > row.e2e_from_send_ms.max.unwrap() + 400.0, "the wait is in the latency");
        assert!(
            row.client_bound.iter().all(|r| !r.contains("send lag")),
            "the cap's queue is not the client's lag: {:?}",
            row.client_bound
        );
    }
}

/// A closed loop of two users per provider: each user sends its next request the moment the one
/// before ended, so a provider never has more requests in flight than users, and every request
/// of every user is answered.
#[test]
fn a_closed_loop_keeps_each_user_to_one_request_at_a_time() {
    let ws = load_workspace(
        "  mode: closed_loop\n  concurrencies: [1, 2]\n  requests_per_user: 3\n  objectives: {correct: false}\n",
    );
    let run = ws.run("closed");
    run_load(&ws, &run);
    let schedule: Vec<ScheduleRow> = table(&run.join("schedule.parquet"));
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    assert_eq!(schedule.len(), (3 + 6) * 2, "1 user × 3 and 2 users × 3 requests, to each of 2 providers");
    assert_eq!(responses.len(), schedule.len());
    let user: BTreeMap<&str, i64> = schedule.iter().map(|s| (s.request_id.as_str(), s.user.unwrap())).collect();
    for provider in ["steady", "reasoner-ai"] {
        for (step, users) in [(0, 1), (1, 2)] {
            for u in 0..users {
                let mut mine: Vec<&ResponseRow> = responses
                    .iter()
                    .filter(|r| r.provider == provider && r.step == Some(step) && user[r.request_id.as_str()] == u)
                    .collect();
                mine.sort_by_key(|r| r.started_t_ns);
                assert_eq!(mine.len(), 3);
                for pair in mine.windows(2) {
                    let before_end = pair[0].started_t_ns + (pair[0].e2e_latency_ms.unwrap() * 1e6) as i64;
                    assert!(pair[1].started_t_ns >= before_end, "{provider} user {u}: its next request overlapped");
                    // Sent as soon as the one before ended: its intended time is that moment.
                    assert!(
                        pair[1].intended_t_ns >= before_end
                            && pair[1].started_t_ns - pair[1].intended_t_ns < 50_000_000
                    );
                }
            }
        }
    }
    let load = metrics(&run).load.unwrap();
    assert_eq!(load.steps.iter().map(|s| s.users).collect::<Vec<_>>(), [Some(1), Some(1), Some(2), Some(2)]);
    assert!(load.steps.iter().all(|s| s.completed == s.requests), "{:?}", load.steps);
}

/// A paired sweep of synthetic prompts: every prompt exactly its drawn o200k_base length, the
/// same bytes to both providers of a round, the first tokens shared by every prompt, and the
/// requested answer lengths drawn from the spec's distribution, sent as the token limit and
/// (ib-sim ignoring its end of sequence when asked) answered to the token. No answer is scored.
#[test]
fn a_synthetic_sweep_sends_exact_lengths_paired_with_a_shared_prefix() {
    use inferbench_contract::tables::{EvaluationRow, EventRow};
    use inferbench_contract::vocab::{Classification, TaskFamily, WorkloadKind};
    use inferbench_judge::tokenizer;
    let section = "  mode: open_loop\n  arrivals: poisson\n  rates: [4, 8]\n  step_seconds: 2\n  seed: 11\n  \
                workload:\n    kind: synthetic\n    input_tokens: {distribution: uniform, min: 40, max: 300}\n    \
                output_tokens: {distribution: normal, mean: 24, stddev: 6, min: 8, max: 40}\n    \
                shared_prefix_tokens: 32\n    ignore_eos: true\n  objectives: {e2e_ms: 5000}\n";
    let ws = load_workspace(section);
    let run = ws.run("synthetic");
    run_load(&ws, &run);
    let schedule: Vec<ScheduleRow> = table(&run.join("schedule.parquet"));
    let responses: Vec<ResponseRow> = table(&run.join("responses.parquet"));
    assert!(schedule.len() >= 2 * 10, "about 24 arrivals to each of 2 providers: {}", schedule.len());
    assert_eq!(responses.len(), schedule.len(), "every request answered");
    // Exact lengths, paired rounds, one shared prefix.
    let prefix = {
        let first = schedule[0].prompt.as_deref().unwrap();
        tokenizer::decode_bytes(&tokenizer::encode(first)[..32])
    };
    let mut rounds: BTreeMap<i64, Vec<&ScheduleRow>> = BTreeMap::new();
    for s in &schedule {
        assert_eq!(s.task_family, TaskFamily::Synthetic);
        let prompt = s.prompt.as_deref().expect("a synthetic request's prompt is in the schedule");
        assert_eq!(tokenizer::count(prompt) as i64, s.target_input_tokens.unwrap(), "{}", s.request_id);
        assert!((40..=300).contains(&s.target_input_tokens.unwrap()));
        assert!((8..=40).contains(&s.target_output_tokens.unwrap()));
        assert!(prompt.as_bytes().starts_with(&prefix), "the first 32 tokens are every prompt's");
        assert_eq!(tokenizer::encode(prompt)[..32], tokenizer::encode(std::str::from_utf8(&prefix).unwrap())[..]);
        rounds.entry(s.round_index).or_default().push(s);
    }
    for round in rounds.values() {
        assert_eq!(round.len(), 2);
        let (a, b) = (round[0], round[1]);
        assert_ne!(a.provider, b.provider);
        assert_eq!(
            (&a.prompt, a.target_input_tokens, a.target_output_tokens, a.intended_offset_ns),
            (&b.prompt, b.target_input_tokens, b.target_output_tokens, b.intended_offset_ns)
        );
    }
    let distinct: std::collections::BTreeSet<&str> = rounds.values().map(|r| r[0].prompt.as_deref().unwrap()).collect();
    assert_eq!(distinct.len(), rounds.len(), "every round its own prompt");
    let outputs: std::collections::BTreeSet<i64> = schedule.iter().map(|s| s.target_output_tokens.unwrap()).collect();
    assert!(outputs.len() > 3, "the answer lengths are drawn, not constant: {outputs:?}");
    // What was sent is what the schedule holds: the log's bodies, byte for byte.
    let by_id: BTreeMap<&str, &ScheduleRow> = schedule.iter().map(|s| (s.request_id.as_str(), s)).collect();
    let events: Vec<EventRow> = table(&run.join("events.parquet"));
    let started: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e.kind == "request_started")
        .map(|e| serde_json::from_str(e.data.as_deref().unwrap()).unwrap())
        .collect();
    assert_eq!(started.len(), schedule.len());
    for data in &started {
        let s = by_id[data["request_id"].as_str().unwrap()];
        let body = &data["body"];
        assert_eq!(body["messages"], serde_json::json!([{"role": "user", "content": s.prompt.as_deref().unwrap()}]));
        assert_eq!(body["max_tokens"].as_i64(), s.target_output_tokens);
        assert_eq!(body["ignore_eos"], true);
        assert!(body.get("response_format").is_none());
        assert_eq!(data["target_input_tokens"].as_i64(), s.target_input_tokens);
    }
    // The answers ran to their requested length; none was scored.
    let evaluations: Vec<EvaluationRow> = table(&run.join("evaluations.parquet"));
    for r in &responses {
        let s = by_id[r.request_id.as_str()];
        assert_eq!((r.target_input_tokens, r.target_output_tokens), (s.target_input_tokens, s.target_output_tokens));
        assert!(r.complete, "{}: {:?}", r.request_id, r.outcome);
        assert_eq!(Some(r.visible_answer_tokens), r.target_output_tokens, "{}", r.request_id);
    }
    assert!(evaluations.iter().all(|e| e.classification == Classification::NotScored && !e.correct));
    let load = metrics(&run).load.unwrap();
    assert_eq!(load.workload.kind, WorkloadKind::Synthetic);
    assert_eq!(load.workload.shared_prefix_tokens, 32);
    assert!(!load.objectives.correct);
    for step in &load.steps {
        assert_eq!(step.accuracy, None, "no rubric, no accuracy");
        assert!(step.tpot_ms.p50.is_some() && step.output_tokens_per_second > 0.0, "{step:?}");
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("synthetic prompts"), "{report}");
    // A synthetic workload's answers cannot be required correct: refused before anything is locked.
    let refused = load_workspace(&section.replace("{e2e_ms: 5000}", "{e2e_ms: 5000, correct: true}"));
    let bad = refused.run("refused");
    let out = refused.stage("ib-select", &bad).args(["--per-family", "2", "--sample"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("load.objectives.correct"), "{stderr}");
    assert!(!bad.join("lock.json").exists(), "nothing locked");
}
