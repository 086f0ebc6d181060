//! The layering rules of ARCHITECTURE.md ("Layers"), checked on the tree: which foundation
//! crate may use which, the external crates the lowest may use, that no file is compiled into
//! a binary from another folder, and that only the simulator and the synthesiser use the
//! simulator's crate. Cargo refuses a cycle between crates; this catches the sideways arrow
//! (`judge` → `inputs`), the upward one a new crate could add, a heavy dependency entering the
//! ground floor, and a stage standing on the simulator, and says which rule it breaks.
use crate::support::repo;
use std::path::{Path, PathBuf};

/// Each foundation crate and the inferbench crates its `[dependencies]` may name. A new arrow
/// is a change to this table, to the crate's Cargo.toml and to ARCHITECTURE.md, together.
const MAY_USE: &[(&str, &[&str])] = &[
    ("contract", &[]),
    ("stats", &["contract"]),
    ("judge", &["contract", "stats"]),
    ("inputs", &["contract"]),
    ("store", &["contract", "judge", "inputs"]),
    ("cli", &["contract", "judge"]),
    ("sim", &["contract", "judge", "inputs", "stats"]),
    ("testkit", &["contract", "store"]),
    ("present", &[]),
];

/// The external crates the ground floors may use: the contract is types and their shape, the
/// statistics arithmetic (its generator written out, so no upgrade changes a seed's draws), the
/// judge a pure function of a stream, the presenter text in and text out (none at all).
/// Anything heavier belongs above them.
const EXTERNAL: &[(&str, &[&str])] = &[
    ("contract", &["thiserror", "serde", "serde_json", "sha2", "schemars"]),
    ("stats", &[]),
    ("judge", &["memchr", "serde_json", "sha2", "tiktoken-rs"]),
    ("present", &[]),
];

/// The `[dependencies]` entries of a Cargo.toml, by name, with their line numbers
/// (`[dependencies.x]` tables and `x = ...` lines alike; dev- and build-dependencies are free).
fn dependencies(manifest: &str) -> Vec<(usize, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    for (number, line) in manifest.lines().enumerate() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = header.trim().to_string();
            if let Some(name) = section.strip_prefix("dependencies.") {
                found.push((number + 1, name.to_string()));
            }
            continue;
        }
        if section != "dependencies" || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            // `name = ...` or `name.workspace = true`
            let name = key.split('.').next().unwrap_or(key).trim();
            found.push((number + 1, name.to_string()));
        }
    }
    found
}

/// Every violation of the table of arrows and of the external allow-list, one line each.
fn layer_violations(crates: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, may_use) in MAY_USE {
        let path = crates.join(name).join("Cargo.toml");
        let shown = format!("crates/{name}/Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            problems.push(format!("{shown}: missing (the table of layers names `{name}`)"));
            continue;
        };
        let external = EXTERNAL.iter().find(|(n, _)| n == name).map(|(_, allowed)| *allowed);
        for (line, dependency) in dependencies(&text) {
            if let Some(used) = dependency.strip_prefix("inferbench-") {
                if !may_use.contains(&used) {
                    problems.push(format!(
                        "{shown}:{line}: {name} may not use {used} (ARCHITECTURE.md, Layers: {name} uses only {})",
                        if may_use.is_empty() { "no other inferbench crate".to_string() } else { may_use.join(", ") }
                    ));
                }
            } else if let Some(allowed) = external {
                if !allowed.contains(&dependency.as_str()) {
                    problems.push(format!(
                        "{shown}:{line}: {name} may not depend on `{dependency}` (ARCHITECTURE.md, Layers: it uses only {})",
                        allowed.join(", ")
                    ));
                }
            }
        }
    }
    for (name, allowed) in EXTERNAL {
        let text = std::fs::read_to_string(crates.join(name).join("Cargo.toml")).unwrap_or_default();
        let used: Vec<String> = dependencies(&text).into_iter().map(|(_, d)| d).collect();
        for stale in allowed.iter().filter(|a| !used.iter().any(|u| u == *a)) {
            problems.push(format!("tests/e2e/tidy.rs: EXTERNAL allows {name} `{stale}`, which it no longer uses"));
        }
    }
    let mut members: Vec<String> = std::fs::read_dir(crates)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    members.sort();
    for member in members.iter().filter(|m| !MAY_USE.iter().any(|(n, _)| n == m)) {
        problems.push(format!(
            "crates/{member}: a foundation crate the table of layers (tests/e2e/tidy.rs) does not place"
        ));
    }
    problems
}

/// Every `#[path = "…"]` that reaches outside its own file's folder (a `..` in it), anywhere in
/// the project's Rust sources.
fn paths_across_folders(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | ".git" | "node_modules" | "runs") {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (number, line) in text.lines().enumerate() {
                    let line = line.trim();
                    if line.starts_with("#[path") && line.contains("..") {
                        let shown = path.strip_prefix(root).unwrap_or(&path).display().to_string();
                        found.push(format!("{shown}:{}: {line}", number + 1));
                    }
                }
            }
        }
    }
    found.sort();
    found
}

/// The folders whose code may name the simulator's crate (`inferbench_sim`): the simulator and
/// the synthesiser of its logs. Every stage and every other tool stands on the layers below it
/// (the generator and the bootstrap are `inferbench_stats`'s, the exact-length text
/// `inferbench_judge::synthetic`). All binaries but ib-compare share the root package, so no
/// Cargo.toml can say this; it is checked on their sources.
const SIM_USERS: &[&str] = &["tools/sim", "tools/synth"];

/// Whether `line` names the crate `name` (`inferbench_sim`, or `inferbench-sim` in a Cargo.toml)
/// as a whole word, not as the start of a longer name.
fn names_crate(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        !line[at + name.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    })
}

/// Every line of the binaries' sources (`stages/` and `tools/`, Rust files and Cargo.toml) that
/// names the simulator's crate outside [`SIM_USERS`].
fn simulator_uses(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending: Vec<PathBuf> = ["stages", "tools"].iter().map(|d| root.join(d)).collect();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let shown = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            if path.is_dir() {
                if !matches!(name.as_str(), "target" | ".git" | "node_modules") && !SIM_USERS.contains(&shown.as_str())
                {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") || name == "Cargo.toml" {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (number, line) in text.lines().enumerate() {
                    if names_crate(line, "inferbench_sim") || names_crate(line, "inferbench-sim") {
                        found.push(format!("{shown}:{}: {}", number + 1, line.trim()));
                    }
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_foundation_crates_use_only_the_layers_below_them() {
    let problems = layer_violations(&repo().join("crates"));
    assert!(problems.is_empty(), "the layers' arrows point up or sideways:\n{}", problems.join("\n"));
}

#[test]
fn no_file_is_compiled_into_another_folder() {
    let found = paths_across_folders(&repo());
    assert!(
        found.is_empty(),
        "code shared between folders belongs in a crate they depend on (ARCHITECTURE.md), not in #[path]:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_stage_or_tool_but_the_simulator_and_the_synthesiser_uses_the_simulators_crate() {
    let found = simulator_uses(&repo());
    assert!(
        found.is_empty(),
        "only {} may use inferbench_sim: the seeded generator and the bootstrap are inferbench_stats's, the \
         exact-length text inferbench_judge::synthetic (ARCHITECTURE.md):\n{}",
        SIM_USERS.join(" and "),
        found.join("\n")
    );
}

#[test]
fn the_checks_see_an_arrow_up_a_stray_dependency_and_a_path_across_folders() {
    let dir = tempfile::tempdir().unwrap();
    let crates = dir.path().join("crates");
    for (name, _) in MAY_USE {
        std::fs::create_dir_all(crates.join(name)).unwrap();
        std::fs::write(crates.join(name).join("Cargo.toml"), "[package]\nname = \"x\"\n\n[dependencies]\n").unwrap();
    }
    let allowed = EXTERNAL
        .iter()
        .map(|(n, deps)| (n, deps.iter().map(|d| format!("{d}.workspace = true\n")).collect::<String>()));
    for (name, lines) in allowed {
        std::fs::write(crates.join(name).join("Cargo.toml"), format!("[dependencies]\n{lines}")).unwrap();
    }
    assert_eq!(layer_violations(&crates), Vec::<String>::new());
    let judge = crates.join("judge/Cargo.toml");
    let text = std::fs::read_to_string(&judge).unwrap();
    std::fs::write(
        &judge,
        format!(
            "{text}inferbench-store = {{ path = \"../store\" }}\n\n[dev-dependencies]\ninferbench-inputs = \"1\"\n"
        ),
    )
    .unwrap();
    let contract = crates.join("contract/Cargo.toml");
    let text = std::fs::read_to_string(&contract).unwrap();
    std::fs::write(&contract, format!("{text}[dependencies.parquet]\nversion = \"60\"\n")).unwrap();
    let problems = layer_violations(&crates);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].contains("contract may not depend on `parquet`"), "{}", problems[0]);
    assert!(
        problems[1].contains("judge may not use store (ARCHITECTURE.md, Layers: judge uses only contract, stats)"),
        "{}",
        problems[1]
    );
    std::fs::create_dir_all(dir.path().join("bins/a")).unwrap();
    std::fs::write(
        dir.path().join("bins/a/main.rs"),
        "#[path = \"own.rs\"]\nmod own;\n#[path = \"../b/x.rs\"]\nmod x;\n",
    )
    .unwrap();
    assert_eq!(paths_across_folders(dir.path()), ["bins/a/main.rs:3: #[path = \"../b/x.rs\"]"]);
}

#[test]
fn the_simulator_check_sees_a_stage_or_a_tool_naming_its_crate() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("stages/6-aggregate/separation.rs", "use inferbench_stats::interval;\nuse inferbench_sim::bootstrap;\n"),
        ("stages/2-schedule/workload.rs", "fn f() {\n    let t = inferbench_sim::synthetic::text(3, &mut rng);\n}\n"),
        ("tools/compare/Cargo.toml", "[dependencies]\ninferbench-sim = { path = \"../../crates/sim\" }\n"),
        ("tools/simulator/main.rs", "use inferbench_sim::answer;\n"),
        ("tools/data/names.rs", "use inferbench_stats::rng::SplitMix64;\nuse inferbench_simple::x;\n"),
        ("tools/sim/server.rs", "use inferbench_sim::answer;\n"),
        ("tools/synth/rounds.rs", "use inferbench_sim::dataset as sim;\n"),
        ("tools/synth/Cargo.toml", "[dependencies]\ninferbench-sim = { path = \"../../crates/sim\" }\n"),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    assert_eq!(
        simulator_uses(dir.path()),
        [
            "stages/2-schedule/workload.rs:2: let t = inferbench_sim::synthetic::text(3, &mut rng);",
            "stages/6-aggregate/separation.rs:2: use inferbench_sim::bootstrap;",
            "tools/compare/Cargo.toml:2: inferbench-sim = { path = \"../../crates/sim\" }",
            "tools/simulator/main.rs:1: use inferbench_sim::answer;",
        ]
    );
}

/// The Rust sources under `root`'s `dirs`, by path relative to `root`, in order.
fn rust_sources(root: &Path, dirs: &[&str]) -> Vec<(String, String)> {
    let mut pending: Vec<_> = dirs.iter().map(|d| root.join(d)).collect();
    let mut found = Vec::new();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            if path.is_dir() && !matches!(entry.file_name().to_str(), Some("target" | ".git" | "fixtures")) {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let shown = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                found.push((shown, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    found.sort();
    found
}

/// The top-level items of a file whose attributes include `#[cfg(test)]` and that are modules:
/// `(line index of the item, its name, whether its body is inline)`.
fn test_modules(lines: &[&str]) -> Vec<(usize, String, bool)> {
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let item = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
        let Some(rest) = item.strip_prefix("mod ") else { continue };
        let attributes = lines[..i].iter().rev().take_while(|l| l.starts_with("#[") || l.starts_with("//"));
        if attributes.into_iter().any(|l| l.trim_end() == "#[cfg(test)]") {
            let name = rest.trim_end_matches([' ', '{', ';']).to_string();
            found.push((i, name, rest.ends_with('{')));
        }
    }
    found
}

/// Every top-level item that follows a file's unit tests (`#[cfg(test)] mod tests`), other than
/// a further test module: a file's tests end it.
fn items_after_tests(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in rust_sources(root, &["crates", "stages", "tools"]) {
        let lines: Vec<&str> = text.lines().collect();
        let modules = test_modules(&lines);
        let Some(&(start, ..)) = modules.iter().find(|(_, name, _)| name == "tests") else { continue };
        let mut i = start;
        while i < lines.len() {
            match modules.iter().find(|(at, ..)| *at == i) {
                Some((_, _, true)) => i += lines[i..].iter().position(|l| *l == "}").unwrap_or(lines.len()),
                Some(_) => {}
                None => {
                    let line = lines[i];
                    let ignorable = line.is_empty() || line.starts_with([' ', '}', '#']) || line.starts_with("//");
                    if !ignorable {
                        found.push(format!("{path}:{}: `{line}` follows the tests", i + 1));
                    }
                }
            }
            i += 1;
        }
    }
    found
}

/// `text` with its comments and the contents of its string and character literals blanked,
/// so that a brace in one is not taken for code.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, span: &[char]| out.extend(span.iter().map(|c| if *c == '\n' { '\n' } else { ' ' }));
    while i < chars.len() {
        let after_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
        let raw = chars[i] == 'r' && !after_word && chars.get(i + 1 + hashes) == Some(&'"');
        let end = match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len())
            }
            'r' if raw => {
                let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                let from = i + 2 + hashes;
                let rest: String = chars[from.min(chars.len())..].iter().collect();
                rest.find(&close).map_or(chars.len(), |k| from + rest[..k].chars().count() + close.len())
            }
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
                j + 1
            }
            '\'' if chars.get(i + 1) == Some(&'\\') => {
                (i + 3..chars.len()).find(|&j| chars[j] == '\'').map_or(i + 1, |j| j + 1)
            }
            '\'' if chars.get(i + 2) == Some(&'\'') => i + 3,
            _ => i,
        };
        if end > i {
            blank(&mut out, &chars[i..end.min(chars.len())]);
            i = end;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The contract's events and table rows, by name, read from its sources.
fn contract_values(root: &Path) -> Vec<String> {
    let read = |file: &str| std::fs::read_to_string(root.join("crates/contract/src").join(file)).unwrap_or_default();
    let (events, tables) = (read("event.rs"), read("tables.rs"));
    let names = |text: &str, prefix: &str| -> Vec<String> {
        let names = text.lines().filter_map(|l| l.strip_prefix(prefix)).filter_map(|l| l.split([' ', '<']).next());
        names.map(str::to_string).collect()
    };
    let mut values = names(&events, "pub struct ");
    values.extend(names(&tables, "impl Table for "));
    values
}

/// Every event or table row of the contract that a test or a benchmark spells whole (a struct
/// expression without `..`): tests build them with `inferbench_contract::testutil`, and say only
/// the fields that matter to them.
fn whole_values_in_tests(root: &Path) -> Vec<String> {
    let names = contract_values(root);
    let sources = rust_sources(root, &["crates", "stages", "tools", "benches", "tests"]);
    // Files that are tests whole: `tests.rs`, under a `tests/` or `benches/` folder, or declared
    // `#[cfg(test)] mod name;` (a test-only module such as a fixture).
    let mut test_files: Vec<String> = Vec::new();
    for (path, text) in &sources {
        let lines: Vec<&str> = text.lines().collect();
        let folder = match path.rsplit_once('/') {
            Some((dir, "main.rs" | "lib.rs" | "mod.rs")) => dir.to_string(),
            _ => path.trim_end_matches(".rs").to_string(),
        };
        for (_, name, inline) in test_modules(&lines) {
            if !inline {
                test_files.extend([format!("{folder}/{name}.rs"), format!("{folder}/{name}/mod.rs")]);
            }
        }
    }
    let mut found = Vec::new();
    for (path, text) in &sources {
        let code = code_only(text);
        let lines: Vec<&str> = code.lines().collect();
        let whole = path.ends_with("/tests.rs")
            || path.split('/').any(|part| matches!(part, "tests" | "benches"))
            || test_files.contains(path);
        let regions: Vec<(usize, usize)> = match whole {
            true => vec![(0, lines.len())],
            false => test_modules(&lines)
                .into_iter()
                .filter(|(.., inline)| *inline)
                .map(|(at, ..)| (at, at + lines[at..].iter().position(|l| *l == "}").unwrap_or(lines.len() - at)))
                .collect(),
        };
        for (from, to) in regions {
            let region = lines[from..to].join("\n");
            for name in &names {
                let pattern = format!("{name} {{");
                for (at, _) in region.match_indices(&pattern) {
                    let before = region[..at].trim_end_matches([' ', '&']);
                    let word = before.rsplit([' ', '\n', '(', '[', ',']).next().unwrap_or("");
                    let prefix_ok = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
                    let a_type = before.ends_with("->") || matches!(word, "impl" | "for" | "struct" | "enum");
                    if !prefix_ok && !before.ends_with("::") || a_type {
                        continue;
                    }
                    let body = &region[at + pattern.len()..];
                    let (mut depth, mut spread) = (0i32, false);
                    for (k, c) in body.char_indices() {
                        match c {
                            '{' | '(' | '[' => depth += 1,
                            '}' | ')' | ']' if depth == 0 => break,
                            '}' | ')' | ']' => depth -= 1,
                            '.' if depth == 0 && body[k..].starts_with("..") => spread = true,
                            _ => {}
                        }
                    }
                    if !spread {
                        let line = from + region[..at].matches('\n').count() + 1;
                        found.push(format!("{path}:{line}: `{name} {{ .. }}` spelled whole"));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn a_files_unit_tests_end_it() {
    let found = items_after_tests(&repo());
    assert!(
        found.is_empty(),
        "unit tests sit at the bottom of their file (ARCHITECTURE.md, Tests):\n{}",
        found.join("\n")
    );
}

#[test]
fn tests_build_the_contracts_events_and_rows_with_its_builders() {
    let found = whole_values_in_tests(&repo());
    assert!(
        found.is_empty(),
        "tests build events and rows with inferbench_contract::testutil (ARCHITECTURE.md, Tests):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_test_checks_see_an_item_after_the_tests_and_a_value_spelled_whole() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("crates/contract/src/event.rs", "pub struct RequestStarted {\n    pub attempt: u32,\n}\n");
    write("crates/contract/src/tables.rs", "impl Table for ScheduleRow {\n}\n");
    write(
        "stages/s/main.rs",
        "mod a;\n#[cfg(test)]\nmod fixture;\nfn started() -> RequestStarted {\n    RequestStarted { attempt: 1 }\n}\n",
    );
    write(
        "stages/s/a.rs",
        "fn f() {}\n\n#[cfg(test)]\nmod tests {\n    fn g() -> &RequestStarted {\n        let (s, r#type) = (\"}\", '\\'');\n        \
         let a = RequestStarted { attempt: 2, ..started() };\n        \
         let b = Event::Started(inferbench_contract::event::RequestStarted { attempt: '}' as u32 });\n    }\n}\n\n\
         /// Property tests.\n#[cfg(test)]\nmod props {\n}\n",
    );
    write("stages/s/fixture.rs", "pub fn row() -> ScheduleRow {\n    ScheduleRow { round_index: 0 }\n}\n");
    assert_eq!(items_after_tests(dir.path()), Vec::<String>::new());
    assert_eq!(
        whole_values_in_tests(dir.path()),
        [
            "stages/s/a.rs:8: `RequestStarted { .. }` spelled whole",
            "stages/s/fixture.rs:2: `ScheduleRow { .. }` spelled whole",
        ]
    );
    write("stages/s/a.rs", "#[cfg(test)]\nmod tests;\n\nfn f() {}\n");
    assert_eq!(items_after_tests(dir.path()), ["stages/s/a.rs:4: `fn f() {}` follows the tests"]);
}
