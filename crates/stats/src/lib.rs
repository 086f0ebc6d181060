//! `inferbench-stats`: the statistics every published figure rests on, and the one seeded
//! generator every draw comes from.
//!
//! - [`percentile`]: nearest-rank percentiles in integer ranks (`ib-aggregate`'s figures,
//!   `ib-watch`'s live p50s, `ib-compare`'s medians).
//! - [`interval`]: their distribution-free confidence intervals from order statistics, and
//!   Wilson intervals of rates.
//! - [`bootstrap`]: the seeded paired bootstrap of `ib-compare`'s intervals and `ib-aggregate`'s
//!   rank ranges.
//! - [`rng`]: the one seeded generator (SplitMix64), the stream key of a name, and the normal
//!   quantile function: `ib-data`'s dataset, `ib-schedule`'s arrivals and synthetic prompts,
//!   `ib-sim`'s answers, `ib-synth`'s logs and the bootstrap all draw from it.
//!
//! A layer of its own because its users sit on every floor: the stages and `ib-compare`
//! compute figures with it, the judge's synthetic text and the simulator draw from its
//! generator. Kept in the judge or the simulator's crate, it would make a stage stand on the
//! simulator, or the stream judge hold statistics. It is arithmetic on numbers: no file, no
//! socket, no clock, no external crate; it uses the contract only for the metric catalogue
//! (which tail a column's percentile takes).

pub mod bootstrap;
pub mod interval;
pub mod percentile;
pub mod rng;
