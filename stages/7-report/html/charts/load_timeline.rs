//! Each load step's course over time: requests sent, completed and failed per second, and
//! the most in flight, per bin from the step's opening (`metrics.json` `load.timelines`).
//! A provider past its capacity shows as completions that stop following the sends while the
//! requests in flight climb; a burst of failures shows where it happened.
use super::axes::Axes;
use super::{colour, figure, legend_item, H, W};
use crate::html::svg;
use crate::html::{Kind, Page};
use inferbench_present::axis::nice_max;
use inferbench_present::html::{n, polyline, Element};
use serde_json::Value;

/// The series, each with the timeline's key, its legend, whether it is a rate (per second of
/// the bin) and its dash.
const SERIES: [(&str, &str, bool, Option<&str>); 4] = [
    ("sent", "sent per second", true, None),
    ("completed", "completed per second", true, Some("5 4")),
    ("failed", "failed per second", true, Some("1 3")),
    ("in_flight", "most in flight", false, None),
];

/// One chart per step, every provider together.
pub fn timelines(page: &Page) -> String {
    let Some(lines) = page.metrics.pointer("/load/timelines").and_then(Value::as_array) else {
        return String::new();
    };
    lines.iter().enumerate().map(|(k, line)| step_chart(page, k, line)).collect()
}

fn step_chart(page: &Page, k: usize, line: &Value) -> String {
    let bin = line["bin_seconds"].as_f64().unwrap_or(1.0);
    let step = line["step"].as_u64().unwrap_or(k as u64);
    let count = |key: &str| line[key].as_array().map_or(0, Vec::len);
    let bins = count("sent");
    let value = |key: &str, i: usize, rate: bool| {
        let v = line[key][i].as_f64().unwrap_or(0.0);
        if rate {
            v / bin
        } else {
            v
        }
    };
    let top = SERIES
        .iter()
        .flat_map(|(key, _, rate, _)| (0..count(key)).map(move |i| value(key, i, *rate)))
        .fold(1.0, f64::max);
    let (y1, y_step) = nice_max(top);
    let x1 = (bins as f64 * bin).max(bin);
    let (_, x_step) = nice_max(x1);
    let axes = Axes { x0: 0.0, x1, y0: 0.0, y1, log: false };
    let names: Vec<String> = SERIES.iter().map(|(_, legend, _, _)| legend.to_string()).collect();
    let mut s = svg::svg(
        &format!("load-timeline-{step}"),
        &names,
        W,
        H,
        &format!("Step {step} over time: requests sent, completed and failed per second, and the most in flight, per {bin} s"),
    );
    axes.draw(
        &mut s,
        (x_step, Kind::Count, &format!("seconds since step {step} opened")),
        (y_step, Kind::Count, "requests per second; in flight: requests"),
    );
    for (j, (key, legend, rate, dash)) in SERIES.iter().enumerate() {
        let mut g = Element::new("g").a("data-series", *legend).a("stroke", colour(j)).a("fill", colour(j));
        // Each bin's value at its middle.
        let pts: Vec<(f64, f64)> =
            (0..count(key)).map(|i| (axes.x((i as f64 + 0.5) * bin), axes.y(value(key, i, *rate)))).collect();
        let mut poly = polyline(&pts).a("data-series", *legend);
        if let Some(dash) = dash {
            poly = poly.a("stroke-dasharray", *dash);
        }
        g.push(poly);
        // Points to hover on, one per bin (a timeline has at most 40).
        for (i, (x, y)) in pts.iter().enumerate() {
            let pointer = format!("/load/timelines/{k}/{key}/{i}");
            let shown = value(key, i, *rate);
            g.push(
                Element::new("circle")
                    .a("cx", n(*x))
                    .a("cy", n(*y))
                    .a("r", "1.5")
                    .a("data-metric", &pointer)
                    .a("data-value", page.exact(&pointer))
                    .child(Element::new("title").text(&format!(
                        "step {step}, {:.1}–{:.1} s: {legend} {}",
                        i as f64 * bin,
                        (i + 1) as f64 * bin,
                        if *rate { format!("{shown:.2}") } else { format!("{shown:.0}") }
                    ))),
            );
        }
        s.push(g);
    }
    let legend: Vec<String> = SERIES
        .iter()
        .enumerate()
        .map(|(j, (_, legend, _, dash))| {
            let how = match dash {
                None => "solid",
                Some("5 4") => "dashed",
                Some(_) => "dotted",
            };
            legend_item(colour(j), &format!("{legend} ({how})"))
        })
        .collect();
    let caption = format!("Step {step}, every provider together, in bins of {bin} s from the step's opening.");
    figure(s.close(), &caption, &legend, None)
}
