//! The provider table (`providers.yaml`): one entry per provider. Adding a provider is an
//! edit of this file, not of code.
//!
//! A spec may instead list the reference runner's providers inline (`providers.vendors`),
//! completed by built-in knowledge (`known_providers.rs`); [`ProviderTable::of_spec`] gives
//! the same table for both forms, and [`bound_hashes`] what a run's lock binds for each.
pub use crate::provider::{
    is_env_name, simulated_endpoint, slug, Auth, Price, Provider, ProviderTable, BUILDER_FIELDS, REASONING_DOCS,
};
use crate::provider::{is_header_name, url_problem};
use crate::spec::{ProviderSource, Spec};
use inferbench_contract::vocab::WireApi;
use inferbench_contract::{canonical, Error, Result};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

impl Provider {
    /// The exact request body on this provider's wire API (docs/reference/wire-apis.md): the
    /// prompts, common sampling settings, then the token limit, the structured output mode, the
    /// provider's reasoning fields, its extra fields, and the usage option.
    pub fn body(&self, spec: &Spec, system: &str, user: &str) -> Value {
        let inf = &spec.inference;
        let prompt = Prompt { system: Some(system), user };
        let json_mode = inf.structured_output.mode == "json_object";
        self.build(spec, prompt, u64::from(inf.max_completion_tokens), json_mode, false)
    }

    /// A synthetic request's body (`load.workload.kind: synthetic`): the prompt as its one
    /// message (no system prompt, no structured output: there is no task, only a length), the
    /// answer tokens it asks for as the provider's token limit, and, when asked,
    /// `"ignore_eos": true` so that a server that honours it (vLLM, SGLang) answers to that
    /// length. The sampling settings, reasoning fields, extra fields and usage option are the
    /// dataset requests'. No `min_tokens` is sent.
    pub fn synthetic_body(&self, spec: &Spec, prompt: &str, output_tokens: u32, ignore_eos: bool) -> Value {
        self.build(spec, Prompt { system: None, user: prompt }, u64::from(output_tokens), false, ignore_eos)
    }

    fn build(&self, spec: &Spec, prompt: Prompt, limit: u64, json_mode: bool, ignore_eos: bool) -> Value {
        let inf = &spec.inference;
        let api = self.api(inf.api);
        let user = json!({"role": "user", "content": prompt.user});
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model_id));
        match (api, prompt.system) {
            (WireApi::ChatCompletions, Some(system)) => {
                body.insert("messages".into(), json!([{"role": "system", "content": system}, user]));
            }
            (WireApi::ChatCompletions, None) => {
                body.insert("messages".into(), json!([user]));
            }
            (WireApi::Responses, system) => {
                if let Some(system) = system {
                    body.insert("instructions".into(), json!(system));
                }
                body.insert("input".into(), json!([user]));
            }
            (WireApi::Messages, system) => {
                if let Some(system) = system {
                    body.insert("system".into(), json!(system));
                }
                body.insert("messages".into(), json!([user]));
            }
        }
        body.insert("stream".into(), json!(true));
        body.insert("temperature".into(), number(inf.temperature));
        body.insert("top_p".into(), number(inf.top_p));
        // The other APIs have no penalties; a non-zero one is refused for them (`problems`).
        if api == WireApi::ChatCompletions {
            body.insert("presence_penalty".into(), number(inf.presence_penalty));
            body.insert("frequency_penalty".into(), number(inf.frequency_penalty));
        }
        body.insert(self.token_limit_key(api).into(), json!(limit));
        if json_mode {
            match api {
                WireApi::ChatCompletions => body.insert("response_format".into(), json!({"type": "json_object"})),
                WireApi::Responses => body.insert("text".into(), json!({"format": {"type": "json_object"}})),
                // Refused before anything is locked (`problems`).
                WireApi::Messages => None,
            };
        }
        if ignore_eos {
            body.insert("ignore_eos".into(), json!(true));
        }
        for (k, v) in self.reasoning.iter().chain(self.extra.iter()) {
            body.insert(k.clone(), v.clone());
        }
        if self.stream_usage && api == WireApi::ChatCompletions {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }

    /// The body field of the answer-token ceiling on `api`.
    fn token_limit_key(&self, api: WireApi) -> &str {
        match api {
            WireApi::ChatCompletions => &self.token_limit_field,
            WireApi::Responses => "max_output_tokens",
            WireApi::Messages => "max_tokens",
        }
    }
}

/// The prompts of one request: a task's system and user prompt, or a synthetic prompt alone.
struct Prompt<'a> {
    system: Option<&'a str>,
    user: &'a str,
}

/// Body fields the request builder sets itself on `api`, beside [`BUILDER_FIELDS`].
fn builder_fields(api: WireApi) -> &'static [&'static str] {
    match api {
        WireApi::ChatCompletions => &[],
        WireApi::Responses => &["input", "instructions", "max_output_tokens", "text"],
        WireApi::Messages => &["system"],
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

/// The lock's logical name of a provider table file.
pub const TABLE_INPUT: &str = "providers.yaml";
/// The lock's logical name of the providers a spec lists inline (`providers.vendors`): the
/// SHA-256 of the canonical JSON of the resolved table. The spec's text is bound as
/// `spec.yaml` already; this binds what the built-in knowledge (code) completed it with, so a
/// change to that knowledge, which would change the requests sent, is refused like a changed
/// provider table.
pub const VENDORS_INPUT: &str = "providers.vendors";

/// What a run's lock binds for the spec's providers, by logical name: the table file's
/// SHA-256 as [`TABLE_INPUT`], or the resolved table's canonical-JSON SHA-256 as
/// [`VENDORS_INPUT`]. `ib-select` writes these and every later stage checks them.
pub fn bound_hashes(spec: &Spec, table: &ProviderTable) -> Result<BTreeMap<String, String>> {
    Ok(match &spec.provider_source {
        ProviderSource::Table(path) => BTreeMap::from([(TABLE_INPUT.to_string(), canonical::file_sha256(path)?)]),
        ProviderSource::Vendors(_) => {
            // String keys and f64s only: serde_json cannot fail on a provider table.
            let value = serde_json::to_value(table).expect("a provider table always serialises");
            BTreeMap::from([(VENDORS_INPUT.to_string(), canonical::hash(&value))])
        }
    })
}

impl ProviderTable {
    /// The spec's providers, from whichever form it lists them in: the provider table file it
    /// names, read and validated, or its inline vendors (already checked and completed when
    /// the spec was read), validated against the spec in the same way.
    pub fn of_spec(spec: &Spec) -> Result<ProviderTable> {
        match &spec.provider_source {
            ProviderSource::Table(path) => ProviderTable::load(path, spec),
            ProviderSource::Vendors(table) => {
                table.validate(&spec.path, spec)?;
                Ok(table.clone())
            }
        }
    }

    /// Reads and validates the provider table against the spec. Every problem is reported at
    /// once, each naming the file, the provider and the key.
    pub fn load(path: &Path, spec: &Spec) -> Result<ProviderTable> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::unreadable(path, e))?;
        let root: Value = serde_norway::from_str(&text)
            .map_err(|e| Error::bad(format!("{}: not valid YAML: {e}", path.display())))?;
        Self::from_value(path, &root, spec)
    }

    /// Validates a parsed provider table; `path` names it in messages.
    pub fn from_value(path: &Path, root: &Value, spec: &Spec) -> Result<ProviderTable> {
        let file = path.display();
        let mut problems = Vec::new();
        let Some(map) = root.as_object() else {
            return Err(Error::bad(format!("{file}: (top level): expected a mapping with the key `providers`")));
        };
        problems.extend(map.keys().filter(|k| *k != "providers").map(|k| format!("{file}: {k}: unknown key")));
        let entries = match map.get("providers") {
            Some(Value::Array(entries)) => entries.as_slice(),
            Some(other) => {
                problems.push(format!("{file}: providers: expected a list, found {other}"));
                &[]
            }
            None => {
                problems.push(format!("{file}: providers: missing"));
                &[]
            }
        };
        let mut parsed = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            // Each entry on its own, so one bad entry does not hide the others' problems.
            match serde_path_to_error::deserialize::<_, Provider>(entry) {
                Ok(provider) => parsed.push((i, provider)),
                Err(e) => {
                    let name = entry.get("name").and_then(Value::as_str).unwrap_or("?");
                    let key = e.path().to_string();
                    let key = if key == "." { String::new() } else { format!("{key}: ") };
                    problems.push(format!("{file}: providers[{i}] ({name}): {key}{}", e.inner()));
                }
            }
        }
        check(path, spec, &parsed, entries.len(), &mut problems);
        if problems.is_empty() {
            Ok(ProviderTable { providers: parsed.into_iter().map(|(_, p)| p).collect() })
        } else {
            Err(Error::Invalid(problems))
        }
    }

    /// Checks an already-parsed table (its entries' values and its agreement with the spec).
    pub fn validate(&self, path: &Path, spec: &Spec) -> Result<()> {
        let indexed: Vec<(usize, Provider)> = self.providers.iter().cloned().enumerate().collect();
        let mut problems = Vec::new();
        check(path, spec, &indexed, self.providers.len(), &mut problems);
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

/// Every problem of the parsed entries (with their index in the file), and of the table of
/// `total` entries (parsed or not) as a whole against the spec.
fn check(path: &Path, spec: &Spec, entries: &[(usize, Provider)], total: usize, problems: &mut Vec<String>) {
    let file = path.display();
    let empty = total == 0;
    if empty {
        problems.push(format!("{file}: providers: the table is empty"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, p) in entries {
        let at = format!("{file}: providers[{i}] ({})", p.name);
        if !seen.insert(slug(&p.name)) {
            problems.push(format!("{at}: name: duplicate provider (by slug `{}`)", slug(&p.name)));
        }
        problems.extend(p.problems(spec).into_iter().map(|(key, what)| format!("{at}: {key}: {what}")));
    }
    let count = total as u64;
    let plan = &spec.execution_plan;
    let spec_file = spec.path.display();
    if let Some(n) = plan.maximum_global_concurrency.filter(|n| !empty && *n != count) {
        problems.push(format!(
            "{spec_file}: execution_plan.maximum_global_concurrency: {n} differs from the {count} providers of {file}: \
             inferbench releases every provider of a round at once"
        ));
    }
    let requests = count * spec.selected_per_family as u64 * spec.families.len() as u64;
    if let Some(n) = plan.total_provider_requests.filter(|n| !empty && *n != requests) {
        problems.push(format!(
            "{spec_file}: execution_plan.total_provider_requests: {n} differs from {requests} \
             (the spec's rounds × the {count} providers of {file})"
        ));
    }
    // A load step sends every arrival to every provider.
    if let Some(load) = &spec.load {
        let requests = load.requests_per_provider() * count as f64;
        if requests > crate::spec::MAX_LOAD_REQUESTS {
            problems.push(format!(
                "{spec_file}: load.rates: about {requests:.0} requests (rates × step_seconds × the {count} providers of \
                 {file}): at most {:.0}",
                crate::spec::MAX_LOAD_REQUESTS
            ));
        }
    }
}

impl Provider {
    /// This entry's problems, as (key, what is wrong).
    fn problems(&self, spec: &Spec) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut bad = |key: &str, what: String| out.push((key.to_string(), what));
        if self.name.trim().is_empty() || slug(&self.name).is_empty() {
            bad("name", "must contain a letter or digit".into());
        }
        if self.label.as_deref().is_some_and(|l| l.trim().is_empty()) {
            bad("label", "must not be empty (leave it out to show the name)".into());
        }
        if let Some(why) = url_problem(&self.endpoint) {
            bad("endpoint", why);
        }
        if let Some(why) = self.docs.as_deref().and_then(url_problem) {
            bad("docs", why);
        }
        if self.model_id.trim().is_empty() {
            bad("model_id", "must not be empty".into());
        }
        if self.model_aliases.iter().any(|a| a.trim().is_empty()) {
            bad("model_aliases", "an alias must not be empty".into());
        }
        let api = self.api(spec.inference.api);
        // What the API cannot express is refused here, before anything is locked, naming the
        // API (the provider and the key are named by the caller).
        let on = format!("on the {api} API");
        match api {
            WireApi::ChatCompletions => {
                if !["max_tokens", "max_completion_tokens"].contains(&self.token_limit_field.as_str()) {
                    bad("token_limit_field", "expected max_tokens or max_completion_tokens".into());
                }
            }
            other => {
                let own = self.token_limit_key(other);
                if !(self.token_limit_field.is_empty() || self.token_limit_field == own) {
                    bad("token_limit_field", format!("{on} the answer-token ceiling is `{own}`; leave this out"));
                }
                if self.stream_usage {
                    bad("stream_usage", format!("{on} every stream carries its usage; leave this out"));
                }
                let inf = &spec.inference;
                for (key, value) in
                    [("presence_penalty", inf.presence_penalty), ("frequency_penalty", inf.frequency_penalty)]
                {
                    if value != 0.0 {
                        bad(
                            &format!("inference.{key}"),
                            format!("{value} cannot be sent {on}, which has no such setting"),
                        );
                    }
                }
            }
        }
        if api == WireApi::Messages && spec.inference.structured_output.mode == "json_object" {
            bad(
                "inference.structured_output.mode",
                format!("json_object cannot be asked for {on}, which has no JSON mode; use prompt_only"),
            );
        }
        let effort = spec.inference.reasoning.default_effort.as_str();
        match api {
            WireApi::ChatCompletions => {
                if self.reasoning.get("reasoning_effort").and_then(Value::as_str) != Some(effort) {
                    bad("reasoning.reasoning_effort", format!("must be `{effort}` (the spec's reasoning effort)"));
                }
            }
            WireApi::Responses => {
                let set = self.reasoning.get("reasoning").and_then(|r| r.get("effort")).and_then(Value::as_str);
                if set != Some(effort) {
                    bad("reasoning.reasoning.effort", format!("must be `{effort}` (the spec's reasoning effort) {on}"));
                }
            }
            WireApi::Messages => {
                let thinking = self.reasoning.get("thinking");
                let kind = thinking.and_then(|t| t.get("type")).and_then(Value::as_str);
                let budget = thinking.and_then(|t| t.get("budget_tokens")).and_then(Value::as_u64);
                match (effort, kind, budget) {
                    ("none", None | Some("disabled"), _) => {}
                    ("none", _, _) => bad(
                        "reasoning.thinking",
                        format!("must be absent or `{{type: disabled}}` {on}: the spec's reasoning effort is none"),
                    ),
                    (_, Some("enabled"), Some(1..)) => {}
                    _ => bad(
                        "reasoning.thinking",
                        format!(
                            "must be `{{type: enabled, budget_tokens: n}}` {on}: the provider's thinking budget for \
                             the spec's reasoning effort `{effort}`"
                        ),
                    ),
                }
            }
        }
        for (section, fields) in [("reasoning", &self.reasoning), ("extra", &self.extra)] {
            for key in fields
                .keys()
                .filter(|k| BUILDER_FIELDS.contains(&k.as_str()) || builder_fields(api).contains(&k.as_str()))
            {
                bad(&format!("{section}.{key}"), "overrides a field the request builder sets from the spec".into());
            }
        }
        for key in self.extra.keys().filter(|k| self.reasoning.contains_key(*k)) {
            bad(&format!("extra.{key}"), "also set under reasoning; set it in one place".into());
        }
        if let Some(docs) = self.reasoning_docs.as_deref().filter(|d| !REASONING_DOCS.contains(d)) {
            bad("reasoning_docs", format!("`{docs}` is not one of {REASONING_DOCS:?}"));
        }
        match &self.auth {
            Auth::Bearer { env } if !is_env_name(env) => {
                bad("auth.env", format!("`{env}` is not a valid environment variable name (letters, digits, _)"))
            }
            Auth::Headers { headers } if headers.is_empty() => {
                bad("auth.headers", "expected at least one header".into())
            }
            Auth::Headers { headers } => {
                for (header, env) in headers {
                    let at = format!("auth.headers.{header}");
                    if !is_header_name(header) {
                        bad(&at, "not a valid HTTP header name".into());
                    } else if ["accept", "content-type"].contains(&header.to_ascii_lowercase().as_str()) {
                        bad(&at, "the client sets this header itself".into());
                    }
                    if !is_env_name(env) {
                        bad(&at, format!("`{env}` is not a valid environment variable name (letters, digits, _)"));
                    }
                }
            }
            Auth::Bearer { .. } => {}
        }
        let price = self.price_usd_per_million_tokens;
        if !(price.input.is_finite() && price.input > 0.0 && price.output.is_finite() && price.output > 0.0) {
            bad("price_usd_per_million_tokens", "must be positive and finite".into());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled() -> (Spec, ProviderTable) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/micro-single-task");
        let spec = Spec::load(&dir.join("spec.yaml")).unwrap();
        let table = ProviderTable::load(&spec.providers_path, &spec).unwrap();
        (spec, table)
    }

    #[test]
    fn slugs_are_url_safe() {
        assert_eq!(slug("Z.AI"), "z-ai");
        assert_eq!(slug("deepinfra"), "deepinfra");
        assert_eq!(slug("  Together  AI "), "together-ai");
        assert_eq!(
            simulated_endpoint("http://127.0.0.1:18080/", "Z.AI", WireApi::ChatCompletions),
            "http://127.0.0.1:18080/z-ai/v1/chat/completions"
        );
        assert_eq!(simulated_endpoint("", "z-ai", WireApi::ChatCompletions), "/z-ai/v1/chat/completions");
        assert_eq!(simulated_endpoint("", "z-ai", WireApi::Messages), "/z-ai/v1/messages");
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
        // A synthetic request: the prompt alone, its own token limit, no structured output.
        let synthetic = baseten_synthetic(&table, &spec, false);
        assert_eq!(synthetic["messages"], json!([{"role": "user", "content": "w w w"}]));
        assert!(synthetic.get("response_format").is_none() && synthetic.get("ignore_eos").is_none());
        let limit = table.get("baseten").unwrap().token_limit_field.clone();
        assert_eq!(synthetic[&limit], json!(77));
        assert_eq!((synthetic["top_k"].clone(), synthetic["stream"].clone()), (json!(-1), json!(true)));
        assert_eq!(baseten_synthetic(&table, &spec, true)["ignore_eos"], json!(true));
    }

    fn baseten_synthetic(table: &ProviderTable, spec: &Spec, ignore_eos: bool) -> Value {
        table.get("baseten").unwrap().synthetic_body(spec, "w w w", 77, ignore_eos)
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

    fn bundled_value() -> (Spec, Value) {
        let (spec, _) = bundled();
        let value = serde_norway::from_str(&std::fs::read_to_string(&spec.providers_path).unwrap()).unwrap();
        (spec, value)
    }

    /// The problems of the bundled table with entry `i`'s `key` (dotted) set to `value`.
    fn problems_with(i: usize, key: &str, value: Value) -> Vec<String> {
        let (spec, mut root) = bundled_value();
        let mut slot = &mut root["providers"][i];
        for part in key.split('.') {
            slot = &mut slot[part];
        }
        *slot = value;
        match ProviderTable::from_value(Path::new("providers.yaml"), &root, &spec) {
            Ok(_) => Vec::new(),
            Err(Error::Invalid(list)) => list,
            Err(other) => panic!("expected a list of problems, got {other}"),
        }
    }

    /// Asserts exactly one problem, naming the provider and `key`, containing `text`.
    fn refused(i: usize, key: &str, value: Value, named: &str, text: &str) {
        let found = problems_with(i, key, value.clone());
        assert_eq!(found.len(), 1, "{key} = {value}: {found:#?}");
        assert!(found[0].starts_with(&format!("providers.yaml: providers[{i}] ")), "{}", found[0]);
        assert!(found[0].contains(named) && found[0].contains(text), "{key} = {value}: {}", found[0]);
    }

    /// The bundled spec and its baseten row, moved onto `api` with that API's reasoning fields.
    fn on_api(api: WireApi) -> (Spec, Provider) {
        let (mut spec, table) = bundled();
        spec.inference.structured_output.mode = "prompt_only".into();
        let mut p = table.get("baseten").unwrap().clone();
        p.api = Some(api);
        p.token_limit_field = String::new();
        p.stream_usage = false;
        p.reasoning = match api {
            WireApi::ChatCompletions => p.reasoning,
            WireApi::Responses => json!({"reasoning": {"effort": "low"}}).as_object().unwrap().clone(),
            WireApi::Messages => {
                json!({"thinking": {"type": "enabled", "budget_tokens": 1024}}).as_object().unwrap().clone()
            }
        };
        (spec, p)
    }

    fn problems_of(spec: &Spec, p: &Provider) -> Vec<String> {
        p.problems(spec).into_iter().map(|(k, what)| format!("{k}: {what}")).collect()
    }

    #[test]
    fn each_api_has_its_own_body() {
        let (mut spec, p) = on_api(WireApi::Responses);
        assert!(problems_of(&spec, &p).is_empty(), "{:?}", problems_of(&spec, &p));
        spec.inference.structured_output.mode = "json_object".into();
        let body = p.body(&spec, "sys", "user");
        assert_eq!(body["instructions"], "sys");
        assert_eq!(body["input"], json!([{"role": "user", "content": "user"}]));
        assert_eq!(body["max_output_tokens"], json!(spec.inference.max_completion_tokens));
        assert_eq!(body["text"], json!({"format": {"type": "json_object"}}));
        assert_eq!(body["reasoning"], json!({"effort": "low"}));
        for absent in ["messages", "presence_penalty", "frequency_penalty", "response_format", "stream_options"] {
            assert!(body.get(absent).is_none(), "{absent}");
        }
        let (spec, p) = on_api(WireApi::Messages);
        assert!(problems_of(&spec, &p).is_empty(), "{:?}", problems_of(&spec, &p));
        let body = p.body(&spec, "sys", "user");
        assert_eq!(body["system"], "sys");
        assert_eq!(body["messages"], json!([{"role": "user", "content": "user"}]));
        assert_eq!(body["max_tokens"], json!(spec.inference.max_completion_tokens));
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 1024}));
        assert_eq!(body["stream"], json!(true));
        assert!(body.get("text").is_none() && body.get("response_format").is_none());
        // A synthetic prompt has no system prompt on any API.
        let synthetic = p.synthetic_body(&spec, "w w", 9, false);
        assert!(synthetic.get("system").is_none());
        assert_eq!(synthetic["max_tokens"], json!(9));
        // The spec's API is every row's that names none.
        let (mut spec, mut p) = on_api(WireApi::Responses);
        p.api = None;
        spec.inference.api = WireApi::Responses;
        assert!(p.body(&spec, "s", "u").get("input").is_some());
    }

    #[test]
    fn a_setting_an_api_cannot_express_is_refused_naming_the_key_and_the_api() {
        let (mut spec, p) = on_api(WireApi::Messages);
        spec.inference.structured_output.mode = "json_object".into();
        assert_eq!(
            problems_of(&spec, &p),
            ["inference.structured_output.mode: json_object cannot be asked for on the messages API, which has no \
              JSON mode; use prompt_only"]
        );
        let (mut spec, mut p) = on_api(WireApi::Responses);
        spec.inference.presence_penalty = 0.5;
        p.stream_usage = true;
        p.token_limit_field = "max_tokens".into();
        let found = problems_of(&spec, &p);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0]
            .starts_with("token_limit_field: on the responses API the answer-token ceiling is `max_output_tokens`"));
        assert!(found[1].starts_with("stream_usage: on the responses API"));
        assert!(found[2].starts_with("inference.presence_penalty: 0.5 cannot be sent on the responses API"));
        let (spec, mut p) = on_api(WireApi::Responses);
        p.reasoning = json!({"reasoning": {"effort": "high"}}).as_object().unwrap().clone();
        assert!(problems_of(&spec, &p)[0].starts_with("reasoning.reasoning.effort: must be `low`"));
        p.reasoning = json!({"reasoning": {"effort": "low"}, "input": "x"}).as_object().unwrap().clone();
        assert_eq!(
            problems_of(&spec, &p),
            ["reasoning.input: overrides a field the request builder sets from the spec"]
        );
        let (mut spec, mut p) = on_api(WireApi::Messages);
        p.reasoning = Map::new();
        assert!(
            problems_of(&spec, &p)[0].starts_with("reasoning.thinking: must be `{type: enabled, budget_tokens: n}`")
        );
        spec.inference.reasoning.default_effort = "none".into();
        assert!(problems_of(&spec, &p).is_empty());
        p.reasoning = json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}).as_object().unwrap().clone();
        assert!(problems_of(&spec, &p)[0].contains("the spec's reasoning effort is none"));
    }

    #[test]
    fn endpoints_must_be_http_urls_with_a_host_and_a_valid_port() {
        refused(3, "endpoint", json!("https://x:99999/v1"), "(baseten): endpoint:", "invalid port number");
        refused(3, "endpoint", json!("ftp://x/v1"), "(baseten): endpoint:", "scheme must be http or https");
        refused(3, "endpoint", json!("api.example.com/v1"), "(baseten): endpoint:", "not a valid URL");
        refused(3, "endpoint", json!("https://user:pw@x/v1"), "(baseten): endpoint:", "carries credentials");
        refused(3, "docs", json!("see the website"), "(baseten): docs:", "not a valid URL");
        assert!(problems_with(3, "endpoint", json!("http://127.0.0.1:8080/v1/chat/completions")).is_empty());
    }

    #[test]
    fn model_ids_and_aliases_must_not_be_empty() {
        refused(1, "model_id", json!(" "), "(together): model_id:", "must not be empty");
        refused(1, "model_aliases", json!(["ok", ""]), "(together): model_aliases:", "must not be empty");
        refused(1, "label", json!(""), "(together): label:", "must not be empty");
    }

    #[test]
    fn reasoning_and_extra_may_not_override_the_request_builder() {
        for field in BUILDER_FIELDS {
            refused(
                2,
                &format!("extra.{field}"),
                json!(1),
                &format!("(fireworks): extra.{field}:"),
                "overrides a field",
            );
        }
        refused(2, "reasoning.temperature", json!(0.7), "(fireworks): reasoning.temperature:", "overrides a field");
        assert!(problems_with(3, "extra.seed", json!(7)).is_empty(), "other extra fields are the provider's business");
        refused(
            0,
            "extra.thinking",
            json!({"type": "disabled"}),
            "(Z.AI): extra.thinking:",
            "also set under reasoning",
        );
        refused(
            3,
            "extra.reasoning_effort",
            json!("high"),
            "(baseten): extra.reasoning_effort:",
            "also set under reasoning",
        );
    }

    #[test]
    fn credentials_must_be_named_by_valid_variables_and_headers() {
        refused(1, "auth.env", json!("TOGETHER-KEY"), "(together): auth.env:", "not a valid environment variable name");
        refused(1, "auth.env", json!("1KEY"), "(together): auth.env:", "not a valid environment variable name");
        refused(1, "auth.env", json!(""), "(together): auth.env:", "not a valid environment variable name");
        refused(
            5,
            "auth.headers.Modal-Key",
            json!("MODAL ID"),
            "(modal): auth.headers.Modal-Key:",
            "environment variable",
        );
        refused(5, "auth.headers", json!({"Bad Header": "X"}), "(modal): auth.headers.Bad Header:", "HTTP header name");
        refused(
            5,
            "auth.headers",
            json!({"Content-Type": "X"}),
            "(modal): auth.headers.Content-Type:",
            "sets this header",
        );
        refused(5, "auth.headers", json!({}), "(modal): auth.headers:", "at least one header");
        assert!(is_env_name("_A1") && is_env_name("ZAI_API_KEY") && !is_env_name("A=B"));
    }

    #[test]
    fn reasoning_docs_is_documented_or_pending_smoke() {
        refused(1, "reasoning_docs", json!("maybe"), "(together): reasoning_docs:", "`maybe` is not one of");
        assert!(problems_with(1, "reasoning_docs", json!("pending_smoke")).is_empty());
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_provider_and_the_key() {
        refused(3, "extar", json!({}), "(baseten): extar: unknown field `extar`", "");
        refused(3, "auth.envv", json!("X"), "(baseten): auth: unknown field `envv`", "");
        refused(3, "stream_usage", json!("yes"), "(baseten): stream_usage: invalid type", "");
        refused(
            3,
            "price_usd_per_million_tokens.input",
            json!(-1),
            "(baseten): price_usd_per_million_tokens:",
            "positive",
        );
        let (spec, mut root) = bundled_value();
        root["colour"] = json!("blue");
        root["providers"][0]["model_id"] = json!("");
        root["providers"][4]["endpoint"] = json!("https://x:0x/");
        let err = ProviderTable::from_value(Path::new("providers.yaml"), &root, &spec).unwrap_err().to_string();
        assert!(err.starts_with("3 problem(s) found:"), "{err}");
        assert!(err.contains("providers.yaml: colour: unknown key"), "{err}");
    }

    #[test]
    fn the_table_must_match_the_specs_concurrency_and_request_count() {
        let (mut spec, value) = bundled_value();
        spec.execution_plan.maximum_global_concurrency = Some(4);
        spec.execution_plan.total_provider_requests = Some(6000);
        let err = ProviderTable::from_value(Path::new("providers.yaml"), &value, &spec).unwrap_err().to_string();
        assert!(err.contains("execution_plan.maximum_global_concurrency: 4 differs from the 10 providers"), "{err}");
        spec.execution_plan.total_provider_requests = Some(600);
        spec.execution_plan.maximum_global_concurrency = None;
        let err = ProviderTable::from_value(Path::new("providers.yaml"), &value, &spec).unwrap_err().to_string();
        assert!(err.contains("execution_plan.total_provider_requests: 600 differs from 6000"), "{err}");
    }

    #[test]
    fn a_load_plan_may_not_send_the_table_more_requests_than_the_bound() {
        use crate::spec::{LoadPlan, Objectives, StepTarget};
        use inferbench_contract::vocab::{ArrivalProcess, LoadMode};
        let (mut spec, value) = bundled_value();
        spec.execution_plan = Default::default();
        let plan = |rate: f64| LoadPlan {
            mode: LoadMode::OpenLoop,
            arrivals: ArrivalProcess::Constant,
            burstiness: None,
            trace: None,
            trace_name: None,
            steps: vec![StepTarget::Rate(rate)],
            search: None,
            concurrency_cap: None,
            requests_per_user: None,
            step_seconds: 100.0,
            warmup_seconds: 0.0,
            cooldown_seconds: 0.0,
            seed: 0,
            workload: Default::default(),
            objectives: Objectives::default(),
        };
        // 10 providers × 100 s: 20,000 req/s is exactly the bound, a little more is over it.
        spec.load = Some(plan(20_000.0));
        assert!(ProviderTable::from_value(Path::new("providers.yaml"), &value, &spec).is_ok());
        spec.load = Some(plan(20_001.0));
        let err = ProviderTable::from_value(Path::new("providers.yaml"), &value, &spec).unwrap_err().to_string();
        assert!(err.contains("load.rates: about 20001000 requests (rates × step_seconds × the 10 providers"), "{err}");
    }

    #[test]
    fn unreadable_and_unparsable_tables_are_bad_input() {
        let (spec, _) = bundled();
        let dir = tempfile::tempdir().unwrap();
        let err = ProviderTable::load(&dir.path().join("providers.yaml"), &spec).unwrap_err();
        assert!(matches!(err, Error::Unreadable { .. }), "{err:?}");
        std::fs::write(dir.path().join("p.yaml"), "providers: [\n").unwrap();
        let err = ProviderTable::load(&dir.path().join("p.yaml"), &spec).unwrap_err();
        assert!(err.is_bad_input() && err.to_string().contains("p.yaml: not valid YAML"), "{err}");
    }
}
