//! The `evaluate` stage: `responses.parquet` + dataset gold → `evaluations.parquet`.
//!
//! A pure function of its inputs: no network, no clock, no randomness. Every input is read
//! and every row checked before the output is written (atomically), so a bad input leaves the
//! previous `evaluations.parquet`, if any, untouched; and re-running on the same inputs with
//! the same code writes the same bytes.
use crate::args::Args;
use crate::rubric;
use inferbench_contract::provenance::Inputs;
use inferbench_contract::tables::{ContractFieldCorrect, EvaluationRow, ParsedOutput, ResponseRow};
use inferbench_contract::vocab::{Classification, EvaluationError, OperationalOutcome};
use inferbench_contract::Error;
use inferbench_inputs::dataset::Dataset;
use inferbench_judge::rules::Rules;
use inferbench_store::parquet_io::{self};
use inferbench_store::pipeline::Pipeline;
use std::collections::HashSet;
use std::path::Path;

/// How many classifications there are.
const CLASSES: usize = Classification::ALL.len();

/// At most this many row problems are listed; a systematic mismatch (say, the wrong dataset)
/// would otherwise print one line per response.
const MAX_PROBLEMS_SHOWN: usize = 20;

pub fn run(args: Args) -> anyhow::Result<()> {
    // The gold must be the gold the run was locked to: scoring against an edited dataset
    // would silently change every result. Exit 4, naming the file that changed.
    let mut pipeline = Pipeline::open(&args.run, &args.spec)?;
    let _writer = pipeline.run.lock_for_writing("ib-evaluate")?;
    let dataset = pipeline.dataset(args.dataset.as_deref())?;
    let responses_path = pipeline.run.responses();
    let reader = pipeline.reader::<ResponseRow>(&responses_path, "ib-reconstruct")?;

    // Provenance: the dataset files, the spec and provider table, and the responses, and the
    // scoring rules the responses were judged under (carried on for the later stages).
    let mut inputs: Inputs = pipeline.hashes;
    Rules::of(&reader.inputs).record(&mut inputs);
    let out = pipeline.run.evaluations();
    // A batch of responses in, a batch of evaluations out: memory stays bounded whatever the
    // run's size. The table is published only once every row has been checked; a problem
    // anywhere drops the writer, which removes its temporary file and leaves any previous
    // evaluations.parquet as it was.
    let mut writer = parquet_io::Writer::<EvaluationRow>::create(&out, &inputs)?;
    let mut checker = Checker::new(&responses_path);
    for batch in reader {
        let rows = checker.batch(&batch?, &dataset);
        if checker.problems.is_empty() {
            writer.write(&rows)?;
        }
    }
    let counts = checker.finish()?;
    writer.finish()?;
    eprintln!("ib-evaluate: {}", summary(&counts, &out));
    Ok(())
}

/// Evaluates every response, in order. Fails with every row problem found (up to a cap),
/// each naming the file, the row, the request and the field.
#[cfg(test)]
pub fn evaluate_rows(responses: &[ResponseRow], dataset: &Dataset, path: &Path) -> Result<Vec<EvaluationRow>, Error> {
    let mut checker = Checker::new(path);
    let rows = checker.batch(responses, dataset);
    checker.finish()?;
    Ok(rows)
}

/// The evaluation of a table's rows batch by batch: every row is checked, duplicates across
/// batches included, and the problems are collected (up to a cap) rather than stopping at the
/// first, so one run of the stage names every bad row.
struct Checker<'a> {
    path: &'a Path,
    /// Rows seen so far, for the row numbers of messages.
    offset: usize,
    seen: HashSet<String>,
    problems: Vec<String>,
    hidden: usize,
    /// Rows of each classification, in `Classification::ALL` order.
    counts: [usize; CLASSES],
}

impl<'a> Checker<'a> {
    fn new(path: &'a Path) -> Checker<'a> {
        Checker { path, offset: 0, seen: HashSet::new(), problems: Vec::new(), hidden: 0, counts: [0; CLASSES] }
    }

    fn problem(&mut self, text: String) {
        if self.problems.len() < MAX_PROBLEMS_SHOWN {
            self.problems.push(text);
        } else {
            self.hidden += 1;
        }
    }

    /// Evaluates one batch, in order; the rows of problems are left out (and recorded).
    fn batch(&mut self, responses: &[ResponseRow], dataset: &Dataset) -> Vec<EvaluationRow> {
        let at = |index: usize, id: &str| format!("{}: row {} (request `{id}`)", self.path.display(), index + 1);
        let mut duplicate = vec![false; responses.len()];
        for (i, response) in responses.iter().enumerate() {
            duplicate[i] = !self.seen.insert(response.request_id.clone());
        }
        // The rubric is the stage's work: the two halves of a batch are scored on two threads.
        let half = responses.len().div_ceil(2).max(1);
        let verdicts: Vec<Result<EvaluationRow, String>> = std::thread::scope(|scope| {
            let parts: Vec<_> = responses
                .chunks(half)
                .map(|part| scope.spawn(move || part.iter().map(|r| evaluate_row(r, dataset)).collect::<Vec<_>>()))
                .collect();
            parts.into_iter().flat_map(|p| p.join().expect("the rubric does not panic")).collect()
        });
        let mut rows = Vec::with_capacity(responses.len());
        for (i, (response, verdict)) in responses.iter().zip(verdicts).enumerate() {
            let index = self.offset + i;
            if duplicate[i] {
                self.problem(format!("{}: request_id: duplicate", at(index, &response.request_id)));
                continue;
            }
            match verdict {
                Ok(row) => {
                    let class = Classification::ALL.iter().position(|c| *c == row.classification);
                    self.counts[class.expect("a classification of the vocabulary")] += 1;
                    rows.push(row);
                }
                Err(why) => self.problem(format!("{}: {why}", at(index, &response.request_id))),
            }
        }
        self.offset += responses.len();
        rows
    }

    /// The classification counts, or every problem found.
    fn finish(self) -> Result<[usize; CLASSES], Error> {
        if self.problems.is_empty() {
            return Ok(self.counts);
        }
        let mut problems = self.problems;
        if self.hidden > 0 {
            problems.push(format!("… and {} more", self.hidden));
        }
        Err(Error::Invalid(problems))
    }
}

/// Checks one response against the taxonomy and the dataset, then scores it.
fn evaluate_row(response: &ResponseRow, dataset: &Dataset) -> Result<EvaluationRow, String> {
    if response.request_id.is_empty() {
        return Err("request_id: empty".into());
    }
    if response.provider.is_empty() {
        return Err("provider: empty".into());
    }
    let class = response.operational_outcome;
    let status = response.http_status.map(|s| u16::try_from(s).unwrap_or(u16::MAX));
    // The reference refuses contradictory records (`http_error` with a 2xx status, …) rather
    // than guess which field is right.
    if !class.status_agrees(status) {
        let status = response.http_status.map_or("null".to_string(), |s| s.to_string());
        return Err(format!("http_status: {status} contradicts operational_outcome `{class}`"));
    }
    if OperationalOutcome::of(response.outcome, status) != class {
        return Err(format!("outcome: `{}` contradicts operational_outcome `{class}`", response.outcome));
    }
    let family = response.task_family;
    // A synthetic prompt is no item of the dataset: it has no gold, and its answer is not
    // scored (below).
    let item = match family.is_scored() {
        true => Some(dataset.item(family, &response.item_id).ok_or_else(|| {
            format!("item_id: `{}` is not a {family} item of the dataset {}", response.item_id, dataset.dir.display())
        })?),
        false => None,
    };

    let mut row = EvaluationRow {
        request_id: response.request_id.clone(),
        classification: Classification::FailedRequest,
        evaluation_error_type: class.failure_type(),
        schema_valid: false,
        correct: false,
        correct_field_count: None,
        field_count_total: None,
        field_correct: None,
        parsed_output: None,
    };
    if class.is_failure() {
        return Ok(row);
    }
    if response.credential_echo {
        // The answer was withheld from responses.parquet; it is not scored, and it is not a
        // success: a provider that leaks a key has not answered the task.
        row.classification = Classification::InvalidResult;
        row.evaluation_error_type = Some(EvaluationError::CredentialEcho);
        return Ok(row);
    }
    let Some(item) = item else {
        // Answered, but nothing to score it against: neither correct nor wrong.
        row.classification = Classification::NotScored;
        row.evaluation_error_type = None;
        return Ok(row);
    };
    let verdict = rubric::evaluate(family, &response.answer, &item.gold, &item.aliases)
        .map_err(|e| format!("gold of item `{}` in {}.jsonl: {e}", item.id, item.family))?;
    row.classification = verdict.outcome.classification();
    row.evaluation_error_type = verdict.outcome.error_type();
    row.schema_valid = verdict.outcome.schema_valid();
    row.correct = verdict.outcome.correct();
    row.parsed_output = verdict.parsed.as_ref().and_then(|parsed| ParsedOutput::of(family, parsed));
    if let Some(fields) = &verdict.fields {
        // At most ten fields: the casts cannot truncate.
        row.correct_field_count = Some(fields.correct_count() as i64);
        row.field_count_total = Some(fields.total() as i64);
        row.field_correct = Some(
            ContractFieldCorrect::of(&fields.flags)
                .ok_or_else(|| format!("field scores {:?} are not the contract's fields", fields.flags))?,
        );
    }
    Ok(row)
}

/// One line: how many rows of each classification were written, and where.
fn summary(counts: &[usize; CLASSES], out: &Path) -> String {
    let each: Vec<String> = Classification::ALL.iter().zip(counts).map(|(c, n)| format!("{c} {n}")).collect();
    format!("{} evaluations written to {} ({})", counts.iter().sum::<usize>(), out.display(), each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_cli::{exit_for, Exit};
    use inferbench_contract::canonical;
    use inferbench_contract::lock::Lock;
    use inferbench_contract::vocab::{Outcome, TaskFamily};
    use inferbench_inputs::dataset::{self, Item, LoadOptions};
    use inferbench_inputs::spec::Spec;
    use inferbench_store::run::RunDir;
    use serde_json::{json, Value};
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    const MEETING: TaskFamily = TaskFamily::MeetingNotesLookup;
    const TICKET: TaskFamily = TaskFamily::TicketTriage;
    const CONTRACT: TaskFamily = TaskFamily::ContractTermsExtraction;

    fn meeting_gold() -> Value {
        json!({"type": "person", "value": "Augusta King"})
    }
    fn ticket_gold() -> Value {
        json!({"category": "bug", "priority": "p2"})
    }
    fn contract_gold() -> Value {
        json!({"agreement_type": "saas_subscription", "effective_date": "2026-01-01",
            "initial_term_end_date": "2026-12-31", "auto_renews": true, "renewal_term_months": 12,
            "non_renewal_notice_days": 30, "payment_terms_days": 30, "termination_for_convenience": false,
            "termination_notice_days": null, "security_incident_notice_hours": 24})
    }

    fn item(family: TaskFamily, id: &str, gold: Value, aliases: &[&str]) -> Item {
        Item {
            id: id.into(),
            family,
            system: "s".into(),
            user: "u".into(),
            gold,
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            sha256: "0".repeat(64),
        }
    }

    fn dataset() -> Dataset {
        Dataset {
            dir: PathBuf::from("data/test"),
            items: BTreeMap::from([
                (MEETING, vec![item(MEETING, "m-1", meeting_gold(), &["Ada Lovelace"])]),
                (TICKET, vec![item(TICKET, "t-1", ticket_gold(), &[])]),
                (CONTRACT, vec![item(CONTRACT, "c-1", contract_gold(), &[])]),
            ]),
            file_hashes: BTreeMap::new(),
            release_hash: "0".repeat(64),
        }
    }

    /// A response row; `operational` decides the terminal outcome.
    fn response(
        request_id: &str,
        family: TaskFamily,
        item_id: &str,
        operational: &str,
        status: Option<i64>,
        answer: &str,
    ) -> ResponseRow {
        let operational: OperationalOutcome = operational.parse().unwrap();
        let outcome = match operational {
            OperationalOutcome::Success => Outcome::Completed,
            OperationalOutcome::Timeout => Outcome::Timeout,
            OperationalOutcome::TransportError => Outcome::TransportError,
            OperationalOutcome::InvalidStream => Outcome::InvalidStream,
            OperationalOutcome::StreamError => Outcome::StreamError,
            OperationalOutcome::Truncated => Outcome::Truncated,
            _ => Outcome::HttpError,
        };
        ResponseRow {
            task_family: family,
            item_id: item_id.into(),
            outcome,
            operational_outcome: operational,
            http_status: status,
            done_seen: !operational.is_failure(),
            answer: answer.into(),
            complete: !operational.is_failure() && !answer.is_empty(),
            ..inferbench_contract::testutil::response_row(request_id)
        }
    }

    fn ok(family: TaskFamily, item_id: &str, answer: &str) -> ResponseRow {
        response("req-1", family, item_id, "2xx", Some(200), answer)
    }

    fn one(row: ResponseRow) -> EvaluationRow {
        evaluate_rows(&[row], &dataset(), Path::new("responses.parquet")).unwrap().remove(0)
    }

    fn problems(rows: &[ResponseRow]) -> String {
        evaluate_rows(rows, &dataset(), Path::new("responses.parquet")).unwrap_err().to_string()
    }

    #[test]
    fn non_2xx_outcomes_are_failed_requests_with_their_error_type() {
        let cases = [
            ("timeout", None, "timeout"),
            ("timeout", Some(200), "timeout"),
            ("429", Some(429), "rate_limited_http_429"),
            ("other_4xx", Some(404), "other_http_4xx"),
            ("5xx", Some(500), "http_5xx"),
            ("other_http", Some(302), "other_http"),
            ("transport_error", None, "transport_error"),
            ("transport_error", Some(200), "transport_error"),
        ];
        for (operational, status, error_type) in cases {
            // Even a perfect answer in a failed response is not scored.
            let row =
                one(response("req-1", TICKET, "t-1", operational, status, r#"{"category":"bug","priority":"p2"}"#));
            assert_eq!(row.classification.as_str(), "failed_request", "{operational}");
            assert_eq!(row.evaluation_error_type.map(EvaluationError::as_str), Some(error_type), "{operational}");
            assert!(!row.schema_valid && !row.correct);
            assert_eq!((row.parsed_output, row.correct_field_count, row.field_correct), (None, None, None));
        }
    }

    #[test]
    fn the_row_holds_the_request_id_and_the_verdict_only() {
        let row = one(response("req-9", CONTRACT, "c-1", "5xx", Some(503), ""));
        assert_eq!((row.request_id.as_str(), row.field_count_total), ("req-9", None));
        let columns: Vec<String> = inferbench_store::parquet_io::fields::<EvaluationRow>()
            .unwrap()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        let response_columns: Vec<String> = inferbench_store::parquet_io::fields::<ResponseRow>()
            .unwrap()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        let shared: Vec<&String> = columns.iter().filter(|c| response_columns.contains(c)).collect();
        assert_eq!(shared, ["request_id"], "evaluations join responses on request_id alone");
    }

    #[test]
    fn a_2xx_oops_is_malformed_json() {
        let row = one(ok(MEETING, "m-1", "oops"));
        assert_eq!(
            (row.classification.as_str(), row.evaluation_error_type.map(EvaluationError::as_str)),
            ("invalid_result", Some("malformed_json"))
        );
        assert_eq!(row.parsed_output, None);
        let empty = one(ok(TICKET, "t-1", ""));
        assert_eq!(empty.evaluation_error_type.map(EvaluationError::as_str), Some("malformed_json"));
    }

    fn meeting_answer(row: &EvaluationRow) -> Option<&str> {
        row.parsed_output.as_ref()?.meeting_notes_lookup.as_ref()?.answer.as_deref()
    }

    #[test]
    fn a_2xx_answer_is_scored_and_its_parse_stored_as_typed_fields() {
        let meeting = one(ok(MEETING, "m-1", r#"  {"answer": "  ADA   LOVELACE "}  "#));
        assert_eq!(
            (meeting.classification.as_str(), meeting.evaluation_error_type, meeting.schema_valid, meeting.correct),
            ("valid_result", None, true, true)
        );
        assert_eq!(meeting_answer(&meeting), Some("  ADA   LOVELACE "));
        let parsed = meeting.parsed_output.as_ref().unwrap();
        assert_eq!((parsed.ticket_triage.as_ref(), parsed.contract_terms_extraction.as_ref()), (None, None));
        assert_eq!(meeting.field_count_total, None);

        let ticket = one(ok(TICKET, "t-1", r#"{"priority":"p1","category":"bug"}"#));
        assert_eq!(
            (ticket.classification.as_str(), ticket.schema_valid, ticket.correct),
            ("incorrect_result", true, false)
        );
        let triage = ticket.parsed_output.unwrap().ticket_triage.unwrap();
        assert_eq!((triage.category.as_deref(), triage.priority.as_deref()), (Some("bug"), Some("p1")));

        // Parsed, but not of the contract's type: the object is kept, the field is null.
        let schema = one(ok(MEETING, "m-1", r#"{"answer":1}"#));
        assert_eq!(
            (schema.classification.as_str(), schema.evaluation_error_type.map(EvaluationError::as_str)),
            ("invalid_result", Some("schema_invalid"))
        );
        assert!(schema.parsed_output.as_ref().unwrap().meeting_notes_lookup.is_some());
        assert_eq!(meeting_answer(&schema), None);
        // Parsed, but not an object: nothing to hold.
        let array = one(ok(MEETING, "m-1", r#"["Ada"]"#));
        assert_eq!(
            (array.evaluation_error_type.map(EvaluationError::as_str), array.parsed_output),
            (Some("schema_invalid"), None)
        );
    }

    #[test]
    fn contract_rows_carry_field_diagnostics_even_when_invalid() {
        let mut answer = contract_gold();
        answer["renewal_term_months"] = json!(true);
        let row = one(ok(CONTRACT, "c-1", &answer.to_string()));
        assert_eq!(
            (row.classification.as_str(), row.evaluation_error_type.map(EvaluationError::as_str)),
            ("invalid_result", Some("schema_invalid"))
        );
        assert_eq!((row.correct_field_count, row.field_count_total), (Some(9), Some(10)));
        let flags = row.field_correct.as_ref().unwrap();
        assert!(!flags.renewal_term_months && flags.auto_renews && flags.termination_notice_days);
        let extracted = row.parsed_output.as_ref().unwrap().contract_terms_extraction.as_ref().unwrap();
        assert_eq!((extracted.renewal_term_months, extracted.payment_terms_days), (None, Some(30)));
        assert_eq!((extracted.auto_renews, extracted.termination_notice_days), (Some(true), None));
        let valid = one(ok(CONTRACT, "c-1", &contract_gold().to_string()));
        assert_eq!((valid.classification.as_str(), valid.correct_field_count), ("valid_result", Some(10)));
    }

    #[test]
    fn order_is_kept() {
        let rows = [
            response("b", TICKET, "t-1", "429", Some(429), ""),
            response("a", MEETING, "m-1", "2xx", Some(200), r#"{"answer":"Augusta King"}"#),
        ];
        let out = evaluate_rows(&rows, &dataset(), Path::new("r")).unwrap();
        assert_eq!(out.iter().map(|r| r.request_id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn an_unknown_item_is_bad_input_naming_the_request() {
        let err = problems(&[ok(TICKET, "t-404", "{}")]);
        assert!(
            err.contains("responses.parquet: row 1 (request `req-1`): item_id: `t-404` is not a ticket-triage item"),
            "{err}"
        );
        // The item must belong to the row's family too.
        assert!(problems(&[ok(TICKET, "m-1", "{}")]).contains("item_id: `m-1`"));
    }

    #[test]
    fn malformed_rows_are_refused_all_at_once() {
        let mut stream_error_404 = response("r2", TICKET, "t-1", "stream_error", Some(404), "");
        stream_error_404.request_id = "r2".into();
        let contradiction = response("r3", TICKET, "t-1", "5xx", Some(200), "");
        let missing_status = response("r4", TICKET, "t-1", "429", None, "");
        let mut completed_timeout = response("r5", TICKET, "t-1", "timeout", None, "");
        completed_timeout.outcome = Outcome::Completed;
        let duplicate = response("r3", TICKET, "t-1", "5xx", Some(500), "");
        let err = problems(&[stream_error_404, contradiction, missing_status, completed_timeout, duplicate]);
        assert!(err.starts_with("5 problem(s) found:"), "{err}");
        for expected in [
            "row 1 (request `r2`): http_status: 404 contradicts operational_outcome `stream_error`",
            "row 2 (request `r3`): http_status: 200 contradicts operational_outcome `5xx`",
            "row 3 (request `r4`): http_status: null contradicts operational_outcome `429`",
            "row 4 (request `r5`): outcome: `completed` contradicts operational_outcome `timeout`",
            "row 5 (request `r3`): request_id: duplicate",
        ] {
            assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
        }
    }

    #[test]
    fn stream_failures_are_failed_requests_and_a_credential_echo_is_never_scored() {
        for (class, error_type) in
            [("invalid_stream", "invalid_stream"), ("stream_error", "stream_error"), ("truncated", "truncated")]
        {
            let row = one(response("r", TICKET, "t-1", class, Some(200), r#"{"category":"bug","priority":"p2"}"#));
            assert_eq!(
                (row.classification.as_str(), row.evaluation_error_type.map(EvaluationError::as_str)),
                ("failed_request", Some(error_type))
            );
        }
        let mut echoed = ok(TICKET, "t-1", "<withheld>");
        echoed.credential_echo = true;
        let row = one(echoed);
        assert_eq!(
            (row.classification, row.evaluation_error_type, row.parsed_output),
            (Classification::InvalidResult, Some(EvaluationError::CredentialEcho), None)
        );
    }

    #[test]
    fn the_problem_list_is_capped() {
        let rows: Vec<ResponseRow> =
            (0..25).map(|i| response(&format!("r{i}"), TICKET, "nope", "2xx", Some(200), "")).collect();
        let err = problems(&rows);
        assert!(err.starts_with("21 problem(s) found:"), "{err}");
        assert!(err.ends_with("… and 5 more"), "{err}");
    }

    // ---- the whole stage on files -------------------------------------------------------

    fn spec_path() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/spec.yaml")
    }

    /// Writes a one-item-per-family sample dataset that validates against the bundled spec.
    fn write_dataset(dir: &Path, spec: &Spec) {
        std::fs::create_dir_all(dir).unwrap();
        let mut use_cases = serde_json::Map::new();
        for family in &spec.families {
            let template = std::fs::read_to_string(spec.dir().join(&family.prompt_template)).unwrap();
            let system = template.strip_suffix('\n').unwrap_or(&template);
            let (id, gold, band_field) = match family.name {
                MEETING => ("m-1", meeting_gold(), "input_total"),
                TICKET => ("t-1", ticket_gold(), "user"),
                _ => ("c-1", contract_gold(), "user"),
            };
            let aliases = if family.name == MEETING { json!(["Ada Lovelace"]) } else { json!([]) };
            let row = json!({"id": id, "use_case": family.name, "split": "private",
                "prompt": {"system": system, "user": "Synthetic case 0"},
                "output_schema": inferbench_contract::family::output_schema(family.name), "gold": gold, "aliases": aliases,
                "tokens": {band_field: family.input_tokens.0}});
            std::fs::write(dir.join(format!("{}.jsonl", family.name)), format!("{row}\n")).unwrap();
            use_cases.insert(family.name.to_string(), json!({"private_items": 1}));
        }
        let manifest = json!({"status": "frozen", "freeze_ready": true, "use_cases": use_cases});
        std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    }

    fn write_lock(run: &RunDir, inputs: BTreeMap<String, String>) {
        let spec = Spec::load(&spec_path()).unwrap();
        let lock = Lock {
            run_id: run.run_id(),
            benchmark_slug: "inference-micro-single-task".into(),
            code_version: "test".into(),
            inputs,
            providers: inferbench_inputs::providers::ProviderTable::load(&spec.providers_path, &spec).unwrap().names(),
            ..inferbench_contract::testutil::lock()
        };
        inferbench_store::testutil::write_lock(run, &lock);
    }

    /// Provenance naming only the run's lock.
    fn lock_only(run: &RunDir) -> Inputs {
        Inputs::from([("lock.json".to_string(), inferbench_contract::canonical::file_sha256(&run.lock()).unwrap())])
    }

    /// A run directory with a lock bound to a fresh sample dataset, and three responses.
    fn fixture(root: &Path) -> (RunDir, PathBuf) {
        let spec = Spec::load(&spec_path()).unwrap();
        let data = root.join("data");
        write_dataset(&data, &spec);
        let loaded = dataset::load(&data, &spec, LoadOptions { sample: true }).unwrap();
        let run = RunDir::new(root.join("run-1"));
        std::fs::create_dir_all(run.root()).unwrap();
        let mut inputs = loaded.file_hashes.clone();
        inputs.insert("spec.yaml".into(), inferbench_contract::canonical::file_sha256(&spec_path()).unwrap());
        inputs.insert(
            "providers.yaml".into(),
            inferbench_contract::canonical::file_sha256(&spec.providers_path).unwrap(),
        );
        write_lock(&run, inputs);
        let responses = [
            response("req-a", MEETING, "m-1", "2xx", Some(200), r#"{"answer":"Ada\u00a0lovelace"}"#),
            response("req-b", TICKET, "t-1", "2xx", Some(200), "```json\n{}\n```"),
            response("req-c", CONTRACT, "c-1", "timeout", None, ""),
        ];
        parquet_io::write(&run.responses(), &responses, &lock_only(&run)).unwrap();
        (run, data)
    }

    fn args(run: &RunDir, data: &Path) -> Args {
        Args { run: run.root().into(), spec: spec_path().into(), dataset: Some(data.to_path_buf()).into() }
    }

    #[test]
    fn the_stage_writes_identical_bytes_with_provenance_on_rerun() {
        let tmp = tempfile::tempdir().unwrap();
        let (run_dir, data) = fixture(tmp.path());
        run(args(&run_dir, &data)).unwrap();
        let first = std::fs::read(run_dir.evaluations()).unwrap();
        run(args(&run_dir, &data)).unwrap();
        assert_eq!(std::fs::read(run_dir.evaluations()).unwrap(), first);

        let table = parquet_io::read::<EvaluationRow>(&run_dir.evaluations()).unwrap();
        let verdicts: Vec<(&str, Option<&str>)> = table
            .rows
            .iter()
            .map(|r| (r.classification.as_str(), r.evaluation_error_type.map(EvaluationError::as_str)))
            .collect();
        assert_eq!(
            verdicts,
            [("valid_result", None), ("invalid_result", Some("malformed_json")), ("failed_request", Some("timeout"))]
        );
        assert_eq!(
            table.inputs["responses.parquet"],
            inferbench_contract::canonical::file_sha256(&run_dir.responses()).unwrap()
        );
        for key in
            ["manifest.json", "meeting-notes-lookup.jsonl", "ticket-triage.jsonl", "contract-terms-extraction.jsonl"]
        {
            assert_eq!(table.inputs[key], canonical::sha256_hex(&std::fs::read(data.join(key)).unwrap()), "{key}");
        }
        // The seven dataset files, the responses, the lock, the spec and the provider table.
        assert_eq!(table.inputs.len(), 11, "{:?}", table.inputs.keys());
        assert!(table.inputs.contains_key("spec.yaml") && table.inputs.contains_key("providers.yaml"));
        assert_eq!(table.inputs["lock.json"], inferbench_contract::canonical::file_sha256(&run_dir.lock()).unwrap());
    }

    #[test]
    fn a_changed_dataset_is_a_lock_mismatch_and_nothing_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let (run_dir, data) = fixture(tmp.path());
        // Change the gold after the run was locked.
        let path = data.join("ticket-triage.jsonl");
        let text = std::fs::read_to_string(&path).unwrap().replace("\"p2\"", "\"p1\"");
        std::fs::write(&path, text).unwrap();
        let err = run(args(&run_dir, &data)).unwrap_err();
        assert_eq!(exit_for(&err), Exit::LockMismatch, "{err:#}");
        assert!(err.to_string().contains("ticket-triage.jsonl changed since the run was locked"), "{err:#}");
        assert!(!run_dir.evaluations().exists());
    }

    #[test]
    fn a_bad_response_row_is_bad_input_and_nothing_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let (run_dir, data) = fixture(tmp.path());
        let rows = [response("req-a", MEETING, "m-unknown", "2xx", Some(200), "{}")];
        parquet_io::write(&run_dir.responses(), &rows, &lock_only(&run_dir)).unwrap();
        let err = run(args(&run_dir, &data)).unwrap_err();
        assert_eq!(exit_for(&err), Exit::BadInput, "{err:#}");
        assert!(err.to_string().contains("request `req-a`"), "{err:#}");
        assert!(!run_dir.evaluations().exists());
    }

    #[test]
    fn missing_responses_are_bad_input() {
        let tmp = tempfile::tempdir().unwrap();
        let (run_dir, data) = fixture(tmp.path());
        std::fs::remove_file(run_dir.responses()).unwrap();
        let err = run(args(&run_dir, &data)).unwrap_err();
        assert_eq!(exit_for(&err), Exit::BadInput);
        assert!(err.to_string().contains("missing; run ib-reconstruct first"), "{err:#}");
    }
}
