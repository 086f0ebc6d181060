//! `report.html`: the same run as `report.md`, as one self-contained page that a person reads
//! in a browser (phone included) and a test reads by its attributes. Styles and the one
//! script are inlined (`page.css`, `page.js`), fonts are the system's, charts are SVG written
//! here (`svg.rs`): nothing is fetched, so the page works from `file://` and offline.
//!
//! Every figure is taken from `metrics.json` or `comparisons.json`, never recomputed, and
//! carries where it came from: `data-metric` (or `data-comparison`), an RFC 6901 pointer into
//! the file, and `data-value`, the exact JSON number text. The documents are read here as
//! JSON values, from the very bytes `inputs` hashed, so the pointers and the number text are
//! the file's own. What the charts draw from the responses (distributions, the timeline, the
//! paired differences) uses the samples `ib-aggregate` counted, and the figure under each
//! chart says how many.
//!
//! Views: `views.rs` (tables), `charts.rs` (figures). Each is a `<section class="view">`
//! whose heading is the question it answers.
//!
//! What a browser test may rely on (keep it):
//! - `<html lang="en" data-report-ready="0">`; the script sets `data-report-ready="1"` at the
//!   end of its setup, and `data-report-error` (the message) if anything throws.
//! - Each view is `<section class="view" id="view-NAME" data-view="NAME">` with an `<h2>`, a
//!   `<p class="how-to-read">` and a `<table>` or a chart; NAME is one of leaderboard,
//!   tokens-per-second, e2e-tail, ttfa, accuracy-failures, pair, distributions,
//!   speed-vs-start, outcomes, timeline, pair-differences, failure-log, provenance; and, first,
//!   `load` in a load run (`charts/load.rs`: latency against throughput per provider, and each
//!   step's figures from `metrics.json`'s `load` section).
//! - Each chart is `<svg data-chart="…" data-series="s1,s2,…">`, and every listed series has
//!   a drawn element inside it carrying `data-series="s1"` (provider ids; outcome classes
//!   for the outcome bars; the pair key `A|B` for the pair differences).
//! - Every figure of metrics.json is an element with `data-metric` (the pointer) and
//!   `data-value` (the number's text, or `null`); of comparisons.json, `data-comparison`.
//! - `#scope-select` (values `pooled` and the family names) shows the `[data-scope]` elements
//!   of its value and hides the others with the `hidden` attribute; `#pair-select` (values
//!   `A|B`) likewise the `[data-pair]` elements. The pair view (`#pair-drawn`) is drawn by the
//!   script for the chosen pair from `#pair-data` (each provider's figure cells once, each
//!   pair's differences table), with the same `data-metric`/`data-comparison` marks.
//!
//! Bounded whatever the run's size: the per-provider charts draw the first
//! [`CHART_PROVIDERS`] providers in leaderboard order (the tables list all, long ones scroll
//! within their own height), the pair views the [`SHOWN_PAIRS`] pairs among them, the
//! timeline at most `charts::timeline::TIMELINE_BINS` columns (bins of rounds), a curve
//! `charts::distributions::CURVE_POINTS` points, and the failure log
//! `responses::FAILURE_LOG_CAP` rows.
mod cache;
mod charts;
mod json;
pub(crate) mod pair;
pub(crate) mod svg;
pub(crate) mod views;

use crate::inputs::ReportInputs;
use crate::labels::label;
use inferbench_contract::documents::GroupMetrics;
use inferbench_contract::metrics::{Column, Unit};
use inferbench_contract::Error;
use inferbench_present::html::Element;
use inferbench_present::number::{self, grouped, significant, Between, DASH};
use inferbench_store::run::RunDir;
pub use json::Doc;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Display;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The list of `comparisons.json` with a row per pair of providers.
const PAIRS: &str = "pairwise_e2e_latency_differences";

/// `metrics.json` and `comparisons.json` as JSON values that keep each number's text, parsed
/// from the bytes the report's inputs were read, hashed and verified from. Of the pairs, only
/// the shown ones ([`SHOWN_PAIRS`]) are kept: the others are null.
pub fn documents(inputs: &ReportInputs) -> anyhow::Result<(Doc, Doc)> {
    let bad = |name: &str, e: serde_json::Error| Error::bad(format!("{name}: {e}"));
    let metrics = Doc::parse(&inputs.metrics_text).map_err(|e| bad(RunDir::METRICS_JSON, e))?;
    let charted: Vec<&str> = provider_rows(&metrics.value).take(CHART_PROVIDERS).map(|(_, id)| id).collect();
    let pairs = &inputs.comparisons.pairwise_e2e_latency_differences;
    let shown =
        shown_pairs(pairs.len(), pairs.iter().map(|p| Some((p.provider_a.as_str(), p.provider_b.as_str()))), &charted);
    let mut keep = vec![false; pairs.len()];
    for (i, ..) in shown {
        keep[i] = true;
    }
    let keep = |i: usize| keep.get(i).copied().unwrap_or(false);
    let comparisons =
        Doc::parse_keeping(&inputs.comparisons_text, PAIRS, &keep).map_err(|e| bad(RunDir::COMPARISONS, e))?;
    Ok((metrics, comparisons))
}

/// Each pooled row of `metrics.json` with a provider: its index and the provider, in the
/// document's (leaderboard) order.
fn provider_rows(metrics: &Value) -> impl Iterator<Item = (usize, &str)> {
    let rows = metrics["combined_provider_metrics"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    rows.iter().enumerate().filter_map(|(row, r)| Some((row, r["provider"].as_str()?)))
}

/// The pairs with a view, from the `count` pair rows' providers (None: a row without them):
/// every pair when there are at most [`SHOWN_PAIRS`], else the pairs among `charted`.
fn shown_pairs<'p>(
    count: usize,
    rows: impl Iterator<Item = Option<(&'p str, &'p str)>>,
    charted: &[&str],
) -> Vec<(usize, &'p str, &'p str)> {
    rows.enumerate()
        .filter_map(|(i, pair)| pair.map(|(a, b)| (i, a, b)))
        .filter(|(_, a, b)| count <= SHOWN_PAIRS || (charted.contains(a) && charted.contains(b)))
        .take(SHOWN_PAIRS)
        .collect()
}

/// A provider as the page shows it, in `metrics.json`'s pooled order (ranked first).
pub struct Provider<'a> {
    pub id: &'a str,
    pub label: &'a str,
    /// Index in `combined_provider_metrics`.
    pub row: usize,
}

/// What every view is rendered from.
pub struct Page<'a> {
    pub inputs: &'a ReportInputs,
    pub metrics: &'a Value,
    pub comparisons: &'a Value,
    metrics_doc: &'a Doc,
    comparisons_doc: &'a Doc,
    pub providers: Vec<Provider<'a>>,
    pub families: Vec<String>,
    /// `Responses::providers` index → index in `providers`.
    slots: Vec<Option<usize>>,
    /// (provider, family) → index in `task_family_metrics`.
    family_rows: HashMap<(&'a str, &'a str), usize>,
    /// The pairs drawn (see [`Page::shown_pairs`]).
    shown_pairs: Vec<(usize, &'a str, &'a str)>,
}

/// Providers drawn in the per-provider charts (distributions, outcomes, timeline, the
/// scatter), in leaderboard order; the tables list every provider. More curves or rows than
/// this are unreadable, and the page would grow with the number of providers squared.
pub const CHART_PROVIDERS: usize = 25;

/// Pairs with a precomputed view (side by side, differences): every pair among the first
/// providers in leaderboard order, so that at most this many are drawn whatever the number of
/// providers (1,000 providers have 499,500 pairs); comparisons.json has them all.
pub const SHOWN_PAIRS: usize = CHART_PROVIDERS * (CHART_PROVIDERS - 1) / 2;

/// How a figure is shown.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Kind {
    /// Milliseconds, shown in seconds with three significant digits (`7.11 s`).
    Ms,
    /// A signed difference in milliseconds, shown like `Ms` with a sign.
    DiffMs,
    /// Tokens per second, one decimal.
    Tps,
    /// A fraction, as a percentage with two decimals.
    Rate,
    /// A whole count.
    Count,
    /// US dollars; null is `unknown`.
    Usd,
    /// Tokens, whole.
    Tokens,
    /// Milliseconds between the chunks of a stream, shown in ms with one decimal (`2.5 ms`).
    GapMs,
}

impl Kind {
    /// How a column of the metric catalogue is shown: by its unit.
    pub fn of(column: Column) -> Kind {
        match column.metric.unit {
            Unit::Ms => Kind::Ms,
            Unit::TokensPerSecond => Kind::Tps,
            Unit::Tokens => Kind::Tokens,
            Unit::Fraction => Kind::Rate,
        }
    }
}

impl<'a> Page<'a> {
    pub fn new(inputs: &'a ReportInputs, metrics_doc: &'a Doc, comparisons_doc: &'a Doc) -> Self {
        let (metrics, comparisons) = (&metrics_doc.value, &comparisons_doc.value);
        let providers: Vec<Provider> =
            provider_rows(metrics).map(|(row, id)| Provider { id, label: label(id, &inputs.table), row }).collect();
        let families = inputs.spec.families.iter().map(|f| f.name.to_string()).collect();
        let slots = inputs
            .responses
            .providers
            .iter()
            .map(|name| providers.iter().position(|p| p.id == name.as_str()))
            .collect();
        let family_rows = metrics["task_family_metrics"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Some(((r["provider"].as_str()?, r["task_family"].as_str()?), i)))
            .rev()
            .collect();
        let charted: Vec<&str> = providers.iter().take(CHART_PROVIDERS).map(|p| p.id).collect();
        // The rows `documents` dropped are null, and name no providers.
        let rows = comparisons[PAIRS].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let providers_of = |r: &'a Value| Some((r["provider_a"].as_str()?, r["provider_b"].as_str()?));
        let shown_pairs = shown_pairs(rows.len(), rows.iter().map(providers_of), &charted);
        Page {
            inputs,
            metrics,
            comparisons,
            metrics_doc,
            comparisons_doc,
            providers,
            families,
            slots,
            family_rows,
            shown_pairs,
        }
    }

    /// The page index of the provider `Responses::providers[index]`.
    pub fn slot(&self, index: u32) -> Option<usize> {
        self.slots.get(index as usize).copied().flatten()
    }

    /// The providers the per-provider charts draw.
    pub fn charted(&self) -> &[Provider<'a>] {
        &self.providers[..self.providers.len().min(CHART_PROVIDERS)]
    }

    /// A sentence for a chart's caption when it leaves providers out, else nothing.
    pub fn charted_note(&self) -> String {
        match self.providers.len() {
            n if n <= CHART_PROVIDERS => String::new(),
            n => format!(
                " It draws the first {CHART_PROVIDERS} of the {n} providers in leaderboard order; the tables list every \
                 provider, and responses.parquet has every response."
            ),
        }
    }

    /// The pairs with a view: every pair of `comparisons.json` when there are at most
    /// [`SHOWN_PAIRS`], else the pairs among the [`CHART_PROVIDERS`] first providers.
    pub fn shown_pairs(&self) -> &[(usize, &'a str, &'a str)] {
        &self.shown_pairs
    }

    /// The pointer of a pooled row's key (a key of the row, or a catalogue column).
    pub fn pooled(&self, p: &Provider, key: impl Display) -> String {
        format!("/combined_provider_metrics/{}/{key}", p.row)
    }

    /// A catalogue column of a provider's pooled row, marked with its pointer and exact value,
    /// shown as its unit is.
    pub fn pooled_figure(&self, p: &Provider, column: Column) -> String {
        self.metric(&self.pooled(p, column), Kind::of(column))
    }

    /// [`Page::pooled_figure`] followed by its 95 % interval, each bound marked with its pointer
    /// (`[1.02 s – 1.31 s]`), or by a dagger whose title is the note when the samples are too
    /// few for an interval.
    pub fn pooled_figure_with_interval(&self, p: &Provider, column: Column) -> String {
        let figure = self.pooled_figure(p, column);
        let Some((lower, upper, note)) = GroupMetrics::interval_keys(column) else {
            return figure;
        };
        let (lower, upper) = (self.pooled(p, lower), self.pooled(p, upper));
        if self.metrics.pointer(&lower).is_some_and(Value::is_number) {
            let kind = Kind::of(column);
            let bounds =
                number::interval(&self.metric(&lower, kind), &self.metric(&upper, kind), Between::SpacedEnDash);
            return format!("{figure} <span class=\"ci\">{bounds}</span>");
        }
        let note = note.map(|n| self.pooled(p, n));
        match note.as_deref().and_then(|n| self.metrics.pointer(n)).and_then(Value::as_str) {
            Some(text) => {
                format!("{figure}{}", Element::new("span").a("class", "ci").a("title", text).text("†").close())
            }
            None => figure,
        }
    }

    /// The pointer of a provider × family row's key, when the row exists.
    pub fn family(&self, provider: &str, family: &str, key: impl Display) -> Option<String> {
        let i = self.family_rows.get(&(provider, family))?;
        Some(format!("/task_family_metrics/{i}/{key}"))
    }

    /// The pointer into `metrics.json` of `key` for `provider` in `scope` (`pooled` or a family).
    pub fn scoped(&self, p: &Provider, scope: &str, key: impl Display) -> Option<String> {
        if scope == "pooled" {
            Some(self.pooled(p, key))
        } else {
            self.family(p.id, scope, key)
        }
    }

    /// A number of `metrics.json` at `pointer`, as a float (None for null or absent).
    pub fn value(&self, pointer: &str) -> Option<f64> {
        self.metrics.pointer(pointer).and_then(Value::as_f64)
    }

    /// The exact text of the number (or null) of `metrics.json` at `pointer`.
    pub fn exact(&self, pointer: &str) -> &str {
        self.metrics_doc.literal(pointer).unwrap_or("null")
    }

    /// The exact text of the number (or null) of `comparisons.json` at `pointer`.
    pub fn exact_comparison(&self, pointer: &str) -> &str {
        self.comparisons_doc.literal(pointer).unwrap_or("null")
    }

    /// A figure of `metrics.json`, marked with its pointer and exact value.
    pub fn metric(&self, pointer: &str, kind: Kind) -> String {
        figure("data-metric", pointer, self.metrics.pointer(pointer), self.metrics_doc.literal(pointer), kind)
    }

    /// A figure of `comparisons.json`, marked with its pointer and exact value.
    pub fn comparison(&self, pointer: &str, kind: Kind) -> String {
        figure(
            "data-comparison",
            pointer,
            self.comparisons.pointer(pointer),
            self.comparisons_doc.literal(pointer),
            kind,
        )
    }

    pub fn label_of(&self, id: &'a str) -> &'a str {
        label(id, &self.inputs.table)
    }
}

/// A figure as a `<span>` carrying its source (`attribute` = pointer) and exact JSON text
/// (`literal`, the file's own; the parsed value only decides what is shown).
fn figure(attribute: &str, pointer: &str, value: Option<&Value>, literal: Option<&str>, kind: Kind) -> String {
    let (exact, shown) = match value {
        Some(Value::Number(x)) => {
            (literal.map_or_else(|| x.to_string(), str::to_string), format_number(x.as_f64().unwrap_or(f64::NAN), kind))
        }
        _ => ("null".to_string(), if kind == Kind::Usd { "unknown" } else { DASH }.to_string()),
    };
    Element::new("span").a(attribute, pointer).a("data-value", exact).text(&shown).close()
}

/// `x` shown as `kind` (the page's one formatting of each kind of figure).
pub fn format_number(x: f64, kind: Kind) -> String {
    match kind {
        Kind::Ms => format!("{} s", significant(x / 1000.0)),
        Kind::DiffMs => format!("{} s", number::sign_shown(significant(x / 1000.0))),
        Kind::Tps => format!("{} tok/s", grouped(x, 1)),
        Kind::Rate => number::percent(x, 2),
        Kind::Count | Kind::Tokens => grouped(x, 0),
        Kind::GapMs => format!("{} ms", grouped(x, 1)),
        Kind::Usd => format!("${}", grouped(x, 4)),
    }
}

/// A view: `<section class="view" id="view-NAME" data-view="NAME">` with its question, how
/// to read it, and its body.
pub fn view(name: &str, question: &str, how_to_read: &str, body: &str) -> String {
    Element::new("section")
        .a("class", "view")
        .a("id", format!("view-{name}"))
        .a("data-view", name)
        .child(Element::new("h2").text(question))
        .child(Element::new("p").a("class", "how-to-read").text(how_to_read))
        .raw(body)
        .close()
}

/// The whole page, deterministic for the same inputs.
pub fn render(inputs: &ReportInputs, metrics: &Doc, comparisons: &Doc) -> String {
    let page = Page::new(inputs, metrics, comparisons);
    // A load run's view leads: it is what the run was made to measure.
    let load = charts::load(&page).unwrap_or_default();
    let views = [
        load,
        views::leaderboard(&page),
        views::tokens_per_second(&page),
        views::e2e_tail(&page),
        views::ttfa(&page),
        views::accuracy_failures(&page),
        charts::speed_vs_start(&page),
        charts::outcomes(&page),
        charts::distributions(&page),
        charts::timeline(&page),
        pair::pair(&page),
        pair::api_cost(&page).unwrap_or_default(),
        // The probe's view, when the run has one, after the paired differences.
        match &inputs.metrics.cache_probe {
            Some(probe) => format!("{}\n{}", charts::pair_differences(&page), cache::html_view(&page, probe)),
            None => charts::pair_differences(&page),
        },
        views::failure_log(&page),
        views::provenance(&page),
    ];
    let probe = inputs.metrics.cache_probe.as_ref().map(|_| ("cache-probe", "Prompt cache"));
    let api_cost = (!inputs.comparisons.api_pairs.is_empty()).then_some(("api-cost", "API cost"));
    let nav: String = [
        ("leaderboard", "Leaderboard"),
        ("tokens-per-second", "Tokens/s"),
        ("e2e-tail", "p99 tail"),
        ("ttfa", "First token"),
        ("accuracy-failures", "Accuracy & failures"),
        ("speed-vs-start", "Speed vs start"),
        ("outcomes", "Outcomes"),
        ("distributions", "Distributions"),
        ("timeline", "Timeline"),
        ("pair", "A vs B"),
    ]
    .into_iter()
    .chain(api_cost)
    .chain(probe)
    .chain([("failure-log", "Failure log"), ("provenance", "Provenance")])
    .map(|(id, name)| Element::new("a").a("href", format!("#view-{id}")).text(name).close())
    .collect();
    let title = format!("{} — run {}", inputs.spec.name, inputs.lock.run_id);
    let mut out = String::with_capacity(1 << 20);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\" data-report-ready=\"0\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<meta name=\"color-scheme\" content=\"light\">\n");
    out.push_str(&Element::new("title").text(&title).close());
    out.push_str("\n<style>\n");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(&Element::new("header").raw(&views::header(&page)).close());
    out.push('\n');
    out.push_str(&Element::new("nav").a("class", "views").a("aria-label", "Views").raw(&nav).close());
    out.push_str("\n<main>\n");
    for v in views {
        out.push_str(&v);
        out.push('\n');
    }
    out.push_str("</main>\n<script>\n");
    out.push_str(JS);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests;
