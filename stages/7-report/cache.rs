//! What the report says about prompt caches: a sentence when the run sent a nonce with every
//! round (`inference.cache_busting`), and the prompt-cache probe's section
//! (`inference.cache_probe`, `metrics.json`'s `cache_probe`), in report.md and report.html
//! alike (report.html's view is `html/cache.rs`). A run that asked for neither reads exactly
//! as before.
use crate::format::figure;
use crate::labels::label;
use inferbench_contract::documents::{CacheProbeMetrics, CacheProbeVerdict, PercentileValue};
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use inferbench_present::markdown::Table;
use inferbench_present::number::{self, grouped, Between};

/// The sentence on cache busting, when it is on.
pub fn busting(spec: &Spec) -> Option<&'static str> {
    spec.inference.cache.busting.then_some(
        "Cache busting is on (`inference.cache_busting`): every round's prompts began with a nonce drawn afresh \
         for this run, the same for every provider of the round, so no provider answered from a prompt cache an \
         earlier run had warmed.",
    )
}

/// The section's heading.
pub const HEADING: &str = "Prompt cache probe";

/// The columns of the probe's table in report.md, figures in ms.
const HEADERS: [&str; 6] =
    ["Provider", "Pairs", "TTFA p50 first (ms)", "TTFA p50 repeat (ms)", "Difference p50 (ms)", "Verdict"];

/// How to read the table.
pub fn how_to_read(probe: &CacheProbeMetrics) -> String {
    format!(
        "{} probe round(s) were sent twice after the run's own rounds, the repeat with the same bytes (the pair's nonce \
         included) once every provider's first send had ended. A provider that caches prompts answers the repeat \
         sooner. The difference is TTFA(first) − TTFA(repeat) over the rounds where both sends have a TTFA (pairs), \
         as a median with its 95 % order-statistic interval in brackets († under 6 pairs: no interval reaches 95 %); \
         the verdict is \"faster repeat\" when the whole interval lies above 0, \"slower repeat\" when below, and \
         \"no difference shown\" when it holds 0. The probe's requests count in no other figure of this report.",
        probe.rounds
    )
}

/// A verdict as the report words it.
pub fn verdict(v: CacheProbeVerdict) -> &'static str {
    match v {
        CacheProbeVerdict::FasterRepeat => "faster repeat",
        CacheProbeVerdict::SlowerRepeat => "slower repeat",
        CacheProbeVerdict::NoDifferenceShown => "no difference shown",
        CacheProbeVerdict::TooFewPairs => "too few pairs",
    }
}

/// `297.0 [270.0–333.0]`, `150.0†`, or `unavailable`.
fn with_interval(p: &PercentileValue) -> String {
    let shown = figure(p.value);
    match (&p.interval, p.value) {
        (Some(i), _) => {
            format!("{shown} {}", number::interval(&grouped(i.lower, 1), &grouped(i.upper, 1), Between::EnDash))
        }
        (None, Some(_)) => format!("{shown}†"),
        (None, None) => shown,
    }
}

/// report.md's section: a finding, the table, how to read it.
pub fn section(probe: &CacheProbeMetrics, table: &ProviderTable) -> Vec<String> {
    let mut t = Table::new(&HEADERS);
    for p in &probe.providers {
        t.row(vec![
            label(&p.provider, table).to_string(),
            p.paired_count.to_string(),
            figure(p.first_ttfa_p50_ms),
            figure(p.repeat_ttfa_p50_ms),
            with_interval(&p.ttfa_difference_ms),
            verdict(p.verdict).to_string(),
        ]);
    }
    let faster: Vec<&str> = probe
        .providers
        .iter()
        .filter(|p| p.verdict == CacheProbeVerdict::FasterRepeat)
        .map(|p| label(&p.provider, table))
        .collect();
    let finding = match faster.as_slice() {
        [] => "No provider answered the repeated prompts measurably sooner.".to_string(),
        names => format!("Answered the repeated prompts measurably sooner: {}.", names.join(", ")),
    };
    let mut lines = vec![format!("## {HEADING}"), String::new(), finding, String::new()];
    lines.extend(t.lines());
    lines.extend([String::new(), how_to_read(probe)]);
    lines
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sample;
    use inferbench_contract::documents::{CacheProbeProvider, PercentileInterval};

    fn provider(name: &str, pairs: i64, difference: PercentileValue, verdict: CacheProbeVerdict) -> CacheProbeProvider {
        CacheProbeProvider {
            provider: name.into(),
            paired_count: pairs,
            unpaired_count: 8 - pairs,
            first_ttfa_p50_ms: Some(310.0),
            repeat_ttfa_p50_ms: Some(31.25),
            ttfa_difference_ms: difference,
            verdict,
        }
    }

    pub(crate) fn probe() -> CacheProbeMetrics {
        let interval = PercentileInterval { lower: 270.0, upper: 1333.5, lower_rank: 1, upper_rank: 8, coverage: 0.99 };
        let with = PercentileValue { value: Some(297.0), rank: Some(4), interval: Some(interval), note: None };
        let few = PercentileValue { value: Some(-2.0), rank: Some(3), interval: None, note: Some("p50 of 5".into()) };
        CacheProbeMetrics {
            rounds: 8,
            method: "m".into(),
            providers: vec![
                provider("a", 8, with, CacheProbeVerdict::FasterRepeat),
                provider("b", 5, few, CacheProbeVerdict::TooFewPairs),
                provider("c", 0, PercentileValue::NONE, CacheProbeVerdict::TooFewPairs),
            ],
        }
    }

    #[test]
    fn the_section_shows_each_providers_pairs_medians_difference_and_verdict() {
        let lines = section(&probe(), &sample::provider_table());
        assert_eq!(lines[0], "## Prompt cache probe");
        assert_eq!(
            lines[2],
            format!("Answered the repeated prompts measurably sooner: {}.", label("a", &sample::provider_table()))
        );
        let rows: Vec<&String> = lines.iter().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(rows.len(), 1 + 3, "{lines:#?}");
        assert!(rows[1].ends_with("| 8 | 310.0 | 31.2 | 297.0 [270.0–1,333.5] | faster repeat |"), "{}", rows[1]);
        assert!(rows[2].ends_with("| 5 | 310.0 | 31.2 | -2.0† | too few pairs |"), "{}", rows[2]);
        assert!(rows[3].ends_with("| 0 | 310.0 | 31.2 | unavailable | too few pairs |"), "{}", rows[3]);
        assert!(lines.last().unwrap().starts_with("8 probe round(s) were sent twice"));
    }

    #[test]
    fn the_report_has_the_section_and_the_busting_sentence_only_when_the_run_has_them() {
        let mut inputs = sample::inputs();
        let plain = crate::render::render(&inputs);
        assert!(!plain.contains("Prompt cache probe") && !plain.contains("Cache busting"));
        inputs.metrics.cache_probe = Some(probe());
        inputs.spec.inference.cache.busting = true;
        let text = crate::render::render(&inputs);
        assert!(text.contains("\n\n## Prompt cache probe\n\n"), "{text}");
        assert!(text.contains(" Cache busting is on (`inference.cache_busting`)"), "{text}");
    }
}
