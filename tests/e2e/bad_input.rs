//! Invalid inputs fail before anything is created, naming the file, line and field.
use crate::support::{bin, Workspace};
use inferbench_contract::tables::Table;
use inferbench_contract::tables::{EvaluationRow, ResponseRow};
use inferbench_store::parquet_io::{self};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn rewrite_line(path: &Path, line: usize, edit: impl Fn(&mut Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut row: Value = serde_json::from_str(&lines[line - 1]).unwrap();
    edit(&mut row);
    lines[line - 1] = serde_json::to_string(&row).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// One way to break a dataset, and a piece of the message that must name it.
struct Breakage {
    name: &'static str,
    apply: fn(&Path),
    expected: &'static str,
}

const MEETINGS: &str = "meeting-notes-lookup.jsonl";
const TICKETS: &str = "ticket-triage.jsonl";
const CONTRACTS: &str = "contract-terms-extraction.jsonl";

fn edit(file: &'static str, line: usize, change: fn(&mut Value)) -> impl Fn(&Path) {
    move |dir: &Path| rewrite_line(&dir.join(file), line, change)
}

fn raw(file: &str, dir: &Path, change: impl Fn(String) -> String) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, change(text)).unwrap();
}

fn breakages() -> Vec<Breakage> {
    vec![
        Breakage {
            name: "missing field",
            apply: |d| edit(MEETINGS, 1, |r| drop(r.as_object_mut().unwrap().remove("gold")))(d),
            expected: "meeting-notes-lookup.jsonl:1: gold: missing",
        },
        Breakage {
            name: "duplicate id",
            apply: |d| edit(TICKETS, 3, |r| r["id"] = "ticket-triage-0000".into())(d),
            expected: "ticket-triage.jsonl:3: id: duplicate id `ticket-triage-0000`",
        },
        Breakage {
            name: "empty id",
            apply: |d| edit(TICKETS, 5, |r| r["id"] = "".into())(d),
            expected: "ticket-triage.jsonl:5: id: expected a non-empty string",
        },
        Breakage {
            name: "wrong category enum",
            apply: |d| edit(TICKETS, 2, |r| r["gold"]["category"] = "question".into())(d),
            expected: "ticket-triage.jsonl:2: gold.category:",
        },
        Breakage {
            name: "wrong priority enum",
            apply: |d| edit(TICKETS, 2, |r| r["gold"]["priority"] = "P1".into())(d),
            expected: "ticket-triage.jsonl:2: gold.priority:",
        },
        Breakage {
            name: "wrong agreement type",
            apply: |d| edit(CONTRACTS, 1, |r| r["gold"]["agreement_type"] = "lease".into())(d),
            expected: "contract-terms-extraction.jsonl:1: gold.agreement_type:",
        },
        Breakage {
            name: "bad date",
            apply: |d| edit(CONTRACTS, 3, |r| r["gold"]["effective_date"] = "2025-02-30".into())(d),
            expected: "contract-terms-extraction.jsonl:3: gold.effective_date:",
        },
        Breakage {
            name: "float where an integer belongs",
            apply: |d| edit(CONTRACTS, 4, |r| r["gold"]["renewal_term_months"] = 12.5.into())(d),
            expected: "contract-terms-extraction.jsonl:4: gold.renewal_term_months: expected an integer or null",
        },
        Breakage {
            name: "string where a boolean belongs",
            apply: |d| edit(CONTRACTS, 2, |r| r["gold"]["auto_renews"] = "yes".into())(d),
            expected: "contract-terms-extraction.jsonl:2: gold.auto_renews: expected a boolean",
        },
        Breakage {
            name: "contract gold keys out of order",
            apply: |d| {
                edit(CONTRACTS, 6, |r| {
                    let g = r["gold"].as_object_mut().unwrap();
                    let v = g.remove("agreement_type").unwrap();
                    g.insert("agreement_type".into(), v);
                })(d)
            },
            expected: "contract-terms-extraction.jsonl:6: gold: expected exactly the keys",
        },
        Breakage {
            name: "ticket tokens out of band",
            apply: |d| edit(TICKETS, 4, |r| r["tokens"]["user"] = 120.into())(d),
            expected: "ticket-triage.jsonl:4: tokens.user: 120 is outside the band 50-100",
        },
        Breakage {
            name: "meeting tokens out of band",
            apply: |d| edit(MEETINGS, 2, |r| r["tokens"]["input_total"] = 1200.into())(d),
            expected: "meeting-notes-lookup.jsonl:2: tokens.input_total: 1200 is outside the band 500-1000",
        },
        Breakage {
            name: "template mismatch",
            apply: |d| edit(MEETINGS, 3, |r| r["prompt"]["system"] = "Answer the question.".into())(d),
            expected: "meeting-notes-lookup.jsonl:3: prompt.system: differs from the template",
        },
        Breakage {
            name: "empty user prompt",
            apply: |d| edit(TICKETS, 6, |r| r["prompt"]["user"] = "   ".into())(d),
            expected: "ticket-triage.jsonl:6: prompt.user: expected a non-empty string",
        },
        Breakage {
            name: "wrong use case",
            apply: |d| edit(MEETINGS, 4, |r| r["use_case"] = "ticket-triage".into())(d),
            expected: "meeting-notes-lookup.jsonl:4: use_case: expected `meeting-notes-lookup`",
        },
        Breakage {
            name: "wrong split",
            apply: |d| edit(MEETINGS, 5, |r| r["split"] = "public".into())(d),
            expected: "meeting-notes-lookup.jsonl:5: split: expected `private`",
        },
        Breakage {
            name: "changed output schema",
            apply: |d| edit(TICKETS, 1, |r| r["output_schema"]["category"] = "string".into())(d),
            expected: "ticket-triage.jsonl:1: output_schema: expected",
        },
        Breakage {
            name: "aliases not strings",
            apply: |d| edit(MEETINGS, 6, |r| r["aliases"] = serde_json::json!(["Ada", 7]))(d),
            expected: "meeting-notes-lookup.jsonl:6: aliases: expected a list of strings",
        },
        Breakage {
            name: "blank line",
            apply: |d| raw(TICKETS, d, |t| t.replacen('\n', "\n\n", 1)),
            expected: "ticket-triage.jsonl:2: row: blank line",
        },
        Breakage {
            name: "truncated file",
            apply: |d| raw(CONTRACTS, d, |t| t[..t.len() - 200].to_string()),
            expected: "contract-terms-extraction.jsonl:6: row: the last line is not terminated",
        },
        Breakage {
            name: "not JSON",
            apply: |d| raw(MEETINGS, d, |t| t.replacen("{\"id\"", "{id", 1)),
            expected: "meeting-notes-lookup.jsonl:1: row: not valid JSON",
        },
        Breakage {
            name: "wrong manifest count",
            apply: |d| raw("manifest.json", d, |t| t.replacen("6", "7", 1)),
            expected: "rows: 6 rows, but manifest.json declares 7",
        },
        Breakage {
            name: "manifest not frozen",
            apply: |d| raw("manifest.json", d, |t| t.replace("\"frozen\"", "\"draft\"")),
            expected: "manifest.json: status: expected `frozen`",
        },
        Breakage {
            name: "missing family file",
            apply: |d| std::fs::remove_file(d.join(TICKETS)).unwrap(),
            expected: "ticket-triage.jsonl: No such file",
        },
    ]
}

#[test]
fn datasets_broken_in_twenty_four_ways_are_each_refused_precisely() {
    let cases = breakages();
    assert!(cases.len() >= 20);
    for case in cases {
        let ws = Workspace::new();
        (case.apply)(&ws.dataset());
        let run = ws.run("run-bad");
        let out = ws.stage("ib-select", &run).arg("--sample").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{}: {stderr}", case.name);
        assert!(stderr.contains(case.expected), "{}: stderr lacks `{}`:\n{stderr}", case.name, case.expected);
        assert!(!run.exists(), "{}: no run directory is created for invalid input", case.name);
    }
}

#[test]
fn every_violation_is_reported_at_once() {
    let ws = Workspace::new();
    rewrite_line(&ws.dataset().join(TICKETS), 2, |row| row["gold"]["priority"] = "p9".into());
    rewrite_line(&ws.dataset().join(TICKETS), 4, |row| drop(row.as_object_mut().unwrap().remove("aliases")));
    rewrite_line(&ws.dataset().join(CONTRACTS), 3, |row| row["gold"]["effective_date"] = "2025-02-30".into());
    let out = ws.stage("ib-select", &ws.run("run-bad")).arg("--sample").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3 problem(s) found"), "{stderr}");
    for text in [
        "ticket-triage.jsonl:2: gold.priority:",
        "ticket-triage.jsonl:4: aliases: missing",
        "contract-terms-extraction.jsonl:3: gold.effective_date:",
    ] {
        assert!(stderr.contains(text), "stderr lacks `{text}`:\n{stderr}");
    }
}

#[test]
fn missing_credentials_are_named_and_nothing_is_sent() {
    let ws = Workspace::new();
    let run = ws.run("run-creds");
    crate::support::ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    crate::support::ok(&mut ws.stage("ib-schedule", &run));
    let out = ws
        .stage("ib-fetch", &run)
        .args(["--env-file", "/nonexistent"])
        .env_remove("IB_TEST_STEADY_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("missing credentials") && stderr.contains("IB_TEST_STEADY_KEY"), "{stderr}");
    assert!(!run.join("events").exists(), "nothing was sent or logged");
}

/// Which input a spec-or-table breakage edits.
#[derive(Clone, Copy)]
enum Input {
    Spec,
    Providers,
}

/// One way to break the spec or the provider table (a text edit, as a user would make it),
/// and the pieces of the message that must name the file and the key.
struct Mistake {
    name: &'static str,
    input: Input,
    from: &'static str,
    to: &'static str,
    expected: &'static [&'static str],
}

const fn spec(name: &'static str, from: &'static str, to: &'static str, expected: &'static [&'static str]) -> Mistake {
    Mistake { name, input: Input::Spec, from, to, expected }
}

const fn table(name: &'static str, from: &'static str, to: &'static str, expected: &'static [&'static str]) -> Mistake {
    Mistake { name, input: Input::Providers, from, to, expected }
}

const STEADY: &str = "    model_id: m-steady\n";

fn mistakes() -> Vec<Mistake> {
    vec![
        spec(
            "negative timeout",
            "timeout_seconds: 20\n",
            "timeout_seconds: -1\n",
            &["spec.yaml: inference.timeout_seconds: must be a number of seconds greater than 0"],
        ),
        spec(
            "zero timeout",
            "timeout_seconds: 20\n",
            "timeout_seconds: 0\n",
            &["spec.yaml: inference.timeout_seconds: must be"],
        ),
        spec(
            "NaN timeout",
            "timeout_seconds: 20\n",
            "timeout_seconds: .nan\n",
            &["spec.yaml: inference.timeout_seconds: expected a finite number"],
        ),
        spec(
            "1e20 timeout",
            "timeout_seconds: 20\n",
            "timeout_seconds: 1.0e+20\n",
            &["spec.yaml: inference.timeout_seconds: must be", "at most 600"],
        ),
        spec(
            "two attempts",
            "max_attempts: 1\n",
            "max_attempts: 2\n",
            &["spec.yaml: inference.max_attempts: must be 1, found 2"],
        ),
        spec(
            "per-provider concurrency 2",
            "per_provider_concurrency: 1\n",
            "per_provider_concurrency: 2\n",
            &["spec.yaml: execution_plan.per_provider_concurrency: must be 1, found 2"],
        ),
        spec(
            "global concurrency 2",
            "maximum_global_concurrency: 7\n",
            "maximum_global_concurrency: 2\n",
            &["spec.yaml: execution_plan.maximum_global_concurrency: 2 differs from the 7 providers"],
        ),
        spec("unknown top-level key", "runner:\n", "surprise: true\nrunner:\n", &["spec.yaml: surprise: unknown key"]),
        spec(
            "unknown nested key",
            "  max_attempts: 1\n",
            "  max_atempts: 1\n",
            &["spec.yaml: inference.max_atempts: unknown key"],
        ),
        spec(
            "deeply nested unknown key",
            "    hidden_warmup_requests: false\n",
            "    hidden_warmup_requests: false\n    warm_up: true\n",
            &["spec.yaml: execution_plan.connection_policy.warm_up: unknown key"],
        ),
        spec("YAML syntax error", "inference:\n", "inference: [\n", &["spec.yaml: not valid YAML"]),
        spec("missing required key", "  temperature: 0\n", "", &["spec.yaml: inference.temperature: missing"]),
        spec(
            "no streaming",
            "  streaming: true\n",
            "  streaming: false\n",
            &["spec.yaml: inference.streaming: must be true"],
        ),
        spec(
            "json_schema output",
            "    mode: json_object\n",
            "    mode: json_schema\n",
            &["spec.yaml: inference.structured_output.mode: `json_schema` is not one of json_object, prompt_only"],
        ),
        spec(
            "an unknown wire API",
            "  api: chat-completions\n",
            "  api: completions\n",
            &["spec.yaml: inference.api: `completions` is not one of chat-completions, responses, messages"],
        ),
        spec(
            "retries on 429",
            "request_retry: false\n",
            "request_retry: true\n",
            &["spec.yaml: rate_limit_policy.request_retry: must be false"],
        ),
        spec(
            "provider reasoning override",
            "provider_overrides: {}\n",
            "provider_overrides: {steady: high}\n",
            &["spec.yaml: inference.reasoning.provider_overrides: must be {}"],
        ),
        spec("top_p zero", "top_p: 1\n", "top_p: 0\n", &["spec.yaml: inference.top_p: must be greater than 0"]),
        spec(
            "event limit above response limit",
            "max_event_bytes: 65536\n",
            "max_event_bytes: 33554432\n",
            &["spec.yaml: inference.stream_limits.max_event_bytes: 33554432 exceeds"],
        ),
        spec(
            "zero response limit",
            "max_response_bytes: 16777216\n",
            "max_response_bytes: 0\n",
            &["spec.yaml: inference.stream_limits.max_response_bytes: expected an integer from 1"],
        ),
        spec(
            "approval flag not a boolean",
            "  resumable: true\n",
            "  resumable: true\n  full_run_requires_human_approval: later\n",
            &["spec.yaml: operations.full_run_requires_human_approval: expected true or false"],
        ),
        spec(
            "counts disagree",
            "question_rounds: 600\n",
            "question_rounds: 60\n",
            &["spec.yaml: execution_plan.question_rounds: 60 differs from 600"],
        ),
        spec(
            "missing provider table",
            "table: providers.yaml\n",
            "table: absent.yaml\n",
            &["absent.yaml: cannot read"],
        ),
        table(
            "empty model_id",
            STEADY,
            "    model_id: \"\"\n",
            &["providers.yaml: providers[0] (steady): model_id: must not be empty"],
        ),
        table(
            "bad port",
            "https://steady.invalid/",
            "https://steady.invalid:99999/",
            &["providers.yaml: providers[0] (steady): endpoint:", "invalid port number"],
        ),
        table(
            "non-http scheme",
            "https://steady.invalid/",
            "ftp://steady.invalid/",
            &["providers.yaml: providers[0] (steady): endpoint:", "scheme must be http or https"],
        ),
        table(
            "extra overrides model",
            STEADY,
            "    model_id: m-steady\n    extra: {model: m-other}\n",
            &["providers.yaml: providers[0] (steady): extra.model: overrides a field"],
        ),
        table(
            "JSON mode on Messages",
            STEADY,
            "    model_id: m-steady\n    api: messages\n",
            &[
                "providers.yaml: providers[0] (steady): inference.structured_output.mode: json_object cannot be asked for on \
                 the messages API",
                "providers.yaml: providers[0] (steady): reasoning.thinking: must be `{type: enabled, budget_tokens: n}` on \
                 the messages API",
            ],
        ),
        table(
            "extra overrides stream",
            STEADY,
            "    model_id: m-steady\n    extra: {stream: false}\n",
            &["providers.yaml: providers[0] (steady): extra.stream: overrides a field"],
        ),
        table(
            "extra overrides messages",
            STEADY,
            "    model_id: m-steady\n    extra: {messages: []}\n",
            &["providers.yaml: providers[0] (steady): extra.messages: overrides a field"],
        ),
        table(
            "extra overrides stream_options",
            STEADY,
            "    model_id: m-steady\n    extra: {stream_options: {}}\n",
            &["providers.yaml: providers[0] (steady): extra.stream_options: overrides"],
        ),
        table(
            "reasoning overrides a sampling key",
            "    reasoning: {reasoning_effort: low}\n",
            "    reasoning: {reasoning_effort: low, temperature: 1}\n",
            &["providers.yaml: providers[0] (steady): reasoning.temperature: overrides"],
        ),
        table(
            "bad credential variable name",
            "env: IB_TEST_STEADY_KEY",
            "env: IB-TEST-STEADY-KEY",
            &["providers.yaml: providers[0] (steady): auth.env:", "not a valid environment variable name"],
        ),
        table(
            "unknown provider key",
            "    stream_usage: true\n",
            "    stream_usag: true\n",
            &["providers.yaml: providers[1] (Reasoner.AI): stream_usag: unknown field"],
        ),
        table(
            "unknown reasoning_docs",
            STEADY,
            "    model_id: m-steady\n    reasoning_docs: maybe\n",
            &["providers.yaml: providers[0] (steady): reasoning_docs: `maybe` is not one of"],
        ),
    ]
}

/// Applies `mistake` to the workspace's spec or provider table (the first occurrence).
fn apply(ws: &Workspace, mistake: &Mistake) {
    let path = match mistake.input {
        Input::Spec => ws.spec(),
        Input::Providers => ws.path("pipeline/providers.yaml"),
    };
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(mistake.from), "{}: `{}` is not in {}", mistake.name, mistake.from, path.display());
    std::fs::write(&path, text.replacen(mistake.from, mistake.to, 1)).unwrap();
}

/// Runs ib-select and asserts exit 3, the expected message pieces, and no run directory.
fn assert_refused(ws: &Workspace, name: &str, expected: &[&str]) -> String {
    let run = ws.run("run-bad");
    let out = ws.stage("ib-select", &run).arg("--sample").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{name}: {stderr}");
    for text in expected {
        assert!(stderr.contains(text), "{name}: stderr lacks `{text}`:\n{stderr}");
    }
    assert!(!run.exists(), "{name}: no run directory is created for invalid input");
    stderr
}

#[test]
fn specs_and_provider_tables_broken_in_thirty_ways_are_each_refused_before_the_lock() {
    // The unbroken workspace is accepted, so every refusal below is the mistake's doing.
    let ws = Workspace::new();
    crate::support::ok(ws.stage("ib-select", &ws.run("run-good")).args(["--per-family", "1", "--sample"]));
    let cases = mistakes();
    assert!(cases.len() > 20);
    for case in cases {
        let ws = Workspace::new();
        apply(&ws, &case);
        assert_refused(&ws, case.name, case.expected);
    }
}

#[test]
fn every_spec_and_table_problem_is_reported_at_once() {
    let ws = Workspace::new();
    for name in ["two attempts", "deeply nested unknown key", "negative timeout", "bad port", "extra overrides model"] {
        let case = mistakes().into_iter().find(|m| m.name == name).unwrap();
        apply(&ws, &case);
    }
    // The spec's three problems; the table is only read once the spec is valid.
    let stderr = assert_refused(&ws, "three spec problems", &["3 problem(s) found"]);
    assert!(!stderr.contains("providers.yaml"), "{stderr}");
    let ws = Workspace::new();
    for name in ["bad port", "extra overrides model", "bad credential variable name", "unknown provider key"] {
        apply(&ws, &mistakes().into_iter().find(|m| m.name == name).unwrap());
    }
    assert_refused(
        &ws,
        "four table problems",
        &["4 problem(s) found", "endpoint:", "extra.model:", "auth.env:", "stream_usag"],
    );
}

/// Every file of a run directory with its bytes: "nothing was written" is this unchanged. The
/// writer lock is left out: a refusing stage may have taken it (recording its pid) and
/// written nothing else.
pub fn snapshot(run: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let files = crate::support::files(run).into_iter();
    let data = files.filter(|p| !p.ends_with(inferbench_store::run::WRITER_LOCK));
    data.map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

/// A locked and scheduled run of one item per family.
fn scheduled_run(ws: &Workspace) -> std::path::PathBuf {
    let run = ws.run("run-x");
    crate::support::ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    crate::support::ok(&mut ws.stage("ib-schedule", &run));
    run
}

/// Runs `cmd` and asserts exit 3 with `expected` in its message and the run unchanged.
fn assert_bad_input(what: &str, cmd: &mut Command, run: &Path, expected: &str) {
    let before = snapshot(run);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{what}: {stderr}");
    assert!(stderr.contains(expected), "{what}: stderr lacks `{expected}`:\n{stderr}");
    assert!(snapshot(run) == before, "{what}: nothing is written for invalid input");
}

#[test]
fn a_missing_spec_is_bad_input_for_every_stage_that_reads_one() {
    let ws = Workspace::new();
    let fresh = ws.run("run-new");
    let out = Command::new(bin("ib-select"))
        .args(["--sample", "--per-family", "1"])
        .env("IB_RUN", &fresh)
        .env("IB_SPEC", ws.path("pipeline/absent.yaml"))
        .env("IB_DATASET", ws.dataset())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "ib-select: {stderr}");
    assert!(stderr.contains("absent.yaml: cannot read"), "ib-select: {stderr}");
    assert!(!fresh.exists(), "ib-select creates no run for a missing spec");
    let run = scheduled_run(&ws);
    for stage in ["ib-schedule", "ib-fetch", "ib-evaluate", "ib-aggregate", "ib-report"] {
        // The spec through its environment fallback, the run and dataset as flags.
        let mut cmd = Command::new(bin(stage));
        cmd.arg("--run").arg(&run).env("IB_SPEC", ws.path("pipeline/absent.yaml")).current_dir(ws.path(""));
        if matches!(stage, "ib-fetch" | "ib-evaluate") {
            cmd.arg("--dataset").arg(ws.dataset());
        }
        assert_bad_input(stage, &mut cmd, &run, "absent.yaml: cannot read");
    }
}

/// A valid table file of `T` with no rows, derived from the run's lock, to stand in for a
/// stage's output.
fn empty_table<T: Table>(path: &Path) {
    let lock = path.with_file_name("lock.json");
    let provenance = [("lock.json".to_string(), inferbench_contract::canonical::file_sha256(&lock).unwrap())].into();
    parquet_io::write::<T>(path, &[], &provenance).unwrap();
}

#[test]
fn truncated_and_garbage_tables_are_bad_input_for_every_stage_that_reads_one() {
    let ws = Workspace::new();
    let base = scheduled_run(&ws);
    empty_table::<ResponseRow>(&base.join("responses.parquet"));
    empty_table::<EvaluationRow>(&base.join("evaluations.parquet"));
    // Each stage with the table it reads (the ones it reads before are valid) and its output,
    // removed first so that "nothing was written" cannot hide a rewrite with the same bytes.
    let cases = [
        ("ib-schedule", "selection.parquet", "schedule.parquet"),
        ("ib-fetch", "schedule.parquet", "events"),
        ("ib-evaluate", "responses.parquet", "evaluations.parquet"),
        ("ib-aggregate", "schedule.parquet", "metrics.json"),
        ("ib-aggregate", "responses.parquet", "metrics.json"),
        ("ib-aggregate", "evaluations.parquet", "metrics.json"),
    ];
    for (stage, table, output) in cases {
        for damage in ["truncated", "garbage"] {
            let run = ws.run(&format!("run-{stage}-{table}-{damage}"));
            copy_dir(&base, &run);
            let _ = std::fs::remove_file(run.join(output));
            let path = run.join(table);
            let bytes = std::fs::read(&path).unwrap();
            let broken = match damage {
                "truncated" => bytes[..bytes.len() / 2].to_vec(),
                _ => b"PAR1 not a table at all PAR1".to_vec(),
            };
            std::fs::write(&path, broken).unwrap();
            let mut cmd = ws.stage(stage, &run);
            if stage == "ib-fetch" {
                cmd.args(["--env-file", "/nonexistent"]);
            }
            let what = format!("{stage} with a {damage} {table}");
            assert_bad_input(&what, &mut cmd, &run, &format!("{table}: not a readable inferbench table"));
            assert!(!run.join(output).exists(), "{what}: {output} is not written");
        }
    }
}

#[test]
fn a_corrupt_event_log_is_bad_input_for_reconstruct() {
    let ws = Workspace::new();
    let run = scheduled_run(&ws);
    std::fs::create_dir_all(run.join("events")).unwrap();
    std::fs::write(run.join("events/0001.jsonl"), "not json\n{\"v\":1}\n").unwrap();
    assert_bad_input("ib-reconstruct", &mut ws.stage("ib-reconstruct", &run), &run, "0001.jsonl:1");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}
