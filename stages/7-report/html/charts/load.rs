//! A load run's view: each provider's E2E p50 and p99, measured from the intended send time,
//! against the throughput it sustained, one line per provider through its steps (where the line
//! turns up, the provider has passed its capacity); its goodput and accuracy against the rate
//! offered; the client's send lag per step; each step's course over time (`load_timeline`);
//! and the table of every step's figures.
//! Every figure is `metrics.json`'s `load` section, marked with its pointer.
use super::axes::Axes;
use super::{colour, H, W};
use crate::html::svg;
use crate::html::{view, Kind, Page};
use inferbench_present::axis::nice_max;
use inferbench_present::html::{n, polyline, text, Element};
use serde_json::Value;

/// The pointer of a step row's key.
fn at(row: usize, key: &str) -> String {
    format!("/load/steps/{row}/{key}")
}

/// The view, when the run is a load run.
pub fn load(page: &Page) -> Option<String> {
    let steps = page.metrics.pointer("/load/steps")?.as_array()?;
    let providers: Vec<&str> = {
        let mut seen: Vec<&str> = Vec::new();
        for row in steps {
            if let Some(p) = row["provider"].as_str().filter(|p| !seen.contains(p)) {
                seen.push(p);
            }
        }
        seen
    };
    let charts = format!(
        "{}{}{}{}",
        chart(page, steps, &providers),
        goodput_chart(page, steps, &providers),
        lag_chart(page, steps),
        super::load_timeline::timelines(page)
    );
    let body = format!("{charts}{}", table(page, steps));
    Some(view(
        "load",
        "How each provider holds up under load",
        "One line per provider through its steps: end-to-end latency (p50 solid, p99 dashed), measured from when each \
         request was due, against the completions it sustained per second. Where a line turns up and stops moving \
         right, the provider has passed its capacity: more offered load only queues. A step marked client-bound \
         measured the client, not the provider.",
        &body,
    ))
}

/// What one per-provider chart plots: its name and label, the x key and title, the two y keys
/// (solid, dashed) with their kind and title, and a fixed y range if it has one.
struct ProviderChart {
    name: &'static str,
    label: &'static str,
    x: (&'static str, &'static str),
    y: [&'static str; 2],
    y_kind: Kind,
    y_title: &'static str,
    /// The y range and tick step when fixed (a share runs from 0 to 1).
    y_fixed: Option<(f64, f64)>,
}

/// E2E p50 and p99 from the intended send against completions per second.
fn chart(page: &Page, steps: &[Value], providers: &[&str]) -> String {
    provider_lines(
        page,
        steps,
        providers,
        &ProviderChart {
            name: "load-latency",
            label:
                "End-to-end latency p50 and p99 from the intended send against completions per second, one line per \
                    provider",
            x: ("completed_per_second", "completed requests per second"),
            y: ["e2e_ms/p50", "e2e_ms/p99"],
            y_kind: Kind::Ms,
            y_title: "E2E from the intended send",
            y_fixed: None,
        },
    )
}

/// Goodput (solid) and accuracy (dashed) against the offered rate.
fn goodput_chart(page: &Page, steps: &[Value], providers: &[&str]) -> String {
    provider_lines(
        page,
        steps,
        providers,
        &ProviderChart {
            name: "load-goodput",
            label: "Goodput and accuracy against the offered rate, one line per provider",
            x: ("offered_rate", "offered requests per second"),
            y: ["goodput", "accuracy"],
            y_kind: Kind::Rate,
            y_title: "share of the step's requests",
            y_fixed: Some((1.0, 0.2)),
        },
    )
}

/// One line per provider through its steps for each of the chart's two y keys, a dot per step
/// marked with the pointers of both its coordinates.
fn provider_lines(page: &Page, steps: &[Value], providers: &[&str], c: &ProviderChart) -> String {
    let series: Vec<String> = providers.iter().map(|p| p.to_string()).collect();
    let points = |provider: &str, key: &str| -> Vec<(usize, f64, f64)> {
        steps
            .iter()
            .enumerate()
            .filter(|(_, r)| r["provider"] == provider)
            .filter_map(|(i, _)| Some((i, page.value(&at(i, c.x.0))?, page.value(&at(i, key))?)))
            .collect()
    };
    let all: Vec<(usize, f64, f64)> = providers.iter().flat_map(|p| c.y.map(|key| points(p, key))).flatten().collect();
    let (x1, xs) = nice_max(all.iter().map(|t| t.1).fold(0.0, f64::max));
    let (y1, ys) = c.y_fixed.unwrap_or_else(|| nice_max(all.iter().map(|t| t.2).fold(0.0, f64::max)));
    let axes = Axes { x0: 0.0, x1, y0: 0.0, y1, log: false };
    let mut s = svg::svg(c.name, &series, W, H, c.label);
    axes.draw(&mut s, (xs, Kind::Count, c.x.1), (ys, c.y_kind, c.y_title));
    for (k, provider) in providers.iter().enumerate() {
        let mut g = Element::new("g").a("data-series", *provider).a("stroke", colour(k)).a("fill", colour(k));
        for (key, dash) in [(c.y[0], None), (c.y[1], Some("5 4"))] {
            let pts = points(provider, key);
            let mut line = polyline(&pts.iter().map(|(_, x, y)| (axes.x(*x), axes.y(*y))).collect::<Vec<_>>())
                .a("data-series", *provider);
            if let Some(dash) = dash {
                line = line.a("stroke-dasharray", dash);
            }
            g.push(line);
            for (i, x, y) in pts {
                let (px, py) = (at(i, c.x.0), at(i, key));
                g.push(
                    Element::new("circle")
                        .a("cx", n(axes.x(x)))
                        .a("cy", n(axes.y(y)))
                        .a("r", "3.5")
                        .a("data-metric-x", &px)
                        .a("data-value-x", page.exact(&px))
                        .a("data-metric-y", &py)
                        .a("data-value-y", page.exact(&py))
                        .child(Element::new("title").text(&format!(
                            "{}, step {}: {key} {} at {x:.2} ({})",
                            page.label_of(provider),
                            steps[i]["step"],
                            page.exact(&py),
                            c.x.1
                        ))),
                );
            }
        }
        s.push(g);
    }
    s.close()
}

/// The client's send lag per step: p50, p99 and the maximum (ms, on a log scale) of the
/// provider whose p99 was highest; the 1 ms bound drawn across.
fn lag_chart(page: &Page, steps: &[Value]) -> String {
    // Per step, the row with the highest lag p99: the client is one, its worst is its bound.
    let mut worst: Vec<(u64, usize)> = Vec::new();
    for (i, row) in steps.iter().enumerate() {
        let step = row["step"].as_u64().unwrap_or(0);
        let p99 = |j: usize| page.value(&at(j, "send_lag_ms/p99")).unwrap_or(f64::NEG_INFINITY);
        match worst.iter_mut().find(|(s, _)| *s == step) {
            Some(entry) if p99(i) > p99(entry.1) => entry.1 = i,
            Some(_) => {}
            None => worst.push((step, i)),
        }
    }
    let keys = [("send_lag_ms/p50", None), ("send_lag_ms/p99", Some("5 4")), ("send_lag_ms/max", Some("1 3"))];
    let values: Vec<f64> = worst
        .iter()
        .flat_map(|(_, i)| keys.iter().filter_map(move |(k, _)| page.value(&at(*i, k))))
        .filter(|v| *v > 0.0)
        .collect();
    let x1 = (worst.len().max(2) - 1) as f64;
    // A log scale (lags run from microseconds to seconds): the axis is log10 of the lag in
    // ms, whole decades from below the least value to above the most (1 ms, the bound, is 0).
    let lo = values.iter().copied().fold(0.01, f64::min).log10().floor();
    let hi = values.iter().copied().fold(1.0, f64::max).log10().ceil().max(lo + 1.0);
    let ly = |v: f64| v.max(10f64.powf(lo)).log10();
    let axes = Axes { x0: 0.0, x1, y0: lo, y1: hi, log: false };
    let series = vec!["client".to_string()];
    let mut s = svg::svg(
        "load-lag",
        &series,
        W,
        H,
        "The client's send lag per step: p50, p99 and maximum of the worst provider, on a log scale",
    );
    axes.draw(&mut s, (1.0, Kind::Count, "step"), (1.0, Kind::Count, "send lag, log10 of ms (0 is 1 ms, −2 is 10 µs)"));
    let bound = axes.y(ly(1.0));
    s.push(
        Element::new("line")
            .a("x1", n(axes.x(0.0)))
            .a("x2", n(axes.x(x1)))
            .a("y1", n(bound))
            .a("y2", n(bound))
            .a("stroke", "#7a0019")
            .a("stroke-dasharray", "2 2")
            .child(Element::new("title").text("the client's bound: a send-lag p99 of 1 ms")),
    );
    let mut g = Element::new("g").a("data-series", "client").a("stroke", colour(0)).a("fill", colour(0));
    for (key, dash) in keys {
        let pts: Vec<(usize, f64, f64)> = worst
            .iter()
            .enumerate()
            .filter_map(|(k, (_, i))| Some((*i, k as f64, page.value(&at(*i, key))?)))
            .collect();
        let mut line = polyline(&pts.iter().map(|(_, x, y)| (axes.x(*x), axes.y(ly(*y)))).collect::<Vec<_>>())
            .a("data-series", "client");
        if let Some(dash) = dash {
            line = line.a("stroke-dasharray", dash);
        }
        g.push(line);
        for (i, x, y) in pts {
            let py = at(i, key);
            g.push(
                Element::new("circle")
                    .a("cx", n(axes.x(x)))
                    .a("cy", n(axes.y(ly(y))))
                    .a("r", "3")
                    .a("data-metric", &py)
                    .a("data-value", page.exact(&py))
                    .child(Element::new("title").text(&format!(
                        "step {}: send lag {} {y:.3} ms",
                        steps[i]["step"],
                        key.trim_start_matches("send_lag_ms/")
                    ))),
            );
        }
    }
    s.push(g);
    s.close()
}

fn table(page: &Page, steps: &[Value]) -> String {
    let headers = [
        "Step",
        "Provider",
        "Offered req/s",
        "Completed/s",
        "TTFT p50",
        "TTFT p99",
        "E2E p50",
        "E2E p99",
        "Send lag p99",
        "Goodput",
        "Accuracy",
        "Client-bound",
    ];
    let rows: Vec<Vec<String>> = steps
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let bound = r["client_bound"].as_array().map_or(0, Vec::len);
            vec![
                page.metric(&at(i, "step"), Kind::Count),
                text(page.label_of(r["provider"].as_str().unwrap_or(""))),
                page.metric(&at(i, "offered_rate"), Kind::Tps),
                page.metric(&at(i, "completed_per_second"), Kind::Tps),
                page.metric(&at(i, "ttft_ms/p50"), Kind::Ms),
                page.metric(&at(i, "ttft_ms/p99"), Kind::Ms),
                page.metric(&at(i, "e2e_ms/p50"), Kind::Ms),
                page.metric(&at(i, "e2e_ms/p99"), Kind::Ms),
                page.metric(&at(i, "send_lag_ms/p99"), Kind::Ms),
                page.metric(&at(i, "goodput"), Kind::Rate),
                page.metric(&at(i, "accuracy"), Kind::Rate),
                if bound == 0 { "no".to_string() } else { "yes".to_string() },
            ]
        })
        .collect();
    crate::html::views::table("Each step, each provider", &headers, &rows)
}
