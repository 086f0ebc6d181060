//! Test fixtures: hand-built schedules, responses and evaluations whose metrics can be
//! computed by hand.
use crate::facts::Tables;
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_contract::testutil;
use inferbench_contract::vocab::{Classification, OperationalOutcome, Outcome, TaskFamily};
use inferbench_inputs::providers::ProviderTable;

pub const MEETING: TaskFamily = TaskFamily::MeetingNotesLookup;
pub const TICKET: TaskFamily = TaskFamily::TicketTriage;
pub const CONTRACT: TaskFamily = TaskFamily::ContractTermsExtraction;

pub fn families() -> Vec<TaskFamily> {
    vec![MEETING, TICKET, CONTRACT]
}

pub fn request_id(round: i64, provider: &str) -> String {
    format!("req-{round}-{provider}")
}

pub fn round_id(round: i64) -> String {
    format!("round-{round:03}")
}

/// Providers `a`, `b`, `c` serving `model-x` (alias `model-x-alias`) at $1 in / $2 out per
/// million tokens.
pub fn provider_table() -> ProviderTable {
    let entry = |name: &str| {
        format!(
            "  - name: {name}\n    label: Provider {name}\n    endpoint: http://127.0.0.1/{name}\n    \
             auth: {{kind: bearer, env: KEY_{name}}}\n    model_id: model-x\n    \
             model_aliases: [model-x-alias]\n    token_limit_field: max_tokens\n    \
             reasoning: {{reasoning_effort: low}}\n    \
             price_usd_per_million_tokens: {{input: 1.0, output: 2.0}}\n"
        )
    };
    let yaml = format!("providers:\n{}{}{}", entry("a"), entry("b"), entry("c"));
    serde_norway::from_str(&yaml).expect("the fixture provider table parses")
}

/// One request with its response and verdict.
#[derive(Debug, Clone)]
pub struct Req {
    pub response: ResponseRow,
    pub evaluation: EvaluationRow,
}

impl Req {
    /// A complete, correct 2xx response: TTFA = E2E/2, TTFO = TTFA, 100 tokens/s, no reasoning,
    /// usage 10 prompt + 5 completion tokens.
    pub fn ok(round: i64, family: TaskFamily, provider: &str, e2e_ms: f64) -> Req {
        let response = ResponseRow {
            round_id: round_id(round),
            round_index: round,
            provider: provider.into(),
            task_family: family,
            item_id: format!("{family}-{round:04}"),
            content_type: Some("text/event-stream".into()),
            http_version: Some("HTTP/1.1".into()),
            bytes_received: 100,
            sse_event_count: 4,
            answer: "{\"answer\":\"Ada\"}".into(),
            complete: true,
            ttfo_ms: Some(e2e_ms / 2.0),
            ttfa_ms: Some(e2e_ms / 2.0),
            last_answer_ms: Some(e2e_ms),
            e2e_latency_ms: Some(e2e_ms),
            pre_answer_reasoning_tokens: Some(0),
            reasoning_emitted_before_answer: Some(false),
            visible_answer_tokens: 5,
            output_tokens_per_second: Some(100.0),
            time_to_headers_ms: Some(1.0),
            time_to_first_event_ms: Some(2.0),
            started_t_ns: round * 1_000_000_000,
            response_model: Some("model-x".into()),
            finish_reason: Some("stop".into()),
            usage_prompt_tokens: Some(10),
            usage_completion_tokens: Some(5),
            usage_total_tokens: Some(15),
            ended_t_ns: round * 1_000_000_000 + (e2e_ms * 1e6) as i64,
            ..testutil::response_row(&request_id(round, provider))
        };
        let evaluation = evaluation_for(&response, Classification::ValidResult);
        Req { response, evaluation }
    }

    /// An operational failure (`outcome` is an `operational_outcome` such as `429`): no answer,
    /// no timings, no usage.
    pub fn failed(round: i64, family: TaskFamily, provider: &str, outcome: &str) -> Req {
        let mut req = Req::ok(round, family, provider, 0.0);
        let r = &mut req.response;
        let class: OperationalOutcome = outcome.parse().expect("a failure class of the vocabulary");
        (r.outcome, r.http_status) = match class {
            OperationalOutcome::Timeout => (Outcome::Timeout, None),
            OperationalOutcome::TransportError => (Outcome::TransportError, None),
            OperationalOutcome::InvalidStream => (Outcome::InvalidStream, Some(200)),
            OperationalOutcome::StreamError => (Outcome::StreamError, Some(200)),
            OperationalOutcome::Truncated => (Outcome::Truncated, Some(200)),
            OperationalOutcome::Other4xx => (Outcome::HttpError, Some(400)),
            OperationalOutcome::Http5xx => (Outcome::HttpError, Some(503)),
            OperationalOutcome::OtherHttp => (Outcome::HttpError, Some(307)),
            _ => (Outcome::HttpError, outcome.parse().ok()),
        };
        r.operational_outcome = class;
        r.answer = String::new();
        r.complete = false;
        (r.ttfo_ms, r.ttfa_ms, r.last_answer_ms, r.e2e_latency_ms) = (None, None, None, None);
        (r.pre_answer_reasoning_tokens, r.reasoning_emitted_before_answer) = (None, None);
        (r.output_tokens_per_second, r.response_model) = (None, None);
        (r.usage_prompt_tokens, r.usage_completion_tokens, r.usage_total_tokens) = (None, None, None);
        req.evaluation = evaluation_for(&req.response, Classification::FailedRequest);
        req
    }

    /// Re-judges the response with another classification.
    pub fn judged(mut self, classification: Classification) -> Req {
        self.evaluation = evaluation_for(&self.response, classification);
        self
    }

    /// Edits the response (the evaluation keeps its verdict).
    pub fn with(mut self, edit: impl FnOnce(&mut ResponseRow)) -> Req {
        edit(&mut self.response);
        self
    }
}

pub fn evaluation_for(r: &ResponseRow, classification: Classification) -> EvaluationRow {
    testutil::evaluation_row(&r.request_id, classification)
}

/// The schedule that `reqs` answer, and the facts of their rows, as the stage reads them.
pub fn tables(reqs: &[Req]) -> Tables {
    let rows = rows(reqs);
    Tables {
        schedule: rows.schedule,
        responses: rows.responses.into_iter().map(Into::into).collect(),
        evaluations: rows.evaluations.into_iter().map(Into::into).collect(),
    }
}

/// The rows of a run's three tables, as files hold them.
pub struct Rows {
    pub schedule: Vec<ScheduleRow>,
    pub responses: Vec<ResponseRow>,
    pub evaluations: Vec<EvaluationRow>,
}

/// The schedule that `reqs` answer (one row per request), and the rows themselves.
pub fn rows(reqs: &[Req]) -> Rows {
    let schedule = reqs
        .iter()
        .map(|q| {
            let r = &q.response;
            let (round_id, item_id) = (r.round_id.clone(), r.item_id.clone());
            ScheduleRow::new(
                r.round_index,
                round_id,
                r.task_family,
                item_id,
                r.provider.clone(),
                0,
                r.request_id.clone(),
            )
        })
        .collect();
    Rows {
        schedule,
        responses: reqs.iter().map(|q| q.response.clone()).collect(),
        evaluations: reqs.iter().map(|q| q.evaluation.clone()).collect(),
    }
}

/// One round per family (rounds 0, 1, 2), each provider answering correctly in `e2e(provider,
/// round)` ms: a complete, balanced run.
pub fn balanced(providers: &[&str], e2e: impl Fn(&str, i64) -> f64) -> Vec<Req> {
    let mut reqs = Vec::new();
    for (round, family) in [MEETING, TICKET, CONTRACT].into_iter().enumerate() {
        for p in providers {
            reqs.push(Req::ok(round as i64, family, p, e2e(p, round as i64)));
        }
    }
    reqs
}
