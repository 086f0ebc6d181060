//! The search's record: `search.json` (the contract's `SearchDocument`) and `report.md`,
//! rewritten from the probes after every probe, so either shows how far a running search got.
use crate::rule;
use anyhow::Result;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::documents::{Probe, Provenance, SearchDocument, SearchStatus, Verdict, SEARCH_VERSION};
use inferbench_inputs::spec::CapacitySearch;
use inferbench_present::markdown::{Align, Table};
use inferbench_present::number::{self, DASH};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const SPEC_INPUT: &str = "spec.yaml";

pub fn write(dir: &Path, spec: &Path, search: &CapacitySearch, probes: &[Probe], stopped: &str) -> Result<()> {
    let mut inputs = BTreeMap::from([(SPEC_INPUT.to_string(), file_sha256(spec)?)]);
    for probe in probes {
        let metrics = format!("{}/metrics.json", probe.run);
        inputs.insert(metrics.clone(), file_sha256(&dir.join(&metrics))?);
    }
    let goodput_target = spec_goodput_target(spec)?;
    let doc = SearchDocument {
        version: SEARCH_VERSION.to_string(),
        provenance: Provenance::new(&inputs),
        min_rate: search.min_rate,
        max_rate: search.max_rate,
        tolerance: search.tolerance,
        max_probes: search.max_probes,
        goodput_target,
        rule: rule::RULE.iter().map(|s| s.to_string()).collect(),
        probes: probes.to_vec(),
        results: rule::results(search, probes),
        stopped: stopped.to_string(),
    };
    inferbench_store::atomic::write_json(&dir.join("search.json"), &doc)?;
    inferbench_store::atomic::write(&dir.join("report.md"), markdown(&doc).as_bytes())?;
    Ok(())
}

fn spec_goodput_target(spec: &Path) -> Result<f64> {
    let spec = inferbench_inputs::spec::Spec::load(spec)?;
    Ok(spec.load.map(|l| l.objectives.goodput_target).unwrap_or(0.95))
}

/// One line per provider: what was found.
pub fn summary(search: &CapacitySearch, probes: &[Probe]) -> String {
    rule::results(search, probes)
        .iter()
        .map(|r| format!("{}: {}", r.provider, status_words(r.status, r.holds_at, r.fails_at)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn status_words(status: SearchStatus, holds: Option<f64>, fails: Option<f64>) -> String {
    let rate = |r: Option<f64>| r.map(|r| format!("{r} req/s")).unwrap_or_else(|| DASH.into());
    match status {
        SearchStatus::Found => format!("capacity {} (holds there, fails at {})", rate(holds), rate(fails)),
        SearchStatus::BelowMinRate => format!("below the range: fails already at {}", rate(fails)),
        SearchStatus::AtLeastMaxRate => format!("at least {}: holds at the top of the range", rate(holds)),
        SearchStatus::ProbesExhausted => format!("not narrowed: holds at {}, fails at {}", rate(holds), rate(fails)),
        SearchStatus::Stopped => format!("stopped: holds at {}, fails at {}", rate(holds), rate(fails)),
    }
}

fn markdown(doc: &SearchDocument) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Capacity search\n");
    let _ = writeln!(
        md,
        "The highest rate (requests per second per provider) at which at least {} % of a step's requests meet \
         every objective, searched from {} to {} req/s to within {} %, in at most {} probes. {}.\n",
        number::plain(doc.goodput_target * 100.0, 0),
        doc.min_rate,
        doc.max_rate,
        number::plain(doc.tolerance * 100.0, 0),
        doc.max_probes,
        capitalised(&doc.stopped)
    );
    let _ = writeln!(md, "{}", results(doc).lines().join("\n"));
    let _ = writeln!(md, "\n## Probes, in the order they ran\n");
    let _ = writeln!(md, "Each probe is a load run of its own; its report is `<probe>/report.md`.\n");
    let _ = writeln!(md, "{}", probes(doc).lines().join("\n"));
    let _ = writeln!(md, "\n## The rule\n");
    for line in &doc.rule {
        let _ = writeln!(md, "- {line}");
    }
    md
}

/// What the search found for each provider.
fn results(doc: &SearchDocument) -> Table {
    let mut t = Table::new(&["provider", "capacity (req/s)", "fails at (req/s)", "status"])
        .aligned(&[Align::Left, Align::Right, Align::Right, Align::Left])
        .without_placeholder();
    let rate = |x: Option<f64>| number::or(x, DASH, |x| x.to_string());
    for r in &doc.results {
        t.row(vec![
            r.provider.clone(),
            rate(r.holds_at),
            rate(r.fails_at),
            status_words(r.status, r.holds_at, r.fails_at),
        ]);
    }
    t
}

/// Each probe's verdict and figures for each provider, in the order the probes ran.
fn probes(doc: &SearchDocument) -> Table {
    use Align::{Left, Right};
    let mut t = Table::new(&[
        "probe",
        "rate (req/s)",
        "provider",
        "verdict",
        "goodput",
        "achieved (req/s)",
        "completed/s",
        "TTFT p99 (ms)",
        "E2E p99 (ms)",
    ])
    .aligned(&[Left, Right, Left, Left, Right, Right, Right, Right, Right])
    .without_placeholder();
    let ms = |x: Option<f64>| number::or(x, DASH, |x| number::plain(x, 1));
    for probe in &doc.probes {
        for v in &probe.providers {
            let verdict = match v.verdict {
                Verdict::Holds if v.client_bound.is_empty() => "holds".to_string(),
                Verdict::Holds => format!("holds, despite the client's {}", v.client_bound.join("; ")),
                Verdict::Fails if v.client_bound.is_empty() => "fails".to_string(),
                Verdict::Fails => format!("fails, even without the client's {}", v.client_bound.join("; ")),
                Verdict::ClientBound => format!("client-bound: {}", v.client_bound.join("; ")),
                Verdict::Unmeasured => "unmeasured".to_string(),
            };
            t.row(vec![
                format!("[{}]({}/report.md)", probe.run, probe.run),
                probe.rate.to_string(),
                v.provider.clone(),
                verdict,
                number::or(v.goodput, DASH, |g| format!("{} %", number::plain(g * 100.0, 1))),
                number::plain(v.achieved_rate, 2),
                number::plain(v.completed_per_second, 2),
                ms(v.ttft_p99_ms),
                ms(v.e2e_p99_ms),
            ]);
        }
    }
    t
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::documents::{ProbeVerdict, SearchResult};

    #[test]
    fn the_report_lists_results_and_probes_in_aligned_tables_no_cell_can_break() {
        let doc = SearchDocument {
            version: SEARCH_VERSION.to_string(),
            provenance: Provenance::new(&BTreeMap::new()),
            min_rate: 4.0,
            max_rate: 64.0,
            tolerance: 0.1,
            max_probes: 8,
            goodput_target: 0.95,
            rule: vec!["bisect".into()],
            probes: vec![Probe {
                run: "probes/01".into(),
                rate: 8.0,
                providers: vec![ProbeVerdict {
                    provider: "a|b".into(),
                    verdict: Verdict::Holds,
                    goodput: Some(0.975),
                    achieved_rate: 8.0,
                    completed_per_second: 7.5,
                    ttft_p99_ms: None,
                    e2e_p99_ms: Some(1234.56),
                    client_bound: vec![],
                }],
            }],
            results: vec![SearchResult {
                provider: "a|b".into(),
                status: SearchStatus::AtLeastMaxRate,
                holds_at: Some(8.0),
                fails_at: None,
            }],
            stopped: "every provider's capacity is bracketed".into(),
        };
        let md = markdown(&doc);
        assert!(md.contains("at least 95 % of a step's requests") && md.contains("to within 10 %"), "{md}");
        assert!(
            md.contains("|---|---:|---:|---|\n| a\\|b | 8 | — | at least 8 req/s: holds at the top of the range |\n")
        );
        assert!(
            md.contains("| [probes/01](probes/01/report.md) | 8 | a\\|b | holds | 97.5 % | 8.00 | 7.50 | — | 1234.6 |")
        );
        assert!(md.ends_with("## The rule\n\n- bisect\n"), "{md}");
    }
}
