//! `summary.md` and `summary.html`: the comparison for a reader. Both say the same things in
//! the same order, from one list of sections (`section`); the page adds a line chart per
//! headline metric (and, for a workflow with load runs, of each provider's highest rate held)
//! and is self-contained (inline style and SVG, no script, nothing fetched).
//!
//! The sections, in order: what was compared and how the intervals are made (`intro`); per
//! workflow, its load runs' capacities (`capacity`), its runs over time (`workflow`) and its
//! drift alarms (`alarms`); last, the capacity searches found (`searches`). `markdown` and
//! `page` write them.
mod alarms;
mod capacity;
mod cells;
mod intro;
mod markdown;
mod page;
mod searches;
mod section;
mod workflow;

use crate::compare::RunResult;
use crate::load::HEADLINE;
use section::{workflows, Section};

pub use section::Summary;
#[cfg(test)]
use section::RECENT;

/// The summary as markdown.
pub fn markdown(s: &Summary) -> String {
    markdown::write(&sections(s))
}

/// The summary as one self-contained HTML page.
pub fn html(s: &Summary) -> String {
    page::write(&sections(s))
}

fn sections(s: &Summary) -> Vec<Section> {
    let mut out = vec![intro::intro(s), intro::method(s.settings)];
    for name in workflows(s.runs) {
        let runs: Vec<&RunResult> = s.runs.iter().filter(|r| r.info.workflow == name).collect();
        out.push(Section::new(2, format!("Workflow `{name}`: {} runs", runs.len())));
        out.extend(capacity::sections(&runs));
        out.push(workflow::leaderboard(&runs));
        out.extend(HEADLINE.into_iter().map(|metric| workflow::trend(s, name, metric)));
        out.push(workflow::head_to_head(s, name));
        out.push(workflow::newest_intervals(&runs));
        out.push(alarms::section(s, &runs, name));
    }
    if !s.searches.is_empty() {
        out.push(searches::section(s.searches));
    }
    out
}

#[cfg(test)]
pub mod tests;
