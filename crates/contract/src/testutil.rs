//! Builders of the contract's values for tests, here and in the crates and binaries above
//! (feature `testutil`, which only their `[dev-dependencies]` turn on): an event or a lock
//! with every field set to a plain value, changed with struct-update syntax where a test
//! cares, e.g. `Lock { providers, ..testutil::lock() }`.
use crate::event::{Envelope, Event, SegmentOpened};
use crate::lock::{Lock, LockSelection, LockTokenizer};
use std::collections::BTreeMap;

/// The run id every builder uses.
pub const RUN_ID: &str = "run-a";

/// A `segment_opened` of `segment`, for a simulated fetch of one request.
pub fn segment_opened(segment: u32) -> SegmentOpened {
    SegmentOpened {
        segment,
        wall_clock_unix_ns: 1_700_000_000_000_000_000,
        code_version: "c".into(),
        schedule_sha256: "s".into(),
        scheduled_requests: 1,
        already_terminal: 0,
        endpoint_mode: crate::vocab::EndpointMode::Simulated,
        deadline_ms: 1000,
        max_event_bytes: 1,
        max_response_bytes: 1,
        http_version: Some("1.1".into()),
        execution_region: "r".into(),
        host_sha256_16: "h".into(),
        os: "linux".into(),
        arch: "x86_64".into(),
        shard: None,
    }
}

/// [`segment_opened`] as an event.
pub fn opened(segment: u32) -> Event {
    Event::SegmentOpened(segment_opened(segment))
}

/// [`segment_opened`] of segment `segment` as shard `index` of `count` (of one request each,
/// shared by round, from an origin one second before [`segment_opened`]'s wall clock).
pub fn shard_opened(segment: u32, index: u32, count: u32) -> Event {
    let shard = crate::shard::ShardOpened {
        index,
        count,
        unit: crate::shard::ShareUnit::Round,
        requests: 1,
        origin_unix_ns: 1_699_999_999_000_000_000,
    };
    Event::SegmentOpened(SegmentOpened { shard: Some(shard), ..segment_opened(segment) })
}

/// The envelope of `event` as line `seq` of run [`RUN_ID`], `seq` milliseconds into the run.
pub fn envelope(seq: u64, event: Event) -> Envelope {
    Envelope { v: crate::FORMAT_VERSION, run_id: RUN_ID.into(), seq, t_ns: seq * 1_000_000, event }
}

/// A lock of run [`RUN_ID`] binding nothing, for provider `p`.
pub fn lock() -> Lock {
    Lock {
        v: crate::FORMAT_VERSION,
        run_id: RUN_ID.into(),
        workflow: "micro-single-task".into(),
        benchmark_slug: "s".into(),
        code_version: "c".into(),
        inputs: BTreeMap::new(),
        dataset_release_hash: "0".repeat(64),
        selection: LockSelection {
            algorithm_version: "v".into(),
            selected_items_per_task_family: 1,
            sample: true,
            seeds: BTreeMap::new(),
        },
        tokenizer: LockTokenizer {
            encoding: "o200k_base".into(),
            implementation: "t".into(),
            vocabulary_sha256: "0".repeat(64),
        },
        providers: vec!["p".into()],
        imported_from: None,
    }
}
