//! The paired view: a histogram of the selected pair's per-round E2E differences, with
//! comparisons.json's median marked on it.
use super::axes::Axes;
use super::{figure, H, W};
use crate::html::pair::default_pair;
use crate::html::svg;
use crate::html::{format_number, view, Kind, Page};
use crate::responses::Responses;
use inferbench_present::axis::{nice_max, step};
use inferbench_present::html::{n, text, Element};

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
    s.push(Axes::across(zero, "zero"));
    if let Some(m) = median.and_then(|v| v.as_f64()) {
        let x = axes.x(m);
        s.push(Axes::across(x, "median").a("data-comparison", median_ptr).a("data-value", exact));
    }
}
