//! Built-in knowledge of the reference runner's ten providers (seed-runner.md §5.1, §5.2): what
//! a spec's `providers.vendors` does not say, because the reference keeps it in code.
//!
//! A reference spec names each vendor with its model id, credential variables, prices and
//! docs; the endpoint, the auth style, the token-limit field, the reasoning fields, Baseten's
//! `top_k: -1` and who is asked for a usage chunk live in the reference's `providers.py`. This
//! table is that code as data, so the reference's spec runs unchanged: `spec/vendors.rs`
//! checks each vendor entry against it (as the reference's drift check does) and completes it
//! into the same [`Provider`] a provider table holds, so every stage works on one shape.
//!
//! The wire details are the reference's for reasoning effort `low`, the only effort it runs.
use crate::providers::{Auth, Price, Provider};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The reasoning effort the built-in reasoning fields ask for.
pub const EFFORT: &str = "low";

/// How a provider authenticates, with the credential variable names the reference requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownAuth {
    /// `Authorization: Bearer $VAR`; the spec names `VAR` in `api_key`.
    Bearer(&'static str),
    /// Modal's proxy tokens: `Modal-Key: $ID` and `Modal-Secret: $SECRET`; the spec names
    /// them in `proxy_token_id` and `proxy_token_secret`.
    ModalProxy { id: &'static str, secret: &'static str },
}

/// One provider as the reference's code knows it.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    /// The vendor name, as the spec's `providers.vendors` keys it.
    pub name: &'static str,
    /// Display name for reports.
    pub label: &'static str,
    pub endpoint: &'static str,
    /// The model id sent in every body; the spec's `model_key` must equal it.
    pub model_id: &'static str,
    pub auth: KnownAuth,
    /// `max_tokens` or `max_completion_tokens`.
    pub token_limit_field: &'static str,
    /// The reasoning fields merged into the body, as JSON text, in the reference's order.
    pub reasoning: &'static str,
    /// Other body fields, as JSON text.
    pub extra: &'static str,
    /// Ask for a final usage chunk (`stream_options.include_usage`).
    pub stream_usage: bool,
    /// The reference's docs URL, used when the spec gives none.
    pub docs: Option<&'static str>,
    /// `documented` or `pending_smoke`: whether the reasoning mapping is documented.
    pub reasoning_docs: &'static str,
}

const LOW: &str = r#"{"reasoning_effort": "low"}"#;
const NONE: &str = "{}";

/// The ten, in the reference's order (its spec order and base launch order).
pub const KNOWN: [Known; 10] = [
    Known {
        name: "Z.AI",
        label: "Z.AI",
        endpoint: "https://api.z.ai/api/paas/v4/chat/completions",
        model_id: "glm-5.3-flash",
        auth: KnownAuth::Bearer("ZAI_API_KEY"),
        token_limit_field: "max_tokens",
        reasoning: r#"{"thinking": {"type": "enabled"}, "reasoning_effort": "low"}"#,
        extra: NONE,
        stream_usage: false,
        docs: Some("https://docs.z.ai/api-reference/llm/chat-completion"),
        reasoning_docs: "documented",
    },
    Known {
        name: "together",
        label: "Together AI",
        endpoint: "https://api.together.ai/v1/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::Bearer("TOGETHER_API_KEY"),
        token_limit_field: "max_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: false,
        docs: Some("https://docs.together.ai/docs/inference/chat/overview"),
        reasoning_docs: "documented",
    },
    Known {
        name: "fireworks",
        label: "Fireworks AI",
        endpoint: "https://api.fireworks.ai/inference/v1/chat/completions",
        model_id: "accounts/fireworks/models/glm-5p3-flash",
        auth: KnownAuth::Bearer("FIREWORKS_API_KEY"),
        token_limit_field: "max_completion_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: false,
        docs: Some("https://docs.fireworks.ai/api-reference/post-chatcompletions"),
        reasoning_docs: "documented",
    },
    Known {
        name: "baseten",
        label: "Baseten",
        endpoint: "https://inference.baseten.co/v1/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::Bearer("BASETEN_API_KEY"),
        token_limit_field: "max_tokens",
        reasoning: LOW,
        extra: r#"{"top_k": -1}"#,
        stream_usage: true,
        docs: Some("https://docs.baseten.co/reference/inference-api/chat-completions"),
        reasoning_docs: "pending_smoke",
    },
    Known {
        name: "telnyx",
        label: "Telnyx",
        endpoint: "https://api.telnyx.com/v2/ai/openai/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::Bearer("TELNYX_API_KEY"),
        token_limit_field: "max_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: false,
        docs: Some(
            "https://developers.telnyx.com/api-reference/openai-chat/create-a-chat-completion-openai-compatible",
        ),
        reasoning_docs: "documented",
    },
    Known {
        name: "modal",
        label: "Modal",
        endpoint: "https://openfunnel--ep-glm-5-3-flash-server.us-west.modal.direct/v1/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::ModalProxy { id: "MODAL_PROXY_TOKEN_ID", secret: "MODAL_PROXY_TOKEN_SECRET" },
        token_limit_field: "max_completion_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: false,
        docs: None,
        reasoning_docs: "pending_smoke",
    },
    Known {
        name: "nebius",
        label: "Nebius",
        endpoint: "https://api.tokenfactory.nebius.com/v1/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::Bearer("NEBIUS_API_KEY"),
        token_limit_field: "max_completion_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: true,
        docs: Some("https://docs.tokenfactory.nebius.com/api-reference/inference/create-chat-completion"),
        reasoning_docs: "documented",
    },
    Known {
        name: "parasail",
        label: "Parasail",
        endpoint: "https://api.parasail.io/v1/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::Bearer("PARASAIL_API_KEY"),
        token_limit_field: "max_completion_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: false,
        docs: Some("https://docs.parasail.io/parasail-docs/api-reference/chat-completions"),
        reasoning_docs: "pending_smoke",
    },
    Known {
        name: "novita",
        label: "Novita AI",
        endpoint: "https://api.novita.ai/openai/v1/chat/completions",
        model_id: "zai-org/glm-5.3-flash",
        auth: KnownAuth::Bearer("NOVITA_API_KEY"),
        token_limit_field: "max_tokens",
        // Deliberately not Novita's boolean enable_thinking / separate_reasoning switches (§5.1).
        reasoning: LOW,
        extra: NONE,
        stream_usage: true,
        docs: Some("https://novita.ai/docs/api-reference/model-apis-llm-create-chat-completion"),
        reasoning_docs: "pending_smoke",
    },
    Known {
        name: "deepinfra",
        label: "DeepInfra",
        endpoint: "https://api.deepinfra.com/v1/chat/completions",
        model_id: "zai-org/GLM-5.3-Flash",
        auth: KnownAuth::Bearer("DEEPINFRA_API_KEY"),
        token_limit_field: "max_tokens",
        reasoning: LOW,
        extra: NONE,
        stream_usage: true,
        docs: Some("https://docs.deepinfra.com/api-reference/chat-completions/openai-chat-completions"),
        reasoning_docs: "documented",
    },
];

/// The built-in knowledge of vendor `name` (exact, as the reference's lookup is).
pub fn known(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.name == name)
}

/// The names of every known vendor, in the reference's order, for messages.
pub fn names() -> Vec<&'static str> {
    KNOWN.iter().map(|k| k.name).collect()
}

/// A JSON object of the table; the table's own test parses every one.
fn object(text: &str) -> Map<String, Value> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

impl KnownAuth {
    /// The spec keys that name the credential variables, with the names required, in the
    /// reference's key order (`api_key`, `proxy_token_id`, `proxy_token_secret`).
    pub fn spec_keys(&self) -> Vec<(&'static str, &'static str)> {
        match *self {
            KnownAuth::Bearer(env) => vec![("api_key", env)],
            KnownAuth::ModalProxy { id, secret } => vec![("proxy_token_id", id), ("proxy_token_secret", secret)],
        }
    }

    fn auth(&self) -> Auth {
        match *self {
            KnownAuth::Bearer(env) => Auth::Bearer { env: env.to_string() },
            KnownAuth::ModalProxy { id, secret } => Auth::Headers {
                headers: BTreeMap::from([
                    ("Modal-Key".to_string(), id.to_string()),
                    ("Modal-Secret".to_string(), secret.to_string()),
                ]),
            },
        }
    }
}

impl Known {
    /// The provider-table entry of this vendor, completed with what the spec gives: its prices
    /// and, when it names one, its docs URL.
    pub fn provider(&self, price: Price, docs: Option<String>) -> Provider {
        Provider {
            name: self.name.to_string(),
            label: Some(self.label.to_string()),
            endpoint: self.endpoint.to_string(),
            // The reference runner's vendors all serve chat completions.
            api: None,
            auth: self.auth.auth(),
            model_id: self.model_id.to_string(),
            model_aliases: Vec::new(),
            token_limit_field: self.token_limit_field.to_string(),
            reasoning: object(self.reasoning),
            extra: object(self.extra),
            stream_usage: self.stream_usage,
            docs: docs.or(self.docs.map(str::to_string)),
            reasoning_docs: Some(self.reasoning_docs.to_string()),
            price_usd_per_million_tokens: price,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ProviderTable;
    use crate::spec::Spec;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn every_json_field_of_the_table_is_an_object_and_asks_for_the_effort() {
        for k in &KNOWN {
            for text in [k.reasoning, k.extra] {
                assert!(matches!(serde_json::from_str(text), Ok(Value::Object(_))), "{}: {text}", k.name);
            }
            assert_eq!(object(k.reasoning).get("reasoning_effort"), Some(&json!(EFFORT)), "{}", k.name);
        }
        let mut slugs: Vec<String> = KNOWN.iter().map(|k| crate::providers::slug(k.name)).collect();
        slugs.dedup();
        assert_eq!(slugs.len(), 10);
    }

    /// The bundled provider table writes down the same §5.1 knowledge by hand: completed with
    /// its prices and docs, the built-in table must give exactly its entries, so the two
    /// forms of a spec send the same requests.
    #[test]
    fn completed_with_prices_the_table_equals_the_bundled_provider_table() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/micro-single-task");
        let spec = Spec::load(&dir.join("spec.yaml")).unwrap();
        let bundled = ProviderTable::of_spec(&spec).unwrap();
        assert_eq!(bundled.names(), names());
        for (entry, k) in bundled.providers.iter().zip(&KNOWN) {
            let built = k.provider(entry.price_usd_per_million_tokens, None);
            assert_eq!(&built, entry, "{}", k.name);
            // Key order matters too: it is the order of the fields in the body.
            let keys = |m: &Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(&built.reasoning), keys(&entry.reasoning), "{}", k.name);
        }
    }

    #[test]
    fn the_wire_quirks_of_section_5_1() {
        let price = Price { input: 1.0, output: 2.0 };
        let zai = known("Z.AI").unwrap().provider(price, None);
        assert_eq!(zai.reasoning, object(r#"{"thinking": {"type": "enabled"}, "reasoning_effort": "low"}"#));
        assert_eq!(known("baseten").unwrap().provider(price, None).extra, object(r#"{"top_k": -1}"#));
        let usage: Vec<&str> = KNOWN.iter().filter(|k| k.stream_usage).map(|k| k.name).collect();
        assert_eq!(usage, ["baseten", "nebius", "novita", "deepinfra"]);
        let completion: Vec<&str> =
            KNOWN.iter().filter(|k| k.token_limit_field == "max_completion_tokens").map(|k| k.name).collect();
        assert_eq!(completion, ["fireworks", "modal", "nebius", "parasail"]);
        let modal = known("modal").unwrap().provider(price, None);
        assert_eq!(modal.credential_names(), ["MODAL_PROXY_TOKEN_ID", "MODAL_PROXY_TOKEN_SECRET"]);
        assert_eq!(modal.docs, None);
        let docs = known("together").unwrap().provider(price, Some("https://example.com/d".into())).docs;
        assert_eq!(docs.as_deref(), Some("https://example.com/d"), "the spec's docs URL wins");
        assert!(known("z.ai").is_none() && known("groq").is_none(), "names are exact");
    }
}
