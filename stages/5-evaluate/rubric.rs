//! The three task rubrics of the reference evaluator (`seed-runner.md` §9.2), as pure
//! functions of the answer text and the item's gold.
//!
//! "Schema-valid" means a strict JSON object with exactly the family's keys and valid types
//! and enum values; "correct" additionally means equal to gold. So a verdict is one of three
//! outcomes, and `schema_valid`/`correct` are derived from it rather than stored beside it,
//! which makes contradictory combinations (correct but schema-invalid) unrepresentable.
use crate::json_strict::{self, Malformed};
use inferbench_contract::family::{AGREEMENT_TYPES, CONTRACT_FIELDS, TICKET_CATEGORIES, TICKET_PRIORITIES};
use inferbench_contract::vocab::{Classification, EvaluationError, TaskFamily as Family};
use inferbench_inputs::dataset::is_iso_date;
use serde_json::{Map, Number, Value};
use std::fmt;

/// Why a 2xx answer is an `invalid_result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidKind {
    MalformedJson,
    SchemaInvalid,
    MissingRequiredField,
}

/// The verdict on one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Schema-valid and equal to gold.
    Valid,
    /// Schema-valid but not equal to gold.
    Incorrect,
    Invalid(InvalidKind),
}

impl Outcome {
    pub fn classification(self) -> Classification {
        match self {
            Outcome::Valid => Classification::ValidResult,
            Outcome::Incorrect => Classification::IncorrectResult,
            Outcome::Invalid(_) => Classification::InvalidResult,
        }
    }

    pub fn error_type(self) -> Option<EvaluationError> {
        match self {
            Outcome::Valid | Outcome::Incorrect => None,
            Outcome::Invalid(InvalidKind::MalformedJson) => Some(EvaluationError::MalformedJson),
            Outcome::Invalid(InvalidKind::SchemaInvalid) => Some(EvaluationError::SchemaInvalid),
            Outcome::Invalid(InvalidKind::MissingRequiredField) => Some(EvaluationError::MissingRequiredField),
        }
    }

    pub fn schema_valid(self) -> bool {
        matches!(self, Outcome::Valid | Outcome::Incorrect)
    }

    pub fn correct(self) -> bool {
        self == Outcome::Valid
    }
}

/// Contract extraction's per-field comparison with gold, in [`CONTRACT_FIELDS`] order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldScore {
    pub flags: Vec<(&'static str, bool)>,
}

impl FieldScore {
    pub fn correct_count(&self) -> usize {
        self.flags.iter().filter(|(_, ok)| *ok).count()
    }

    pub fn total(&self) -> usize {
        self.flags.len()
    }
}

/// Everything the evaluation row needs to know about one 2xx answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: Outcome,
    /// The answer as parsed, when it was strict JSON (any type).
    pub parsed: Option<Value>,
    /// Why it did not parse, for diagnostics.
    pub malformed: Option<Malformed>,
    /// Contract extraction, when the answer was a JSON object (also when it is invalid).
    pub fields: Option<FieldScore>,
}

/// The item's gold contradicts the family's contract; the reference treats this as
/// run-invalidating (`EvaluationContractError`), so the caller refuses the whole input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldError(pub String);

impl fmt::Display for GoldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GoldError {}

/// Scores `answer` (the reconstructed assistant content of a 2xx response) against the gold.
/// The gold is checked first, so bad gold is reported even when the answer is malformed.
pub fn evaluate(family: Family, answer: &str, gold: &Value, aliases: &[String]) -> Result<Verdict, GoldError> {
    match family {
        Family::MeetingNotesLookup => {
            let candidates = meeting_candidates(gold, aliases)?;
            Ok(score(answer, |parsed| (meeting(parsed, &candidates), None)))
        }
        Family::TicketTriage => {
            let (category, priority) = ticket_gold(gold)?;
            Ok(score(answer, |parsed| (ticket(parsed, category, priority), None)))
        }
        Family::ContractTermsExtraction => {
            let gold = contract_gold(gold)?;
            Ok(score(answer, |parsed| contract(parsed, gold)))
        }
        // The stage marks a synthetic answer `not_scored` before it would ask for a rubric.
        Family::Synthetic => Err(GoldError("a synthetic prompt has no gold and no rubric".into())),
    }
}

/// Parses strictly, then applies the family's rubric to the parsed value.
fn score(answer: &str, rubric: impl FnOnce(&Value) -> (Outcome, Option<FieldScore>)) -> Verdict {
    match json_strict::parse(answer) {
        Ok(parsed) => {
            let (outcome, fields) = rubric(&parsed);
            Verdict { outcome, parsed: Some(parsed), malformed: None, fields }
        }
        Err(why) => Verdict {
            outcome: Outcome::Invalid(InvalidKind::MalformedJson),
            parsed: None,
            malformed: Some(why),
            fields: None,
        },
    }
}

// ---------------------------------------------------------------------------------------
// meeting-notes-lookup

/// Python's `str.isspace`, which `str.split()` uses: Unicode White_Space (what
/// `char::is_whitespace` tests, NBSP included) plus the ASCII information separators
/// U+001C..U+001F, which Python counts as whitespace through their bidi class.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The reference's `" ".join(s.strip().split()).casefold()`: collapse every run of Unicode
/// whitespace to one space, drop it at the ends, then apply full Unicode case folding (so
/// `ß` and `SS` compare equal, which `to_lowercase` would not give).
pub fn normalise(text: &str) -> String {
    let words: Vec<&str> = text.split(is_python_space).filter(|w| !w.is_empty()).collect();
    caseless::default_case_fold_str(&words.join(" "))
}

/// The normalised gold answer and aliases. Gold is a string, or an object whose string
/// `value` (else `answer`) is the answer.
fn meeting_candidates(gold: &Value, aliases: &[String]) -> Result<Vec<String>, GoldError> {
    let value = match gold {
        Value::String(s) => s,
        Value::Object(o) => match (o.get("value"), o.get("answer")) {
            (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => s,
            _ => return Err(GoldError("gold: expected a string `value` (or `answer`)".into())),
        },
        _ => return Err(GoldError("gold: expected a string or an object with a string `value`".into())),
    };
    Ok(std::iter::once(value).chain(aliases).map(|c| normalise(c)).collect())
}

fn meeting(parsed: &Value, candidates: &[String]) -> Outcome {
    let Some(object) = parsed.as_object() else {
        return Outcome::Invalid(InvalidKind::SchemaInvalid);
    };
    let Some(answer) = object.get("answer") else {
        return Outcome::Invalid(InvalidKind::MissingRequiredField);
    };
    let (Value::String(answer), 1) = (answer, object.len()) else {
        return Outcome::Invalid(InvalidKind::SchemaInvalid);
    };
    if candidates.contains(&normalise(answer)) {
        Outcome::Valid
    } else {
        Outcome::Incorrect
    }
}

// ---------------------------------------------------------------------------------------
// ticket-triage

fn ticket_gold(gold: &Value) -> Result<(&str, &str), GoldError> {
    let field = |name: &str, allowed: &[&str]| {
        gold.get(name)
            .and_then(Value::as_str)
            .filter(|v| allowed.contains(v))
            .ok_or_else(|| GoldError(format!("gold.{name}: expected one of {allowed:?}")))
    };
    Ok((field("category", &TICKET_CATEGORIES)?, field("priority", &TICKET_PRIORITIES)?))
}

fn ticket(parsed: &Value, gold_category: &str, gold_priority: &str) -> Outcome {
    let Some(object) = parsed.as_object() else {
        return Outcome::Invalid(InvalidKind::SchemaInvalid);
    };
    let (Some(category), Some(priority)) = (object.get("category"), object.get("priority")) else {
        return Outcome::Invalid(InvalidKind::MissingRequiredField);
    };
    // Enums are case-sensitive: `"Bug"` is not a category.
    let in_enum = |v: &Value, allowed: &[&str]| v.as_str().is_some_and(|s| allowed.contains(&s));
    if object.len() != 2 || !in_enum(category, &TICKET_CATEGORIES) || !in_enum(priority, &TICKET_PRIORITIES) {
        return Outcome::Invalid(InvalidKind::SchemaInvalid);
    }
    if category == gold_category && priority == gold_priority {
        Outcome::Valid
    } else {
        Outcome::Incorrect
    }
}

// ---------------------------------------------------------------------------------------
// contract-terms-extraction

/// The type table of §9: whether `value` is a valid value of contract field `field`.
fn field_valid(field: &str, value: &Value) -> bool {
    match field {
        "agreement_type" => value.as_str().is_some_and(|t| AGREEMENT_TYPES.contains(&t)),
        "effective_date" | "initial_term_end_date" => value.as_str().is_some_and(is_iso_date),
        "auto_renews" | "termination_for_convenience" => value.is_boolean(),
        // The five `int | null` fields: a JSON integer (not a float such as `12.0`, not a
        // boolean) or null.
        _ => value.is_null() || value.is_i64() || value.is_u64(),
    }
}

/// Gold must be an object holding a valid value for every field; otherwise no answer could
/// ever be both schema-valid and correct.
fn contract_gold(gold: &Value) -> Result<&Map<String, Value>, GoldError> {
    let object = gold.as_object().ok_or_else(|| GoldError("gold: expected an object".into()))?;
    for field in CONTRACT_FIELDS {
        match object.get(field) {
            Some(v) if field_valid(field, v) => {}
            Some(v) => return Err(GoldError(format!("gold.{field}: {v} is not a valid value"))),
            None => return Err(GoldError(format!("gold.{field}: missing"))),
        }
    }
    if let Some(extra) = object.keys().find(|k| !CONTRACT_FIELDS.contains(&k.as_str())) {
        return Err(GoldError(format!("gold.{extra}: not a contract field")));
    }
    Ok(object)
}

/// An integer as i128 (every i64 and u64 fits), for exact mixed comparisons.
fn integer(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// CPython's numeric `==`: exact, also between an integer and a float (`12 == 12.0`, but
/// `2**64 - 1 != 1.8446744073709552e19`).
fn numbers_equal(a: &Number, b: &Number) -> bool {
    let int_float = |i: i128, f: f64| {
        // Every f64 with no fraction and |f| < 2^127 converts to i128 exactly.
        f.is_finite() && f.fract() == 0.0 && f.abs() < 2f64.powi(127) && f as i128 == i
    };
    match (integer(a), integer(b), a.as_f64(), b.as_f64()) {
        (Some(x), Some(y), _, _) => x == y,
        (Some(x), None, _, Some(f)) | (None, Some(x), Some(f), _) => int_float(x, f),
        (None, None, Some(f), Some(g)) => f == g,
        _ => false,
    }
}

/// The field flag's equality: same JSON kind and equal value. Only numbers compare across
/// representations; a boolean never equals a number (unlike Python's `True == 1`, the
/// reference compares kinds first).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => numbers_equal(x, y),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => false,
    }
}

fn contract(parsed: &Value, gold: &Map<String, Value>) -> (Outcome, Option<FieldScore>) {
    let Some(object) = parsed.as_object() else {
        return (Outcome::Invalid(InvalidKind::SchemaInvalid), None);
    };
    let (mut missing, mut invalid) = (false, false);
    let mut flags = Vec::with_capacity(CONTRACT_FIELDS.len());
    for field in CONTRACT_FIELDS {
        let flag = match object.get(field) {
            None => {
                missing = true;
                false
            }
            Some(value) => {
                invalid |= !field_valid(field, value);
                // `contract_gold` checked that every field is present.
                gold.get(field).is_some_and(|g| json_equal(value, g))
            }
        };
        flags.push((field, flag));
    }
    let extra = object.keys().any(|k| !CONTRACT_FIELDS.contains(&k.as_str()));
    let fields = FieldScore { flags };
    let outcome = if missing {
        Outcome::Invalid(InvalidKind::MissingRequiredField)
    } else if invalid || extra {
        Outcome::Invalid(InvalidKind::SchemaInvalid)
    } else if fields.correct_count() == fields.total() {
        Outcome::Valid
    } else {
        Outcome::Incorrect
    };
    (outcome, Some(fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MALFORMED: Outcome = Outcome::Invalid(InvalidKind::MalformedJson);
    const SCHEMA: Outcome = Outcome::Invalid(InvalidKind::SchemaInvalid);
    const MISSING: Outcome = Outcome::Invalid(InvalidKind::MissingRequiredField);

    fn meeting_gold() -> Value {
        json!({"type": "person", "value": "Augusta King"})
    }

    fn meet(answer: &str) -> Verdict {
        evaluate(Family::MeetingNotesLookup, answer, &meeting_gold(), &["Ada Lovelace".to_string()]).unwrap()
    }

    fn triage(answer: &str) -> Verdict {
        evaluate(Family::TicketTriage, answer, &json!({"category": "bug", "priority": "p2"}), &[]).unwrap()
    }

    /// The reference's conftest gold.
    fn contract_gold_value() -> Value {
        json!({"agreement_type": "saas_subscription", "effective_date": "2026-01-01",
            "initial_term_end_date": "2026-12-31", "auto_renews": true, "renewal_term_months": 12,
            "non_renewal_notice_days": 30, "payment_terms_days": 30, "termination_for_convenience": false,
            "termination_notice_days": null, "security_incident_notice_hours": 24})
    }

    /// The gold answer with `field` replaced (or removed, for `None`) and extra keys added.
    fn contract_answer(changes: &[(&str, Option<Value>)]) -> String {
        let mut answer = contract_gold_value();
        let object = answer.as_object_mut().unwrap();
        for (field, value) in changes {
            match value {
                Some(v) => object.insert(field.to_string(), v.clone()),
                None => object.shift_remove(*field),
            };
        }
        answer.to_string()
    }

    fn extract(answer: &str) -> Verdict {
        evaluate(Family::ContractTermsExtraction, answer, &contract_gold_value(), &[]).unwrap()
    }

    fn flag(verdict: &Verdict, field: &str) -> bool {
        let fields = verdict.fields.as_ref().expect("field scores");
        fields.flags.iter().find(|(f, _)| *f == field).unwrap().1
    }

    #[test]
    fn outcome_accessors_follow_the_taxonomy() {
        assert_eq!((Outcome::Valid.classification().as_str(), Outcome::Valid.error_type()), ("valid_result", None));
        assert!(Outcome::Valid.schema_valid() && Outcome::Valid.correct());
        assert!(Outcome::Incorrect.schema_valid() && !Outcome::Incorrect.correct());
        assert_eq!(Outcome::Incorrect.classification().as_str(), "incorrect_result");
        assert_eq!(
            (SCHEMA.classification().as_str(), SCHEMA.error_type().map(EvaluationError::as_str)),
            ("invalid_result", Some("schema_invalid"))
        );
        assert_eq!(MISSING.error_type(), Some(EvaluationError::MissingRequiredField));
        assert_eq!(MALFORMED.error_type(), Some(EvaluationError::MalformedJson));
        assert!(!MALFORMED.schema_valid() && !MALFORMED.correct());
    }

    #[test]
    fn malformed_answers_are_malformed_json_in_every_family() {
        let dup_nested = r#"{"answer":{"a":1,"a":2}}"#;
        for answer in [
            "",
            "  \n",
            "```json\n{\"answer\":\"Ada Lovelace\"}\n```",
            "{} {}",
            "NaN",
            r#"{"answer":"a","answer":"b"}"#,
            dup_nested,
        ] {
            for verdict in [meet(answer), triage(answer), extract(answer)] {
                assert_eq!(verdict.outcome, MALFORMED, "{answer:?}");
                assert_eq!((verdict.parsed.is_some(), verdict.fields.is_some()), (false, false), "{answer:?}");
                assert!(verdict.malformed.is_some());
            }
        }
    }

    #[test]
    fn meeting_alias_matches_after_trimming_spacing_and_case() {
        // seed-runner.md §11: gold "Augusta King", alias "Ada Lovelace".
        let verdict = meet("\n {\"answer\": \"  ADA   LOVELACE \"} \t");
        assert_eq!(verdict.outcome, Outcome::Valid);
        assert_eq!(verdict.parsed, Some(json!({"answer": "  ADA   LOVELACE "})));
        assert_eq!(verdict.fields, None);
        assert_eq!(meet(r#"{"answer":"augusta king"}"#).outcome, Outcome::Valid);
        assert_eq!(meet(r#"{"answer":"Charles Babbage"}"#).outcome, Outcome::Incorrect);
        // Whitespace inside a word is not removed.
        assert_eq!(meet(r#"{"answer":"Ada Love lace"}"#).outcome, Outcome::Incorrect);
    }

    #[test]
    fn meeting_nbsp_and_other_unicode_spaces_normalise() {
        assert_eq!(meet("{\"answer\":\"Ada\\u00a0Lovelace\"}").outcome, Outcome::Valid);
        assert_eq!(meet("{\"answer\":\"\u{3000}Ada\u{a0}\u{2009}Lovelace\u{2028}\"}").outcome, Outcome::Valid);
        assert_eq!(normalise("Ada\u{1f}\u{85}Lovelace"), "ada lovelace");
    }

    #[test]
    fn whitespace_set_is_pythons_str_isspace() {
        // `[c for c in range(0x110000) if chr(c).isspace()]` under CPython 3.11.
        let python: Vec<u32> = [0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680]
            .into_iter()
            .chain(0x2000..=0x200a)
            .chain([0x2028, 0x2029, 0x202f, 0x205f, 0x3000])
            .collect();
        let ours: Vec<u32> =
            (0..=0x10ffff).filter_map(char::from_u32).filter(|c| is_python_space(*c)).map(u32::from).collect();
        assert_eq!(ours, python);
    }

    #[test]
    fn meeting_comparison_uses_full_case_folding() {
        assert_eq!(normalise("straße"), normalise("STRASSE"));
        assert_eq!(normalise("straße"), "strasse");
        let gold = json!({"type": "place", "value": "Straße"});
        let verdict = evaluate(Family::MeetingNotesLookup, r#"{"answer":"STRASSE"}"#, &gold, &[]).unwrap();
        assert_eq!(verdict.outcome, Outcome::Valid);
    }

    #[test]
    fn meeting_gold_may_be_a_string_or_carry_answer() {
        for gold in [json!("Augusta King"), json!({"answer": "Augusta King"})] {
            let verdict = evaluate(Family::MeetingNotesLookup, r#"{"answer":"AUGUSTA KING"}"#, &gold, &[]).unwrap();
            assert_eq!(verdict.outcome, Outcome::Valid, "{gold}");
        }
    }

    #[test]
    fn meeting_schema_violations() {
        assert_eq!(meet(r#"{"answer":1}"#).outcome, SCHEMA);
        assert_eq!(meet(r#"{"answer":null}"#).outcome, SCHEMA);
        assert_eq!(meet(r#"{"answer":"Ada Lovelace","confidence":1}"#).outcome, SCHEMA);
        assert_eq!(meet(r#"["Ada Lovelace"]"#).outcome, SCHEMA);
        assert_eq!(meet(r#""Ada Lovelace""#).outcome, SCHEMA);
        assert_eq!(meet(r#"{}"#).outcome, MISSING);
        // A missing answer takes precedence over extra keys.
        assert_eq!(meet(r#"{"name":"Ada Lovelace"}"#).outcome, MISSING);
        // A parsed non-object is still recorded.
        assert_eq!(meet("[1]").parsed, Some(json!([1])));
    }

    #[test]
    fn ticket_rubric_is_exact_and_case_sensitive() {
        assert_eq!(triage(r#"{"priority":"p2","category":"bug"}"#).outcome, Outcome::Valid);
        let wrong = triage(r#"{"category":"bug","priority":"p1"}"#);
        assert_eq!(wrong.outcome, Outcome::Incorrect);
        assert!(wrong.outcome.schema_valid() && !wrong.outcome.correct());
        assert_eq!(triage(r#"{"category":"Bug","priority":"p2"}"#).outcome, SCHEMA);
        assert_eq!(triage(r#"{"category":"bug","priority":"P2"}"#).outcome, SCHEMA);
        assert_eq!(triage(r#"{"category":"bug","priority":2}"#).outcome, SCHEMA);
        assert_eq!(triage(r#"{"category":"bug","priority":"p2","reason":"x"}"#).outcome, SCHEMA);
        assert_eq!(triage(r#"{"category":"bug"}"#).outcome, MISSING);
        assert_eq!(triage(r#"["bug","p2"]"#).outcome, SCHEMA);
    }

    #[test]
    fn contract_fully_correct_is_valid_with_ten_fields() {
        let verdict = extract(&contract_answer(&[]));
        assert_eq!(verdict.outcome, Outcome::Valid);
        let fields = verdict.fields.unwrap();
        assert_eq!((fields.correct_count(), fields.total()), (10, 10));
        assert!(fields.flags.iter().any(|(f, ok)| *f == "termination_notice_days" && *ok));
    }

    #[test]
    fn contract_boolean_in_an_integer_field_is_invalid_with_nine_correct() {
        let verdict = extract(&contract_answer(&[("renewal_term_months", Some(json!(true)))]));
        assert_eq!(verdict.outcome, SCHEMA);
        assert!(!flag(&verdict, "renewal_term_months"));
        assert_eq!(verdict.fields.as_ref().unwrap().correct_count(), 9);
    }

    #[test]
    fn contract_extra_key_is_invalid_but_fields_still_count() {
        let verdict = extract(&contract_answer(&[("notes", Some(json!("none")))]));
        assert_eq!(verdict.outcome, SCHEMA);
        assert_eq!(verdict.fields.unwrap().correct_count(), 10);
    }

    #[test]
    fn contract_float_equals_integer_for_the_flag_but_is_not_an_integer() {
        // Built by hand: serde_json's `json!(12.0)` would also print `12.0`, but be explicit.
        let answer = contract_answer(&[]).replace("\"renewal_term_months\":12", "\"renewal_term_months\":12.0");
        assert!(answer.contains("12.0"));
        let verdict = extract(&answer);
        assert_eq!(verdict.outcome, SCHEMA);
        assert!(flag(&verdict, "renewal_term_months"));
        assert_eq!(verdict.fields.unwrap().correct_count(), 10);
    }

    #[test]
    fn contract_impossible_date_is_invalid() {
        let gold = contract_gold_value();
        let mut answer = gold.clone();
        answer["effective_date"] = json!("2024-02-30");
        let verdict = evaluate(Family::ContractTermsExtraction, &answer.to_string(), &gold, &[]).unwrap();
        assert_eq!(verdict.outcome, SCHEMA);
        assert!(!flag(&verdict, "effective_date"));
        // A non-canonical spelling of a real date is invalid too.
        assert_eq!(extract(&contract_answer(&[("effective_date", Some(json!("2026-1-01")))])).outcome, SCHEMA);
    }

    #[test]
    fn contract_missing_field_wins_over_invalid_and_wrong_values_are_incorrect() {
        let verdict = extract(&contract_answer(&[("payment_terms_days", None), ("auto_renews", Some(json!("yes")))]));
        assert_eq!(verdict.outcome, MISSING);
        assert_eq!(verdict.fields.unwrap().correct_count(), 8);
        let wrong = extract(&contract_answer(&[
            ("payment_terms_days", Some(json!(45))),
            ("termination_notice_days", Some(json!(30))),
        ]));
        assert_eq!(wrong.outcome, Outcome::Incorrect);
        assert_eq!(wrong.fields.unwrap().correct_count(), 8);
        let unknown_type = extract(&contract_answer(&[("agreement_type", Some(json!("lease")))]));
        assert_eq!(unknown_type.outcome, SCHEMA);
    }

    #[test]
    fn contract_non_object_has_no_field_counts() {
        let verdict = extract("[]");
        assert_eq!(verdict.outcome, SCHEMA);
        assert_eq!(verdict.fields, None);
        assert_eq!(verdict.parsed, Some(json!([])));
    }

    #[test]
    fn numeric_equality_is_exact_across_representations() {
        let n = |text: &str| match serde_json::from_str::<Value>(text).unwrap() {
            Value::Number(n) => n,
            other => panic!("{other}"),
        };
        assert!(numbers_equal(&n("12"), &n("12.0")));
        assert!(numbers_equal(&n("1e2"), &n("100")));
        assert!(!numbers_equal(&n("12"), &n("12.5")));
        assert!(!numbers_equal(&n("18446744073709551615"), &n("1.8446744073709552e19")));
        assert!(numbers_equal(&n("-3"), &n("-3")));
        assert!(!json_equal(&json!(true), &json!(1)));
        assert!(!json_equal(&json!(null), &json!(0)));
        assert!(!json_equal(&json!("12"), &json!(12)));
    }

    #[test]
    fn contradictory_gold_is_an_error_even_for_malformed_answers() {
        let bad_ticket = json!({"category": "Bug", "priority": "p2"});
        let err = evaluate(Family::TicketTriage, "", &bad_ticket, &[]).unwrap_err();
        assert!(err.0.starts_with("gold.category"), "{err}");
        let mut bad_contract = contract_gold_value();
        bad_contract["renewal_term_months"] = json!(12.0);
        assert!(evaluate(Family::ContractTermsExtraction, "{}", &bad_contract, &[]).is_err());
        bad_contract.as_object_mut().unwrap().shift_remove("renewal_term_months");
        assert_eq!(
            evaluate(Family::ContractTermsExtraction, "{}", &bad_contract, &[]).unwrap_err().0,
            "gold.renewal_term_months: missing"
        );
        assert!(evaluate(Family::MeetingNotesLookup, "{}", &json!({"type": "person"}), &[]).is_err());
        assert!(evaluate(Family::MeetingNotesLookup, "{}", &json!(3), &[]).is_err());
    }

    #[test]
    fn family_names_round_trip_with_the_spec() {
        for name in inferbench_inputs::spec::FAMILIES {
            assert!(name.parse::<Family>().is_ok(), "{name}");
        }
        assert!("Ticket-Triage".parse::<Family>().is_err());
    }
}
