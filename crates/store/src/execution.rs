//! The execution facts (`inferbench_contract::execution`): how a run was made, from its event
//! log. Each fetch segment (where it ran, against what, with which deadline), the wall-clock
//! period, how much of it was resumed, and a load run's steps.
//!
//! `ib-reconstruct` gathers them as it reads the log ([`Facts`]) and records them in
//! `responses.parquet`'s metadata under `inferbench.execution` ([`metadata`], their one
//! writer); `ib-aggregate` and `ib-report` take them from there ([`recorded`], their one
//! reader) without reading the log a second time. A `responses.parquet` written before it
//! recorded them has none, and a report on it reads the log itself ([`read_log`]).
use crate::event_log;
use crate::parquet_io::{self, Inputs};
use crate::run::RunDir;
use inferbench_contract::civil;
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::execution::{Execution, Period, SegmentFacts, StepFacts, METADATA_KEY};
use inferbench_contract::tables::ResponseRow;
use inferbench_contract::vocab::StepStatus;
use inferbench_contract::{Error, Result};

/// The clock every `t_ns` is measured on, in words.
const CLOCK: &str = "CLOCK_MONOTONIC, anchored at the first segment";

/// The facts, gathered line by line in log order.
#[derive(Debug, Default)]
pub struct Facts {
    segments: Vec<SegmentFacts>,
    anchor_ns: Option<u64>,
    last_t_ns: u64,
    resumed_rounds: u64,
    resent_attempts: u64,
    /// Each run of a step, with the shard whose segment it was logged in.
    steps: Vec<(Option<u32>, StepFacts)>,
    /// The shard of the segment being read (lines come a segment at a time, each opening with
    /// its `segment_opened`).
    shard: Option<u32>,
}

impl Facts {
    /// Takes the next line of the log.
    pub fn observe(&mut self, env: &Envelope) {
        self.last_t_ns = self.last_t_ns.max(env.t_ns);
        match &env.event {
            Event::SegmentOpened(s) => {
                // Every shard counts its `t_ns` from the origin all of them were given.
                let anchor = match &s.shard {
                    Some(shard) => shard.origin_unix_ns,
                    None => s.wall_clock_unix_ns - env.t_ns.min(s.wall_clock_unix_ns),
                };
                self.anchor_ns.get_or_insert(anchor);
                self.shard = s.shard.as_ref().map(|shard| shard.index);
                self.segments.push(SegmentFacts {
                    segment: s.segment,
                    shard: s.shard.as_ref().map(|shard| shard.shard()),
                    opened_at: civil::utc_millis(s.wall_clock_unix_ns),
                    code_version: s.code_version.clone(),
                    endpoint_mode: s.endpoint_mode,
                    deadline_ms: s.deadline_ms,
                    execution_region: s.execution_region.clone(),
                    host_sha256_16: s.host_sha256_16.clone(),
                    os: s.os.clone(),
                    arch: s.arch.clone(),
                });
            }
            Event::StepOpened(s) => self.steps.push((
                self.shard,
                StepFacts {
                    step: s.step,
                    attempt: s.attempt,
                    opened_t_ns: env.t_ns,
                    closed_t_ns: None,
                    status: None,
                    scheduled_requests: s.scheduled_requests,
                    requests_sent: 0,
                    peak_in_flight: 0,
                    cpu_ns: None,
                    client_resource_errors: 0,
                },
            )),
            Event::StepClosed(c) => {
                let shard = self.shard;
                let run = self
                    .steps
                    .iter_mut()
                    .rev()
                    .find(|(sh, s)| *sh == shard && s.step == c.step && s.attempt == c.attempt)
                    .map(|(_, run)| run);
                if let Some(run) = run {
                    run.closed_t_ns = Some(env.t_ns);
                    run.status = Some(c.status);
                    run.requests_sent = c.requests_sent;
                    run.peak_in_flight = c.peak_in_flight;
                    run.cpu_ns = c.cpu_ns;
                    run.client_resource_errors = c.client_resource_errors;
                }
            }
            Event::RoundClosed(r) if r.resumed_partial_round => self.resumed_rounds += 1,
            Event::RequestStarted(s) if s.attempt > 1 => self.resent_attempts += 1,
            _ => {}
        }
    }

    pub fn finish(self) -> Execution {
        Execution {
            endpoint_mode: self.segments.first().map(|s| s.endpoint_mode),
            segments: self.segments,
            wall_clock_period: self
                .anchor_ns
                .map(|a| Period { start: civil::utc_millis(a), end: civil::utc_millis(a + self.last_t_ns) }),
            clock: CLOCK.to_string(),
            resumed_rounds: self.resumed_rounds,
            resent_attempts: self.resent_attempts,
            steps: combine_shards(self.steps),
        }
    }
}

/// The step runs of the log: as logged when it is unsharded; when sharded, one run per step,
/// each shard's last run of it combined (the shards open a step at the same planned instant
/// and send their shares of it side by side, so together they are one run of it): opened at
/// the earliest opening, closed at the latest closing (open while any shard's is), complete
/// when every shard's is, its counts and CPU time summed, its peak in flight the sum of the
/// shards' peaks (a bound: they need not have coincided).
fn combine_shards(runs: Vec<(Option<u32>, StepFacts)>) -> Vec<StepFacts> {
    if runs.iter().all(|(shard, _)| shard.is_none()) {
        return runs.into_iter().map(|(_, run)| run).collect();
    }
    let mut last: std::collections::BTreeMap<(u32, Option<u32>), StepFacts> = Default::default();
    for (shard, run) in runs {
        last.insert((run.step, shard), run);
    }
    let mut steps: Vec<StepFacts> = Vec::new();
    for ((step, _), run) in last {
        match steps.last_mut().filter(|s| s.step == step) {
            None => steps.push(run),
            Some(all) => {
                all.attempt = all.attempt.max(run.attempt);
                all.opened_t_ns = all.opened_t_ns.min(run.opened_t_ns);
                all.closed_t_ns = all.closed_t_ns.zip(run.closed_t_ns).map(|(a, b)| a.max(b));
                all.status = match (all.status, run.status) {
                    (Some(StepStatus::Complete), other) => other,
                    (status, _) => status,
                };
                all.scheduled_requests += run.scheduled_requests;
                all.requests_sent += run.requests_sent;
                all.peak_in_flight += run.peak_in_flight;
                all.cpu_ns = all.cpu_ns.zip(run.cpu_ns).map(|(a, b)| a + b);
                all.client_resource_errors += run.client_resource_errors;
            }
        }
    }
    steps
}

/// The metadata of `responses.parquet` that records `execution`, besides its provenance.
pub fn metadata(execution: &Execution) -> parquet_io::Extra {
    let json = serde_json::to_string(execution).expect("strings and numbers serialise");
    parquet_io::Extra::from([(METADATA_KEY.to_string(), json)])
}

/// What `run`'s `responses.parquet` records: its inputs (its provenance) and the execution
/// facts, `None` when it was written before it recorded them.
pub fn recorded(run: &RunDir) -> Result<(Inputs, Option<Execution>)> {
    let path = run.responses();
    let (inputs, json) = parquet_io::read_inputs_and::<ResponseRow>(&path, METADATA_KEY)?;
    Ok((inputs, parse(json.as_deref(), &path)?))
}

/// The execution facts recorded by the `responses.parquet` that `reader` reads (at `path`),
/// `None` when it was written before it recorded them: for a stage that reads the table's rows
/// anyway, without opening it a second time.
pub fn in_table(reader: &parquet_io::Reader<ResponseRow>, path: &std::path::Path) -> Result<Option<Execution>> {
    parse(reader.metadata(METADATA_KEY), path)
}

fn parse(json: Option<&str>, path: &std::path::Path) -> Result<Option<Execution>> {
    json.map(serde_json::from_str)
        .transpose()
        .map_err(|e| Error::bad(format!("{}: metadata {METADATA_KEY}: {e}", path.display())))
}

/// The facts of `run`'s whole log (whose lock names it `run_id`), read and checked line by
/// line as every reader of the log checks it.
pub fn read_log(run: &RunDir, run_id: &str) -> Result<Execution> {
    let mut facts = Facts::default();
    for entry in event_log::LogReader::open(run, run_id)? {
        facts.observe(&entry?.env);
    }
    Ok(facts.finish())
}
