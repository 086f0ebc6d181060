//! `manifest.json`: the run's inventory (every file with its size and SHA-256), its status,
//! and where and when it ran, taken from the fetch segments' own records (execution region,
//! a hash of the host name, OS, architecture, wall-clock anchors). Written last, after the
//! report, so the inventory covers everything; deterministic for the same run directory.
use inferbench_schemas::event::{Envelope, Event};
use inferbench_schemas::lock::Lock;
use inferbench_schemas::manifest::{Execution, FileEntry, Manifest, Period, SegmentFacts};
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::tables::{ResponseRow, ScheduleRow};
use inferbench_schemas::{atomic, jsonl, parquet_io, CODE_VERSION, FORMAT_VERSION};
use std::collections::BTreeMap;
use std::path::Path;

/// Every non-hidden file under `root` except the manifest itself, by relative path.
fn inventory(root: &Path) -> anyhow::Result<BTreeMap<String, FileEntry>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(root)?.to_string_lossy().replace('\\', "/");
            if rel != "manifest.json" {
                let bytes = std::fs::metadata(&path)?.len();
                files.insert(rel, FileEntry { bytes, sha256: file_sha256(&path)? });
            }
        }
    }
    Ok(files)
}

/// UTC `YYYY-MM-DDTHH:MM:SS.mmmZ` of nanoseconds since the Unix epoch.
pub fn utc(unix_ns: u64) -> String {
    let secs = unix_ns / 1_000_000_000;
    let millis = (unix_ns / 1_000_000) % 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Facts of each fetch segment, and the run's wall-clock period.
fn execution(run: &RunDir) -> anyhow::Result<Execution> {
    let mut segments = Vec::new();
    let mut anchor: Option<u64> = None;
    let mut last_t_ns = 0;
    for (_, path) in run.segments()? {
        for env in jsonl::read::<Envelope>(&path)?.records {
            last_t_ns = last_t_ns.max(env.t_ns);
            if let Event::SegmentOpened(s) = env.event {
                anchor.get_or_insert(s.wall_clock_unix_ns - env.t_ns.min(s.wall_clock_unix_ns));
                segments.push(SegmentFacts {
                    segment: s.segment,
                    opened_at: utc(s.wall_clock_unix_ns),
                    code_version: s.code_version,
                    endpoint_mode: s.endpoint_mode,
                    deadline_ms: s.deadline_ms,
                    execution_region: s.execution_region,
                    host_sha256_16: s.host_sha256_16,
                    os: s.os,
                    arch: s.arch,
                });
            }
        }
    }
    let wall_clock_period = anchor.map(|a| Period { start: utc(a), end: utc(a + last_t_ns) });
    let clock = "CLOCK_MONOTONIC, anchored at the first segment".to_string();
    Ok(Execution { segments, wall_clock_period, clock })
}

fn rows<T: parquet_io::Table>(path: &Path) -> anyhow::Result<Option<usize>> {
    Ok(if path.exists() { Some(parquet_io::read::<T>(path)?.rows.len()) } else { None })
}

/// Writes `manifest.json`; returns the run's status.
pub fn write(run: &RunDir) -> anyhow::Result<String> {
    let lock = Lock::read(&run.lock())?;
    // A run re-scored from a partial copy may lack tables; it is then reported incomplete.
    let scheduled = rows::<ScheduleRow>(&run.schedule())?;
    let responses = rows::<ResponseRow>(&run.responses())?;
    let derived =
        ["events.parquet", "evaluations.parquet", "metrics.json", "metrics.parquet", "comparisons.json", "report.md"];
    let complete = scheduled.is_some() && responses == scheduled && derived.iter().all(|f| run.root().join(f).exists());
    let status = if complete { "complete" } else { "incomplete" };
    let manifest = Manifest {
        v: FORMAT_VERSION,
        run_id: lock.run_id,
        workflow: lock.workflow,
        benchmark_slug: lock.benchmark_slug,
        status: status.to_string(),
        scheduled_requests: scheduled,
        responses,
        written_by: CODE_VERSION.to_string(),
        locked_by: lock.code_version,
        execution: execution(run)?,
        files: inventory(run.root())?,
    };
    atomic::write_json(&run.manifest(), &manifest)?;
    Ok(status.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(951_782_400_123_000_000), "2000-02-29T00:00:00.123Z");
        assert_eq!(utc(1_795_973_310_855_865_115), "2026-11-29T17:28:30.855Z");
    }

    #[test]
    fn inventory_skips_hidden_files_and_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("events")).unwrap();
        std::fs::write(dir.path().join("events/0001.jsonl"), "x\n").unwrap();
        std::fs::write(dir.path().join("manifest.json"), "{}").unwrap();
        std::fs::write(dir.path().join(".tmp"), "").unwrap();
        let files = inventory(dir.path()).unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), vec!["events/0001.jsonl"]);
        assert_eq!(files["events/0001.jsonl"].bytes, 2);
    }
}
