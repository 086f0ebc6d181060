//! A load run's view: each provider's E2E p50 and p99, measured from the intended send time,
//! against the throughput it sustained, one line per provider through its steps (where the line
//! turns up, the provider has passed its capacity); its goodput and accuracy against the rate
//! offered; and the table of every step's figures.
//! Every figure is `metrics.json`'s `load` section, marked with its pointer.
use super::axes::{nice_max, Axes};
use super::{colour, H, W};
use crate::html::svg::{self, n, Element};
use crate::html::{view, Kind, Page};
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
    let body =
        format!("{}{}{}", chart(page, steps, &providers), goodput_chart(page, steps, &providers), table(page, steps));
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

fn chart(page: &Page, steps: &[Value], providers: &[&str]) -> String {
    let series: Vec<String> = providers.iter().map(|p| p.to_string()).collect();
    let points = |provider: &str, key: &str| -> Vec<(usize, f64, f64)> {
        steps
            .iter()
            .enumerate()
            .filter(|(_, r)| r["provider"] == provider)
            .filter_map(|(i, _)| Some((i, page.value(&at(i, "completed_per_second"))?, page.value(&at(i, key))?)))
            .collect()
    };
    let all: Vec<(usize, f64, f64)> =
        providers.iter().flat_map(|p| [points(p, "e2e_ms/p50"), points(p, "e2e_ms/p99")]).flatten().collect();
    let (x1, xs) = nice_max(all.iter().map(|t| t.1).fold(0.0, f64::max));
    let (y1, ys) = nice_max(all.iter().map(|t| t.2).fold(0.0, f64::max));
    let axes = Axes { x0: 0.0, x1, y0: 0.0, y1, log: false };
    let mut s = svg::svg(
        "load-latency",
        &series,
        W,
        H,
        "End-to-end latency p50 and p99 from the intended send against completions per second, one line per provider",
    );
    axes.draw(&mut s, (xs, Kind::Count, "completed requests per second"), (ys, Kind::Ms, "E2E from the intended send"));
    for (k, provider) in providers.iter().enumerate() {
        let mut g = Element::new("g").a("data-series", *provider).a("stroke", colour(k)).a("fill", colour(k));
        for (key, dash) in [("e2e_ms/p50", None), ("e2e_ms/p99", Some("5 4"))] {
            let pts = points(provider, key);
            let mut line = svg::polyline(&pts.iter().map(|(_, x, y)| (axes.x(*x), axes.y(*y))).collect::<Vec<_>>())
                .a("data-series", *provider);
            if let Some(dash) = dash {
                line = line.a("stroke-dasharray", dash);
            }
            g.push(line);
            for (i, x, y) in pts {
                let (px, py) = (at(i, "completed_per_second"), at(i, key));
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
                            "{}, step {}: {} at {:.2} completed/s",
                            page.label_of(provider),
                            steps[i]["step"],
                            key.replace("e2e_ms/", "E2E "),
                            x
                        ))),
                );
            }
        }
        s.push(g);
    }
    s.close()
}

/// Goodput (solid) and accuracy (dashed) against the offered rate, one line per provider.
fn goodput_chart(page: &Page, steps: &[Value], providers: &[&str]) -> String {
    let series: Vec<String> = providers.iter().map(|p| p.to_string()).collect();
    let points = |provider: &str, key: &str| -> Vec<(usize, f64, f64)> {
        steps
            .iter()
            .enumerate()
            .filter(|(_, r)| r["provider"] == provider)
            .filter_map(|(i, _)| Some((i, page.value(&at(i, "offered_rate"))?, page.value(&at(i, key))?)))
            .collect()
    };
    let x_max = steps.iter().enumerate().filter_map(|(i, _)| page.value(&at(i, "offered_rate"))).fold(0.0, f64::max);
    let (x1, xs) = nice_max(x_max);
    let axes = Axes { x0: 0.0, x1, y0: 0.0, y1: 1.0, log: false };
    let mut s =
        svg::svg("load-goodput", &series, W, H, "Goodput and accuracy against the offered rate, one line per provider");
    axes.draw(
        &mut s,
        (xs, Kind::Count, "offered requests per second"),
        (0.2, Kind::Rate, "share of the step's requests"),
    );
    for (k, provider) in providers.iter().enumerate() {
        let mut g = Element::new("g").a("data-series", *provider).a("stroke", colour(k)).a("fill", colour(k));
        for (key, dash) in [("goodput", None), ("accuracy", Some("5 4"))] {
            let pts = points(provider, key);
            let mut line = svg::polyline(&pts.iter().map(|(_, x, y)| (axes.x(*x), axes.y(*y))).collect::<Vec<_>>())
                .a("data-series", *provider);
            if let Some(dash) = dash {
                line = line.a("stroke-dasharray", dash);
            }
            g.push(line);
            for (i, x, y) in pts {
                let (px, py) = (at(i, "offered_rate"), at(i, key));
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
                            "{}, step {}: {key} {:.1}% at {:.2} req/s offered",
                            page.label_of(provider),
                            steps[i]["step"],
                            100.0 * y,
                            x
                        ))),
                );
            }
        }
        s.push(g);
    }
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
                crate::html::svg::text(page.label_of(r["provider"].as_str().unwrap_or(""))),
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
