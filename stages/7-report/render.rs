//! The whole document: title and scope, leaderboard, pooled summary, task-family results,
//! paired comparisons, provenance. Only the run's files decide its content: no clock, no
//! machine path, so re-rendering the same inputs gives the same bytes.
use crate::inputs::ReportInputs;
use crate::{failures, labels, leaderboard, paired, results, speed};
use inferbench_contract::vocab::{EndpointMode, WorkloadKind};
use inferbench_present::markdown::Table;
use inferbench_present::number::seconds;

/// The report's text, ending with exactly one newline.
pub fn render(inputs: &ReportInputs) -> String {
    let families: Vec<String> = inputs.spec.families.iter().map(|f| f.name.to_string()).collect();
    let required = &inputs.spec.required_columns;
    let m = &inputs.metrics;
    if let Some(load) = &m.load {
        // Synthetic prompts have no task family to report by: the load tables are their results.
        let by_family = match load.workload.kind {
            WorkloadKind::Dataset => {
                results::family_sections(&m.task_family_metrics, &families, required, &inputs.table)
            }
            WorkloadKind::Synthetic => Vec::new(),
        };
        return join([
            header(inputs, &families),
            crate::load::section(load),
            by_family,
            failures::section(&m.combined_provider_metrics, &inputs.responses, &inputs.table),
            provenance(inputs),
            column_names(required),
        ]);
    }
    join([
        header(inputs, &families),
        leaderboard::section(&m.combined_provider_metrics, &m.rank_separation, &inputs.table),
        speed::section(&m.combined_provider_metrics, &inputs.table),
        results::pooled_section(&m.combined_provider_metrics, required, &inputs.table),
        results::family_sections(&m.task_family_metrics, &families, required, &inputs.table),
        failures::section(&m.combined_provider_metrics, &inputs.responses, &inputs.table),
        with_probe(paired::section(&inputs.comparisons, &inputs.table, &leading(inputs)), inputs),
        provenance(inputs),
        column_names(required),
    ])
}

/// `lines`, then the prompt-cache probe's section when the run has one.
fn with_probe(mut lines: Vec<String>, inputs: &ReportInputs) -> Vec<String> {
    if let Some(probe) = &inputs.metrics.cache_probe {
        lines.push(String::new());
        lines.extend(crate::cache::section(probe, &inputs.table));
    }
    lines
}

/// Sections joined by a blank line, ending with exactly one newline.
fn join<const N: usize>(sections: [Vec<String>; N]) -> String {
    let mut text = sections.map(|lines| lines.join("\n")).join("\n\n");
    text.truncate(text.trim_end().len());
    text.push('\n');
    text
}

/// The first `CHART_PROVIDERS` providers of metrics.json's pooled rows (ranked ones first), as
/// report.html takes them: the ones whose pairs are listed when there are too many to list.
fn leading(inputs: &ReportInputs) -> Vec<&str> {
    let pooled = &inputs.metrics.combined_provider_metrics;
    pooled.iter().take(crate::html::CHART_PROVIDERS).map(|r| r.metrics.provider.as_str()).collect()
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
    let scope = match &inputs.metrics.load {
        Some(load) if load.workload.kind == WorkloadKind::Synthetic => {
            crate::load::scope(load, pooled.len(), &spec.model)
        }
        Some(load) => {
            crate::load::scope(load, pooled.len(), &spec.model)
                + " The task-family results after the load section pool every request of every step, warm-up and \
               cool-down included."
        }
        None => closed_loop_scope(inputs, families, &requests, rounds),
    };
    vec![
        format!("# {}", spec.name),
        String::new(),
        format!("Run `{}`.", inputs.lock.run_id),
        String::new(),
        scope,
        String::new(),
        how_it_ran(inputs),
        String::new(),
        TERMS.to_string(),
    ]
}

/// What the closed-loop workflow measured, in one paragraph.
fn closed_loop_scope(inputs: &ReportInputs, families: &[String], requests: &str, rounds: i64) -> String {
    let pooled = &inputs.metrics.combined_provider_metrics;
    let spec = &inputs.spec;
    format!(
        "What was measured: each of {providers} providers serving {model} received {requests} across \
         {family_count} task families ({family_list}) as streaming chat completions, one request at a time \
         per provider. The requests ran in {rounds} paired rounds: each round sent the same item to every \
         provider together and waited for every provider to finish or fail before the next. {deadline} \
         Visible answer tokens were counted locally with the {tokenizer} tokenizer, the same for every \
         provider; this report was derived offline from the run's files.",
        providers = pooled.len(),
        model = spec.model,
        family_count = families.len(),
        family_list = families.join(", "),
        deadline = deadline_sentence(inputs),
        tokenizer = inputs.lock.tokenizer.encoding,
    )
}

const TERMS: &str = "Terms: TTFA (time to first answer token) is the wait from sending the request \
to the first visible answer token; TTFO counts the first output token of any kind, reasoning \
included; E2E is the time until the response ended. Tokens/s is visible-answer tokens per second \
after the first answer token. p50 is the median; a latency's p95 and p99 are the values that 95% and \
99% of requests stayed at or under; for tokens/s, the p95 and p99 floors are the speeds that 95% and \
99% of responses reached or exceeded.";

/// The request deadline as the fetch segments applied it, and the attempt policy.
fn deadline_sentence(inputs: &ReportInputs) -> String {
    let mut deadlines: Vec<u64> = inputs.execution.segments.iter().map(|s| s.deadline_ms).collect();
    deadlines.dedup();
    let deadline = match deadlines.as_slice() {
        [] => format!("a {} timeout", seconds(inputs.spec.inference.timeout_seconds)),
        [one] => format!("a {} timeout", seconds(*one as f64 / 1000.0)),
        many => format!(
            "a timeout of {} (by fetch segment)",
            many.iter().map(|d| seconds(*d as f64 / 1000.0)).collect::<Vec<_>>().join(", then ")
        ),
    };
    match inputs.execution.resent_attempts {
        0 => format!("Each request had {deadline} and a single attempt."),
        n => format!(
            "Each request had {deadline} and a single scored attempt: {n} attempt(s) that a stopped fetch left \
             without an outcome were sent again, and the interrupted attempts were never scored."
        ),
    }
}

/// Whether the providers were real or simulated, and how the fetch went.
fn how_it_ran(inputs: &ReportInputs) -> String {
    let e = &inputs.execution;
    let against = match e.endpoint_mode {
        Some(EndpointMode::Simulated) => "simulated providers (ib-sim on this machine), not the real endpoints",
        Some(EndpointMode::Imported) => {
            "the endpoints the reference runner reached (this run was imported from its records by ib-import; \
             nothing was sent again)"
        }
        Some(EndpointMode::Providers) => "the providers' real endpoints",
        None => "no provider (nothing was fetched)",
    };
    let segments = e.segments.len();
    let mut text = format!(
        "How it ran: against {against}, in {segments} fetch segment(s){}. ",
        e.wall_clock_period.as_ref().map_or(String::new(), |p| format!(" from {} to {}", p.start, p.end))
    );
    text.push_str(&match (e.resumed_rounds, e.resent_attempts) {
        (0, 0) => "No round was resumed and no attempt re-sent.".to_string(),
        (rounds, attempts) => format!(
            "{rounds} round(s) were resumed after a stopped fetch (their requests were not all sent together) and \
             {attempts} attempt(s) re-sent."
        ),
    });
    if let Some(busting) = crate::cache::busting(&inputs.spec) {
        text.push(' ');
        text.push_str(busting);
    }
    text
}

/// The headings of the summary tables against their keys in `metrics.json` and
/// `metrics.parquet`, for whoever takes a figure from the report to a notebook.
fn column_names(required: &[String]) -> Vec<String> {
    let mut t = Table::new(&["Heading", "Key in metrics.json"]);
    for column in required {
        t.row(vec![labels::heading(column), format!("`{column}`")]);
    }
    let mut lines = vec!["## Column names in metrics.json".to_string(), String::new()];
    lines.extend(t.lines());
    lines
}

fn provenance(inputs: &ReportInputs) -> Vec<String> {
    let lock = &inputs.lock;
    let mut lines = vec![
        "## Provenance".to_string(),
        String::new(),
        format!("- Report code version: `{}`.", inferbench_contract::CODE_VERSION),
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
        format!("- Percentiles: {}.", inputs.metrics.percentile_convention),
    ]);
    if let Some(parity) = &inputs.parity {
        lines.extend(crate::parity::lines(parity, &inputs.table));
    } else if inferbench_judge::rules::Rules::of(&inputs.metrics.provenance.inputs).is_reference() {
        lines.push("- Scored under the reference's rules (`--rules reference`).".to_string());
    }
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
            let heading = labels::heading(column);
            assert!(text.contains(&format!("| {heading} |")), "column {column} ({heading}) missing");
            assert!(text.contains(&format!("| {heading} | `{column}` |")), "{column} not in the names table");
        }
        // No machine name heads a table column: they appear only in the names table.
        for line in text.lines().filter(|l| l.starts_with("| Rank |") || l.starts_with("| Provider |")) {
            assert!(!line.contains('_'), "{line}");
        }
        assert!(text.contains(&format!("| {} |", leaderboard::headers().join(" | "))));
        assert!(text.starts_with("# Inference Micro Single-Task Benchmark\n\nRun `run-sample`.\n"));
    }

    #[test]
    fn sections_come_in_order() {
        let text = report();
        let at = |h: &str| text.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("{h} missing"));
        let order = [
            "## Leaderboard",
            "## Which provider streams the most tokens per second?",
            "## Balanced pooled provider summary",
            "## Task-family results",
            "## Paired comparisons",
            "## Provenance",
            "## Column names in metrics.json",
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
