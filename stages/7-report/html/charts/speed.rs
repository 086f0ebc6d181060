//! Tokens per second p50 against TTFA p95: one dot per provider, labelled beside it.
use super::axes::Axes;
use super::{colour, figure, legend_item, H, RIGHT, W};
use crate::html::svg;
use crate::html::{format_number, view, Kind, Page, Provider};
use inferbench_contract::metrics::{Column, OUTPUT_TOKENS_PER_SECOND, TTFA};
use inferbench_present::axis::nice_max;
use inferbench_present::html::{n, text, Element};

/// The horizontal axis: how long the answer takes to start.
const START: Column = TTFA.at(95);
/// The vertical axis: how fast it streams once it has.
const SPEED: Column = OUTPUT_TOKENS_PER_SECOND.at(50);

/// The key of a percentile metric's sample count in a metrics row.
fn population(column: Column) -> String {
    format!("{}/population_count", column.metric.summary.unwrap_or(column.metric.name))
}

pub fn speed_vs_start(page: &Page) -> String {
    let points: Vec<(usize, &Provider, f64, f64, String, String)> = page
        .charted()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let (px, py) = (page.pooled(p, START), page.pooled(p, SPEED));
            Some((i, p, page.value(&px)?, page.value(&py)?, px, py))
        })
        .collect();
    let series: Vec<String> = points.iter().map(|(_, p, ..)| p.id.to_string()).collect();
    let (x1, xs) = nice_max(points.iter().map(|t| t.2).fold(0.0, f64::max));
    let (y1, ys) = nice_max(points.iter().map(|t| t.3).fold(0.0, f64::max));
    let axes = Axes { x0: 0.0, x1, y0: 0.0, y1, log: false };
    let mut s =
        svg::svg("speed-vs-start", &series, W, H, "Tokens per second p50 against TTFA p95, one dot per provider");
    let x_title = format!("{} (s) — further left starts sooner", START.short_heading());
    axes.draw(&mut s, (xs, Kind::of(START), &x_title), (ys, Kind::of(SPEED), &SPEED.short_heading()));
    let mut legend = Vec::new();
    // Label positions: beside each dot, moved down a line while they would overprint a label
    // already placed (points taken from the top).
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|a, b| axes.y(points[*a].3).total_cmp(&axes.y(points[*b].3)).then(a.cmp(b)));
    let mut placed: Vec<(f64, f64, f64)> = Vec::new();
    let mut label_y = vec![0.0; points.len()];
    for k in order {
        let (_, p, x, y, ..) = &points[k];
        let (cx, mut ly) = (axes.x(*x), axes.y(*y) + 4.0);
        let width = 6.5 * p.label.chars().count() as f64 + 8.0;
        let (x0, x1) = if cx > W - RIGHT - 90.0 { (cx - width, cx) } else { (cx, cx + width) };
        while placed.iter().any(|(a, b, py)| (ly - py).abs() < 12.0 && x0 < *b && *a < x1) {
            ly += 12.0;
        }
        placed.push((x0, x1, ly));
        label_y[k] = ly;
    }
    for (k, (i, p, x, y, px, py)) in points.iter().enumerate() {
        let c = colour(*i);
        let exact = |ptr: &str| page.exact(ptr).to_string();
        let mut g = Element::new("g").a("data-series", p.id).a("fill", c);
        g.push(
            Element::new("circle")
                .a("cx", n(axes.x(*x)))
                .a("cy", n(axes.y(*y)))
                .a("r", "5")
                .a("data-series", p.id)
                .a("data-metric-x", px)
                .a("data-value-x", exact(px))
                .a("data-metric-y", py)
                .a("data-value-y", exact(py))
                .child(Element::new("title").text(&format!(
                    "{}: {} at {} {}",
                    p.label,
                    format_number(*y, Kind::of(SPEED)),
                    START.short_heading(),
                    format_number(*x, Kind::of(START))
                ))),
        );
        // Labels right of the dot, or left of it near the right edge.
        let right_edge = axes.x(*x) > W - RIGHT - 90.0;
        // A label pushed away from its dot by another gets a thin line back to it.
        if (label_y[k] - 4.0 - axes.y(*y)).abs() > 6.0 {
            g.push(
                Element::new("line")
                    .a("x1", n(axes.x(*x)))
                    .a("y1", n(axes.y(*y)))
                    .a("x2", n(axes.x(*x) + if right_edge { -6.0 } else { 6.0 }))
                    .a("y2", n(label_y[k] - 4.0))
                    .a("stroke", c)
                    .a("stroke-width", "1"),
            );
        }
        g.push(
            Element::new("text")
                .a("x", n(axes.x(*x) + if right_edge { -7.0 } else { 7.0 }))
                .a("y", n(label_y[k]))
                .a("text-anchor", if right_edge { "end" } else { "start" })
                .a("class", "point-label")
                .a("data-series", p.id)
                .text(p.label),
        );
        s.push(g);
        legend.push(legend_item(
            c,
            &format!(
                "{}: {} <span class=\"n\">({} samples)</span> at {} <span class=\"n\">({} samples)</span>",
                text(p.label),
                page.metric(py, Kind::of(SPEED)),
                page.metric(&page.pooled(p, population(SPEED)), Kind::Count),
                page.metric(px, Kind::of(START)),
                page.metric(&page.pooled(p, population(START)), Kind::Count)
            ),
        ));
    }
    let missing: Vec<&str> =
        page.charted().iter().filter(|p| !series.iter().any(|s| s == p.id)).map(|p| p.label).collect();
    let mut caption =
        "Tokens/s p50 (up is faster streaming) against TTFA p95 (left is a sooner start), pooled.".to_string();
    if !missing.is_empty() {
        caption.push_str(&format!(" Not drawn (no samples): {}.", missing.join(", ")));
    }
    caption.push_str(&page.charted_note());
    view(
        "speed-vs-start",
        "Does a fast stream start fast? Tokens per second against time to first token",
        "Best is the top left: a high median stream speed and a short p95 wait for the first answer token. A dot far to \
         the right streams quickly once it starts but often makes the user wait for the start.",
        &figure(s.close(), &text(&caption), &legend, None),
    )
}
