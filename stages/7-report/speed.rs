//! The published page's tokens/s view: every provider ordered by its median visible-answer
//! speed, with the gap to the fastest, the slow-tail floors, and the two waits a fast stream
//! can still hide (TTFA p95, E2E p99).
use crate::format::{coverage, figure, UNAVAILABLE};
use crate::labels::label;
use crate::leaderboard;
use inferbench_contract::documents::PooledMetrics;
use inferbench_contract::metrics::{Column, E2E_LATENCY, OUTPUT_TOKENS_PER_SECOND, TTFA};
use inferbench_inputs::providers::ProviderTable;
use inferbench_present::markdown::Table;
use inferbench_present::number::grouped;
use std::cmp::Ordering;

/// What the view orders by: the median visible-answer speed.
const MEDIAN: Column = OUTPUT_TOKENS_PER_SECOND.at(50);
/// The slow-tail floors beside it, then the two waits a fast stream can hide.
const FIGURES: [Column; 4] =
    [OUTPUT_TOKENS_PER_SECOND.at(95), OUTPUT_TOKENS_PER_SECOND.at(99), TTFA.at(95), E2E_LATENCY.at(99)];

/// The table's headings.
pub fn headers() -> Vec<String> {
    let mut headers = vec!["Provider".to_string(), MEDIAN.heading(), "Δ vs fastest p50".to_string()];
    headers.extend(FIGURES.iter().map(Column::heading));
    headers.extend(["Speed samples", "Rank"].map(String::from));
    headers
}

const NOTE: &str = "How to read this: higher tokens per second is better. Tokens/s p50 is the median \
speed of the visible answer after its first token; Δ is the gap to the fastest median. The p95 and p99 \
floors are slow-tail speeds: 95% and 99% of the provider's measured responses streamed at least that \
fast. Reasoning tokens and the wait for the first answer token are not part of the speed, so TTFA p95 \
and E2E p99 sit beside it: a provider can stream quickly once it starts and still keep the reader \
waiting for the start. Rank is the leaderboard's (by E2E p99, eligible providers only).";

/// Providers by descending tokens/s p50, providers without a speed sample last, then by name.
pub fn order(pooled: &[PooledMetrics]) -> Vec<&PooledMetrics> {
    let mut rows: Vec<&PooledMetrics> = pooled.iter().collect();
    rows.sort_by(|a, b| {
        let (x, y) = (a.metrics.value(MEDIAN), b.metrics.value(MEDIAN));
        let speed = match (x, y) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        speed.then_with(|| a.metrics.provider.cmp(&b.metrics.provider))
    });
    rows
}

/// The section's lines: a one-sentence finding, the table, how to read it.
pub fn section(pooled: &[PooledMetrics], table: &ProviderTable) -> Vec<String> {
    let ordered = order(pooled);
    let fastest = ordered.first().and_then(|r| r.metrics.value(MEDIAN));
    let mut t = Table::new(&headers());
    for row in &ordered {
        let m = &row.metrics;
        let delta = match (m.value(MEDIAN), fastest) {
            (Some(x), Some(f)) => grouped(x - f, 1),
            _ => UNAVAILABLE.to_string(),
        };
        let mut cells = vec![label(&m.provider, table).to_string(), figure(m.value(MEDIAN)), delta];
        cells.extend(FIGURES.iter().map(|c| figure(m.value(*c))));
        let speed = &m.summaries.output_tokens_per_second;
        cells.extend([coverage(speed.population_count, speed.submitted_count), leaderboard::rank(row.rank)]);
        t.row(cells);
    }
    let mut lines = vec!["## Which provider streams the most tokens per second?".to_string(), String::new()];
    if let Some(first) = ordered.first().filter(|_| fastest.is_some()) {
        let m = &first.metrics;
        let mut finding = format!(
            "{}{} led median speed at {} tokens/s; its p99 floor was {} tokens/s, with a TTFA p95 of {} ms.",
            label(&m.provider, table),
            if first.rank.is_none() { " (not ranked: see the leaderboard)" } else { "" },
            figure(m.value(MEDIAN)),
            figure(m.value(OUTPUT_TOKENS_PER_SECOND.at(99))),
            figure(m.value(TTFA.at(95))),
        );
        let ranked = ordered.iter().find(|r| r.rank.is_some() && r.metrics.value(MEDIAN).is_some());
        if let Some(ranked) = ranked.filter(|_| first.rank.is_none()) {
            finding.push_str(&format!(
                " Among ranked providers, {} led at {} tokens/s.",
                label(&ranked.metrics.provider, table),
                figure(ranked.metrics.value(MEDIAN))
            ));
        }
        lines.extend([finding, String::new()]);
    }
    lines.extend(t.lines());
    lines.extend([String::new(), NOTE.to_string()]);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    #[test]
    fn providers_are_ordered_by_median_speed_with_the_gap_to_the_fastest() {
        let inputs = sample::inputs();
        let lines = section(&inputs.metrics.combined_provider_metrics, &inputs.table);
        let rows: Vec<&String> =
            lines.iter().filter(|l| l.starts_with("| Provider ") && !l.starts_with("| Provider |")).collect();
        let speeds: Vec<f64> =
            rows.iter().map(|l| l.split(" | ").nth(1).unwrap().replace(',', "").parse::<f64>().unwrap()).collect();
        assert!(speeds.windows(2).all(|w| w[0] >= w[1]), "{lines:#?}");
        assert!(rows[0].contains(&format!(" | {} | 0.0 | ", figure(Some(speeds[0])))), "{}", rows[0]);
        let gap = grouped(speeds[1] - speeds[0], 1);
        assert!(rows[1].contains(&format!(" | {gap} | ")), "{}", rows[1]);
        assert!(lines[2].contains("led median speed at"), "{}", lines[2]);
        let expected = ["Provider", "Tokens/s p50", "Δ vs fastest p50", "Tokens/s p95 floor", "Tokens/s p99 floor"];
        assert_eq!(headers()[..5], expected);
        assert_eq!(headers()[5..], ["TTFA p95 (ms)", "E2E p99 (ms)", "Speed samples", "Rank"]);
    }

    #[test]
    fn a_provider_without_speed_samples_comes_last_with_no_gap() {
        let mut pooled = sample::inputs().metrics.combined_provider_metrics;
        pooled[0].metrics.percentiles.output_tokens_per_second_p50 = None;
        let gone = pooled[0].metrics.provider.clone();
        let ordered = order(&pooled);
        assert_eq!(ordered.last().unwrap().metrics.provider, gone);
        let lines = section(&pooled, &sample::inputs().table);
        let last = lines.iter().rfind(|l| l.starts_with("| Provider ") && !l.starts_with("| Provider |")).unwrap();
        assert!(last.contains("| unavailable | unavailable |"), "{last}");
    }

    #[test]
    fn an_unranked_fastest_provider_is_said_so_and_the_fastest_ranked_one_named() {
        let inputs = sample::inputs();
        let mut pooled = inputs.metrics.combined_provider_metrics.clone();
        let fastest = order(&pooled)[0].metrics.provider.clone();
        pooled.iter_mut().find(|r| r.metrics.provider == fastest).unwrap().rank = None;
        let next = order(&pooled).into_iter().find(|r| r.rank.is_some()).unwrap();
        let expected = format!(
            "Among ranked providers, {} led at {} tokens/s.",
            label(&next.metrics.provider, &inputs.table),
            figure(next.metrics.percentiles.output_tokens_per_second_p50)
        );
        let lines = section(&pooled, &inputs.table);
        assert!(
            lines[2].contains("(not ranked: see the leaderboard)") && lines[2].ends_with(&expected),
            "{}",
            lines[2]
        );
        let ranked = section(&inputs.metrics.combined_provider_metrics, &inputs.table);
        assert!(!ranked[2].contains("Among ranked providers"), "{}", ranked[2]);
    }
}
