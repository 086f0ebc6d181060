//! How inferbench writes for a reader: markdown tables ([`markdown`]), HTML escaping and
//! elements ([`html`]), number formats ([`number`]), and the scales and "nice" ticks of a
//! chart's axes ([`axis`]). ib-report, ib-compare and ib-search all write through it, so a
//! cell, a figure or a tick is escaped and printed one way wherever it appears.
//!
//! Where the three documents deliberately print a figure differently (report.md groups
//! thousands, ib-compare's summary prints plain decimals), each style has its own function here,
//! named for what it prints, rather than a copy in each binary. Every function is pure and
//! deterministic: the same value always gives the same bytes, which the byte-identical
//! re-rendering of a run depends on.
pub mod axis;
pub mod html;
pub mod markdown;
pub mod number;
