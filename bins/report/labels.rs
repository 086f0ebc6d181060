//! Names a person reads: a provider's label from the provider table, the headings of the
//! metric columns (`TTFA p50 (ms)`, `Tokens/s p95 floor`), and which of the three tables
//! (latency, speed, outcomes) each column belongs in. The machine names stay the keys of
//! `metrics.json`; the report ends with the mapping between the two.
use inferbench_inputs::providers::ProviderTable;

/// A provider's label from the provider table, or its name when the table has none.
pub fn label<'a>(provider: &'a str, table: &'a ProviderTable) -> &'a str {
    table.get(provider).map_or(provider, |p| p.label())
}

/// The table a metric column is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// Milliseconds from sending the request: TTFO, TTFA, E2E.
    Latency,
    /// Visible-answer speed and the reasoning that came before the answer.
    Speed,
    /// Task success and the operational failure rates.
    Outcome,
}

impl Group {
    pub const ALL: [Group; 3] = [Group::Latency, Group::Speed, Group::Outcome];

    /// The table's title.
    pub fn title(self) -> &'static str {
        match self {
            Group::Latency => "Latency",
            Group::Speed => "Speed and reasoning",
            Group::Outcome => "Outcomes",
        }
    }
}

/// `ttfa_p95` → `("ttfa", "p95")`.
fn percentile_of(column: &str) -> Option<(&str, &str)> {
    let (base, p) = column.rsplit_once('_')?;
    (p.len() > 1 && p.starts_with('p') && p[1..].bytes().all(|b| b.is_ascii_digit())).then_some((base, p))
}

/// The heading of a metric column. A column this code does not know keeps its machine name,
/// so a spec asking for a new column still gets it shown.
pub fn heading(column: &str) -> String {
    if let Some((base, p)) = percentile_of(column) {
        let named = match base {
            "ttfo" => Some(format!("TTFO {p} (ms)")),
            "ttfa" => Some(format!("TTFA {p} (ms)")),
            "e2e_latency" => Some(format!("E2E {p} (ms)")),
            "output_tokens_per_second" if p == "p50" => Some("Tokens/s p50".to_string()),
            // The lower tail: the speed at least that share of responses reached.
            "output_tokens_per_second" => Some(format!("Tokens/s {p} floor")),
            "pre_answer_reasoning_tokens" => Some(format!("Reasoning tokens before answer {p}")),
            _ => None,
        };
        if let Some(named) = named {
            return named;
        }
    }
    let named = match column {
        "reasoning_emission_rate" => "Responses with reasoning",
        "task_success_rate" => "Task success",
        "failure_rate" => "Operational failures",
        "timeout_rate" => "Timeout",
        "http_429_rate" => "HTTP 429",
        "other_http_4xx_rate" => "Other 4xx",
        "http_5xx_rate" => "HTTP 5xx",
        "transport_error_rate" => "Connection",
        "other_http_rate" => "HTTP 1xx/3xx",
        "invalid_stream_rate" => "Invalid stream",
        "stream_error_rate" => "Stream error",
        "truncated_rate" => "Truncated",
        other => other,
    };
    named.to_string()
}

/// The table a metric column belongs in.
pub fn group(column: &str) -> Group {
    let latency = ["ttfo_", "ttfa_", "e2e_latency_"];
    let speed = ["output_tokens_per_second", "pre_answer_reasoning_tokens", "reasoning_emission"];
    if latency.iter().any(|p| column.starts_with(p)) {
        Group::Latency
    } else if speed.iter().any(|p| column.starts_with(p)) {
        Group::Speed
    } else {
        Group::Outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_required_column_of_the_reference_spec_has_a_readable_heading() {
        for column in inferbench_inputs::spec::METRIC_COLUMNS {
            let h = heading(column);
            assert_ne!(h, *column, "{column} has no heading");
            assert!(!h.contains('_'), "{h}");
        }
        assert_eq!(heading("ttfa_p50"), "TTFA p50 (ms)");
        assert_eq!(heading("output_tokens_per_second_p95"), "Tokens/s p95 floor");
        assert_eq!(heading("output_tokens_per_second_p50"), "Tokens/s p50");
        assert_eq!(heading("e2e_latency_p99"), "E2E p99 (ms)");
        assert_eq!(heading("something_new_p7x"), "something_new_p7x");
    }

    #[test]
    fn columns_fall_in_the_latency_speed_and_outcome_tables() {
        assert_eq!(group("ttfo_p95"), Group::Latency);
        assert_eq!(group("e2e_latency_p50"), Group::Latency);
        assert_eq!(group("output_tokens_per_second_p99"), Group::Speed);
        assert_eq!(group("pre_answer_reasoning_tokens_p50"), Group::Speed);
        assert_eq!(group("reasoning_emission_rate"), Group::Speed);
        assert_eq!(group("http_429_rate"), Group::Outcome);
        assert_eq!(group("task_success_rate"), Group::Outcome);
    }
}
