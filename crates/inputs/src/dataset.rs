//! Datasets in the reference format (`manifest.json` and one `<family>.jsonl` per family),
//! validated strictly: every violation is reported as `file:line: field: what is wrong`, all
//! of them at once, before any stage writes anything.
use crate::spec::{FamilySpec, Spec};
use inferbench_contract::canonical::{self, sha256_hex};
use inferbench_contract::family::{
    output_schema, AGREEMENT_TYPES, CONTRACT_FIELDS, TICKET_CATEGORIES, TICKET_PRIORITIES,
};
use inferbench_contract::vocab::TaskFamily;
use inferbench_contract::{Error, Result};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// One dataset item.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    pub family: TaskFamily,
    pub system: String,
    pub user: String,
    pub gold: Value,
    pub aliases: Vec<String>,
    /// SHA-256 of the row's canonical JSON.
    pub sha256: String,
}

/// A validated dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub dir: PathBuf,
    /// Items per family, in spec family order, each in file order.
    pub items: BTreeMap<TaskFamily, Vec<Item>>,
    /// Logical file name → SHA-256: `manifest.json`, `<family>.jsonl`, and the templates.
    pub file_hashes: BTreeMap<String, String>,
    /// SHA-256 of the `key:hash` lines of `file_hashes`, sorted, joined by `\n`.
    pub release_hash: String,
}

/// Loader options.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    /// Accept a small sample: the manifest's counts need not equal the spec's.
    pub sample: bool,
}

/// Whether `s` is a canonical `YYYY-MM-DD` calendar date.
pub fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b[r].iter().try_fold(0u32, |acc, c| c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0')))
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    y >= 1 && (1..=days).contains(&d)
}

fn is_int(v: &Value) -> bool {
    v.is_i64() || v.is_u64()
}

/// Problems with one family's gold and aliases.
fn check_gold(family: TaskFamily, gold: &Value, aliases: &Value, problems: &mut Vec<String>, at: &str) {
    let mut bad = |field: &str, what: &str| problems.push(format!("{at}: {field}: {what}"));
    match family {
        TaskFamily::MeetingNotesLookup => {
            let keys_ok =
                gold.as_object().is_some_and(|o| o.len() == 2 && o.contains_key("type") && o.contains_key("value"));
            if !keys_ok {
                bad("gold", "expected an object with exactly the keys `type` and `value`");
            } else if !gold["value"].is_string() {
                bad("gold.value", "expected a string");
            }
            if !aliases.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                bad("aliases", "expected a list of strings");
            }
        }
        TaskFamily::TicketTriage => {
            let keys_ok = gold
                .as_object()
                .is_some_and(|o| o.len() == 2 && o.contains_key("category") && o.contains_key("priority"));
            if !keys_ok {
                bad("gold", "expected an object with exactly the keys `category` and `priority`");
                return;
            }
            if !gold["category"].as_str().is_some_and(|c| TICKET_CATEGORIES.contains(&c)) {
                bad("gold.category", &format!("`{}` is not one of {TICKET_CATEGORIES:?}", gold["category"]));
            }
            if !gold["priority"].as_str().is_some_and(|c| TICKET_PRIORITIES.contains(&c)) {
                bad("gold.priority", &format!("`{}` is not one of {TICKET_PRIORITIES:?}", gold["priority"]));
            }
        }
        TaskFamily::ContractTermsExtraction => {
            let keys: Vec<&str> = gold.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
            if keys != CONTRACT_FIELDS {
                bad("gold", &format!("expected exactly the keys {CONTRACT_FIELDS:?} in this order"));
                return;
            }
            if !gold["agreement_type"].as_str().is_some_and(|t| AGREEMENT_TYPES.contains(&t)) {
                bad("gold.agreement_type", &format!("`{}` is not one of {AGREEMENT_TYPES:?}", gold["agreement_type"]));
            }
            for f in ["effective_date", "initial_term_end_date"] {
                if !gold[f].as_str().is_some_and(is_iso_date) {
                    bad(&format!("gold.{f}"), &format!("`{}` is not an ISO date (YYYY-MM-DD)", gold[f]));
                }
            }
            for f in ["auto_renews", "termination_for_convenience"] {
                if !gold[f].is_boolean() {
                    bad(&format!("gold.{f}"), "expected a boolean");
                }
            }
            for f in &CONTRACT_FIELDS[4..7].iter().chain(&CONTRACT_FIELDS[8..10]).collect::<Vec<_>>() {
                if !(gold[**f].is_null() || is_int(&gold[**f])) {
                    bad(&format!("gold.{f}"), "expected an integer or null");
                }
            }
        }
        // A dataset's families are the spec's, which never name `synthetic`.
        TaskFamily::Synthetic => bad("gold", "a synthetic prompt has no gold"),
    }
}

struct FileCheck<'a> {
    family: &'a FamilySpec,
    system: &'a str,
    file: String,
}

impl FileCheck<'_> {
    fn row(&self, line_no: usize, row: &Value, ids: &mut HashSet<String>, problems: &mut Vec<String>) -> Option<Item> {
        let at = format!("{}:{line_no}", self.file);
        let Some(obj) = row.as_object() else {
            problems.push(format!("{at}: row: expected a JSON object"));
            return None;
        };
        let start = problems.len();
        for key in ["id", "use_case", "split", "prompt", "output_schema", "gold", "aliases", "tokens"] {
            if !obj.contains_key(key) {
                problems.push(format!("{at}: {key}: missing"));
            }
        }
        if problems.len() > start {
            return None;
        }
        let id = obj["id"].as_str().unwrap_or("").to_string();
        if id.is_empty() {
            problems.push(format!("{at}: id: expected a non-empty string"));
        } else if !ids.insert(id.clone()) {
            problems.push(format!("{at}: id: duplicate id `{id}`"));
        }
        if obj["use_case"] != json!(self.family.name) {
            problems.push(format!("{at}: use_case: expected `{}`, found {}", self.family.name, obj["use_case"]));
        }
        if obj["split"] != json!("private") {
            problems.push(format!("{at}: split: expected `private`, found {}", obj["split"]));
        }
        let prompt = &obj["prompt"];
        let prompt_ok =
            prompt.as_object().is_some_and(|p| p.len() == 2 && p.contains_key("system") && p.contains_key("user"));
        if !prompt_ok {
            problems.push(format!("{at}: prompt: expected an object with exactly the keys `system` and `user`"));
        } else {
            if prompt["system"].as_str() != Some(self.system) {
                problems.push(format!(
                    "{at}: prompt.system: differs from the template {} (it must equal it byte for byte, less one trailing newline)",
                    self.family.prompt_template
                ));
            }
            if prompt["user"].as_str().is_none_or(|u| u.trim().is_empty()) {
                problems.push(format!("{at}: prompt.user: expected a non-empty string"));
            }
        }
        if obj["output_schema"] != output_schema(self.family.name) {
            problems.push(format!("{at}: output_schema: expected {}", output_schema(self.family.name)));
        }
        check_gold(self.family.name, &obj["gold"], &obj["aliases"], problems, &at);
        let band_field = if self.family.name == TaskFamily::MeetingNotesLookup { "input_total" } else { "user" };
        let (lo, hi) = self.family.input_tokens;
        match obj["tokens"].get(band_field).and_then(Value::as_i64) {
            Some(n) if (lo..=hi).contains(&n) => {}
            Some(n) => problems.push(format!("{at}: tokens.{band_field}: {n} is outside the band {lo}-{hi}")),
            None => problems.push(format!("{at}: tokens.{band_field}: expected an integer")),
        }
        if problems.len() > start {
            return None;
        }
        Some(Item {
            id,
            family: self.family.name,
            system: self.system.to_string(),
            user: prompt["user"].as_str().unwrap_or_default().to_string(),
            gold: obj["gold"].clone(),
            aliases: obj["aliases"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                .unwrap_or_default(),
            sha256: canonical::hash(row),
        })
    }
}

/// Reads a template and strips exactly one trailing newline.
fn template_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.strip_suffix('\n').unwrap_or(&text).to_string()
}

/// Release hash of a map of logical names to SHA-256.
pub fn release_hash(file_hashes: &BTreeMap<String, String>) -> String {
    let lines: Vec<String> = file_hashes.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    sha256_hex(lines.join("\n").as_bytes())
}

/// Where the reference runner's standard layout (seed-runner.md §3.3: the working directory
/// at its repository root, an editable install) has the dataset and the prompt templates.
/// The reference keys each file's hash by its path string, so its release hash, and with it
/// every seed, the selection and the request ids, depends on these strings; reproducing its
/// selection means hashing under them, wherever the files really are.
pub const REFERENCE_DATA_DIR: &str = "data/micro-single-task";
pub const REFERENCE_TEMPLATE_DIR: &str =
    "src/openbenchmarks_inference/workflows/micro_single_task/assets/prompt_templates";

/// The file name of a logical name or a path string (`/` separated).
fn file_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

/// Logical name → the reference runner's key for that file under its standard layout: the
/// manifest and family files in [`REFERENCE_DATA_DIR`], each template (by its file name) in
/// [`REFERENCE_TEMPLATE_DIR`].
pub fn reference_layout_keys(spec: &Spec) -> BTreeMap<String, String> {
    let mut keys = BTreeMap::from([("manifest.json".to_string(), format!("{REFERENCE_DATA_DIR}/manifest.json"))]);
    for family in &spec.families {
        let jsonl = format!("{}.jsonl", family.name);
        keys.insert(jsonl.clone(), format!("{REFERENCE_DATA_DIR}/{jsonl}"));
        let template = &family.prompt_template;
        keys.insert(template.clone(), format!("{REFERENCE_TEMPLATE_DIR}/{}", file_name(template)));
    }
    keys
}

/// Logical name → the key a reference run's `run-lock.json` recorded for that file in its
/// `human_input_hashes` (path strings, seed-runner.md §2.3): each file is the one key with
/// its file name, and the SHA-256 recorded there must be the file's, so the keys are only
/// taken for the very files the reference hashed. The one key left over is the reference's
/// spec, which its release hash leaves out. Every problem at once.
pub fn reference_lock_keys(
    human_input_hashes: &BTreeMap<String, String>,
    file_hashes: &BTreeMap<String, String>,
) -> std::result::Result<BTreeMap<String, String>, Vec<String>> {
    let mut keys = BTreeMap::new();
    let mut problems = Vec::new();
    for (logical, hash) in file_hashes {
        let candidates: Vec<&String> =
            human_input_hashes.keys().filter(|k| file_name(k) == file_name(logical)).collect();
        match candidates[..] {
            [key] if &human_input_hashes[key] == hash => {
                keys.insert(logical.clone(), key.clone());
            }
            [key] => problems.push(format!(
                "{logical}: its SHA-256 {}… differs from {}… the reference lock records for `{key}`: \
                 not the file the reference run hashed",
                inferbench_contract::canonical::short_hash(hash),
                inferbench_contract::canonical::short_hash(&human_input_hashes[key])
            )),
            [] => {
                problems.push(format!("{logical}: the reference lock records no file named `{}`", file_name(logical)))
            }
            _ => problems.push(format!(
                "{logical}: the reference lock records several files named `{}`; which one is meant is unclear",
                file_name(logical)
            )),
        }
    }
    let left: Vec<&String> = human_input_hashes.keys().filter(|k| !keys.values().any(|v| v == *k)).collect();
    if problems.is_empty() && left.len() != 1 {
        problems.push(format!(
            "beside the {} dataset files, expected one key, the reference's spec; found {}: {left:?}",
            file_hashes.len(),
            left.len()
        ));
    }
    if problems.is_empty() {
        Ok(keys)
    } else {
        Err(problems)
    }
}

/// The release hash of `file_hashes` (logical name → SHA-256) with each file keyed by
/// `keys[logical name]` instead of its logical name: the reference runner's definition over
/// its path strings. `None` when a file has no key, or two files share one.
pub fn release_hash_keyed(file_hashes: &BTreeMap<String, String>, keys: &BTreeMap<String, String>) -> Option<String> {
    let mut keyed = BTreeMap::new();
    for (logical, hash) in file_hashes {
        if keyed.insert(keys.get(logical)?.clone(), hash.clone()).is_some() {
            return None;
        }
    }
    Some(release_hash(&keyed))
}

fn read_manifest(
    dir: &Path,
    spec: &Spec,
    options: LoadOptions,
    problems: &mut Vec<String>,
) -> Option<(Vec<u8>, BTreeMap<String, usize>)> {
    let path = dir.join("manifest.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            problems.push(format!("{}: {e}", path.display()));
            return None;
        }
    };
    let at = path.display().to_string();
    let manifest: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("{at}:{}: {e}", e.line()));
            return None;
        }
    };
    if manifest["status"] != json!("frozen") {
        problems.push(format!("{at}: status: expected `frozen`, found {}", manifest["status"]));
    }
    if manifest["freeze_ready"] != json!(true) {
        problems.push(format!("{at}: freeze_ready: expected true, found {}", manifest["freeze_ready"]));
    }
    let mut counts = BTreeMap::new();
    let Some(use_cases) = manifest["use_cases"].as_object() else {
        problems.push(format!("{at}: use_cases: expected an object keyed by task family"));
        return Some((bytes, counts));
    };
    let keys: HashSet<&str> = use_cases.keys().map(String::as_str).collect();
    let expected: HashSet<&str> = spec.families.iter().map(|f| f.name.as_str()).collect();
    if keys != expected {
        problems.push(format!(
            "{at}: use_cases: expected exactly the families {:?}",
            spec.families.iter().map(|f| f.name.as_str()).collect::<Vec<_>>()
        ));
    }
    for family in &spec.families {
        match use_cases.get(family.name.as_str()).and_then(|u| u["private_items"].as_u64()) {
            Some(n) => {
                if !options.sample && n as usize != family.available_items {
                    problems.push(format!(
                        "{at}: use_cases.{}.private_items: {n} differs from the spec's available_items {} (use --sample for a small dataset)",
                        family.name, family.available_items
                    ));
                }
                counts.insert(family.name.to_string(), n as usize);
            }
            None => problems.push(format!("{at}: use_cases.{}.private_items: expected an integer", family.name)),
        }
    }
    Some((bytes, counts))
}

/// Loads and validates the dataset in `dir` against `spec`.
pub fn load(dir: &Path, spec: &Spec, options: LoadOptions) -> Result<Dataset> {
    let mut problems = Vec::new();
    let mut file_hashes = BTreeMap::new();
    let manifest = read_manifest(dir, spec, options, &mut problems);
    if let Some((bytes, _)) = &manifest {
        file_hashes.insert("manifest.json".to_string(), sha256_hex(bytes));
    }
    let mut items = BTreeMap::new();
    let mut ids = HashSet::new();
    for family in &spec.families {
        let template_path = spec.dir().join(&family.prompt_template);
        let system = match std::fs::read(&template_path) {
            Ok(bytes) => {
                file_hashes.insert(family.prompt_template.clone(), sha256_hex(&bytes));
                template_text(&bytes)
            }
            Err(e) => {
                problems.push(format!("{}: {e}", template_path.display()));
                continue;
            }
        };
        let path = dir.join(format!("{}.jsonl", family.name));
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        file_hashes.insert(format!("{}.jsonl", family.name), sha256_hex(&bytes));
        let check = FileCheck { family, system: &system, file: path.display().to_string() };
        let mut rows = Vec::new();
        let text = String::from_utf8_lossy(&bytes);
        if !text.is_empty() && !text.ends_with('\n') {
            problems.push(format!(
                "{}:{}: row: the last line is not terminated (truncated file?)",
                check.file,
                text.lines().count()
            ));
        }
        for (i, line) in text.lines().enumerate() {
            match serde_json::from_str::<Value>(line) {
                Ok(row) => rows.extend(check.row(i + 1, &row, &mut ids, &mut problems)),
                Err(_) if line.trim().is_empty() => problems.push(format!("{}:{}: row: blank line", check.file, i + 1)),
                Err(e) => problems.push(format!("{}:{}: row: not valid JSON ({e})", check.file, i + 1)),
            }
        }
        let declared = manifest.as_ref().and_then(|(_, c)| c.get(family.name.as_str()).copied());
        let lines = text.lines().count();
        if let Some(n) = declared.filter(|n| *n != lines) {
            problems.push(format!("{}: rows: {lines} rows, but manifest.json declares {n}", check.file));
        }
        items.insert(family.name, rows);
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(collapse_template_mismatches(problems)));
    }
    let release_hash = release_hash(&file_hashes);
    Ok(Dataset { dir: dir.to_path_buf(), items, file_hashes, release_hash })
}

/// A dataset written for other prompt templates than the spec's differs on every row: one
/// line per file says so, after the first row's, instead of one line per row.
fn collapse_template_mismatches(problems: Vec<String>) -> Vec<String> {
    const MARK: &str = ": prompt.system: differs from the template ";
    let file_of = |p: &str| p.find(MARK).and_then(|at| p[..at].rsplit_once(':')).map(|(file, _)| file.to_string());
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for p in &problems {
        if let Some(file) = file_of(p) {
            *counts.entry(file).or_default() += 1;
        }
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for p in problems {
        let Some(file) = file_of(&p).filter(|f| counts[f] > 3) else {
            out.push(p);
            continue;
        };
        let n = seen.entry(file.clone()).or_default();
        *n += 1;
        if *n == 1 {
            out.push(p);
            out.push(format!(
                "{file}: prompt.system: {} more rows differ from the template too: the dataset was written for other \
                 prompt templates than the spec names (give the spec its dataset, or the dataset its spec)",
                counts[&file] - 1
            ));
        }
    }
    out
}

impl Dataset {
    pub fn item(&self, family: TaskFamily, id: &str) -> Option<&Item> {
        self.items.get(&family)?.iter().find(|i| i.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_are_strict() {
        assert!(is_iso_date("2024-02-29"));
        assert!(!is_iso_date("2023-02-29"));
        assert!(!is_iso_date("2024-2-09"));
        assert!(!is_iso_date("2024-13-01"));
        assert!(!is_iso_date("2024-04-31"));
        assert!(!is_iso_date("２０２４-01-01"));
    }

    #[test]
    fn a_dataset_for_other_templates_is_one_line_per_file() {
        let mut problems: Vec<String> = (1..=5)
            .map(|i| format!("d/t.jsonl:{i}: prompt.system: differs from the template p.txt (it must …)"))
            .collect();
        problems.push("d/t.jsonl:6: id: duplicate".into());
        problems.push("d/m.jsonl:1: prompt.system: differs from the template q.txt (it must …)".into());
        let out = collapse_template_mismatches(problems);
        assert_eq!(out.len(), 4, "{out:#?}");
        assert!(out[0].starts_with("d/t.jsonl:1: prompt.system"));
        assert!(out[1].starts_with("d/t.jsonl: prompt.system: 4 more rows differ from the template too"));
        assert_eq!(out[2], "d/t.jsonl:6: id: duplicate");
        assert!(out[3].starts_with("d/m.jsonl:1:"), "three or fewer stay as they are");
    }

    #[test]
    fn release_hash_joins_sorted_lines() {
        let hashes = BTreeMap::from([("b".to_string(), "2".to_string()), ("a".to_string(), "1".to_string())]);
        assert_eq!(release_hash(&hashes), sha256_hex(b"a:1\nb:2"));
    }

    /// The reference's definition (seed-runner.md §3.3), written out for the standard layout:
    /// `key:hash` lines in sorted key order, joined by `\n`, no trailing newline.
    #[test]
    fn the_standard_layout_hash_is_the_reference_definition() {
        let spec_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/reference/spec.yaml");
        let spec = Spec::load(&spec_path).unwrap();
        let hashes: BTreeMap<String, String> = [
            "manifest.json",
            "meeting-notes-lookup.jsonl",
            "ticket-triage.jsonl",
            "contract-terms-extraction.jsonl",
            "prompt_templates/meeting-notes.system.txt",
            "prompt_templates/ticket-triage.system.txt",
            "prompt_templates/contract-terms.system.txt",
        ]
        .iter()
        .map(|name| (name.to_string(), sha256_hex(name.as_bytes())))
        .collect();
        let keys = reference_layout_keys(&spec);
        assert_eq!(keys.len(), 7);
        let h = |name: &str| sha256_hex(name.as_bytes());
        let t = "src/openbenchmarks_inference/workflows/micro_single_task/assets/prompt_templates";
        let expected = [
            format!("data/micro-single-task/contract-terms-extraction.jsonl:{}", h("contract-terms-extraction.jsonl")),
            format!("data/micro-single-task/manifest.json:{}", h("manifest.json")),
            format!("data/micro-single-task/meeting-notes-lookup.jsonl:{}", h("meeting-notes-lookup.jsonl")),
            format!("data/micro-single-task/ticket-triage.jsonl:{}", h("ticket-triage.jsonl")),
            format!("{t}/contract-terms.system.txt:{}", h("prompt_templates/contract-terms.system.txt")),
            format!("{t}/meeting-notes.system.txt:{}", h("prompt_templates/meeting-notes.system.txt")),
            format!("{t}/ticket-triage.system.txt:{}", h("prompt_templates/ticket-triage.system.txt")),
        ]
        .join("\n");
        assert_eq!(release_hash_keyed(&hashes, &keys), Some(sha256_hex(expected.as_bytes())));
        assert_ne!(release_hash_keyed(&hashes, &keys), Some(release_hash(&hashes)), "keys change the hash");
        let mut partial = keys.clone();
        partial.remove("manifest.json");
        assert_eq!(release_hash_keyed(&hashes, &partial), None, "a file without a key");
        let mut shared = keys;
        shared.insert("manifest.json".into(), format!("{REFERENCE_DATA_DIR}/ticket-triage.jsonl"));
        assert_eq!(release_hash_keyed(&hashes, &shared), None, "two files under one key");
    }

    #[test]
    fn reference_lock_keys_match_by_file_name_and_hash() {
        let files = BTreeMap::from([
            ("manifest.json".to_string(), "m".repeat(64)),
            ("prompts/t.system.txt".to_string(), "t".repeat(64)),
        ]);
        let lock = BTreeMap::from([
            ("/x/data/manifest.json".to_string(), "m".repeat(64)),
            ("/x/specs/prompt_templates/t.system.txt".to_string(), "t".repeat(64)),
            ("/x/specs/spec.yaml".to_string(), "s".repeat(64)),
        ]);
        let keys = reference_lock_keys(&lock, &files).unwrap();
        assert_eq!(keys["prompts/t.system.txt"], "/x/specs/prompt_templates/t.system.txt");
        let mut changed = files.clone();
        changed.insert("manifest.json".into(), "n".repeat(64));
        let err = reference_lock_keys(&lock, &changed).unwrap_err();
        assert_eq!(err.len(), 1);
        assert!(err[0].starts_with("manifest.json: its SHA-256 nnnnnnnnnnnn… differs"), "{}", err[0]);
        let mut more = lock.clone();
        more.insert("/x/extra.txt".into(), "e".repeat(64));
        let err = reference_lock_keys(&more, &files).unwrap_err();
        assert!(err[0].starts_with("beside the 2 dataset files, expected one key, the reference's spec; found 2"));
        let mut missing = lock;
        missing.remove("/x/data/manifest.json");
        let err = reference_lock_keys(&missing, &files).unwrap_err();
        assert!(err[0].contains("records no file named `manifest.json`"), "{err:?}");
    }

    #[test]
    fn contract_gold_problems_are_all_reported() {
        let mut problems = Vec::new();
        let gold = json!({"agreement_type": "lease", "effective_date": "2024-02-30", "initial_term_end_date": "2025-01-01",
            "auto_renews": "yes", "renewal_term_months": 12.5, "non_renewal_notice_days": null, "payment_terms_days": 30,
            "termination_for_convenience": false, "termination_notice_days": null, "security_incident_notice_hours": 72});
        check_gold(TaskFamily::ContractTermsExtraction, &gold, &json!([]), &mut problems, "c.jsonl:4");
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert!(problems[0].starts_with("c.jsonl:4: gold.agreement_type:"));
        assert!(problems.iter().any(|p| p.contains("gold.effective_date")));
        assert!(problems.iter().any(|p| p.contains("gold.auto_renews")));
        assert!(problems.iter().any(|p| p.contains("gold.renewal_term_months")));
    }
}
