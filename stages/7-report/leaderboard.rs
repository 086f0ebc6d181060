//! The leaderboard: the published snapshot's table (E2E p50/p99, TTFA p50, tokens/s p50 and
//! p95 floor, task success, operational failures) with the rank and the eligibility added,
//! so an unranked provider stays visible with the reasons it was not ranked.
use crate::format;
use crate::labels::label;
use inferbench_contract::documents::{GroupMetrics, PooledMetrics, RankSeparation};
use inferbench_contract::metrics::{
    Column, E2E_LATENCY, FAILURE, OUTPUT_TOKENS_PER_SECOND, RANKING, TASK_SUCCESS, TTFA,
};
use inferbench_inputs::providers::ProviderTable;
use inferbench_present::markdown::Table;
use inferbench_present::number::{self, grouped, Between, DASH};
use std::cmp::Ordering;

/// The figures between the provider and its eligibility, in the table's order.
const FIGURES: [Column; 7] = [
    E2E_LATENCY.at(50),
    E2E_LATENCY.at(99),
    TTFA.at(50),
    OUTPUT_TOKENS_PER_SECOND.at(50),
    OUTPUT_TOKENS_PER_SECOND.at(95),
    TASK_SUCCESS.value(),
    FAILURE.value(),
];

/// The table's headings: `Rank`, `Provider`, each figure's, `Eligibility`.
pub fn headers() -> Vec<String> {
    let mut headers = vec!["Rank".to_string(), "Provider".to_string()];
    headers.extend(FIGURES.iter().map(Column::heading));
    headers.push("Eligibility".to_string());
    headers
}

const NOTE: &str = "How to read this: lower latency is better; higher speed and task success are \
better. E2E and TTFA are milliseconds from sending the request, over each provider's balanced \
pooled requests. Tokens/s p50 is the median visible-answer speed; the tokens/s p95 floor is the \
speed that at least 95% of the provider's complete responses reached (the slow end), not an \
upper-tail speed. Failed requests are \
excluded from latency and speed but stay in the task-success denominator. Percentiles are \
nearest-rank over the observed samples. Only eligible providers are \
ranked, by pooled E2E p99; an unranked provider shows `—` and the reasons it was not ranked, and \
providers the run cannot tell apart share a rank range (`1–2`).";

/// Ranked providers in rank order, then the others by pooled E2E p99 (missing last), then
/// name. The pooled summary uses the same order, so the two tables read in step.
pub fn order(pooled: &[PooledMetrics]) -> Vec<&PooledMetrics> {
    let mut rows: Vec<&PooledMetrics> = pooled.iter().collect();
    rows.sort_by(|a, b| {
        let rank = (a.rank.is_none(), a.rank).cmp(&(b.rank.is_none(), b.rank));
        rank.then_with(|| by_e2e_p99(&a.metrics, &b.metrics)).then_with(|| a.metrics.provider.cmp(&b.metrics.provider))
    });
    rows
}

/// Ascending pooled E2E p99 (the ranking's figure), missing values last.
pub fn by_e2e_p99(a: &GroupMetrics, b: &GroupMetrics) -> Ordering {
    match (a.value(RANKING), b.value(RANKING)) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// The section's lines.
pub fn section(pooled: &[PooledMetrics], separations: &[RankSeparation], table: &ProviderTable) -> Vec<String> {
    let mut t = Table::new(&headers());
    for row in order(pooled) {
        let m = &row.metrics;
        let mut cells = vec![rank_label(row), label(&m.provider, table).to_string()];
        cells.extend(FIGURES.iter().map(|c| format::with_interval(m, *c)));
        cells.push(eligibility(row));
        t.row(cells);
    }
    let mut lines = vec!["## Leaderboard".to_string(), String::new()];
    lines.extend(t.lines());
    lines.extend([String::new(), NOTE.to_string(), String::new(), format::INTERVAL_NOTE.to_string()]);
    lines.extend(separation_lines(separations, table));
    lines
}

/// The rank, or the range it shares with neighbours the run cannot tell apart (`1–3`).
pub fn rank_label(row: &PooledMetrics) -> String {
    match (&row.rank_range, row.rank) {
        (Some(range), Some(_)) => range.label.clone(),
        (_, rank) => self::rank(rank),
    }
}

/// Adjacent ranked providers: told apart or not, and about how many rounds would.
pub fn separation_lines(separations: &[RankSeparation], table: &ProviderTable) -> Vec<String> {
    if separations.is_empty() {
        return Vec::new();
    }
    let mut t = Table::new(&[
        "Better",
        "Next",
        "Shared rounds",
        "E2E p99 difference, ms [95 % interval]",
        "Told apart",
        "Rounds to tell apart (about)",
    ]);
    for s in separations {
        let difference = match (s.difference, s.lower, s.upper) {
            (Some(d), Some(lo), Some(hi)) => {
                let bounds = number::interval(&format::figure(Some(lo)), &format::figure(Some(hi)), Between::EnDash);
                format!("{} {bounds}", format::figure(Some(d)))
            }
            _ => format::UNAVAILABLE.to_string(),
        };
        let rounds = s.rounds_to_separate.map_or_else(|| DASH.to_string(), |r| grouped(r as f64, 0));
        t.row(vec![
            label(&s.better, table).to_string(),
            label(&s.worse, table).to_string(),
            s.shared_rounds.to_string(),
            difference,
            match s.distinguishable {
                true => "yes".to_string(),
                false if s.shared_rounds < s.min_rounds => format!("no: fewer than {} rounds", s.min_rounds),
                false => "no".to_string(),
            },
            rounds,
        ]);
    }
    let mut lines = vec![String::new(), "### Which ranks the run tells apart".to_string(), String::new()];
    lines.extend(t.lines());
    lines.extend([String::new(), SEPARATION_NOTE.to_string()]);
    lines
}

const SEPARATION_NOTE: &str = "Each pair of adjacent ranked providers is compared by a seeded paired bootstrap over \
the rounds both completed, on the ranking key (pooled E2E p99: the next provider's minus the better one's). When the \
95 % interval holds zero, or the shared rounds are fewer than a p99 needs for any 95 % interval (299), the run cannot tell them apart and they share a rank range (`2–4`). The rounds to tell them \
apart are a projection from the resampled differences' spread, which shrinks as 1/√rounds; `—` when no difference \
was observed.";

pub fn rank(rank: Option<i64>) -> String {
    rank.map_or_else(|| DASH.to_string(), |r| r.to_string())
}

fn eligibility(row: &PooledMetrics) -> String {
    match (row.eligible, row.ineligibility_details.as_slice()) {
        (true, _) => "eligible".to_string(),
        (_, []) => "ineligible".to_string(),
        (_, reasons) => format!("ineligible: {}", reasons.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    #[test]
    fn ranked_providers_come_first_and_an_ineligible_one_shows_a_dash_and_its_reason() {
        let inputs = sample::inputs();
        let lines = section(&inputs.metrics.combined_provider_metrics, &inputs.metrics.rank_separation, &inputs.table);
        assert_eq!(lines[2], format!("| {} |", headers().join(" | ")));
        assert_eq!(
            lines[2],
            "| Rank | Provider | E2E p50 (ms) | E2E p99 (ms) | TTFA p50 (ms) | Tokens/s p50 | Tokens/s p95 floor | Task \
             success | Operational failures | Eligibility |"
        );
        assert!(lines[4].starts_with("| 1 | Provider b | 330.8 | 3,228.8 |"), "{}", lines[4]);
        assert!(lines[5].starts_with("| 2 | Provider a |"), "{}", lines[5]);
        assert!(
            lines[6].starts_with("| — | Provider c |")
                && lines[6].ends_with("| ineligible: operational failure rate above 1% |"),
            "{}",
            lines[6]
        );
        assert!(lines[4].contains("| 95.83% | 0.00% | eligible |"), "{}", lines[4]);
    }

    #[test]
    fn unranked_providers_follow_by_e2e_p99_with_missing_values_last() {
        let mut pooled = sample::inputs().metrics.combined_provider_metrics;
        // b stays ranked; a (p99 5,000) and c (p99 1,000) are unranked; b's twin has no E2E.
        pooled.iter_mut().find(|r| r.metrics.provider == "a").unwrap().rank = None;
        let mut twin = pooled.iter().find(|r| r.metrics.provider == "b").unwrap().clone();
        (twin.metrics.provider, twin.rank) = ("z-no-samples".into(), None);
        twin.metrics.percentiles.e2e_latency_p99 = None;
        pooled.push(twin);
        let names: Vec<&str> = order(&pooled).iter().map(|r| r.metrics.provider.as_str()).collect();
        assert_eq!(names, ["b", "c", "a", "z-no-samples"]);
    }
}
