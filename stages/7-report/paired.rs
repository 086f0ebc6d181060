//! The paired comparisons: fastest-provider wins and pairwise E2E differences, as
//! `ib-aggregate` computed them over the run's paired rounds.
use crate::format::{coverage, figure, percent};
use inferbench_contract::documents::{ComparisonsDocument, PairRow, PairedDifference};
use inferbench_inputs::providers::ProviderTable;
use inferbench_present::markdown::Table;
use inferbench_present::number::grouped;

const INTRO: &str = "Every round sent the same item to every provider at once, so a per-round \
difference compares providers under the same conditions. Every provider takes part unless its model or \
request configuration is incompatible or its records are incomplete (as the reference defines the paired \
comparisons); the task-success and failure-rate thresholds decide the leaderboard's ranking only, so a \
provider can be paired here and unranked there. A round counts for a provider when its response was \
complete.";

pub const WINS_RULE: &str = "Fastest-provider wins split credit equally across exact ties.";

pub const DIFFERENCE_DEFINITION: &str = "Pairwise differences are `provider A E2E latency - provider \
B E2E latency`, in milliseconds over the rounds where both have a complete response; negative \
values favor provider A. The p95 and p99 differences are upper-tail nearest-rank percentiles.";

/// Pairs listed in report.md: every pair when there are at most this many, else the pairs
/// among the first `CHART_PROVIDERS` providers of metrics.json (as report.html draws them);
/// comparisons.json has every pair.
const LISTED_PAIRS: usize = crate::html::SHOWN_PAIRS;

pub fn section(c: &ComparisonsDocument, table: &ProviderTable, leading: &[&str]) -> Vec<String> {
    let label = |name: &str| table.get(name).map_or(name.to_string(), |p| p.label().to_string());
    let mut lines = vec!["## Paired comparisons".to_string(), String::new(), INTRO.to_string()];
    lines.extend(["", "### Fastest-provider wins", "", WINS_RULE, ""].map(String::from));
    lines.extend(wins_table(c, &label));
    lines.extend(["", "### Pairwise E2E differences", "", DIFFERENCE_DEFINITION, ""].map(String::from));
    let all = &c.pairwise_e2e_latency_differences;
    let listed: Vec<&PairRow> = if all.len() <= LISTED_PAIRS {
        all.iter().collect()
    } else {
        let leading: std::collections::HashSet<&str> = leading.iter().copied().collect();
        let among = |p: &&PairRow| leading.contains(p.provider_a.as_str()) && leading.contains(p.provider_b.as_str());
        all.iter().filter(among).take(LISTED_PAIRS).collect()
    };
    if listed.len() < all.len() {
        lines.push(format!(
            "The {} pairs among the first {} providers of metrics.json (ranked ones first) are listed, of {} pairs; \
             `pairwise_e2e_latency_differences` in comparisons.json has every pair.",
            grouped(listed.len() as f64, 0),
            leading.len(),
            grouped(all.len() as f64, 0)
        ));
        lines.push(String::new());
    }
    lines.extend(pairs_table(&listed, &label));
    lines.extend(api_pairs(c, &label));
    lines
}

pub const API_PAIRS_INTRO: &str = "Providers that are one endpoint reached over two wire APIs (the same model id, \
the same endpoint but for the API's path) were sent the same item at the same time in every round, so the \
per-round difference is what the API itself costs. Each figure is the median of `A − B` over the rounds where both \
have it (negative favours A), with its 95 % paired-bootstrap interval (10,000 resamples, seed 20261201, as \
`ib-compare` computes it); under 6 rounds no interval can have that coverage and no verdict is given.";

/// What each wire API costs against another on the same endpoint (none: no lines).
fn api_pairs(c: &ComparisonsDocument, label: &dyn Fn(&str) -> String) -> Vec<String> {
    if c.api_pairs.is_empty() {
        return Vec::new();
    }
    let mut lines =
        vec![String::new(), "### What the API costs".to_string(), String::new(), API_PAIRS_INTRO.to_string()];
    lines.push(String::new());
    let headers = [
        "Provider A (API)",
        "Provider B (API)",
        "TTFA A − B (ms) [95 %], rounds",
        "TTFA verdict",
        "E2E A − B (ms) [95 %], rounds",
        "E2E verdict",
    ];
    let mut table = Table::new(&headers);
    let with_interval = |d: &PairedDifference| match (d.interval_low_ms, d.interval_high_ms) {
        (Some(low), Some(high)) => {
            let (mid, low, high) = (figure(d.difference_p50_ms), figure(Some(low)), figure(Some(high)));
            format!("{mid} [{low}, {high}], {}", d.paired_count)
        }
        _ => format!("{}, {}", figure(d.difference_p50_ms), d.paired_count),
    };
    for p in &c.api_pairs {
        table.row(vec![
            format!("{} ({})", label(&p.provider_a), p.api_a),
            format!("{} ({})", label(&p.provider_b), p.api_b),
            with_interval(&p.ttfa),
            p.ttfa.verdict.replace('_', " "),
            with_interval(&p.e2e),
            p.e2e.verdict.replace('_', " "),
        ]);
    }
    lines.extend(table.lines());
    lines
}

/// Providers by credited wins, most first.
fn wins_table(c: &ComparisonsDocument, label: &dyn Fn(&str) -> String) -> Vec<String> {
    let headers = ["Provider", "Win rate", "Credited wins", "Outright", "Tied", "Covered rounds", "Paired"];
    let mut wins = Table::new(&headers);
    let mut rows: Vec<_> = c.fastest_provider_wins.iter().collect();
    // Paired providers first (the others cannot win), then by credit, then by name.
    rows.sort_by(|a, b| {
        (!a.eligible)
            .cmp(&!b.eligible)
            .then_with(|| b.credited_wins.total_cmp(&a.credited_wins))
            .then_with(|| label(&a.provider).cmp(&label(&b.provider)))
    });
    for w in rows {
        wins.row(vec![
            label(&w.provider),
            percent(w.win_rate),
            grouped(w.credited_wins, 2),
            w.outright_wins.to_string(),
            w.tied_fastest_rounds.to_string(),
            coverage(w.eligible_e2e_sample_count, w.total_round_count),
            (if w.eligible { "yes" } else { "excluded" }).to_string(),
        ]);
    }
    wins.lines()
}

fn pairs_table(listed: &[&PairRow], label: &dyn Fn(&str) -> String) -> Vec<String> {
    let headers = [
        "Provider A",
        "Provider B",
        "Median diff (ms)",
        "p95 diff (ms)",
        "p99 diff (ms)",
        "Paired coverage",
        "Comparison",
    ];
    let mut pairs = Table::new(&headers);
    for p in listed {
        let paired = format!("{} ({})", coverage(p.paired_count, p.total_round_count), percent(p.coverage_rate));
        pairs.row(vec![
            label(&p.provider_a),
            label(&p.provider_b),
            figure(p.difference_p50_ms),
            figure(p.difference_p95_ms),
            figure(p.difference_p99_ms),
            paired,
            comparison(p, label),
        ]);
    }
    pairs.lines()
}

/// `paired`, or which side was excluded (the reasons are in the leaderboard).
fn comparison(p: &PairRow, label: &dyn Fn(&str) -> String) -> String {
    if p.eligible_comparison {
        return "paired".to_string();
    }
    let mut excluded: Vec<String> = Vec::new();
    for reason in &p.exclusion_reasons {
        let name = reason.split_once(": ").map_or(reason.as_str(), |(n, _)| n);
        let shown = label(name);
        if !excluded.contains(&shown) {
            excluded.push(shown);
        }
    }
    match excluded.is_empty() {
        true => "excluded".to_string(),
        false => format!("excluded: {} not comparable", excluded.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    #[test]
    fn wins_and_pairs_render_with_split_credit_and_coverage() {
        let inputs = sample::inputs();
        let lines = section(&inputs.comparisons, &inputs.table, &["a", "b", "c"]);
        assert!(lines.contains(&WINS_RULE.to_string()) && lines.contains(&DIFFERENCE_DEFINITION.to_string()));
        assert!(lines.iter().any(|l| l == "| Provider b | 66.58% | 399.50 | 399 | 1 | 600/600 | yes |"), "{lines:#?}");
        let at = |row: &str| lines.iter().position(|l| l.as_str() == row).unwrap();
        let c = at("| Provider c | unavailable | 0.00 | 0 | 0 | 0/600 | excluded |");
        let a = at("| Provider a | 33.42% | 200.50 | 200 | 1 | 600/600 | yes |");
        let b = at("| Provider b | 66.58% | 399.50 | 399 | 1 | 600/600 | yes |");
        assert!(b < a && a < c, "eligible by credit first, then the ineligible");
        assert!(
            lines
                .iter()
                .any(|l| l == "| Provider a | Provider b | -20.0 | 1,500.2 | 3,000.0 | 597/600 (99.50%) | paired |"),
            "{lines:#?}"
        );
        assert!(
            lines.iter().any(|l| l.ends_with("| 0/600 (0.00%) | excluded: Provider c not comparable |")),
            "{lines:#?}"
        );
    }
}
