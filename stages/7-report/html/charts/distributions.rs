//! The distributions view: each provider's empirical distribution (ECDF) of TTFA, E2E and
//! tokens/s, pooled and per task family, with metrics.json's p50/p95/p99 marked on it.
use super::axes::Axes;
use super::{colour, figure, legend_item, H, W};
use crate::html::svg;
use crate::html::{format_number, view, Kind, Page, Provider};
use crate::responses::Cell;
use inferbench_contract::metrics::{Metric, Unit, E2E_LATENCY, OUTPUT_TOKENS_PER_SECOND, TTFA};
use inferbench_present::html::{n, polyline, text, Element};
use inferbench_present::number::DASH;

/// Points kept per ECDF curve.
pub const CURVE_POINTS: usize = 202;

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

/// A metric the distributions view draws: its chart's name, its entry in the metric catalogue
/// (summary and flat keys, unit, tail) and its sample in a response.
struct Drawn {
    name: &'static str,
    metric: &'static Metric,
    sample: fn(&Cell) -> Option<f64>,
}

impl Drawn {
    /// The chart's title: the metric's description, latencies in seconds.
    fn title(&self) -> String {
        match self.metric.unit {
            Unit::Ms => format!("{} (s)", self.metric.description),
            _ => self.metric.description.to_string(),
        }
    }

    fn kind(&self) -> Kind {
        Kind::of(self.metric.columns()[0])
    }
}

const METRICS: [Drawn; 3] = [
    Drawn { name: "ttfa", metric: TTFA, sample: |r| r.ttfa_ms },
    Drawn { name: "e2e", metric: E2E_LATENCY, sample: |r| r.e2e_ms },
    Drawn { name: "tokens-per-second", metric: OUTPUT_TOKENS_PER_SECOND, sample: |r| r.tokens_per_second },
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
        body.push_str(&Element::new("h3").text(metric.metric.description).close());
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
fn samples_by_scope(page: &Page, metric: &Drawn, scopes: &[String]) -> Vec<Vec<Vec<f64>>> {
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

fn ecdf_figure(page: &Page, metric: &Drawn, scope: &str, samples: Vec<Vec<f64>>) -> String {
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
    let label = format!("{} by provider, {scope}", metric.title());
    let mut s = svg::svg(&chart, &drawn, W, H, &label).a("data-scope", scope).flag("hidden", scope != "pooled");
    let title = format!("{} — log scale", metric.title());
    axes.draw(&mut s, (xs, metric.kind(), &title), (0.25, Kind::Rate, "Share of samples ≤ value"));
    let mut legend = Vec::new();
    for (i, p, v) in &series {
        let c = colour(*i);
        let count = page
            .scoped(p, scope, format!("{}/population_count", metric.metric.summary.unwrap_or(metric.metric.name)))
            .map_or(DASH.to_string(), |ptr| page.metric(&ptr, Kind::Count));
        legend.push(legend_item(c, &format!("{} <span class=\"n\">n = {count}</span>", text(p.label))));
        if v.is_empty() {
            continue;
        }
        let points: Vec<(f64, f64)> = ecdf(v, CURVE_POINTS).into_iter().map(|(x, y)| (axes.x(x), axes.y(y))).collect();
        let mut g = Element::new("g").a("data-series", p.id).a("stroke", c).a("fill", c);
        g.push(polyline_series(&points, p.id).a("stroke-width", "1.6"));
        for column in metric.metric.columns() {
            let k = column.percentile.unwrap_or(50);
            let Some(ptr) = page.scoped(p, scope, column) else { continue };
            let Some(value) = page.value(&ptr) else { continue };
            let y = if column.is_floor() { 1.0 - k as f64 / 100.0 } else { k as f64 / 100.0 };
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
                        format_number(value, metric.kind())
                    ))),
            );
        }
        s.push(g);
    }
    let caption = format!(
        "{} — {}. n is each provider's sample count in metrics.json; a curve keeps at most {CURVE_POINTS} points \
         including the exact minimum and maximum.{}",
        metric.title(),
        if scope == "pooled" { "all task families" } else { scope },
        page.charted_note()
    );
    figure(s.close(), &text(&caption), &legend, Some(("data-scope", scope, scope != "pooled")))
}

fn polyline_series(points: &[(f64, f64)], series: &str) -> Element {
    polyline(points).a("data-series", series)
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
}
