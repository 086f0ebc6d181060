//! Serialisation in the reference format: one compact JSON object per line with the keys in
//! a fixed order, LF line ends and a final newline; the manifest as pretty JSON. Nothing
//! here depends on the platform or on map iteration order, so a seed gives the same bytes
//! everywhere.
use crate::item::Generated;
use inferbench_contract::family::output_schema;
use inferbench_contract::vocab::TaskFamily;
use inferbench_judge::tokenizer;
use serde_json::{json, Value};

/// One dataset row: `id, use_case, split, prompt {system, user}, output_schema, gold,
/// aliases, tokens {system, user, input_total}`, token counts measured with o200k_base.
pub fn row(family: TaskFamily, index: usize, system: &str, system_tokens: usize, item: &Generated) -> Value {
    let user_tokens = tokenizer::count(&item.user);
    json!({
        "id": format!("{family}-{index:04}"),
        "use_case": family,
        "split": "private",
        "prompt": {"system": system, "user": item.user},
        "output_schema": output_schema(family),
        "gold": item.gold,
        "aliases": item.aliases,
        "tokens": {
            "system": system_tokens,
            "user": user_tokens,
            "input_total": system_tokens + user_tokens,
        },
    })
}

/// Compact JSON lines, each terminated by `\n`.
pub fn jsonl(rows: &[Value]) -> Vec<u8> {
    let mut out = String::new();
    for r in rows {
        out.push_str(&serde_json::to_string(r).expect("a JSON value serialises"));
        out.push('\n');
    }
    out.into_bytes()
}

/// `{"status": "frozen", "freeze_ready": true, "use_cases": {family: {"private_items": n}}}`,
/// pretty-printed with a trailing newline, families in spec order.
pub fn manifest(counts: &[(String, usize)]) -> Vec<u8> {
    let mut use_cases = serde_json::Map::new();
    for (family, n) in counts {
        use_cases.insert(family.clone(), json!({"private_items": n}));
    }
    let value = json!({"status": "frozen", "freeze_ready": true, "use_cases": use_cases});
    let mut text = serde_json::to_string_pretty(&value).expect("a JSON value serialises");
    text.push('\n');
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_the_reference_key_order() {
        let item = Generated {
            user: "Hello".into(),
            gold: json!({"category": "bug", "priority": "p0"}),
            aliases: vec![],
            tags: vec![],
        };
        let r = row(TaskFamily::TicketTriage, 7, "sys", 1, &item);
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "use_case", "split", "prompt", "output_schema", "gold", "aliases", "tokens"]);
        assert_eq!(r["id"], "ticket-triage-0007");
        let line = String::from_utf8(jsonl(&[r])).unwrap();
        assert!(line.ends_with("}\n") && !line.contains(": "));
    }

    #[test]
    fn manifest_is_pretty_with_a_trailing_newline() {
        let m = String::from_utf8(manifest(&[("a".into(), 3)])).unwrap();
        assert!(m.starts_with("{\n  \"status\": \"frozen\",\n  \"freeze_ready\": true,"));
        assert!(m.ends_with("}\n"));
    }
}
