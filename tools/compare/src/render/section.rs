//! What the summary says, before it is written as markdown or as a page: sections of text,
//! each with at most one table and one chart, and the figures they are made from.
use crate::bootstrap::Settings;
use crate::compare::{HeadToHead, RunResult, Trend};
use crate::search::Search;
use inferbench_contract::metrics::Column;
use inferbench_present::markdown::Table;
use inferbench_present::number;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// How many run dates the leaderboard-over-time tables show (the newest); the Parquet has all.
pub const RECENT: usize = 30;

/// Everything the summary is written from.
pub struct Summary<'a> {
    pub runs: &'a [RunResult],
    pub skipped: &'a [(PathBuf, String)],
    pub searches: &'a [Search],
    pub trends: &'a [Trend],
    pub pairs: &'a [HeadToHead],
    pub settings: &'a Settings,
    pub drift: &'a [crate::drift::Test],
    pub drift_settings: &'a crate::drift::Settings,
}

/// The workflows of `runs`, in name order.
pub fn workflows(runs: &[RunResult]) -> BTreeSet<&str> {
    runs.iter().map(|r| r.info.workflow.as_str()).collect()
}

/// A line chart by run date: one line per provider of (start µs, value) points.
pub struct Chart {
    /// What is drawn, in a sentence's words (the chart's label).
    pub label: String,
    /// Decimals of the values written on it.
    pub decimals: usize,
    pub series: Vec<(String, Vec<(i64, f64)>)>,
    /// Per series, per point: whether it is a partial run's (drawn hollow).
    pub partial: Vec<Vec<bool>>,
}

impl Chart {
    /// A headline metric's trends, one line per provider.
    pub fn metric(metric: Column, trends: &[&Trend]) -> Chart {
        Chart {
            label: metric.in_sentence(),
            decimals: super::cells::decimals(metric.metric.unit),
            series: trends.iter().map(|t| (t.provider.clone(), t.points.clone())).collect(),
            partial: trends.iter().map(|t| t.partial.clone()).collect(),
        }
    }

    /// A value as the chart writes it.
    pub fn value(&self, v: f64) -> String {
        number::plain(v, self.decimals)
    }
}

/// A heading, paragraphs (markdown, whose code spans the page writes as `<code>`), then a
/// table and a chart when it has them.
pub struct Section {
    pub heading: String,
    pub level: usize,
    pub text: Vec<String>,
    pub table: Option<Table>,
    pub chart: Option<Chart>,
}

impl Section {
    pub fn new(level: usize, heading: impl Into<String>) -> Section {
        Section { heading: heading.into(), level, text: Vec::new(), table: None, chart: None }
    }
}

/// A table of the summary: an empty one keeps its heading alone.
pub fn table<S: AsRef<str>>(headers: &[S]) -> Table {
    Table::new(headers).without_placeholder()
}
