//! The stage graph is one table (`inferbench_store::stages`), and the Makefile's run rules must
//! say what it says: each rule that makes run files is one stage's, with exactly the stage's
//! files as targets, exactly its inputs and its binary as prerequisites, a recipe running that
//! binary with `--run` and the table's flags, and standing where `make rescore` reads it (a
//! derived stage) or does not (the record). Read from the Makefile's text, without running it.
use crate::support::repo;
use inferbench_store::stages::{Flag, Stage, STAGES};
use std::collections::BTreeSet;

/// One rule of the Makefile whose targets are run files (`$(RUN)/…`).
#[derive(Debug, Default)]
struct Rule {
    line: usize,
    targets: BTreeSet<String>,
    /// The run files among its prerequisites, order-only or not.
    inputs: BTreeSet<String>,
    /// The binaries among its prerequisites (`$(BIN)/…`).
    binaries: Vec<String>,
    /// Its recipe, continuation lines joined.
    recipe: String,
    /// Whether `make rescore` (RESCORE set) reads it.
    in_rescore: bool,
}

/// Every `name` that follows `prefix` in `text` (up to a space, `)`, `,` or `|`).
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    text.match_indices(prefix)
        .map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let end =
                rest.find(|c: char| c.is_whitespace() || matches!(c, ')' | ',' | '|' | ';')).unwrap_or(rest.len());
            rest[..end].to_string()
        })
        .collect()
}

/// The Makefile's logical lines (a line ending in `\` joined with the next), with the number
/// of the first.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let (number, mut joined) = current.take().unwrap_or((i + 1, String::new()));
        match line.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                joined.push(' ');
                current = Some((number, joined));
            }
            None => {
                joined.push_str(line);
                lines.push((number, joined));
            }
        }
    }
    lines.extend(current);
    lines
}

/// The rules that make run files, with the conditionals they stand in.
fn rules(makefile: &str) -> Vec<Rule> {
    // Each open conditional: its directive and whether its `else` branch is being read.
    let mut conditionals: Vec<(String, bool)> = Vec::new();
    let mut rules: Vec<Rule> = Vec::new();
    let mut open = false;
    for (number, line) in logical_lines(makefile) {
        if let Some(recipe) = line.strip_prefix('\t') {
            if open {
                let rule = rules.last_mut().expect("an open rule");
                rule.recipe.push_str(recipe);
                rule.recipe.push('\n');
            }
            continue;
        }
        let trimmed = line.trim();
        let directive = trimmed.split_whitespace().next().unwrap_or("");
        match directive {
            "ifdef" | "ifndef" | "ifeq" | "ifneq" => conditionals.push((trimmed.to_string(), false)),
            "else" => {
                if let Some(top) = conditionals.last_mut() {
                    top.1 = true;
                }
            }
            "endif" => {
                conditionals.pop();
            }
            _ if trimmed.is_empty() => {}
            _ => {
                open = false;
                if trimmed.starts_with('#') || trimmed.starts_with('.') {
                    continue;
                }
                let Some((targets, prerequisites)) = trimmed.split_once("&:").or_else(|| trimmed.split_once(':'))
                else {
                    continue;
                };
                let targets: Vec<&str> = targets.split_whitespace().collect();
                if prerequisites.starts_with('=')
                    || targets.is_empty()
                    || !targets.iter().all(|t| t.starts_with("$(RUN)/"))
                {
                    continue;
                }
                let excluded = conditionals.iter().any(|(directive, in_else)| match directive.as_str() {
                    "ifdef RESCORE" => *in_else,
                    "ifndef RESCORE" => !*in_else,
                    _ => false,
                });
                rules.push(Rule {
                    line: number,
                    targets: targets.iter().map(|t| t.trim_start_matches("$(RUN)/").to_string()).collect(),
                    inputs: names_after(prerequisites, "$(RUN)/").into_iter().collect(),
                    binaries: names_after(prerequisites, "$(BIN)/"),
                    recipe: String::new(),
                    in_rescore: !excluded,
                });
                open = true;
            }
        }
    }
    rules
}

/// The flags (`--…`) a recipe gives `binary`, up to the end of its command.
fn flags_given(recipe: &str, binary: &str) -> Option<BTreeSet<String>> {
    let invocation = format!("$(BIN)/{binary} ");
    let mut found: Option<BTreeSet<String>> = None;
    for (at, _) in recipe.match_indices(&invocation) {
        let rest = &recipe[at + invocation.len()..];
        let command = &rest[..rest.find([';', '\n', '&']).unwrap_or(rest.len())];
        let flags: BTreeSet<String> =
            command.split_whitespace().filter(|w| w.starts_with("--")).map(str::to_string).collect();
        found.get_or_insert_with(BTreeSet::new).extend(flags);
    }
    found
}

/// Where the Makefile and the stage table disagree, one line each (none when they agree).
fn disagreements(makefile: &str) -> Vec<String> {
    let rules = rules(makefile);
    let mut problems = Vec::new();
    for stage in &STAGES {
        let mine: Vec<&Rule> = rules.iter().filter(|r| r.binaries.iter().any(|b| b == stage.binary)).collect();
        match mine.as_slice() {
            [rule] => problems.extend(check_rule(stage, rule)),
            [] => problems.push(format!("{}: no rule of the Makefile makes its outputs", stage.binary)),
            more => problems.push(format!(
                "{}: {} rules name it (lines {:?})",
                stage.binary,
                more.len(),
                more.iter().map(|r| r.line).collect::<Vec<_>>()
            )),
        }
    }
    for rule in &rules {
        if !rule.binaries.iter().any(|b| STAGES.iter().any(|s| s.binary == b)) {
            problems.push(format!("line {}: a rule for {:?} names no stage of the table", rule.line, rule.targets));
        }
    }
    let last: Vec<&str> = STAGES[STAGES.len() - 1].files().collect();
    let default_goal = makefile.lines().find_map(|l| l.strip_prefix("FILES").map(|v| v.trim_start()));
    match default_goal.and_then(|v| v.strip_prefix("?=")) {
        Some(files) if files.split_whitespace().eq(last.iter().copied()) => {}
        other => problems.push(format!("run-files: FILES defaults to {other:?}, not the last stage's {last:?}")),
    }
    problems
}

fn check_rule(stage: &Stage, rule: &Rule) -> Vec<String> {
    let at = format!("{} (Makefile line {})", stage.binary, rule.line);
    let mut problems = Vec::new();
    let files: BTreeSet<String> = stage.files().map(str::to_string).collect();
    if rule.targets != files {
        problems.push(format!("{at}: the rule makes {:?}; the table says the stage writes {files:?}", rule.targets));
    }
    let inputs: BTreeSet<String> = stage.inputs.iter().map(|s| s.to_string()).collect();
    if rule.inputs != inputs {
        problems
            .push(format!("{at}: the rule depends on {:?}; the table says the stage reads {inputs:?}", rule.inputs));
    }
    match flags_given(&rule.recipe, stage.binary) {
        None => problems.push(format!("{at}: the recipe never runs $(BIN)/{}", stage.binary)),
        Some(given) => {
            if !given.contains("--run") {
                problems.push(format!("{at}: the recipe gives no --run"));
            }
            let ours: BTreeSet<&str> = stage.flags.iter().map(|f| f.name()).collect();
            let theirs: BTreeSet<&str> =
                Flag::ALL.iter().map(|f| f.name()).filter(|name| given.contains(*name)).collect();
            if ours != theirs {
                problems.push(format!("{at}: the recipe gives {theirs:?}; the table says {ours:?}"));
            }
        }
    }
    match (stage.recorded, rule.in_rescore) {
        (true, true) => problems.push(format!("{at}: the record's rule is read by `make rescore`")),
        (false, false) => problems.push(format!("{at}: `make rescore` does not read the rule of a derived stage")),
        _ => {}
    }
    problems
}

fn makefile() -> String {
    std::fs::read_to_string(repo().join("Makefile")).unwrap()
}

#[test]
fn the_makefiles_run_rules_are_the_stage_table() {
    let makefile = makefile();
    assert_eq!(rules(&makefile).len(), STAGES.len(), "{:#?}", rules(&makefile));
    let problems = disagreements(&makefile);
    assert!(problems.is_empty(), "the Makefile and inferbench_store::stages disagree:\n{}", problems.join("\n"));
}

/// Planted into the Makefile's own text, each change is one that the table does not say, and
/// is named.
#[test]
fn a_rule_that_disagrees_with_the_table_is_named() {
    let makefile = makefile();
    let planted = |from: &str, to: &str| {
        assert!(makefile.contains(from), "the Makefile no longer holds {from:?}; plant another change");
        disagreements(&makefile.replacen(from, to, 1))
    };
    let cases = [
        // A new prerequisite.
        (
            "$(RUN)/evaluations.parquet: $(RUN)/responses.parquet $(BIN)/ib-evaluate",
            "$(RUN)/evaluations.parquet: $(RUN)/responses.parquet $(RUN)/schedule.parquet $(BIN)/ib-evaluate",
            "ib-evaluate",
            "depends on",
        ),
        // An output dropped from a grouped target.
        ("$(RUN)/pooled.parquet $(RUN)/comparisons.json &:", "$(RUN)/comparisons.json &:", "ib-aggregate", "makes"),
        // A flag the table does not give.
        (
            "$(BIN)/ib-aggregate --run $(RUN) --spec $(SPEC)",
            "$(BIN)/ib-aggregate --run $(RUN)",
            "ib-aggregate",
            "gives",
        ),
        ("--run $(RUN) --rules $(RULES)", "--run $(RUN) --rules $(RULES) --spec $(SPEC)", "ib-reconstruct", "gives"),
        // Another stage's binary.
        (
            "$(RUN)/responses.parquet $(BIN)/ib-evaluate",
            "$(RUN)/responses.parquet $(BIN)/ib-report",
            "ib-evaluate",
            "no rule",
        ),
        // A derived stage's rule where `make rescore` does not read it.
        ("endif # RESCORE\n\n$(RUN)/responses.parquet", "\n$(RUN)/responses.parquet", "ib-reconstruct", "rescore"),
    ];
    for (from, to, stage, words) in cases {
        let problems = planted(from, to);
        assert!(
            problems.iter().any(|p| p.starts_with(stage) && p.contains(words)),
            "{from:?} → {to:?} is not named ({stage}: {words}): {problems:#?}"
        );
    }
    assert!(planted("report.md report.html manifest.json\nrun-files", "report.md\nrun-files")
        .iter()
        .any(|p| p.starts_with("run-files")));
}
