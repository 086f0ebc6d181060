//! `load.search`: a capacity search in place of a list of rates. Instead of steps fixed in
//! advance, the search measures one rate at a time (a probe: a one-step load run of its own)
//! and chooses the next rate from the goodput of those measured so far, until it has found,
//! for every provider, the highest rate at which the step holds (`objectives.goodput_target`
//! of its requests meet every objective) to within `tolerance`. `ib-search` runs it and
//! documents the rule; this module only reads and checks the section.
use super::check::{shown, Reader};
use inferbench_contract::vocab::{ArrivalProcess, LoadMode};

/// The section's key.
pub const SEARCH_KEY: &str = "load.search";
/// The most probes a search may run.
pub const MAX_PROBES: u64 = 64;
/// The finest tolerance: probes closer than 1 % apart are within a rate's own noise.
pub const MIN_TOLERANCE: f64 = 0.01;

/// A capacity search over open-loop (or capped) rates, in requests per second per provider.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapacitySearch {
    /// The first rate probed, and the lowest.
    pub min_rate: f64,
    /// The highest rate probed.
    pub max_rate: f64,
    /// The search stops when a provider's highest holding rate is within this share of its
    /// lowest failing one: `failing ≤ holding × (1 + tolerance)`.
    pub tolerance: f64,
    /// The most probes to run, whatever the brackets.
    pub max_probes: u32,
}

/// Reads `load.search`, if present, checking it against the section's other keys.
pub(super) fn read(r: &mut Reader, mode: LoadMode, arrivals: ArrivalProcess) -> Option<CapacitySearch> {
    let value = r.get(SEARCH_KEY)?;
    if !value.is_object() {
        r.push(SEARCH_KEY, format!("expected a map of min_rate, max_rate, tolerance, found {}", shown(value)));
        return None;
    }
    match mode {
        LoadMode::ClosedLoop => {
            r.push(SEARCH_KEY, "a closed loop has users, not a rate to search: use open_loop or capped")
        }
        LoadMode::OpenLoop | LoadMode::Capped => {}
    }
    if arrivals == ArrivalProcess::Trace {
        r.push(SEARCH_KEY, "a trace is replayed at its own rate: search with constant, poisson or gamma arrivals");
    }
    for other in ["load.rates", "load.speedups"] {
        if r.get(other).is_some() {
            r.push(other, "a capacity search chooses its own rates: give `search` or `rates`, not both");
        }
    }
    let rate = |x: f64| {
        if x > 0.0 && x <= super::load::MAX_RATE {
            Ok(())
        } else {
            Err(format!("must be greater than 0 and at most {}, found {x}", super::load::MAX_RATE))
        }
    };
    let min_rate = r.number("load.search.min_rate", rate);
    let max_rate = r.number("load.search.max_rate", rate);
    for (key, found) in [("min_rate", min_rate), ("max_rate", max_rate)] {
        if found.is_none() && r.get(&format!("{SEARCH_KEY}.{key}")).is_none() {
            r.push(&format!("{SEARCH_KEY}.{key}"), "missing");
        }
    }
    if let (Some(low), Some(high)) = (min_rate, max_rate) {
        if high <= low {
            r.push("load.search.max_rate", format!("must be above min_rate ({low}), found {high}"));
        }
    }
    let tolerance = r.number("load.search.tolerance", |x| {
        if (MIN_TOLERANCE..=1.0).contains(&x) {
            Ok(())
        } else {
            Err(format!("must be from {MIN_TOLERANCE} to 1 (a share of the rate), found {x}"))
        }
    });
    let max_probes = r.integer("load.search.max_probes", 2, MAX_PROBES).map(|n| n as u32);
    Some(CapacitySearch {
        min_rate: min_rate.unwrap_or(1.0),
        max_rate: max_rate.unwrap_or(2.0),
        tolerance: tolerance.unwrap_or(0.05),
        max_probes: max_probes.unwrap_or(16),
    })
}
