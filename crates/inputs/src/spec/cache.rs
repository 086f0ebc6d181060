//! `inference.cache_busting` and `inference.cache_probe`: what a run does about providers'
//! prompt caches.
//!
//! A provider that caches prompts (prefix caching) answers a prompt it has seen faster, so a
//! run sent the same prompts as an earlier run may be measured against a cache that run warmed.
//! `cache_busting: true` gives every round a nonce of its own, drawn afresh for every run and
//! sent as the first line of the request's first message, so that no prefix of any prompt has
//! been sent before. `cache_probe: {rounds: K}` measures the caches instead: K extra rounds,
//! each sent twice, whose TTFA difference is reported apart from every other figure. Both are
//! off when absent, and a spec without them runs exactly as before.
use super::check::{shown, Reader};
use super::load::LoadPlan;

/// The keys, as messages name them.
pub const CACHE_BUSTING_KEY: &str = "inference.cache_busting";
pub const CACHE_PROBE_KEY: &str = "inference.cache_probe";

/// The most probe rounds a spec may ask for: each is two extra paired rounds.
pub const MAX_PROBE_ROUNDS: u64 = 10_000;

/// The spec's prompt-cache settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheSettings {
    /// `inference.cache_busting`: a nonce for every round.
    pub busting: bool,
    /// `inference.cache_probe.rounds`: how many probe rounds, each sent twice; `None`: no probe.
    pub probe_rounds: Option<u32>,
}

/// Reads both keys, defaults filled in.
pub(super) fn read(r: &mut Reader) -> CacheSettings {
    let busting = match r.get(CACHE_BUSTING_KEY) {
        None => false,
        Some(serde_json::Value::Bool(on)) => *on,
        Some(other) => {
            r.push(CACHE_BUSTING_KEY, format!("expected true or false, found {}", shown(other)));
            false
        }
    };
    let probe_rounds = match r.get(CACHE_PROBE_KEY) {
        None => None,
        Some(_) => {
            let at = format!("{CACHE_PROBE_KEY}.rounds");
            if r.get(&at).is_none() {
                r.push(&at, "missing: the number of probe rounds, each sent twice (6 or more give a 95 % interval)");
            }
            r.integer(&at, 1, MAX_PROBE_ROUNDS).map(|n| n as u32)
        }
    };
    CacheSettings { busting, probe_rounds }
}

/// What the settings cannot do in a load workflow, refused by key.
pub(super) fn check_against_load(r: &mut Reader, cache: &CacheSettings, load: Option<&LoadPlan>) {
    let Some(plan) = load else { return };
    if cache.probe_rounds.is_some() {
        r.push(
            CACHE_PROBE_KEY,
            "not in a load workflow: a probe round is sent twice, the repeat once every provider's first send \
             ended, which only the closed-loop workflow's barrier does; probe with a spec without `load`",
        );
    }
    if cache.busting && plan.workload.synthetic().is_some() {
        r.push(
            CACHE_BUSTING_KEY,
            "not with a synthetic workload: a nonce would change each prompt's exact o200k_base length and break \
             its shared prefix; synthetic prompts are drawn from `load.seed`, so a new seed sends new prompts",
        );
    }
}

/// `text` as sent with a round's nonce: the line `[nonce <hex>]` before it. `ib-fetch` puts it
/// before the request's first message (a dataset item's system prompt), so that no prefix of
/// the prompt, the system prompt's shared one included, has been sent before.
pub fn with_nonce(nonce: &str, text: &str) -> String {
    format!("[nonce {nonce}]\n{text}")
}
