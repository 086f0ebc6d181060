//! What the log says so far, kept up to date line by line: every attempt in progress, each
//! request's final outcome with its TTFA and E2E, the segments, and the rounds' durations.
//!
//! A request's final outcome is what `ib-reconstruct` makes its row from: its latest attempt
//! that ended other than `interrupted`, judged from the attempt's logged events by the one
//! timing function (`timing::compute_with`), which also gives its TTFA and E2E. An attempt's
//! events are kept only until its terminal event, so memory follows the requests in flight.
use inferbench_contract::event::{Envelope, Event, Outcome, SseEvent};
use inferbench_contract::vocab::WireApi;
use inferbench_contract::vocab::{EndpointMode, ErrorKind, OperationalOutcome, SegmentStatus, StepStatus};
use inferbench_contract::{Error, Result};
use inferbench_judge::rules::Rules;
use inferbench_judge::timing::{self, TimedEvent};
use std::collections::{BTreeMap, HashMap};

/// An attempt that has started (or logged anything) and not ended.
#[derive(Debug, Default)]
struct Open {
    started: Option<Started>,
    events: Vec<(u64, SseEvent)>,
}

/// What `request_started` says about an attempt.
#[derive(Debug, Clone)]
pub struct Started {
    pub request_id: String,
    pub attempt: u32,
    pub provider: String,
    pub round_index: u64,
    pub t_ns: u64,
    pub segment: u32,
    /// A load run's step.
    pub step: Option<u32>,
    /// The wire API whose grammar its events are read by.
    pub api: WireApi,
}

/// A load run's current step, as far as the log goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepTally {
    pub step: u32,
    pub attempt: u32,
    /// Requests the schedule holds for it.
    pub scheduled: u64,
    /// `step_closed`'s status; `None` while it runs.
    pub closed: Option<StepStatus>,
    pub sent: u64,
    /// Each send's lag (actual minus intended send time), ns.
    pub lags_ns: Vec<u64>,
    /// The send times of the last second of sends, run clock.
    pub recent_sends: std::collections::VecDeque<u64>,
    /// Final outcomes of its requests that are failures.
    pub failures: u64,
}

/// The span of sends the achieved rate is taken over.
pub const RATE_WINDOW_NS: u64 = 1_000_000_000;

/// A request's final outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Final {
    pub request_id: String,
    pub provider: String,
    pub round_index: u64,
    pub attempt: u32,
    /// The `seq` of its terminal event: the order in which requests finished.
    pub seq: u64,
    pub outcome: Outcome,
    pub class: OperationalOutcome,
    pub http_status: Option<u16>,
    pub error_type: Option<ErrorKind>,
    pub error_message: Option<String>,
    pub ttfa_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
}

/// One segment: one fetch process (or the one segment `ib-import` wrote).
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentInfo {
    pub number: u32,
    pub endpoint_mode: EndpointMode,
    /// Wall clock and run clock when it opened.
    pub opened_wall_ns: u64,
    pub opened_t_ns: u64,
    pub last_t_ns: u64,
    /// `segment_closed`'s status; `None` while open.
    pub closed: Option<SegmentStatus>,
}

/// A round released and not closed in the segment that released it.
#[derive(Debug, Clone, PartialEq)]
pub struct Released {
    pub round_index: u64,
    pub round_id: String,
    pub t_ns: u64,
    pub segment: u32,
}

#[derive(Debug)]
pub struct Tally {
    rules: Rules,
    open: HashMap<(String, u32), Open>,
    pub finals: BTreeMap<String, Final>,
    /// Attempts closed as `interrupted` (re-sent by a later fetch), by provider.
    pub interrupted: BTreeMap<String, u64>,
    pub segments: Vec<SegmentInfo>,
    /// The round in progress in the last segment, if any.
    pub current_round: Option<Released>,
    /// Released-to-closed durations of the rounds closed so far, in ms, in log order.
    pub round_ms: Vec<f64>,
    /// Which provider each started attempt belongs to.
    providers: HashMap<(String, u32), String>,
    /// A load run's step in progress, or the last one.
    pub step: Option<StepTally>,
    /// Load steps closed as complete.
    pub steps_complete: u64,
}

impl Tally {
    pub fn new(rules: Rules) -> Tally {
        Tally {
            rules,
            open: HashMap::new(),
            finals: BTreeMap::new(),
            interrupted: BTreeMap::new(),
            segments: Vec::new(),
            current_round: None,
            round_ms: Vec::new(),
            providers: HashMap::new(),
            step: None,
            steps_complete: 0,
        }
    }

    /// The attempts started and not ended, in the order they started.
    pub fn in_flight(&self) -> Vec<&Started> {
        let mut open: Vec<&Started> = self.open.values().filter_map(|o| o.started.as_ref()).collect();
        open.sort_by_key(|s| (s.t_ns, s.request_id.as_str()));
        open
    }

    /// Takes one checked line of segment `segment`.
    pub fn add(&mut self, segment: u32, env: Envelope) -> Result<()> {
        let (t_ns, seq) = (env.t_ns, env.seq);
        if let (Some(last), false) = (self.segments.last_mut(), matches!(env.event, Event::SegmentOpened(_))) {
            last.last_t_ns = last.last_t_ns.max(t_ns);
        }
        match env.event {
            Event::SegmentOpened(o) => {
                self.current_round = None;
                self.segments.push(SegmentInfo {
                    number: o.segment,
                    endpoint_mode: o.endpoint_mode,
                    opened_wall_ns: o.wall_clock_unix_ns,
                    opened_t_ns: t_ns,
                    last_t_ns: t_ns,
                    closed: None,
                });
            }
            Event::SegmentClosed(c) => {
                if let Some(last) = self.segments.last_mut() {
                    last.closed = Some(c.status);
                }
            }
            Event::StepOpened(o) => {
                self.step = Some(StepTally {
                    step: o.step,
                    attempt: o.attempt,
                    scheduled: o.scheduled_requests,
                    ..StepTally::default()
                });
            }
            Event::StepClosed(c) => {
                self.steps_complete += u64::from(c.status == StepStatus::Complete);
                if let Some(step) = self.step.as_mut().filter(|s| (s.step, s.attempt) == (c.step, c.attempt)) {
                    step.closed = Some(c.status);
                }
            }
            Event::RoundReleased(r) => {
                self.current_round = Some(Released { round_index: r.round_index, round_id: r.round_id, t_ns, segment });
            }
            Event::RoundClosed(c) => {
                if let Some(released) = self.current_round.take() {
                    if released.round_index == c.round_index && released.segment == segment {
                        self.round_ms.push(timing::ms_between(released.t_ns, t_ns));
                    }
                }
            }
            Event::RequestStarted(s) => {
                if let Some(step) = self.step.as_mut().filter(|step| Some(step.step) == s.step) {
                    step.sent += 1;
                    step.lags_ns.push(t_ns.saturating_sub(s.intended_t_ns));
                    step.recent_sends.push_back(t_ns);
                    while step.recent_sends.front().is_some_and(|&first| first + RATE_WINDOW_NS < t_ns) {
                        step.recent_sends.pop_front();
                    }
                }
                let key = (s.request_id.clone(), s.attempt);
                self.providers.insert(key.clone(), s.provider.clone());
                self.open.entry(key).or_default().started = Some(Started {
                    request_id: s.request_id,
                    attempt: s.attempt,
                    provider: s.provider,
                    round_index: s.round_index,
                    t_ns,
                    segment,
                    step: s.step,
                    api: s.api,
                });
            }
            Event::SseEvent(e) => {
                let key = (e.request_id.clone(), e.attempt);
                if !self.open.contains_key(&key) && self.providers.contains_key(&key) {
                    // ib-fetch logs every event before its attempt's terminal event; one after
                    // it would change a verdict already shown.
                    return Err(Error::bad(format!(
                        "events: seq {seq}: sse_event of request {} attempt {} after its request_terminal",
                        e.request_id, e.attempt
                    )));
                }
                self.open.entry(key).or_default().events.push((t_ns, e));
            }
            Event::RequestTerminal(term) => {
                let key = (term.request_id.clone(), term.attempt);
                let open = self.open.remove(&key).unwrap_or_default();
                if term.outcome == Outcome::Interrupted {
                    if let Some(provider) = self.providers.get(&key) {
                        *self.interrupted.entry(provider.clone()).or_default() += 1;
                    }
                    return Ok(());
                }
                // As ib-reconstruct: an attempt without its start has no row.
                let Some(started) = open.started else { return Ok(()) };
                let events: Vec<TimedEvent> =
                    open.events.iter().map(|(t, e)| TimedEvent::logged(started.t_ns, *t, e)).collect();
                let judged =
                    timing::compute_on(self.rules, started.api, &events, &timing::logged_end(&term), term.http_status);
                let class = OperationalOutcome::of(judged.end.outcome, term.http_status);
                if let Some(step) = self.step.as_mut().filter(|step| Some(step.step) == started.step) {
                    step.failures += u64::from(class.is_failure());
                }
                let replaces = self.finals.get(&term.request_id).is_none_or(|f| f.attempt <= term.attempt);
                if replaces {
                    self.finals.insert(
                        term.request_id.clone(),
                        Final {
                            request_id: term.request_id,
                            provider: started.provider,
                            round_index: started.round_index,
                            attempt: term.attempt,
                            seq,
                            outcome: judged.end.outcome,
                            class,
                            http_status: term.http_status,
                            error_type: judged.end.error_type,
                            error_message: judged.end.message,
                            ttfa_ms: judged.ttfa_ms,
                            e2e_ms: judged.e2e_latency_ms,
                        },
                    );
                }
            }
            Event::ResponseHead(_) | Event::CredentialEcho(_) => {}
        }
        Ok(())
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::follow::tests::opened;
    use inferbench_contract::event::{RequestStarted, RequestTerminal};
    use inferbench_contract::testutil;

    pub struct Log {
        pub lines: Vec<(u32, Envelope)>,
        segment: u32,
    }

    impl Log {
        pub fn new() -> Log {
            let mut log = Log { lines: Vec::new(), segment: 0 };
            log.open_segment();
            log
        }
        pub fn push(&mut self, t_ms: u64, event: Event) {
            let seq = self.lines.len() as u64;
            let env = Envelope { t_ns: t_ms * 1_000_000, ..testutil::envelope(seq, event) };
            self.lines.push((self.segment, env));
        }
        pub fn t_ms(&self) -> u64 {
            self.lines.last().map_or(0, |(_, e)| e.t_ns / 1_000_000)
        }
        pub fn open_segment(&mut self) {
            self.segment += 1;
            let t = self.t_ms();
            self.push(t, opened(self.segment));
        }
        pub fn close_segment(&mut self, t_ms: u64, status: SegmentStatus) {
            let segment = self.segment;
            self.push(t_ms, Event::SegmentClosed(testutil::segment_closed(segment, status)));
        }
        pub fn release(&mut self, t_ms: u64, round: u64) {
            self.push(t_ms, Event::RoundReleased(testutil::round_released(round, &[])));
        }
        pub fn close_round(&mut self, t_ms: u64, round: u64) {
            self.push(t_ms, Event::RoundClosed(testutil::round_closed(round)));
        }
        pub fn start(&mut self, t_ms: u64, id: &str, attempt: u32, provider: &str, round: u64) {
            let started = RequestStarted { attempt, provider: provider.into(), ..testutil::request_started(id, round) };
            self.push(t_ms, Event::RequestStarted(started));
        }
        pub fn event(&mut self, t_ms: u64, id: &str, attempt: u32, data: &str) {
            self.push(t_ms, Event::SseEvent(SseEvent { attempt, ..testutil::sse_event(id, 0, data) }));
        }
        pub fn end(&mut self, t_ms: u64, id: &str, attempt: u32, outcome: Outcome, status: Option<u16>) {
            let failed = outcome != Outcome::Completed;
            let terminal = RequestTerminal {
                attempt,
                http_status: status,
                error_type: failed.then_some(ErrorKind::HttpStatus),
                error_message: failed.then(|| format!("HTTP {}", status.unwrap_or(0))),
                done_seen: !failed,
                ..testutil::request_terminal(id, outcome)
            };
            self.push(t_ms, Event::RequestTerminal(terminal));
        }
        /// A complete streamed answer: a first token `ttfa` ms and a last one `e2e` ms after `t0`.
        pub fn answer(&mut self, t0: u64, id: &str, attempt: u32, ttfa: u64, e2e: u64) {
            self.event(t0 + ttfa, id, attempt, r#"{"choices":[{"delta":{"content":"{\"a\":"}}]}"#);
            self.event(t0 + e2e, id, attempt, r#"{"choices":[{"delta":{"content":"1}"}}]}"#);
            self.event(t0 + e2e, id, attempt, r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#);
            self.event(t0 + e2e, id, attempt, "[DONE]");
            self.end(t0 + e2e, id, attempt, Outcome::Completed, Some(200));
        }
        pub fn tally(&self) -> Tally {
            let mut tally = Tally::new(Rules::Inferbench);
            for (segment, env) in &self.lines {
                tally.add(*segment, env.clone()).unwrap();
            }
            tally
        }
    }

    #[test]
    fn finals_are_judged_and_timed_by_the_timing_function() {
        let mut log = Log::new();
        log.release(10, 0);
        log.start(10, "a", 1, "p", 0);
        log.start(10, "b", 1, "q", 0);
        log.answer(10, "a", 1, 100, 250);
        log.end(400, "b", 1, Outcome::HttpError, Some(429));
        log.close_round(400, 0);
        let tally = log.tally();
        let a = &tally.finals["a"];
        assert_eq!(
            (a.outcome, a.class, a.ttfa_ms, a.e2e_ms),
            (Outcome::Completed, OperationalOutcome::Success, Some(100.0), Some(250.0))
        );
        let b = &tally.finals["b"];
        assert_eq!(
            (b.outcome, b.class, b.ttfa_ms, b.e2e_ms),
            (Outcome::HttpError, OperationalOutcome::Http429, None, None)
        );
        assert_eq!(tally.round_ms, [390.0]);
        assert!(tally.in_flight().is_empty() && tally.current_round.is_none());
    }

    #[test]
    fn a_stream_without_an_end_is_judged_truncated_whatever_was_logged() {
        let mut log = Log::new();
        log.start(0, "a", 1, "p", 0);
        log.event(50, "a", 1, r#"{"choices":[{"delta":{"content":"x"}}]}"#);
        log.end(60, "a", 1, Outcome::Completed, Some(200));
        let a = &log.tally().finals["a"];
        assert_eq!((a.outcome, a.ttfa_ms, a.e2e_ms), (Outcome::Truncated, Some(50.0), None));
    }

    #[test]
    fn a_killed_attempt_stays_open_until_a_resume_interrupts_and_resends_it() {
        let mut log = Log::new();
        log.release(0, 0);
        log.start(0, "a", 1, "p", 0);
        let tally = log.tally();
        assert_eq!(tally.in_flight().len(), 1);
        assert_eq!(tally.current_round.as_ref().map(|r| r.round_index), Some(0));
        log.open_segment();
        log.end(1000, "a", 1, Outcome::Interrupted, None);
        let tally = log.tally();
        assert!(tally.in_flight().is_empty() && tally.finals.is_empty());
        assert_eq!(tally.interrupted["p"], 1);
        assert!(tally.current_round.is_none(), "a new segment has no round in progress yet");
        log.release(1000, 0);
        log.start(1000, "a", 2, "p", 0);
        log.answer(1000, "a", 2, 30, 60);
        let tally = log.tally();
        assert_eq!(tally.finals["a"].attempt, 2);
        assert_eq!(tally.segments.len(), 2);
    }

    #[test]
    fn an_event_after_its_terminal_is_refused() {
        let mut log = Log::new();
        log.start(0, "a", 1, "p", 0);
        log.end(10, "a", 1, Outcome::Timeout, Some(200));
        log.event(20, "a", 1, "[DONE]");
        let mut tally = Tally::new(Rules::Inferbench);
        let results: Vec<Result<()>> = log.lines.iter().map(|(s, e)| tally.add(*s, e.clone())).collect();
        let err = results.into_iter().find_map(Result::err).expect("refused");
        assert!(err.to_string().contains("after its request_terminal"), "{err}");
    }
}
