//! A provider table's entries as data: each provider's endpoint, credentials, model and the
//! fields it adds to a request, and the checks of one value that need nothing else. Reading a
//! table and checking it against a spec is [`crate::providers`]'; a spec that lists its
//! providers inline builds the same [`ProviderTable`] (`crate::spec`).
use inferbench_contract::vocab::WireApi;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderTable {
    pub providers: Vec<Provider>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    /// Stable name used in request ids and every table.
    pub name: String,
    /// Display name for reports (defaults to `name`).
    #[serde(default)]
    pub label: Option<String>,
    pub endpoint: String,
    /// The wire API the endpoint serves; the spec's `inference.api` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<WireApi>,
    pub auth: Auth,
    /// The model id sent in the request body.
    pub model_id: String,
    /// Other model ids a completed response may echo and still count as the intended model.
    #[serde(default)]
    pub model_aliases: Vec<String>,
    /// Chat completions: `max_tokens` or `max_completion_tokens`. The other APIs name their
    /// own (`max_output_tokens`, `max_tokens`), which this may repeat or leave out.
    #[serde(default, skip_serializing_if = "String::is_empty")]
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

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Auth {
    /// `Authorization: Bearer $env`.
    Bearer { env: String },
    /// Each header set from an environment variable, e.g. `Modal-Key: MODAL_PROXY_TOKEN_ID`.
    Headers { headers: BTreeMap<String, String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
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

/// Where `ib-sim` serving at `base` (e.g. `http://127.0.0.1:18080`) answers the provider
/// `name` on `api`: `{base}/{slug}/{route}`, e.g. `…/z-ai/v1/chat/completions`. With an empty
/// base, the path alone.
pub fn simulated_endpoint(base: &str, name: &str, api: WireApi) -> String {
    format!("{}/{}/{}", base.trim_end_matches('/'), slug(name), api.route())
}

impl Provider {
    /// The wire API this provider is called through under `spec_default` (the spec's
    /// `inference.api`).
    pub fn api(&self, spec_default: WireApi) -> WireApi {
        self.api.unwrap_or(spec_default)
    }

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
}

/// Body fields the request builder sets itself. A provider's `reasoning` or `extra` may not
/// set them: a provider-specific override of the model, the messages, streaming, sampling,
/// the token limit or the output mode would silently make its figures incomparable.
pub const BUILDER_FIELDS: [&str; 11] = [
    "model",
    "messages",
    "stream",
    "stream_options",
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "max_tokens",
    "max_completion_tokens",
    "response_format",
];

/// The values `reasoning_docs` may take.
pub const REASONING_DOCS: [&str; 2] = ["documented", "pending_smoke"];

/// Whether `name` is a portable environment variable name (letters, digits and `_`, not
/// starting with a digit): a name the shell and `.env` files can set.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` is a valid HTTP header name (an RFC 9110 token).
pub(crate) fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Why `text` is not an http(s) URL with a host and a valid port, if it is not one.
pub(crate) fn url_problem(text: &str) -> Option<String> {
    match url::Url::parse(text) {
        Err(e) => Some(format!("`{text}` is not a valid URL: {e}")),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Some(format!("`{text}`: the scheme must be http or https, found `{}`", u.scheme()))
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some(format!("`{text}`: no host")),
        // Credentials in a URL would be logged with it; they belong under `auth`.
        Ok(u) if !u.username().is_empty() || u.password().is_some() => {
            Some("the URL carries credentials; put them in the environment and name them under `auth`".into())
        }
        Ok(_) => None,
    }
}
