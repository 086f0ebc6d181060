//! What the figures read of each row of the run's tables, reduced as each batch is decoded:
//! the texts of a row (answer, reasoning, error body, parsed answer) are dropped at once, so a
//! run of a million requests is held in a few hundred bytes per request. The types stand
//! below every module that computes: the join reads the schedule, responses and evaluations;
//! a load run's figures and their timelines read the load's facts of each response.
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_contract::vocab::{Classification, OperationalOutcome, Outcome, TaskFamily};

/// The three tables the metrics are computed from, as read: the schedule (without the
/// synthetic prompts), the responses and evaluations as the facts the metrics read of each row.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    pub schedule: Vec<ScheduleRow>,
    pub responses: Vec<ResponseFacts>,
    pub evaluations: Vec<VerdictFacts>,
}

/// What the metrics read of a `responses.parquet` row (the same names and types).
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseFacts {
    pub request_id: String,
    pub round_id: String,
    pub round_index: i64,
    pub provider: String,
    pub task_family: TaskFamily,
    pub item_id: String,
    pub outcome: Outcome,
    pub operational_outcome: OperationalOutcome,
    pub done_seen: bool,
    pub finish_reason: Option<String>,
    pub ttfo_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub e2e_latency_ms: Option<f64>,
    pub output_tokens_per_second: Option<f64>,
    pub pre_answer_reasoning_tokens: Option<i64>,
    pub reasoning_emitted_before_answer: Option<bool>,
    pub reasoning_tokens: i64,
    pub visible_answer_tokens: i64,
    pub usage_prompt_tokens: Option<i64>,
    pub usage_completion_tokens: Option<i64>,
    pub response_model: Option<String>,
    /// A complete answer (the population of the answer-streaming figures).
    pub complete: bool,
    pub answer_buffered: bool,
    /// A complete answer's tokens per chunk, and the ms between its consecutive chunks; empty
    /// for any other response (kept compact: a million responses hold them at once).
    pub chunk_tokens: Box<[u32]>,
    pub chunk_gaps_ms: Box<[f64]>,
}

impl From<ResponseRow> for ResponseFacts {
    fn from(r: ResponseRow) -> ResponseFacts {
        ResponseFacts {
            request_id: r.request_id,
            round_id: r.round_id,
            round_index: r.round_index,
            provider: r.provider,
            task_family: r.task_family,
            item_id: r.item_id,
            outcome: r.outcome,
            operational_outcome: r.operational_outcome,
            done_seen: r.done_seen,
            finish_reason: r.finish_reason,
            ttfo_ms: r.ttfo_ms,
            ttfa_ms: r.ttfa_ms,
            e2e_latency_ms: r.e2e_latency_ms,
            output_tokens_per_second: r.output_tokens_per_second,
            pre_answer_reasoning_tokens: r.pre_answer_reasoning_tokens,
            reasoning_emitted_before_answer: r.reasoning_emitted_before_answer,
            reasoning_tokens: r.reasoning_tokens,
            visible_answer_tokens: r.visible_answer_tokens,
            usage_prompt_tokens: r.usage_prompt_tokens,
            usage_completion_tokens: r.usage_completion_tokens,
            response_model: r.response_model,
            complete: r.complete,
            answer_buffered: r.answer_buffered,
            chunk_tokens: match r.complete {
                true => r.answer_chunk_tokens.iter().map(|&k| u32::try_from(k).unwrap_or(0)).collect(),
                false => Box::default(),
            },
            chunk_gaps_ms: match r.complete {
                true => r.answer_chunk_ms.windows(2).map(|w| w[1] - w[0]).collect(),
                false => Box::default(),
            },
        }
    }
}

/// What the metrics read of an `evaluations.parquet` row.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictFacts {
    pub request_id: String,
    pub classification: Classification,
    pub correct: bool,
    pub correct_field_count: Option<i64>,
    pub field_count_total: Option<i64>,
}

impl From<EvaluationRow> for VerdictFacts {
    fn from(e: EvaluationRow) -> VerdictFacts {
        VerdictFacts {
            request_id: e.request_id,
            classification: e.classification,
            correct: e.correct,
            correct_field_count: e.correct_field_count,
            field_count_total: e.field_count_total,
        }
    }
}

/// What the load figures read of a `responses.parquet` row.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFacts {
    pub request_id: String,
    pub provider: String,
    pub step: Option<i64>,
    pub operational_outcome: OperationalOutcome,
    pub outcome: Outcome,
    pub complete: bool,
    pub ttfo_ms: Option<f64>,
    pub ttfa_ms: Option<f64>,
    pub e2e_latency_ms: Option<f64>,
    pub visible_answer_tokens: i64,
    pub output_tokens_per_second: Option<f64>,
    pub started_t_ns: i64,
    pub intended_t_ns: i64,
    pub released_t_ns: Option<i64>,
    pub ended_t_ns: i64,
    pub answer_chunk_ms: Vec<f64>,
    pub answer_chunk_tokens: Vec<i64>,
    pub answer_buffered: bool,
}

/// Taken from a row before the row becomes its [`ResponseFacts`]: the responses are read once.
impl From<&ResponseRow> for LoadFacts {
    fn from(r: &ResponseRow) -> LoadFacts {
        LoadFacts {
            request_id: r.request_id.clone(),
            provider: r.provider.clone(),
            step: r.step,
            operational_outcome: r.operational_outcome,
            outcome: r.outcome,
            complete: r.complete,
            ttfo_ms: r.ttfo_ms,
            ttfa_ms: r.ttfa_ms,
            e2e_latency_ms: r.e2e_latency_ms,
            visible_answer_tokens: r.visible_answer_tokens,
            output_tokens_per_second: r.output_tokens_per_second,
            started_t_ns: r.started_t_ns,
            intended_t_ns: r.intended_t_ns,
            released_t_ns: r.released_t_ns,
            ended_t_ns: r.ended_t_ns,
            answer_chunk_ms: r.answer_chunk_ms.clone(),
            answer_chunk_tokens: r.answer_chunk_tokens.clone(),
            answer_buffered: r.answer_buffered,
        }
    }
}

impl LoadFacts {
    /// The client's lateness, ms: the send after the request was due, or, held by a capped
    /// step's queue, after its slot freed.
    pub fn send_lag_ms(&self) -> f64 {
        (self.started_t_ns - self.released_t_ns.unwrap_or(self.intended_t_ns).max(self.intended_t_ns)) as f64 / 1e6
    }

    /// How long a capped step's queue held the request, ms (0 when it found a free slot).
    pub fn queued_ms(&self) -> f64 {
        self.released_t_ns.map_or(0.0, |r| (r - self.intended_t_ns).max(0) as f64 / 1e6)
    }
}
