//! The frame of every chart on the page: an `<svg>` with a fixed viewBox that scales to its
//! container's width, labelled for a screen reader and marked with the chart's name and its
//! series, which page.js reads to link a chart to its legend and tables. The elements inside
//! are written with the presenter (`inferbench_present::html`).
use inferbench_present::html::{n, Element};

/// An `<svg>` with a viewBox of `w × h` user units that scales to its container's width.
pub fn svg(chart: &str, series: &[String], w: f64, h: f64, label: &str) -> Element {
    Element::new("svg")
        .a("xmlns", "http://www.w3.org/2000/svg")
        .a("viewBox", format!("0 0 {} {}", n(w), n(h)))
        .a("role", "img")
        .a("aria-label", label)
        .a("data-chart", chart)
        .a("data-series", series.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_names_its_chart_and_series() {
        let frame = svg("speed", &["a".to_string(), "b\"c".to_string()], 640.0, 340.5, "Speed").close();
        assert_eq!(
            frame,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 340.5\" role=\"img\" aria-label=\"Speed\" \
             data-chart=\"speed\" data-series=\"a,b&quot;c\"></svg>"
        );
    }
}
