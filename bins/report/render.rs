//! The whole document: title and scope, leaderboard, pooled summary, task-family results,
//! paired comparisons, provenance. Only the run's files decide its content: no clock, no
//! machine path, so re-rendering the same inputs gives the same bytes.
use crate::format::seconds;
use crate::inputs::ReportInputs;
use crate::{leaderboard, paired, results};

/// The report's text, ending with exactly one newline.
pub fn render(inputs: &ReportInputs) -> String {
    let families: Vec<String> = inputs.spec.families.iter().map(|f| f.name.clone()).collect();
    let required = &inputs.spec.required_columns;
    let m = &inputs.metrics;
    let sections = [
        header(inputs, &families),
        leaderboard::section(&m.combined_provider_metrics, &inputs.table),
        results::pooled_section(&m.combined_provider_metrics, required, &inputs.table),
        results::family_sections(&m.task_family_metrics, &families, required, &inputs.table),
        paired::section(&inputs.comparisons, &inputs.table),
        provenance(inputs),
    ];
    let mut text = sections.map(|lines| lines.join("\n")).join("\n\n");
    text.truncate(text.trim_end().len());
    text.push('\n');
    text
}

fn header(inputs: &ReportInputs, families: &[String]) -> Vec<String> {
    let pooled = &inputs.metrics.combined_provider_metrics;
    let per_provider: Vec<i64> = pooled.iter().map(|r| r.metrics.scheduled_count).collect();
    let requests = match (per_provider.iter().min(), per_provider.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => format!("{lo} requests"),
        (Some(lo), Some(hi)) => format!("between {lo} and {hi} requests"),
        _ => "no requests".to_string(),
    };
    let rounds = inputs.comparisons.fastest_provider_wins.first().map_or(0, |w| w.total_round_count);
    let spec = &inputs.spec;
    let scope = format!(
        "What was measured: each of {providers} providers serving {model} received {requests} across \
         {family_count} task families ({family_list}) as streaming chat completions, one request at a time \
         per provider. The requests ran in {rounds} paired rounds: each round sent the same item to every \
         provider together and waited for every provider to finish or fail before the next. Each request had \
         a {timeout} timeout and a single attempt. Visible answer tokens were counted locally with the \
         {tokenizer} tokenizer, the same for every provider; this report was derived offline from the run's \
         files.",
        providers = pooled.len(),
        model = spec.model,
        family_count = families.len(),
        family_list = families.join(", "),
        timeout = seconds(spec.inference.timeout_seconds),
        tokenizer = inputs.lock.tokenizer.encoding,
    );
    vec![format!("# {}", spec.name), String::new(), format!("Run `{}`.", inputs.lock.run_id), String::new(), scope]
}

fn provenance(inputs: &ReportInputs) -> Vec<String> {
    let lock = &inputs.lock;
    let mut lines = vec![
        "## Provenance".to_string(),
        String::new(),
        format!("- Report code version: `{}`.", inferbench_schemas::CODE_VERSION),
        format!("- Metrics code version: `{}`.", inputs.metrics.provenance.code_version),
        format!("- Run created by code version `{}`.", lock.code_version),
        "- Report inputs (SHA-256):".to_string(),
    ];
    lines.extend(inputs.hashes.iter().map(|(name, hash)| format!("  - `{name}`: `{hash}`")));
    lines.push("- Run lock inputs (SHA-256, from `lock.json`):".to_string());
    lines.extend(lock.inputs.iter().map(|(name, hash)| format!("  - `{name}`: `{hash}`")));
    lines.extend([
        format!("- Dataset release hash: `{}`.", lock.dataset_release_hash),
        format!(
            "- Selection: `{}`, {} items per task family{}.",
            lock.selection.algorithm_version,
            lock.selection.selected_items_per_task_family,
            if lock.selection.sample { " (sample dataset)" } else { "" }
        ),
        format!(
            "- Tokenizer: {} ({}), vocabulary SHA-256 `{}`.",
            lock.tokenizer.encoding, lock.tokenizer.implementation, lock.tokenizer.vocabulary_sha256
        ),
        format!("- Percentiles: {}. No confidence intervals are computed.", inputs.metrics.percentile_convention),
    ]);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    fn report() -> String {
        render(&sample::inputs())
    }

    #[test]
    fn every_required_column_and_the_leaderboard_header_appear() {
        let text = report();
        let inputs = sample::inputs();
        assert_eq!(inputs.spec.required_columns.len(), 23);
        for column in &inputs.spec.required_columns {
            assert!(text.contains(&format!("| {column} |")), "column {column} missing");
        }
        assert!(text.contains(&format!("| {} |", leaderboard::HEADERS.join(" | "))));
        assert!(text.starts_with("# Inference Micro Single-Task Benchmark\n\nRun `run-sample`.\n"));
    }

    #[test]
    fn sections_come_in_order() {
        let text = report();
        let at = |h: &str| text.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("{h} missing"));
        let order = [
            "## Leaderboard",
            "## Balanced pooled provider summary",
            "## Task-family results",
            "## Paired comparisons",
            "## Provenance",
        ]
        .map(at);
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    }

    #[test]
    fn the_scope_and_provenance_name_what_was_measured() {
        let text = report();
        assert!(
            text.contains("each of 3 providers serving GLM 5.3 Flash received 600 requests across 3 task families"),
            "{text}"
        );
        assert!(
            text.contains("600 paired rounds")
                && text.contains("a 20 s timeout")
                && text.contains("o200k_base tokenizer")
        );
        assert!(text.contains(&format!("  - `manifest.json`: `{}`", "22".repeat(32))));
        assert!(text.contains(&format!("- Dataset release hash: `{}`.", "44".repeat(32))));
        assert!(text.contains("upper pK = ceil(K·n/100)"));
    }

    #[test]
    fn the_ineligible_provider_shows_a_dash_and_its_reason() {
        assert!(report().contains("| — | Provider c | 200.0 | 1,000.0 |"));
        assert!(report().contains("| ineligible: operational failure rate above 1% |"));
    }

    #[test]
    fn no_banned_words_and_exactly_one_trailing_newline() {
        let text = report();
        let lower = text.to_lowercase();
        for banned in ["headline", "[95% ci]", "ttfr"] {
            assert!(!lower.contains(banned), "{banned}");
        }
        assert!(text.ends_with('\n') && !text.ends_with("\n\n"));
        assert!(text.contains("3,228.8"));
    }
}
