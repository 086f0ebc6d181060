//! How the run was made, from its event log: each fetch segment (where it ran, against what,
//! with which deadline), the wall-clock period, and how much of it was resumed. The manifest
//! records these facts and the report states them.
use inferbench_schemas::event::Event;
use inferbench_schemas::event_log;
use inferbench_schemas::manifest::{Execution, Period, SegmentFacts};
use inferbench_schemas::run::RunDir;

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

/// The execution facts of `run`, whose lock names it `run_id`.
pub fn read(run: &RunDir, run_id: &str) -> anyhow::Result<Execution> {
    let mut segments = Vec::new();
    let mut anchor: Option<u64> = None;
    let mut last_t_ns = 0;
    let (mut resumed_rounds, mut resent_attempts) = (0, 0);
    for entry in event_log::LogReader::open(run, run_id)? {
        {
            let env = entry?.env;
            last_t_ns = last_t_ns.max(env.t_ns);
            match env.event {
                Event::SegmentOpened(s) => {
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
                Event::RoundClosed(r) if r.resumed_partial_round => resumed_rounds += 1,
                Event::RequestStarted(s) if s.attempt > 1 => resent_attempts += 1,
                _ => {}
            }
        }
    }
    Ok(Execution {
        endpoint_mode: segments.first().map(|s| s.endpoint_mode.clone()),
        segments,
        wall_clock_period: anchor.map(|a| Period { start: utc(a), end: utc(a + last_t_ns) }),
        clock: "CLOCK_MONOTONIC, anchored at the first segment".to_string(),
        resumed_rounds,
        resent_attempts,
    })
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
}
