//! An imported reference run, re-scored, beside the reference's own scoring of it: which
//! requests inferbench scores differently and why (each a deviation the README documents),
//! and whether every figure of `metrics.json` and `comparisons.json` that differs from the
//! reference's is one those deviations explain. A difference no deviation explains is named
//! as unexplained: it is a bug in one of the two, and the report says so rather than hide it.
//!
//! The reference's figures describe these records only when it derived them from all of them:
//! it derives figures once every request of its plan is terminal, and a passed smoke also
//! leaves copies of its own figures where a full run's go. So a full run's figures are
//! compared when its `artifacts/run-manifest.json` says they are the full run's, or, with no
//! manifest (the reference does not always leave one), when every request of the plan has a
//! terminal record; a smoke's copies never are. When they are not compared, the report says why.
use crate::labels::label;
use inferbench_contract::documents::{ComparisonsDocument, MetricsDocument};
use inferbench_contract::lock::ImportedFrom;
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_contract::vocab::{ErrorKind, Outcome, ReferenceOutcome};
use inferbench_contract::Error;
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::reference_records::{HISTORICAL_ERROR_MESSAGE, HISTORICAL_ERROR_TYPE};
use inferbench_judge::rules::Rules;
use inferbench_store::parquet_io;
use inferbench_store::run::RunDir;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Why a request is scored differently from the reference: the README's deviations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    Truncated,
    EmptyStream,
    AfterDone,
    InBandError,
    InvalidData,
    DoneThenHeldOpen,
    SpecialToken,
}

impl Cause {
    pub fn text(self) -> &'static str {
        match self {
            Cause::Truncated => {
                "their stream ended with neither `[DONE]` nor a `finish_reason`: inferbench fails it as `truncated`, \
                 the reference scored its answer"
            }
            Cause::EmptyStream => {
                "their 2xx body held no server-sent event: inferbench fails it as `invalid_stream`, the reference \
                 scored an empty answer"
            }
            Cause::AfterDone => {
                "text arrived after `[DONE]`: it does not join inferbench's answer, the reference joined it"
            }
            Cause::InBandError => {
                "the provider reported an error inside the stream: inferbench fails it as `stream_error`, the \
                 reference scored the stream's text"
            }
            Cause::InvalidData => {
                "their stream carried data that is not a JSON object: inferbench's class is `invalid_stream`, the \
                 reference's `transport_error`"
            }
            Cause::DoneThenHeldOpen => {
                "the provider sent `[DONE]` and then held the connection open: `[DONE]` completes the response for \
                 inferbench, the reference waited for the close and failed it"
            }
            Cause::SpecialToken => {
                "their text contains special-token text such as `<|endoftext|>`: ordinary text to inferbench's \
                 tokenizer, an error (`transport_error`) to the reference's"
            }
        }
    }
}

/// What the reference recorded about one request.
struct RefRecord {
    /// `None` for an outcome the reference does not write.
    outcome: Option<ReferenceOutcome>,
    /// The runner error the reference scores as a transport error (its §5.9).
    historical: bool,
    answer: Option<String>,
    error_type: Option<String>,
    malformed_event: bool,
    done_event: bool,
}

/// The comparison, for the report.
pub struct Parity {
    pub from: ImportedFrom,
    pub rules: Rules,
    /// Requests both scored.
    pub compared: usize,
    pub deviations: BTreeMap<Cause, Vec<String>>,
    /// Requests scored differently for no documented reason.
    pub unexplained: Vec<String>,
    /// Requests inferbench scored that the reference derived no evaluation for.
    pub without_reference_evaluation: usize,
    /// Reference runner errors: no provider outcome, so no evaluation on either side.
    pub runner_errors: usize,
    /// Provider-level deviations, one line each.
    pub providers: Vec<String>,
    /// Figures of the two documents compared, and the paths of those that differ, split into
    /// explained and unexplained; else why they were not compared.
    pub figures: Result<Figures, NotCompared>,
}

/// Why the reference's figures were not compared with inferbench's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCompared {
    /// The run is complete, and the reference left no figures for its partition.
    NoFigures { metrics: String, paired: String },
    /// Not every request of the plan has a terminal record: the reference derives no figures
    /// for such a run, and figures found in its place are not of these records.
    Incomplete { recorded: usize, planned: usize, figures_present: bool },
    /// `artifacts/metrics.json` is a passed smoke's copy: the manifest beside it is of that kind.
    OtherKind { kind: String },
}

impl NotCompared {
    /// The report's sentence, after "- Figures: ".
    fn text(&self) -> String {
        match self {
            NotCompared::NoFigures { metrics, paired } => format!(
                "not compared: the reference run holds no `{metrics}` and `{paired}` for these records, so there are \
                 none to compare."
            ),
            NotCompared::Incomplete { recorded, planned, figures_present } => format!(
                "not compared: the reference run is incomplete ({recorded} of its {planned} planned requests have a \
                 terminal record), and the reference derives figures only from a complete run{}.",
                if *figures_present { ", so the figures found beside it are not of these records" } else { "" }
            ),
            NotCompared::OtherKind { kind } => format!(
                "not compared: the reference's `artifacts/metrics.json` and `paired-comparisons.json` are copies from \
                 a run of kind `{kind}` (its `artifacts/run-manifest.json` says so; a passed smoke leaves them), not \
                 figures of this full run's records."
            ),
        }
    }
}

pub struct Figures {
    pub compared: usize,
    pub explained: Vec<String>,
    pub unexplained: Vec<String>,
}

fn read_jsonl(path: &Path) -> anyhow::Result<Vec<Value>> {
    let bytes = std::fs::read(path).map_err(|e| Error::unreadable(path, e))?;
    let mut out = Vec::new();
    for (i, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
        let value = serde_json::from_str(line)
            .ok()
            .or_else(|| inferbench_contract::lenient_json::parse(line))
            .ok_or_else(|| Error::bad(format!("{}:{}: not valid JSON", path.display(), i + 1)))?;
        out.push(value);
    }
    Ok(out)
}

fn id_of(value: &Value) -> Option<String> {
    value.get("request_id").and_then(Value::as_str).map(str::to_string)
}

fn ref_record(record: &Value) -> RefRecord {
    let events = record.get("stream_events").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let classified = |c: &str| events.iter().any(|e| e.get("classification").and_then(Value::as_str) == Some(c));
    RefRecord {
        outcome: record.get("terminal_outcome").and_then(Value::as_str).and_then(|o| o.parse().ok()),
        historical: record.pointer("/error/type").and_then(Value::as_str) == Some(HISTORICAL_ERROR_TYPE)
            && record.pointer("/error/message").and_then(Value::as_str) == Some(HISTORICAL_ERROR_MESSAGE),
        answer: record.get("reconstructed_answer").and_then(Value::as_str).map(str::to_string),
        error_type: record.pointer("/error/type").and_then(Value::as_str).map(str::to_string),
        malformed_event: classified("malformed_sse"),
        done_event: classified("done"),
    }
}

/// Why our response of a request scored differently from the reference's record, if the
/// difference is a documented one.
fn cause(ours: &ResponseRow, theirs: &RefRecord) -> Option<Cause> {
    let reference_completed = theirs.outcome == Some(ReferenceOutcome::Completed);
    match ours.outcome {
        Outcome::Truncated if reference_completed => Some(Cause::Truncated),
        Outcome::InvalidStream if reference_completed && ours.error_type == Some(ErrorKind::EmptyStream) => {
            Some(Cause::EmptyStream)
        }
        Outcome::InvalidStream
            if theirs.outcome == Some(ReferenceOutcome::TransportError) && theirs.malformed_event =>
        {
            Some(Cause::InvalidData)
        }
        Outcome::StreamError if reference_completed => Some(Cause::InBandError),
        Outcome::Completed
            if reference_completed && ours.events_after_end > 0 && theirs.answer.as_ref() != Some(&ours.answer) =>
        {
            Some(Cause::AfterDone)
        }
        Outcome::Completed
            if theirs.outcome == Some(ReferenceOutcome::TransportError)
                && theirs.error_type.as_deref() == Some("invalid_sse")
                && !theirs.malformed_event =>
        {
            Some(Cause::SpecialToken)
        }
        Outcome::Completed if ours.done_seen && theirs.done_event && !reference_completed => {
            Some(Cause::DoneThenHeldOpen)
        }
        _ => None,
    }
}

/// Whether two evaluations agree on what the reference's evaluation records.
fn same_verdict(ours: &EvaluationRow, theirs: &Value) -> bool {
    let error_type = ours.evaluation_error_type.map(|e| e.as_str());
    theirs.get("classification").and_then(Value::as_str) == Some(ours.classification.as_str())
        && theirs.get("error_type").and_then(Value::as_str) == error_type
        && theirs.get("correct").and_then(Value::as_bool) == Some(ours.correct)
        && theirs.get("correct_field_count").and_then(Value::as_i64) == ours.correct_field_count
}

/// Loads the reference's side of an imported run and compares; `None` for a run that was not
/// imported.
pub fn compare(
    run: &RunDir,
    from: Option<&ImportedFrom>,
    responses: &[ResponseRow],
    evaluations: &[EvaluationRow],
    metrics: &MetricsDocument,
    comparisons: &ComparisonsDocument,
) -> anyhow::Result<Option<Parity>> {
    let Some(from) = from else { return Ok(None) };
    let records = read_jsonl(&run.reference_records())?;
    let reference_evaluations: BTreeMap<String, Value> =
        read_jsonl(&run.reference_evaluations())?.into_iter().filter_map(|e| Some((id_of(&e)?, e))).collect();
    let records: BTreeMap<String, RefRecord> =
        records.iter().filter_map(|r| Some((id_of(r)?, ref_record(r)))).collect();
    let ours: BTreeMap<&str, &ResponseRow> = responses.iter().map(|r| (r.request_id.as_str(), r)).collect();
    let rules = Rules::of(&metrics.provenance.inputs);
    let (mut compared, mut without_reference_evaluation) = (0, 0);
    let mut deviations: BTreeMap<Cause, Vec<String>> = BTreeMap::new();
    let mut unexplained = Vec::new();
    let mut deviating: BTreeSet<String> = BTreeSet::new();
    for evaluation in evaluations {
        let id = evaluation.request_id.as_str();
        let Some(theirs) = reference_evaluations.get(id) else {
            without_reference_evaluation += 1;
            continue;
        };
        compared += 1;
        let (Some(response), Some(record)) = (ours.get(id), records.get(id)) else { continue };
        let why = cause(response, record);
        if same_verdict(evaluation, theirs) && why.is_none() {
            continue;
        }
        deviating.insert(response.provider.clone());
        match why {
            Some(cause) => deviations.entry(cause).or_default().push(id.to_string()),
            None => unexplained.push(id.to_string()),
        }
    }
    let reference_failures = inferbench_inputs::reference_records::paired_check_failures(&run.reference_records())?;
    let providers = provider_deviations(rules, metrics, comparisons, reference_failures.as_ref(), &mut deviating);
    let figures = reference_figures(run, from, &records, metrics, comparisons, &deviating)?;
    Ok(Some(Parity {
        from: from.clone(),
        rules,
        compared,
        deviations,
        unexplained,
        without_reference_evaluation,
        runner_errors: records
            .values()
            .filter(|r| r.outcome == Some(ReferenceOutcome::RunnerError) && !r.historical)
            .count(),
        providers,
        figures,
    }))
}

/// The reference's figures of the partition beside inferbench's, when they are of these
/// records; else why they are not compared.
fn reference_figures(
    run: &RunDir,
    from: &ImportedFrom,
    records: &BTreeMap<String, RefRecord>,
    metrics: &MetricsDocument,
    comparisons: &ComparisonsDocument,
    deviating: &BTreeSet<String>,
) -> anyhow::Result<Result<Figures, NotCompared>> {
    let dir = run.reference();
    let sfx = match from.attempt {
        Some(n) => format!("-attempt-{n}"),
        None => String::new(),
    };
    let (metrics_name, paired_name) = (format!("metrics{sfx}.json"), format!("paired-comparisons{sfx}.json"));
    let reference_metrics = dir.join("artifacts").join(&metrics_name);
    let reference_paired = dir.join("artifacts").join(&paired_name);
    // The run's schedule is the reference's plan of the partition, every request of it.
    let planned: BTreeSet<String> =
        parquet_io::read::<ScheduleRow>(&run.schedule())?.rows.into_iter().map(|r| r.request_id).collect();
    let manifest_kind = match from.attempt {
        Some(_) => None,
        None => std::fs::read(dir.join("artifacts/run-manifest.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|m| m.get("kind").and_then(Value::as_str).map(str::to_string)),
    };
    let coverage = Coverage {
        recorded: planned.iter().filter(|id| records.contains_key(id.as_str())).count(),
        planned: planned.len(),
        figures_present: reference_metrics.is_file() && reference_paired.is_file(),
        manifest_kind,
    };
    if let Some(why) = coverage.not_compared(&metrics_name, &paired_name) {
        return Ok(Err(why));
    }
    let theirs_m: Value = inferbench_store::atomic::read_json(&reference_metrics)?;
    let theirs_c: Value = inferbench_store::atomic::read_json(&reference_paired)?;
    let ours_m = serde_json::to_value(metrics)?;
    let ours_c = serde_json::to_value(comparisons)?;
    Ok(Ok(figures(&ours_m, &theirs_m, &ours_c, &theirs_c, deviating)))
}

/// What decides whether the reference's figures are of the imported records.
struct Coverage {
    /// Requests of the plan (the run's schedule) with a reference terminal record, of `planned`.
    recorded: usize,
    planned: usize,
    /// The partition's `metrics` and `paired-comparisons` files are both there.
    figures_present: bool,
    /// A full run's `artifacts/run-manifest.json` kind, when there is one (never for a smoke
    /// attempt, whose figure files are its own).
    manifest_kind: Option<String>,
}

impl Coverage {
    /// Why the figures are not compared; `None` when they are. A manifest that says `full` is
    /// the reference's word that it derived them; without one, the records must cover the plan.
    fn not_compared(&self, metrics: &str, paired: &str) -> Option<NotCompared> {
        let complete = self.recorded == self.planned;
        let incomplete = || NotCompared::Incomplete {
            recorded: self.recorded,
            planned: self.planned,
            figures_present: self.figures_present,
        };
        if !self.figures_present {
            return Some(if complete {
                NotCompared::NoFigures { metrics: metrics.to_string(), paired: paired.to_string() }
            } else {
                incomplete()
            });
        }
        match self.manifest_kind.as_deref() {
            Some("full") => None,
            Some(kind) => Some(NotCompared::OtherKind { kind: kind.to_string() }),
            None if complete => None,
            None => Some(incomplete()),
        }
    }
}

/// Provider-level deviations: model aliases the reference does not accept, and records that
/// the reference's record-level check (on its own records) would have left out of the pairs.
fn provider_deviations(
    rules: Rules,
    metrics: &MetricsDocument,
    comparisons: &ComparisonsDocument,
    reference_failures: Option<&BTreeMap<String, usize>>,
    deviating: &mut BTreeSet<String>,
) -> Vec<String> {
    let mut providers = Vec::new();
    if rules.is_reference() {
        return providers;
    }
    for row in &metrics.combined_provider_metrics {
        let name = &row.metrics.provider;
        let exact = row.expected_models.first();
        let aliases: Vec<String> = row
            .models_returned
            .iter()
            .filter(|(m, _)| Some(*m) != exact && row.expected_models.contains(m))
            .map(|(m, n)| format!("`{m}` ({n})"))
            .collect();
        if !aliases.is_empty() {
            deviating.insert(name.clone());
            providers.push(format!(
                "{name}: its completed responses named {}, an alias its provider table allows for `{}`; the reference \
                 accepts only the exact model id, so there it is an incompatible configuration",
                aliases.join(", "),
                exact.map_or("", String::as_str)
            ));
        }
        let paired = comparisons.provider_eligibility.iter().any(|e| &e.provider == name && e.eligible);
        let failing = reference_failures.and_then(|f| f.get(name).copied()).unwrap_or(0);
        if failing > 0 && paired {
            deviating.insert(name.clone());
            providers.push(format!(
                "{name}: takes part in the paired comparisons although {failing} of its reference records fail the \
                 reference's record-level check (an HTTP error's, whose model identity is unverified, or one naming \
                 another model); the reference leaves such a provider out of every pair (its §12.2 item 10)"
            ));
        }
    }
    providers
}

fn numbers_equal(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Compares `theirs` (the reference's) with `ours` at `path`, for every key the reference has;
/// pushes the path of each differing figure.
fn diff(ours: Option<&Value>, theirs: &Value, path: &str, compared: &mut usize, out: &mut Vec<String>) {
    match theirs {
        Value::Object(map) => {
            for (key, value) in map {
                diff(ours.and_then(|o| o.get(key)), value, &format!("{path}.{key}"), compared, out);
            }
        }
        Value::Array(items) if items.iter().all(|v| !v.is_object()) => {
            *compared += 1;
            if ours != Some(theirs) {
                out.push(path.to_string());
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                diff(ours.and_then(|o| o.get(i)), value, &format!("{path}[{i}]"), compared, out);
            }
        }
        _ => {
            *compared += 1;
            let equal = match (ours, theirs) {
                (Some(Value::Number(a)), Value::Number(b)) => {
                    numbers_equal(a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN))
                }
                (Some(a), b) => a == b,
                (None, _) => false,
            };
            if !equal {
                out.push(path.to_string());
            }
        }
    }
}

/// Rows of a list keyed by `keys` (in our document and theirs alike), compared row by row.
fn rows(
    ours: &Value,
    theirs: &Value,
    list: &str,
    keys: &[&str],
    compared: &mut usize,
    out: &mut Vec<(String, Vec<String>)>,
) {
    let key = |row: &Value| keys.iter().map(|k| row[*k].as_str().unwrap_or_default().to_string()).collect::<Vec<_>>();
    let by_key: BTreeMap<Vec<String>, &Value> =
        ours[list].as_array().into_iter().flatten().map(|r| (key(r), r)).collect();
    for row in theirs[list].as_array().into_iter().flatten() {
        let k = key(row);
        let mut paths = Vec::new();
        diff(by_key.get(&k).copied(), row, &format!("{list}[{}]", k.join(" / ")), compared, &mut paths);
        out.extend(paths.into_iter().map(|p| (p, k.clone())));
    }
}

fn figures(
    ours_m: &Value,
    theirs_m: &Value,
    ours_c: &Value,
    theirs_c: &Value,
    deviating: &BTreeSet<String>,
) -> Figures {
    let mut compared = 0;
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    rows(ours_m, theirs_m, "task_family_metrics", &["provider", "task_family"], &mut compared, &mut found);
    rows(ours_m, theirs_m, "combined_provider_metrics", &["provider"], &mut compared, &mut found);
    rows(ours_c, theirs_c, "provider_eligibility", &["provider"], &mut compared, &mut found);
    // Every provider's wins depend on every provider's samples.
    let mut wins = Vec::new();
    rows(ours_c, theirs_c, "fastest_provider_wins", &["provider"], &mut compared, &mut wins);
    let all: Vec<String> = deviating.iter().cloned().collect();
    found.extend(wins.into_iter().map(|(p, _)| (p, all.clone())));
    rows(
        ours_c,
        theirs_c,
        "pairwise_e2e_latency_differences",
        &["provider_a", "provider_b"],
        &mut compared,
        &mut found,
    );
    let mut ranking = Vec::new();
    diff(ours_m.get("ranking"), &theirs_m["ranking"], "ranking", &mut compared, &mut ranking);
    found.extend(ranking.into_iter().map(|p| (p, all.clone())));
    let (explained, unexplained): (Vec<_>, Vec<_>) =
        found.into_iter().partition(|(_, providers)| providers.iter().any(|p| deviating.contains(p)));
    Figures {
        compared,
        explained: explained.into_iter().map(|(p, _)| p).collect(),
        unexplained: unexplained.into_iter().map(|(p, _)| p).collect(),
    }
}

/// At most this many request ids or figure paths are listed per line.
const LISTED: usize = 5;

fn listed(items: &[String]) -> String {
    let mut shown: Vec<String> = items.iter().take(LISTED).map(|i| format!("`{i}`")).collect();
    if items.len() > LISTED {
        shown.push(format!("{} more", items.len() - LISTED));
    }
    shown.join(", ")
}

/// The report's lines on the comparison (part of its provenance).
pub fn lines(parity: &Parity, table: &ProviderTable) -> Vec<String> {
    let from = &parity.from;
    let what = match from.attempt {
        Some(n) => format!("smoke attempt {n}"),
        None => "full run".to_string(),
    };
    let mut lines = vec![format!(
        "- Imported from the reference runner's run `{}` ({what}, `raw/{}/`; its lock `run-lock.json` SHA-256 `{}`) \
         and scored under {}.",
        from.run_id,
        from.partition,
        from.run_lock_sha256,
        match parity.rules {
            Rules::Inferbench => "inferbench's rules",
            Rules::Reference =>
                "the reference's rules (`--rules reference`), which reproduce its behaviour where \
                                 inferbench deliberately differs",
        }
    )];
    let differing: usize = parity.deviations.values().map(Vec::len).sum::<usize>() + parity.unexplained.len();
    lines.push(format!(
        "- Requests scored by both: {}; scored as the reference scored them: {}.",
        parity.compared,
        parity.compared.saturating_sub(differing)
    ));
    for (cause, ids) in &parity.deviations {
        lines.push(format!(
            "  - {} request(s) scored differently because {} ({}).",
            ids.len(),
            cause.text(),
            listed(ids)
        ));
    }
    if !parity.unexplained.is_empty() {
        lines.push(format!(
            "  - {} request(s) scored differently for no documented reason: a defect in inferbench or the \
             reference; compare their records ({}).",
            parity.unexplained.len(),
            listed(&parity.unexplained)
        ));
    }
    if parity.without_reference_evaluation > 0 {
        lines.push(format!(
            "  - {} request(s) have no reference evaluation (the reference derived none for them).",
            parity.without_reference_evaluation
        ));
    }
    if parity.runner_errors > 0 {
        lines.push(format!(
            "  - {} request(s) ended in a reference `runner_error` (the runner failed, not the provider): missing \
             from both scorings.",
            parity.runner_errors
        ));
    }
    for line in &parity.providers {
        let (name, rest) = line.split_once(": ").unwrap_or((line, ""));
        lines.push(format!("  - {}: {rest}.", label(name, table)));
    }
    match &parity.figures {
        Err(why) => lines.push(format!("- Figures: {}", why.text())),
        Ok(f) => {
            let equal = f.compared - f.explained.len() - f.unexplained.len();
            lines.push(format!(
                "- Figures of `metrics.json` and `comparisons.json` compared with the reference's: {}; equal: {equal}; \
                 different because of the deviations above: {}; different for no documented reason: {}{}.",
                f.compared,
                f.explained.len(),
                f.unexplained.len(),
                if f.unexplained.is_empty() { String::new() } else { format!(" ({})", listed(&f.unexplained)) }
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn figures_are_compared_within_a_relative_tolerance_and_by_row_key() {
        let ours = json!({"task_family_metrics": [{"provider": "a", "task_family": "f", "x": 1.0000000000001, "y": 10.0}],
            "combined_provider_metrics": [], "ranking": ["a"]});
        let theirs = json!({"task_family_metrics": [{"provider": "a", "task_family": "f", "x": 1.0, "y": 10, "z": null}],
            "combined_provider_metrics": [], "ranking": ["a"]});
        let empty =
            json!({"provider_eligibility": [], "fastest_provider_wins": [], "pairwise_e2e_latency_differences": []});
        let f = figures(&ours, &theirs, &empty, &empty, &BTreeSet::new());
        assert_eq!(f.unexplained, vec!["task_family_metrics[a / f].z".to_string()]);
        assert_eq!(f.compared, 6);
        let f = figures(&ours, &theirs, &empty, &empty, &BTreeSet::from(["a".to_string()]));
        assert_eq!((f.explained.len(), f.unexplained.len()), (1, 0));
    }

    fn coverage(recorded: usize, figures_present: bool, manifest_kind: Option<&str>) -> Option<NotCompared> {
        let c = Coverage { recorded, planned: 60, figures_present, manifest_kind: manifest_kind.map(str::to_string) };
        c.not_compared("metrics.json", "paired-comparisons.json")
    }

    #[test]
    fn a_complete_run_is_told_from_its_records_and_plan_not_from_a_manifest() {
        // Every planned request has a terminal record: compared, manifest or none.
        assert_eq!(coverage(60, true, None), None);
        assert_eq!(coverage(60, true, Some("full")), None);
        // A passed smoke's copies are never a full run's figures, complete or not.
        assert_eq!(coverage(60, true, Some("smoke")), Some(NotCompared::OtherKind { kind: "smoke".into() }));
        assert_eq!(coverage(56, true, Some("smoke")), Some(NotCompared::OtherKind { kind: "smoke".into() }));
        // Without a manifest, figures beside an incomplete run are not of its records.
        assert_eq!(
            coverage(56, true, None),
            Some(NotCompared::Incomplete { recorded: 56, planned: 60, figures_present: true })
        );
        assert_eq!(
            coverage(56, false, None),
            Some(NotCompared::Incomplete { recorded: 56, planned: 60, figures_present: false })
        );
        assert_eq!(
            coverage(60, false, None),
            Some(NotCompared::NoFigures { metrics: "metrics.json".into(), paired: "paired-comparisons.json".into() })
        );
    }

    #[test]
    fn the_report_says_why_figures_were_not_compared() {
        let incomplete = NotCompared::Incomplete { recorded: 56, planned: 60, figures_present: false };
        assert_eq!(
            incomplete.text(),
            "not compared: the reference run is incomplete (56 of its 60 planned requests have a terminal record), \
             and the reference derives figures only from a complete run."
        );
        let none = NotCompared::NoFigures {
            metrics: "metrics-attempt-1.json".into(),
            paired: "paired-comparisons-attempt-1.json".into(),
        };
        assert_eq!(
            none.text(),
            "not compared: the reference run holds no `metrics-attempt-1.json` and \
             `paired-comparisons-attempt-1.json` for these records, so there are none to compare."
        );
        assert!(NotCompared::OtherKind { kind: "smoke".into() }.text().contains("copies from a run of kind `smoke`"));
    }
}
