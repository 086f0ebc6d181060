//! The detailed tables: the balanced pooled provider summary (the spec's required columns per
//! provider, with sample counts) and one section per task family (the same columns, coverage
//! and cost, and for contract extraction the field diagnostics).
use crate::format::{self, column, coverage, fixed, Table, UNAVAILABLE};
use crate::inputs::label;
use crate::leaderboard;
use inferbench_schemas::documents::{GroupMetrics, PooledMetrics, Summary};
use inferbench_schemas::providers::ProviderTable;

const CONTRACT_FAMILY: &str = inferbench_schemas::vocab::TaskFamily::ContractTermsExtraction.as_str();

const POOLED_NOTE: &str = "Pooled percentiles are computed directly over the concatenated samples \
of all task families, not averaged from the family percentiles. Pooling is balanced when every \
family has the same number of submitted requests; an unbalanced provider is not ranked. Rates are \
shares of submitted requests; `unavailable` means the metric had no samples. The failure rate \
also counts HTTP 1xx/3xx responses, shown as Other HTTP below.";

/// The spec's required columns of one row, formatted. `inputs::check` made sure the format
/// has every one of them.
fn columns(row: &GroupMetrics, required: &[String]) -> Vec<String> {
    required.iter().map(|name| column(name, row.column(name).flatten())).collect()
}

pub fn pooled_section(pooled: &[PooledMetrics], required: &[String], table: &ProviderTable) -> Vec<String> {
    let headers: Vec<&str> = ["Rank", "Provider"].into_iter().chain(required.iter().map(String::as_str)).collect();
    let mut summary = Table::new(&headers);
    let ordered = leaderboard::order(pooled);
    for row in &ordered {
        let mut cells = vec![leaderboard::rank(row.rank), label(&row.metrics.provider, table).to_string()];
        cells.extend(columns(&row.metrics, required));
        summary.row(cells);
    }
    let mut lines = vec!["## Balanced pooled provider summary".to_string(), String::new()];
    lines.extend(summary.lines());
    lines.extend(["", POOLED_NOTE, "", "Sample counts (samples/submitted):", ""].map(String::from));
    lines.extend(counts_table(&ordered, table));
    lines
}

/// What each pooled row was computed from: the verdict counts and each metric's samples.
fn counts_table(rows: &[&PooledMetrics], table: &ProviderTable) -> Vec<String> {
    let headers = [
        "Provider",
        "Submitted",
        "Correct",
        "Invalid",
        "Incorrect",
        "Failed",
        "TTFO",
        "TTFA",
        "E2E",
        "Output speed",
        "Other HTTP",
        "Balanced",
    ];
    let mut counts = Table::new(&headers);
    let samples = |s: &Summary| coverage(s.population_count, s.submitted_count);
    for row in rows {
        let (m, s) = (&row.metrics, &row.metrics.summaries);
        counts.row(vec![
            label(&m.provider, table).to_string(),
            m.submitted_count.to_string(),
            m.correct_count.to_string(),
            m.invalid_result_count.to_string(),
            m.incorrect_result_count.to_string(),
            m.failed_request_count.to_string(),
            samples(&s.ttfo_ms),
            samples(&s.ttfa_ms),
            samples(&s.e2e_latency_ms),
            samples(&s.output_tokens_per_second),
            format::percent(m.failures.other_http_rate),
            (if row.balanced { "yes" } else { "no" }).to_string(),
        ]);
    }
    counts.lines()
}

/// One `###` section per family, in the spec's family order.
pub fn family_sections(
    rows: &[GroupMetrics],
    families: &[String],
    required: &[String],
    table: &ProviderTable,
) -> Vec<String> {
    let mut lines = vec!["## Task-family results".to_string(), String::new()];
    lines.push("Providers are ordered by the family's E2E p99 (lowest first; no samples last).".to_string());
    for family in families {
        let mut mine: Vec<&GroupMetrics> = rows.iter().filter(|r| &r.task_family == family).collect();
        mine.sort_by(|a, b| leaderboard::by_e2e_p99(a, b).then_with(|| a.provider.cmp(&b.provider)));
        lines.extend([String::new(), format!("### {family}"), String::new()]);
        lines.extend(family_table(&mine, required, table));
        lines.extend([String::new(), "Coverage and cost (samples/submitted):".to_string(), String::new()]);
        lines.extend(coverage_table(&mine, table));
        if family == CONTRACT_FAMILY {
            lines.extend([String::new(), "Contract extraction field diagnostics:".to_string(), String::new()]);
            lines.extend(diagnostics_table(&mine, table));
        }
    }
    lines
}

fn family_table(rows: &[&GroupMetrics], required: &[String], table: &ProviderTable) -> Vec<String> {
    let headers: Vec<&str> = ["Provider"].into_iter().chain(required.iter().map(String::as_str)).collect();
    let mut t = Table::new(&headers);
    for row in rows {
        let mut cells = vec![label(&row.provider, table).to_string()];
        cells.extend(columns(row, required));
        t.row(cells);
    }
    t.lines()
}

fn coverage_table(rows: &[&GroupMetrics], table: &ProviderTable) -> Vec<String> {
    let mut t = Table::new(&["Provider", "Submitted", "TTFA", "E2E", "Output speed", "Usage", "Known cost (USD)"]);
    for row in rows {
        let s = &row.summaries;
        t.row(vec![
            label(&row.provider, table).to_string(),
            row.submitted_count.to_string(),
            coverage(s.ttfa_ms.population_count, s.ttfa_ms.submitted_count),
            coverage(s.e2e_latency_ms.population_count, s.e2e_latency_ms.submitted_count),
            coverage(s.output_tokens_per_second.population_count, s.output_tokens_per_second.submitted_count),
            coverage(row.usage.reported_count, row.usage.submitted_count),
            fixed(row.cost.known_cost_usd, 6),
        ]);
    }
    t.lines()
}

fn diagnostics_table(rows: &[&GroupMetrics], table: &ProviderTable) -> Vec<String> {
    let mut t = Table::new(&["Provider", "Returned objects", "Median correct fields", "Total fields"]);
    for row in rows {
        let d = row.contract_field_diagnostics.as_ref();
        t.row(vec![
            label(&row.provider, table).to_string(),
            d.map_or(UNAVAILABLE.to_string(), |d| d.returned_object_count.to_string()),
            d.and_then(|d| d.median_correct_fields_returned).map_or(UNAVAILABLE.to_string(), |m| format::fixed(m, 1)),
            d.map_or(UNAVAILABLE.to_string(), |d| d.field_count_total.to_string()),
        ]);
    }
    t.lines()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    #[test]
    fn the_pooled_summary_has_every_required_column_and_the_leaderboard_order() {
        let inputs = sample::inputs();
        let required = &inputs.spec.required_columns;
        let lines = pooled_section(&inputs.metrics.combined_provider_metrics, required, &inputs.table);
        assert_eq!(lines[2], format!("| Rank | Provider | {} |", required.join(" | ")));
        assert!(lines[4].starts_with("| 1 | Provider b | 250.0 | 900.0 | 1,500.5 | 287.1 |"), "{}", lines[4]);
        assert!(lines[4].contains("| 12 | 40 | 1,234 | 50.00% |"), "{}", lines[4]);
        assert!(lines[4].contains("| 240.5 | 61.6 | unavailable | 95.83% |"), "{}", lines[4]);
        assert!(
            lines
                .iter()
                .any(|l| l
                    == "| Provider b | 600 | 575 | 1 | 2 | 0 | 598/600 | 598/600 | 597/600 | 590/600 | 0.00% | yes |"),
            "{lines:#?}"
        );
    }

    #[test]
    fn family_sections_follow_the_spec_with_coverage_and_contract_diagnostics() {
        let inputs = sample::inputs();
        let families: Vec<String> = inputs.spec.families.iter().map(|f| f.name.clone()).collect();
        let lines = family_sections(
            &inputs.metrics.task_family_metrics,
            &families,
            &inputs.spec.required_columns,
            &inputs.table,
        );
        let headings: Vec<&String> = lines.iter().filter(|l| l.starts_with("### ")).collect();
        assert_eq!(headings, sample::FAMILIES.map(|f| format!("### {f}")).iter().collect::<Vec<_>>());
        let contract = lines.iter().position(|l| l == "### contract-terms-extraction").unwrap();
        // Family tables order by E2E p99: c (1,000.0) before b (3,228.8) before a (5,000.0).
        assert!(lines[contract + 4].starts_with("| Provider c |"), "{}", lines[contract + 4]);
        assert!(lines[contract..].iter().any(|l| l == "| Provider b | 590 | 9.5 | 10 |"));
        assert!(
            lines.iter().any(|l| l == "| Provider a | 600 | 598/600 | 597/600 | 590/600 | 300/600 | 0.012346 |"),
            "{lines:#?}"
        );
        assert_eq!(lines.iter().filter(|l| l.starts_with("| Provider | Returned objects")).count(), 1);
    }
}
