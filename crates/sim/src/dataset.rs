//! The dataset, loaded and validated by the contract's loader (so the simulator accepts
//! exactly the datasets the pipeline accepts), plus what only the simulator needs: each
//! item's gold in a typed form (to answer it right or plausibly wrong) and a lookup by user
//! prompt (to recognise a request).
use inferbench_contract::family;
use inferbench_inputs::dataset::{self as contract, LoadOptions};
use inferbench_inputs::spec::Spec;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;

pub use family::{AGREEMENT_TYPES, TICKET_CATEGORIES as CATEGORIES, TICKET_PRIORITIES as PRIORITIES};

/// How a wrong contract value is made, by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    AgreementType,
    Date,
    Bool,
    IntOrNull,
}

/// The contract fields in the order the model is asked to emit them (the contract's order),
/// with their kind.
pub fn contract_fields() -> impl Iterator<Item = (&'static str, FieldKind)> {
    family::CONTRACT_FIELDS.into_iter().map(|name| {
        let kind = match name {
            "agreement_type" => FieldKind::AgreementType,
            "effective_date" | "initial_term_end_date" => FieldKind::Date,
            "auto_renews" | "termination_for_convenience" => FieldKind::Bool,
            _ => FieldKind::IntOrNull,
        };
        (name, kind)
    })
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
    /// The ten fields, in the contract's order.
    Contract(Map<String, Value>),
}

impl Gold {
    /// The typed view of a gold the contract's loader has validated: no checks here.
    fn of(family: &str, gold: &Value) -> Gold {
        let text = |key: &str| match &gold[key] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match family {
            "meeting-notes-lookup" => Gold::Meeting { value: text("value"), kind: text("type") },
            "ticket-triage" => Gold::Ticket { category: text("category"), priority: text("priority") },
            _ => Gold::Contract(gold.as_object().cloned().unwrap_or_default()),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: String,
    pub gold: Gold,
    pub aliases: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Dataset {
    items: Vec<Item>,
    by_user: HashMap<String, usize>,
    /// Items whose user prompt repeats an earlier item's: the earlier one answers.
    pub shadowed: Vec<String>,
}

impl Dataset {
    /// Loads `dir` with the contract's loader against `spec`. A sample smaller than the
    /// spec's counts is accepted, as with `--sample` in the pipeline.
    pub fn load(dir: &Path, spec: &Spec) -> inferbench_contract::Result<Dataset> {
        let ds = contract::load(dir, spec, LoadOptions { sample: true })?;
        Ok(Dataset::from_items(ds.items.values().flatten()))
    }

    /// Indexes items (in spec family order, each family in file order).
    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a contract::Item>) -> Dataset {
        let mut ds = Dataset::default();
        for item in items {
            let sim = Item {
                id: item.id.clone(),
                gold: Gold::of(item.family.as_str(), &item.gold),
                aliases: item.aliases.clone(),
            };
            if ds.by_user.contains_key(&item.user) {
                ds.shadowed.push(sim.id.clone());
            } else {
                ds.by_user.insert(item.user.clone(), ds.items.len());
            }
            ds.items.push(sim);
        }
        ds
    }

    /// The item whose `prompt.user` is exactly `user`.
    pub fn lookup(&self, user: &str) -> Option<&Item> {
        self.by_user.get(user).map(|&i| &self.items[i])
    }

    pub fn items(&self) -> &[Item] {
        &self.items
    }
}

#[cfg(any(test, feature = "testutil"))]
pub mod fixtures {
    //! A tiny dataset of contract items, shared by the tests of this crate and of `ib-sim`
    //! (through the `testutil` feature). Built directly (the contract's loader and its
    //! validation are tested in the contract crate and by this module's tests on the real
    //! sample).
    use super::Dataset;
    use inferbench_inputs::dataset::Item;
    use serde_json::{json, Value};

    fn item(id: &str, family: &str, user: &str, gold: Value, aliases: &[&str]) -> Item {
        Item {
            id: id.into(),
            family: family.parse().unwrap(),
            system: "s".into(),
            user: user.into(),
            gold,
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            sha256: String::new(),
        }
    }

    pub const TICKET_USER: &str = "The export button crashes the app.";
    pub const CONTRACT_USER: &str = "MASTER SUBSCRIPTION AGREEMENT ...";

    pub fn items() -> Vec<Item> {
        let m = "meeting-notes-lookup";
        vec![
            item(
                "m-1",
                m,
                "Notes 1. Who owns the launch?",
                json!({"type": "person", "value": "Priya Raman"}),
                &["Priya"],
            ),
            item(
                "m-2",
                m,
                "Notes 2. Who signs off?",
                json!({"type": "person", "value": "Tomas Lindqvist"}),
                &["Tomas", "T. Lindqvist"],
            ),
            item("m-3", m, "Notes 3. How many seats?", json!({"type": "number", "value": "240"}), &["240 seats"]),
            item("m-4", m, "Notes 4. Who chairs?", json!({"type": "person", "value": "Tomás Ortega"}), &[]),
            item("t-1", "ticket-triage", TICKET_USER, json!({"category": "bug", "priority": "p1"}), &[]),
            item(
                "c-1",
                "contract-terms-extraction",
                CONTRACT_USER,
                json!({"agreement_type": "saas_subscription", "effective_date": "2024-02-29",
                    "initial_term_end_date": "2027-02-28", "auto_renews": true, "renewal_term_months": 12,
                    "non_renewal_notice_days": 60, "payment_terms_days": 30, "termination_for_convenience": false,
                    "termination_notice_days": null, "security_incident_notice_hours": 72}),
                &[],
            ),
        ]
    }

    pub fn dataset() -> Dataset {
        Dataset::from_items(&items())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::Error;
    use std::path::PathBuf;

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn spec() -> Spec {
        Spec::load(&repo().join("pipelines/micro-single-task/spec.yaml")).unwrap()
    }

    fn sample_copy() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(repo().join("data/micro-single-task-sample")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
        }
        dir
    }

    #[test]
    fn the_sample_dataset_loads_and_is_indexed_by_user_prompt() {
        let sample = repo().join("data/micro-single-task-sample");
        let ds = Dataset::load(&sample, &spec()).unwrap();
        let contract = contract::load(&sample, &spec(), LoadOptions { sample: true }).unwrap();
        let all: Vec<&contract::Item> = contract.items.values().flatten().collect();
        assert_eq!(ds.items().len(), all.len());
        for item in all {
            let found = ds.lookup(&item.user).unwrap();
            assert!(found.id == item.id || ds.shadowed.contains(&item.id));
        }
        assert!(ds.lookup("not a prompt of the dataset").is_none());
        let Gold::Contract(c) = &ds.items().iter().find(|i| matches!(i.gold, Gold::Contract(_))).unwrap().gold else {
            panic!()
        };
        let keys: Vec<&str> = c.keys().map(String::as_str).collect();
        assert_eq!(keys, family::CONTRACT_FIELDS);
    }

    /// The simulator's own validation accepted year 0; the contract refuses it, and so now
    /// does the simulator, with the contract's error (exit code 3).
    #[test]
    fn a_dataset_the_contract_refuses_is_refused() {
        let dir = sample_copy();
        let path = dir.path().join("contract-terms-extraction.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        let row: Value = serde_json::from_str(first).unwrap();
        let date = row["gold"]["effective_date"].as_str().unwrap();
        let bad = first.replacen(&format!("\"effective_date\":\"{date}\""), "\"effective_date\":\"0000-01-01\"", 1);
        assert_ne!(bad, first);
        std::fs::write(&path, text.replacen(first, &bad, 1)).unwrap();
        let err = Dataset::load(dir.path(), &spec()).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains("gold.effective_date"), "{err}");
        let exit = inferbench_cli::exit_for(&anyhow::Error::new(err));
        assert_eq!(exit, inferbench_cli::Exit::BadInput);
    }

    #[test]
    fn repeated_user_prompts_keep_the_first_item() {
        let mut items = fixtures::items();
        let mut dup = items[4].clone();
        dup.id = "t-2".into();
        items.push(dup);
        let ds = Dataset::from_items(&items);
        assert_eq!(ds.lookup(fixtures::TICKET_USER).unwrap().id, "t-1");
        assert_eq!(ds.shadowed, ["t-2"]);
    }

    #[test]
    fn contract_fields_follow_the_contract_order_with_their_kinds() {
        let f: Vec<(&str, FieldKind)> = contract_fields().collect();
        assert_eq!(f.len(), 10);
        assert_eq!(f[0], ("agreement_type", FieldKind::AgreementType));
        assert_eq!(f[2], ("initial_term_end_date", FieldKind::Date));
        assert_eq!(f[7], ("termination_for_convenience", FieldKind::Bool));
        assert_eq!(f[9], ("security_incident_notice_hours", FieldKind::IntOrNull));
    }
}
