//! The page against a fixture run: the golden run of `tests/golden/own` (25 providers, every
//! outcome class), whose metrics, comparisons and responses are checked in.
use super::*;
use crate::responses::Responses;
use crate::sample;
use inferbench_contract::tables::ResponseRow;
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use std::path::Path;

fn golden(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/own").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The golden run's responses.
fn rows() -> Vec<ResponseRow> {
    golden("expected/responses.jsonl").lines().map(|l| serde_json::from_str::<ResponseRow>(l).unwrap()).collect()
}

/// The golden run as the report's inputs, with its metrics and comparisons as JSON.
fn fixture() -> (ReportInputs, Doc, Doc) {
    let metrics = Doc::parse(&golden("expected/metrics.json")).unwrap();
    let comparisons = Doc::parse(&golden("expected/comparisons.json")).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/own/pipeline");
    let spec = Spec::load(&dir.join("spec.yaml")).unwrap();
    let mut inputs = sample::inputs();
    inputs.table = ProviderTable::load(&spec.providers_path, &spec).unwrap();
    inputs.spec = spec;
    inputs.metrics = serde_json::from_value(metrics.value.clone()).unwrap();
    inputs.comparisons = serde_json::from_value(comparisons.value.clone()).unwrap();
    inputs.responses = Responses::from_rows(&rows());
    (inputs, metrics, comparisons)
}

fn page() -> String {
    let (inputs, m, c) = fixture();
    render(&inputs, &m, &c)
}

/// Every value of `attribute="…"` in `html`, with the value of `next="…"` that follows it.
fn marked(html: &str, attribute: &str, next: &str) -> Vec<(String, Option<String>)> {
    let open = format!(" {attribute}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&open) {
        rest = &rest[at + open.len()..];
        let end = rest.find('"').unwrap();
        let value = unescape(&rest[..end]);
        let after = &rest[end + 1..];
        let follow = format!(" {next}=\"");
        let paired = after.starts_with(&follow).then(|| {
            let v = &after[follow.len()..];
            unescape(&v[..v.find('"').unwrap()])
        });
        out.push((value, paired));
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

#[test]
fn every_metric_carries_its_pointer_and_equals_metrics_json() {
    let html = page();
    let (_, metrics, comparisons) = fixture();
    let texts = [golden("expected/metrics.json"), golden("expected/comparisons.json")];
    for ((attribute, doc), raw) in
        [("data-metric", &metrics.value), ("data-comparison", &comparisons.value)].into_iter().zip(texts)
    {
        let marks = marked(&html, attribute, "data-value");
        assert!(marks.len() > 300, "{attribute}: {}", marks.len());
        for (pointer, value) in marks {
            let exact = doc.pointer(&pointer).unwrap_or_else(|| panic!("{pointer}: not in the document"));
            assert!(exact.is_number() || exact.is_null(), "{pointer}: {exact}");
            let value = value.unwrap_or_else(|| panic!("{pointer}: no data-value"));
            // The same number, and spelled as the file spells it under that key.
            assert_eq!(&serde_json::from_str::<Value>(&value).unwrap(), exact, "{pointer}");
            let key = pointer.rsplit('/').next().unwrap();
            let spelled = [format!("\"{key}\": {value}"), format!("\"{key}\":{value}")];
            let listed = key.parse::<usize>().is_ok();
            assert!(
                listed || spelled.iter().any(|s| raw.contains(&format!("{s},")) || raw.contains(&format!("{s}\n"))),
                "{pointer}: {value}"
            );
        }
    }
    let metrics = metrics.value;
    let comparisons = comparisons.value;
    // The figures readers look for are all there, each provider's, with their pointers.
    for i in 0..metrics["combined_provider_metrics"].as_array().unwrap().len() {
        use inferbench_contract::metrics::{E2E_LATENCY, FAILURE, OUTPUT_TOKENS_PER_SECOND, TASK_SUCCESS, TTFA};
        let figures = [
            TTFA.at(50),
            TTFA.at(95),
            E2E_LATENCY.at(99),
            OUTPUT_TOKENS_PER_SECOND.at(50),
            OUTPUT_TOKENS_PER_SECOND.at(95),
            OUTPUT_TOKENS_PER_SECOND.at(99),
            TASK_SUCCESS.value(),
            FAILURE.value(),
        ];
        let others = ["http_429_count", "truncated_count", "cost/total_cost_usd"].map(String::from);
        for key in figures.iter().map(|c| c.key()).chain(others) {
            assert!(html.contains(&format!("data-metric=\"/combined_provider_metrics/{i}/{key}\"")), "{i} {key}");
        }
    }
    for i in 0..comparisons["pairwise_e2e_latency_differences"].as_array().unwrap().len() {
        assert!(html.contains(&format!("data-comparison=\"/pairwise_e2e_latency_differences/{i}/difference_p50_ms\"")));
    }
}

#[test]
fn nulls_are_dashes_and_unknown_costs_are_unknown() {
    let v = Value::Null;
    assert_eq!(
        figure("data-metric", "/x", Some(&v), Some("null"), Kind::Ms),
        "<span data-metric=\"/x\" data-value=\"null\">—</span>"
    );
    assert!(figure("data-metric", "/c", Some(&v), Some("null"), Kind::Usd).ends_with(">unknown</span>"));
    let one: Value = serde_json::from_str("1.0").unwrap();
    assert_eq!(
        figure("data-metric", "/r", Some(&one), Some("1.0"), Kind::Rate),
        "<span data-metric=\"/r\" data-value=\"1.0\">100.00%</span>"
    );
    assert!(page().contains("data-value=\"null\">unknown</span>"), "the golden run reports no usage for some");
    assert_eq!(format_number(7110.2, Kind::Ms), "7.11 s");
    assert_eq!(format_number(14_970.0, Kind::Ms), "15.0 s");
    assert_eq!(format_number(-28.8, Kind::DiffMs), "-0.029 s");
    assert_eq!(format_number(1500.25, Kind::DiffMs), "+1.50 s");
    assert_eq!(format_number(269.31, Kind::Tps), "269.3 tok/s");
    assert_eq!(format_number(1234.0, Kind::Count), "1,234");
}

#[test]
fn the_page_keeps_the_machine_checkable_contract() {
    let html = page();
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\" data-report-ready=\"0\">"));
    for name in [
        "leaderboard",
        "tokens-per-second",
        "e2e-tail",
        "ttfa",
        "accuracy-failures",
        "pair",
        "distributions",
        "speed-vs-start",
        "outcomes",
        "timeline",
        "pair-differences",
        "failure-log",
        "provenance",
    ] {
        let open = format!("<section class=\"view\" id=\"view-{name}\" data-view=\"{name}\"><h2>");
        let at = html.find(&open).unwrap_or_else(|| panic!("view {name}"));
        let section = &html[at..at + html[at..].find("</section>").unwrap()];
        assert!(section.contains("</h2><p class=\"how-to-read\">"), "{name}");
        assert!(section.contains("<table>") || section.contains("<svg "), "{name}");
    }
    // Each chart lists its series, and each has a drawn element of its own inside the chart.
    let mut charts = 0;
    for (at, _) in html.match_indices("<svg ") {
        let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
        let series = marked(svg, "data-series", "").into_iter().next().unwrap().0;
        assert!(svg.contains(" data-chart=\""));
        for s in series.split(',').filter(|s| !s.is_empty()) {
            let mark = format!("data-series=\"{}\"", inferbench_present::html::attr(s));
            assert!(svg.matches(&mark).count() >= 1 && svg[1..].contains(&mark), "{s} in {}", &svg[..120]);
        }
        charts += 1;
    }
    assert!(charts > 12 + 4, "{charts}");
    assert!(html.contains("<select id=\"pair-select\">") && html.contains("<select id=\"scope-select\">"));
    let shown_pairs = html.matches("data-pair=\"").count() - html.matches("hidden data-pair").count();
    assert!(shown_pairs > 0);
    // One pair's content visible at first, the others hidden.
    let visible: Vec<_> = marked(&html, "data-pair", "").into_iter().map(|(v, _)| v).collect();
    let hidden = html.matches("\" hidden>").count();
    assert!(visible.len() > 3 && hidden > 3);
    assert!(html.contains("setAttribute(\"data-report-ready\", \"1\")") && html.contains("window.onerror"));
}

#[test]
fn the_page_fetches_nothing() {
    let html = page().to_lowercase();
    for banned in ["@import", "url(", "<link", "<iframe", "<img"] {
        assert!(!html.contains(banned), "{banned}");
    }
    for attribute in ["src", "href", "action", "srcset", "xlink:href"] {
        for quote in ["\"", "'", ""] {
            for target in ["http:", "https:", "//"] {
                let bad = format!("{attribute}={quote}{target}");
                assert!(!html.contains(&bad), "{bad}");
            }
        }
    }
    // The only URL is the SVG namespace, which is a name, not a fetch.
    let urls: Vec<_> =
        html.match_indices("://").map(|(i, _)| &html[i.saturating_sub(4)..(i + 22).min(html.len())]).collect();
    assert!(urls.iter().all(|u| *u == "http://www.w3.org/2000/svg"), "{urls:?}");
}

#[test]
fn pair_histograms_use_the_aggregate_samples() {
    let (inputs, _, comparisons) = fixture();
    let mut checked = 0;
    for row in comparisons.value["pairwise_e2e_latency_differences"].as_array().unwrap() {
        let (a, b) = (row["provider_a"].as_str().unwrap(), row["provider_b"].as_str().unwrap());
        let mut diffs = charts::pairs::E2eByRound::new(&inputs.responses).differences(&inputs.responses, a, b);
        if row["eligible_comparison"] != true {
            continue;
        }
        diffs.sort_by(f64::total_cmp);
        assert_eq!(diffs.len() as i64, row["paired_count"].as_i64().unwrap(), "{a}|{b}");
        if !diffs.is_empty() {
            // Nearest-rank p50, as ib-aggregate computes it. The fixture's times went through
            // JSON text (serde_json's parser may land an ulp away), hence the tolerance.
            let median = diffs[(diffs.len() * 50).div_ceil(100) - 1];
            let expected = row["difference_p50_ms"].as_f64().unwrap();
            assert!((median - expected).abs() <= 1e-9 * expected.abs().max(1.0), "{a}|{b}: {median} {expected}");
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked}");
}

#[test]
fn distribution_curves_count_the_samples_metrics_json_counts() {
    let (_, metrics, _) = fixture();
    let responses = rows();
    for row in metrics.value["combined_provider_metrics"].as_array().unwrap() {
        let provider = row["provider"].as_str().unwrap();
        let of = |f: fn(&ResponseRow) -> Option<f64>| {
            responses.iter().filter(|r| r.provider == provider).filter_map(f).count() as i64
        };
        assert_eq!(of(|r| r.ttfa_ms), row["ttfa_ms"]["population_count"].as_i64().unwrap(), "{provider}");
        assert_eq!(of(|r| r.e2e_latency_ms), row["e2e_latency_ms"]["population_count"].as_i64().unwrap());
        assert_eq!(
            of(|r| r.output_tokens_per_second),
            row["output_tokens_per_second"]["population_count"].as_i64().unwrap()
        );
    }
}

#[test]
fn the_page_is_reproducible() {
    assert_eq!(page(), page());
}

/// A full-size run: 10 providers × 600 rounds (the golden run's first ten providers and
/// their 45 pairs), every response complete, stays well under 3 MB.
#[test]
fn a_full_size_run_stays_small() {
    let (mut inputs, metrics, comparisons) = fixture();
    let providers: Vec<String> = metrics.value["combined_provider_metrics"]
        .as_array()
        .unwrap()
        .iter()
        .take(10)
        .map(|r| r["provider"].as_str().unwrap().to_string())
        .collect();
    let ours = |v: &Value| providers.iter().any(|p| v == p.as_str());
    let mut m = metrics.value.clone();
    for list in ["combined_provider_metrics", "task_family_metrics"] {
        m[list].as_array_mut().unwrap().retain(|r| ours(&r["provider"]));
    }
    let mut c = comparisons.value.clone();
    c["pairwise_e2e_latency_differences"]
        .as_array_mut()
        .unwrap()
        .retain(|r| ours(&r["provider_a"]) && ours(&r["provider_b"]));
    assert_eq!(c["pairwise_e2e_latency_differences"].as_array().unwrap().len(), 45);
    let (metrics, comparisons) = (
        Doc::parse(&serde_json::to_string_pretty(&m).unwrap()).unwrap(),
        Doc::parse(&serde_json::to_string_pretty(&c).unwrap()).unwrap(),
    );
    let template = rows().into_iter().find(|r| r.complete).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut responses = Vec::new();
    for round in 0..600 {
        for p in &providers {
            let mut r = template.clone();
            r.provider = p.clone();
            r.round_index = round;
            r.round_id = format!("round-{round:04}");
            r.request_id = format!("req-{round}-{p}");
            r.ttfa_ms = Some(200.0 + 5000.0 * next());
            r.e2e_latency_ms = Some(r.ttfa_ms.unwrap() + 3000.0 * next());
            r.output_tokens_per_second = Some(20.0 + 300.0 * next());
            responses.push(r);
        }
    }
    inputs.responses = Responses::from_rows(&responses);
    let started = std::time::Instant::now();
    let html = render(&inputs, &metrics, &comparisons);
    eprintln!("full-size page: {} bytes in {:?}", html.len(), started.elapsed());
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
}

/// The bundled sample (three providers, one not comparable, no responses at all) renders a
/// whole page: empty charts say so and still keep the contract.
#[test]
fn a_run_without_responses_still_renders_every_view() {
    let inputs = sample::inputs();
    let text = |v: Value| serde_json::to_string_pretty(&v).unwrap();
    let metrics = Doc::parse(&text(sample::metrics())).unwrap();
    let comparisons = Doc::parse(&text(sample::comparisons())).unwrap();
    let html = render(&inputs, &metrics, &comparisons);
    assert_eq!(html.matches("<section class=\"view\"").count(), 13);
    for (at, _) in html.match_indices("<svg ") {
        let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
        let series = marked(svg, "data-series", "").into_iter().next().unwrap().0;
        for s in series.split(',').filter(|s| !s.is_empty()) {
            assert!(svg[1..].contains(&format!("data-series=\"{}\"", inferbench_present::html::attr(s))), "{s}");
        }
    }
    assert!(html.contains("No paired rounds to compare") && html.contains("0 failed request(s) of 0 responses"));
    assert!(html.contains("data-metric=\"/combined_provider_metrics/2/rank\" data-value=\"null\">—</span>"));
}

#[test]
fn a_log_axis_never_spans_more_than_twelve_decades() {
    let (mut inputs, metrics, comparisons) = fixture();
    let mut responses = rows();
    for r in &mut responses {
        if r.ttfa_ms.is_some() {
            r.ttfa_ms = Some(1e-300);
        }
    }
    inputs.responses = Responses::from_rows(&responses);
    let html = render(&inputs, &metrics, &comparisons);
    let at = html.find("data-chart=\"distribution-ttfa\"").unwrap();
    let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
    assert!(svg.matches("class=\"grid\"").count() < 30, "{}", svg.matches("class=\"grid\"").count());
}

/// A run of `providers` providers × `rounds` rounds (every pair compared, one request in
/// seven failed), made from the golden run's rows. The sizes default to more providers than
/// the charts draw and more rounds than the timeline has columns; `IB_REPORT_PROVIDERS` and
/// `IB_REPORT_ROUNDS` scale it up to measure (e.g. 1,000 × 1,000).
fn scaled(providers: usize, rounds: usize) -> (ReportInputs, Doc, Doc) {
    let (mut inputs, metrics, comparisons) = fixture();
    let names: Vec<String> = (0..providers).map(|i| format!("p{i:04}")).collect();
    let mut m = metrics.value.clone();
    let pooled = m["combined_provider_metrics"][0].clone();
    let family: Vec<Value> = m["task_family_metrics"].as_array().unwrap().iter().take(3).cloned().collect();
    m["combined_provider_metrics"] = names
        .iter()
        .map(|n| {
            let mut r = pooled.clone();
            r["provider"] = n.as_str().into();
            r
        })
        .collect();
    m["task_family_metrics"] = names
        .iter()
        .flat_map(|n| {
            family.iter().map(move |f| {
                let mut r = f.clone();
                r["provider"] = n.as_str().into();
                r
            })
        })
        .collect();
    m["ranking"] = names.iter().take(2).map(|n| Value::from(n.as_str())).collect();
    let mut c = comparisons.value.clone();
    for list in ["provider_eligibility", "fastest_provider_wins"] {
        let template = c[list][0].clone();
        c[list] = names
            .iter()
            .map(|n| {
                let mut r = template.clone();
                r["provider"] = n.as_str().into();
                r
            })
            .collect();
    }
    let template = c["pairwise_e2e_latency_differences"][0].clone();
    let mut pairs = Vec::with_capacity(providers * providers.saturating_sub(1) / 2);
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            let mut r = template.clone();
            r["provider_a"] = a.as_str().into();
            r["provider_b"] = b.as_str().into();
            pairs.push(r);
        }
    }
    c["pairwise_e2e_latency_differences"] = pairs.into();
    // The report reads none of the text columns: left empty, a million rows fit in memory.
    let slim = |mut r: ResponseRow| {
        (r.answer, r.reasoning, r.error_body) = (String::new(), String::new(), None);
        r
    };
    let template = slim(rows().into_iter().find(|r| r.complete).unwrap());
    let failed = slim(rows().into_iter().find(|r| r.operational_outcome.is_failure()).unwrap());
    let mut responses = Vec::with_capacity(providers * rounds);
    for round in 0..rounds {
        for (k, p) in names.iter().enumerate() {
            let mut r = if (round * providers + k) % 7 == 3 { failed.clone() } else { template.clone() };
            r.provider = p.clone();
            r.round_index = round as i64;
            r.request_id = format!("req-{round}-{p}");
            r.e2e_latency_ms = r.e2e_latency_ms.map(|e| e + (round % 97) as f64);
            responses.push(r);
        }
    }
    inputs.responses = Responses::from_rows(&responses);
    drop(responses);
    let started = std::time::Instant::now();
    let text = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    let (metrics, comparisons) = (Doc::parse(&text(&m)).unwrap(), Doc::parse(&text(&c)).unwrap());
    inputs.metrics = serde_json::from_value(m).unwrap();
    inputs.comparisons = serde_json::from_value(c).unwrap();
    eprintln!("scaled inputs: documents parsed in {:?}", started.elapsed());
    (inputs, metrics, comparisons)
}

fn env_size(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Many providers and many rounds: the page and report.md stay bounded (per-provider charts
/// draw `CHART_PROVIDERS`, the pair views `SHOWN_PAIRS`, the timeline `TIMELINE_BINS` columns,
/// the failure logs `FAILURE_LOG_CAP` rows), and the tables still list every provider.
#[test]
fn many_providers_and_rounds_give_a_bounded_page() {
    let (providers, rounds) = (env_size("IB_REPORT_PROVIDERS", 40), env_size("IB_REPORT_ROUNDS", 1500));
    let (inputs, metrics, comparisons) = scaled(providers, rounds);
    let started = std::time::Instant::now();
    let html = render(&inputs, &metrics, &comparisons);
    let md = crate::render::render(&inputs);
    eprintln!(
        "{providers} providers × {rounds} rounds: report.html {} bytes, report.md {} bytes, in {:?}",
        html.len(),
        md.len(),
        started.elapsed()
    );
    for section in html.split("<section class=\"view\"").skip(1) {
        eprintln!("  {:>9} bytes {}", section.len(), &section[..section.find('>').unwrap_or(0).min(60)]);
    }
    assert_eq!(charts::timeline::timeline_bins(600, 10), 600, "a full run keeps a column per round");
    let pairs = html.matches("<option value=\"p0").count();
    assert_eq!(pairs, SHOWN_PAIRS.min(providers * (providers - 1) / 2), "pair options");
    let at = html.find("data-chart=\"timeline\"").unwrap();
    let timeline = &html[at..at + html[at..].find("</svg>").unwrap()];
    let rows = CHART_PROVIDERS.min(providers);
    let bins = charts::timeline::timeline_bins(rounds, rows);
    assert!(bins < rounds && bins * rows <= charts::timeline::TIMELINE_CELLS, "{bins}");
    assert_eq!(timeline.matches("<rect").count(), bins * rows);
    assert!(html.contains(&format!(
        "{} rounds, in the order they ran.",
        inferbench_present::number::grouped(rounds as f64, 0)
    )));
    let failed = (0..providers * rounds).filter(|i| i % 7 == 3).count();
    assert_eq!(inputs.responses.failed_total, failed);
    let listed = html[html.find("id=\"view-failure-log\"").unwrap()..].matches("<code>req-").count();
    assert_eq!(listed, crate::responses::FAILURE_LOG_CAP.min(failed));
    assert!(md.contains(&format!("the first {} in the order they ran are listed", crate::responses::FAILURE_LOG_CAP)));
    assert!(md.contains("WHERE operational_outcome <> '2xx'"));
    let all_pairs = providers * (providers - 1) / 2;
    let md_pairs = md.lines().filter(|l| l.starts_with("| p0") && l.ends_with("| paired |")).count();
    assert_eq!(md_pairs, SHOWN_PAIRS.min(all_pairs), "report.md's pair rows");
    if all_pairs > SHOWN_PAIRS {
        assert!(md.contains(&format!(
            "of {} pairs; `pairwise_e2e_latency_differences`",
            inferbench_present::number::grouped(all_pairs as f64, 0)
        )));
    }
    // The leaderboard lists every provider.
    for i in 0..providers {
        let key = inferbench_contract::metrics::RANKING;
        assert!(html.contains(&format!("data-metric=\"/combined_provider_metrics/{i}/{key}\"")), "{i}");
    }
    let per_provider = 40_000;
    assert!(html.len() < 1_500_000 + per_provider * providers, "{} bytes", html.len());
    assert!(md.len() < 200_000 + 3_000 * providers, "{} bytes", md.len());
}
