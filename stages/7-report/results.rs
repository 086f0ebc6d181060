//! The detailed tables: the balanced pooled provider summary (the spec's required columns per
//! provider, split into latency, speed and outcome tables, with sample counts) and one section
//! per task family (the same three tables, coverage and cost, and for contract extraction the
//! field diagnostics).
use crate::format::{column, coverage, UNAVAILABLE};
use crate::labels::{self, label, Group, GROUPS};
use crate::leaderboard;
use inferbench_contract::documents::{Cost, GroupMetrics, PooledMetrics, Summary};
use inferbench_contract::metrics::{self, OUTPUT_TOKENS_PER_SECOND};
use inferbench_inputs::providers::ProviderTable;
use inferbench_present::markdown::Table;
use inferbench_present::number::grouped;

const CONTRACT_FAMILY: &str = inferbench_contract::vocab::TaskFamily::ContractTermsExtraction.as_str();

const POOLED_NOTE: &str = "Pooled percentiles are computed directly over the concatenated samples \
of all task families, not averaged from the family percentiles. Pooling is balanced when every \
family has the same number of submitted requests; an unbalanced provider is not ranked. Rates are \
shares of submitted requests; `unavailable` means the metric had no samples. The failure rate \
also counts HTTP 1xx/3xx responses, shown as HTTP 1xx/3xx below. Brackets hold 95 % confidence \
intervals (order statistics for a percentile, Wilson for a rate); † marks a percentile with too few \
samples for one.";

/// What each of the three tables shows, in a sentence.
fn group_note(group: Group) -> &'static str {
    match group {
        Group::Latency => {
            "Milliseconds from sending the request: TTFO to the first output token (reasoning or answer), \
             TTFA to the first visible answer token, E2E to the end of the response. Lower is better."
        }
        Group::Speed => {
            "Visible-answer tokens per second after the first answer token (higher is better); a pK floor is \
             the speed at least K% of responses reached. Reasoning tokens before the answer are counted apart \
             and never in the speed."
        }
        Group::Outcome => {
            "Shares of submitted requests: task success (exactly correct answers) and operational failures \
             by class."
        }
    }
}

/// The spec's required columns that belong in `group`, in the spec's order.
/// Speed comes before the reasoning columns in its table: it is what the table is read for.
fn in_group(required: &[String], group: Group) -> Vec<&String> {
    let mut columns: Vec<&String> = required.iter().filter(|c| labels::group(c) == group).collect();
    columns.sort_by_key(|c| metrics::column(c).is_none_or(|c| c.metric != OUTPUT_TOKENS_PER_SECOND));
    columns
}

/// The formatted cells of `row` for `columns`. `inputs::check` made sure the format has every
/// required column.
fn cells(row: &GroupMetrics, columns: &[&String]) -> Vec<String> {
    columns
        .iter()
        .map(|name| {
            metrics::column(name)
                .map_or_else(|| column(name, row.column(name).flatten()), |c| crate::format::with_interval(row, c))
        })
        .collect()
}

fn headings(first: &[&str], columns: &[&String]) -> Vec<String> {
    first.iter().map(|h| h.to_string()).chain(columns.iter().map(|c| labels::heading(c))).collect()
}

pub fn pooled_section(pooled: &[PooledMetrics], required: &[String], table: &ProviderTable) -> Vec<String> {
    let ordered = leaderboard::order(pooled);
    let mut lines = vec!["## Balanced pooled provider summary".to_string(), String::new(), POOLED_NOTE.to_string()];
    for group in GROUPS {
        let columns = in_group(required, group);
        if columns.is_empty() {
            continue;
        }
        let mut t = Table::new(&headings(&["Rank", "Provider"], &columns));
        for row in &ordered {
            let mut row_cells = vec![leaderboard::rank_label(row), label(&row.metrics.provider, table).to_string()];
            row_cells.extend(cells(&row.metrics, &columns));
            t.row(row_cells);
        }
        lines.extend([
            String::new(),
            format!("### {}", labels::title(group)),
            String::new(),
            group_note(group).to_string(),
        ]);
        lines.push(String::new());
        lines.extend(t.lines());
    }
    lines.extend(
        ["", "### Sample counts", "", "Samples of each figure out of the submitted requests.", ""].map(String::from),
    );
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
        "HTTP 1xx/3xx",
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
            m.failures.other_http_count.to_string(),
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
    lines.push(
        "Each family's figures, with the same columns as the pooled summary. Providers are ordered by the \
         family's E2E p99 (lowest first; no samples last)."
            .to_string(),
    );
    for family in families {
        let mut mine: Vec<&GroupMetrics> = rows.iter().filter(|r| &r.task_family == family).collect();
        mine.sort_by(|a, b| leaderboard::by_e2e_p99(a, b).then_with(|| a.provider.cmp(&b.provider)));
        lines.extend([String::new(), format!("### {family}")]);
        for group in GROUPS {
            let columns = in_group(required, group);
            if columns.is_empty() {
                continue;
            }
            let mut t = Table::new(&headings(&["Provider"], &columns));
            for row in &mine {
                let mut row_cells = vec![label(&row.provider, table).to_string()];
                row_cells.extend(cells(row, &columns));
                t.row(row_cells);
            }
            lines.extend([String::new(), format!("{} ({family}):", labels::title(group)), String::new()]);
            lines.extend(t.lines());
        }
        lines.extend([String::new(), format!("Coverage and cost ({family}; samples/submitted):"), String::new()]);
        lines.extend(coverage_table(&mine, table));
        if family == CONTRACT_FAMILY {
            lines.extend([String::new(), "Contract extraction field diagnostics:".to_string(), String::new()]);
            lines.extend(diagnostics_table(&mine, table));
        }
    }
    lines
}

fn coverage_table(rows: &[&GroupMetrics], table: &ProviderTable) -> Vec<String> {
    let mut t = Table::new(&["Provider", "Submitted", "TTFA", "E2E", "Output speed", "Usage reported", "Cost (USD)"]);
    for row in rows {
        let s = &row.summaries;
        t.row(vec![
            label(&row.provider, table).to_string(),
            row.submitted_count.to_string(),
            coverage(s.ttfa_ms.population_count, s.ttfa_ms.submitted_count),
            coverage(s.e2e_latency_ms.population_count, s.e2e_latency_ms.submitted_count),
            coverage(s.output_tokens_per_second.population_count, s.output_tokens_per_second.submitted_count),
            coverage(row.usage.reported_count, row.usage.submitted_count),
            cost(&row.cost),
        ]);
    }
    t.lines()
}

/// The group's cost: the total when every response reported usage; otherwise what is known,
/// marked as a lower bound, or `unknown` when no response reported usage (a provider that does
/// not stream usage has an unknown cost, not a zero one).
pub fn cost(cost: &Cost) -> String {
    match cost.total_cost_usd {
        Some(total) => grouped(total, 6),
        None if cost.reported_count == 0 => "unknown".to_string(),
        None => format!(
            "at least {} (usage from {})",
            grouped(cost.known_cost_usd, 6),
            coverage(cost.reported_count, cost.submitted_count)
        ),
    }
}

fn diagnostics_table(rows: &[&GroupMetrics], table: &ProviderTable) -> Vec<String> {
    let mut t = Table::new(&["Provider", "Returned objects", "Median correct fields", "Total fields"]);
    for row in rows {
        let d = row.contract_field_diagnostics.as_ref();
        t.row(vec![
            label(&row.provider, table).to_string(),
            d.map_or(UNAVAILABLE.to_string(), |d| d.returned_object_count.to_string()),
            d.and_then(|d| d.median_correct_fields_returned).map_or(UNAVAILABLE.to_string(), |m| grouped(m, 1)),
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
        let at = |heading: &str| lines.iter().position(|l| l == heading).unwrap_or_else(|| panic!("{heading}"));
        let (latency, speed, outcomes) = (at("### Latency"), at("### Speed and reasoning"), at("### Outcomes"));
        assert!(latency < speed && speed < outcomes);
        assert_eq!(
            lines[latency + 4],
            "| Rank | Provider | TTFO p50 (ms) | TTFO p95 (ms) | TTFO p99 (ms) | TTFA p50 (ms) | TTFA p95 (ms) | TTFA p99 (ms) \
             | E2E p50 (ms) | E2E p95 (ms) | E2E p99 (ms) |"
        );
        assert!(
            lines[latency + 6].starts_with("| 1 | Provider b | 250.0 | 900.0 | 1,500.5 | 287.1 |"),
            "{}",
            lines[latency + 6]
        );
        assert!(
            lines[speed + 6].starts_with("| 1 | Provider b | 240.5 | 61.6 | unavailable | 12 | 40 | 1,234 | 50.00% |"),
            "{}",
            lines[speed + 6]
        );
        assert!(lines[outcomes + 6].starts_with("| 1 | Provider b | 95.83% |"), "{}", lines[outcomes + 6]);
        // Every required column is in exactly one of the three tables.
        let header_cells: Vec<&str> = [latency, speed, outcomes]
            .iter()
            .flat_map(|&at| lines[at + 4].trim_matches('|').split(" | ").map(str::trim).skip(2).collect::<Vec<_>>())
            .collect();
        let mut shown: Vec<String> = header_cells.iter().map(|h| h.to_string()).collect();
        let mut expected: Vec<String> = required.iter().map(|c| labels::heading(c)).collect();
        shown.sort();
        expected.sort();
        assert_eq!(shown, expected);
        assert_eq!(header_cells.len(), required.len());
        assert!(
            lines.iter().any(
                |l| l == "| Provider b | 600 | 575 | 1 | 2 | 0 | 598/600 | 598/600 | 597/600 | 590/600 | 0 | yes |"
            ),
            "{lines:#?}"
        );
    }

    #[test]
    fn family_sections_follow_the_spec_with_coverage_and_contract_diagnostics() {
        let inputs = sample::inputs();
        let families: Vec<String> = inputs.spec.families.iter().map(|f| f.name.to_string()).collect();
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
        assert_eq!(lines[contract + 2], "Latency (contract-terms-extraction):");
        assert!(lines[contract + 6].starts_with("| Provider c |"), "{}", lines[contract + 6]);
        assert!(lines[contract..].iter().any(|l| l == "| Provider b | 590 | 9.5 | 10 |"));
        assert!(
            lines.iter().any(|l| l == "| Provider a | 600 | 598/600 | 597/600 | 590/600 | 300/600 | at least 0.012346 (usage from 300/600) |"),
            "{lines:#?}"
        );
        assert_eq!(lines.iter().filter(|l| l.starts_with("| Provider | Returned objects")).count(), 1);
    }
}
