//! A chart's axes: the "nice" steps and upper bounds of a scale, where a value lands on the
//! page ([`Scale`]), and the values ticked along it.

/// A "nice" axis step (1, 2 or 5 times a power of ten) for a range of `span` split in about
/// `ticks` parts; 1 for an empty or unknown span.
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

/// An axis's upper bound from zero, `max` rounded up to a [`step`] of about five ticks (at
/// least one step), and that step.
pub fn nice_max(max: f64) -> (f64, f64) {
    let s = step(max, 5.0);
    let top = (max / s).ceil().max(1.0) * s;
    (top, s)
}

/// Values from `from` to `to` placed between two page coordinates, `start` (where `from`
/// lands) and `end` (where `to` does): left to right, or bottom to top with `end` above
/// `start`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub from: f64,
    pub to: f64,
    pub start: f64,
    pub end: f64,
    /// Logarithmic (`from` > 0): values below `from` land at `start`.
    pub log: bool,
}

impl Scale {
    pub fn linear(from: f64, to: f64, start: f64, end: f64) -> Scale {
        Scale { from, to, start, end, log: false }
    }

    /// Where `v` lands. A scale of a single value (`to` = `from`) puts it in the middle.
    pub fn at(&self, v: f64) -> f64 {
        let f = |v: f64| if self.log { v.max(self.from).log10() } else { v };
        if f(self.to) == f(self.from) {
            return self.start + 0.5 * (self.end - self.start);
        }
        self.start
            + (f(v) - f(self.from)) / (f(self.to) - f(self.from)).max(f64::MIN_POSITIVE) * (self.end - self.start)
    }

    /// The values ticked: the multiples of `step` in range, or on a logarithmic scale 1, 2 and
    /// 5 of each decade (only the powers of ten when it spans more than three decades).
    pub fn ticks(&self, step: f64) -> Vec<f64> {
        let mut ticks = Vec::new();
        if self.log {
            let decades = (self.to / self.from).log10().round();
            let multiples: &[f64] = if decades > 3.0 { &[1.0] } else { &[1.0, 2.0, 5.0] };
            let mut decade = 10f64.powf(self.from.log10().floor());
            while decade <= self.to * (1.0 + 1e-9) {
                for m in multiples {
                    let v = decade * m;
                    if v >= self.from * (1.0 - 1e-9) && v <= self.to * (1.0 + 1e-9) {
                        ticks.push(v);
                    }
                }
                decade *= 10.0;
            }
            return ticks;
        }
        let mut v = (self.from / step).ceil() * step;
        while v <= self.to + step * 1e-9 {
            ticks.push(v);
            v += step;
        }
        ticks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(step(1000.0, 5.0), 200.0);
        assert_eq!(step(7.3, 5.0), 2.0);
        assert_eq!(step(0.0, 5.0), 1.0);
        assert_eq!(nice_max(17_070.0), (20_000.0, 5_000.0));
        assert_eq!(nice_max(0.0), (1.0, 1.0));
    }

    #[test]
    fn scales_place_values_and_tick_them() {
        let x = Scale::linear(0.0, 10.0, 64.0, 610.0);
        assert_eq!((x.at(0.0), x.at(5.0), x.at(10.0)), (64.0, 337.0, 610.0));
        let y = Scale::linear(0.0, 100.0, 296.0, 14.0);
        assert_eq!((y.at(0.0), y.at(100.0)), (296.0, 14.0));
        assert_eq!(Scale::linear(3.0, 3.0, 60.0, 490.0).at(3.0), 275.0);
        assert_eq!(x.ticks(2.5), [0.0, 2.5, 5.0, 7.5, 10.0]);
        let log = Scale { log: true, ..Scale::linear(1.0, 100.0, 0.0, 100.0) };
        assert_eq!(log.ticks(1.0), [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        assert_eq!((log.at(0.5), log.at(10.0)), (0.0, 50.0));
    }
}
