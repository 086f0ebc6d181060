//! The page's figures, as SVG: per-provider distributions (ECDF) of TTFA, E2E and tokens/s
//! with p50/p95/p99 marked, tokens/s p50 against TTFA p95, outcomes stacked by class, the
//! run's timeline (round × provider, coloured by outcome, shaded by latency) and the paired
//! E2E differences of the selected pair.
//!
//! The curves are drawn from `responses.parquet`'s samples, the ones `ib-aggregate` counted
//! (non-null values; for the pairs, rounds where both providers have an E2E, as
//! `bins/aggregate/comparisons.rs` pairs them). The marks and every figure printed come from
//! `metrics.json` and `comparisons.json`. A curve keeps at most `CURVE_POINTS` points (evenly
//! spaced ranks, the exact minimum and maximum included), so a full run's page stays small.
use super::svg::{self, n, text, Element};
use super::views::{class_name, default_pair};
use super::{format_number, view, Kind, Page, Provider};
use crate::format::fixed;
use crate::responses::{Cell, Responses};
use inferbench_contract::vocab::OperationalOutcome;

/// Points kept per ECDF curve.
pub const CURVE_POINTS: usize = 202;

const W: f64 = 640.0;
const H: f64 = 340.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 44.0;

/// Series colours, distinguishable on white and in print.
const PALETTE: [&str; 12] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#393b79", "#ad494a",
];

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

/// ECDF points `(value, fraction of samples ≤ value)` of ascending `sorted`, at most `max`
/// of them: every sample when there are few, else evenly spaced ranks including the first
/// and the last, so the exact minimum and maximum are kept and both coordinates never
/// decrease.
pub fn ecdf(sorted: &[f64], max: usize) -> Vec<(f64, f64)> {
    let len = sorted.len();
    let at = |k: usize| (sorted[k], (k + 1) as f64 / len as f64);
    if len <= max || max < 2 {
        return (0..len).map(at).collect();
    }
    let mut ranks: Vec<usize> = (0..max)
        .map(|j| ((j as u128 * (len - 1) as u128 + (max as u128 - 1) / 2) / (max as u128 - 1)) as usize)
        .collect();
    ranks.dedup();
    ranks.into_iter().map(at).collect()
}

/// A "nice" axis step for a range of `span` split in about `ticks` parts.
fn step(span: f64, ticks: f64) -> f64 {
    if span.is_nan() || span <= 0.0 {
        return 1.0;
    }
    let raw = span / ticks;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// An axis's upper bound: `max` rounded up to a step.
fn nice_max(max: f64) -> (f64, f64) {
    let s = step(max, 5.0);
    let top = (max / s).ceil().max(1.0) * s;
    (top, s)
}

/// Tick label of a value shown as `kind`, without the unit for compactness: as many decimals
/// as the value needs, at most three.
fn tick(x: f64, kind: Kind) -> String {
    let decimals = |v: f64| {
        (0..3)
            .find(|d| {
                let f = (v * 10f64.powi(*d)).fract().abs();
                f.min(1.0 - f) < 1e-6
            })
            .unwrap_or(3) as usize
    };
    match kind {
        Kind::Ms | Kind::DiffMs => {
            let s = x / 1000.0;
            fixed(s, decimals(s))
        }
        Kind::Rate => {
            let p = 100.0 * x;
            format!("{}%", fixed(p, decimals(p)))
        }
        _ => fixed(x, decimals(x)),
    }
}

/// Axes of a plot of x in [x0, x1] and y in [y0, y1], with grid lines and labels.
struct Axes {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// A logarithmic x axis (x0 > 0).
    log: bool,
}

impl Axes {
    fn x(&self, v: f64) -> f64 {
        let f = |v: f64| if self.log { v.max(self.x0).log10() } else { v };
        LEFT + (f(v) - f(self.x0)) / (f(self.x1) - f(self.x0)).max(f64::MIN_POSITIVE) * (W - LEFT - RIGHT)
    }

    /// The x ticks: multiples of `step`, or 1-2-5 of each decade on a log axis.
    fn x_ticks(&self, step: f64) -> Vec<f64> {
        let mut ticks = Vec::new();
        if self.log {
            // 1-2-5 in each decade; only the powers of ten when there are many decades.
            let decades = (self.x1 / self.x0).log10().round();
            let multiples: &[f64] = if decades > 3.0 { &[1.0] } else { &[1.0, 2.0, 5.0] };
            let mut decade = 10f64.powf(self.x0.log10().floor());
            while decade <= self.x1 * (1.0 + 1e-9) {
                for m in multiples {
                    let v = decade * m;
                    if v >= self.x0 * (1.0 - 1e-9) && v <= self.x1 * (1.0 + 1e-9) {
                        ticks.push(v);
                    }
                }
                decade *= 10.0;
            }
            return ticks;
        }
        let mut v = (self.x0 / step).ceil() * step;
        while v <= self.x1 + step * 1e-9 {
            ticks.push(v);
            v += step;
        }
        ticks
    }
    fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (v - self.y0) / (self.y1 - self.y0).max(f64::MIN_POSITIVE) * (H - TOP - BOTTOM)
    }

    /// Grid, tick labels and axis titles; each axis as (tick step, kind of value, title).
    fn draw(
        &self,
        svg: &mut Element,
        (x_step, x_kind, x_title): (f64, Kind, &str),
        (y_step, y_kind, y_title): (f64, Kind, &str),
    ) {
        let mut g = Element::new("g").a("class", "axes");
        for v in self.x_ticks(x_step) {
            let x = self.x(v);
            g.push(
                Element::new("line")
                    .a("x1", n(x))
                    .a("x2", n(x))
                    .a("y1", n(TOP))
                    .a("y2", n(H - BOTTOM))
                    .a("class", "grid"),
            );
            g.push(
                Element::new("text")
                    .a("x", n(x))
                    .a("y", n(H - BOTTOM + 16.0))
                    .a("text-anchor", "middle")
                    .text(&tick(v, x_kind)),
            );
        }
        let mut v = (self.y0 / y_step).ceil() * y_step;
        while v <= self.y1 + y_step * 1e-9 {
            let y = self.y(v);
            g.push(
                Element::new("line")
                    .a("x1", n(LEFT))
                    .a("x2", n(W - RIGHT))
                    .a("y1", n(y))
                    .a("y2", n(y))
                    .a("class", "grid"),
            );
            g.push(
                Element::new("text")
                    .a("x", n(LEFT - 6.0))
                    .a("y", n(y + 4.0))
                    .a("text-anchor", "end")
                    .text(&tick(v, y_kind)),
            );
            v += y_step;
        }
        g.push(
            Element::new("text")
                .a("x", n((LEFT + W - RIGHT) / 2.0))
                .a("y", n(H - 6.0))
                .a("text-anchor", "middle")
                .a("class", "title")
                .text(x_title),
        );
        g.push(
            Element::new("text")
                .a("transform", format!("translate(14 {}) rotate(-90)", n((TOP + H - BOTTOM) / 2.0)))
                .a("text-anchor", "middle")
                .a("class", "title")
                .text(y_title),
        );
        svg.push(g);
    }
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

/// The distributions view's three metrics: response column, metrics key, flat key prefix,
/// title, kind, lower-tail floors.
struct Metric {
    name: &'static str,
    summary: &'static str,
    flat: &'static str,
    title: &'static str,
    kind: Kind,
    floors: bool,
    sample: fn(&Cell) -> Option<f64>,
}

const METRICS: [Metric; 3] = [
    Metric {
        name: "ttfa",
        summary: "ttfa_ms",
        flat: "ttfa",
        title: "Time to first answer token (s)",
        kind: Kind::Ms,
        floors: false,
        sample: |r| r.ttfa_ms,
    },
    Metric {
        name: "e2e",
        summary: "e2e_latency_ms",
        flat: "e2e_latency",
        title: "End-to-end latency (s)",
        kind: Kind::Ms,
        floors: false,
        sample: |r| r.e2e_ms,
    },
    Metric {
        name: "tokens-per-second",
        summary: "output_tokens_per_second",
        flat: "output_tokens_per_second",
        title: "Visible-answer tokens per second",
        kind: Kind::Tps,
        floors: true,
        sample: |r| r.tokens_per_second,
    },
];

pub fn distributions(page: &Page) -> String {
    let mut scopes = vec!["pooled".to_string()];
    scopes.extend(page.families.iter().cloned());
    let mut select =
        String::from("<p class=\"selector\"><label for=\"scope-select\">Scope </label><select id=\"scope-select\">");
    for s in &scopes {
        let label = if s == "pooled" { "all task families (pooled)".to_string() } else { s.clone() };
        select.push_str(&Element::new("option").a("value", s).flag("selected", s == "pooled").text(&label).close());
    }
    select.push_str("</select></p>");
    let mut body = select;
    for metric in &METRICS {
        body.push_str(&Element::new("h3").text(metric.title.trim_end_matches(" (s)")).close());
        let mut samples = samples_by_scope(page, metric, &scopes);
        for (scope, by_provider) in scopes.iter().zip(samples.iter_mut()) {
            body.push_str(&ecdf_figure(page, metric, scope, std::mem::take(by_provider)));
        }
    }
    view(
        "distributions",
        "How are TTFA, end-to-end latency and tokens per second distributed?",
        "Each curve is one provider's empirical distribution: the fraction of its samples at or below each value \
         (further left is faster for the latencies, further right for tokens per second). Dots mark p50, p95 and p99 as \
         metrics.json reports them; for tokens per second they are the slow-speed floors. Choose all families or one.",
        &body,
    )
}

/// The finite samples of `metric`, sorted, by scope (in `scopes` order: pooled, then the
/// families) and page provider: one pass over the responses, whatever their number.
fn samples_by_scope(page: &Page, metric: &Metric, scopes: &[String]) -> Vec<Vec<Vec<f64>>> {
    let mut out = vec![vec![Vec::new(); page.charted().len()]; scopes.len()];
    for cell in &page.inputs.responses.cells {
        let Some(p) = page.slot(cell.provider).filter(|p| *p < page.charted().len()) else { continue };
        let Some(x) = (metric.sample)(cell).filter(|x| x.is_finite()) else { continue };
        out[0][p].push(x);
        if let Some(f) = scopes.iter().position(|s| s == cell.family.as_str()) {
            out[f][p].push(x);
        }
    }
    for v in out.iter_mut().flatten() {
        v.sort_by(f64::total_cmp);
    }
    out
}

fn ecdf_figure(page: &Page, metric: &Metric, scope: &str, samples: Vec<Vec<f64>>) -> String {
    let series: Vec<(usize, &Provider, Vec<f64>)> =
        page.charted().iter().zip(samples).enumerate().map(|(i, (p, v))| (i, p, v)).collect();
    let drawn: Vec<String> =
        series.iter().filter(|(_, _, v)| !v.is_empty()).map(|(_, p, _)| p.id.to_string()).collect();
    // A log axis: latencies and speeds span decades, and a linear one hides all but the tail.
    let max = series.iter().filter_map(|(_, _, v)| v.last().copied()).fold(f64::MIN_POSITIVE, f64::max);
    let min = series.iter().filter_map(|(_, _, v)| v.iter().copied().find(|x| *x > 0.0)).fold(max, f64::min);
    let x1 = 10f64.powf(max.log10().ceil()).max(1e-3);
    // At most twelve decades: a zero-ish sample must not stretch the axis to 1e-308.
    let x0 = 10f64.powf(min.log10().floor()).max(x1 / 1e12).min(x1 / 10.0);
    let axes = Axes { x0, x1, y0: 0.0, y1: 1.0, log: true };
    let xs = 1.0;
    let chart = format!("distribution-{}", metric.name);
    let label = format!("{} by provider, {scope}", metric.title);
    let mut s = svg::svg(&chart, &drawn, W, H, &label).a("data-scope", scope).flag("hidden", scope != "pooled");
    let title = format!("{} — log scale", metric.title);
    axes.draw(&mut s, (xs, metric.kind, &title), (0.25, Kind::Rate, "Share of samples ≤ value"));
    let mut legend = Vec::new();
    for (i, p, v) in &series {
        let c = colour(*i);
        let count = page
            .scoped(p, scope, &format!("{}/population_count", metric.summary))
            .map_or("—".to_string(), |ptr| page.metric(&ptr, Kind::Count));
        legend.push(legend_item(c, &format!("{} <span class=\"n\">n = {count}</span>", text(p.label))));
        if v.is_empty() {
            continue;
        }
        let points: Vec<(f64, f64)> = ecdf(v, CURVE_POINTS).into_iter().map(|(x, y)| (axes.x(x), axes.y(y))).collect();
        let mut g = Element::new("g").a("data-series", p.id).a("stroke", c).a("fill", c);
        g.push(polyline_series(&points, p.id).a("stroke-width", "1.6"));
        for k in [50, 95, 99] {
            let Some(ptr) = page.scoped(p, scope, &format!("{}_p{k}", metric.flat)) else { continue };
            let Some(value) = page.value(&ptr) else { continue };
            let y = if metric.floors { 1.0 - k as f64 / 100.0 } else { k as f64 / 100.0 };
            let exact = page.exact(&ptr);
            g.push(
                Element::new("circle")
                    .a("cx", n(axes.x(value)))
                    .a("cy", n(axes.y(y)))
                    .a("r", "3")
                    .a("data-series", p.id)
                    .a("data-metric", &ptr)
                    .a("data-value", exact)
                    .child(Element::new("title").text(&format!(
                        "{} p{k}: {}",
                        p.label,
                        format_number(value, metric.kind)
                    ))),
            );
        }
        s.push(g);
    }
    let caption = format!(
        "{} — {}. n is each provider's sample count in metrics.json; a curve keeps at most {CURVE_POINTS} points \
         including the exact minimum and maximum.{}",
        metric.title,
        if scope == "pooled" { "all task families" } else { scope },
        page.charted_note()
    );
    figure(s.close(), &text(&caption), &legend, Some(("data-scope", scope, scope != "pooled")))
}

fn polyline_series(points: &[(f64, f64)], series: &str) -> Element {
    svg::polyline(points).a("data-series", series)
}

pub fn speed_vs_start(page: &Page) -> String {
    let points: Vec<(usize, &Provider, f64, f64, String, String)> = page
        .charted()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let (px, py) = (page.pooled(p, "ttfa_p95"), page.pooled(p, "output_tokens_per_second_p50"));
            Some((i, p, page.value(&px)?, page.value(&py)?, px, py))
        })
        .collect();
    let series: Vec<String> = points.iter().map(|(_, p, ..)| p.id.to_string()).collect();
    let (x1, xs) = nice_max(points.iter().map(|t| t.2).fold(0.0, f64::max));
    let (y1, ys) = nice_max(points.iter().map(|t| t.3).fold(0.0, f64::max));
    let axes = Axes { x0: 0.0, x1, y0: 0.0, y1, log: false };
    let mut s =
        svg::svg("speed-vs-start", &series, W, H, "Tokens per second p50 against TTFA p95, one dot per provider");
    axes.draw(&mut s, (xs, Kind::Ms, "TTFA p95 (s) — further left starts sooner"), (ys, Kind::Tps, "Tokens/s p50"));
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
                    "{}: {} at TTFA p95 {}",
                    p.label,
                    format_number(*y, Kind::Tps),
                    format_number(*x, Kind::Ms)
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
                page.metric(py, Kind::Tps),
                page.metric(&page.pooled(p, "output_tokens_per_second/population_count"), Kind::Count),
                page.metric(px, Kind::Ms),
                page.metric(&page.pooled(p, "ttfa_ms/population_count"), Kind::Count)
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

pub fn outcomes(page: &Page) -> String {
    let shown = page.charted();
    // Counts per class and provider, from metrics.json: 2xx = submitted − failed.
    let count = |p: &Provider, class: OperationalOutcome| -> (f64, String) {
        match class {
            OperationalOutcome::Success => {
                let submitted = page.value(&page.pooled(p, "submitted_count")).unwrap_or(0.0);
                let failed = page.value(&page.pooled(p, "failed_request_count")).unwrap_or(0.0);
                (
                    submitted - failed,
                    format!("{} {}", page.pooled(p, "submitted_count"), page.pooled(p, "failed_request_count")),
                )
            }
            c => {
                let ptr = page.pooled(p, &format!("{}_count", c.label()));
                (page.value(&ptr).unwrap_or(0.0), ptr)
            }
        }
    };
    let present: Vec<OperationalOutcome> =
        classes().into_iter().filter(|c| shown.iter().any(|p| count(p, *c).0 > 0.0)).collect();
    let series: Vec<String> = present.iter().map(|c| c.label().to_string()).collect();
    // Two panels: every request (0–100%), and the failures alone on a scale that shows them.
    let (row_h, left, gap) = (22.0, 120.0, 24.0);
    let full_w = (W - RIGHT - left - gap) * 0.45;
    let fail_x = left + full_w + gap;
    let fail_w = W - RIGHT - fail_x;
    let submitted = |p: &Provider| page.value(&page.pooled(p, "submitted_count")).unwrap_or(0.0);
    let worst = shown
        .iter()
        .map(|p| {
            let failed: f64 = present.iter().filter(|c| c.is_failure()).map(|c| count(p, *c).0).sum();
            if submitted(p) > 0.0 {
                failed / submitted(p)
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max);
    let (scale, scale_step) = nice_max(if worst > 0.0 { worst } else { 0.01 });
    let h = TOP + 18.0 + row_h * shown.len() as f64 + 30.0;
    let mut s = svg::svg("outcomes", &series, W, h, "Outcomes of each provider's requests, stacked by class");
    s.push(Element::new("text").a("x", n(left)).a("y", n(TOP + 8.0)).a("class", "title").text("All requests"));
    s.push(
        Element::new("text")
            .a("x", n(fail_x))
            .a("y", n(TOP + 8.0))
            .a("class", "title")
            .text("Failures only (magnified)"),
    );
    let top = TOP + 18.0;
    for (k, p) in shown.iter().enumerate() {
        let total = submitted(p);
        let y = top + k as f64 * row_h;
        s.push(
            Element::new("text")
                .a("x", n(left - 6.0))
                .a("y", n(y + row_h * 0.65))
                .a("text-anchor", "end")
                .text(p.label),
        );
        let (mut x, mut fx) = (left, fail_x);
        for c in &present {
            let (v, ptr) = count(p, *c);
            if v <= 0.0 || total <= 0.0 {
                continue;
            }
            let title = format!("{}: {} {} of {}", p.label, fixed(v, 0), class_name(*c), fixed(total, 0));
            let bar = |x: f64, w: f64| {
                let mut rect = Element::new("rect");
                if *c == OperationalOutcome::Success {
                    rect = rect.a("data-derived-from", &ptr);
                } else {
                    rect = rect.a("data-metric", &ptr).a("data-value", page.exact(&ptr));
                }
                rect.a("x", n(x))
                    .a("y", n(y + 3.0))
                    .a("width", n(w.max(0.8)))
                    .a("height", n(row_h - 6.0))
                    .a("fill", outcome_colour(*c))
                    .a("data-series", c.label())
                    .child(Element::new("title").text(&title))
            };
            let w = v / total * full_w;
            s.push(bar(x, w));
            x += w;
            if c.is_failure() {
                let w = v / total / scale * fail_w;
                s.push(bar(fx, w));
                fx += w;
            }
        }
    }
    let axis_y = top + row_h * shown.len() as f64 + 4.0;
    for q in [0.0, 0.5, 1.0] {
        let x = left + q * full_w;
        s.push(
            Element::new("text")
                .a("x", n(x))
                .a("y", n(axis_y + 12.0))
                .a(
                    "text-anchor",
                    if q == 0.0 {
                        "start"
                    } else if q == 1.0 {
                        "end"
                    } else {
                        "middle"
                    },
                )
                .a("class", "tick")
                .text(&format!("{}%", q * 100.0)),
        );
    }
    let mut v = 0.0;
    while v <= scale * (1.0 + 1e-9) {
        let x = fail_x + v / scale * fail_w;
        s.push(Element::new("line").a("x1", n(x)).a("x2", n(x)).a("y1", n(top)).a("y2", n(axis_y)).a("class", "grid"));
        s.push(
            Element::new("text")
                .a("x", n(x))
                .a("y", n(axis_y + 12.0))
                .a("text-anchor", if v == 0.0 { "start" } else { "middle" })
                .a("class", "tick")
                .text(&tick(v, Kind::Rate)),
        );
        v += scale_step;
    }
    let legend: Vec<String> = present.iter().map(|c| legend_item(outcome_colour(*c), &text(class_name(*c)))).collect();
    let counts: Vec<String> = shown
        .iter()
        .map(|p| format!("{}: {}", text(p.label), page.metric(&page.pooled(p, "submitted_count"), Kind::Count)))
        .collect();
    let caption = format!(
        "Each provider's submitted requests by outcome: completed 2xx streams (submitted − failed), then each failure \
         class's count from metrics.json. The right panel shows the failures alone, on a scale up to the worst \
         provider's failure share.{}",
        page.charted_note()
    );
    view(
        "outcomes",
        "How did each provider's requests end?",
        "One bar per provider, its submitted requests split by how they ended; any colour other than the first is an \
         operational failure. Hover a segment for its count.",
        &format!(
            "{}<p class=\"note\">Submitted requests: {}.</p>",
            figure(s.close(), &text(&caption), &legend, None),
            counts.join("; ")
        ),
    )
}

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
        page.providers.iter().filter_map(|p| page.value(&page.pooled(p, "e2e_latency_p99"))).fold(0.0, f64::max);
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
                .text(&fixed(v, 0)),
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
        .map(|p| page.pooled(p, "e2e_latency_p99"))
        .find(|ptr| page.value(ptr) == Some(slowest))
        .map_or("—".to_string(), |ptr| page.metric(&ptr, Kind::Ms));
    let binned = if bins < rounds_n {
        format!(
            " Each column is a bin of about {} consecutive rounds ({bins} columns): its colour \
             is the bin's most frequent failure class when any request in it failed, and its shade the bin's slowest \
             completed response.",
            fixed(per_bin, 1)
        )
    } else {
        String::new()
    };
    let caption = format!(
        "{} rounds, in the order they ran. A completed cell is shaded by its end-to-end latency: darker is slower, \
         darkest at or beyond {slowest_figure}, the slowest provider's E2E p99. Failures are drawn in their class's \
         colour.{binned}{}",
        fixed(rounds, 0),
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

/// Each provider's E2E by round (ascending), indexed like [`Responses::providers`]: the
/// pairs' differences are a merge of two of these.
pub struct E2eByRound(Vec<Vec<(u32, f64)>>);

impl E2eByRound {
    pub fn new(responses: &Responses) -> E2eByRound {
        let mut by = vec![Vec::new(); responses.providers.len()];
        for c in &responses.cells {
            if let Some(e2e) = c.e2e_ms {
                by[c.provider as usize].push((c.round, e2e));
            }
        }
        for v in &mut by {
            v.sort_by_key(|(round, _)| *round);
        }
        E2eByRound(by)
    }

    /// Per-round E2E differences `a − b` over the rounds where both have an E2E, as
    /// `ib-aggregate` pairs them.
    pub fn differences(&self, responses: &Responses, a: &str, b: &str) -> Vec<f64> {
        let get = |p: &str| responses.provider_index(p).map_or(&[][..], |i| self.0[i as usize].as_slice());
        let (xs, ys) = (get(a), get(b));
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < xs.len() && j < ys.len() {
            match xs[i].0.cmp(&ys[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    out.push(xs[i].1 - ys[j].1);
                    i += 1;
                    j += 1;
                }
            }
        }
        out
    }
}

pub fn pair_differences(page: &Page) -> String {
    let first = default_pair(page);
    let mut body = String::new();
    let by_round = E2eByRound::new(&page.inputs.responses);
    for &(i, a, b) in page.shown_pairs() {
        let key = format!("{a}|{b}");
        let row = &page.comparisons["pairwise_e2e_latency_differences"][i];
        let eligible = row["eligible_comparison"].as_bool() == Some(true);
        let mut diffs = if eligible { by_round.differences(&page.inputs.responses, a, b) } else { Vec::new() };
        diffs.sort_by(f64::total_cmp);
        let hidden = Some(i) != first;
        let (la, lb) = (page.label_of(a), page.label_of(b));
        let ptr = |k: &str| format!("/pairwise_e2e_latency_differences/{i}/{k}");
        let mut s = svg::svg(
            "pair-differences",
            std::slice::from_ref(&key),
            W,
            H,
            &format!("Per-round E2E differences, {la} − {lb}"),
        )
        .a("data-pair", &key)
        .flag("hidden", hidden);
        if diffs.is_empty() {
            s.push(
                Element::new("text")
                    .a("x", n(W / 2.0))
                    .a("y", n(H / 2.0))
                    .a("text-anchor", "middle")
                    .a("data-series", &key)
                    .text("No paired rounds to compare"),
            );
        } else {
            let median = ptr("difference_p50_ms");
            histogram(&mut s, &diffs, &key, page.comparisons.pointer(&median), &median, page.exact_comparison(&median));
        }
        let reasons: Vec<&str> =
            row["exclusion_reasons"].as_array().into_iter().flatten().filter_map(|r| r.as_str()).collect();
        let legend = vec![
            format!(
                "<li>{} of {} rounds paired; median {} (the red line), p95 {}, p99 {}</li>",
                page.comparison(&ptr("paired_count"), Kind::Count),
                page.comparison(&ptr("total_round_count"), Kind::Count),
                page.comparison(&ptr("difference_p50_ms"), Kind::DiffMs),
                page.comparison(&ptr("difference_p95_ms"), Kind::DiffMs),
                page.comparison(&ptr("difference_p99_ms"), Kind::DiffMs),
            ),
            if eligible || reasons.is_empty() {
                String::new()
            } else {
                format!("<li>Not compared: {}</li>", text(&reasons.join("; ")))
            },
        ];
        let caption = format!("{la} − {lb}: end-to-end latency difference per round (left of zero: {la} was faster).");
        body.push_str(&figure(s.close(), &text(&caption), &legend, Some(("data-pair", &key, hidden))));
    }
    view(
        "pair-differences",
        "Round by round, how much faster is A than B?",
        "A histogram of A − B over the rounds in which both providers completed the same item at the same time, for the \
         pair chosen above. Bars left of zero are rounds A won; the red line is the median difference from \
         comparisons.json.",
        &body,
    )
}

/// A histogram of ascending `diffs` with a zero line and the median mark.
fn histogram(
    s: &mut Element,
    diffs: &[f64],
    key: &str,
    median: Option<&serde_json::Value>,
    median_ptr: &str,
    exact: &str,
) {
    let (lo, hi) = (diffs[0].min(0.0), diffs[diffs.len() - 1].max(0.0));
    let bins = ((diffs.len() as f64).sqrt().ceil() as usize).clamp(5, 40);
    let width = step(hi - lo, bins as f64).max(1e-9);
    let start = (lo / width).floor() * width;
    let count = (((hi - start) / width).floor() as usize + 1).max(1);
    let mut counts = vec![0usize; count];
    for d in diffs {
        let k = (((d - start) / width).floor() as usize).min(count - 1);
        counts[k] += 1;
    }
    let top = *counts.iter().max().unwrap_or(&1) as f64;
    let (y1, ys) = nice_max(top);
    let axes = Axes { x0: start, x1: start + width * count as f64, y0: 0.0, y1, log: false };
    let xs = step(axes.x1 - axes.x0, 6.0);
    axes.draw(s, (xs, Kind::DiffMs, "Difference A − B (s)"), (ys, Kind::Count, "Rounds"));
    for (k, c) in counts.iter().enumerate() {
        if *c == 0 {
            continue;
        }
        let x0 = axes.x(start + k as f64 * width);
        let x1 = axes.x(start + (k + 1) as f64 * width);
        s.push(
            Element::new("rect")
                .a("x", n(x0 + 0.5))
                .a("y", n(axes.y(*c as f64)))
                .a("width", n((x1 - x0 - 1.0).max(0.5)))
                .a("height", n(axes.y(0.0) - axes.y(*c as f64)))
                .a("class", "bar")
                .a("data-series", key)
                .child(Element::new("title").text(&format!(
                    "{} to {}: {c} round(s)",
                    format_number(start + k as f64 * width, Kind::DiffMs),
                    format_number(start + (k + 1) as f64 * width, Kind::DiffMs)
                ))),
        );
    }
    let zero = axes.x(0.0);
    s.push(
        Element::new("line")
            .a("x1", n(zero))
            .a("x2", n(zero))
            .a("y1", n(TOP))
            .a("y2", n(H - BOTTOM))
            .a("class", "zero"),
    );
    if let Some(m) = median.and_then(|v| v.as_f64()) {
        let x = axes.x(m);
        s.push(
            Element::new("line")
                .a("x1", n(x))
                .a("x2", n(x))
                .a("y1", n(TOP))
                .a("y2", n(H - BOTTOM))
                .a("class", "median")
                .a("data-comparison", median_ptr)
                .a("data-value", exact),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecdf_keeps_min_and_max_and_is_monotone() {
        let sorted: Vec<f64> = (0..6000).map(|i| (i as f64).powf(1.3) + 0.5).collect();
        let points = ecdf(&sorted, CURVE_POINTS);
        assert!(points.len() <= CURVE_POINTS && points.len() > 150, "{}", points.len());
        assert_eq!(points.first(), Some(&(sorted[0], 1.0 / 6000.0)));
        assert_eq!(points.last(), Some(&(sorted[5999], 1.0)));
        assert!(points.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 < w[1].1));
        let few = ecdf(&[1.0, 2.0, 2.0], CURVE_POINTS);
        assert_eq!(few, vec![(1.0, 1.0 / 3.0), (2.0, 2.0 / 3.0), (2.0, 1.0)]);
        assert!(ecdf(&[], CURVE_POINTS).is_empty());
        for len in [203, 204, 401, 1000, 1001] {
            let sorted: Vec<f64> = (0..len).map(f64::from).collect();
            let p = ecdf(&sorted, CURVE_POINTS);
            assert_eq!((p.len(), p[0].0, p[p.len() - 1].0), (CURVE_POINTS, 0.0, f64::from(len - 1)), "{len}");
        }
    }

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(step(1000.0, 5.0), 200.0);
        assert_eq!(step(7.3, 5.0), 2.0);
        assert_eq!(nice_max(17_070.0), (20_000.0, 5_000.0));
    }
}

#[cfg(test)]
mod palette_tests {
    use super::*;

    #[test]
    fn outcome_colours_are_distinct_and_never_a_provider_colour() {
        let colours: Vec<&str> = classes().into_iter().map(outcome_colour).collect();
        for (i, c) in colours.iter().enumerate() {
            assert!(!PALETTE.contains(c), "{c} is also a provider colour");
            assert!(!colours[..i].contains(c), "{c} is used twice");
        }
        let css = include_str!("page.css");
        for class in classes() {
            let rule = format!("rect.o-{} {{ fill: {}; }}", class.label(), outcome_colour(class));
            assert!(css.contains(&rule), "page.css lacks `{rule}`");
        }
    }
}
