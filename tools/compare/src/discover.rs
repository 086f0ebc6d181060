//! Which run directories to compare, what each one is (workflow, name, where it came from)
//! and when it ran. A capacity search's directory is recognised here, and skipped; reading
//! what it found is `search`'s.
use anyhow::{Context, Result};
use inferbench_contract::civil;
use inferbench_contract::vocab::EndpointMode;
use inferbench_contract::Error;
use inferbench_store::run::RunDir;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The record `ib-search` writes into a capacity search's directory.
pub const SEARCH_JSON: &str = "search.json";

/// Why a search directory is not compared as a run.
pub const NOT_A_RUN: &str =
    "a capacity search's directory, holding search.json, not a run: its probes are load runs, compared when named as \
     `<dir>/probes/*`";

/// Whether `dir` is a capacity search's directory: it holds the search's record.
pub fn is_search(dir: &Path) -> bool {
    dir.join(SEARCH_JSON).is_file()
}

/// What the patterns matched.
#[derive(Debug, Default, PartialEq)]
pub struct Found {
    /// The run directories, in path order.
    pub runs: Vec<PathBuf>,
    /// The other directories matched, each with why it is not compared.
    pub skipped: Vec<(PathBuf, String)>,
    /// The capacity searches among them (also in `skipped`): the summary lists what each found.
    pub searches: Vec<PathBuf>,
}

/// The run directories named by `patterns`: each a directory, or a glob (`runs/*/*`,
/// `runs/workflow=micro-single-task/*`) whose matches are the scored runs (see [`unfinished`]);
/// a glob's other matches (`runs/.deps`, a run still fetching or not aggregated yet, a capacity
/// search's directory) are returned as skipped, with the reason. A directory named outright
/// must be a run, or a capacity search (skipped as a glob's would be).
pub fn expand(patterns: &[String]) -> Result<Found> {
    let mut runs = BTreeSet::new();
    let mut skipped = Vec::new();
    let mut searches = BTreeSet::new();
    for pattern in patterns {
        let literal = Path::new(pattern);
        if literal.is_dir() || !pattern.contains(['*', '?', '[']) {
            if !literal.is_dir() {
                return Err(Error::bad(format!("{pattern}: no such run directory")).into());
            }
            if is_search(literal) && !RunDir::new(literal).responses().is_file() {
                if searches.insert(literal.to_path_buf()) {
                    skipped.push((literal.to_path_buf(), NOT_A_RUN.to_string()));
                }
                continue;
            }
            if let Some(why) = unfinished(literal) {
                return Err(Error::bad(format!("{pattern}: {why}")).into());
            }
            runs.insert(literal.to_path_buf());
            continue;
        }
        // As a shell expands it: `*` does not match a leading dot (`runs/.deps`).
        let options = glob::MatchOptions { require_literal_leading_dot: true, ..Default::default() };
        let matches =
            glob::glob_with(pattern, options).map_err(|e| Error::bad(format!("{pattern}: not a glob pattern: {e}")))?;
        let mut any = false;
        for entry in matches {
            let path = entry.map_err(|e| Error::unreadable(e.path().to_path_buf(), e.into()))?;
            if !path.is_dir() {
                continue;
            }
            any = true;
            if is_search(&path) && !RunDir::new(&path).responses().is_file() {
                if searches.insert(path.clone()) {
                    skipped.push((path, NOT_A_RUN.to_string()));
                }
            } else if let Some(why) = unfinished(&path) {
                skipped.push((path, why));
            } else {
                runs.insert(path);
            }
        }
        if !any {
            return Err(Error::bad(format!("{pattern}: matches no directory")).into());
        }
    }
    if runs.is_empty() {
        let hint = match searches.first() {
            Some(search) => {
                format!(" ({} is a capacity search: its runs are {}/probes/*)", search.display(), search.display())
            }
            None => String::new(),
        };
        return Err(Error::bad(format!(
            "no scored run directory (responses.parquet and pooled figures) in {}{hint}",
            patterns.join(" ")
        ))
        .into());
    }
    skipped.sort();
    Ok(Found { runs: runs.into_iter().collect(), skipped, searches: searches.into_iter().collect() })
}

/// Why `dir` is not a run that can be compared, or `None` when it is one: a compared run has
/// its responses (`responses.parquet`) and its pooled figures (`pooled.parquet`, or the
/// `metrics.parquet` of a run scored before that table existed). A run between
/// `ib-reconstruct` and `ib-aggregate` has the first but not the second.
pub fn unfinished(dir: &Path) -> Option<String> {
    let run = RunDir::new(dir);
    let rescore = format!("make rescore RUN={} derives it", dir.display());
    if !run.responses().is_file() {
        return Some(format!("no responses.parquet: not a run, or not scored yet ({rescore})"));
    }
    if !run.pooled_parquet().is_file() && !run.metrics_parquet().is_file() {
        return Some(format!(
            "responses.parquet but no pooled.parquet or metrics.parquet: not aggregated yet ({rescore})"
        ));
    }
    if !run.manifest().is_file() && !run.lock().is_file() {
        return Some("no manifest.json or lock.json: not a run of inferbench's, and when it ran is unknown".into());
    }
    None
}

/// What one run is, from its path, `manifest.json` and `lock.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    pub path: PathBuf,
    /// From the path alone: the `workflow=` partition, else the name of the directory above it
    /// (the older layout `runs/<workflow>/<name>/`). Never the manifest's `workflow`, which is
    /// the name of the directory the spec was read from (`seed-spec` for a copied spec,
    /// `pipeline` for a capacity search's probe): the same benchmark would then be labelled two
    /// ways and never meet itself in trends. The path is what `runs/` is partitioned by and what
    /// DuckDB or polars read as `workflow`, and a capacity search is labelled the same way.
    pub workflow: String,
    /// The directory's name without its `run=` partition key.
    pub name: String,
    /// When the run started (UTC, µs since the Unix epoch).
    pub started_at_us: i64,
    /// `manifest` (execution.wall_clock_period.start) or `log` (the first segment_opened).
    pub date_source: &'static str,
    /// `simulated`, `providers` or `imported`, when known.
    pub endpoint_mode: Option<String>,
    /// Whether `ib-import` made the run from a reference runner's records.
    pub imported: bool,
    pub status: RunStatus,
    /// The manifest's `status_reasons` (why a partial run is incomplete).
    pub status_reasons: Vec<String>,
}

impl RunInfo {
    pub fn read(path: &Path) -> Result<RunInfo> {
        let run = RunDir::new(path);
        // A run at rest is described by its manifest; the lock says whether it was imported and
        // names the log's run id when there is no manifest.
        let lock = if run.lock().is_file() { Some(read_json(&run.lock())?) } else { None };
        let manifest_path = run.manifest();
        let manifest = if manifest_path.is_file() { Some(read_json(&manifest_path)?) } else { None };
        let dir_name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let name = dir_name.strip_prefix("run=").unwrap_or(dir_name).to_string();
        let workflow = workflow_of(path);
        let execution = manifest.as_ref().map(|m| &m["execution"]);
        let period_start = execution.and_then(|e| e["wall_clock_period"]["start"].as_str());
        let (started_at_us, date_source) = match period_start {
            Some(start) => (
                parse_utc(start).ok_or_else(|| {
                    Error::bad(format!(
                        "{}: execution.wall_clock_period.start: `{start}` is not a UTC time (YYYY-MM-DDTHH:MM:SS[.fff]Z)",
                        manifest_path.display()
                    ))
                })?,
                "manifest",
            ),
            None => (log_start(&run, lock.as_ref())?, "log"),
        };
        let imported = lock.as_ref().and_then(|l| l.get("imported_from")).is_some_and(|v| !v.is_null());
        let endpoint_mode = execution
            .and_then(|e| e["endpoint_mode"].as_str().map(str::to_string))
            .or_else(|| imported.then(|| EndpointMode::Imported.as_str().to_string()));
        let (status, status_reasons) = match &manifest {
            None => (RunStatus::Unknown, Vec::new()),
            Some(m) => {
                let reasons: Vec<String> = m["status_reasons"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|r| r.as_str().map(str::to_string)).collect())
                    .unwrap_or_default();
                // A manifest without a status says nothing of whether the run is whole.
                let status = match m.get("status").filter(|v| !v.is_null()) {
                    None => RunStatus::Unknown,
                    Some(v) => match v.as_str() {
                        Some("complete") => RunStatus::Complete,
                        Some("incomplete") => RunStatus::Partial,
                        _ => {
                            return Err(Error::bad(format!(
                                "{}: status: {v} is neither `complete` nor `incomplete`",
                                manifest_path.display()
                            ))
                            .into())
                        }
                    },
                };
                (status, reasons)
            }
        };
        Ok(RunInfo {
            path: path.to_path_buf(),
            workflow,
            name,
            started_at_us,
            date_source,
            endpoint_mode,
            imported,
            status,
            status_reasons,
        })
    }

    /// Whether the run's figures came from ib-sim (simulated providers, with the faults its
    /// profiles inject) rather than from real endpoints.
    pub fn simulated(&self) -> bool {
        self.endpoint_mode.as_deref() == Some(EndpointMode::Simulated.as_str())
    }

    /// What a reader is told beside the run's figures: its status, and `simulated` or
    /// `imported` when so (`complete`, `partial, simulated`, ...).
    pub fn marks(&self) -> String {
        let mut marks = vec![self.status.as_str()];
        if self.simulated() {
            marks.push("simulated");
        }
        if self.imported {
            marks.push("imported");
        }
        marks.join(", ")
    }
}

/// A run's status, from `manifest.json`'s `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// `complete`: every scheduled request has a response and every derived file is current.
    Complete,
    /// `incomplete`: responses missing, or a derived file stale (the manifest says why).
    Partial,
    /// No `manifest.json` (a run never reported by `ib-report`): whether it is whole is unknown.
    Unknown,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Unknown => "unknown",
        }
    }
}

/// A run's (or a capacity search's) workflow label, from its path alone (see
/// [`RunInfo::workflow`]).
pub fn workflow_of(path: &Path) -> String {
    path.components()
        .rev()
        .find_map(|c| c.as_os_str().to_str().and_then(|s| s.strip_prefix("workflow=")).map(str::to_string))
        .or_else(|| path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).map(str::to_string))
        .unwrap_or_default()
}

fn read_json(path: &Path) -> Result<Value> {
    let bytes = std::fs::read(path).map_err(|e| Error::unreadable(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| Error::bad(format!("{}: not JSON: {e}", path.display())).into())
}

/// The wall clock of the log's first `segment_opened`, read through the log's reader.
fn log_start(run: &RunDir, lock: Option<&Value>) -> Result<i64> {
    use inferbench_contract::event::Event;
    let Some(lock) = lock else {
        return Err(Error::bad(format!(
            "{}: no manifest.json with execution.wall_clock_period, and no lock.json naming the log: when it ran is unknown",
            run.root().display()
        ))
        .into());
    };
    let run_id =
        lock["run_id"].as_str().ok_or_else(|| Error::bad(format!("{}: run_id: missing", run.lock().display())))?;
    let segments = inferbench_store::event_log::read(run, run_id)
        .with_context(|| format!("{}: reading the event log for the run's start", run.root().display()))?;
    let first = segments.first().and_then(|s| s.records.first()).map(|env| &env.event);
    match first {
        Some(Event::SegmentOpened(opened)) => Ok((opened.wall_clock_unix_ns / 1_000) as i64),
        _ => Err(Error::bad(format!(
            "{}: no manifest.json with execution.wall_clock_period and no event log: when it ran is unknown",
            run.root().display()
        ))
        .into()),
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f…]Z` (what `manifest.json` writes) as µs since the Unix epoch.
pub fn parse_utc(text: &str) -> Option<i64> {
    let body = text.strip_suffix('Z')?;
    let (date, time) = body.split_once('T')?;
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, fraction),
        None => (time, ""),
    };
    let numbers = |s: &str, widths: &[usize], sep: char| -> Option<Vec<i64>> {
        let parts: Vec<&str> = s.split(sep).collect();
        (parts.len() == widths.len()
            && parts.iter().zip(widths).all(|(p, w)| p.len() == *w && p.bytes().all(|b| b.is_ascii_digit())))
        .then(|| parts.iter().map(|p| p.parse().unwrap()).collect())
    };
    let d = numbers(date, &[4, 2, 2], '-')?;
    let t = numbers(clock, &[2, 2, 2], ':')?;
    if !fraction.bytes().all(|b| b.is_ascii_digit())
        || fraction.len() > 9
        || (time.contains('.') && fraction.is_empty())
    {
        return None;
    }
    let (year, month, day) = (d[0], d[1], d[2]);
    if !civil::is_date(year, month, day) || t[0] > 23 || t[1] > 59 || t[2] > 59 {
        return None;
    }
    let micros: i64 = format!("{fraction:0<6}")[..6].parse().ok()?;
    Some((civil::days_from_civil(year, month, day) * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]) * 1_000_000 + micros)
}

/// µs since the epoch as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn format_utc(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil::civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_times_parse_to_epoch_microseconds_and_back() {
        assert_eq!(parse_utc("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_utc("2000-02-29T00:00:00.123Z"), Some(951_782_400_123_000));
        assert_eq!(parse_utc("2026-11-29T17:28:30.855Z"), Some(1_795_973_310_855_000));
        assert_eq!(parse_utc("2026-11-29T17:28:30Z"), Some(1_795_973_310_000_000));
        assert_eq!(format_utc(1_795_973_310_855_000), "2026-11-29 17:28:30");
        for bad in ["2026-11-29T17:28:30", "2026-02-29T00:00:00Z", "2026-11-29 17:28:30Z", "2026-11-29T24:00:00Z", "x"]
        {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_glob_skips_directories_that_are_not_scored_runs_and_a_named_one_must_be_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runs");
        for run in ["workflow=w/run=a", "workflow=w/run=b"] {
            std::fs::create_dir_all(root.join(run)).unwrap();
        }
        std::fs::write(root.join("workflow=w/run=a/responses.parquet"), b"").unwrap();
        std::fs::write(root.join("workflow=w/run=a/pooled.parquet"), b"").unwrap();
        std::fs::write(root.join("workflow=w/run=a/lock.json"), b"{}").unwrap();
        // Scored tables, but no record of the run: no date, no status.
        std::fs::create_dir_all(root.join("workflow=w/run=d")).unwrap();
        for table in ["responses.parquet", "pooled.parquet"] {
            std::fs::write(root.join("workflow=w/run=d").join(table), b"").unwrap();
        }
        // Reconstructed but not aggregated yet: responses, no metrics.
        std::fs::create_dir_all(root.join("workflow=w/run=c")).unwrap();
        std::fs::write(root.join("workflow=w/run=c/responses.parquet"), b"").unwrap();
        let pattern = format!("{}/*/*", root.display());
        let Found { runs, skipped, searches } = expand(&[pattern]).unwrap();
        assert_eq!(runs, [root.join("workflow=w/run=a")]);
        assert_eq!(skipped.len(), 3);
        assert_eq!(skipped[0].0, root.join("workflow=w/run=b"));
        assert!(skipped[0].1.starts_with("no responses.parquet"), "{skipped:?}");
        assert_eq!(skipped[1].0, root.join("workflow=w/run=c"));
        assert!(skipped[1].1.contains("not aggregated yet"), "{skipped:?}");
        assert_eq!(skipped[2].0, root.join("workflow=w/run=d"));
        assert!(skipped[2].1.starts_with("no manifest.json or lock.json"), "{skipped:?}");
        assert!(searches.is_empty());
        let named = root.join("workflow=w/run=c").display().to_string();
        let err = expand(&[named]).unwrap_err();
        assert!(err.to_string().contains("not aggregated yet"), "{err}");
        let named = root.join("workflow=w/run=b").display().to_string();
        let err = expand(&[named]).unwrap_err();
        assert_eq!(inferbench_cli::exit_for(&err), inferbench_cli::Exit::BadInput);
        assert!(err.to_string().contains("no responses.parquet"), "{err}");
        let none = format!("{}/nothing-*", root.display());
        assert!(expand(&[none]).unwrap_err().to_string().contains("matches no directory"));
    }

    fn manifest(dir: &Path, workflow: &str, status: &str, reasons: &[&str], mode: &str) {
        std::fs::create_dir_all(dir).unwrap();
        let doc = serde_json::json!({
            "workflow": workflow,
            "status": status,
            "status_reasons": reasons,
            "execution": {"wall_clock_period": {"start": "2026-11-29T17:28:30Z", "end": "2026-11-29T17:29:30Z"},
                          "endpoint_mode": mode},
        });
        std::fs::write(dir.join("manifest.json"), doc.to_string()).unwrap();
    }

    #[test]
    fn the_workflow_comes_from_the_path_alone_so_one_benchmark_meets_itself() {
        let dir = tempfile::tempdir().unwrap();
        // The same benchmark in the Hive layout and in the older `runs/<workflow>/<name>/`,
        // its spec read from a directory named `seed-spec`.
        let hive = dir.path().join("runs/workflow=micro-single-task/run=a");
        let older = dir.path().join("runs/micro-single-task/b");
        for run in [&hive, &older] {
            manifest(run, "seed-spec", "complete", &[], "providers");
            let info = RunInfo::read(run).unwrap();
            assert_eq!(info.workflow, "micro-single-task", "{}", run.display());
        }
    }

    #[test]
    fn a_runs_status_and_whether_it_was_simulated_come_from_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let partial = dir.path().join("runs/workflow=w/run=p");
        manifest(&partial, "w", "incomplete", &["3 scheduled requests have no response"], "simulated");
        let info = RunInfo::read(&partial).unwrap();
        assert_eq!(info.status, RunStatus::Partial);
        assert_eq!(info.status_reasons, ["3 scheduled requests have no response"]);
        assert_eq!(info.marks(), "partial, simulated");
        let complete = dir.path().join("runs/workflow=w/run=c");
        manifest(&complete, "w", "complete", &[], "providers");
        let info = RunInfo::read(&complete).unwrap();
        assert_eq!((info.status, info.marks().as_str()), (RunStatus::Complete, "complete"));
        manifest(&complete, "w", "done", &[], "providers");
        let err = RunInfo::read(&complete).unwrap_err().to_string();
        assert!(err.contains("status: \"done\" is neither"), "{err}");
        std::fs::write(
            complete.join("manifest.json"),
            r#"{"execution": {"wall_clock_period": {"start": "2026-11-29T17:28:30Z"}}}"#,
        )
        .unwrap();
        assert_eq!(RunInfo::read(&complete).unwrap().status, RunStatus::Unknown, "no status: unknown");
    }

    #[test]
    fn a_capacity_search_is_skipped_with_its_reason_and_listed_whether_globbed_or_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("runs");
        let search = root.join("workflow=load/run=search");
        std::fs::create_dir_all(search.join("probes/01")).unwrap();
        std::fs::create_dir_all(root.join("workflow=w/run=a")).unwrap();
        std::fs::write(root.join("workflow=w/run=a/responses.parquet"), b"").unwrap();
        std::fs::write(root.join("workflow=w/run=a/metrics.parquet"), b"").unwrap();
        std::fs::write(root.join("workflow=w/run=a/manifest.json"), b"{}").unwrap();
        std::fs::write(search.join("search.json"), b"{}").unwrap();
        let named = search.display().to_string();
        let found = expand(&[format!("{}/*/*", root.display()), named.clone()]).unwrap();
        assert_eq!(found.runs, [root.join("workflow=w/run=a")]);
        assert_eq!(found.searches, std::slice::from_ref(&search), "listed once");
        assert_eq!(found.skipped, [(search.clone(), NOT_A_RUN.to_string())]);
        // With no run beside it, the error says where the search's runs are.
        let err = expand(&[named]).unwrap_err().to_string();
        assert!(err.contains("is a capacity search") && err.contains("probes/*"), "{err}");
    }
}
