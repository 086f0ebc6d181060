//! Invalid inputs fail before anything is created, naming the file, line and field.
use crate::support::Workspace;

fn rewrite_line(path: &std::path::Path, line: usize, edit: impl Fn(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut row: serde_json::Value = serde_json::from_str(&lines[line - 1]).unwrap();
    edit(&mut row);
    lines[line - 1] = serde_json::to_string(&row).unwrap();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

fn select_fails_with(ws: &Workspace, expected: &[&str]) {
    let run = ws.run("run-bad");
    let out = ws.stage("ib-select", &run).arg("--sample").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    for text in expected {
        assert!(stderr.contains(text), "stderr lacks `{text}`:\n{stderr}");
    }
    assert!(!run.exists(), "no run directory is created for invalid input");
}

#[test]
fn broken_datasets_are_refused_with_file_line_and_field() {
    let ws = Workspace::new();
    let tickets = ws.dataset().join("ticket-triage.jsonl");
    let contracts = ws.dataset().join("contract-terms-extraction.jsonl");
    rewrite_line(&tickets, 2, |row| row["gold"]["priority"] = "p9".into());
    rewrite_line(&tickets, 4, |row| {
        row.as_object_mut().unwrap().remove("aliases");
    });
    rewrite_line(&contracts, 3, |row| row["gold"]["effective_date"] = "2025-02-30".into());
    rewrite_line(&contracts, 5, |row| row["id"] = "contract-terms-extraction-0000".into());
    select_fails_with(
        &ws,
        &[
            "ticket-triage.jsonl:2: gold.priority:",
            "ticket-triage.jsonl:4: aliases: missing",
            "contract-terms-extraction.jsonl:3: gold.effective_date:",
            "contract-terms-extraction.jsonl:5: id: duplicate id",
        ],
    );
}

#[test]
fn a_blank_line_and_a_truncated_file_are_named() {
    let ws = Workspace::new();
    let meetings = ws.dataset().join("meeting-notes-lookup.jsonl");
    let text = std::fs::read_to_string(&meetings).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let broken = format!("{}\n\n{}\n{}", lines[0], lines[1..5].join("\n"), &lines[5][..40]);
    std::fs::write(&meetings, broken).unwrap();
    select_fails_with(&ws, &["meeting-notes-lookup.jsonl:2: row: blank line", "meeting-notes-lookup.jsonl:7: row:"]);
}

#[test]
fn missing_credentials_are_named_and_nothing_is_sent() {
    let ws = Workspace::new();
    let run = ws.run("run-creds");
    crate::support::ok(ws.stage("ib-select", &run).args(["--per-family", "1", "--sample"]));
    crate::support::ok(&mut ws.stage("ib-schedule", &run));
    let out = ws.stage("ib-fetch", &run).args(["--env-file", "/nonexistent"]).env_remove("IB_TEST_STEADY_KEY").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("missing credentials") && stderr.contains("IB_TEST_STEADY_KEY"), "{stderr}");
    assert!(!run.join("events").exists(), "nothing was sent or logged");
}
