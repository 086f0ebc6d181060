//! The documentation checked against the code, so that it cannot drift: every binary's
//! `--help` is its page of the command-line reference (running a debug binary's `--help` also
//! runs clap's debug assertions on its whole definition), the make targets are the Makefile
//! header's, the tables of stages, tools and crates name what the workspace holds, every
//! relative link resolves, and every command of the guide names flags and targets that exist.
//! `IB_BLESS=1 cargo test --test e2e docs` rewrites the generated parts (the pages of
//! `docs/reference/cli/` and the list in `docs/reference/make.md`); review the diff.
use crate::support::{bin, repo};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const REGENERATE: &str = "regenerate with `IB_BLESS=1 cargo test --test e2e docs` and review the diff";

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn blessing() -> bool {
    std::env::var_os("IB_BLESS").is_some()
}

/// Writes `want` to `rel` when blessing; otherwise a line saying how it differs, if it does.
fn compare_or_bless(rel: &str, want: &str) -> Option<String> {
    let path = repo().join(rel);
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return None;
    }
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, want).unwrap();
        return None;
    }
    let differs = have.lines().zip(want.lines()).position(|(a, b)| a != b);
    Some(match differs {
        _ if have.is_empty() => format!("{rel}: missing"),
        Some(i) => format!(
            "{rel}:{}: differs\n    page:   {}\n    binary: {}",
            i + 1,
            have.lines().nth(i).unwrap_or(""),
            want.lines().nth(i).unwrap_or("")
        ),
        None => format!("{rel}: {} lines, generated {}", have.lines().count(), want.lines().count()),
    })
}

// ---------------------------------------------------------------------------------------------
// The workspace as Cargo.toml and crates/ describe it.

/// A binary of the workspace: its name, the folder its code is in, and its package.
#[derive(Debug, Clone)]
struct Binary {
    name: String,
    folder: String,
    package: String,
}

/// `[[bin]]` tables of a manifest: (name, path), in order.
fn bin_tables(manifest: &str) -> Vec<(String, String)> {
    let mut bins = Vec::new();
    let mut current: Option<(Option<String>, Option<String>)> = None;
    let value = |line: &str| line.split_once('=').map(|(_, v)| v.trim().trim_matches('"').to_string());
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            if let Some((Some(name), Some(path))) = current.take() {
                bins.push((name, path));
            }
            if line == "[[bin]]" {
                current = Some((None, None));
            }
        } else if let Some((name, path)) = current.as_mut() {
            if line.starts_with("name") {
                *name = value(line);
            } else if line.starts_with("path") {
                *path = value(line);
            }
        }
    }
    if let Some((Some(name), Some(path))) = current {
        bins.push((name, path));
    }
    bins
}

fn package_name(manifest: &str) -> String {
    manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("name = ").map(|v| v.trim_matches('"').to_string()))
        .unwrap_or_default()
}

/// Every binary: the root package's `[[bin]]`s (the stages and most tools), then those of the
/// packages under `tools/` (ib-compare), whose folder is the package's.
fn binaries() -> Vec<Binary> {
    let root = read("Cargo.toml");
    let mut all: Vec<Binary> = bin_tables(&root)
        .into_iter()
        .map(|(name, path)| {
            let folder = Path::new(&path).parent().unwrap().to_string_lossy().into_owned();
            Binary { name, folder, package: package_name(&root) }
        })
        .collect();
    let mut packages: Vec<PathBuf> = std::fs::read_dir(repo().join("tools"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    packages.sort();
    for dir in packages {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let folder = dir.strip_prefix(repo()).unwrap().to_string_lossy().into_owned();
        for (name, _) in bin_tables(&manifest) {
            all.push(Binary { name, folder: folder.clone(), package: package_name(&manifest) });
        }
    }
    assert!(all.len() > 10, "found only {all:?} in Cargo.toml");
    all
}

/// The `[dependencies]` on other inferbench crates of a manifest, by crate folder name.
fn inferbench_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut section = String::new();
    let mut found = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = header.to_string();
            if let Some(name) = section.strip_prefix("dependencies.inferbench-") {
                found.insert(name.to_string());
            }
            continue;
        }
        if section != "dependencies" || line.starts_with('#') {
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            if let Some(name) = key.split('.').next().unwrap().trim().strip_prefix("inferbench-") {
                found.insert(name.to_string());
            }
        }
    }
    found
}

/// Every crate under `crates/`, with the crates it uses and its layer: 1 for a crate that uses
/// none, else one above the highest layer among those it uses.
fn crates() -> BTreeMap<String, (usize, BTreeSet<String>)> {
    let mut uses = BTreeMap::new();
    for entry in std::fs::read_dir(repo().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) {
            uses.insert(dir.file_name().unwrap().to_string_lossy().into_owned(), inferbench_dependencies(&manifest));
        }
    }
    fn layer(name: &str, uses: &BTreeMap<String, BTreeSet<String>>, depth: usize) -> usize {
        assert!(depth < 64, "a cycle through crates/{name}");
        uses.get(name).map_or(0, |deps| deps.iter().map(|d| layer(d, uses, depth + 1)).max().unwrap_or(0)) + 1
    }
    uses.iter().map(|(name, deps)| (name.clone(), (layer(name, &uses, 0), deps.clone()))).collect()
}

// ---------------------------------------------------------------------------------------------
// Markdown, as far as these checks read it.

/// Lines outside fenced code blocks (the others blank, so that line numbers hold), and the
/// fenced blocks with their info string.
fn split_markdown(text: &str) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut prose = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => open = Some((line.trim_start().trim_start_matches('`').trim().to_string(), Vec::new())),
            (Some(_), true) => blocks.push(open.take().unwrap()),
            (Some((_, lines)), false) => lines.push(line.to_string()),
            (None, false) => {
                prose.push(line.to_string());
                continue;
            }
        }
        prose.push(String::new());
    }
    (prose, blocks)
}

/// `text` without its code spans, and the spans' contents.
fn code_spans(text: &str) -> (String, Vec<String>) {
    let mut rest = String::new();
    let mut spans = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '`' {
            rest.push(c);
            continue;
        }
        let mut ticks = 1;
        while chars.next_if(|&(_, c)| c == '`').is_some() {
            ticks += 1;
        }
        let start = i + ticks;
        let fence = "`".repeat(ticks);
        match text[start..].find(&fence) {
            Some(len) => {
                spans.push(text[start..start + len].trim().to_string());
                while chars.peek().is_some_and(|&(j, _)| j < start + len + ticks) {
                    chars.next();
                }
            }
            None => rest.push_str(&fence),
        }
    }
    (rest, spans)
}

/// The link targets of a markdown text outside code: `[text](target)`, and the line of each.
fn links(text: &str) -> Vec<(usize, String)> {
    let (prose, _) = split_markdown(text);
    let mut found = Vec::new();
    for (number, line) in prose.iter().enumerate() {
        let (line, _) = code_spans(line);
        let mut from = 0;
        while let Some(at) = line[from..].find("](") {
            let start = from + at + 2;
            let end = line[start..].find([')', ' ']).map_or(line.len(), |e| start + e);
            found.push((number + 1, line[start..end].trim_matches(['<', '>']).to_string()));
            from = end;
        }
    }
    found
}

/// A heading's anchor as GitHub makes it: lower case, every character but letters, digits,
/// `-` and `_` dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    let chars: Vec<char> = heading.chars().filter(|&c| c != '`').collect();
    let mut out = String::new();
    let mut in_target = false;
    for (i, c) in chars.iter().enumerate() {
        // A link's target is no part of the anchor: `[text](target)` reads as `text`.
        if *c == '(' && i > 0 && chars[i - 1] == ']' {
            in_target = true;
        }
        if in_target {
            in_target = *c != ')';
            continue;
        }
        if c.is_alphanumeric() || *c == '-' || *c == '_' {
            out.extend(c.to_lowercase());
        } else if *c == ' ' {
            out.push('-');
        }
    }
    out
}

/// Every anchor of a markdown file, duplicates numbered as GitHub numbers them.
fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = split_markdown(text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = BTreeSet::new();
    for line in prose {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim());
        let count = seen.entry(base.clone()).or_insert(0);
        all.insert(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
        *count += 1;
    }
    all
}

/// The markdown files the checks read: the root's, `runs/` and `data/`'s, the book, and the
/// benchmark results.
fn documents() -> Vec<String> {
    let mut all: Vec<String> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", "runs/README.md", "data/README.md"]
        .into_iter()
        .filter(|rel| repo().join(rel).is_file())
        .map(String::from)
        .collect();
    for dir in ["docs", "benches/results"] {
        let mut stack = vec![repo().join(dir)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.is_dir() && path.file_name().is_some_and(|n| n != "book") {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "md") {
                    all.push(path.strip_prefix(repo()).unwrap().to_string_lossy().into_owned());
                }
            }
        }
    }
    all.sort();
    all
}

// ---------------------------------------------------------------------------------------------
// The command-line reference.

fn binary_path(binary: &Binary) -> PathBuf {
    let path = bin("ib-select").with_file_name(format!("{}{}", binary.name, std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is missing: build it with `cargo build -p {}` (`make test` builds every binary before the tests)",
        path.display(),
        binary.package
    );
    path
}

/// `binary [subcommand] --help`, with no environment (clap shows an `IB_RUN` that is set), each
/// line without its trailing spaces. A clap definition that breaks one of clap's rules panics
/// here, in a debug build, before printing anything.
fn help(binary: &Binary, subcommand: Option<&str>) -> String {
    let out = Command::new(binary_path(binary))
        .args(subcommand)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.name));
    assert!(
        out.status.success(),
        "`{} {}--help` failed ({:?}):\n{}{}",
        binary.name,
        subcommand.map(|s| format!("{s} ")).unwrap_or_default(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// The subcommands a help text lists under `Commands:`, but `help`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|name| name != "help")
        .collect()
}

/// Each binary's page, generated from its help and each subcommand's.
fn pages() -> &'static Vec<(Binary, String, BTreeSet<String>)> {
    static PAGES: OnceLock<Vec<(Binary, String, BTreeSet<String>)>> = OnceLock::new();
    PAGES.get_or_init(|| {
        binaries()
            .into_iter()
            .map(|binary| {
                let name = &binary.name;
                let top = help(&binary, None);
                let mut page = format!(
                    "# `{name}`\n\n<!-- Generated from `{name} --help` by `IB_BLESS=1 cargo test --test e2e docs`: \
                     edit the binary's doc comments, not this page. -->\n\n```text\n{top}\n```\n"
                );
                let mut flags = flags_of(&top);
                for sub in subcommands(&top) {
                    let text = help(&binary, Some(&sub));
                    page.push_str(&format!("\n## `{name} {sub}`\n\n```text\n{text}\n```\n"));
                    flags.extend(flags_of(&text));
                }
                (binary, page, flags)
            })
            .collect()
    })
}

/// Every `--flag` a help text names.
fn flags_of(help: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for (i, _) in help.match_indices("--") {
        let name: String =
            help[i + 2..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-').collect();
        if !name.is_empty() {
            flags.insert(format!("--{name}"));
        }
    }
    flags
}

#[test]
fn every_binary_s_help_is_its_page() {
    let mut problems: Vec<String> = pages()
        .iter()
        .filter_map(|(binary, page, _)| compare_or_bless(&format!("docs/reference/cli/{}.md", binary.name), page))
        .collect();
    let names: BTreeSet<String> = pages().iter().map(|(b, _, _)| format!("{}.md", b.name)).collect();
    for entry in std::fs::read_dir(repo().join("docs/reference/cli")).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if file.starts_with("ib-") && !names.contains(&file) {
            problems
                .push(format!("docs/reference/cli/{file}: no binary of the workspace is named so; delete the page"));
        }
    }
    assert!(
        problems.is_empty(),
        "the command-line reference differs from the binaries:\n{}\n{REGENERATE}",
        problems.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The make targets.

const MAKE_BEGIN: &str = "<!-- make help:";
const MAKE_END: &str = "<!-- end of make help -->";

/// `make help`: the Makefile's header.
fn make_help() -> String {
    let out = Command::new("make")
        .args(["-s", "--no-print-directory", "-f"])
        .arg(repo().join("Makefile"))
        .arg("help")
        .current_dir(repo())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .expect("GNU make is installed");
    assert!(out.status.success(), "make help failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A command line's words, as a shell splits them: quotes keep spaces, and go.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The target a `make …` line names: the first word after `make` that is no setting, or `all`.
fn make_target(line: &str) -> Option<String> {
    let words = shell_words(line);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    (words.first() == Some(&"make")).then(|| target_of(&words[1..]))
}

/// The target of make's arguments: the first that is no setting or option, else `all`.
fn target_of(arguments: &[&str]) -> String {
    let target = arguments.iter().find(|w| !w.contains('=') && !w.starts_with('-') && !w.starts_with('['));
    target.map_or("all", |t| t).to_string()
}

/// The targets the Makefile declares phony: every command it offers.
fn phony_targets() -> BTreeSet<String> {
    read("Makefile")
        .lines()
        .filter_map(|l| l.strip_prefix(".PHONY:"))
        .flat_map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>())
        .collect()
}

#[test]
fn make_targets_are_the_makefile_header_s() {
    let help = make_help();
    let rel = "docs/reference/make.md";
    let page = read(rel);
    let (Some(begin), Some(end)) = (page.find(MAKE_BEGIN), page.find(MAKE_END)) else {
        panic!("{rel}: no `{MAKE_BEGIN} …` … `{MAKE_END}` block");
    };
    let open = begin + page[begin..].find('\n').unwrap() + 1;
    let want = format!("{}```text\n{help}```\n{}", &page[..open], &page[end..]);
    let mut problems: Vec<String> = compare_or_bless(rel, &want).into_iter().collect();

    // A header line is the command, then two spaces or more, then what it does.
    let header: BTreeSet<String> =
        help.lines().filter_map(|l| make_target(l.trim().split("  ").next().unwrap())).collect();
    let documented: BTreeSet<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix("### `").and_then(|l| l.strip_suffix('`')))
        .filter_map(make_target)
        .collect();
    let phony = phony_targets();
    for (what, set) in [("the Makefile's header (make help)", &header), (rel, &documented)] {
        for missing in phony.difference(set) {
            problems.push(format!("{what} does not list `make {missing}`, a target of the Makefile's .PHONY"));
        }
        for extra in set.difference(&phony) {
            problems.push(format!("{what} lists `make {extra}`, which the Makefile's .PHONY does not declare"));
        }
    }
    assert!(
        problems.is_empty(),
        "the make targets are not listed as the Makefile has them:\n{}\n{REGENERATE}",
        problems.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The tables of stages, tools and crates.

/// The cells of every table row of a markdown text, trimmed.
fn table_rows(text: &str) -> Vec<Vec<String>> {
    split_markdown(text)
        .0
        .iter()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .map(|l| l.trim().trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

/// The names in a cell's code spans, without a trailing `/`.
fn spans_of(cell: &str) -> Vec<String> {
    code_spans(cell).1.into_iter().map(|s| s.trim_end_matches('/').to_string()).collect()
}

/// Every binary has a row naming it and its folder, in some table of `rel`, and every row that
/// names a binary names one that exists.
fn binaries_tabled(rel: &str, problems: &mut Vec<String>) {
    let rows = table_rows(&read(rel));
    let all = binaries();
    for binary in &all {
        let named: Vec<&Vec<String>> =
            rows.iter().filter(|r| r.iter().any(|c| spans_of(c).contains(&binary.name))).collect();
        if named.is_empty() {
            problems.push(format!("{rel}: no table row names `{}` ({}/)", binary.name, binary.folder));
        } else if !named.iter().any(|r| r.iter().any(|c| spans_of(c).contains(&binary.folder))) {
            problems.push(format!("{rel}: the row of `{}` does not name its folder `{}/`", binary.name, binary.folder));
        }
    }
    for row in &rows {
        for cell in row.iter().take(2) {
            for name in spans_of(cell).into_iter().filter(|s| s.starts_with("ib-") && !s.contains(' ')) {
                if !all.iter().any(|b| b.name == name) {
                    problems.push(format!("{rel}: a row names `{name}`, which is no binary of the workspace"));
                }
            }
        }
    }
}

#[test]
fn stage_and_crate_tables_match_the_workspace() {
    let mut problems = Vec::new();
    binaries_tabled("docs/reference/pipeline.md", &mut problems);
    binaries_tabled("ARCHITECTURE.md", &mut problems);

    // ARCHITECTURE.md's Layers: one row per crate, its layer and what it uses.
    let architecture = read("ARCHITECTURE.md");
    let layers = architecture.split("\n## Layers\n").nth(1).map(|s| s.split("\n## ").next().unwrap());
    let Some(layers) = layers else {
        panic!("ARCHITECTURE.md has no `## Layers` section (tests/e2e/tidy.rs cites it)")
    };
    let actual = crates();
    let mut listed = BTreeSet::new();
    for row in table_rows(layers).iter().skip(1) {
        let [layer, name, uses, ..] = &row[..] else { continue };
        let Some(name) = spans_of(name).first().map(|n| n.trim_start_matches("crates/").to_string()) else { continue };
        listed.insert(name.clone());
        let Some((want_layer, want_uses)) = actual.get(&name) else {
            problems.push(format!("ARCHITECTURE.md, Layers: `{name}` is no crate of crates/"));
            continue;
        };
        if layer.parse::<usize>().ok() != Some(*want_layer) {
            problems.push(format!(
                "ARCHITECTURE.md, Layers: `{name}` is on layer {want_layer} (one above the highest crate it uses), not {layer}"
            ));
        }
        let uses: BTreeSet<String> = spans_of(uses).into_iter().collect();
        if &uses != want_uses {
            problems.push(format!(
                "ARCHITECTURE.md, Layers: `{name}` uses {want_uses:?} by its Cargo.toml's [dependencies], not {uses:?}"
            ));
        }
    }
    for name in actual.keys().filter(|n| !listed.contains(*n)) {
        problems.push(format!("ARCHITECTURE.md, Layers: crates/{name} has no row"));
    }

    // The README counts them in words.
    let readme = read("README.md");
    let words =
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    match readme.split("foundation of ").nth(1).and_then(|s| s.split_whitespace().next()) {
        Some(word) if words.iter().position(|w| *w == word) == Some(actual.len()) => {}
        found => problems.push(format!(
            "README.md: \"a foundation of {} crates\": crates/ holds {}",
            found.unwrap_or("?"),
            words.get(actual.len()).unwrap_or(&"many")
        )),
    }
    assert!(problems.is_empty(), "the documentation's tables differ from the workspace:\n{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Links, the book's contents, and the paths the prose names.

#[test]
fn every_relative_link_resolves() {
    let mut problems = Vec::new();
    let mut anchor_cache: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    for rel in documents() {
        let text = read(&rel);
        let dir = repo().join(&rel).parent().unwrap().to_path_buf();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() { repo().join(&rel) } else { dir.join(path) };
            if !file.exists() {
                problems.push(format!("{rel}:{line}: ({target}): {} does not exist", file.display()));
                continue;
            }
            if anchor.is_empty() || file.is_dir() {
                continue;
            }
            let known = anchor_cache
                .entry(file.clone())
                .or_insert_with(|| anchors(&std::fs::read_to_string(&file).unwrap_or_default()));
            if !known.contains(anchor) {
                problems.push(format!("{rel}:{line}: ({target}): no heading has the anchor #{anchor}"));
            }
        }
    }
    // Every page of the book is in its contents.
    let summary = read("docs/SUMMARY.md");
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, t)| format!("docs/{t}")).collect();
    for page in documents().into_iter().filter(|d| d.starts_with("docs/") && d != "docs/SUMMARY.md") {
        if !listed.contains(&page) {
            problems.push(format!("{page}: not in docs/SUMMARY.md"));
        }
    }
    assert!(problems.is_empty(), "broken links in the documentation:\n{}", problems.join("\n"));
}

/// The top-level folders whose paths the prose names in code spans.
const TREE: [&str; 10] =
    ["crates/", "stages/", "tools/", "tests/", "benches/", "pipelines/", "notebooks/", "data/", "docs/", ".ci/"];

/// What `.gitignore` leaves out of the tree (build outputs, installs), as path prefixes.
fn ignored() -> Vec<String> {
    read(".gitignore")
        .lines()
        .filter(|l| l.starts_with('/') && !l.contains('*'))
        .map(|l| l.trim_matches('/').to_string())
        .collect()
}

#[test]
fn every_path_the_documentation_names_exists() {
    let ignored = ignored();
    let mut problems = Vec::new();
    // The dated benchmark results name the tree as it was when they were measured.
    for rel in documents().into_iter().filter(|d| !d.starts_with("benches/results/")) {
        let (prose, _) = split_markdown(&read(&rel));
        for (number, line) in prose.iter().enumerate() {
            for span in code_spans(line).1 {
                let path = span.trim_end_matches('/');
                let placeholder = path.contains(['<', '>', '*', '…', '{', '$', ' ', ':']) || path.contains("NN");
                let generated = ignored.iter().any(|i| path.starts_with(i.as_str()));
                if TREE.iter().any(|t| path.starts_with(t)) && !placeholder && !generated && !repo().join(path).exists()
                {
                    problems.push(format!("{rel}:{}: `{span}` does not exist", number + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "the documentation names paths that do not exist:\n{}", problems.join("\n"));
}

/// Every command of a shell block in the README and the book names a flag its binary has and
/// a target the Makefile has.
#[test]
fn every_command_names_existing_flags_and_targets() {
    let flags: BTreeMap<&str, &BTreeSet<String>> = pages().iter().map(|(b, _, f)| (b.name.as_str(), f)).collect();
    let targets = phony_targets();
    let mut problems = Vec::new();
    for rel in documents().into_iter().filter(|d| d == "README.md" || d.starts_with("docs/")) {
        for (info, lines) in split_markdown(&read(&rel)).1 {
            if info != "sh" {
                continue;
            }
            for line in lines.join("\n").replace("\\\n", " ").lines() {
                let line = line.trim();
                if line.starts_with('#') {
                    continue;
                }
                let mut current: Option<&str> = None;
                let all = shell_words(line);
                let mut words = all.iter().map(String::as_str);
                while let Some(word) = words.next() {
                    if word == "#" {
                        break;
                    }
                    if matches!(word, "|" | "&&" | "||" | ";" | "&") || word.ends_with(['&', ';']) {
                        current = None;
                        continue;
                    }
                    let base = word.rsplit('/').next().unwrap();
                    if let Some((name, _)) = flags.get_key_value(base) {
                        current = Some(name);
                    } else if word == "make" && current.is_none() {
                        let rest: Vec<&str> =
                            words.clone().take_while(|w| !matches!(*w, "|" | "&&" | ";" | "#")).collect();
                        let target = target_of(&rest);
                        if !targets.contains(&target) {
                            problems.push(format!("{rel}: `{line}`: make has no target `{target}`"));
                        }
                    } else if let (Some(name), Some(flag)) = (current, word.strip_prefix("--").map(|_| word)) {
                        let flag = flag.split('=').next().unwrap();
                        if !flags[name].contains(flag) {
                            problems.push(format!("{rel}: `{line}`: {name} has no flag {flag}"));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "commands of the documentation that cannot run:\n{}", problems.join("\n"));
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("`metrics.parquet` and `pooled.parquet`"), "metricsparquet-and-pooledparquet");
    assert_eq!(slug("The reference's selection"), "the-references-selection");
    assert_eq!(slug("Identity, credentials and hashes"), "identity-credentials-and-hashes");
    assert_eq!(slug("Past one machine: shards"), "past-one-machine-shards");
    assert_eq!(slug("A [link](x.md) in it"), "a-link-in-it");
    assert_eq!(anchors("# A\n## A\n```\n# not\n```\n"), ["a", "a-1"].map(String::from).into());
    assert_eq!(make_target("make"), Some("all".into()));
    assert_eq!(make_target("make search [SPEC=<spec>]"), Some("search".into()));
    assert_eq!(make_target("make RUN=x rescore"), Some("rescore".into()));
    assert_eq!(make_target(r#"make SEARCH="1 256" load"#), Some("load".into()));
    assert_eq!(shell_words(r#"a "b c" 'd'"#), ["a", "b c", "d"]);
}
