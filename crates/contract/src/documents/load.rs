//! `metrics.json`'s `load` section: a load run's figures, one row per step and provider.
//!
//! Every latency is measured from the request's intended send time (its arrival: the step's
//! `step_opened` plus its schedule offset), as MLPerf's LoadGen measures it, so a client that
//! falls behind its schedule shows the queue it built instead of hiding it; the same latency
//! from the actual send is kept beside it. A step's figures are its measured window's: the
//! requests whose intended send time falls after its warm-up and before its cool-down.
use crate::vocab::{ArrivalProcess, LengthDistribution, LoadMode, OperationalOutcome, WorkloadKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadMetrics {
    pub mode: LoadMode,
    pub arrivals: ArrivalProcess,
    /// The gamma process's shape (gamma arrivals only).
    pub burstiness: Option<f64>,
    /// The trace replayed, by the name the spec gives it (trace arrivals only).
    pub trace: Option<String>,
    pub concurrency_cap: Option<u32>,
    pub step_seconds: f64,
    pub warmup_seconds: f64,
    pub cooldown_seconds: f64,
    /// What was sent: the dataset's items or synthetic prompts (a document written before
    /// synthetic workloads existed reads as the dataset's).
    #[serde(default)]
    pub workload: LoadWorkload,
    pub objectives: LoadObjectives,
    /// When a step's figures are the client's, not the providers' (see [`StepMetrics::client_bound`]).
    pub client_limits: ClientLimits,
    /// How the figures are defined, in words (the window, ITL and TPOT, goodput, the knee, a
    /// percentile of too few samples).
    pub definitions: Vec<String>,
    /// One row per step and provider: steps in order, providers by name within a step.
    pub steps: Vec<StepMetrics>,
    /// Per provider, the step of highest goodput among the steps that are not client-bound.
    pub knees: Vec<Knee>,
    /// Each step's course over time, every provider together: one entry per step, in order.
    pub timelines: Vec<StepTimeline>,
}

/// One step's course: its requests counted in bins of equal length from the step's first
/// intended send (its first actual send in a closed loop) to its last request's end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepTimeline {
    pub step: u32,
    /// The bins' length, s: the shortest of 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300,
    /// 600, 1800 and 3600 that gives the step at most 40 bins (beyond 40 hours, the last
    /// bin holds the rest).
    pub bin_seconds: f64,
    /// Requests sent in each bin (`started_t_ns`).
    pub sent: Vec<u64>,
    /// Requests that completed in each bin (`ended_t_ns`).
    pub completed: Vec<u64>,
    /// Requests that ended in any other outcome in each bin.
    pub failed: Vec<u64>,
    /// The most requests in flight at once during each bin (sent and not yet ended).
    pub in_flight: Vec<u64>,
}

/// The spec's `load.workload`, as applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadWorkload {
    pub kind: WorkloadKind,
    /// A synthetic workload's prompt lengths in o200k_base tokens; null for the dataset's, and
    /// when a replayed trace gives every request's.
    pub input_tokens: Option<TokenLengths>,
    /// A synthetic workload's requested answer lengths (the token limit sent); null as above.
    pub output_tokens: Option<TokenLengths>,
    /// A replayed trace's own `input_tokens` and `output_tokens` were sent where its lines
    /// give them (the distributions above stand in for a line without).
    pub sizes_from_trace: bool,
    /// The tokens every synthetic prompt begins with, the same in every request (0: none).
    pub shared_prefix_tokens: u32,
    /// Each synthetic request asked the server to ignore its end-of-sequence token
    /// (`ignore_eos: true`, vLLM's and SGLang's extension), so that answers run to their
    /// requested length.
    pub ignore_eos: bool,
}

impl Default for LoadWorkload {
    fn default() -> Self {
        LoadWorkload {
            kind: WorkloadKind::Dataset,
            input_tokens: None,
            output_tokens: None,
            sizes_from_trace: false,
            shared_prefix_tokens: 0,
            ignore_eos: false,
        }
    }
}

/// How a synthetic workload drew one length: its distribution and parameters (a constant has
/// `min` = `max`; normal and log-normal have `mean` and `stddev`), every draw rounded and kept
/// in `[min, max]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TokenLengths {
    pub distribution: LengthDistribution,
    pub min: u32,
    pub max: u32,
    pub mean: Option<f64>,
    pub stddev: Option<f64>,
}

/// The spec's `load.objectives`, as applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoadObjectives {
    pub ttft_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub tpot_ms: Option<f64>,
    pub itl_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub correct: bool,
    pub goodput_target: f64,
}

/// How a step's client-bound reason for its send lag begins: the one reason that leaves the
/// providers' latencies measurable (they are taken from the intended send times, so the
/// client's lag only adds to them).
pub const SEND_LAG_REASON: &str = "send lag p99";

/// The bounds an honest client keeps; a step past any of them is client-bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientLimits {
    /// The highest send-lag p99, in ms.
    pub max_send_lag_p99_ms: f64,
    /// The lowest achieved rate, as a share of the offered rate (open loop).
    pub min_achieved_share: f64,
}

/// One provider's figures in one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepMetrics {
    /// 0-based, as in `schedule.parquet`.
    pub step: u32,
    pub provider: String,
    /// The step's mean rate asked of each provider, requests/s (rate steps).
    pub target_rate: Option<f64>,
    /// The trace's speed-up (trace steps).
    pub speedup: Option<f64>,
    /// The users per provider (closed-loop steps).
    pub users: Option<u32>,
    /// The step's run the figures come from (a step stopped and run again has several).
    pub attempt: u32,
    /// The measured window's length, s.
    pub window_seconds: f64,
    /// Requests intended in the window, per second: what the schedule offered (for random
    /// arrivals it differs from the target by the draw).
    pub offered_rate: f64,
    /// Requests actually sent in the window, per second.
    pub achieved_rate: f64,
    /// Requests intended in the window.
    pub requests: u64,
    /// Of those, completed 2xx streams with an answer.
    pub completed: u64,
    /// The step's requests that completed within the window (their last answer token in it),
    /// per second of it: the steady-state throughput.
    pub completed_per_second: f64,
    /// The answer tokens of those, per second of the window, in aggregate.
    pub output_tokens_per_second: f64,
    /// Each completed stream's tokens/s: p50 and the floors p90, p95, p99 (the value at
    /// least that share of streams reached).
    pub stream_tokens_per_second: Quantiles,
    /// Time to first output token (TTFO, the field's TTFT) from the intended send, ms.
    pub ttft_ms: Quantiles,
    /// Time to first answer token from the intended send, ms.
    pub ttfa_ms: Quantiles,
    /// End-to-end latency from the intended send, ms.
    pub e2e_ms: Quantiles,
    /// The same three from the actual send, ms.
    pub ttft_from_send_ms: Quantiles,
    pub ttfa_from_send_ms: Quantiles,
    pub e2e_from_send_ms: Quantiles,
    /// Inter-token latency, per answer token after the first, ms (see the definitions).
    pub itl_ms: Quantiles,
    /// Time per output token after the first, per completed request, ms.
    pub tpot_ms: Quantiles,
    /// Actual minus intended send time, ms (the client's lateness); for a request a capped
    /// step's queue held, actual send minus the moment its slot freed.
    pub send_lag_ms: Quantiles,
    /// How long a capped step's queue held each request before a slot freed, ms (0 for one
    /// that found a free slot, and every request of an open-loop step).
    pub queued_ms: Quantiles,
    /// The window's requests by operational class, every class listed, `2xx` first.
    pub outcomes: Vec<OutcomeCount>,
    /// The share of the window's requests that met every objective.
    pub goodput: Option<f64>,
    /// The goodput with the client's own send lag taken out of every latency (a capped
    /// step's queue wait stays in: it is the load's). A step client-bound by its lag alone
    /// whose goodput falls short even so falls short because of its provider.
    pub goodput_without_lag: Option<f64>,
    /// Requests that met every objective, per second of the window.
    pub goodput_per_second: f64,
    /// The share of the window's requests answered correctly.
    pub accuracy: Option<f64>,
    /// The goodput reached the target.
    pub holds: bool,
    /// Why the step's figures are the client's and not the provider's; empty when they are
    /// the provider's.
    pub client_bound: Vec<String>,
    /// The fetch process's CPU time during the step, s (all providers).
    pub client_cpu_seconds: Option<f64>,
    /// The most requests in flight at once during the step (all providers).
    pub peak_in_flight: u64,
}

/// Percentiles of one metric's samples, nearest rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Quantiles {
    /// Samples.
    pub n: u64,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
    /// The percentiles that n samples cannot resolve (pK needs at least 100 / (100 − K):
    /// a p99 of fewer than 100 samples is in fact a maximum), e.g. `["p95", "p99"]`.
    pub too_few_samples: Vec<String>,
}

/// How many of a step's requests ended in one operational class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutcomeCount {
    pub class: OperationalOutcome,
    pub count: u64,
}

/// Where a provider's goodput peaks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Knee {
    pub provider: String,
    pub step: u32,
    pub offered_rate: f64,
    pub goodput_per_second: f64,
}
