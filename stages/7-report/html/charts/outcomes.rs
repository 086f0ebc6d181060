//! How each provider's requests ended: every request stacked by outcome class, and the
//! failures alone on a scale that shows them.
use super::axes::tick;
use super::{classes, figure, legend_item, outcome_colour, RIGHT, TOP, W};
use crate::html::svg;
use crate::html::views::class_name;
use crate::html::{view, Kind, Page, Provider};
use inferbench_contract::vocab::OperationalOutcome;
use inferbench_present::axis::nice_max;
use inferbench_present::html::{n, text, Element};
use inferbench_present::number::grouped;

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
                let ptr = page.pooled(p, format!("{}_count", c.label()));
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
            let title = format!("{}: {} {} of {}", p.label, grouped(v, 0), class_name(*c), grouped(total, 0));
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
                .text(&tick(q, Kind::Rate)),
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
