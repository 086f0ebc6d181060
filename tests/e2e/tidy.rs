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
];

/// The external crates the ground floors may use: the contract is types and their shape, the
/// statistics arithmetic (its generator written out, so no upgrade changes a seed's draws), the
/// judge a pure function of a stream. Anything heavier belongs above them.
const EXTERNAL: &[(&str, &[&str])] = &[
    ("contract", &["thiserror", "serde", "serde_json", "sha2", "schemars"]),
    ("stats", &[]),
    ("judge", &["serde_json", "sha2", "tiktoken-rs"]),
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
