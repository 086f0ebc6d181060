//! `providers.vendors`: the reference runner's inline provider list (seed-runner.md §2.1),
//! checked against inferbench's built-in knowledge of the ten providers
//! ([`crate::known_providers`]) and completed into a provider table.
//!
//! Each entry says what the reference's spec says: `model_key`, the credential variables
//! (`api_key`, or Modal's `proxy_token_id` and `proxy_token_secret`), the prices, and
//! optionally `docs` and `url`. The reference's drift check refuses an entry whose model id,
//! credential names or URL differ from its code; so does this one, with the reason, because
//! the built-in wire details are only known to be right for those values. A provider beyond
//! the ten, or one configured otherwise, belongs in a provider table (`providers.table`).
//!
//! Unlike the reference, any subset of the ten is accepted, in any order (the order is the
//! base launch order): a spec with fewer vendors is still exactly what it says.
use super::check::{shown, Reader};
use crate::known_providers::{self, Known, EFFORT};
use crate::provider::{url_problem, Price, Provider, ProviderTable};
use serde_json::Value;

const AT: &str = "providers.vendors";
const ELSEWHERE: &str = "list it in a provider table and name that with providers.table";

/// Every key a vendor entry may hold.
const KEYS: [&str; 7] =
    ["docs", "api_key", "proxy_token_id", "proxy_token_secret", "url", "model_key", "pricing_usd_per_million_tokens"];

/// Reads and checks `providers.vendors`, reporting every problem; the table of the entries
/// that were sound (complete only when there was no problem).
pub(super) fn read(r: &mut Reader) -> ProviderTable {
    let mut providers = Vec::new();
    let Some(value) = r.get(AT) else {
        return ProviderTable { providers };
    };
    let Some(map) = value.as_object() else {
        r.push(AT, format!("expected a mapping of vendor name to its entry, found {}", shown(value)));
        return ProviderTable { providers };
    };
    if map.is_empty() {
        r.push(AT, "expected at least one vendor");
    }
    // Only a valid effort is compared: an invalid one is already reported where it is written.
    let effort = r.get("inference.reasoning.default_effort").and_then(Value::as_str).unwrap_or(EFFORT);
    if effort != EFFORT && super::EFFORTS.contains(&effort) && !map.is_empty() {
        r.push(
            AT,
            format!(
                "the built-in wire details of the reference's providers ask for reasoning effort `{EFFORT}`, \
                 and inference.reasoning.default_effort is `{effort}`; list the providers in a provider table \
                 (providers.table) with the reasoning fields for that effort"
            ),
        );
    }
    for (name, entry) in map {
        let at = format!("{AT}.{name}");
        let Some(known) = known_providers::known(name) else {
            let what = format!(
                "inferbench has no built-in knowledge of this provider (it knows {}: seed-runner.md §5.1); {ELSEWHERE}",
                known_providers::names().join(", ")
            );
            r.push(&at, what);
            continue;
        };
        if let Some(provider) = vendor(r, &at, known, entry) {
            providers.push(provider);
        }
    }
    ProviderTable { providers }
}

/// One vendor entry, checked key by key; `None` when it had a problem.
fn vendor(r: &mut Reader, at: &str, known: &Known, entry: &Value) -> Option<Provider> {
    let Some(map) = entry.as_object() else {
        r.push(at, format!("expected a mapping, found {}", shown(entry)));
        return None;
    };
    let before = r.problems.list.len();
    for key in map.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        r.push(&format!("{at}.{key}"), "unknown key");
    }
    // Every value is taken from the entry in hand: a dotted path cannot reach into `Z.AI`.
    let model_at = format!("{at}.model_key");
    match map.get("model_key").and_then(|v| r.string_of(&model_at, v)) {
        Some(model) if model != known.model_id => r.push(
            &model_at,
            format!(
                "must be `{}`, found `{model}`: the built-in wire details of {} are for that model id \
                 (the reference's drift check refuses another one); for another model, {ELSEWHERE}",
                known.model_id, known.name
            ),
        ),
        Some(_) => {}
        None if map.contains_key("model_key") => {}
        None => r.push(&model_at, format!("missing: the model id sent to {}", known.name)),
    }
    credentials(r, at, known, map);
    if let Some(url) = map.get("url") {
        let url_at = format!("{at}.url");
        match url.as_str() {
            Some(url) if url == known.endpoint => {}
            Some(url) => r.push(
                &url_at,
                format!(
                    "must be `{}`, found `{url}`: the reference's drift check requires its code's endpoint; \
                     for another endpoint, {ELSEWHERE}",
                    known.endpoint
                ),
            ),
            None => r.push(&url_at, format!("expected a string, found {}", shown(url))),
        }
    }
    let docs_at = format!("{at}.docs");
    let docs = map.get("docs").and_then(|v| r.string_of(&docs_at, v));
    if let Some(why) = docs.as_deref().and_then(url_problem) {
        r.push(&docs_at, why);
    }
    let price = pricing(r, at, map);
    let price = price.filter(|_| r.problems.list.len() == before)?;
    Some(known.provider(price, docs))
}

/// The credential variable names: exactly the keys the vendor's auth style uses, each naming
/// the variable the reference's code reads.
fn credentials(r: &mut Reader, at: &str, known: &Known, map: &serde_json::Map<String, Value>) {
    let expected = known.auth.spec_keys();
    let style = expected.iter().map(|(key, _)| *key).collect::<Vec<_>>().join(" and ");
    for key in ["api_key", "proxy_token_id", "proxy_token_secret"] {
        let key_at = format!("{at}.{key}");
        match (expected.iter().find(|(k, _)| *k == key), map.contains_key(key)) {
            (Some(&(_, env)), true) => match r.string_of(&key_at, &map[key]) {
                Some(found) if found != env => r.push(
                    &key_at,
                    format!(
                        "must be `{env}`, found `{found}`: the reference's drift check requires the credential \
                         variable its code reads; to read another variable, {ELSEWHERE}"
                    ),
                ),
                _ => {}
            },
            (Some(&(_, env)), false) => {
                r.push(&key_at, format!("missing: {} authenticates with {style} (here `{env}`)", known.name))
            }
            (None, true) => {
                r.push(&key_at, format!("{} does not authenticate with {key}; its credentials are {style}", known.name))
            }
            (None, false) => {}
        }
    }
}

/// `pricing_usd_per_million_tokens`: exactly `input` and `output`, each finite and positive,
/// as the reference requires.
fn pricing(r: &mut Reader, at: &str, map: &serde_json::Map<String, Value>) -> Option<Price> {
    let price_at = format!("{at}.pricing_usd_per_million_tokens");
    let Some(value) = map.get("pricing_usd_per_million_tokens") else {
        r.push(&price_at, "missing: exact input and output prices (USD per million tokens) are required");
        return None;
    };
    let exact = value.as_object().is_some_and(|m| m.len() == 2 && m.contains_key("input") && m.contains_key("output"));
    if !exact {
        r.push(&price_at, format!("expected exactly the keys input and output, found {}", shown(value)));
        return None;
    }
    let positive = |x: f64| if x > 0.0 { Ok(()) } else { Err(format!("must be positive and finite, found {x}")) };
    let input = r.number_of(&format!("{price_at}.input"), &value["input"], positive);
    let output = r.number_of(&format!("{price_at}.output"), &value["output"], positive);
    Some(Price { input: input?, output: output? })
}

#[cfg(test)]
mod tests;
