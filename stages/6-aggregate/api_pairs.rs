//! What a wire API costs. One endpoint reached over two APIs appears as two providers of one
//! run (the same model id, the same endpoint but for the API's path, e.g.
//! `https://x/v1/chat/completions` and `https://x/v1/responses`); every round sent both the
//! same item at the same time, so the per-round TTFA and E2E differences measure the API, not
//! the moment. Each difference's median carries the paired bootstrap's interval (the method
//! `ib-compare` uses, `inferbench_stats::bootstrap`), so "Responses adds x ms on this endpoint"
//! is a figure with its uncertainty.
use crate::join::Observation;
use inferbench_contract::documents::{ApiPairRow, PairedDifference};
use inferbench_contract::vocab::WireApi;
use inferbench_inputs::providers::{Provider, ProviderTable};
use inferbench_stats::bootstrap::{interval, min_pairs, RankTable, Settings};
use std::collections::BTreeMap;

/// The bootstrap's settings: `ib-compare`'s defaults.
pub const SETTINGS: Settings = Settings { seed: 20261201, resamples: 10_000, confidence: 95 };

/// The endpoint without its API's path: what two providers reaching one server share.
fn endpoint_base(provider: &Provider, api: WireApi) -> &str {
    let endpoint = provider.endpoint.trim_end_matches('/');
    // `v1/chat/completions` → `/chat/completions`: the part every API's base is followed by.
    let path = api.route().trim_start_matches("v1");
    endpoint.strip_suffix(path).unwrap_or(endpoint)
}

/// The API pairs of `table` (whose rows without an API take `spec_api`), each with its
/// differences over `observations`' rounds.
pub fn compute(table: &ProviderTable, spec_api: WireApi, observations: &[Observation]) -> Vec<ApiPairRow> {
    let mut providers: Vec<&Provider> = table.providers.iter().collect();
    providers.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    for (i, a) in providers.iter().enumerate() {
        for b in &providers[i + 1..] {
            let (api_a, api_b) = (a.api(spec_api), b.api(spec_api));
            if api_a == api_b || a.model_id != b.model_id || endpoint_base(a, api_a) != endpoint_base(b, api_b) {
                continue;
            }
            let figure = |take: fn(&Observation) -> Option<f64>| {
                let of = |name: &str| -> BTreeMap<i64, f64> {
                    observations
                        .iter()
                        .filter(|o| o.response.provider == name)
                        .filter_map(|o| take(o).map(|v| (o.response.round_index, v)))
                        .collect()
                };
                let (on_a, on_b) = (of(&a.name), of(&b.name));
                let mut differences: Vec<f64> =
                    on_a.iter().filter_map(|(round, x)| on_b.get(round).map(|y| x - y)).collect();
                difference(&mut differences)
            };
            out.push(ApiPairRow {
                provider_a: a.name.clone(),
                api_a,
                provider_b: b.name.clone(),
                api_b,
                ttfa: figure(|o| o.response.ttfa_ms),
                e2e: figure(|o| o.response.e2e_latency_ms),
            });
        }
    }
    out
}

/// The median of `differences` with its bootstrap interval and verdict.
fn difference(differences: &mut [f64]) -> PairedDifference {
    let n = differences.len();
    if n == 0 {
        return PairedDifference {
            paired_count: 0,
            difference_p50_ms: None,
            interval_low_ms: None,
            interval_high_ms: None,
            verdict: "no_pairs".into(),
        };
    }
    let table = RankTable::draw(&SETTINGS, n);
    let got = interval(&SETTINGS, &table, differences);
    let verdict = if n < min_pairs(SETTINGS.confidence) {
        "too_few_rounds"
    } else if got.high < 0.0 {
        "a_faster"
    } else if got.low > 0.0 {
        "b_faster"
    } else {
        "inconclusive"
    };
    PairedDifference {
        paired_count: n as i64,
        difference_p50_ms: Some(got.estimate),
        interval_low_ms: Some(got.low),
        interval_high_ms: Some(got.high),
        verdict: verdict.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, &str, &str, &str)]) -> ProviderTable {
        let mut text = String::from("providers:\n");
        for (name, endpoint, api, model) in rows {
            text.push_str(&format!(
                "  - {{name: {name}, endpoint: '{endpoint}', api: {api}, auth: {{kind: bearer, env: K}}, model_id: {model}, \
                 price_usd_per_million_tokens: {{input: 1, output: 1}}}}\n"
            ));
        }
        serde_norway::from_str(&text).unwrap()
    }

    #[test]
    fn one_endpoint_over_two_apis_is_a_pair_and_nothing_else_is() {
        let t = table(&[
            ("chat", "https://x.test/v1/chat/completions", "chat-completions", "m"),
            ("resp", "https://x.test/v1/responses/", "responses", "m"),
            ("msg", "https://x.test/v1/messages", "messages", "m"),
            ("other-host", "https://y.test/v1/responses", "responses", "m"),
            ("other-model", "https://x.test/v1/messages", "messages", "n"),
            ("same-api", "https://x.test/v1/chat/completions", "chat-completions", "m"),
        ]);
        let pairs: Vec<(String, String)> =
            compute(&t, WireApi::ChatCompletions, &[]).into_iter().map(|p| (p.provider_a, p.provider_b)).collect();
        let want = [("chat", "msg"), ("chat", "resp"), ("msg", "resp"), ("msg", "same-api"), ("resp", "same-api")];
        assert_eq!(pairs, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn the_difference_is_the_paired_median_with_its_bootstrap_interval() {
        let mut few = [3.0, 1.0, 2.0];
        let d = difference(&mut few);
        assert_eq!((d.paired_count, d.difference_p50_ms, d.verdict.as_str()), (3, Some(2.0), "too_few_rounds"));
        let mut slower: Vec<f64> = (0..40).map(|i| 8.0 + f64::from(i % 5)).collect();
        let d = difference(&mut slower);
        assert_eq!((d.difference_p50_ms, d.verdict.as_str()), (Some(10.0), "b_faster"));
        assert!(d.interval_low_ms.unwrap() >= 8.0 && d.interval_high_ms.unwrap() <= 12.0, "{d:?}");
        let mut mixed: Vec<f64> = (0..40).map(|i| f64::from(i) - 20.0).collect();
        assert_eq!(difference(&mut mixed).verdict, "inconclusive");
        assert_eq!(difference(&mut []).verdict, "no_pairs");
    }
}
