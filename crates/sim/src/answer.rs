//! What the simulated model says: the gold rendered as the model would write it, or a
//! plausible wrong answer of the same schema (so it is scored `incorrect_result`, not
//! `invalid_result`), split into real o200k_base tokens for streaming.
use crate::dataset::{contract_fields, Dataset, FieldKind, Gold, Item, AGREEMENT_TYPES, CATEGORIES, PRIORITIES};
use inferbench_judge::tokenizer;
use inferbench_stats::rng::SplitMix64;
use serde_json::Value;

/// The answer to a prompt that is not in the dataset: schema-valid for the meeting family,
/// wrong for everything.
pub const UNKNOWN: &str = r#"{"answer":"unknown"}"#;

/// The answer text for a request: the gold, a wrong answer, or [`UNKNOWN`].
pub fn answer(item: Option<&Item>, correct: bool, dataset: &Dataset, rng: &mut SplitMix64) -> String {
    match item {
        None => UNKNOWN.to_string(),
        Some(item) if correct => render(&item.gold),
        Some(item) => render(&wrong_gold(item, dataset, rng)),
    }
}

/// Compact JSON in the key order the system prompts ask for.
pub fn render(gold: &Gold) -> String {
    match gold {
        Gold::Meeting { value, .. } => format!("{{\"answer\":{}}}", json_str(value)),
        Gold::Ticket { category, priority } => {
            format!("{{\"category\":{},\"priority\":{}}}", json_str(category), json_str(priority))
        }
        // Written field by field so the order never depends on serde_json's map features.
        Gold::Contract(map) => {
            let fields: Vec<String> =
                contract_fields().map(|(k, _)| format!("\"{k}\":{}", map.get(k).unwrap_or(&Value::Null))).collect();
            format!("{{{}}}", fields.join(","))
        }
    }
}

fn json_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// A gold of the same schema that differs from the item's gold (and, for meeting notes, from
/// every alias).
pub fn wrong_gold(item: &Item, dataset: &Dataset, rng: &mut SplitMix64) -> Gold {
    match &item.gold {
        Gold::Meeting { value, kind } => {
            Gold::Meeting { value: wrong_meeting(item, value, kind, dataset, rng), kind: kind.clone() }
        }
        Gold::Ticket { category, priority } => {
            let (mut category, mut priority) = (category.clone(), priority.clone());
            if rng.below_modulo(2) == 0 {
                category = other_of(&CATEGORIES, &category, rng);
            } else {
                priority = other_of(&PRIORITIES, &priority, rng);
            }
            Gold::Ticket { category, priority }
        }
        Gold::Contract(map) => {
            let mut map = map.clone();
            let fields: Vec<(&str, FieldKind)> = contract_fields().collect();
            let (key, kind) = fields[rng.below_modulo(fields.len())];
            let old = map.get(key).cloned().unwrap_or(Value::Null);
            map.insert(key.to_string(), wrong_field(kind, &old, rng));
            Gold::Contract(map)
        }
    }
}

fn other_of(values: &[&str], current: &str, rng: &mut SplitMix64) -> String {
    let others: Vec<&&str> = values.iter().filter(|v| **v != current).collect();
    others[rng.below_modulo(others.len())].to_string()
}

fn wrong_field(kind: FieldKind, old: &Value, rng: &mut SplitMix64) -> Value {
    match kind {
        FieldKind::AgreementType => Value::from(other_of(&AGREEMENT_TYPES, old.as_str().unwrap_or(""), rng)),
        FieldKind::Date => {
            Value::from(shift_year(old.as_str().unwrap_or("2025-01-01"), if rng.below_modulo(2) == 0 { 1 } else { -1 }))
        }
        FieldKind::Bool => Value::from(!old.as_bool().unwrap_or(false)),
        // The typical slips: a stated number missed (null), an unstated one invented, or
        // the wrong one of two numbers in the clause.
        FieldKind::IntOrNull => match old.as_i64() {
            None => Value::from([12, 30, 60, 90][rng.below_modulo(4)]),
            Some(_) if rng.below_modulo(2) == 0 => Value::Null,
            Some(0) => Value::from(30),
            Some(n) => Value::from(n * 2),
        },
    }
}

/// The same day in another year (29 February becomes the 28th), still ISO.
fn shift_year(date: &str, by: i32) -> String {
    let year: i32 = date.get(0..4).and_then(|y| y.parse().ok()).unwrap_or(2025);
    let mut rest = date.get(4..).unwrap_or("-01-01").to_string();
    if rest == "-02-29" {
        rest = "-02-28".into();
    }
    format!("{:04}{rest}", year + by)
}

/// Meeting answers are compared after whitespace collapsing and case folding.
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn wrong_meeting(item: &Item, value: &str, kind: &str, dataset: &Dataset, rng: &mut SplitMix64) -> String {
    let taken: Vec<String> = std::iter::once(value).chain(item.aliases.iter().map(String::as_str)).map(norm).collect();
    let fresh = |s: &&str| !taken.contains(&norm(s));
    // Values of the same kind stated in other notes: the classic confusion of two people or
    // two dates in one meeting.
    let mut same_kind: Vec<&str> = Vec::new();
    let mut any_kind: Vec<&str> = Vec::new();
    for other in dataset.items() {
        if let Gold::Meeting { value: v, kind: k } = &other.gold {
            let values = std::iter::once(v.as_str()).chain(other.aliases.iter().map(String::as_str));
            for v in values.filter(fresh) {
                any_kind.push(v);
                if k == kind {
                    same_kind.push(v);
                }
            }
        }
    }
    let has_digit = value.chars().any(|c| c.is_ascii_digit());
    // A changed digit makes a plausible wrong number, but a wrong date is better taken from
    // another item (changing a digit can produce "March 44").
    let digit_first = has_digit && !kind.contains("date") && (same_kind.is_empty() || rng.below_modulo(2) == 0);
    if digit_first {
        if let Some(v) = change_digit(value, &taken, rng) {
            return v;
        }
    }
    if !same_kind.is_empty() {
        return same_kind[rng.below_modulo(same_kind.len())].to_string();
    }
    if let Some(v) = change_digit(value, &taken, rng) {
        return v;
    }
    if !any_kind.is_empty() {
        return any_kind[rng.below_modulo(any_kind.len())].to_string();
    }
    "unknown".to_string()
}

fn change_digit(value: &str, taken: &[String], rng: &mut SplitMix64) -> Option<String> {
    let digits: Vec<usize> = value.char_indices().filter(|(_, c)| c.is_ascii_digit()).map(|(i, _)| i).collect();
    if digits.is_empty() {
        return None;
    }
    for _ in 0..8 {
        let at = digits[rng.below_modulo(digits.len())];
        let old = value.as_bytes()[at] - b'0';
        // Never turn a leading digit into 0 ("240" -> "040" looks like a typo, not an answer).
        let leading = at == 0 || !value.as_bytes()[at - 1].is_ascii_digit();
        let new = loop {
            let d = rng.below_modulo(10) as u8;
            if d != old && !(leading && d == 0) {
                break d;
            }
        };
        let mut out = value.to_string();
        out.replace_range(at..at + 1, &char::from(b'0' + new).to_string());
        if !taken.contains(&norm(&out)) {
            return Some(out);
        }
    }
    None
}

/// Text split for streaming: each chunk is the decoding of `tokens_per_chunk` consecutive
/// o200k_base tokens (merged with the next when a group ends inside a UTF-8 sequence).
#[derive(Debug, Clone, PartialEq)]
pub struct Chunks {
    /// (text, index one past the chunk's last token).
    pub chunks: Vec<(String, usize)>,
    pub token_count: usize,
}

pub fn tokenize(text: &str, tokens_per_chunk: usize) -> Chunks {
    chunks_of(&tokenizer::encode(text), tokens_per_chunk)
}

fn chunks_of(tokens: &[u32], tokens_per_chunk: usize) -> Chunks {
    let mut chunks = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut end = 0;
    for group in tokens.chunks(tokens_per_chunk.max(1)) {
        end += group.len();
        pending.extend(tokenizer::decode_bytes(group));
        if let Ok(s) = std::str::from_utf8(&pending) {
            chunks.push((s.to_string(), end));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        chunks.push((String::from_utf8_lossy(&pending).into_owned(), end));
    }
    Chunks { chunks, token_count: tokens.len() }
}

/// `n` tokens of plausible low-effort reasoning, chunked like the answer; `typographic`:
/// written with curly quotes, dashes and ellipses (multi-byte characters in every few
/// events, for `split_utf8` providers).
pub fn reasoning(n: usize, tokens_per_chunk: usize, typographic: bool) -> Chunks {
    const THOUGHT: &str = "The user wants a single JSON object and nothing else. Let me find the part of \
        the text that answers the question, check it against the rules, and copy the value exactly \
        as it is written. ";
    const TYPOGRAPHIC: &str = "Right — the user wants a single JSON object and nothing else. Let me find the part of \
        the text that answers the question… check it against the rules, and copy the value exactly \
        as it’s written. ";
    let one = tokenizer::encode(if typographic { TYPOGRAPHIC } else { THOUGHT });
    let tokens: Vec<u32> = one.iter().copied().cycle().take(n).collect();
    chunks_of(&tokens, tokens_per_chunk)
}

/// The answer as a `split_utf8` provider's model writes it: every space a no-break space
/// (U+00A0, two bytes in UTF-8), so the answer events have a character to cut. Rendered
/// answers are compact JSON, so spaces occur only inside meeting-notes values, which are
/// compared after collapsing Unicode whitespace (U+00A0 included): the answer stays correct.
pub fn for_split_utf8(text: &str) -> String {
    text.replace(' ', "\u{a0}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::fixtures;
    use inferbench_contract::family::CONTRACT_FIELDS;
    use inferbench_inputs::dataset::is_iso_date;
    use serde_json::Map;

    fn ds() -> Dataset {
        fixtures::dataset()
    }

    fn item<'a>(ds: &'a Dataset, id: &str) -> &'a Item {
        ds.items().iter().find(|i| i.id == id).unwrap()
    }

    #[test]
    fn correct_answers_render_the_gold() {
        let ds = ds();
        assert_eq!(render(&item(&ds, "m-1").gold), r#"{"answer":"Priya Raman"}"#);
        assert_eq!(render(&item(&ds, "t-1").gold), r#"{"category":"bug","priority":"p1"}"#);
        assert_eq!(
            render(&item(&ds, "c-1").gold),
            r#"{"agreement_type":"saas_subscription","effective_date":"2024-02-29","initial_term_end_date":"2027-02-28","auto_renews":true,"renewal_term_months":12,"non_renewal_notice_days":60,"payment_terms_days":30,"termination_for_convenience":false,"termination_notice_days":null,"security_incident_notice_hours":72}"#
        );
        let mut rng = SplitMix64::new(0);
        assert_eq!(answer(None, true, &ds, &mut rng), UNKNOWN);
        assert_eq!(answer(Some(item(&ds, "t-1")), true, &ds, &mut rng), r#"{"category":"bug","priority":"p1"}"#);
    }

    #[test]
    fn escaping_is_json() {
        let g = Gold::Meeting { value: "Dana \"DJ\" O'Neil".into(), kind: "person".into() };
        let v: Value = serde_json::from_str(&render(&g)).unwrap();
        assert_eq!(v["answer"], "Dana \"DJ\" O'Neil");
    }

    #[test]
    fn wrong_meeting_answers_are_schema_valid_and_wrong() {
        let ds = ds();
        for seed in 0..200 {
            let mut rng = SplitMix64::new(seed);
            for id in ["m-1", "m-2", "m-3"] {
                let it = item(&ds, id);
                let text = answer(Some(it), false, &ds, &mut rng);
                let v: Value = serde_json::from_str(&text).unwrap();
                let obj = v.as_object().unwrap();
                assert_eq!(obj.len(), 1);
                let got = norm(obj["answer"].as_str().unwrap());
                let Gold::Meeting { value, .. } = &it.gold else { panic!() };
                assert_ne!(got, norm(value), "{id} seed {seed}");
                assert!(it.aliases.iter().all(|a| norm(a) != got), "{id} seed {seed}: {got}");
            }
        }
        // A person is confused with another person, never with a number.
        let mut rng = SplitMix64::new(1);
        for _ in 0..50 {
            let Gold::Meeting { value, .. } = wrong_gold(item(&ds, "m-1"), &ds, &mut rng) else { panic!() };
            assert!(["Tomas Lindqvist", "Tomas", "T. Lindqvist", "Tomás Ortega"].contains(&value.as_str()), "{value}");
        }
    }

    #[test]
    fn wrong_numbers_change_a_digit_or_borrow() {
        let ds = ds();
        let mut rng = SplitMix64::new(5);
        let mut changed_digit = false;
        for _ in 0..50 {
            let Gold::Meeting { value, .. } = wrong_gold(item(&ds, "m-3"), &ds, &mut rng) else { panic!() };
            if value.len() == 3 && value.chars().all(|c| c.is_ascii_digit()) {
                assert_ne!(value, "240");
                assert!(!value.starts_with('0'));
                changed_digit = true;
            }
        }
        assert!(changed_digit);
    }

    #[test]
    fn wrong_ticket_changes_exactly_one_enum() {
        let ds = ds();
        let mut rng = SplitMix64::new(3);
        for _ in 0..100 {
            let Gold::Ticket { category, priority } = wrong_gold(item(&ds, "t-1"), &ds, &mut rng) else { panic!() };
            assert!(CATEGORIES.contains(&category.as_str()) && PRIORITIES.contains(&priority.as_str()));
            assert_eq!((category != "bug") as u8 + (priority != "p1") as u8, 1);
        }
    }

    #[test]
    fn wrong_contract_changes_exactly_one_field_and_keeps_types() {
        let ds = ds();
        let Gold::Contract(gold) = &item(&ds, "c-1").gold else { panic!() };
        let mut rng = SplitMix64::new(11);
        let mut fields_hit = std::collections::BTreeSet::new();
        for _ in 0..300 {
            let text = answer(Some(item(&ds, "c-1")), false, &ds, &mut rng);
            let v: Map<String, Value> = serde_json::from_str(&text).unwrap();
            let keys: Vec<&String> = v.keys().collect();
            assert_eq!(keys, CONTRACT_FIELDS);
            let diff: Vec<&String> = v.keys().filter(|k| v[*k] != gold[*k]).collect();
            assert_eq!(diff.len(), 1, "{text}");
            fields_hit.insert(diff[0].clone());
            // Still of the contract's schema: the changed value has its field's type.
            for (key, kind) in contract_fields() {
                let ok = match kind {
                    FieldKind::AgreementType => v[key].as_str().is_some_and(|t| AGREEMENT_TYPES.contains(&t)),
                    FieldKind::Date => v[key].as_str().is_some_and(is_iso_date),
                    FieldKind::Bool => v[key].is_boolean(),
                    FieldKind::IntOrNull => v[key].is_null() || v[key].is_i64(),
                };
                assert!(ok, "{key}: {}", v[key]);
            }
        }
        assert_eq!(fields_hit.len(), 10);
    }

    #[test]
    fn shift_year_keeps_dates_valid() {
        assert_eq!(shift_year("2024-02-29", 1), "2025-02-28");
        assert_eq!(shift_year("2027-02-28", -1), "2026-02-28");
    }

    #[test]
    fn tokenize_groups_real_tokens() {
        let text = r#"{"category":"customer_support","priority":"p2"}"#;
        let one = tokenize(text, 1);
        let three = tokenize(text, 3);
        assert_eq!(one.token_count, tokenizer::count(text));
        assert_eq!(one.chunks.len(), one.token_count);
        assert_eq!(three.chunks.len(), one.token_count.div_ceil(3));
        for c in [&one, &three] {
            assert_eq!(c.chunks.iter().map(|(s, _)| s.as_str()).collect::<String>(), text);
            assert_eq!(c.chunks.last().unwrap().1, c.token_count);
        }
        // Re-encoding the joined text gives the same count: what the client will measure.
        assert!((8..=20).contains(&one.token_count), "{}", one.token_count);
    }

    #[test]
    fn multibyte_text_never_splits_a_character() {
        let text = "{\"answer\":\"Zoë Ångström 東京\"}";
        let c = tokenize(text, 1);
        assert_eq!(c.chunks.iter().map(|(s, _)| s.as_str()).collect::<String>(), text);
    }

    #[test]
    fn reasoning_has_the_requested_length() {
        for typographic in [false, true] {
            let r = reasoning(57, 2, typographic);
            assert_eq!(r.token_count, 57);
            assert_eq!(r.chunks.last().unwrap().1, 57);
            assert_eq!(reasoning(0, 1, typographic).chunks.len(), 0);
        }
        let text: String = reasoning(57, 1, true).chunks.into_iter().map(|(t, _)| t).collect();
        assert!(text.contains('—') && text.contains('…'), "{text}");
    }

    #[test]
    fn split_utf8_answers_are_non_ascii_and_still_correct() {
        let ds = ds();
        let gold = render(&item(&ds, "m-2").gold);
        let text = for_split_utf8(&gold);
        assert!(!text.is_ascii());
        let v: Value = serde_json::from_str(&text).unwrap();
        // What the evaluator compares: whitespace runs collapsed (U+00A0 is whitespace).
        assert_eq!(norm(v["answer"].as_str().unwrap()), "tomas lindqvist");
        // Compact JSON has no spaces outside strings: the other families are unchanged.
        let ticket = render(&item(&ds, "t-1").gold);
        assert_eq!(for_split_utf8(&ticket), ticket);
    }
}
