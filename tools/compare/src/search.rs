//! A capacity search's directory met among the runs (`discover` tells one apart): not a run
//! itself (its probes under `probes/NN/` are), but its `search.json` says what it found for
//! each provider, which the summary lists.
use crate::discover::{workflow_of, RunInfo, SEARCH_JSON};
use inferbench_contract::documents::{SearchDocument, SearchStatus, SEARCH_VERSION};
use std::path::{Path, PathBuf};

/// One search, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    pub path: PathBuf,
    /// As a run's: the `workflow=` partition of its path, else the directory above it.
    pub workflow: String,
    pub name: String,
    /// When its first probe started (UTC µs), when that probe says.
    pub started_at_us: Option<i64>,
    pub doc: SearchDocument,
}

/// The search at `dir`, or why its record cannot be read (the comparison goes on without it).
pub fn read(dir: &Path) -> Result<Search, String> {
    let path = dir.join(SEARCH_JSON);
    let bytes = std::fs::read(&path).map_err(|e| format!("{SEARCH_JSON} unreadable: {e}"))?;
    let doc: SearchDocument =
        serde_json::from_slice(&bytes).map_err(|e| format!("{SEARCH_JSON} is not a search record: {e}"))?;
    if doc.version != SEARCH_VERSION {
        return Err(format!("{SEARCH_JSON} is version `{}`, not `{SEARCH_VERSION}`", doc.version));
    }
    let workflow = workflow_of(dir);
    let dir_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let name = dir_name.strip_prefix("run=").unwrap_or(dir_name).to_string();
    // The date is the first probe's: a search has no manifest of its own.
    let started_at_us = doc.probes.first().and_then(|p| RunInfo::read(&dir.join(&p.run)).ok()).map(|i| i.started_at_us);
    Ok(Search { path: dir.to_path_buf(), workflow, name, started_at_us, doc })
}

/// A search status as `search.json` spells it.
pub fn status(status: SearchStatus) -> String {
    serde_json::to_value(status).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::discover::is_search;
    use inferbench_contract::documents::{Probe, ProbeVerdict, Provenance, SearchResult, Verdict};

    pub fn document() -> SearchDocument {
        let verdict = |provider: &str, verdict| ProbeVerdict {
            provider: provider.into(),
            verdict,
            goodput: Some(1.0),
            achieved_rate: 8.0,
            completed_per_second: 8.0,
            ttft_p99_ms: Some(20.0),
            e2e_p99_ms: Some(90.0),
            client_bound: vec![],
        };
        SearchDocument {
            version: SEARCH_VERSION.into(),
            provenance: Provenance::new(&Default::default()),
            min_rate: 4.0,
            max_rate: 64.0,
            tolerance: 0.1,
            max_probes: 8,
            goodput_target: 0.9,
            rule: vec!["bisect".into()],
            probes: vec![Probe {
                run: "probes/01".into(),
                rate: 8.0,
                providers: vec![verdict("a", Verdict::Holds), verdict("b", Verdict::Fails)],
            }],
            results: vec![
                SearchResult {
                    provider: "a".into(),
                    status: SearchStatus::AtLeastMaxRate,
                    holds_at: Some(8.0),
                    fails_at: None,
                },
                SearchResult {
                    provider: "b".into(),
                    status: SearchStatus::BelowMinRate,
                    holds_at: None,
                    fails_at: Some(8.0),
                },
            ],
            stopped: "every provider's capacity is bracketed".into(),
        }
    }

    #[test]
    fn a_search_record_is_read_and_an_unreadable_one_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let search = dir.path().join("workflow=load/run=search");
        std::fs::create_dir_all(&search).unwrap();
        assert!(!is_search(&search));
        std::fs::write(search.join(SEARCH_JSON), serde_json::to_vec(&document()).unwrap()).unwrap();
        assert!(is_search(&search));
        let got = read(&search).unwrap();
        assert_eq!((got.workflow.as_str(), got.name.as_str(), got.started_at_us), ("load", "search", None));
        assert_eq!(got.doc, document());
        assert_eq!(status(SearchStatus::AtLeastMaxRate), "at_least_max_rate");
        std::fs::write(search.join(SEARCH_JSON), b"{\"version\": 1}").unwrap();
        assert!(read(&search).unwrap_err().contains("not a search record"));
        let mut other = document();
        other.version = "inferbench-search-v0".into();
        std::fs::write(search.join(SEARCH_JSON), serde_json::to_vec(&other).unwrap()).unwrap();
        assert!(read(&search).unwrap_err().contains("not `inferbench-search-v1`"));
    }
}
