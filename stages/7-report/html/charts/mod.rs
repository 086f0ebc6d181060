//! The page's figures, as SVG: per-provider distributions (ECDF) of TTFA, E2E and tokens/s
//! with p50/p95/p99 marked (`distributions`), tokens/s p50 against TTFA p95 (`speed`),
//! outcomes stacked by class (`outcomes`), the run's timeline (round × provider, coloured by
//! outcome, shaded by latency: `timeline`) and the paired E2E differences of the selected
//! pair (`pairs`). What they share is here: the plot's size and margins, the colours, and a
//! figure with its legend; `axes` draws the grid and the tick labels.
//!
//! The curves are drawn from `responses.parquet`'s samples, the ones `ib-aggregate` counted
//! (non-null values; for the pairs, rounds where both providers have an E2E, as
//! `stages/6-aggregate/comparisons.rs` pairs them). The marks and every figure printed come from
//! `metrics.json` and `comparisons.json`. A curve keeps at most
//! `distributions::CURVE_POINTS` points (evenly spaced ranks, the exact minimum and maximum
//! included), so a full run's page stays small.
mod axes;
mod distributions;
mod load;
mod load_timeline;
mod outcomes;
pub mod pairs;
mod speed;
pub mod timeline;

pub use distributions::distributions;
pub use load::load;
pub use outcomes::outcomes;
pub use pairs::pair_differences;
pub use speed::speed_vs_start;
pub use timeline::timeline;

use inferbench_contract::vocab::OperationalOutcome;
use inferbench_present::html::{Element, PALETTE};

const W: f64 = 640.0;
const H: f64 = 340.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 44.0;

/// The colour of the `i`th series: the presenter's palette, in turn.
fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The colour of an outcome class: a palette of its own, sharing no colour with the provider
/// series (`PALETTE`), so a failure class is never read as a provider. Success is pale, so
/// the failures stand out beside it. page.css colours the timeline's cells with the same values.
pub fn outcome_colour(class: OperationalOutcome) -> &'static str {
    match class {
        OperationalOutcome::Success => "#5b7083",
        OperationalOutcome::Timeout => "#7a0019",
        OperationalOutcome::Http429 => "#e9b10a",
        OperationalOutcome::Other4xx => "#6d597a",
        OperationalOutcome::Http5xx => "#c2185b",
        OperationalOutcome::TransportError => "#264653",
        OperationalOutcome::OtherHttp => "#a0a7ae",
        OperationalOutcome::InvalidStream => "#2a9d8f",
        OperationalOutcome::StreamError => "#f06c4b",
        OperationalOutcome::Truncated => "#000000",
    }
}

/// Every outcome class, success first.
fn classes() -> Vec<OperationalOutcome> {
    let mut v = vec![OperationalOutcome::Success];
    v.extend(OperationalOutcome::FAILURES);
    v
}

/// A legend item: a swatch and markup.
fn legend_item(colour: &str, markup: &str) -> String {
    format!("<li><span class=\"swatch\" style=\"background:{colour}\"></span>{markup}</li>")
}

/// A figure: the chart and, under it, its legend with sample counts.
/// `caption` is markup.
fn figure(svg: String, caption: &str, legend: &[String], scope: Option<(&str, &str, bool)>) -> String {
    let mut f = Element::new("figure");
    if let Some((attr, value, hidden)) = scope {
        f = f.a(attr, value).flag("hidden", hidden);
    }
    f.raw(&svg)
        .child(Element::new("figcaption").raw(caption).raw(&format!("<ul class=\"legend\">{}</ul>", legend.concat())))
        .close()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_colours_are_distinct_and_never_a_provider_colour() {
        let colours: Vec<&str> = classes().into_iter().map(outcome_colour).collect();
        for (i, c) in colours.iter().enumerate() {
            assert!(!PALETTE.contains(c), "{c} is also a provider colour");
            assert!(!colours[..i].contains(c), "{c} is used twice");
        }
        let css = include_str!("../page.css");
        for class in classes() {
            let rule = format!("rect.o-{} {{ fill: {}; }}", class.label(), outcome_colour(class));
            assert!(css.contains(&rule), "page.css lacks `{rule}`");
        }
    }
}
