//! This fetch's segment of the log, opened: its `segment_opened` line (what the fetch runs
//! under, and where it runs), then the attempts an earlier fetch left without an end, closed
//! as `interrupted` so that they are sent again.
use crate::log::EventLog;
use crate::plan::{Plan, ShardPlan};
use crate::resume::LogState;
use anyhow::Result;
use inferbench_contract::event::{ErrorKind, Event, Outcome, RequestTerminal, SegmentOpened};
use inferbench_contract::shard::ShardOpened;
use inferbench_store::segment_writer::{opening, wall_clock_ns};

/// Opens segment `state.next_segment` of the run's log, continuing `seq` and the run clock
/// where the earlier segments left them.
pub fn open(plan: &Plan, state: &LogState) -> Result<EventLog> {
    let wall = wall_clock_ns();
    let origin = plan.shard.as_ref().map(|shard| origin(shard, state));
    // The run clock continues across processes: this segment starts at its wall-clock offset
    // from the first segment (a shard's: from the origin every shard was given, which it
    // waited for), and never before the last recorded instant.
    let base_ns = match (origin, state.anchor_wall_ns) {
        (Some(origin), _) => {
            wall.saturating_sub(origin).max(state.last_t_ns + u64::from(state.anchor_wall_ns.is_some()))
        }
        (None, Some(anchor)) => wall.saturating_sub(anchor).max(state.last_t_ns + 1),
        (None, None) => 0,
    };
    let shard = plan.shard.as_ref().zip(origin).map(|(shard, origin_unix_ns)| ShardOpened {
        index: shard.shard.index,
        count: shard.shard.count,
        unit: shard.unit,
        requests: plan.schedule.len() as u64,
        origin_unix_ns,
    });
    // The segment's first lines: what this fetch runs under, then every attempt an earlier
    // fetch left without an end, closed.
    let mut lines = vec![Event::SegmentOpened(SegmentOpened {
        wall_clock_unix_ns: wall,
        scheduled_requests: plan.scheduled_total,
        already_terminal: state.terminal.len() as u64,
        deadline_ms: plan.deadline.as_millis() as u64,
        max_event_bytes: plan.limits.max_event_bytes as u64,
        max_response_bytes: plan.limits.max_response_bytes,
        http_version: Some(plan.spec.inference.transport.http_version.as_str().to_string()),
        execution_region: std::env::var("BENCHMARK_EXECUTION_REGION").unwrap_or_else(|_| "local-unspecified".into()),
        host_sha256_16: host_hash(),
        shard,
        ..opening(&plan.run, state.next_segment, plan.endpoint_mode)?
    })];
    lines.extend(state.open.iter().map(|(request_id, attempt)| {
        Event::RequestTerminal(RequestTerminal {
            request_id: request_id.clone(),
            attempt: *attempt,
            outcome: Outcome::Interrupted,
            http_status: None,
            error_type: Some(ErrorKind::Interrupted),
            error_message: Some("the fetch process stopped before this attempt ended; it is sent again".into()),
            error_body: None,
            bytes_received: 0,
            done_seen: false,
        })
    }));
    let log = EventLog::open(&plan.run.segment(state.next_segment), plan.run_id.clone(), state.next_seq, base_ns)?;
    for event in lines {
        log.emit(event)?;
    }
    Ok(log)
}

/// A shard's run-clock origin: the one its run's log records (every shard's is the same), else
/// `--start-at`; `fetch::run` checked that they agree and that one is given.
pub fn origin(shard: &ShardPlan, state: &LogState) -> u64 {
    state.shard_origin_ns.or(shard.start_at_unix_ns).unwrap_or(0)
}

/// Waits until the wall clock reaches `origin_unix_ns`, so that a shard's segment opens at or
/// after its run clock's zero.
pub fn wait_for(origin_unix_ns: u64) {
    let now = wall_clock_ns();
    if origin_unix_ns > now {
        let wait = std::time::Duration::from_nanos(origin_unix_ns - now);
        eprintln!("ib-fetch: waiting {:.1} s for --start-at", wait.as_secs_f64());
        std::thread::sleep(wait);
    }
}

/// The host name, hashed: runs record where they ran without naming the machine.
fn host_hash() -> String {
    let name =
        std::fs::read_to_string("/proc/sys/kernel/hostname").or_else(|_| std::env::var("HOSTNAME")).unwrap_or_default();
    inferbench_contract::canonical::sha256_hex(name.trim().as_bytes())[..16].to_string()
}
