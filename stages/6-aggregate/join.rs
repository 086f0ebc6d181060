//! Joining a run's tables before any figure is computed: every response's request is in the
//! schedule and agrees with it, responses and evaluations match one-to-one by request id and
//! agree on what they describe, and every value the metrics read is one the contract allows.
//! All problems are collected, so one run of the stage names every bad row.
use crate::error::InputError;
use crate::facts::{ResponseFacts, Tables, VerdictFacts};
use inferbench_contract::tables::ScheduleRow;
use inferbench_contract::vocab::{Classification, TaskFamily};
use inferbench_store::run::RunDir;
use std::collections::{BTreeMap, BTreeSet};

const SCHEDULE: &str = RunDir::SCHEDULE;
const RESPONSES: &str = RunDir::RESPONSES;
const EVALUATIONS: &str = RunDir::EVALUATIONS;

/// One scheduled request that reached a terminal outcome, with its verdict.
#[derive(Debug, Clone)]
pub struct Observation {
    pub response: ResponseFacts,
    pub evaluation: VerdictFacts,
}

/// The checked join: the schedule and one observation per response, in request-id order.
#[derive(Debug, Clone)]
pub struct Joined {
    pub schedule: Vec<ScheduleRow>,
    pub observations: Vec<Observation>,
}

/// Checks and joins `tables`. `families` are the spec's task families and `providers` the
/// provider table's names: a scheduled request outside them cannot be scored or priced.
pub fn join(tables: Tables, families: &[TaskFamily], providers: &[String]) -> Result<Joined, Vec<InputError>> {
    let Tables { schedule, responses, evaluations } = tables;
    let mut problems = Vec::new();
    // Both tables sorted by request id in place and merged: no index holds a second copy of a
    // million rows or their keys.
    let responses = sorted_unique(responses, RESPONSES, |r| &r.request_id, &mut problems);
    let evaluations = sorted_unique(evaluations, EVALUATIONS, |e| &e.request_id, &mut problems);
    {
        let scheduled = check_schedule(&schedule, families, providers, &mut problems);
        for response in &responses {
            check_response(response, scheduled.get(response.request_id.as_str()).copied(), &mut problems);
        }
    }
    let (mut r, mut e) = (0, 0);
    while r < responses.len() || e < evaluations.len() {
        match (responses.get(r), evaluations.get(e)) {
            (Some(response), Some(evaluation)) if response.request_id == evaluation.request_id => {
                check_evaluation(evaluation, response, &mut problems);
                (r, e) = (r + 1, e + 1);
            }
            (Some(response), Some(evaluation)) if response.request_id < evaluation.request_id => {
                problems.push(InputError::NoEvaluation { request_id: response.request_id.clone() });
                r += 1;
            }
            (Some(response), None) => {
                problems.push(InputError::NoEvaluation { request_id: response.request_id.clone() });
                r += 1;
            }
            (_, Some(evaluation)) => {
                problems.push(InputError::NoResponse { request_id: evaluation.request_id.clone() });
                e += 1;
            }
            (None, None) => unreachable!("the loop runs while either table has a row"),
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    // Equal lengths and equal ids, row for row: checked just above.
    let observations = responses
        .into_iter()
        .zip(evaluations)
        .map(|(response, evaluation)| Observation { response, evaluation })
        .collect();
    Ok(Joined { schedule, observations })
}

/// Sorts rows by request id, reporting duplicates (the first row of an id, in table order, is
/// kept).
fn sorted_unique<T>(
    mut rows: Vec<T>,
    table: &'static str,
    id: fn(&T) -> &String,
    problems: &mut Vec<InputError>,
) -> Vec<T> {
    // Stable: of equal ids, the first in the table comes first and is the one kept.
    rows.sort_by(|a, b| id(a).cmp(id(b)));
    let mut duplicates = BTreeSet::new();
    rows.dedup_by(|later, kept| {
        let same = id(later) == id(kept);
        if same {
            duplicates.insert(id(kept).clone());
        }
        same
    });
    problems.extend(duplicates.into_iter().map(|request_id| InputError::Duplicate { table, request_id }));
    rows
}

fn check_schedule<'a>(
    schedule: &'a [ScheduleRow],
    families: &[TaskFamily],
    providers: &[String],
    problems: &mut Vec<InputError>,
) -> BTreeMap<&'a str, &'a ScheduleRow> {
    let mut by_id = BTreeMap::new();
    let mut unknown_providers = BTreeSet::new();
    let mut round_providers = BTreeSet::new();
    for row in schedule {
        if by_id.insert(row.request_id.as_str(), row).is_some() {
            problems.push(InputError::Duplicate { table: SCHEDULE, request_id: row.request_id.clone() });
        }
        if !providers.contains(&row.provider) && unknown_providers.insert(row.provider.as_str()) {
            problems.push(InputError::UnknownProvider { provider: row.provider.clone() });
        }
        if !families.contains(&row.task_family) {
            problems.push(unknown(SCHEDULE, &row.request_id, "task_family", row.task_family.as_str()));
        }
        if !round_providers.insert((row.round_id.as_str(), row.provider.as_str())) {
            problems.push(InputError::DuplicateRoundProvider {
                round_id: row.round_id.clone(),
                provider: row.provider.clone(),
            });
        }
    }
    by_id
}

fn check_response(response: &ResponseFacts, scheduled: Option<&ScheduleRow>, problems: &mut Vec<InputError>) {
    let id = &response.request_id;
    let Some(s) = scheduled else {
        problems.push(InputError::NotScheduled { request_id: id.clone() });
        return;
    };
    let pairs = [
        ("provider", response.provider.as_str(), s.provider.as_str()),
        ("task_family", response.task_family.as_str(), s.task_family.as_str()),
        ("round_id", response.round_id.as_str(), s.round_id.as_str()),
        ("item_id", response.item_id.as_str(), s.item_id.as_str()),
    ];
    for (field, found, expected) in pairs {
        if found != expected {
            problems.push(disagree(RESPONSES, id, field, found, SCHEDULE, expected));
        }
    }
    let integers = [
        ("pre_answer_reasoning_tokens", response.pre_answer_reasoning_tokens),
        ("usage_prompt_tokens", response.usage_prompt_tokens),
        ("usage_completion_tokens", response.usage_completion_tokens),
    ];
    let floats = [
        ("ttfo_ms", response.ttfo_ms),
        ("ttfa_ms", response.ttfa_ms),
        ("e2e_latency_ms", response.e2e_latency_ms),
        ("output_tokens_per_second", response.output_tokens_per_second),
    ];
    let values = floats.into_iter().chain(integers.map(|(f, v)| (f, v.map(|n| n as f64))));
    for (field, value) in values {
        if let Some(v) = value.filter(|v| !(v.is_finite() && *v >= 0.0)) {
            problems.push(InputError::BadNumber {
                table: RESPONSES,
                request_id: id.clone(),
                field,
                value: v.to_string(),
            });
        }
    }
}

fn check_evaluation(evaluation: &VerdictFacts, response: &ResponseFacts, problems: &mut Vec<InputError>) {
    let id = &evaluation.request_id;
    let class = evaluation.classification;
    // A request either failed operationally or was judged; the two must never overlap, or
    // a request would count both as a failure and as a wrong answer.
    if (class == Classification::FailedRequest) != response.operational_outcome.is_failure() {
        let message =
            format!("classification: `{class}` contradicts operational_outcome `{}`", response.operational_outcome);
        problems.push(InputError::Inconsistent { table: EVALUATIONS, request_id: id.clone(), message });
    }
    if evaluation.correct != (class == Classification::ValidResult) {
        let message = format!("correct: `{}` contradicts classification `{class}`", evaluation.correct);
        problems.push(InputError::Inconsistent { table: EVALUATIONS, request_id: id.clone(), message });
    }
}

fn disagree(
    table: &'static str,
    id: &str,
    field: &'static str,
    found: &str,
    other: &'static str,
    expected: &str,
) -> InputError {
    InputError::Disagree {
        table,
        request_id: id.to_string(),
        field,
        found: found.to_string(),
        other,
        expected: expected.to_string(),
    }
}

fn unknown(table: &'static str, id: &str, field: &'static str, value: &str) -> InputError {
    InputError::Unknown { table, request_id: id.to_string(), field, value: value.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req, MEETING};

    fn two_providers() -> Vec<Req> {
        vec![Req::ok(0, MEETING, "a", 100.0), Req::ok(0, MEETING, "b", 120.0)]
    }

    fn run(tables: Tables) -> Result<Joined, Vec<InputError>> {
        join(tables, &fixture::families(), &["a".to_string(), "b".to_string()])
    }

    #[test]
    fn a_clean_run_joins_every_response_with_its_evaluation() {
        let joined = run(fixture::tables(&two_providers())).unwrap();
        assert_eq!(joined.observations.len(), 2);
        assert!(joined.observations.iter().all(|o| o.response.request_id == o.evaluation.request_id));
    }

    #[test]
    fn a_response_without_evaluation_and_an_unscheduled_response_are_named() {
        let mut tables = fixture::tables(&two_providers());
        tables.evaluations.retain(|e| e.request_id != fixture::request_id(0, "b"));
        tables.schedule.retain(|s| s.provider != "a");
        let problems = run(tables).unwrap_err();
        assert!(problems.contains(&InputError::NoEvaluation { request_id: fixture::request_id(0, "b") }));
        assert!(problems.contains(&InputError::NotScheduled { request_id: fixture::request_id(0, "a") }));
    }

    #[test]
    fn a_verdict_contradicting_its_response_is_refused() {
        let mut tables = fixture::tables(&two_providers());
        tables.evaluations[0].classification = Classification::FailedRequest;
        let problems = run(tables).unwrap_err();
        assert!(
            problems.iter().any(|p| p
                .to_string()
                .contains("classification: `failed_request` contradicts operational_outcome `2xx`")),
            "{problems:?}"
        );
    }

    #[test]
    fn disagreeing_outcomes_bad_numbers_and_contradictions_are_refused() {
        let mut tables = fixture::tables(&two_providers());
        tables.responses[0].operational_outcome = inferbench_contract::vocab::OperationalOutcome::Http5xx;
        tables.responses[1].ttfa_ms = Some(f64::NAN);
        tables.evaluations[1].correct = false;
        let text: Vec<String> = run(tables).unwrap_err().iter().map(ToString::to_string).collect();
        assert!(
            text.iter().any(|t| t.contains("classification: `valid_result` contradicts operational_outcome `5xx`")),
            "{text:?}"
        );
        assert!(text.iter().any(|t| t.contains("ttfa_ms: `NaN`")), "{text:?}");
        assert!(
            text.iter().any(|t| t.contains("correct: `false` contradicts classification `valid_result`")),
            "{text:?}"
        );
    }

    #[test]
    fn duplicates_and_unknown_providers_are_refused() {
        let mut tables = fixture::tables(&two_providers());
        tables.evaluations.push(tables.evaluations[0].clone());
        let problems = join(tables, &fixture::families(), &["a".to_string()]).unwrap_err();
        assert!(problems.contains(&InputError::UnknownProvider { provider: "b".into() }));
        assert!(
            problems.contains(&InputError::Duplicate { table: EVALUATIONS, request_id: fixture::request_id(0, "a") })
        );
    }
}
