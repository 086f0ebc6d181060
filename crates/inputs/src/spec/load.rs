//! `load`: inferbench's own section, which makes a spec a load workflow's. Where the
//! closed-loop workflow (the reference's) sends one request at a time per provider, a load
//! workflow sends requests at their arrival times, step after step at rising rates, to every
//! provider of the run at once: the same item at the same intended time (a paired step).
//!
//! A step's requests arrive over `step_seconds`; those whose intended send time falls in its
//! first `warmup_seconds` or its last `cooldown_seconds` are sent and logged like any other
//! but are not in the step's figures. When a step's last arrival has been sent, the step
//! drains: every request still in flight runs to its end (it is counted, never dropped), and
//! only then does the next step start.
//!
//! A closed-loop step (`mode: closed_loop`) has no arrivals: `concurrencies` users per provider
//! each send `requests_per_user` requests one after the other, the next the moment the one
//! before ended. Its figures are those of the requests sent after its first `warmup_seconds`
//! and before its last `cooldown_seconds`, by the log's own times.
//!
//! A spec holds either `load` or the reference's `execution_plan`: a load workflow's plan is
//! its `load` section.
use super::check::{shown, Reader};
use super::search::CapacitySearch;
use super::workload::{self, Workload};
use inferbench_contract::vocab::{ArrivalProcess, LoadMode};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The section's key.
pub const LOAD_KEY: &str = "load";

/// The longest step: a day.
pub const MAX_STEP_SECONDS: f64 = 86_400.0;
/// The highest rate a step may ask of each provider, in requests per second.
pub const MAX_RATE: f64 = 100_000.0;
/// The most requests a load run may schedule (all steps, all providers): each is a row of
/// `schedule.parquet` and a few lines of the log.
pub const MAX_REQUESTS: f64 = 20_000_000.0;
/// The largest accepted `burstiness`.
pub const MAX_BURSTINESS: f64 = 1_000.0;

/// A load workflow's plan: the `load` section, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPlan {
    pub mode: LoadMode,
    pub arrivals: ArrivalProcess,
    /// The gamma process's shape (`ArrivalProcess::Gamma` only).
    pub burstiness: Option<f64>,
    /// The trace replayed (`ArrivalProcess::Trace` only), resolved against the spec's
    /// directory; its logical name, as written, is `trace_name`.
    pub trace: Option<PathBuf>,
    pub trace_name: Option<String>,
    /// One entry per step, in order; none when the plan is a capacity search.
    pub steps: Vec<StepTarget>,
    /// A capacity search in place of `steps`: `ib-search` runs its probes, each a one-step
    /// load run of its own.
    pub search: Option<CapacitySearch>,
    /// The most requests of one provider in flight (`LoadMode::Capped` only).
    pub concurrency_cap: Option<u32>,
    /// The requests each user of a closed-loop step sends (`LoadMode::ClosedLoop` only).
    pub requests_per_user: Option<u32>,
    pub step_seconds: f64,
    pub warmup_seconds: f64,
    pub cooldown_seconds: f64,
    /// Seeds the arrival times (Poisson, gamma) and a synthetic workload's lengths and words;
    /// the schedule is a function of the lock.
    pub seed: u64,
    /// What the steps send: the dataset's items or synthetic prompts.
    pub workload: Workload,
    pub objectives: Objectives,
}

/// What one step asks of every provider.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepTarget {
    /// Arrivals at this mean rate, in requests per second per provider.
    Rate(f64),
    /// The trace replayed this many times faster than recorded.
    Speedup(f64),
    /// Closed loop: this many users per provider, each sending its next request the moment
    /// its previous one ended, `requests_per_user` each.
    Users(u32),
}

/// The most users a closed-loop step may have per provider.
pub const MAX_USERS: u64 = 10_000;

/// The service-level objectives a request must all meet to count in the goodput, and the
/// share of requests that must meet them for a step to hold. Each latency objective is
/// optional; a request meets an absent one. A request that failed meets none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objectives {
    /// Time to first output token (TTFO, the field's TTFT), in ms from the intended send.
    pub ttft_ms: Option<f64>,
    /// Time to first visible answer token, in ms from the intended send.
    pub ttfa_ms: Option<f64>,
    /// Time per output token after the first (TPOT), in ms.
    pub tpot_ms: Option<f64>,
    /// Every inter-token gap of the answer, in ms.
    pub itl_ms: Option<f64>,
    /// End-to-end latency, in ms from the intended send.
    pub e2e_ms: Option<f64>,
    /// Whether the answer must also be correct (scored by the family's rubric); false for a
    /// synthetic workload, whose answers no rubric scores.
    pub correct: bool,
    /// The share of a step's requests that must meet every objective for the step to hold:
    /// 0.95 asks that the 95th percentile of each latency meets its objective, jointly.
    pub goodput_target: f64,
}

impl Default for Objectives {
    fn default() -> Self {
        Objectives {
            ttft_ms: None,
            ttfa_ms: None,
            tpot_ms: None,
            itl_ms: None,
            e2e_ms: None,
            correct: true,
            goodput_target: 0.95,
        }
    }
}

impl LoadPlan {
    /// The measured window of each step, as offsets from its start in ns: `[warm-up,
    /// step − cool-down)`.
    pub fn window_ns(&self) -> (u64, u64) {
        (seconds_ns(self.warmup_seconds), seconds_ns(self.step_seconds - self.cooldown_seconds))
    }

    /// About how many requests the rate steps send each provider (a trace's are counted when
    /// it is read).
    pub fn requests_per_provider(&self) -> f64 {
        requests_per_provider(&self.steps, self.step_seconds, self.requests_per_user)
    }

    /// The trace the plan replays, read and checked; `None` for the other arrival processes.
    /// A synthetic workload sends each line's sizes: a line whose sizes cannot be sent (and
    /// that the spec's lengths do not stand in for) is refused, naming it.
    pub fn read_trace(&self) -> inferbench_contract::Result<Option<crate::trace::Trace>> {
        let Some(path) = self.trace.as_deref() else { return Ok(None) };
        let synthetic = self.workload.synthetic();
        let check = |a: &crate::trace::Arrival| match synthetic {
            Some(s) => s
                .check_sizes(a.input_tokens, a.output_tokens)
                .map_err(|why| format!("{why} (a synthetic workload sends each line's sizes)")),
            None => Ok(()),
        };
        crate::trace::Trace::load_with(path, check).map(Some)
    }

    /// A step's length in ns.
    pub fn step_ns(&self) -> u64 {
        seconds_ns(self.step_seconds)
    }
}

/// The requests the rate and user steps send each provider (about, for Poisson and gamma
/// arrivals).
fn requests_per_provider(steps: &[StepTarget], step_seconds: f64, requests_per_user: Option<u32>) -> f64 {
    let each = |s: &StepTarget| match s {
        StepTarget::Rate(rate) => rate * step_seconds,
        StepTarget::Users(users) => f64::from(*users) * f64::from(requests_per_user.unwrap_or(0)),
        StepTarget::Speedup(_) => 0.0,
    };
    steps.iter().map(each).sum()
}

/// Whole nanoseconds of a non-negative number of seconds.
pub fn seconds_ns(seconds: f64) -> u64 {
    (seconds * 1e9).round() as u64
}

fn positive_at_most(max: f64) -> impl Fn(f64) -> Result<(), String> {
    move |x| {
        if x > 0.0 && x <= max {
            Ok(())
        } else {
            Err(format!("must be greater than 0 and at most {max}, found {x}"))
        }
    }
}

fn at_least_zero(x: f64) -> Result<(), String> {
    if x >= 0.0 {
        Ok(())
    } else {
        Err(format!("must be 0 or more, found {x}"))
    }
}

/// Reads the `load` section, if the spec has one. Every problem is reported; what could not
/// be read reads as a default so that the rest is still checked.
pub(super) fn read(r: &mut Reader, dir: &Path) -> Option<LoadPlan> {
    r.get(LOAD_KEY)?;
    if r.get("execution_plan").is_some() {
        r.push(
            "execution_plan",
            "a load workflow's plan is its `load` section; remove `execution_plan` (the closed-loop workflow's)",
        );
    }
    let mode = vocabulary(r, "load.mode", LoadMode::NAMES).unwrap_or(LoadMode::OpenLoop);
    let closed = mode == LoadMode::ClosedLoop;
    // A closed loop's users send when their answers end: no arrival process, no step length.
    for key in ["load.arrivals", "load.step_seconds"] {
        match (closed, r.get(key).is_some()) {
            (true, true) => r.push(key, "a closed-loop step has none: its users send as their answers end"),
            (false, false) => r.push(key, "missing"),
            _ => {}
        }
    }
    let arrivals = vocabulary(r, "load.arrivals", ArrivalProcess::NAMES).unwrap_or(ArrivalProcess::Constant);
    let burstiness = r.number("load.burstiness", positive_at_most(MAX_BURSTINESS));
    match (arrivals, r.get("load.burstiness").is_some()) {
        (ArrivalProcess::Gamma, false) => r.push("load.burstiness", "missing: gamma arrivals need their shape"),
        (ArrivalProcess::Gamma, true) | (_, false) => {}
        (other, true) => r.push("load.burstiness", format!("only gamma arrivals have one, not {other}")),
    }
    let trace_name = r.string("load.trace");
    if let Some(name) = &trace_name {
        let path = Path::new(name);
        if path.is_absolute() || path.components().any(|c| c == std::path::Component::ParentDir) {
            r.push("load.trace", "must be a path inside the spec's directory (relative, without `..`)");
        }
    }
    match (arrivals, r.get("load.trace").is_some()) {
        (ArrivalProcess::Trace, false) => r.push("load.trace", "missing: trace arrivals replay a trace file"),
        (ArrivalProcess::Trace, true) | (_, false) => {}
        (other, true) => r.push("load.trace", format!("only trace arrivals replay a trace, not {other}")),
    }
    let search = super::search::read(r, mode, arrivals);
    let steps = match (closed, &search) {
        (true, _) => users(r),
        (false, Some(_)) => Vec::new(),
        (false, None) => steps(r, arrivals),
    };
    let workload = workload::read(r, !closed && arrivals == ArrivalProcess::Trace);
    if !closed && r.get("load.concurrencies").is_some() {
        r.push("load.concurrencies", format!("only a closed-loop step has users, not {mode}: give `rates`"));
    }
    let requests_per_user = r.integer("load.requests_per_user", 1, 1_000_000).map(|n| n as u32);
    match (closed, r.get("load.requests_per_user").is_some()) {
        (true, false) => r.push("load.requests_per_user", "missing: how many requests each user sends"),
        (false, true) => r.push("load.requests_per_user", format!("only a closed-loop step has users, not {mode}")),
        _ => {}
    }
    let cap = r.integer("load.concurrency_cap", 1, 1_000_000).map(|n| n as u32);
    match (mode, r.get("load.concurrency_cap").is_some()) {
        (LoadMode::Capped, false) => r.push("load.concurrency_cap", "missing: a capped step needs its cap"),
        (LoadMode::Capped, true) | (_, false) => {}
        (other, true) => r.push("load.concurrency_cap", format!("only the capped mode has a cap, not {other}")),
    }
    // Derived checks run only on values that were read, so one mistake is one problem.
    let step = if closed { None } else { r.number("load.step_seconds", positive_at_most(MAX_STEP_SECONDS)) };
    let warmup = r.number("load.warmup_seconds", at_least_zero);
    let cooldown = r.number("load.cooldown_seconds", at_least_zero);
    if let Some(step) = step.filter(|_| !closed) {
        let (warmup, cooldown) = (warmup.unwrap_or(0.0), cooldown.unwrap_or(0.0));
        if warmup + cooldown >= step {
            let what =
                format!("warm-up {warmup} s and cool-down {cooldown} s leave nothing of a {step} s step to measure");
            r.push("load.warmup_seconds", what);
        }
    }
    let (step_seconds, warmup_seconds, cooldown_seconds) =
        (step.unwrap_or(1.0), warmup.unwrap_or(0.0), cooldown.unwrap_or(0.0));
    // Each provider is sent every arrival: the run's total is this times the providers
    // (checked against the provider table, `LoadPlan::requests_per_provider`).
    let per_provider = match &search {
        Some(search) => search.max_rate * step_seconds * f64::from(search.max_probes),
        None => requests_per_provider(&steps, step_seconds, requests_per_user),
    };
    if per_provider > MAX_REQUESTS {
        let what =
            format!("about {per_provider:.0} requests per provider (rates × step_seconds): at most {MAX_REQUESTS:.0}");
        r.push("load.rates", what);
    }
    if let Some(input) = workload.synthetic().and_then(|s| s.input_tokens.as_ref()) {
        let tokens = per_provider * workload::mean(input);
        if tokens > workload::MAX_PROMPT_TOKENS {
            let what = format!(
                "about {tokens:.0} prompt tokens per provider (requests × mean length): at most {:.0}, as the \
                 schedule holds every prompt",
                workload::MAX_PROMPT_TOKENS
            );
            r.push("load.workload.input_tokens", what);
        }
    }
    let synthetic = workload.synthetic().is_some();
    let plan = LoadPlan {
        mode,
        arrivals,
        burstiness: if arrivals == ArrivalProcess::Gamma { burstiness } else { None },
        trace: trace_name.as_ref().map(|name| dir.join(name)),
        trace_name,
        steps,
        search,
        concurrency_cap: cap,
        requests_per_user,
        step_seconds,
        warmup_seconds,
        cooldown_seconds,
        seed: r.integer("load.seed", 0, u64::MAX).unwrap_or(0),
        workload,
        objectives: objectives(r, synthetic),
    };
    let o = &plan.objectives;
    let timed = [o.ttft_ms, o.ttfa_ms, o.tpot_ms, o.itl_ms, o.e2e_ms].iter().any(Option::is_some);
    if plan.search.is_some() && !timed {
        let what = "a capacity search needs a latency objective to find where a provider breaks it: \
                    give ttft_ms, ttfa_ms, tpot_ms, itl_ms or e2e_ms";
        r.push("load.objectives", what);
    }
    Some(plan)
}

/// A value of one of the contract's vocabularies, whose spellings are `names`.
fn vocabulary<T: std::str::FromStr>(r: &mut Reader, at: &str, names: &[&str]) -> Option<T> {
    let text = r.string(at)?;
    let value = text.parse::<T>().ok();
    if value.is_none() {
        r.push(at, format!("`{text}` is not one of {}", names.join(", ")));
    }
    value
}

/// `load.concurrencies`: a closed loop's users per provider, one step each.
fn users(r: &mut Reader) -> Vec<StepTarget> {
    for other in ["load.rates", "load.speedups"] {
        if r.get(other).is_some() {
            r.push(other, "a closed-loop step has users, not a rate: give `concurrencies`");
        }
    }
    let key = "load.concurrencies";
    let Some(value) = r.get(key) else {
        r.push(key, "missing: the steps' users per provider, e.g. [1, 8, 32]");
        return Vec::new();
    };
    let Some(list) = value.as_array().filter(|l| !l.is_empty()) else {
        r.push(key, format!("expected a non-empty list of integers, found {}", shown(value)));
        return Vec::new();
    };
    let mut steps = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        match item.as_u64().filter(|n| (1..=MAX_USERS).contains(n)) {
            Some(n) => steps.push(StepTarget::Users(n as u32)),
            None => r.push(
                &format!("{key}[{index}]"),
                format!("expected an integer from 1 to {MAX_USERS}, found {}", shown(item)),
            ),
        }
    }
    steps
}

/// `load.rates` (every process but a trace) or `load.speedups` (a trace, default `[1]`).
fn steps(r: &mut Reader, arrivals: ArrivalProcess) -> Vec<StepTarget> {
    let (key, other) = if arrivals == ArrivalProcess::Trace {
        ("load.speedups", "load.rates")
    } else {
        ("load.rates", "load.speedups")
    };
    if r.get(other).is_some() {
        let what = if arrivals == ArrivalProcess::Trace {
            "a trace is replayed at its own rate: give `speedups` instead"
        } else {
            "only a trace replay has speed-ups: give `rates`"
        };
        r.push(other, what);
    }
    let Some(value) = r.get(key) else {
        if arrivals == ArrivalProcess::Trace {
            return vec![StepTarget::Speedup(1.0)];
        }
        r.push(key, "missing: the steps' rates, in requests per second per provider, e.g. [1, 2, 4]");
        return Vec::new();
    };
    let Some(list) = value.as_array().filter(|l| !l.is_empty()) else {
        r.push(key, format!("expected a non-empty list of numbers, found {}", shown(value)));
        return Vec::new();
    };
    let mut steps = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        let at = format!("{key}[{index}]");
        if let Some(x) = r.number_of(&at, item, positive_at_most(MAX_RATE)) {
            steps.push(if arrivals == ArrivalProcess::Trace { StepTarget::Speedup(x) } else { StepTarget::Rate(x) });
        }
    }
    steps
}

fn objectives(r: &mut Reader, synthetic: bool) -> Objectives {
    let ms = |r: &mut Reader, key: &str| r.number(&format!("load.objectives.{key}"), positive_at_most(3_600_000.0));
    let correct = match r.get("load.objectives.correct") {
        None => !synthetic,
        Some(Value::Bool(true)) if synthetic => {
            let what = "a synthetic workload's answers are not scored (no rubric, no gold): set it to false or \
                        leave it out";
            r.push("load.objectives.correct", what);
            false
        }
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            r.push("load.objectives.correct", format!("expected true or false, found {}", shown(other)));
            true
        }
    };
    Objectives {
        ttft_ms: ms(r, "ttft_ms"),
        ttfa_ms: ms(r, "ttfa_ms"),
        tpot_ms: ms(r, "tpot_ms"),
        itl_ms: ms(r, "itl_ms"),
        e2e_ms: ms(r, "e2e_ms"),
        correct,
        goodput_target: r.number("load.objectives.goodput_target", positive_at_most(1.0)).unwrap_or(0.95),
    }
}
