//! How a run was made, from its event log: each fetch segment (where it ran, against what,
//! with which deadline), the wall-clock period, how much of it was resumed, and a load run's
//! steps.
//!
//! `ib-reconstruct` gathers these facts as it reads the log and records them in
//! `responses.parquet`'s metadata ([`METADATA_KEY`]), so `ib-report` states them (and the
//! manifest records them) without reading the log a second time; a report on a
//! `responses.parquet` written before then reads the log itself ([`read_log`]).
use crate::event_log;
use crate::run::RunDir;
use inferbench_contract::civil;
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::manifest::{Execution, Period, SegmentFacts, StepFacts};
use inferbench_contract::Result;

/// The key of `responses.parquet`'s metadata that holds the [`Execution`] facts as JSON.
pub const METADATA_KEY: &str = "inferbench.execution";

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
    steps: Vec<StepFacts>,
}

impl Facts {
    /// Takes the next line of the log.
    pub fn observe(&mut self, env: &Envelope) {
        self.last_t_ns = self.last_t_ns.max(env.t_ns);
        match &env.event {
            Event::SegmentOpened(s) => {
                self.anchor_ns.get_or_insert(s.wall_clock_unix_ns - env.t_ns.min(s.wall_clock_unix_ns));
                self.segments.push(SegmentFacts {
                    segment: s.segment,
                    opened_at: civil::utc_millis(s.wall_clock_unix_ns),
                    code_version: s.code_version.clone(),
                    endpoint_mode: s.endpoint_mode.clone(),
                    deadline_ms: s.deadline_ms,
                    execution_region: s.execution_region.clone(),
                    host_sha256_16: s.host_sha256_16.clone(),
                    os: s.os.clone(),
                    arch: s.arch.clone(),
                });
            }
            Event::StepOpened(s) => self.steps.push(StepFacts {
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
            }),
            Event::StepClosed(c) => {
                let run = self.steps.iter_mut().rev().find(|s| s.step == c.step && s.attempt == c.attempt);
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
            endpoint_mode: self.segments.first().map(|s| s.endpoint_mode.clone()),
            segments: self.segments,
            wall_clock_period: self
                .anchor_ns
                .map(|a| Period { start: civil::utc_millis(a), end: civil::utc_millis(a + self.last_t_ns) }),
            clock: CLOCK.to_string(),
            resumed_rounds: self.resumed_rounds,
            resent_attempts: self.resent_attempts,
            steps: self.steps,
        }
    }
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
