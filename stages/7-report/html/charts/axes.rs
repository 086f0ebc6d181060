//! A plot's axes: the "nice" steps and upper bounds of a scale, the tick labels, and the
//! grid with its labels and titles drawn into a chart.
use super::{BOTTOM, H, LEFT, RIGHT, TOP, W};
use crate::format::fixed;
use crate::html::svg::{n, Element};
use crate::html::Kind;

/// A "nice" axis step for a range of `span` split in about `ticks` parts.
pub fn step(span: f64, ticks: f64) -> f64 {
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
pub fn nice_max(max: f64) -> (f64, f64) {
    let s = step(max, 5.0);
    let top = (max / s).ceil().max(1.0) * s;
    (top, s)
}

/// Tick label of a value shown as `kind`, without the unit for compactness: as many decimals
/// as the value needs, at most three.
pub fn tick(x: f64, kind: Kind) -> String {
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
pub struct Axes {
    pub x0: f64,
    pub x1: f64,
    pub y0: f64,
    pub y1: f64,
    /// A logarithmic x axis (x0 > 0).
    pub log: bool,
}

impl Axes {
    pub fn x(&self, v: f64) -> f64 {
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
    pub fn y(&self, v: f64) -> f64 {
        H - BOTTOM - (v - self.y0) / (self.y1 - self.y0).max(f64::MIN_POSITIVE) * (H - TOP - BOTTOM)
    }

    /// Grid, tick labels and axis titles; each axis as (tick step, kind of value, title).
    pub fn draw(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(step(1000.0, 5.0), 200.0);
        assert_eq!(step(7.3, 5.0), 2.0);
        assert_eq!(nice_max(17_070.0), (20_000.0, 5_000.0));
    }
}
