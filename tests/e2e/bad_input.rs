//! Invalid inputs fail before anything is created, naming the file, line and field.
use crate::support::Workspace;
use serde_json::Value;
use std::path::Path;

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
