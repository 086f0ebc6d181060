//! The search's record: `search.json` (the contract's `SearchDocument`) and `report.md`,
//! rewritten from the probes after every probe, so either shows how far a running search got.
use crate::rule;
use anyhow::Result;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::documents::{Probe, Provenance, SearchDocument, SearchStatus, Verdict, SEARCH_VERSION};
use inferbench_inputs::spec::CapacitySearch;
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
    let rate = |r: Option<f64>| r.map(|r| format!("{r} req/s")).unwrap_or_else(|| "—".into());
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
        "The highest rate (requests per second per provider) at which at least {:.0} % of a step's requests meet \
         every objective, searched from {} to {} req/s to within {:.0} %, in at most {} probes. {}.\n",
        doc.goodput_target * 100.0,
        doc.min_rate,
        doc.max_rate,
        doc.tolerance * 100.0,
        doc.max_probes,
        capitalised(&doc.stopped)
    );
    let _ = writeln!(md, "| provider | capacity (req/s) | fails at (req/s) | status |\n|---|---:|---:|---|");
    for r in &doc.results {
        let rate = |x: Option<f64>| x.map(|x| x.to_string()).unwrap_or_else(|| "—".into());
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            r.provider,
            rate(r.holds_at),
            rate(r.fails_at),
            status_words(r.status, r.holds_at, r.fails_at)
        );
    }
    let _ = writeln!(md, "\n## Probes, in the order they ran\n");
    let _ = writeln!(
        md,
        "Each probe is a load run of its own; its report is `<probe>/report.md`.\n\n\
         | probe | rate (req/s) | provider | verdict | goodput | achieved (req/s) | completed/s | TTFT p99 (ms) | E2E p99 (ms) |\n\
         |---|---:|---|---|---:|---:|---:|---:|---:|"
    );
    let ms = |x: Option<f64>| x.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into());
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
            let _ = writeln!(
                md,
                "| [{}]({}/report.md) | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} |",
                probe.run,
                probe.run,
                probe.rate,
                v.provider,
                verdict,
                v.goodput.map(|g| format!("{:.1} %", g * 100.0)).unwrap_or_else(|| "—".into()),
                v.achieved_rate,
                v.completed_per_second,
                ms(v.ttft_p99_ms),
                ms(v.e2e_p99_ms)
            );
        }
    }
    let _ = writeln!(md, "\n## The rule\n");
    for line in &doc.rule {
        let _ = writeln!(md, "- {line}");
    }
    md
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
