//! The provider table (`providers.yaml`): one entry per provider. Adding a provider is an
//! edit of this file, not of code.
use crate::spec::Spec;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderTable {
    pub providers: Vec<Provider>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    /// Stable name used in request ids and every table.
    pub name: String,
    /// Display name for reports (defaults to `name`).
    #[serde(default)]
    pub label: Option<String>,
    pub endpoint: String,
    pub auth: Auth,
    /// The model id sent in the request body.
    pub model_id: String,
    /// Other model ids a completed response may echo and still count as the intended model.
    #[serde(default)]
    pub model_aliases: Vec<String>,
    /// `max_tokens` or `max_completion_tokens`.
    pub token_limit_field: String,
    /// Provider-specific reasoning fields, merged into the body (must set reasoning_effort).
    #[serde(default)]
    pub reasoning: Map<String, Value>,
    /// Extra body fields, e.g. `top_k: -1`.
    #[serde(default)]
    pub extra: Map<String, Value>,
    /// Ask for a final usage chunk (`stream_options.include_usage`).
    #[serde(default)]
    pub stream_usage: bool,
    #[serde(default)]
    pub docs: Option<String>,
    /// `documented` or `pending_smoke`: whether the reasoning mapping is documented.
    #[serde(default)]
    pub reasoning_docs: Option<String>,
    pub price_usd_per_million_tokens: Price,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Auth {
    /// `Authorization: Bearer $env`.
    Bearer { env: String },
    /// Each header set from an environment variable, e.g. `Modal-Key: MODAL_PROXY_TOKEN_ID`.
    Headers { headers: BTreeMap<String, String> },
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

/// URL-safe provider slug: lower case, runs of other characters become one `-`
/// ("Z.AI" → "z-ai"). `ib-sim` serves each provider under `/<slug>/v1/chat/completions`.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

impl Provider {
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }

    /// Environment variable names holding this provider's credentials.
    pub fn credential_names(&self) -> Vec<&str> {
        match &self.auth {
            Auth::Bearer { env } => vec![env.as_str()],
            Auth::Headers { headers } => headers.values().map(String::as_str).collect(),
        }
    }

    /// Whether `model` (echoed by a completed response) is this provider's intended model.
    pub fn model_matches(&self, model: &str) -> bool {
        model == self.model_id || self.model_aliases.iter().any(|a| a == model)
    }

    /// The exact request body: common sampling settings, then the token limit, the structured
    /// output mode, the provider's reasoning fields, its extra fields, and the usage option.
    pub fn body(&self, spec: &Spec, system: &str, user: &str) -> Value {
        let inf = &spec.inference;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model_id));
        body.insert(
            "messages".into(),
            json!([{"role": "system", "content": system}, {"role": "user", "content": user}]),
        );
        body.insert("stream".into(), json!(true));
        body.insert("temperature".into(), number(inf.temperature));
        body.insert("top_p".into(), number(inf.top_p));
        body.insert("presence_penalty".into(), number(inf.presence_penalty));
        body.insert("frequency_penalty".into(), number(inf.frequency_penalty));
        body.insert(self.token_limit_field.clone(), json!(inf.max_completion_tokens));
        body.insert("response_format".into(), json!({"type": inf.structured_output.mode}));
        for (k, v) in self.reasoning.iter().chain(self.extra.iter()) {
            body.insert(k.clone(), v.clone());
        }
        if self.stream_usage {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }
}

/// Integral settings are sent as JSON integers (`0`, not `0.0`), as providers document them.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

impl ProviderTable {
    /// Reads and validates the provider table.
    pub fn load(path: &Path, spec: &Spec) -> Result<ProviderTable> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::unreadable(path, e))?;
        let table: ProviderTable =
            serde_norway::from_str(&text).map_err(|e| Error::bad(format!("{}: {e}", path.display())))?;
        table.validate(path, spec)?;
        Ok(table)
    }

    fn validate(&self, path: &Path, spec: &Spec) -> Result<()> {
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        if self.providers.is_empty() {
            problems.push(format!("{}: providers: the table is empty", path.display()));
        }
        for (i, p) in self.providers.iter().enumerate() {
            let at = format!("{}: providers[{i}] ({})", path.display(), p.name);
            if p.name.trim().is_empty() || slug(&p.name).is_empty() {
                problems.push(format!("{at}: name: must contain a letter or digit"));
            }
            if !seen.insert(slug(&p.name)) {
                problems.push(format!("{at}: name: duplicate provider (by slug `{}`)", slug(&p.name)));
            }
            if !p.endpoint.starts_with("https://") && !p.endpoint.starts_with("http://") {
                problems.push(format!("{at}: endpoint: expected an http(s) URL"));
            }
            if !["max_tokens", "max_completion_tokens"].contains(&p.token_limit_field.as_str()) {
                problems.push(format!("{at}: token_limit_field: expected max_tokens or max_completion_tokens"));
            }
            let effort = p.reasoning.get("reasoning_effort").and_then(Value::as_str);
            if effort != Some(spec.inference.reasoning.default_effort.as_str()) {
                problems.push(format!(
                    "{at}: reasoning.reasoning_effort: must be `{}` (the spec's reasoning effort)",
                    spec.inference.reasoning.default_effort
                ));
            }
            let price = p.price_usd_per_million_tokens;
            if !(price.input.is_finite() && price.input > 0.0 && price.output.is_finite() && price.output > 0.0) {
                problems.push(format!("{at}: price_usd_per_million_tokens: must be positive and finite"));
            }
            if p.credential_names().iter().any(|n| n.trim().is_empty()) {
                problems.push(format!("{at}: auth: credential variable names must not be empty"));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(problems))
        }
    }

    pub fn get(&self, name: &str) -> Option<&Provider> {
        self.providers.iter().find(|p| p.name == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.providers.iter().map(|p| p.name.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> (Spec, ProviderTable) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipelines/micro-single-task");
        let spec = Spec::load(&dir.join("spec.yaml")).unwrap();
        let table = ProviderTable::load(&spec.providers_path, &spec).unwrap();
        (spec, table)
    }

    #[test]
    fn slugs_are_url_safe() {
        assert_eq!(slug("Z.AI"), "z-ai");
        assert_eq!(slug("deepinfra"), "deepinfra");
        assert_eq!(slug("  Together  AI "), "together-ai");
    }

    #[test]
    fn bundled_table_has_ten_providers_with_the_reference_wire_quirks() {
        let (spec, table) = bundled();
        assert_eq!(table.providers.len(), 10);
        let zai = table.get("Z.AI").unwrap();
        let body = zai.body(&spec, "sys", "user");
        let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            &keys[..9],
            [
                "model",
                "messages",
                "stream",
                "temperature",
                "top_p",
                "presence_penalty",
                "frequency_penalty",
                "max_tokens",
                "response_format"
            ]
        );
        assert_eq!(body["thinking"], json!({"type": "enabled"}));
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(body["temperature"], json!(0));
        assert!(body.get("stream_options").is_none());
        let baseten = table.get("baseten").unwrap().body(&spec, "s", "u");
        assert_eq!(baseten["top_k"], json!(-1));
        assert_eq!(baseten["stream_options"], json!({"include_usage": true}));
        let modal = table.get("modal").unwrap();
        assert_eq!(modal.credential_names(), vec!["MODAL_PROXY_TOKEN_ID", "MODAL_PROXY_TOKEN_SECRET"]);
        assert!(table.providers.iter().all(|p| p.body(&spec, "s", "u").get("stop").is_none()));
    }

    #[test]
    fn validation_reports_every_problem() {
        let (spec, mut table) = bundled();
        table.providers[0].reasoning.insert("reasoning_effort".into(), json!("high"));
        table.providers[1].name = table.providers[2].name.clone();
        let err = table.validate(Path::new("p.yaml"), &spec).unwrap_err().to_string();
        assert!(err.contains("reasoning.reasoning_effort: must be `low`"), "{err}");
        assert!(err.contains("duplicate provider"), "{err}");
    }
}
