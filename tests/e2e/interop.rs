//! The pipeline against a server written independently of inferbench: aimock
//! (`@copilotkit/aimock`, pinned in `tests/interop/package.json`, which `make test` installs),
//! a fixture-driven mock of OpenAI chat completions, OpenAI Responses and Anthropic Messages
//! with its own grammars and its own streaming clock. One fixture answers every request with
//! known reasoning and answer text after a known first-token delay; three providers reach it
//! through the three wire APIs in one paired run. What it makes checkable: each grammar as
//! another implementation writes it is read into the same answer and reasoning, every stream
//! completes, structure never starts a clock, and the first output is never earlier than the
//! server's own first-token delay.
use crate::support::{ok, repo, Workspace};
use inferbench_contract::tables::ResponseRow;
use inferbench_contract::vocab::{Outcome, WireApi};
use inferbench_store::parquet_io;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REASONING: &str = "Let me read the ticket first.";
const ANSWER: &str = r#"{"answer": "billing"}"#;
/// aimock's first-token delay (its `streamingProfile.ttft`), ms.
const TTFT_MS: f64 = 300.0;

/// aimock on a free port, stopped on drop.
struct Aimock {
    child: Child,
    url: String,
}

impl Aimock {
    fn start(fixtures: &std::path::Path) -> Aimock {
        let cli = repo().join("tests/interop/node_modules/@copilotkit/aimock/dist/cli.js");
        assert!(
            cli.exists(),
            "{} not found: run `make test`, which installs it (tests/interop/install.sh)",
            cli.display()
        );
        let mut child = Command::new("node")
            .arg(cli)
            .args(["--port", "0", "--log-level", "info", "--fixtures"])
            .arg(fixtures)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start aimock (node)");
        // It prints the address it listens on.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let started = Instant::now();
        let url = loop {
            let line = lines.next().expect("aimock exited before listening").unwrap();
            if let Some(at) = line.find("listening on ") {
                break line[at + "listening on ".len()..].trim().to_string();
            }
            assert!(started.elapsed() < Duration::from_secs(30), "aimock not listening in 30 s");
        };
        // Its log keeps coming; nobody reads it.
        std::thread::spawn(move || lines.for_each(drop));
        Aimock { child, url }
    }
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_independent_server_of_every_wire_api_is_read_alike() {
    let _shared = crate::support::shared_section();
    let scratch = tempfile::tempdir().unwrap();
    let fixtures = scratch.path().join("fixtures.json");
    let fixture = serde_json::json!({"fixtures": [{
        "match": {"userMessage": ""},
        "response": {"reasoning": REASONING, "content": ANSWER},
        "streamingProfile": {"ttft": TTFT_MS, "tps": 200}
    }]});
    std::fs::write(&fixtures, fixture.to_string()).unwrap();
    let server = Aimock::start(&fixtures);
    let mut table = String::from("providers:\n");
    for (api, reasoning) in [
        (WireApi::ChatCompletions, "{reasoning_effort: low}\n    token_limit_field: max_tokens"),
        (WireApi::Responses, "{reasoning: {effort: low}}"),
        (WireApi::Messages, "{thinking: {type: enabled, budget_tokens: 1024}}"),
    ] {
        table.push_str(&format!(
            "  - name: aimock-{api}\n    endpoint: {}/{}\n    api: {api}\n    auth: {{kind: bearer, env: IB_AIMOCK_KEY}}\n    \
             model_id: m-aimock\n    reasoning: {reasoning}\n    price_usd_per_million_tokens: {{input: 1, output: 1}}\n",
            server.url,
            api.route()
        ));
    }
    let ws = Workspace::with_table(&table, "sim-profiles.yaml", |spec| {
        spec.replace("    mode: json_object\n", "    mode: prompt_only\n")
    });
    let run = ws.run("run-aimock");
    ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--deadline-seconds", "20", "--env-file", "/nonexistent"])
        .env("IB_AIMOCK_KEY", "sk-aimock-local-5e1a"));
    ws.derive(&run);
    drop(server);
    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 3 * 3, "3 rounds × 3 APIs");
    for r in &responses {
        assert_eq!((r.outcome, r.http_status, r.error_type), (Outcome::Completed, Some(200), None), "{r:?}");
        assert_eq!((r.answer.as_str(), r.reasoning.as_str()), (ANSWER, REASONING), "{}: {r:?}", r.provider);
        let (ttfo, ttfa) = (r.ttfo_ms.unwrap(), r.ttfa_ms.unwrap());
        // Reasoning first, after the server's delay (a loaded machine may read the reasoning's
        // last bytes and the answer's first in one read, so TTFO ≤ TTFA).
        assert!(ttfo >= TTFT_MS && ttfo <= ttfa, "{}: {r:?}", r.provider);
        assert_eq!(r.reasoning_emitted_before_answer, Some(true), "{}: reasoning first: {r:?}", r.provider);
        assert!(ttfo <= TTFT_MS + 2000.0, "{}: {r:?}", r.provider);
        assert!(r.e2e_latency_ms.is_some() && r.visible_answer_tokens > 0, "{r:?}");
        assert_eq!(r.finish_reason.as_deref(), Some("stop"), "{}", r.provider);
    }
}
