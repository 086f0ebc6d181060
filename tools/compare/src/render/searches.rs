//! The capacity searches among the directories matched: what each found, per provider.
use super::cells::rate;
use super::section::{table, Section};
use crate::discover::format_utc;
use crate::search::{self, Search};
use inferbench_present::number::DASH;

pub fn section(searches: &[Search]) -> Section {
    let mut section = Section::new(2, format!("Capacity searches: {}", searches.len()));
    section.text.push(
        "A directory holding a `search.json` (`ib-search`'s record) is not a run; its probes (`probes/NN/`, one load run \
         per measured rate) are, compared when named (`<dir>/probes/*`). Holds at: the highest probed rate that held below \
         every failing one, the capacity found; fails at: the lowest probed rate that failed."
            .into(),
    );
    let mut t = table(&[
        "search",
        "workflow",
        "first probe (UTC)",
        "probes",
        "provider",
        "holds at (req/s)",
        "fails at (req/s)",
        "status",
        "stopped",
    ]);
    for found in searches {
        for r in &found.doc.results {
            t.row(vec![
                found.path.display().to_string(),
                found.workflow.clone(),
                found.started_at_us.map_or(DASH.into(), format_utc),
                found.doc.probes.len().to_string(),
                r.provider.clone(),
                rate(r.holds_at),
                rate(r.fails_at),
                search::status(r.status),
                found.doc.stopped.clone(),
            ]);
        }
    }
    section.table = Some(t);
    section
}
