//! The pair view: two providers' pooled figures side by side, and the distribution of their
//! paired per-round E2E differences. The page carries each provider's figures once and each
//! selectable pair's differences, and page.js draws the chosen pair from them.
use super::views::{table, wide};
use super::{view, Kind, Page};
use inferbench_contract::metrics::{Column, E2E_LATENCY, FAILURE, OUTPUT_TOKENS_PER_SECOND, TASK_SUCCESS, TTFA};
use inferbench_present::html::{text, Element};
use inferbench_present::number::DASH;
use serde_json::Value;

/// The metrics the pair view sets side by side, before the rank.
const PAIR_METRICS: [Column; 8] = [
    E2E_LATENCY.at(50),
    E2E_LATENCY.at(99),
    TTFA.at(50),
    TTFA.at(95),
    OUTPUT_TOKENS_PER_SECOND.at(50),
    OUTPUT_TOKENS_PER_SECOND.at(95),
    TASK_SUCCESS.value(),
    FAILURE.value(),
];

/// The figures the pair view sets side by side: label, pooled key, kind (the metrics, then
/// the rank).
fn pair_figures() -> Vec<(String, String, Kind)> {
    let metrics = PAIR_METRICS.iter().map(|c| (c.short_heading(), c.key(), Kind::of(*c)));
    metrics.chain([("Rank".to_string(), "rank".to_string(), Kind::Count)]).collect()
}

/// The side-by-side table of two providers, from their figure cells (`pair_figures` order).
/// page.js builds the same markup from the same cells when another pair is chosen.
fn side_by_side(la: &str, lb: &str, a: &[String], b: &[String]) -> String {
    let rows: Vec<Vec<String>> = pair_figures()
        .iter()
        .enumerate()
        .map(|(k, (label, ..))| vec![text(label), a[k].clone(), b[k].clone()])
        .collect();
    table("", &["Figure", la, lb], &rows)
}

/// The pair selector; the chosen pair's two providers side by side, then its paired E2E
/// differences. The page carries each provider's figures once and each selectable pair's
/// differences row, and page.js draws the chosen pair from them (the first is drawn here
/// too, for a reader without scripts): the page grows with the providers, not their pairs.
pub fn pair(page: &Page) -> String {
    let pairs = page.shown_pairs().to_vec();
    let mut select =
        String::from("<p class=\"selector\"><label for=\"pair-select\">Compare </label><select id=\"pair-select\">");
    let first = default_pair(page);
    for (i, a, b) in &pairs {
        select.push_str(
            &Element::new("option")
                .a("value", format!("{a}|{b}"))
                .flag("selected", Some(*i) == first)
                .text(&format!("{} vs {}", page.label_of(a), page.label_of(b)))
                .close(),
        );
    }
    select.push_str("</select></p>");
    let in_pairs: std::collections::BTreeSet<&str> = pairs.iter().flat_map(|(_, a, b)| [*a, *b]).collect();
    // Each provider's figure cells, once.
    let cells = |id: &str| -> Vec<String> {
        let p = page.providers.iter().find(|p| p.id == id);
        pair_figures()
            .iter()
            .map(|(_, key, kind)| p.map_or(DASH.to_string(), |p| page.metric(&page.pooled(p, key), *kind)))
            .collect()
    };
    let providers: serde_json::Map<String, Value> = in_pairs
        .iter()
        .map(|id| (id.to_string(), serde_json::json!({"label": text(page.label_of(id)), "cells": cells(id)})))
        .collect();
    let mut differences = serde_json::Map::new();
    let mut drawn = String::new();
    for (i, a, b) in &pairs {
        let key = format!("{a}|{b}");
        let c = |k: &str, kind| page.comparison(&format!("/pairwise_e2e_latency_differences/{i}/{k}"), kind);
        let (la, lb) = (page.label_of(a), page.label_of(b));
        let row = &page.comparisons["pairwise_e2e_latency_differences"][*i];
        let eligible = row["eligible_comparison"].as_bool() == Some(true);
        let reasons: Vec<String> =
            row["exclusion_reasons"].as_array().into_iter().flatten().filter_map(|r| r.as_str()).map(text).collect();
        let diff_rows = vec![vec![
            c("difference_p50_ms", Kind::DiffMs),
            c("difference_p95_ms", Kind::DiffMs),
            c("difference_p99_ms", Kind::DiffMs),
            format!("{} of {}", c("paired_count", Kind::Count), c("total_round_count", Kind::Count)),
            c("coverage_rate", Kind::Rate),
            if eligible { "yes".into() } else { wide(&format!("no: {}", reasons.join("; "))) },
        ]];
        let diffs = table(
            &format!("{la} − {lb}, E2E per round (negative: {la} was faster)"),
            &["Difference p50", "Difference p95", "Difference p99", "Paired rounds", "Coverage", "Compared"],
            &diff_rows,
        );
        if Some(*i) == first || (first.is_none() && drawn.is_empty()) {
            drawn = Element::new("div")
                .a("class", "pair")
                .a("id", "pair-drawn")
                .a("data-pair", &key)
                .raw(&side_by_side(la, lb, &cells(a), &cells(b)))
                .raw(&diffs)
                .close();
        }
        differences.insert(key, Value::from(diffs));
    }
    let figures: Vec<String> = pair_figures().iter().map(|(label, ..)| text(label)).collect();
    let data = serde_json::json!({"figures": figures, "providers": providers, "differences": differences});
    // Inside <script>, `</` would end the element: JSON allows `<\/` for it.
    let data = serde_json::to_string(&data).unwrap_or_default().replace("</", "<\\/");
    let body = format!("{select}{drawn}<script type=\"application/json\" id=\"pair-data\">{data}</script>");
    view(
        "pair",
        "Provider A vs provider B",
        "Choose two providers. Their pooled figures are side by side, then the distribution of the per-round \
         differences of end-to-end latency, A − B over the rounds in which both completed the same item at the same \
         time: a negative difference means A was faster.",
        &body,
    )
}

/// What each wire API costs on one endpoint (`comparisons.json`'s `api_pairs`), when the run
/// reaches one over two APIs: each pair's TTFA and E2E median differences with their
/// paired-bootstrap intervals, every figure carrying its pointer.
pub fn api_cost(page: &Page) -> Option<String> {
    let pairs = page.comparisons["api_pairs"].as_array()?;
    if pairs.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for (i, row) in pairs.iter().enumerate() {
        let name = |side: &str| {
            let id = row[format!("provider_{side}")].as_str().unwrap_or_default();
            let api = row[format!("api_{side}")].as_str().unwrap_or_default();
            text(&format!("{} ({api})", page.label_of(id)))
        };
        let cell = |figure: &str| {
            let c = |k: &str, kind| page.comparison(&format!("/api_pairs/{i}/{figure}/{k}"), kind);
            let verdict = row[figure]["verdict"].as_str().unwrap_or_default().replace('_', " ");
            format!(
                "{} [{}, {}] over {} rounds: {}",
                c("difference_p50_ms", Kind::DiffMs),
                c("interval_low_ms", Kind::DiffMs),
                c("interval_high_ms", Kind::DiffMs),
                c("paired_count", Kind::Count),
                text(&verdict)
            )
        };
        rows.push(vec![name("a"), name("b"), cell("ttfa"), cell("e2e")]);
    }
    let body =
        table("", &["Provider A (API)", "Provider B (API)", "TTFA A − B, ms [95 %]", "E2E A − B, ms [95 %]"], &rows);
    Some(view(
        "api-cost",
        "What does each wire API cost on one endpoint?",
        "Providers that are one endpoint reached over two wire APIs were sent the same item at the same time in \
         every round. Each figure is the median of A − B over the rounds where both have it (negative: A was faster), \
         with its 95 % paired-bootstrap interval; under 6 rounds no verdict is given.",
        &body,
    ))
}

/// The pair shown first: the first comparable pair with paired rounds, else the first.
pub fn default_pair(page: &Page) -> Option<usize> {
    let all = page.comparisons["pairwise_e2e_latency_differences"].as_array()?;
    let rows: Vec<&serde_json::Value> = page.shown_pairs().iter().map(|(i, ..)| &all[*i]).collect();
    let at = |k: usize| page.shown_pairs()[k].0;
    let ranked: Vec<&str> = page.metrics["ranking"].as_array()?.iter().filter_map(|v| v.as_str()).collect();
    let best = |r: &&serde_json::Value| {
        ranked.len() >= 2
            && ((r["provider_a"] == ranked[0] && r["provider_b"] == ranked[1])
                || (r["provider_a"] == ranked[1] && r["provider_b"] == ranked[0]))
    };
    let usable = |r: &serde_json::Value| r["paired_count"].as_i64().unwrap_or(0) > 0;
    let k = rows.iter().position(|r| best(r) && usable(r)).or_else(|| rows.iter().position(|r| usable(r)));
    k.or(if rows.is_empty() { None } else { Some(0) }).map(at)
}
