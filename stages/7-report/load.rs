//! A load run's section of the report: what was offered and what the client achieved per step,
//! each provider's figures per step (latencies from the intended send time), the knees, and
//! every step whose figures are the client's rather than the provider's, with the reason.
use crate::format::{figure, percent};
use inferbench_contract::documents::{LoadMetrics, LoadWorkload, Quantiles, StepMetrics, TokenLengths};
use inferbench_contract::vocab::{ArrivalProcess, LengthDistribution, LoadMode, OperationalOutcome, WorkloadKind};
use inferbench_present::markdown::Table;
use inferbench_present::number::{grouped, seconds};

/// The scope sentence of a load run's header.
pub fn scope(load: &LoadMetrics, providers: usize, model: &str) -> String {
    let steps = load.steps.iter().map(|s| s.step).max().map_or(0, |s| s + 1);
    let mode = match load.mode {
        LoadMode::OpenLoop => {
            "open loop: each request was sent at its arrival time, whatever was still in flight".to_string()
        }
        LoadMode::Capped => format!(
            "a rate with a cap of {} requests in flight per provider: an arrival over the cap waited in a queue, and \
             the wait counts in its latency",
            load.concurrency_cap.unwrap_or(0)
        ),
        LoadMode::ClosedLoop => "closed loop: each of a step's users per provider sent its next request the moment \
                                 its previous one ended"
            .to_string(),
    };
    let arrivals = match load.arrivals {
        ArrivalProcess::Constant => "evenly spaced".to_string(),
        ArrivalProcess::Poisson => "Poisson".to_string(),
        ArrivalProcess::Gamma => format!("gamma (burstiness {})", load.burstiness.unwrap_or(1.0)),
        ArrivalProcess::Trace => format!("replayed from the trace {}", load.trace.as_deref().unwrap_or("")),
    };
    let sent = match load.workload.kind {
        WorkloadKind::Dataset => "the same item",
        WorkloadKind::Synthetic => "the same synthetic prompt",
    };
    format!(
        "What was measured: {providers} providers serving {model}, under load in {steps} step(s) of {} each, {mode}. \
         Arrivals were {arrivals}, and every provider was sent {sent} at the same intended time (paired \
         steps). A step's figures are those of the requests intended after its first {} and before its last {}; \
         each step started once every request of the one before had ended. Every latency below is measured from \
         the request's intended send time, so a client or a queue that falls behind is counted, not hidden; the \
         same figures from the actual send are in metrics.json.",
        seconds(load.step_seconds),
        seconds(load.warmup_seconds),
        seconds(load.cooldown_seconds),
    )
}

/// The section.
pub fn section(load: &LoadMetrics) -> Vec<String> {
    let mut out = vec!["## Under load".to_string(), String::new(), workload(&load.workload), String::new()];
    out.extend([objectives(load), String::new()]);
    out.push("### The client, per step".to_string());
    out.push(String::new());
    out.push(
        "What the schedule offered each provider and what the client achieved, over every provider of the step: a \
         step whose send lag p99 exceeds 1 ms, whose achieved rate falls under 99% of the offered one (open loop), \
         or in which the client ran out of a resource of its own measured the client, and its figures are marked \
         as such below. The send lag shown is the worst provider's."
            .to_string(),
    );
    out.push(String::new());
    let mut table = Table::new(&[
        "Step",
        "Target req/s per provider",
        "Offered req/s, all providers",
        "Achieved req/s, all providers",
        "Send lag p50 ms",
        "Send lag p99 ms",
        "Peak in flight",
        "Client CPU s",
        "Client-bound",
    ]);
    for rows in by_step(load) {
        let first = rows[0];
        let sum = |f: fn(&StepMetrics) -> f64| rows.iter().map(|r| f(r)).sum::<f64>();
        let lag = step_lag(&rows);
        table.row(vec![
            first.step.to_string(),
            target(first),
            grouped(sum(|r| r.offered_rate), 2),
            grouped(sum(|r| r.achieved_rate), 2),
            lag.0,
            lag.1,
            first.peak_in_flight.to_string(),
            first.client_cpu_seconds.map_or("unavailable".into(), |s| grouped(s, 2)),
            if first.client_bound.is_empty() { "no".to_string() } else { "yes".to_string() },
        ]);
    }
    out.extend(table.lines());
    let bound: Vec<String> = by_step(load)
        .iter()
        .filter(|rows| !rows[0].client_bound.is_empty())
        .map(|rows| format!("- Step {}: {}.", rows[0].step, rows[0].client_bound.join("; ")))
        .collect();
    if !bound.is_empty() {
        out.push(String::new());
        out.push("Client-bound steps (their figures below are the client's, not the providers'):".to_string());
        out.extend(bound);
    }
    out.push(String::new());
    out.push("### Each provider, per step".to_string());
    out.push(String::new());
    out.push(
        "Latencies in ms from the intended send time; ITL per answer token, TPOT per request; tokens/s in \
         aggregate over the step's window. A percentile marked † has too few samples to be one (a p99 of fewer \
         than 100 samples is the maximum); n is the number of samples."
            .to_string(),
    );
    out.push(String::new());
    let mut table = Table::new(&[
        "Step",
        "Provider",
        "Offered req/s",
        "Completed/s",
        "Tokens/s",
        "TTFT p50",
        "TTFT p99",
        "TTFA p50",
        "TTFA p99",
        "E2E p50",
        "E2E p99",
        "ITL p50",
        "ITL p99",
        "TPOT p50",
        "Failures",
        "Accuracy",
        "Goodput",
        "Holds",
    ]);
    for r in &load.steps {
        let failures =
            r.outcomes.iter().filter(|o| o.class != OperationalOutcome::Success).map(|o| o.count).sum::<u64>();
        let bound = if r.client_bound.is_empty() { "" } else { " (client-bound)" };
        table.row(vec![
            r.step.to_string(),
            format!("{}{bound}", r.provider),
            grouped(r.offered_rate, 2),
            grouped(r.completed_per_second, 2),
            grouped(r.output_tokens_per_second, 1),
            p(&r.ttft_ms, "p50"),
            p(&r.ttft_ms, "p99"),
            p(&r.ttfa_ms, "p50"),
            p(&r.ttfa_ms, "p99"),
            p(&r.e2e_ms, "p50"),
            p(&r.e2e_ms, "p99"),
            p(&r.itl_ms, "p50"),
            p(&r.itl_ms, "p99"),
            p(&r.tpot_ms, "p50"),
            format!("{failures}/{}", r.requests),
            match load.workload.kind {
                WorkloadKind::Dataset => percent(r.accuracy),
                WorkloadKind::Synthetic => "not scored".to_string(),
            },
            percent(r.goodput),
            if r.holds { "yes".to_string() } else { "no".to_string() },
        ]);
    }
    out.extend(table.lines());
    out.push(String::new());
    out.push("### Knees".to_string());
    out.push(String::new());
    out.push(
        "Per provider, the step of highest goodput per second among the steps that measured the provider rather \
         than the client."
            .to_string(),
    );
    out.push(String::new());
    let mut table = Table::new(&["Provider", "Step", "Offered req/s", "Goodput req/s"]);
    for k in &load.knees {
        table.row(vec![
            k.provider.clone(),
            k.step.to_string(),
            grouped(k.offered_rate, 2),
            grouped(k.goodput_per_second, 2),
        ]);
    }
    out.extend(table.lines());
    out.extend(over_time(load));
    out
}

/// The most rows a step's course over time takes in the report (report.html draws every bin).
const TIME_ROWS: usize = 12;

/// Each step's course: its timeline's bins merged into at most [`TIME_ROWS`] rows.
fn over_time(load: &LoadMetrics) -> Vec<String> {
    let mut out = vec![
        String::new(),
        "### Each step over time".to_string(),
        String::new(),
        "Every provider together, from the step's opening to its last request's end: requests sent, completed and \
         failed per second, and the most in flight at once (metrics.json `load.timelines`, in finer bins; drawn in \
         report.html)."
            .to_string(),
    ];
    for line in &load.timelines {
        let bins = line.sent.len();
        let per_row = bins.div_ceil(TIME_ROWS).max(1);
        let mut table = Table::new(&["Seconds", "Sent/s", "Completed/s", "Failed/s", "Most in flight"]);
        for start in (0..bins).step_by(per_row) {
            let end = (start + per_row).min(bins);
            let span = (end - start) as f64 * line.bin_seconds;
            let rate = |v: &[u64]| grouped(v[start..end].iter().sum::<u64>() as f64 / span, 2);
            table.row(vec![
                format!("{}–{}", trim(start as f64 * line.bin_seconds), trim(end as f64 * line.bin_seconds)),
                rate(&line.sent),
                rate(&line.completed),
                rate(&line.failed),
                line.in_flight[start..end].iter().max().copied().unwrap_or(0).to_string(),
            ]);
        }
        out.push(String::new());
        out.push(format!("Step {}:", line.step));
        out.push(String::new());
        out.extend(table.lines());
    }
    out
}

/// Seconds as short as they can be written exactly to a tenth.
fn trim(seconds: f64) -> String {
    let text = format!("{seconds:.1}");
    text.strip_suffix(".0").map(str::to_string).unwrap_or(text)
}

/// What the steps sent, in one paragraph.
fn workload(w: &LoadWorkload) -> String {
    if w.kind == WorkloadKind::Dataset {
        return "Workload: the dataset's items, its task families taking turns, every answer scored by its \
                family's rubric."
            .to_string();
    }
    let trace = if w.sizes_from_trace { "as the replayed trace gives them, else " } else { "" };
    let lengths = |l: &Option<TokenLengths>| match l {
        None => "as the replayed trace gives them".to_string(),
        Some(l) => format!("{trace}{}", lengths(l)),
    };
    let prefix = match w.shared_prefix_tokens {
        0 => "no two sharing a prefix by design".to_string(),
        n => format!("the first {n} the same in every prompt (a shared prefix)"),
    };
    let eos = if w.ignore_eos {
        "each asked the server to ignore its end of sequence (`ignore_eos`), so that answers run to that length"
    } else {
        "an answer may end before that length (no `ignore_eos` was sent)"
    };
    format!(
        "Workload: synthetic prompts of {} o200k_base tokens, {prefix}, each asking for {} answer tokens (sent as \
         the token limit); {eos}. No rubric scores a synthetic answer: accuracy does not apply, and goodput counts \
         the latency objectives alone.",
        lengths(&w.input_tokens),
        lengths(&w.output_tokens),
    )
}

/// One length's distribution in words.
fn lengths(l: &TokenLengths) -> String {
    let (mean, sd) = (l.mean.unwrap_or(0.0), l.stddev.unwrap_or(0.0));
    match l.distribution {
        LengthDistribution::Constant => format!("exactly {}", l.min),
        LengthDistribution::Uniform => format!("{} to {} (uniform)", l.min, l.max),
        LengthDistribution::Normal => {
            format!(
                "normally distributed (mean {}, sd {}) within {} to {}",
                grouped(mean, 0),
                grouped(sd, 0),
                l.min,
                l.max
            )
        }
        LengthDistribution::Lognormal => format!(
            "log-normally distributed (mean {}, sd {}) within {} to {}",
            grouped(mean, 0),
            grouped(sd, 0),
            l.min,
            l.max
        ),
    }
}

/// The objectives in one sentence.
fn objectives(load: &LoadMetrics) -> String {
    let o = &load.objectives;
    let mut parts: Vec<String> =
        [("TTFT", o.ttft_ms), ("TTFA", o.ttfa_ms), ("TPOT", o.tpot_ms), ("every ITL", o.itl_ms), ("E2E", o.e2e_ms)]
            .iter()
            .filter_map(|(name, bound)| bound.map(|b| format!("{name} ≤ {} ms", grouped(b, 0))))
            .collect();
    if o.correct {
        parts.push("a correct answer".to_string());
    }
    let met = if parts.is_empty() { "a completed answer".to_string() } else { parts.join(", ") };
    format!(
        "Goodput is the share of a step's requests that completed with {met}; a step holds when it reaches {}.",
        percent(Some(o.goodput_target))
    )
}

/// The rows of each step, steps in order.
fn by_step(load: &LoadMetrics) -> Vec<Vec<&StepMetrics>> {
    let mut steps: Vec<Vec<&StepMetrics>> = Vec::new();
    for r in &load.steps {
        match steps.last_mut() {
            Some(rows) if rows[0].step == r.step => rows.push(r),
            _ => steps.push(vec![r]),
        }
    }
    steps
}

fn target(r: &StepMetrics) -> String {
    match (r.target_rate, r.speedup) {
        (Some(rate), _) => grouped(rate, 2),
        (None, Some(speedup)) => format!("trace ×{}", grouped(speedup, 2)),
        (None, None) if r.users.is_some() => format!("{} users", r.users.unwrap_or(0)),
        _ => "unavailable".to_string(),
    }
}

/// The step's send lag p50 and p99 over every provider: the largest provider's (the client is
/// one, so the worst row is the client's bound).
fn step_lag(rows: &[&StepMetrics]) -> (String, String) {
    let worst = |f: fn(&Quantiles) -> Option<f64>| {
        rows.iter().filter_map(|r| f(&r.send_lag_ms)).fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    (figure3(worst(|q| q.p50)), figure3(worst(|q| q.p99)))
}

fn figure3(x: Option<f64>) -> String {
    x.map_or_else(|| "unavailable".to_string(), |v| grouped(v, 3))
}

/// A percentile of `q`, marked † when its samples cannot resolve it.
fn p(q: &Quantiles, which: &str) -> String {
    let value = match which {
        "p50" => q.p50,
        "p90" => q.p90,
        "p95" => q.p95,
        _ => q.p99,
    };
    let mark = if q.too_few_samples.iter().any(|w| w == which) { "†" } else { "" };
    format!("{}{mark}", figure(value))
}
