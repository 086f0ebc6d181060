//! The layering rules of ARCHITECTURE.md ("Layers"), checked on the tree: which foundation
//! crate may use which, the external crates the two lowest may use, and that no file is
//! compiled into a binary from another folder. Cargo refuses a cycle between crates; this
//! catches the sideways arrow (`judge` → `inputs`), the upward one a new crate could add, and
//! a heavy dependency entering the ground floor, and says which rule it breaks.
use crate::support::repo;
use std::path::Path;

/// Each foundation crate and the inferbench crates its `[dependencies]` may name. A new arrow
/// is a change to this table, to the crate's Cargo.toml and to ARCHITECTURE.md, together.
const MAY_USE: &[(&str, &[&str])] = &[
    ("contract", &[]),
    ("judge", &["contract"]),
    ("inputs", &["contract"]),
    ("store", &["contract", "judge", "inputs"]),
    ("cli", &["contract", "judge"]),
    ("sim", &["contract", "judge", "inputs"]),
    ("testkit", &["contract", "store"]),
    ("present", &[]),
];

/// The external crates the ground floors may use: the contract is types and their shape, the
/// judge a pure function of a stream, the presenter text in and text out (none at all).
/// Anything heavier belongs above them.
const EXTERNAL: &[(&str, &[&str])] = &[
    ("contract", &["thiserror", "serde", "serde_json", "sha2", "schemars"]),
    ("judge", &["serde_json", "sha2", "tiktoken-rs"]),
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
        problems[1].contains("judge may not use store (ARCHITECTURE.md, Layers: judge uses only contract)"),
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
