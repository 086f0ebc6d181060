//! JSON Schema of every file format, generated from the types. `json/` holds the
//! committed copies; a test fails when they drift from the types (regenerate with
//! `IB_BLESS=1 cargo test -p inferbench-contract json_schema`).
use schemars::{schema_for, Schema};

/// File name → schema, for every format a run holds.
pub fn all() -> Vec<(&'static str, Schema)> {
    use crate::tables::*;
    vec![
        ("event.schema.json", schema_for!(crate::event::Envelope)),
        ("lock.schema.json", schema_for!(crate::lock::LockFile)),
        ("manifest.schema.json", schema_for!(crate::manifest::Manifest)),
        ("execution.schema.json", schema_for!(crate::execution::Execution)),
        ("selection.schema.json", schema_for!(SelectionRow)),
        ("schedule.schema.json", schema_for!(ScheduleRow)),
        ("responses.schema.json", schema_for!(ResponseRow)),
        ("evaluations.schema.json", schema_for!(EvaluationRow)),
        ("metrics.schema.json", schema_for!(MetricRow)),
        ("pooled.schema.json", schema_for!(PooledRow)),
        ("events-table.schema.json", schema_for!(EventRow)),
        ("seal.schema.json", schema_for!(crate::seal::SealRecord)),
        ("metrics-json.schema.json", schema_for!(crate::documents::MetricsDocument)),
        ("comparisons.schema.json", schema_for!(crate::documents::ComparisonsDocument)),
        ("search.schema.json", schema_for!(crate::documents::SearchDocument)),
    ]
}

/// The committed text of a schema file.
pub fn render(schema: &Schema) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("schemas serialise");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn committed_json_schemas_match_the_types() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("json");
        let bless = std::env::var_os("IB_BLESS").is_some();
        let mut stale = Vec::new();
        for (name, schema) in all() {
            let path = dir.join(name);
            let expected = render(&schema);
            if bless {
                std::fs::write(&path, &expected).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(expected.as_str()) {
                stale.push(name);
            }
        }
        assert!(stale.is_empty(), "crates/contract/json is stale for {stale:?}; rerun with IB_BLESS=1");
    }
}
