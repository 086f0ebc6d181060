//! A load run's figures per step and provider (`metrics.json`'s `load` section; the
//! definitions are in [`DEFINITIONS`], written into the document for its readers).
use crate::facts::LoadFacts;
use crate::timeline;
use inferbench_contract::documents::{
    ClientLimits, Knee, LoadMetrics, LoadObjectives, LoadWorkload, OutcomeCount, Quantiles, StepMetrics,
    SEND_LAG_REASON,
};
use inferbench_contract::manifest::StepFacts;
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::{LoadMode, OperationalOutcome, StepStatus, WorkloadKind};
use inferbench_inputs::spec::{seconds_ns, LoadPlan, Objectives, StepTarget};
use inferbench_stats::percentile::Samples;
use std::collections::{BTreeMap, HashMap};

/// The client's bounds: a step whose send-lag p99 is over 1 ms, or (open loop) whose achieved
/// rate is under 99 % of the offered one, measured the client and not the provider.
pub const LIMITS: ClientLimits = ClientLimits { max_send_lag_p99_ms: 1.0, min_achieved_share: 0.99 };

/// How the figures are defined, in words.
pub const DEFINITIONS: &[&str] = &[
    "window: a step's figures are those of the requests whose intended send time falls in [warm-up, step − cool-down) \
     of the step; the others are sent and logged but not counted",
    "intended send time: the step's step_opened plus the request's schedule offset; TTFT, TTFA and E2E are measured \
     from it (the *_from_send_ms figures from the actual send), so a client or queue that falls behind is counted",
    "send lag: the actual send minus the intended send time, or, for a request a capped step's queue held, minus the \
     moment its slot freed (the wait before that is queued_ms, the cap's, and counts in its latency)",
    "offered rate: requests intended in the window per second of it; achieved rate: requests of the step actually \
     sent in the window per second of it; completed per second and tokens per second: the step's requests that \
     completed in the window (their last answer token in it) and their answer tokens, per second of it: the \
     throughput in the steady state, which past a provider's capacity stays at what it can serve",
    "ITL: each answer chunk that completes k tokens, Δ after the chunk before it that completed any, contributes k \
     gaps of Δ/k; the first such chunk's tokens after the first contribute gaps of 0 (they came at once); a token \
     belongs to the chunk holding its last byte, the answer tokenized whole (o200k_base)",
    "TPOT: (last answer token − first answer token) / (answer tokens − 1), per completed request of 2 tokens or more",
    "goodput: the share of the window's requests that completed and met every objective given (latencies from the \
     intended send; every ITL gap of the request for itl_ms) and, unless correct is false, answered correctly; a \
     step holds when the goodput reaches the target; goodput without lag: the same with the client's own send lag \
     taken out of every latency (a capped step's queue wait stays in)",
    "client-bound: a step whose send-lag p99 exceeds 1 ms, whose achieved rate is under 99 % of the offered rate \
     (open loop), or in which the client ran out of a resource of its own (file descriptors, ports, memory); its \
     figures are the client's, not the provider's",
    "knee: per provider, the step of highest goodput per second among the steps that are not client-bound",
    "percentiles: nearest rank; pK of fewer than 100 / (100 − K) samples is named in too_few_samples (a p99 of \
     fewer than 100 samples is the maximum); tokens/s percentiles past p50 are floors (the value at least K % of \
     streams reached)",
];

/// The inter-token gaps of one answer, ms (see [`DEFINITIONS`]).
pub fn itl_gaps(chunk_ms: &[f64], chunk_tokens: &[i64]) -> Vec<f64> {
    let mut gaps = Vec::new();
    let mut previous: Option<f64> = None;
    for (&at, &tokens) in chunk_ms.iter().zip(chunk_tokens).filter(|(_, &k)| k > 0) {
        match previous {
            None => gaps.extend(std::iter::repeat_n(0.0, (tokens - 1) as usize)),
            Some(before) => gaps.extend(std::iter::repeat_n((at - before) / tokens as f64, tokens as usize)),
        }
        previous = Some(at);
    }
    gaps
}

/// Nearest-rank quantiles; `floors` takes p90, p95 and p99 from the lower tail.
pub fn quantiles(values: impl IntoIterator<Item = f64>, floors: bool) -> Quantiles {
    let samples = Samples::new(values);
    let n = samples.len() as u64;
    let at = |k: u64| if floors && k > 50 { samples.lower_floor(k) } else { samples.upper(k) };
    let too_few_samples =
        [50u64, 90, 95, 99].iter().filter(|&&k| n > 0 && n * (100 - k) < 100).map(|k| format!("p{k}")).collect();
    Quantiles {
        n,
        p50: at(50),
        p90: at(90),
        p95: at(95),
        p99: at(99),
        max: if floors { samples.lower_floor(100) } else { samples.upper(100) },
        too_few_samples,
    }
}

/// The `load` section of a run whose spec holds `plan`. `correct` says which requests were
/// answered correctly; `steps` are the log's step runs (the last run of each step counts).
pub fn compute(
    plan: &LoadPlan,
    providers: &[String],
    schedule: &[ScheduleRow],
    responses: Vec<LoadFacts>,
    correct: &HashMap<String, bool>,
    steps: &[StepFacts],
) -> LoadMetrics {
    let (window_start, window_end) = plan.window_ns();
    let responses: HashMap<String, LoadFacts> = responses.into_iter().map(|r| (r.request_id.clone(), r)).collect();
    // The requests of each step and provider intended in the window, and all of the step's,
    // by the schedule.
    let mut in_window: BTreeMap<(u32, &str), Vec<&str>> = BTreeMap::new();
    let mut in_step: BTreeMap<(u32, &str), Vec<&str>> = BTreeMap::new();
    for row in schedule {
        let Some(step) = row.step else { continue };
        in_step.entry((step as u32, row.provider.as_str())).or_default().push(&row.request_id);
        if row.intended_offset_ns.is_some_and(|offset| (window_start..window_end).contains(&(offset as u64))) {
            in_window.entry((step as u32, row.provider.as_str())).or_default().push(&row.request_id);
        }
    }
    let mut rows = Vec::new();
    let mut timelines = Vec::new();
    for (index, target) in plan.steps.iter().enumerate() {
        let step = index as u32;
        let run = steps.iter().rev().find(|s| s.step == step);
        let of_step: Vec<&LoadFacts> = in_step
            .range((step, "")..(step + 1, ""))
            .flat_map(|(_, ids)| ids.iter().filter_map(|id| responses.get(*id)))
            .collect();
        let first_send = of_step.iter().map(|r| r.started_t_ns).min().unwrap_or(0);
        timelines.push(timeline::timeline(step, run.map_or(first_send, |r| r.opened_t_ns as i64), &of_step));
        // A closed loop's window is by the log's own times: from its opening plus the warm-up
        // to its closing less the cool-down; its requests are those sent in it.
        let window = match (target, run) {
            (StepTarget::Users(_), Some(run)) => {
                let length = run.closed_t_ns.unwrap_or(run.opened_t_ns).saturating_sub(run.opened_t_ns);
                let (start, end) =
                    (seconds_ns(plan.warmup_seconds), length.saturating_sub(seconds_ns(plan.cooldown_seconds)));
                let opened = run.opened_t_ns as i64;
                for provider in providers {
                    let sent: Vec<&str> = in_step
                        .get(&(step, provider.as_str()))
                        .into_iter()
                        .flatten()
                        .copied()
                        .filter(|id| {
                            responses
                                .get(*id)
                                .is_some_and(|r| (start as i64..end as i64).contains(&(r.started_t_ns - opened)))
                        })
                        .collect();
                    in_window.insert((step, provider.as_str()), sent);
                }
                (start, end.max(start))
            }
            _ => (window_start, window_end),
        };
        let lags: Vec<f64> = in_window
            .range((step, "")..(step + 1, ""))
            .flat_map(|(_, ids)| ids.iter().filter_map(|id| responses.get(*id)))
            .map(LoadFacts::send_lag_ms)
            .collect();
        let step_lag = quantiles(lags, false);
        for provider in providers {
            let ids = in_window.get(&(step, provider.as_str())).map(Vec::as_slice).unwrap_or(&[]);
            let facts: Vec<&LoadFacts> = ids.iter().filter_map(|id| responses.get(*id)).collect();
            let all = in_step.get(&(step, provider.as_str())).map(Vec::as_slice).unwrap_or(&[]);
            let all: Vec<&LoadFacts> = all.iter().filter_map(|id| responses.get(*id)).collect();
            let counted = Counted { window, requests: ids.len(), in_window: &facts, step: &all };
            let mut row = step_row(plan, step, *target, provider, counted, correct, run);
            row.client_bound = client_bound(plan, &row, &step_lag, run, &facts);
            rows.push(row);
        }
    }
    let knees = providers
        .iter()
        .filter_map(|provider| {
            rows.iter()
                .filter(|r| &r.provider == provider && r.client_bound.is_empty() && r.requests > 0)
                .max_by(|a, b| a.goodput_per_second.total_cmp(&b.goodput_per_second))
                .map(|r| Knee {
                    provider: provider.clone(),
                    step: r.step,
                    offered_rate: r.offered_rate,
                    goodput_per_second: r.goodput_per_second,
                })
        })
        .collect();
    LoadMetrics {
        mode: plan.mode,
        arrivals: plan.arrivals,
        burstiness: plan.burstiness,
        trace: plan.trace_name.clone(),
        concurrency_cap: plan.concurrency_cap,
        step_seconds: plan.step_seconds,
        warmup_seconds: plan.warmup_seconds,
        cooldown_seconds: plan.cooldown_seconds,
        workload: workload(plan),
        objectives: objectives(&plan.objectives),
        client_limits: LIMITS,
        definitions: DEFINITIONS.iter().map(|d| d.to_string()).collect(),
        steps: rows,
        knees,
        timelines,
    }
}

/// The spec's workload, as `metrics.json` states it.
fn workload(plan: &LoadPlan) -> LoadWorkload {
    match plan.workload.synthetic() {
        None => LoadWorkload::default(),
        Some(w) => LoadWorkload {
            kind: WorkloadKind::Synthetic,
            input_tokens: w.input_tokens.clone(),
            output_tokens: w.output_tokens.clone(),
            sizes_from_trace: plan.arrivals == inferbench_contract::vocab::ArrivalProcess::Trace,
            shared_prefix_tokens: w.shared_prefix_tokens,
            ignore_eos: w.ignore_eos,
        },
    }
}

fn objectives(o: &Objectives) -> LoadObjectives {
    LoadObjectives {
        ttft_ms: o.ttft_ms,
        ttfa_ms: o.ttfa_ms,
        tpot_ms: o.tpot_ms,
        itl_ms: o.itl_ms,
        e2e_ms: o.e2e_ms,
        correct: o.correct,
        goodput_target: o.goodput_target,
    }
}

/// One request's latencies from its intended send, ms.
struct FromIntended {
    ttft: Option<f64>,
    ttfa: Option<f64>,
    e2e: Option<f64>,
}

fn from_intended(r: &LoadFacts) -> FromIntended {
    latencies_after(r, (r.started_t_ns - r.intended_t_ns) as f64 / 1e6)
}

/// One request's latencies with `lag` ms added to those from its actual send.
fn latencies_after(r: &LoadFacts, lag: f64) -> FromIntended {
    FromIntended {
        ttft: r.ttfo_ms.map(|x| x + lag),
        ttfa: r.ttfa_ms.map(|x| x + lag),
        e2e: r.e2e_latency_ms.map(|x| x + lag),
    }
}

/// (last − first answer token) / (tokens − 1), for a completed answer of 2 tokens or more
/// that did not arrive at once: a buffered answer has no time per token to measure (and so
/// cannot meet a TPOT objective by being flushed).
fn tpot(r: &LoadFacts) -> Option<f64> {
    (r.complete && r.visible_answer_tokens >= 2 && !r.answer_buffered).then_some(())?;
    let first = r.answer_chunk_ms.iter().zip(&r.answer_chunk_tokens).find(|(_, &k)| k > 0)?.0;
    let last = r.answer_chunk_ms.iter().zip(&r.answer_chunk_tokens).rfind(|(_, &k)| k > 0)?.0;
    Some((last - first) / (r.visible_answer_tokens - 1) as f64)
}

/// Whether `r` met every objective, its latencies measured from its intended send.
fn good(r: &LoadFacts, o: &Objectives, correct: bool) -> bool {
    meets(r, &from_intended(r), o, correct)
}

/// Whether `r` met every objective without the client's own lag (the queue wait of a capped
/// step stays in).
fn good_without_lag(r: &LoadFacts, o: &Objectives, correct: bool) -> bool {
    meets(r, &latencies_after(r, r.queued_ms()), o, correct)
}

fn meets(r: &LoadFacts, t: &FromIntended, o: &Objectives, correct: bool) -> bool {
    let within = |value: Option<f64>, bound: Option<f64>| bound.is_none_or(|b| value.is_some_and(|v| v <= b));
    r.complete
        && within(t.ttft, o.ttft_ms)
        && within(t.ttfa, o.ttfa_ms)
        && within(t.e2e, o.e2e_ms)
        && within(tpot(r), o.tpot_ms)
        && o.itl_ms.is_none_or(|b| itl_gaps(&r.answer_chunk_ms, &r.answer_chunk_tokens).iter().all(|g| *g <= b))
        && (!o.correct || correct)
}

/// The requests a step row counts: its window (from the step's opening, ns), how many were
/// intended in it, the responses of those, and the responses of every request of the step (for
/// what was sent and what ended in the window).
struct Counted<'a> {
    window: (u64, u64),
    requests: usize,
    in_window: &'a [&'a LoadFacts],
    step: &'a [&'a LoadFacts],
}

fn step_row(
    plan: &LoadPlan,
    step: u32,
    target: StepTarget,
    provider: &str,
    counted: Counted,
    correct: &HashMap<String, bool>,
    run: Option<&StepFacts>,
) -> StepMetrics {
    let Counted { window: (window_start, window_end), requests, in_window: facts, step: all } = counted;
    let window_seconds = (window_end - window_start) as f64 / 1e9;
    let opened = run.map_or(0, |s| s.opened_t_ns as i64);
    let in_window = |t_ns: i64| (window_start as i64..window_end as i64).contains(&(t_ns - opened));
    let sent_in_window = all.iter().filter(|r| in_window(r.started_t_ns)).count();
    // Throughput is what ended in the window, whichever request it was (the steady state).
    let ended_in_window: Vec<&&LoadFacts> = all
        .iter()
        .filter(|r| r.complete && r.e2e_latency_ms.is_some_and(|e2e| in_window(r.started_t_ns + (e2e * 1e6) as i64)))
        .collect();
    let completed: Vec<&&LoadFacts> = facts.iter().filter(|r| r.complete).collect();
    let is_correct = |r: &LoadFacts| correct.get(&r.request_id).copied().unwrap_or(false);
    let good_count = facts.iter().filter(|r| good(r, &plan.objectives, is_correct(r))).count();
    let good_without_lag = facts.iter().filter(|r| good_without_lag(r, &plan.objectives, is_correct(r))).count();
    let per_second = |n: usize| n as f64 / window_seconds;
    let share = |n: usize| (requests > 0).then(|| n as f64 / requests as f64);
    let mut outcomes: BTreeMap<OperationalOutcome, u64> = OperationalOutcome::ALL.iter().map(|c| (*c, 0)).collect();
    for r in facts {
        *outcomes.entry(r.operational_outcome).or_default() += 1;
    }
    let intended: Vec<FromIntended> = facts.iter().map(|r| from_intended(r)).collect();
    let goodput = share(good_count);
    StepMetrics {
        step,
        provider: provider.to_string(),
        target_rate: if let StepTarget::Rate(rate) = target { Some(rate) } else { None },
        speedup: if let StepTarget::Speedup(x) = target { Some(x) } else { None },
        users: if let StepTarget::Users(n) = target { Some(n) } else { None },
        attempt: run.map_or(0, |s| s.attempt),
        window_seconds,
        offered_rate: per_second(requests),
        achieved_rate: per_second(sent_in_window),
        requests: requests as u64,
        completed: completed.len() as u64,
        completed_per_second: per_second(ended_in_window.len()),
        output_tokens_per_second: ended_in_window.iter().map(|r| r.visible_answer_tokens as f64).sum::<f64>()
            / window_seconds,
        stream_tokens_per_second: quantiles(completed.iter().filter_map(|r| r.output_tokens_per_second), true),
        ttft_ms: quantiles(intended.iter().filter_map(|t| t.ttft), false),
        ttfa_ms: quantiles(intended.iter().filter_map(|t| t.ttfa), false),
        e2e_ms: quantiles(intended.iter().filter_map(|t| t.e2e), false),
        ttft_from_send_ms: quantiles(facts.iter().filter_map(|r| r.ttfo_ms), false),
        ttfa_from_send_ms: quantiles(facts.iter().filter_map(|r| r.ttfa_ms), false),
        e2e_from_send_ms: quantiles(facts.iter().filter_map(|r| r.e2e_latency_ms), false),
        itl_ms: quantiles(completed.iter().flat_map(|r| itl_gaps(&r.answer_chunk_ms, &r.answer_chunk_tokens)), false),
        tpot_ms: quantiles(completed.iter().filter_map(|r| tpot(r)), false),
        send_lag_ms: quantiles(facts.iter().map(|r| r.send_lag_ms()), false),
        queued_ms: quantiles(facts.iter().map(|r| r.queued_ms()), false),
        outcomes: outcomes.into_iter().map(|(class, count)| OutcomeCount { class, count }).collect(),
        goodput,
        goodput_without_lag: share(good_without_lag),
        goodput_per_second: per_second(good_count),
        // No rubric scores a synthetic answer: its accuracy is not 0, it does not exist.
        accuracy: share(facts.iter().filter(|r| is_correct(r)).count()).filter(|_| plan.workload.synthetic().is_none()),
        holds: goodput.is_some_and(|g| g >= plan.objectives.goodput_target),
        client_bound: Vec::new(),
        client_cpu_seconds: run.and_then(|s| s.cpu_ns).map(|ns| ns as f64 / 1e9),
        peak_in_flight: run.map_or(0, |s| s.peak_in_flight),
    }
}

/// Why a step's figures are the client's (the lag is the step's over every provider: one
/// client sent them all).
fn client_bound(
    plan: &LoadPlan,
    row: &StepMetrics,
    step_lag: &Quantiles,
    run: Option<&StepFacts>,
    facts: &[&LoadFacts],
) -> Vec<String> {
    let mut reasons = Vec::new();
    match run {
        None => reasons.push("the log holds no run of this step".to_string()),
        Some(s) if s.status != Some(StepStatus::Complete) => {
            reasons.push("the step did not complete (the fetch was stopped during it)".to_string())
        }
        Some(s) if s.client_resource_errors > 0 => reasons.push(format!(
            "{} request(s) failed on a resource of the client (file descriptors, ports, memory)",
            s.client_resource_errors
        )),
        Some(_) => {}
    }
    if let Some(p99) = step_lag.p99.filter(|p| *p > LIMITS.max_send_lag_p99_ms) {
        reasons.push(format!("{SEND_LAG_REASON} {p99:.3} ms exceeds {} ms", LIMITS.max_send_lag_p99_ms));
    }
    if plan.mode == LoadMode::OpenLoop
        && row.requests > 0
        && row.achieved_rate < LIMITS.min_achieved_share * row.offered_rate
    {
        reasons.push(format!(
            "achieved {:.3} req/s is under {} % of the {:.3} req/s offered",
            row.achieved_rate,
            LIMITS.min_achieved_share * 100.0,
            row.offered_rate
        ));
    }
    if facts.len() < row.requests as usize {
        reasons.push(format!(
            "{} of {} requests have no outcome in the log",
            row.requests as usize - facts.len(),
            row.requests
        ));
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::vocab::{ArrivalProcess, Outcome};

    #[test]
    fn itl_spreads_a_chunk_over_its_tokens_and_skips_chunks_that_complete_none() {
        // 2 tokens at 100 ms, a chunk completing none at 120, 3 tokens at 160, 1 at 170.
        let gaps = itl_gaps(&[100.0, 120.0, 160.0, 170.0], &[2, 0, 3, 1]);
        assert_eq!(gaps, [0.0, 20.0, 20.0, 20.0, 10.0]);
        assert_eq!(gaps.iter().sum::<f64>(), 70.0, "the gaps add up to last − first");
        assert!(itl_gaps(&[5.0], &[1]).is_empty());
        assert!(itl_gaps(&[], &[]).is_empty());
    }

    #[test]
    fn percentiles_of_too_few_samples_are_named() {
        let q = quantiles((1..=18).map(f64::from), false);
        assert_eq!((q.n, q.p50, q.p99, q.max), (18, Some(9.0), Some(18.0), Some(18.0)));
        assert_eq!(q.too_few_samples, ["p95", "p99"], "18 samples resolve p50 and p90 only");
        assert!(quantiles((1..=100).map(f64::from), false).too_few_samples.is_empty());
        let floors = quantiles((1..=100).map(f64::from), true);
        assert_eq!((floors.p50, floors.p99, floors.max), (Some(50.0), Some(2.0), Some(1.0)));
        assert_eq!(quantiles(Vec::new(), false), Quantiles::default());
    }

    fn plan() -> LoadPlan {
        LoadPlan {
            mode: LoadMode::OpenLoop,
            arrivals: ArrivalProcess::Constant,
            burstiness: None,
            trace: None,
            trace_name: None,
            steps: vec![StepTarget::Rate(10.0), StepTarget::Rate(20.0)],
            search: None,
            concurrency_cap: None,
            requests_per_user: None,
            step_seconds: 10.0,
            warmup_seconds: 2.0,
            cooldown_seconds: 1.0,
            seed: 0,
            workload: Default::default(),
            objectives: Objectives { e2e_ms: Some(500.0), ..Objectives::default() },
        }
    }

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;

    /// Step `step` of `plan()` for provider `p`: an arrival every 1/rate s; each request sent
    /// `lag_ms` late and answered in `e2e_ms` (from its send) with 3 tokens.
    fn step_rows(step: i64, p: &str, opened: i64, lag_ms: i64, e2e_ms: f64) -> (Vec<ScheduleRow>, Vec<LoadFacts>) {
        let rate = [10, 20][step as usize];
        let (mut schedule, mut facts) = (Vec::new(), Vec::new());
        for k in 0..rate * 10 {
            let offset = k * S / rate;
            let id = format!("{p}-{step}-{k}");
            let (round_id, request_id) = (format!("r{step}-{k}"), id.clone());
            let row = ScheduleRow { round_id, request_id, ..inferbench_contract::testutil::schedule_row(k, p) };
            schedule.push(ScheduleRow { step: Some(step), intended_offset_ns: Some(offset), ..row });
            facts.push(LoadFacts {
                request_id: id,
                provider: p.into(),
                step: Some(step),
                operational_outcome: OperationalOutcome::Success,
                outcome: Outcome::Completed,
                complete: true,
                ttfo_ms: Some(e2e_ms - 20.0),
                ttfa_ms: Some(e2e_ms - 20.0),
                e2e_latency_ms: Some(e2e_ms),
                visible_answer_tokens: 3,
                output_tokens_per_second: Some(100.0),
                started_t_ns: opened + offset + lag_ms * MS,
                intended_t_ns: opened + offset,
                released_t_ns: None,
                ended_t_ns: opened + offset + lag_ms * MS + (e2e_ms * 1e6) as i64,
                answer_chunk_ms: vec![e2e_ms - 20.0, e2e_ms],
                answer_chunk_tokens: vec![1, 2],
                answer_buffered: false,
            });
        }
        (schedule, facts)
    }

    fn run(step: u32, opened: i64) -> StepFacts {
        StepFacts {
            step,
            attempt: 1,
            opened_t_ns: opened as u64,
            closed_t_ns: Some((opened + 11 * S) as u64),
            status: Some(StepStatus::Complete),
            scheduled_requests: 0,
            requests_sent: 0,
            peak_in_flight: 7,
            cpu_ns: Some(250_000_000),
            client_resource_errors: 0,
        }
    }

    #[test]
    fn a_step_is_measured_in_its_window_from_the_intended_send() {
        let (mut schedule, mut facts) = step_rows(0, "a", 0, 0, 300.0);
        // Provider b answers slower than the objective in step 1.
        for (step, p, opened, e2e) in [(0, "b", 0, 300.0), (1, "a", 12 * S, 300.0), (1, "b", 12 * S, 600.0)] {
            let (s, f) = step_rows(step, p, opened, 0, e2e);
            schedule.extend(s);
            facts.extend(f);
        }
        let correct: HashMap<String, bool> = facts.iter().map(|f| (f.request_id.clone(), true)).collect();
        let providers = vec!["a".to_string(), "b".to_string()];
        let m = compute(&plan(), &providers, &schedule, facts, &correct, &[run(0, 0), run(1, 12 * S)]);
        assert_eq!(m.steps.len(), 4);
        let a0 = &m.steps[0];
        assert_eq!((a0.step, a0.provider.as_str(), a0.window_seconds), (0, "a", 7.0));
        assert_eq!(a0.requests, 70, "arrivals at 2.0, 2.1, … 8.9 s: the window [2, 9)");
        assert_eq!((a0.offered_rate, a0.achieved_rate), (10.0, 10.0));
        assert_eq!(a0.output_tokens_per_second, 30.0);
        assert_eq!(a0.e2e_ms.p50, Some(300.0));
        assert_eq!(a0.tpot_ms.p50, Some(10.0));
        assert_eq!(a0.itl_ms.n, 140, "two gaps per answer");
        assert_eq!((a0.goodput, a0.accuracy, a0.holds), (Some(1.0), Some(1.0), true));
        assert_eq!(a0.client_cpu_seconds, Some(0.25));
        assert!(a0.client_bound.is_empty(), "{:?}", a0.client_bound);
        let b1 = &m.steps[3];
        assert_eq!((b1.step, b1.provider.as_str(), b1.requests), (1, "b", 140));
        assert_eq!((b1.goodput, b1.holds, b1.goodput_per_second), (Some(0.0), false, 0.0));
        assert_eq!(m.knees.iter().map(|k| (k.provider.as_str(), k.step)).collect::<Vec<_>>(), [("a", 1), ("b", 0)]);
    }

    #[test]
    fn a_late_client_is_named_and_its_latency_counted_from_the_schedule() {
        let (schedule, facts) = step_rows(0, "a", 0, 3, 300.0);
        let correct = HashMap::new();
        let mut steps = vec![run(0, 0)];
        steps[0].client_resource_errors = 2;
        let m = compute(&plan(), &["a".to_string()], &schedule, facts, &correct, &steps);
        let a0 = &m.steps[0];
        assert_eq!(a0.e2e_ms.p50, Some(303.0), "3 ms late is 3 ms slower");
        assert_eq!(a0.e2e_from_send_ms.p50, Some(300.0));
        assert_eq!(a0.send_lag_ms.p99, Some(3.0));
        assert_eq!(a0.accuracy, Some(0.0), "no verdict is no correct answer");
        assert_eq!(a0.goodput, Some(0.0), "correct answers are an objective unless the spec drops it");
        assert!(
            a0.client_bound[0].contains("2 request(s) failed on a resource of the client"),
            "{:?}",
            a0.client_bound
        );
        assert!(a0.client_bound[1].contains("send lag p99 3.000 ms exceeds 1 ms"), "{:?}", a0.client_bound);
        // 3 ms late against an E2E objective of 301 ms: the lag alone fails every request.
        let mut tight = plan();
        tight.objectives = Objectives { e2e_ms: Some(301.0), correct: false, ..Objectives::default() };
        let (schedule, facts) = step_rows(0, "a", 0, 3, 300.0);
        let m = compute(&tight, &["a".to_string()], &schedule, facts, &correct, &[run(0, 0)]);
        assert_eq!((m.steps[0].goodput, m.steps[0].goodput_without_lag), (Some(0.0), Some(1.0)));
        assert!(m.knees.is_empty(), "a client-bound step is no knee");
        let none = compute(&plan(), &["a".to_string()], &schedule, Vec::new(), &correct, &[]);
        assert!(none.steps[0].client_bound.iter().any(|r| r.contains("no run of this step")));
        assert!(none.steps[0].client_bound.iter().any(|r| r.contains("70 of 70 requests have no outcome")));
    }
}
