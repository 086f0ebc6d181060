//! report.html's prompt-cache view: the words of `crate::cache`,
//! each figure marked with its pointer into `metrics.json`.
use super::{view, views, Kind, Page};
use crate::cache::{how_to_read, verdict, HEADING};
use inferbench_contract::documents::CacheProbeMetrics;
use inferbench_present::html::text;
use inferbench_present::number::{self, Between};

/// The probe's columns; its figures carry their unit.
const HEADERS: [&str; 6] = ["Provider", "Pairs", "TTFA p50 first", "TTFA p50 repeat", "Difference p50", "Verdict"];

/// report.html's view, its figures marked with their pointers in `metrics.json`.
pub fn html_view(page: &Page, probe: &CacheProbeMetrics) -> String {
    let rows: Vec<Vec<String>> = probe
        .providers
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let at = |key: &str| format!("/cache_probe/providers/{i}/{key}");
            let difference = match (&p.ttfa_difference_ms.interval, p.ttfa_difference_ms.value) {
                (Some(_), _) => {
                    let bound =
                        |key: &str| page.metric(&at(&format!("ttfa_difference_ms/interval/{key}")), Kind::DiffMs);
                    let bounds = number::interval(&bound("lower"), &bound("upper"), Between::EnDash);
                    format!("{} {bounds}", page.metric(&at("ttfa_difference_ms/value"), Kind::DiffMs))
                }
                (None, Some(_)) => format!("{}†", page.metric(&at("ttfa_difference_ms/value"), Kind::DiffMs)),
                (None, None) => page.metric(&at("ttfa_difference_ms/value"), Kind::DiffMs),
            };
            vec![
                text(page.label_of(&p.provider)),
                page.metric(&at("paired_count"), Kind::Count),
                page.metric(&at("first_ttfa_p50_ms"), Kind::Ms),
                page.metric(&at("repeat_ttfa_p50_ms"), Kind::Ms),
                difference,
                text(verdict(p.verdict)),
            ]
        })
        .collect();
    view("cache-probe", HEADING, &how_to_read(probe), &views::table("", &HEADERS, &rows))
}

#[cfg(test)]
mod tests {
    use crate::html::Doc;
    use crate::sample;

    #[test]
    fn the_page_has_the_view_and_the_busting_sentence_only_when_the_run_has_them() {
        let mut inputs = sample::inputs();
        inputs.metrics.cache_probe = Some(crate::cache::tests::probe());
        inputs.spec.inference.cache.busting = true;
        inputs.metrics_text = serde_json::to_string(&inputs.metrics).unwrap();
        let metrics = Doc::parse(&inputs.metrics_text).unwrap();
        let comparisons = Doc::parse(&inputs.comparisons_text).unwrap();
        let html = crate::html::render(&inputs, &metrics, &comparisons);
        assert!(html.contains("id=\"view-cache-probe\"") && html.contains("href=\"#view-cache-probe\""));
        assert!(html.contains("data-metric=\"/cache_probe/providers/0/ttfa_difference_ms/interval/lower\""));
        assert!(html.contains("<p>Cache busting is on (inference.cache_busting)"));
        inputs.metrics.cache_probe = None;
        inputs.spec.inference.cache.busting = false;
        inputs.metrics_text = serde_json::to_string(&inputs.metrics).unwrap();
        let metrics = Doc::parse(&inputs.metrics_text).unwrap();
        let html = crate::html::render(&inputs, &metrics, &comparisons);
        assert!(!html.contains("cache-probe") && !html.contains("Cache busting"));
    }
}
