//! The dataset in the reference format (seed-runner.md §3), read only for what the simulator
//! needs: each item's user prompt (to recognise a request), its gold and its aliases (to
//! answer right or plausibly wrong). The full validation of the format is `ib-select`'s job;
//! here a row is rejected only when the simulator could not answer it.
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    Meeting,
    Ticket,
    Contract,
}

impl Family {
    pub const ALL: [Family; 3] = [Family::Meeting, Family::Ticket, Family::Contract];

    pub fn name(self) -> &'static str {
        match self {
            Family::Meeting => "meeting-notes-lookup",
            Family::Ticket => "ticket-triage",
            Family::Contract => "contract-terms-extraction",
        }
    }
}

pub const CATEGORIES: [&str; 4] = ["bug", "feature", "improvement", "customer_support"];
pub const PRIORITIES: [&str; 4] = ["p0", "p1", "p2", "p3"];
pub const AGREEMENT_TYPES: [&str; 4] =
    ["saas_subscription", "software_license", "support_maintenance", "technology_services"];

/// The contract fields in the order the model is asked to emit them, with their kind.
pub const CONTRACT_FIELDS: [(&str, FieldKind); 10] = [
    ("agreement_type", FieldKind::AgreementType),
    ("effective_date", FieldKind::Date),
    ("initial_term_end_date", FieldKind::Date),
    ("auto_renews", FieldKind::Bool),
    ("renewal_term_months", FieldKind::IntOrNull),
    ("non_renewal_notice_days", FieldKind::IntOrNull),
    ("payment_terms_days", FieldKind::IntOrNull),
    ("termination_for_convenience", FieldKind::Bool),
    ("termination_notice_days", FieldKind::IntOrNull),
    ("security_incident_notice_hours", FieldKind::IntOrNull),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    AgreementType,
    Date,
    Bool,
    IntOrNull,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Gold {
    /// `kind` is the gold's `type` (person, date, number…), used to pick a wrong answer of
    /// the same kind.
    Meeting {
        value: String,
        kind: String,
    },
    Ticket {
        category: String,
        priority: String,
    },
    /// The ten fields, in [`CONTRACT_FIELDS`] order.
    Contract(Map<String, Value>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: String,
    pub family: Family,
    pub gold: Gold,
    pub aliases: Vec<String>,
}

/// A dataset file that cannot be used. Exit code 3 (bad input).
#[derive(Debug)]
pub struct DatasetError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for DatasetError {}

#[derive(Debug, Default)]
pub struct Dataset {
    items: Vec<Item>,
    by_user: HashMap<String, usize>,
    /// Items whose user prompt repeats an earlier item's: the earlier one answers.
    pub shadowed: Vec<String>,
}

impl Dataset {
    /// Reads `<dir>/<family>.jsonl` for the three families.
    pub fn load(dir: &Path) -> Result<Dataset, DatasetError> {
        let mut ds = Dataset::default();
        for family in Family::ALL {
            let file = dir.join(format!("{}.jsonl", family.name()));
            let text = std::fs::read_to_string(&file).map_err(|e| DatasetError {
                file: file.clone(),
                line: None,
                message: format!("cannot read: {e}"),
            })?;
            for (i, line) in text.lines().enumerate() {
                let (user, item) = parse_row(line, family).map_err(|message| DatasetError {
                    file: file.clone(),
                    line: Some(i + 1),
                    message,
                })?;
                ds.insert(user, item);
            }
        }
        Ok(ds)
    }

    fn insert(&mut self, user: String, item: Item) {
        if self.by_user.contains_key(&user) {
            self.shadowed.push(item.id.clone());
        } else {
            self.by_user.insert(user, self.items.len());
        }
        self.items.push(item);
    }

    /// The item whose `prompt.user` is exactly `user`.
    pub fn lookup(&self, user: &str) -> Option<&Item> {
        self.by_user.get(user).map(|&i| &self.items[i])
    }

    pub fn items(&self) -> &[Item] {
        &self.items
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    #[cfg(test)]
    pub fn from_rows(rows: &[(Family, &str)]) -> Dataset {
        let mut ds = Dataset::default();
        for (family, row) in rows {
            let (user, item) = parse_row(row, *family).unwrap();
            ds.insert(user, item);
        }
        ds
    }
}

/// One JSONL row -> (user prompt, item). Errors name the field.
fn parse_row(line: &str, family: Family) -> Result<(String, Item), String> {
    let row: Value = serde_json::from_str(line).map_err(|e| format!("not valid JSON: {e}"))?;
    let row = row.as_object().ok_or("a row must be a JSON object")?;
    let id = string_at(row, "id")?;
    if id.is_empty() {
        return Err("id: must be a non-empty string".into());
    }
    let at = |msg: String| format!("{id}: {msg}");
    let use_case = string_at(row, "use_case").map_err(at)?;
    if use_case != family.name() {
        return Err(at(format!("use_case: \"{use_case}\" in the file of {}", family.name())));
    }
    let user = row
        .get("prompt")
        .and_then(|p| p.get("user"))
        .and_then(Value::as_str)
        .ok_or_else(|| at("prompt.user: missing or not a string".into()))?;
    let aliases = match row.get("aliases") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| at("aliases: must be a list of strings".into()))?,
        // Aliases matter only for meeting answers; other families' aliases are not read.
        Some(_) if family != Family::Meeting => Vec::new(),
        Some(_) => return Err(at("aliases: must be a list of strings".into())),
    };
    let gold = row.get("gold").ok_or_else(|| at("gold: missing".into()))?;
    let gold = parse_gold(gold, family).map_err(|m| at(format!("gold.{m}")))?;
    Ok((user.to_string(), Item { id: id.to_string(), family, gold, aliases }))
}

fn string_at<'a>(row: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    row.get(key).and_then(Value::as_str).ok_or_else(|| format!("{key}: missing or not a string"))
}

fn parse_gold(gold: &Value, family: Family) -> Result<Gold, String> {
    let obj = gold.as_object().ok_or("must be an object")?;
    match family {
        Family::Meeting => {
            let value = obj.get("value").and_then(Value::as_str).ok_or("value: missing or not a string")?;
            let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
            Ok(Gold::Meeting { value: value.into(), kind: kind.into() })
        }
        Family::Ticket => {
            let pick = |key: &str, allowed: &[&str]| -> Result<String, String> {
                match obj.get(key).and_then(Value::as_str) {
                    Some(v) if allowed.contains(&v) => Ok(v.into()),
                    other => Err(format!("{key}: {other:?} is not one of {allowed:?}")),
                }
            };
            Ok(Gold::Ticket { category: pick("category", &CATEGORIES)?, priority: pick("priority", &PRIORITIES)? })
        }
        Family::Contract => {
            let mut out = Map::new();
            for (key, kind) in CONTRACT_FIELDS {
                let v = obj.get(key).ok_or_else(|| format!("{key}: missing"))?;
                let ok = match kind {
                    FieldKind::AgreementType => v.as_str().is_some_and(|s| AGREEMENT_TYPES.contains(&s)),
                    FieldKind::Date => v.as_str().is_some_and(is_iso_date),
                    FieldKind::Bool => v.is_boolean(),
                    FieldKind::IntOrNull => v.is_null() || v.is_i64() || v.is_u64(),
                };
                if !ok {
                    return Err(format!("{key}: {v} is not a valid {kind:?}"));
                }
                out.insert(key.into(), v.clone());
            }
            if let Some(extra) = obj.keys().find(|k| !CONTRACT_FIELDS.iter().any(|(f, _)| f == k)) {
                return Err(format!("{extra}: not a contract field"));
            }
            Ok(Gold::Contract(out))
        }
    }
}

/// `YYYY-MM-DD` with a real calendar date.
pub fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| {
        s[r].parse::<u32>().ok().filter(|_| b.iter().all(|c| c.is_ascii_digit() || *c == b'-'))
    };
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d)) => (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m),
        _ => false,
    }
}

pub fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
pub mod fixtures {
    //! A tiny dataset in the reference format, shared by the tests of several modules.
    use super::Family;

    pub const MEETING: [&str; 3] = [
        r#"{"id":"m-1","use_case":"meeting-notes-lookup","split":"private","prompt":{"system":"s","user":"Notes 1. Who owns the launch?"},"gold":{"type":"person","value":"Priya Raman"},"aliases":["Priya"]}"#,
        r#"{"id":"m-2","use_case":"meeting-notes-lookup","split":"private","prompt":{"system":"s","user":"Notes 2. Who signs off?"},"gold":{"type":"person","value":"Tomas Lindqvist"},"aliases":["Tomas","T. Lindqvist"]}"#,
        r#"{"id":"m-3","use_case":"meeting-notes-lookup","split":"private","prompt":{"system":"s","user":"Notes 3. How many seats?"},"gold":{"type":"number","value":"240"},"aliases":["240 seats"]}"#,
    ];
    pub const TICKET: &str = r#"{"id":"t-1","use_case":"ticket-triage","split":"private","prompt":{"system":"s","user":"The export button crashes the app."},"gold":{"category":"bug","priority":"p1"},"aliases":[]}"#;
    pub const CONTRACT: &str = r#"{"id":"c-1","use_case":"contract-terms-extraction","split":"private","prompt":{"system":"s","user":"MASTER SUBSCRIPTION AGREEMENT ..."},"gold":{"agreement_type":"saas_subscription","effective_date":"2024-02-29","initial_term_end_date":"2027-02-28","auto_renews":true,"renewal_term_months":12,"non_renewal_notice_days":60,"payment_terms_days":30,"termination_for_convenience":false,"termination_notice_days":null,"security_incident_notice_hours":72},"aliases":[]}"#;

    pub fn rows() -> Vec<(Family, &'static str)> {
        let mut rows: Vec<(Family, &str)> = MEETING.iter().map(|r| (Family::Meeting, *r)).collect();
        rows.push((Family::Ticket, TICKET));
        rows.push((Family::Contract, CONTRACT));
        rows
    }

    /// Writes the three files into `dir`.
    pub fn write(dir: &std::path::Path) {
        for family in Family::ALL {
            let lines: Vec<&str> = rows().into_iter().filter(|(f, _)| *f == family).map(|(_, r)| r).collect();
            std::fs::write(dir.join(format!("{}.jsonl", family.name())), lines.join("\n") + "\n").unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_the_three_files_and_indexes_by_user_text() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::write(dir.path());
        let ds = Dataset::load(dir.path()).unwrap();
        assert_eq!(ds.len(), 5);
        let item = ds.lookup("Notes 2. Who signs off?").unwrap();
        assert_eq!(item.id, "m-2");
        assert_eq!(item.aliases, ["Tomas", "T. Lindqvist"]);
        assert!(ds.lookup("Notes 2. Who signs off? ").is_none(), "exact text only");
        let Gold::Contract(c) = &ds.lookup("MASTER SUBSCRIPTION AGREEMENT ...").unwrap().gold else { panic!() };
        assert_eq!(c.keys().next().unwrap(), "agreement_type");
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        fixtures::write(dir.path());
        let path = dir.path().join("ticket-triage.jsonl");
        let bad = fixtures::TICKET.replace(r#""priority":"p1""#, r#""priority":"P1""#);
        std::fs::write(&path, format!("{}\n{bad}\n", fixtures::TICKET.replace("t-1", "t-0"))).unwrap();
        let e = Dataset::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("ticket-triage.jsonl:2: t-1: gold.priority"), "{e}");

        std::fs::write(&path, "\n").unwrap();
        let e = Dataset::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("ticket-triage.jsonl:1: not valid JSON"), "{e}");

        std::fs::remove_file(&path).unwrap();
        let e = Dataset::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("ticket-triage.jsonl: cannot read"), "{e}");
    }

    #[test]
    fn contract_gold_is_checked() {
        for (from, to, want) in [
            (r#""2024-02-29""#, r#""2023-02-29""#, "effective_date"),
            (r#""auto_renews":true"#, r#""auto_renews":"yes""#, "auto_renews"),
            (r#""payment_terms_days":30"#, r#""payment_terms_days":30.5"#, "payment_terms_days"),
            (r#""renewal_term_months":12,"#, "", "renewal_term_months: missing"),
        ] {
            let e = parse_row(&fixtures::CONTRACT.replace(from, to), Family::Contract).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        let e = parse_row(fixtures::CONTRACT, Family::Ticket).unwrap_err();
        assert!(e.contains("use_case"), "{e}");
    }

    #[test]
    fn iso_dates() {
        assert!(is_iso_date("2024-02-29"));
        assert!(!is_iso_date("2023-02-29"));
        assert!(!is_iso_date("2024-13-01"));
        assert!(!is_iso_date("2024-1-01"));
        assert!(!is_iso_date("+024-01-01"));
    }

    #[test]
    fn repeated_user_text_keeps_the_first_item() {
        let dup = fixtures::TICKET.replace("t-1", "t-2");
        let ds = Dataset::from_rows(&[(Family::Ticket, fixtures::TICKET), (Family::Ticket, &dup)]);
        assert_eq!(ds.lookup("The export button crashes the app.").unwrap().id, "t-1");
        assert_eq!(ds.shadowed, ["t-2"]);
    }
}
