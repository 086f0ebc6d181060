//! The summary's opening: what was compared, what was skipped, and how the paired intervals
//! are made.
use super::section::{workflows, Section, Summary};
use crate::bootstrap::Settings;
use crate::discover::format_utc;

/// The title, the runs' dates, workflows and sources, and what was skipped.
pub fn intro(s: &Summary) -> Section {
    let (first, last) = (s.runs.first().unwrap(), s.runs.last().unwrap());
    let imported = s.runs.iter().filter(|r| r.info.imported).count();
    let legacy = s.runs.iter().filter(|r| r.pooled_source == crate::load::LEGACY_POOLED).count();
    let mut intro = Section::new(1, format!("Comparison of {} runs", s.runs.len()));
    intro.text.push(format!(
        "Runs started from {} to {} UTC; workflows: {}. {imported} imported from the reference runner; {legacy} scored \
         before pooled.parquet existed (their pooled rows read from metrics.parquet). {} responses in all.",
        format_utc(first.info.started_at_us),
        format_utc(last.info.started_at_us),
        workflows(s.runs).into_iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", "),
        s.runs.iter().map(|r| r.response_rows).sum::<usize>(),
    ));
    intro.text.push(
        "Every table in full: `runs.parquet`, `leaderboard.parquet` (one row per run and provider: the trend data), \
         `trends.parquet`, `head_to_head.parquet`, `paired_bootstrap.parquet`, `load_steps.parquet` (one row per load \
         run, step and provider), `drift.parquet` (every drift test)."
            .to_string(),
    );
    if !s.skipped.is_empty() {
        intro.text.push(format!(
            "Skipped (matched, but not a scored run): {}.",
            s.skipped.iter().map(|(p, why)| format!("`{}` ({why})", p.display())).collect::<Vec<_>>().join("; ")
        ));
    }
    intro
}

/// The paired bootstrap's method and settings.
pub fn method(settings: &Settings) -> Section {
    let (low, high) = settings.bound_ranks();
    let mut method = Section::new(2, "How the paired intervals are made");
    method.text.push(format!(
        "For every pair of providers A < B (by name) in a run, the differences A − B of E2E latency and of TTFA over the \
         rounds where both have a sample; the statistic is their nearest-rank p50 (rank ⌈n/2⌉, as comparisons.json's \
         `difference_p50_ms`); negative favours A. The interval is the {}% percentile interval of {} bootstrap resamples \
         (the sorted resampled medians at ranks {low} and {high}). RNG: {}; seed {}. A verdict says A or B is faster only \
         when the whole interval is on one side of zero; otherwise the difference is not told apart from noise. No verdict \
         is given under {min} paired rounds: a bootstrap interval never reaches past the smallest and largest difference, \
         and [min, max] of n differences covers the median with probability 1 − 2·0.5ⁿ, under {}% for n < {min}; such \
         pairs say \"too few shared rounds\" and are left out of the counts across runs.",
        settings.confidence,
        settings.resamples,
        Settings::RNG,
        settings.seed,
        settings.confidence,
        min = crate::bootstrap::min_pairs(settings.confidence),
    ));
    method
}
