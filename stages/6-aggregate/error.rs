//! Contract violations found in a run's tables. Each names the file, the row (by request id)
//! and the field, so a user can find the bad row with one query.
//!
//! The checks collect every problem before anything is written; [`invalid`] turns the list into
//! the shared crate's `Error::Invalid`, which `cli::finish` maps to exit code 3 (bad input).
use std::fmt;

/// One problem in the joined schedule, responses and evaluations.
#[derive(Debug, Clone, PartialEq)]
pub enum InputError {
    /// A request id appears twice in one table.
    Duplicate { table: &'static str, request_id: String },
    /// A response whose request is not in `schedule.parquet`.
    NotScheduled { request_id: String },
    /// An evaluation whose response is not in `responses.parquet`.
    NoResponse { request_id: String },
    /// A response that `ib-evaluate` never judged.
    NoEvaluation { request_id: String },
    /// A field that must agree between two tables does not.
    Disagree {
        table: &'static str,
        request_id: String,
        field: &'static str,
        found: String,
        other: &'static str,
        expected: String,
    },
    /// A value outside the field's documented set (an outcome, a classification, a family).
    Unknown { table: &'static str, request_id: String, field: &'static str, value: String },
    /// A number that cannot be a sample: NaN, infinite or negative.
    BadNumber { table: &'static str, request_id: String, field: &'static str, value: String },
    /// A row whose fields contradict each other.
    Inconsistent { table: &'static str, request_id: String, message: String },
    /// A scheduled provider that the provider table does not define (no prices, no model id).
    UnknownProvider { provider: String },
    /// Two requests of one provider in one round: the round can no longer be paired.
    DuplicateRoundProvider { round_id: String, provider: String },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Duplicate { table, request_id } => {
                write!(f, "{table}: request {request_id}: request_id: duplicate row")
            }
            InputError::NotScheduled { request_id } => {
                write!(f, "responses.parquet: request {request_id}: request_id: not in schedule.parquet")
            }
            InputError::NoResponse { request_id } => write!(
                f,
                "evaluations.parquet: request {request_id}: request_id: no such response in responses.parquet"
            ),
            InputError::NoEvaluation { request_id } => write!(
                f,
                "responses.parquet: request {request_id}: no evaluation in evaluations.parquet; rerun ib-evaluate"
            ),
            InputError::Disagree { table, request_id, field, found, other, expected } => {
                write!(f, "{table}: request {request_id}: {field}: `{found}` differs from {other}'s `{expected}`")
            }
            InputError::Unknown { table, request_id, field, value } => {
                write!(f, "{table}: request {request_id}: {field}: unknown value `{value}`")
            }
            InputError::BadNumber { table, request_id, field, value } => {
                write!(f, "{table}: request {request_id}: {field}: `{value}` is not a finite non-negative number")
            }
            InputError::Inconsistent { table, request_id, message } => {
                write!(f, "{table}: request {request_id}: {message}")
            }
            InputError::UnknownProvider { provider } => {
                write!(f, "schedule.parquet: provider: `{provider}` is not in the spec's provider table")
            }
            InputError::DuplicateRoundProvider { round_id, provider } => {
                write!(f, "schedule.parquet: round {round_id}: provider: `{provider}` has more than one request")
            }
        }
    }
}

impl std::error::Error for InputError {}

/// At most this many problems are listed; a broken join can produce one per row.
const MAX_LISTED: usize = 20;

/// All problems as the shared crate's bad-input error (exit code 3).
pub fn invalid(problems: Vec<InputError>) -> inferbench_contract::Error {
    let total = problems.len();
    let mut lines: Vec<String> = problems.iter().take(MAX_LISTED).map(ToString::to_string).collect();
    if total > MAX_LISTED {
        lines.push(format!("… and {} more", total - MAX_LISTED));
    }
    inferbench_contract::Error::Invalid(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_file_the_row_and_the_field() {
        let e = InputError::Disagree {
            table: "evaluations.parquet",
            request_id: "req-1".into(),
            field: "provider",
            found: "b".into(),
            other: "responses.parquet",
            expected: "a".into(),
        };
        assert_eq!(
            e.to_string(),
            "evaluations.parquet: request req-1: provider: `b` differs from responses.parquet's `a`"
        );
    }

    #[test]
    fn long_problem_lists_are_capped_and_map_to_bad_input() {
        let problems = (0..25).map(|i| InputError::NoEvaluation { request_id: format!("r{i}") }).collect();
        let err = invalid(problems);
        let text = err.to_string();
        assert!(text.contains("… and 5 more"), "{text}");
        let exit = inferbench_cli::exit_for(&anyhow::Error::new(err));
        assert_eq!(exit, inferbench_cli::Exit::BadInput);
    }
}
