//! The report's inputs and the checks that they belong together: the spec and provider table
//! match the run's lock, and `metrics.json` and `comparisons.json` were derived from this
//! lock and from the same files, so the report never mixes two runs or a stale aggregate.
//! Both documents are read as the types `ib-aggregate` writes them with
//! (`inferbench_contract::documents`), so the reader cannot drift from the writer.
use crate::responses::Responses;
use inferbench_contract::canonical::sha256_hex;
use inferbench_contract::documents::{ComparisonsDocument, MetricsDocument, METRICS_VERSION};
use inferbench_contract::lock::Lock;
use inferbench_contract::manifest::{Execution, FileEntry};
use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
use inferbench_contract::Error;
use inferbench_inputs::providers::ProviderTable;
use inferbench_inputs::spec::Spec;
use inferbench_store::parquet_io;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::RunDir;
use inferbench_store::run::WriterLock;
use inferbench_store::{atomic, execution, provenance};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The two row lists of `metrics.json`, in file order: family rows, then pooled rows.
const ROW_LISTS: [&str; 2] = ["task_family_metrics", "combined_provider_metrics"];

/// Everything the report is rendered from.
pub struct ReportInputs {
    pub spec: Spec,
    pub table: ProviderTable,
    pub lock: Lock,
    pub metrics: MetricsDocument,
    pub comparisons: ComparisonsDocument,
    /// The two documents' text as read (and hashed), for report.html's exact number text.
    pub metrics_text: String,
    pub comparisons_text: String,
    /// Logical name → SHA-256 of every file read, for the report's provenance section.
    pub hashes: BTreeMap<String, String>,
    /// Requests in `schedule.parquet`.
    pub scheduled_requests: usize,
    /// What the charts and the failure log take from `responses.parquet`.
    pub responses: Responses,
    /// The run's files with their sizes and hashes as this stage found them, for the manifest.
    pub files: BTreeMap<String, FileEntry>,
    /// How the run was made, from its event log.
    pub execution: Execution,
    /// For a run imported from a reference run: how its scoring compares with the reference's.
    pub parity: Option<crate::parity::Parity>,
    /// Held until the outputs are written (absent only in unit tests of the rendering).
    pub _writer: Option<WriterLock>,
}

/// Loads and checks the inputs of the run `pipeline` opened, whose writer lock `writer` is.
/// `inventory` gives the run's files with their hashes (computed beside this work, see
/// `report.rs`); the provenance checks use those hashes, so no file is read twice.
pub fn load(
    mut pipeline: Pipeline,
    writer: WriterLock,
    inventory: impl FnOnce() -> anyhow::Result<BTreeMap<String, FileEntry>>,
) -> anyhow::Result<ReportInputs> {
    let run = pipeline.run.clone();
    let files = inventory()?;
    for (name, entry) in &files {
        pipeline.current.insert(name, &entry.sha256);
    }
    let execution = execution_facts(&run, &pipeline.lock.run_id, &mut pipeline.current)?;
    let metrics_text = read(&run.metrics_json(), &mut pipeline.hashes)?;
    let comparisons_text = read(&run.comparisons(), &mut pipeline.hashes)?;
    let metrics_json: Value = from_text(&run.metrics_json(), &metrics_text)?;
    let missing = missing_columns(&metrics_json, &pipeline.spec.required_columns);
    if !missing.is_empty() {
        return Err(Error::Invalid(missing).into());
    }
    let metrics: MetricsDocument = parse(&run.metrics_json(), metrics_json)?;
    // Typed straight from the text: at 1,000 providers the file is 240 MB, and a JSON tree
    // of it four times that.
    let comparisons: ComparisonsDocument = from_text(&run.comparisons(), &comparisons_text)?;
    // Figures computed from other responses, evaluations or another lock than the run has
    // now are stale: refused, never rendered.
    pipeline.verify(RunDir::METRICS_JSON, "ib-aggregate", &metrics.provenance.inputs)?;
    pipeline.verify(RunDir::COMPARISONS, "ib-aggregate", &comparisons.provenance.inputs)?;
    let scheduled_requests = table_rows::<ScheduleRow>(&mut pipeline, &files, &run.schedule(), "ib-schedule")?;
    table_rows::<ResponseRow>(&mut pipeline, &files, &run.responses(), "ib-reconstruct")?;
    let probe_rounds = match pipeline.spec.inference.cache.probe_rounds {
        Some(_) => probe_rounds(&run)?,
        None => BTreeSet::new(),
    };
    let responses = crate::responses::read(&run.responses(), &probe_rounds)?;
    let parity = match pipeline.lock.imported_from.clone() {
        None => None,
        Some(from) => {
            // Imported runs are the reference's size (thousands of rows): the parity section
            // compares them whole.
            let rows: Vec<ResponseRow> = parquet_io::read(&run.responses())?.rows;
            let evaluations: Vec<EvaluationRow> = pipeline.table(&run.evaluations(), "ib-evaluate")?;
            crate::parity::compare(&run, Some(&from), &rows, &evaluations, &metrics, &comparisons)?
        }
    };
    let Pipeline { spec, providers: table, lock, hashes, .. } = pipeline;
    let inputs = ReportInputs {
        metrics,
        comparisons,
        metrics_text,
        comparisons_text,
        spec,
        table,
        lock,
        hashes,
        scheduled_requests,
        responses,
        files,
        execution,
        parity,
        _writer: Some(writer),
    };
    check(&inputs).map_err(Error::Invalid)?;
    Ok(inputs)
}

/// The run's execution facts: those `ib-reconstruct` recorded in `responses.parquet` when
/// that table was derived from the log as it is now (nothing appended, edited or removed
/// since), else read from the log itself. Either way a damaged log is caught first: an
/// edited, merged or incomplete log fails the provenance check here, and reading it then
/// names the damage (exit 3, the file and line), where the provenance checks below would
/// only call the derived files stale and send the operator to a rerun that must fail.
/// `current` holds the hashes of the run's files as the inventory found them.
fn execution_facts(run: &RunDir, run_id: &str, current: &mut provenance::Current) -> anyhow::Result<Execution> {
    if let Ok((inputs, Some(execution))) = execution::recorded(run) {
        let unchanged =
            provenance::verify(run, current, RunDir::RESPONSES, "ib-reconstruct", &inputs, &BTreeMap::new());
        if unchanged.is_ok() {
            return Ok(execution);
        }
    }
    Ok(execution::read_log(run, run_id)?)
}

/// The rounds of the prompt-cache probe (`schedule.parquet`'s `cache_probe` set), whose
/// responses the charts and the failure log leave out as `metrics.json` does. The schedule's
/// provenance was checked by `table_rows`.
fn probe_rounds(run: &RunDir) -> anyhow::Result<BTreeSet<i64>> {
    let mut rounds = BTreeSet::new();
    for batch in parquet_io::Reader::<ScheduleRow>::open(&run.schedule())? {
        rounds.extend(batch?.into_iter().filter(|r| r.cache_probe.is_some()).map(|r| r.round_index));
    }
    Ok(rounds)
}

/// Checks a table of the run as `Pipeline::table` does (present, its name and format
/// version, its provenance) without reading its rows, records its hash from the inventory,
/// and returns its row count from the file's metadata.
fn table_rows<T: parquet_io::Table>(
    pipeline: &mut Pipeline,
    files: &BTreeMap<String, FileEntry>,
    path: &Path,
    writer: &str,
) -> anyhow::Result<usize> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let Some(entry) = files.get(&name).filter(|_| path.exists()) else {
        return Err(Error::bad(format!("{}: missing; run {writer} first", path.display())).into());
    };
    // Opened, not read: the footer gives the provenance and the row count.
    let table = parquet_io::Reader::<T>::open(path)?;
    pipeline.verify(&name, writer, &table.inputs)?;
    pipeline.current.insert(&name, &entry.sha256);
    pipeline.hashes.insert(name, entry.sha256.clone());
    Ok(usize::try_from(table.total_rows).unwrap_or(usize::MAX))
}

/// Reads a JSON file once: its text (parsed by `from_text`; report.html shows each number as
/// the file spells it) and, under its file name, the hash of the very bytes parsed.
fn read(path: &Path, hashes: &mut BTreeMap<String, String>) -> anyhow::Result<String> {
    if !path.exists() {
        return Err(Error::bad(format!("{}: missing; run ib-aggregate first", path.display())).into());
    }
    let bytes = atomic::read(path)?;
    let text = String::from_utf8(bytes).map_err(|e| Error::bad(format!("{}: not UTF-8: {e}", path.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    hashes.insert(name, sha256_hex(text.as_bytes()));
    Ok(text)
}

/// The text `read` returned as `T` (a JSON tree, or a document's shared type); a syntax or
/// shape error names the file and line.
fn from_text<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> anyhow::Result<T> {
    Ok(serde_json::from_str(text).map_err(|e| Error::bad(format!("{}:{}: {e}", path.display(), e.line())))?)
}

/// A document `read` returned, as its shared type; a shape error names the file.
fn parse<T: serde::de::DeserializeOwned>(path: &Path, value: Value) -> anyhow::Result<T> {
    serde_json::from_value(value).map_err(|e| Error::bad(format!("{}: {e}", path.display())).into())
}

/// Where a row of `metrics.json` is, for a problem's message.
fn row_at(list: &str, i: usize, provider: &str, family: &str) -> String {
    format!("metrics.json: {list} ({provider} / {family}, entry {i})")
}

/// Every column the spec requires, present in every row as a number or null. Checked on the
/// JSON before the typed parse, which would only say "missing field" without naming the row.
fn missing_columns(metrics: &Value, required: &[String]) -> Vec<String> {
    let rows = ROW_LISTS.into_iter().flat_map(|list| {
        let rows = metrics[list].as_array().into_iter().flatten();
        rows.map(move |row| (list, row))
    });
    let mut problems = Vec::new();
    for (i, (list, row)) in rows.enumerate() {
        let text = |key: &str| row[key].as_str().unwrap_or("?").to_string();
        let at = row_at(list, i, &text("provider"), &text("task_family"));
        for name in required {
            match row.get(name) {
                None => problems.push(format!("{at}: {name}: missing (a column the spec requires)")),
                Some(v) if !(v.is_null() || v.is_number()) => {
                    problems.push(format!("{at}: {name}: expected a number or null"))
                }
                Some(_) => {}
            }
        }
    }
    problems
}

/// Every problem that would make the report wrong or mixed, one line each.
pub fn check(inputs: &ReportInputs) -> Result<(), Vec<String>> {
    let (m, c) = (&inputs.metrics, &inputs.comparisons);
    let mut problems = Vec::new();
    for (file, version, run_id) in
        [(RunDir::METRICS_JSON, &m.metrics_version, &m.run_id), (RunDir::COMPARISONS, &c.metrics_version, &c.run_id)]
    {
        if version != METRICS_VERSION {
            problems.push(format!(
                "{file}: metrics_version: `{version}` is not supported (this build reads {METRICS_VERSION})"
            ));
        }
        if run_id != &inputs.lock.run_id {
            problems.push(format!("{file}: run_id: `{run_id}` is not this run's (`{}`)", inputs.lock.run_id));
        }
    }
    if c.provenance.inputs != m.provenance.inputs {
        problems.push(
            "comparisons.json: provenance.inputs: derived from other files than metrics.json; rerun ib-aggregate"
                .into(),
        );
    }
    check_rows(inputs, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn check_rows(inputs: &ReportInputs, problems: &mut Vec<String>) {
    let m = &inputs.metrics;
    let families = m.task_family_metrics.iter().map(|r| (ROW_LISTS[0], r));
    let pooled = m.combined_provider_metrics.iter().map(|r| (ROW_LISTS[1], &r.metrics));
    for (i, (list, row)) in families.chain(pooled).enumerate() {
        let at = row_at(list, i, &row.provider, &row.task_family);
        for name in &inputs.spec.required_columns {
            // The JSON had the column (`missing_columns`); the format must define it too, or
            // the parse dropped it and the report would render a blank.
            if row.column(name).is_none() {
                problems.push(format!("{at}: {name}: not a numeric column of the metrics format"));
            }
        }
        if inputs.table.get(&row.provider).is_none() {
            problems.push(format!("{at}: provider: `{}` is not in the spec's provider table", row.provider));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    #[test]
    fn a_required_column_must_be_a_number_in_every_row() {
        let ttfa_p50 = inferbench_contract::metrics::TTFA.at(50).key();
        let mut json = sample::metrics();
        json["task_family_metrics"][1][&ttfa_p50] = Value::from("fast");
        let required = [ttfa_p50.clone(), "bogus_rate".to_string()];
        let problems = missing_columns(&json, &required);
        assert_eq!(problems.len(), 9 + 3 + 1, "{problems:#?}");
        assert_eq!(
            problems[1],
            format!(
                "metrics.json: task_family_metrics (a / ticket-triage, entry 1): {ttfa_p50}: expected a number or null"
            )
        );
        assert!(problems[0].ends_with("entry 0): bogus_rate: missing (a column the spec requires)"));
    }

    #[test]
    fn a_required_column_the_format_lacks_is_named() {
        let mut inputs = sample::inputs();
        assert_eq!(check(&inputs), Ok(()));
        inputs.spec.required_columns.push("weighting".into());
        let problems = check(&inputs).unwrap_err();
        assert_eq!(problems.len(), 12, "{problems:#?}");
        assert_eq!(
            problems[11],
            "metrics.json: combined_provider_metrics (c / pooled, entry 11): weighting: not a numeric column of the metrics format"
        );
    }
}
