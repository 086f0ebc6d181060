//! Whole-dataset checks: the loader accepts what the generator writes, a seed always gives
//! the same bytes, and the full set exercises every triage rule and agreement type.
use crate::generate::{dataset_files, family_items, system_text, user_band};
use crate::item::Generated;
use inferbench_contract::vocab::TaskFamily;
use inferbench_inputs::dataset::{self, LoadOptions};
use inferbench_inputs::spec::Spec;
use inferbench_judge::tokenizer;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn spec() -> Spec {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/spec.yaml");
    Spec::load(&path).expect("the bundled spec loads")
}

/// The full dataset for the release seed, generated once for all tests.
fn full() -> &'static Vec<(String, Vec<u8>)> {
    static FULL: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FULL.get_or_init(|| dataset_files(&spec(), 20261129, None).expect("generation succeeds"))
}

fn write_to(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

fn rows(files: &[(String, Vec<u8>)], family: &str) -> Vec<serde_json::Value> {
    let bytes = &files.iter().find(|(n, _)| n == &format!("{family}.jsonl")).unwrap().1;
    String::from_utf8(bytes.clone()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn the_full_dataset_passes_the_strict_loader() {
    let dir = tempfile::tempdir().unwrap();
    write_to(dir.path(), full());
    let data = dataset::load(dir.path(), &spec(), LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let counts: Vec<usize> = data.items.values().map(Vec::len).collect();
    assert_eq!(counts.iter().sum::<usize>(), 721);
    assert_eq!(data.items[&TaskFamily::MeetingNotesLookup].len(), 237);
    assert_eq!(data.items[&TaskFamily::TicketTriage].len(), 244);
    assert_eq!(data.items[&TaskFamily::ContractTermsExtraction].len(), 240);
}

#[test]
fn another_seed_also_passes_the_loader() {
    let files = dataset_files(&spec(), 7, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_to(dir.path(), &files);
    dataset::load(dir.path(), &spec(), LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(&files, full());
}

#[test]
fn samples_pass_the_loader_with_sample_only() {
    for seed in [1u64, 99, 20261129] {
        let files = dataset_files(&spec(), seed, Some(6)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        write_to(dir.path(), &files);
        dataset::load(dir.path(), &spec(), LoadOptions { sample: true }).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(dataset::load(dir.path(), &spec(), LoadOptions::default()).is_err());
    }
}

/// The committed datasets are the generator's output for the release seed, byte for byte: a
/// change to the generator's wording must come with regenerated files (`make data
/// data-sample`), never pass unnoticed.
#[test]
fn the_committed_data_files_are_the_generators_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let sample = dataset_files(&spec(), 20261129, Some(6)).unwrap();
    for (dir, files) in [("micro-single-task", full()), ("micro-single-task-sample", &sample)] {
        for (name, bytes) in files {
            let path = root.join(dir).join(name);
            let committed = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                committed == *bytes,
                "{} differs from what `ib-data generate --seed 20261129` writes; regenerate with `make data data-sample`",
                path.display()
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_a_sample_is_a_prefix() {
    let again = dataset_files(&spec(), 20261129, None).unwrap();
    assert_eq!(&again, full());
    let sample = dataset_files(&spec(), 20261129, Some(6)).unwrap();
    for (name, bytes) in &sample[1..] {
        let whole = &full().iter().find(|(n, _)| n == name).unwrap().1;
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(whole.starts_with(text.as_bytes()), "{name} is not a prefix");
        assert_eq!(text.lines().count(), 6);
    }
    let other = dataset_files(&spec(), 20261130, Some(6)).unwrap();
    assert_ne!(other, sample);
}

#[test]
fn files_are_compact_lf_terminated_json_lines_with_the_reference_key_order() {
    for (name, bytes) in full() {
        let text = std::str::from_utf8(bytes).unwrap();
        assert!(text.ends_with('\n') && !text.contains('\r'), "{name}");
        if name == "manifest.json" {
            assert_eq!(
                text,
                "{\n  \"status\": \"frozen\",\n  \"freeze_ready\": true,\n  \"use_cases\": {\n    \"meeting-notes-lookup\": {\n      \"private_items\": 237\n    },\n    \"ticket-triage\": {\n      \"private_items\": 244\n    },\n    \"contract-terms-extraction\": {\n      \"private_items\": 240\n    }\n  }\n}\n"
            );
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&row).unwrap(), line, "{name}:{} is not compact", i + 1);
            let keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["id", "use_case", "split", "prompt", "output_schema", "gold", "aliases", "tokens"]);
            let family = name.trim_end_matches(".jsonl");
            assert_eq!(row["id"], format!("{family}-{i:04}"));
        }
    }
}

#[test]
fn token_counts_are_measured_not_estimated() {
    let spec = spec();
    for family in &spec.families {
        let system = system_text(&spec, family).unwrap();
        for row in rows(full(), family.name.as_str()).iter().step_by(17) {
            let user = row["prompt"]["user"].as_str().unwrap();
            assert_eq!(row["prompt"]["system"], system.as_str());
            assert_eq!(row["tokens"]["user"], tokenizer::count(user));
            assert_eq!(row["tokens"]["system"], tokenizer::count(&system));
            assert_eq!(row["tokens"]["input_total"], tokenizer::count(user) + tokenizer::count(&system));
        }
    }
}

#[test]
fn every_triage_rule_and_tie_break_occurs_in_the_full_set() {
    let spec = spec();
    let family = spec.family("ticket-triage").unwrap();
    let band = user_band(family, 0);
    let items = family_items(TaskFamily::TicketTriage, 20261129, family.available_items, band);
    let tags: BTreeSet<&str> = items.iter().flat_map(|g| g.tags.iter().map(String::as_str)).collect();
    for rule in 1..=13 {
        assert!(tags.contains(format!("priority-rule:{rule}").as_str()), "priority rule {rule}");
    }
    for tb in 1..=5 {
        assert!(tags.contains(format!("category-rule:tb{tb}").as_str()), "tie-break {tb}");
    }
    for c in inferbench_contract::family::TICKET_CATEGORIES {
        assert!(tags.contains(format!("category:{c}").as_str()), "{c}");
    }
    let golds: BTreeSet<String> = rows(full(), "ticket-triage")
        .iter()
        .map(|r| format!("{}/{}", r["gold"]["category"], r["gold"]["priority"]))
        .collect();
    assert!(golds.len() >= 8, "{golds:?}");
}

#[test]
fn every_agreement_type_nulls_and_non_renewing_terms_occur() {
    let golds: Vec<serde_json::Value> =
        rows(full(), "contract-terms-extraction").into_iter().map(|r| r["gold"].clone()).collect();
    for t in inferbench_contract::family::AGREEMENT_TYPES {
        assert!(golds.iter().any(|g| g["agreement_type"] == t), "{t}");
    }
    assert!(golds.iter().any(|g| g["auto_renews"] == false && g["renewal_term_months"].is_null()));
    assert!(golds.iter().any(|g| g["termination_for_convenience"] == false));
    for f in
        ["non_renewal_notice_days", "payment_terms_days", "termination_notice_days", "security_incident_notice_hours"]
    {
        assert!(golds.iter().any(|g| g[f].is_null()), "{f} never null");
        assert!(golds.iter().any(|g| g[f].is_i64()), "{f} never set");
    }
}

#[test]
fn token_bands_hold_with_room_to_spare() {
    let spec = spec();
    for family in &spec.families {
        let field = if family.name == TaskFamily::MeetingNotesLookup { "input_total" } else { "user" };
        let (lo, hi) = family.input_tokens;
        for r in rows(full(), family.name.as_str()) {
            let n = r["tokens"][field].as_i64().unwrap();
            assert!((lo..=hi).contains(&n), "{}: {n}", r["id"]);
        }
    }
}

#[test]
fn the_cli_writes_and_validates_a_sample() {
    let dir = tempfile::tempdir().unwrap();
    let out: PathBuf = dir.path().join("sample");
    let spec_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/spec.yaml");
    crate::generate::run(crate::args::GenerateArgs { seed: 5, out: out.clone(), spec: spec_path, sample: Some(3u64) })
        .unwrap();
    for f in ["manifest.json", "meeting-notes-lookup.jsonl", "ticket-triage.jsonl", "contract-terms-extraction.jsonl"] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

/// Every family's generated items for a few seeds: the release seed and two others.
fn many(family_name: &str) -> Vec<Generated> {
    let spec = spec();
    let family = spec.family(family_name).unwrap();
    let band = user_band(family, tokenizer::count(&system_text(&spec, family).unwrap()));
    [20261129u64, 7, 99]
        .iter()
        .flat_map(|&seed| family_items(family_name.parse().unwrap(), seed, family.available_items, band))
        .collect()
}

/// Lower-case words with whether punctuation stands before and after them ("the, the" and
/// "months each (each a ...)" are not doublings).
fn words(text: &str) -> Vec<(String, bool, bool)> {
    text.split_whitespace()
        .map(|w| {
            let core = w.trim_start_matches(|c: char| !c.is_alphanumeric());
            let trimmed = core.trim_end_matches(|c: char| !c.is_alphanumeric());
            (trimmed.to_lowercase(), core.len() != w.len(), trimmed.len() != core.len())
        })
        .collect()
}

#[test]
fn no_item_repeats_a_word_back_to_back_or_says_our_the() {
    for family in ["ticket-triage", "meeting-notes-lookup", "contract-terms-extraction"] {
        for g in many(family) {
            let w = words(&g.user);
            for pair in w.windows(2) {
                let ((a, _, a_after), (b, b_before, _)) = (&pair[0], &pair[1]);
                let a_punct = *a_after || *b_before;
                // Numbers may repeat ("10 10" never occurs, but a count next to a count is
                // not a template join); only words count.
                let word = a.chars().any(char::is_alphabetic);
                assert!(!(word && !a_punct && a == b), "{family}: \"{a} {b}\" in:\n{}", g.user);
                let det = |s: &str| matches!(s, "the" | "our" | "your" | "a" | "an");
                assert!(!(det(a) && det(b) && !a_punct), "{family}: \"{a} {b}\" in:\n{}", g.user);
            }
        }
    }
}

#[test]
fn only_bug_tickets_close_with_please_fix() {
    let items = many("ticket-triage");
    let mut bug_fix = 0;
    for g in &items {
        let fix = g.user.trim_end().ends_with("Please fix.");
        if g.gold["category"] == "bug" {
            bug_fix += fix as usize;
        } else {
            assert!(!fix, "{} ticket asks for a fix:\n{}", g.gold["category"], g.user);
        }
    }
    assert!(bug_fix > 0, "bug tickets still may close with \"Please fix.\"");
}

/// (year, month, day) of an ISO date.
fn ymd(iso: &serde_json::Value) -> (i64, i64, i64) {
    let p: Vec<i64> = iso.as_str().unwrap().split('-').map(|x| x.parse().unwrap()).collect();
    (p[0], p[1], p[2])
}

#[test]
fn contract_titles_notices_and_cities_fit_the_terms() {
    let forms = [
        "Pty Ltd",
        "Pte. Ltd.",
        "sp. z o.o.",
        "Inc.",
        "LLC",
        "Corp.",
        "Ltd",
        "Limited",
        "plc",
        "GmbH",
        "AG",
        "B.V.",
        "N.V.",
        "S.A.",
        "SAS",
        "AB",
        "Oy",
        "S.r.l.",
        "A/S",
        "K.K.",
    ];
    let mut cities_seen = 0;
    for g in many("contract-terms-extraction") {
        let text = &g.user;
        let title = text.lines().next().unwrap();
        // Non-renewal notice shorter than the renewal term it refers to.
        if let (Some(m), Some(d)) = (g.gold["renewal_term_months"].as_i64(), g.gold["non_renewal_notice_days"].as_i64())
        {
            assert!(d < m * 30, "{d} days' notice of a {m}-month renewal:\n{text}");
        }
        // "Annual" only for a one-year initial term (end = start + 12 months - 1 day).
        if title.contains("ANNUAL") {
            let (y1, m1, d1) = ymd(&g.gold["effective_date"]);
            let (y2, m2, d2) = ymd(&g.gold["initial_term_end_date"]);
            let days = (y2 - y1) * 365 + (m2 - m1) * 30 + (d2 - d1);
            assert!((355..=370).contains(&days), "{title} with a {days}-day initial term");
        }
        // A distribution title needs a clause that grants distribution.
        if title.contains("DISTRIBUTION") {
            let body = text.to_lowercase();
            assert!(body.contains("may distribute") || body.contains("right to distribute"), "{title}:\n{text}");
        }
        // Support hours, business days and courts: a city of a party's country.
        let mut allowed: Vec<&str> = vec![];
        for form in forms {
            if text.contains(&format!(" {form} (\"")) {
                allowed.extend(crate::contract::vocab::party_cities(&format!("X {form}")));
            }
        }
        assert!(!allowed.is_empty(), "no party form found:\n{text}");
        for (before, after) in [("to 18:00 (", " time)"), ("public holiday in ", "."), ("The courts of ", " have")] {
            for (i, _) in text.match_indices(before) {
                let rest = &text[i + before.len()..];
                let city = &rest[..rest.find(after).unwrap()];
                assert!(allowed.contains(&city), "{city} is in neither party's country ({allowed:?}):\n{text}");
                cities_seen += 1;
            }
        }
    }
    assert!(cities_seen > 100, "{cities_seen}");
}

#[test]
fn meeting_ratings_are_ratings_and_no_tool_has_both_a_monthly_and_a_yearly_price() {
    use crate::meeting::domains::DOMAINS;
    for d in DOMAINS {
        for m in d.metrics {
            assert!(
                !(m.name.contains("rating") && matches!(m.kind, crate::meeting::vocab::MetricKind::Count(_))),
                "{}",
                m.name
            );
        }
        // A tool with a yearly contract value is not also a monthly budget line (whose
        // monthly cost could exceed the yearly price).
        for (_, thing) in d.vendors {
            assert!(!d.budget_items.contains(thing), "{thing} is both a vendor contract and a budget line");
        }
    }
    let tools: Vec<&str> = DOMAINS
        .iter()
        .flat_map(|d| d.vendors.iter().map(|v| v.1).chain(d.budget_items.iter().copied()))
        .map(|t| t.strip_prefix("the ").unwrap_or(t))
        .collect();
    for g in many("meeting-notes-lookup") {
        for line in g.user.lines() {
            let l = line.to_lowercase();
            if l.contains("rating") {
                assert!(!l.contains(" reviews"), "a rating given as a review count: {line}");
            }
        }
        let sentences: Vec<String> = g.user.split(['.', '\n']).map(str::to_lowercase).collect();
        for tool in &tools {
            let yearly = sentences.iter().any(|s| s.contains(tool) && s.contains(" a year"));
            let monthly =
                sentences.iter().any(|s| s.contains(tool) && (s.contains("last month") || s.contains(" a month")));
            assert!(!(yearly && monthly), "{tool} has both a monthly cost and a yearly price:\n{}", g.user);
        }
    }
}
