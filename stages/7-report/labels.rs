//! Names a person reads: a provider's label from the provider table, the headings of the
//! metric columns (`TTFA p50 (ms)`, `Tokens/s p95 floor`), and which of the three tables
//! (latency, speed, outcomes) each column belongs in, all from the metric catalogue
//! (`inferbench_contract::metrics`). The machine names stay the keys of `metrics.json`; the
//! report ends with the mapping between the two.
use inferbench_contract::metrics::{self, Aspect};
use inferbench_inputs::providers::ProviderTable;

/// A provider's label from the provider table, or its name when the table has none.
pub fn label<'a>(provider: &'a str, table: &'a ProviderTable) -> &'a str {
    table.get(provider).map_or(provider, |p| p.label())
}

/// The table a metric column is shown in: the catalogue's aspect of its metric.
pub type Group = Aspect;

/// The three tables, in the report's order.
pub const GROUPS: [Group; 3] = [Aspect::Latency, Aspect::Speed, Aspect::Outcome];

/// The table's title.
pub fn title(group: Group) -> &'static str {
    match group {
        Aspect::Latency => "Latency",
        Aspect::Speed => "Speed and reasoning",
        Aspect::Outcome => "Outcomes",
    }
}

/// The heading of a metric column. A column the catalogue does not know keeps its machine
/// name, so a spec asking for a new column still gets it shown.
pub fn heading(column: &str) -> String {
    metrics::column(column).map_or_else(|| column.to_string(), |c| c.heading())
}

/// The table a metric column belongs in (the outcomes table for a column the catalogue does
/// not know).
pub fn group(column: &str) -> Group {
    metrics::column(column).map_or(Aspect::Outcome, |c| c.metric.aspect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::metrics::{E2E_LATENCY, OUTPUT_TOKENS_PER_SECOND, TTFA};

    #[test]
    fn every_required_column_of_the_reference_spec_has_a_readable_heading() {
        for column in inferbench_inputs::spec::metric_columns() {
            let h = heading(&column);
            assert_ne!(h, column, "{column} has no heading");
            assert!(!h.contains('_'), "{h}");
        }
        assert_eq!(heading(&TTFA.at(50).key()), "TTFA p50 (ms)");
        assert_eq!(heading(&OUTPUT_TOKENS_PER_SECOND.at(95).key()), "Tokens/s p95 floor");
        assert_eq!(heading(&OUTPUT_TOKENS_PER_SECOND.at(50).key()), "Tokens/s p50");
        assert_eq!(heading(&E2E_LATENCY.at(99).key()), "E2E p99 (ms)");
        assert_eq!(heading("something_new_p7x"), "something_new_p7x");
    }

    #[test]
    fn columns_fall_in_the_latency_speed_and_outcome_tables() {
        use inferbench_contract::metrics::{PRE_ANSWER_REASONING_TOKENS, REASONING_EMISSION, TASK_SUCCESS, TTFO};
        let group = |c: metrics::Column| group(&c.key());
        assert_eq!(group(TTFO.at(95)), Aspect::Latency);
        assert_eq!(group(E2E_LATENCY.at(50)), Aspect::Latency);
        assert_eq!(group(OUTPUT_TOKENS_PER_SECOND.at(99)), Aspect::Speed);
        assert_eq!(group(PRE_ANSWER_REASONING_TOKENS.at(50)), Aspect::Speed);
        assert_eq!(group(REASONING_EMISSION.value()), Aspect::Speed);
        assert_eq!(group(metrics::HTTP_429.value()), Aspect::Outcome);
        assert_eq!(group(TASK_SUCCESS.value()), Aspect::Outcome);
    }
}
