//! A plot's axes on the page: the tick labels of each kind of figure, and the grid with its
//! labels and titles drawn into a chart. Where a value lands and which values are ticked is
//! the presenter's (`inferbench_present::axis`).
use super::{BOTTOM, H, LEFT, RIGHT, TOP, W};
use crate::html::Kind;
use inferbench_present::axis::Scale;
use inferbench_present::html::{n, Element};
use inferbench_present::number::fewest;

/// Tick label of a value shown as `kind`, without the unit for compactness: as many decimals
/// as the value needs, at most three.
pub fn tick(x: f64, kind: Kind) -> String {
    match kind {
        Kind::Ms | Kind::DiffMs => fewest(x / 1000.0),
        Kind::Rate => format!("{}%", fewest(100.0 * x)),
        _ => fewest(x),
    }
}

/// Axes of a plot of x in [x0, x1] and y in [y0, y1], with grid lines and labels.
pub struct Axes {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    /// A logarithmic x axis (x0 > 0).
    pub log: bool,
}

impl Axes {
    /// The x axis: from the plot's left margin to its right one.
    fn x_scale(&self) -> Scale {
        Scale { from: self.x0, to: self.x1, start: LEFT, end: W - RIGHT, log: self.log }
    }

    /// The y axis: from the bottom margin up to the top one.
    fn y_scale(&self) -> Scale {
        Scale::linear(self.y0, self.y1, H - BOTTOM, TOP)
    }

    pub fn x(&self, v: f64) -> f64 {
        self.x_scale().at(v)
    }

    pub fn y(&self, v: f64) -> f64 {
        self.y_scale().at(v)
    }

    /// A vertical line across the plot at page x `x`.
    pub fn across(x: f64, class: &str) -> Element {
        Element::new("line").a("x1", n(x)).a("x2", n(x)).a("y1", n(TOP)).a("y2", n(H - BOTTOM)).a("class", class)
    }

    /// Grid, tick labels and axis titles; each axis as (tick step, kind of value, title).
    pub fn draw(
        &self,
        svg: &mut Element,
        (x_step, x_kind, x_title): (f64, Kind, &str),
        (y_step, y_kind, y_title): (f64, Kind, &str),
    ) {
        let mut g = Element::new("g").a("class", "axes");
        for v in self.x_scale().ticks(x_step) {
            let x = self.x(v);
            g.push(Axes::across(x, "grid"));
            g.push(
                Element::new("text")
                    .a("x", n(x))
                    .a("y", n(H - BOTTOM + 16.0))
                    .a("text-anchor", "middle")
                    .text(&tick(v, x_kind)),
            );
        }
        for v in self.y_scale().ticks(y_step) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_drop_the_unit_and_keep_the_decimals_they_need() {
        assert_eq!(
            [tick(1500.0, Kind::Ms), tick(0.25, Kind::Rate), tick(20_000.0, Kind::Count)],
            ["1.5", "25%", "20,000"]
        );
    }

    #[test]
    fn the_axes_span_the_plot_between_its_margins() {
        let axes = Axes { x0: 0.0, x1: 10.0, y0: 0.0, y1: 100.0, log: false };
        assert_eq!((axes.x(0.0), axes.x(10.0), axes.y(0.0), axes.y(100.0)), (LEFT, W - RIGHT, H - BOTTOM, TOP));
    }
}
