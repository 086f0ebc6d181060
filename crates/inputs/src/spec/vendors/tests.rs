//! The reference's spec as written, and each way a vendor entry can contradict the built-in
//! knowledge, refused naming the key.
use super::super::{ProviderSource, Spec};
use crate::known_providers;
use crate::providers::ProviderTable;
use inferbench_contract::Error;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/reference/spec.yaml")
}

fn fixture() -> Value {
    serde_norway::from_str(&std::fs::read_to_string(fixture_path()).unwrap()).unwrap()
}

fn problems(root: &Value) -> Vec<String> {
    match Spec::from_value(Path::new("spec.yaml"), root) {
        Ok(_) => Vec::new(),
        Err(Error::Invalid(list)) => list,
        Err(other) => panic!("expected a list of problems, got {other}"),
    }
}

/// The problems of the reference spec with vendor `name`'s entry changed by `edit`.
fn problems_with(name: &str, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Vec<String> {
    let mut root = fixture();
    edit(root["providers"]["vendors"][name].as_object_mut().unwrap());
    problems(&root)
}

/// Asserts exactly one problem, on `key`, containing each of `texts`.
fn refused(found: Vec<String>, key: &str, texts: &[&str]) {
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with(&format!("spec.yaml: {key}: ")), "{}", found[0]);
    for text in texts {
        assert!(found[0].contains(text), "{text:?} not in {}", found[0]);
    }
}

#[test]
fn the_reference_spec_loads_as_written_and_resolves_to_the_bundled_table() {
    let spec = Spec::load(&fixture_path()).unwrap();
    let ProviderSource::Vendors(table) = &spec.provider_source else { panic!("{:?}", spec.provider_source) };
    assert_eq!(table.names(), known_providers::names(), "the spec's order, which is the reference's");
    assert_eq!(spec.provider_table_file(), None);
    assert_eq!(spec.providers_path, fixture_path(), "the entries are read from the spec itself");
    assert_eq!(spec.families[0].prompt_template, "prompt_templates/meeting-notes.system.txt");
    assert_eq!(spec.dataset_source, Path::new("data/micro-single-task"));
    // The bundled provider table writes the same knowledge down by hand, with the same prices
    // and docs: both forms must give one table, entry for entry.
    let bundled =
        Spec::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/micro-single-task/spec.yaml"));
    let bundled = ProviderTable::of_spec(&bundled.unwrap()).unwrap();
    assert_eq!(ProviderTable::of_spec(&spec).unwrap(), bundled);
}

#[test]
fn a_vendor_without_built_in_knowledge_is_refused_naming_the_table_alternative() {
    let mut root = fixture();
    root["providers"]["vendors"]["groq"] = json!({"api_key": "GROQ_API_KEY", "model_key": "glm"});
    refused(
        problems(&root),
        "providers.vendors.groq",
        &["no built-in knowledge of this provider", "Z.AI, together,", "providers.table"],
    );
}

#[test]
fn values_contradicting_the_built_in_knowledge_are_refused_with_the_reason() {
    refused(
        problems_with("together", |v| {
            v.insert("model_key".into(), json!("zai-org/GLM-5.3"));
        }),
        "providers.vendors.together.model_key",
        &["must be `zai-org/GLM-5.3-Flash`, found `zai-org/GLM-5.3`", "drift check", "providers.table"],
    );
    refused(
        problems_with("together", |v| {
            v.remove("model_key");
        }),
        "providers.vendors.together.model_key",
        &["missing"],
    );
    refused(
        problems_with("nebius", |v| {
            v.insert("api_key".into(), json!("NEBIUS_KEY"));
        }),
        "providers.vendors.nebius.api_key",
        &["must be `NEBIUS_API_KEY`, found `NEBIUS_KEY`", "drift check"],
    );
    refused(
        problems_with("modal", |v| {
            v.insert("url".into(), json!("http://127.0.0.1:18080/v1/chat/completions"));
        }),
        "providers.vendors.modal.url",
        &["must be `https://openfunnel--ep-glm-5-3-flash-server.us-west.modal.direct/v1/chat/completions`"],
    );
    // A vendor name with dots is still one key: its problems are named under it.
    refused(
        problems_with("Z.AI", |v| {
            v.insert("model_key".into(), json!("glm-5.3"));
        }),
        "providers.vendors.Z.AI.model_key",
        &["must be `glm-5.3-flash`, found `glm-5.3`"],
    );
    let same = problems_with("deepinfra", |v| {
        v.insert("url".into(), json!(known_providers::known("deepinfra").unwrap().endpoint));
    });
    assert!(same.is_empty(), "the built-in endpoint itself is accepted: {same:#?}");
}

#[test]
fn the_credential_keys_follow_the_vendors_auth_style() {
    refused(
        problems_with("modal", |v| {
            v.remove("proxy_token_secret");
        }),
        "providers.vendors.modal.proxy_token_secret",
        &["missing: modal authenticates with proxy_token_id and proxy_token_secret", "MODAL_PROXY_TOKEN_SECRET"],
    );
    refused(
        problems_with("modal", |v| {
            v.insert("api_key".into(), json!("MODAL_API_KEY"));
        }),
        "providers.vendors.modal.api_key",
        &["modal does not authenticate with api_key"],
    );
    refused(
        problems_with("baseten", |v| {
            v.insert("proxy_token_id".into(), json!("X"));
        }),
        "providers.vendors.baseten.proxy_token_id",
        &["baseten does not authenticate with proxy_token_id; its credentials are api_key"],
    );
    refused(
        problems_with("baseten", |v| {
            v.remove("api_key");
        }),
        "providers.vendors.baseten.api_key",
        &["missing", "`BASETEN_API_KEY`"],
    );
    refused(
        problems_with("baseten", |v| {
            v.insert("api_key".into(), json!(7));
        }),
        "providers.vendors.baseten.api_key",
        &["expected a string"],
    );
}

#[test]
fn prices_are_exact_positive_and_finite_and_unknown_keys_are_errors() {
    refused(
        problems_with("telnyx", |v| {
            v.remove("pricing_usd_per_million_tokens");
        }),
        "providers.vendors.telnyx.pricing_usd_per_million_tokens",
        &["missing: exact input and output prices"],
    );
    refused(
        problems_with("telnyx", |v| {
            v.insert("pricing_usd_per_million_tokens".into(), json!({"input": 0.15, "output": 0.5, "cached": 0.01}));
        }),
        "providers.vendors.telnyx.pricing_usd_per_million_tokens",
        &["expected exactly the keys input and output"],
    );
    refused(
        problems_with("telnyx", |v| {
            v.insert("pricing_usd_per_million_tokens".into(), json!({"input": 0, "output": 0.5}));
        }),
        "providers.vendors.telnyx.pricing_usd_per_million_tokens.input",
        &["must be positive"],
    );
    refused(
        problems_with("telnyx", |v| {
            v.insert("pricing_usd_per_million_tokens".into(), json!({"input": 0.15, "output": "cheap"}));
        }),
        "providers.vendors.telnyx.pricing_usd_per_million_tokens.output",
        &["expected a finite number"],
    );
    refused(
        problems_with("telnyx", |v| {
            v.insert("endpoint".into(), json!("https://x/"));
        }),
        "providers.vendors.telnyx.endpoint",
        &["unknown key"],
    );
    refused(
        problems_with("telnyx", |v| {
            v.insert("docs".into(), json!("see the website"));
        }),
        "providers.vendors.telnyx.docs",
        &["not a valid URL"],
    );
}

#[test]
fn the_list_itself_must_be_a_non_empty_mapping_in_one_place_for_effort_low() {
    let mut root = fixture();
    root["providers"]["vendors"] = json!(["Z.AI"]);
    refused(problems(&root), "providers.vendors", &["expected a mapping of vendor name to its entry"]);
    root["providers"]["vendors"] = json!({});
    let found = problems(&root);
    assert!(found.iter().any(|p| p == "spec.yaml: providers.vendors: expected at least one vendor"), "{found:#?}");
    let mut root = fixture();
    root["providers"]["table"] = json!("providers.yaml");
    refused(problems(&root), "providers", &["both table and vendors", "in one place"]);
    let mut root = fixture();
    root["inference"]["reasoning"]["default_effort"] = json!("high");
    refused(problems(&root), "providers.vendors", &["reasoning effort `low`", "`high`", "providers.table"]);
    root["inference"]["reasoning"]["default_effort"] = json!("extreme");
    refused(problems(&root), "inference.reasoning.default_effort", &["not one of"]);
    root["providers"]["vendors"]["together"] = json!("yes");
    let found = problems(&root);
    assert!(found.iter().any(|p| p.starts_with("spec.yaml: providers.vendors.together: expected a mapping")));
}

#[test]
fn a_subset_in_another_order_is_accepted_and_must_agree_with_the_execution_plan() {
    let mut root = fixture();
    let vendors = root["providers"]["vendors"].as_object_mut().unwrap();
    let modal = vendors.shift_remove("modal").unwrap();
    let zai = vendors.shift_remove("Z.AI").unwrap();
    vendors.retain(|_, _| false);
    vendors.insert("modal".into(), modal);
    vendors.insert("Z.AI".into(), zai);
    root["execution_plan"]["maximum_global_concurrency"] = json!(2);
    root["execution_plan"]["total_provider_requests"] = json!(1200);
    let spec = Spec::from_value(Path::new("spec.yaml"), &root).unwrap();
    assert_eq!(ProviderTable::of_spec(&spec).unwrap().names(), ["modal", "Z.AI"]);
    root["execution_plan"]["total_provider_requests"] = json!(6000);
    let spec = Spec::from_value(Path::new("spec.yaml"), &root).unwrap();
    let err = ProviderTable::of_spec(&spec).unwrap_err().to_string();
    assert!(err.contains("execution_plan.total_provider_requests: 6000 differs from 1200"), "{err}");
}
