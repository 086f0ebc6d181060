//! The run's timeline: one row per provider, one column per round (or bin of rounds),
//! coloured by outcome and shaded by latency.
use super::{classes, figure, legend_item, outcome_colour, BOTTOM, RIGHT, TOP, W};
use crate::html::svg;
use crate::html::views::class_name;
use crate::html::{view, Kind, Page};
use inferbench_contract::metrics::E2E_LATENCY;
use inferbench_contract::vocab::OperationalOutcome;
use inferbench_present::axis::nice_max;
use inferbench_present::html::{n, text, Element};
use inferbench_present::number::{grouped, DASH};

/// Most columns the timeline draws: beyond this many rounds, each column is a bin of
/// consecutive rounds, so the page stays the same size for a million requests.
pub const TIMELINE_BINS: usize = 600;

/// Most cells the timeline draws (rows × columns): a full run of 10 providers keeps one
/// column per round, more rows get fewer, wider columns.
pub const TIMELINE_CELLS: usize = 6000;

/// The timeline's columns for `rounds` rounds and `rows` providers.
pub fn timeline_bins(rounds: usize, rows: usize) -> usize {
    rounds.min(TIMELINE_BINS).min((TIMELINE_CELLS / rows.max(1)).max(60)).max(1)
}

/// One provider's responses in one timeline column.
#[derive(Clone, Copy, Default)]
struct Bin {
    responses: u32,
    /// Responses per class, in `classes()` order.
    by_class: [u32; 10],
    /// The slowest completed response's E2E.
    slowest_e2e: Option<f64>,
}

impl Bin {
    /// The class the cell is drawn in: the most frequent failure class when any failed (ties:
    /// the first in `classes()` order), else success.
    fn class(&self) -> OperationalOutcome {
        let all = classes();
        let worst =
            (1..all.len()).filter(|k| self.by_class[*k] > 0).max_by_key(|k| (self.by_class[*k], usize::MAX - k));
        all[worst.unwrap_or(0)]
    }
}

pub fn timeline(page: &Page) -> String {
    let cells = &page.inputs.responses.cells;
    let rounds_n = cells.iter().map(|c| c.round as usize + 1).max().unwrap_or(0).max(1);
    let rounds = rounds_n as f64;
    let shown = page.charted();
    let bins = timeline_bins(rounds_n, shown.len());
    let per_bin = rounds / bins as f64;
    let row_h = 14.0;
    let left = 110.0;
    let h = TOP + row_h * shown.len() as f64 + BOTTOM;
    let series: Vec<String> = shown.iter().map(|p| p.id.to_string()).collect();
    let mut s = svg::svg(
        "timeline",
        &series,
        W,
        h,
        "The run over time: one cell per round and provider, coloured by outcome, darker when slower",
    );
    let cell_w = (W - RIGHT - left) / bins as f64;
    // Shade relative to the slowest provider's pooled E2E p99 (darkest at or beyond it).
    let slowest =
        page.providers.iter().filter_map(|p| page.value(&page.pooled(p, E2E_LATENCY.at(99)))).fold(0.0, f64::max);
    let class_index = |c: OperationalOutcome| classes().iter().position(|k| *k == c).unwrap_or(0);
    let mut grid = vec![vec![Bin::default(); bins]; shown.len()];
    for c in cells {
        let Some(p) = page.slot(c.provider).filter(|p| *p < shown.len()) else { continue };
        let b = ((c.round as usize * bins) / rounds_n).min(bins - 1);
        let bin = &mut grid[p][b];
        bin.responses += 1;
        bin.by_class[class_index(c.outcome)] += 1;
        if c.outcome == OperationalOutcome::Success {
            if let Some(e2e) = c.e2e_ms {
                bin.slowest_e2e = Some(bin.slowest_e2e.map_or(e2e, |m: f64| m.max(e2e)));
            }
        }
    }
    for (k, (p, row)) in shown.iter().zip(&grid).enumerate() {
        let y = TOP + k as f64 * row_h;
        let mut g = Element::new("g").a("data-series", p.id);
        g.push(
            Element::new("text")
                .a("x", n(left - 6.0))
                .a("y", n(y + row_h * 0.75))
                .a("text-anchor", "end")
                .a("data-series", p.id)
                .text(p.label),
        );
        for (b, bin) in row.iter().enumerate() {
            if bin.responses == 0 {
                continue;
            }
            let class = bin.class();
            let opacity = match (class, bin.slowest_e2e) {
                (OperationalOutcome::Success, Some(e2e)) if slowest > 0.0 => {
                    0.15 + 0.85 * (e2e / slowest).clamp(0.0, 1.0).sqrt()
                }
                _ => 1.0,
            };
            let mut rect = Element::new("rect")
                .a("x", n(left + b as f64 * cell_w))
                .a("y", n(y + 1.0))
                .a("width", n(cell_w.max(0.6)))
                .a("height", n(row_h - 2.0))
                .a("class", format!("o-{}", class.label()));
            if opacity < 1.0 {
                rect = rect.a("fill-opacity", n(opacity));
            }
            g.push(rect);
        }
        s.push(g);
    }
    let axis_y = TOP + row_h * shown.len() as f64;
    let (top, st) = nice_max(rounds);
    let mut v = 0.0;
    while v <= top.min(rounds) {
        let x = left + v / per_bin * cell_w;
        s.push(
            Element::new("text")
                .a("x", n(x))
                .a("y", n(axis_y + 14.0))
                .a("text-anchor", "middle")
                .a("class", "tick")
                .text(&grouped(v, 0)),
        );
        v += st;
    }
    s.push(
        Element::new("text")
            .a("x", n((left + W - RIGHT) / 2.0))
            .a("y", n(h - 8.0))
            .a("text-anchor", "middle")
            .a("class", "title")
            .text("Round"),
    );
    let mut legend: Vec<String> =
        classes().iter().map(|c| legend_item(outcome_colour(*c), &text(class_name(*c)))).collect();
    legend.push("<li>blank: no response (missing)</li>".to_string());
    let counts: Vec<String> = shown
        .iter()
        .map(|p| format!("{}: {}", text(p.label), page.metric(&page.pooled(p, "submitted_count"), Kind::Count)))
        .collect();
    let slowest_figure = page
        .providers
        .iter()
        .map(|p| page.pooled(p, E2E_LATENCY.at(99)))
        .find(|ptr| page.value(ptr) == Some(slowest))
        .map_or(DASH.to_string(), |ptr| page.metric(&ptr, Kind::Ms));
    let binned = if bins < rounds_n {
        format!(
            " Each column is a bin of about {} consecutive rounds ({bins} columns): its colour \
             is the bin's most frequent failure class when any request in it failed, and its shade the bin's slowest \
             completed response.",
            grouped(per_bin, 1)
        )
    } else {
        String::new()
    };
    let caption = format!(
        "{} rounds, in the order they ran. A completed cell is shaded by its end-to-end latency: darker is slower, \
         darkest at or beyond {slowest_figure}, the slowest provider's E2E p99. Failures are drawn in their class's \
         colour.{binned}{}",
        grouped(rounds, 0),
        page.charted_note(),
    );
    view(
        "timeline",
        "When did failures and slow responses happen during the run?",
        "Time runs left to right, one row per provider. A vertical band of one colour across many providers is a stall \
         of the run or the network; a streak in one row (a 429 storm, timeouts) is that provider's.",
        &format!(
            "<div class=\"scroll\">{}</div><p class=\"note\">Responses per provider: {}.</p>",
            figure(s.close(), &caption, &legend, None),
            counts.join("; ")
        ),
    )
}
