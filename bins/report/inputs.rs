//! The report's inputs and the checks that they belong together: the spec and provider table
//! match the run's lock, and `metrics.json` and `comparisons.json` were derived from this
//! lock and from the same files, so the report never mixes two runs or a stale aggregate.
use crate::args::Args;
use anyhow::Context;
use inferbench_schemas::lock::Lock;
use inferbench_schemas::providers::ProviderTable;
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::spec::Spec;
use inferbench_schemas::{atomic, Error};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The `metrics.json` and `comparisons.json` format this build reads.
pub const METRICS_VERSION: &str = "inferbench-metrics-v1";

#[derive(Debug, Clone, Deserialize)]
pub struct Provenance {
    pub code_version: String,
    pub inputs: BTreeMap<String, String>,
}

/// `metrics.json`, as far as the report reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct Metrics {
    pub metrics_version: String,
    pub run_id: String,
    pub percentile_convention: String,
    pub task_family_metrics: Vec<Row>,
    pub combined_provider_metrics: Vec<Row>,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Population {
    pub population_count: i64,
    pub submitted_count: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Counted {
    pub reported_count: i64,
    pub submitted_count: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct KnownCost {
    pub known_cost_usd: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FieldDiagnostics {
    pub field_count_total: i64,
    pub returned_object_count: i64,
    pub median_correct_fields_returned: Option<f64>,
}

/// A family row or a pooled row. The spec's required columns are looked up by name in
/// `columns` (the row's remaining keys), so a spec naming a column the aggregate does not
/// produce is caught by [`check`] instead of rendering a blank.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    pub provider: String,
    pub task_family: String,
    #[serde(default)]
    pub scheduled_count: Option<i64>,
    pub submitted_count: i64,
    pub correct_count: i64,
    pub failed_request_count: i64,
    pub invalid_result_count: i64,
    pub incorrect_result_count: i64,
    pub ttfo_ms: Population,
    pub ttfa_ms: Population,
    pub e2e_latency_ms: Population,
    pub output_tokens_per_second: Population,
    pub usage: Counted,
    pub cost: KnownCost,
    #[serde(default)]
    pub contract_field_diagnostics: Option<FieldDiagnostics>,
    #[serde(default)]
    pub balanced: Option<bool>,
    #[serde(default)]
    pub eligible: Option<bool>,
    #[serde(default)]
    pub ineligibility_reasons: Option<Vec<String>>,
    #[serde(default)]
    pub rank: Option<i64>,
    #[serde(flatten)]
    pub columns: BTreeMap<String, Value>,
}

impl Row {
    /// A numeric column; `None` when null. [`check`] guarantees presence and type.
    pub fn column(&self, name: &str) -> Option<f64> {
        self.columns.get(name).and_then(Value::as_f64)
    }

    pub fn label<'a>(&'a self, table: &'a ProviderTable) -> &'a str {
        table
            .get(&self.provider)
            .map_or(self.provider.as_str(), |p| p.label())
    }

    pub fn reasons(&self) -> &[String] {
        self.ineligibility_reasons.as_deref().unwrap_or(&[])
    }
}

/// `comparisons.json`, as far as the report reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct Comparisons {
    pub metrics_version: String,
    pub run_id: String,
    pub fastest_provider_wins: Vec<WinRow>,
    pub pairwise_e2e_latency_differences: Vec<PairRow>,
    pub provenance: Provenance,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WinRow {
    pub provider: String,
    pub eligible: bool,
    pub credited_wins: f64,
    pub outright_wins: i64,
    pub tied_fastest_rounds: i64,
    pub eligible_e2e_sample_count: i64,
    pub total_round_count: i64,
    pub win_rate: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PairRow {
    pub provider_a: String,
    pub provider_b: String,
    pub eligible_comparison: bool,
    pub exclusion_reasons: Vec<String>,
    pub paired_count: i64,
    pub total_round_count: i64,
    pub coverage_rate: Option<f64>,
    pub difference_p50_ms: Option<f64>,
    pub difference_p95_ms: Option<f64>,
    pub difference_p99_ms: Option<f64>,
}

/// Everything the report is rendered from.
pub struct ReportInputs {
    pub spec: Spec,
    pub table: ProviderTable,
    pub lock: Lock,
    pub metrics: Metrics,
    pub comparisons: Comparisons,
    /// Logical name → SHA-256 of every file read, for the report's provenance section.
    pub hashes: BTreeMap<String, String>,
}

pub fn load(args: &Args) -> anyhow::Result<ReportInputs> {
    let run = RunDir::new(&args.run);
    let spec = Spec::load(&args.spec).context("reading the pipeline spec")?;
    let table =
        ProviderTable::load(&spec.providers_path, &spec).context("reading the provider table")?;
    let lock = Lock::read(&run.lock())?;
    let mut hashes = BTreeMap::from([
        ("spec.yaml".to_string(), file_sha256(&args.spec)?),
        (
            "providers.yaml".to_string(),
            file_sha256(&spec.providers_path)?,
        ),
    ]);
    lock.verify(&hashes)?;
    hashes.insert("lock.json".into(), file_sha256(&run.lock())?);
    let metrics: Metrics = read(&run.metrics_json(), &mut hashes)?;
    let comparisons: Comparisons = read(&run.comparisons(), &mut hashes)?;
    let inputs = ReportInputs {
        spec,
        table,
        lock,
        metrics,
        comparisons,
        hashes,
    };
    check(&inputs).map_err(Error::Invalid)?;
    Ok(inputs)
}

fn read<T: serde::de::DeserializeOwned>(
    path: &Path,
    hashes: &mut BTreeMap<String, String>,
) -> anyhow::Result<T> {
    if !path.exists() {
        return Err(Error::bad(format!(
            "{}: missing; run ib-aggregate first",
            path.display()
        ))
        .into());
    }
    let value = atomic::read_json(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    hashes.insert(name, file_sha256(path)?);
    Ok(value)
}

/// Every problem that would make the report wrong or mixed, one line each.
pub fn check(inputs: &ReportInputs) -> Result<(), Vec<String>> {
    let (m, c) = (&inputs.metrics, &inputs.comparisons);
    let mut problems = Vec::new();
    for (file, version, run_id) in [
        ("metrics.json", &m.metrics_version, &m.run_id),
        ("comparisons.json", &c.metrics_version, &c.run_id),
    ] {
        if version != METRICS_VERSION {
            problems.push(format!("{file}: metrics_version: `{version}` is not supported (this build reads {METRICS_VERSION})"));
        }
        if run_id != &inputs.lock.run_id {
            problems.push(format!(
                "{file}: run_id: `{run_id}` is not this run's (`{}`)",
                inputs.lock.run_id
            ));
        }
    }
    let lock_hash = inputs.hashes.get("lock.json");
    if m.provenance.inputs.get("lock.json") != lock_hash {
        problems.push(
            "metrics.json: provenance.inputs: derived from another lock.json; rerun ib-aggregate"
                .into(),
        );
    }
    if c.provenance.inputs != m.provenance.inputs {
        problems.push("comparisons.json: provenance.inputs: derived from other files than metrics.json; rerun ib-aggregate".into());
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
    let rows = m
        .task_family_metrics
        .iter()
        .map(|r| ("task_family_metrics", r));
    let pooled = m
        .combined_provider_metrics
        .iter()
        .map(|r| ("combined_provider_metrics", r));
    for (i, (list, row)) in rows.chain(pooled).enumerate() {
        let at = format!(
            "metrics.json: {list} ({} / {}, entry {i})",
            row.provider, row.task_family
        );
        for name in &inputs.spec.required_columns {
            match row.columns.get(name) {
                None => problems.push(format!(
                    "{at}: {name}: missing (a column the spec requires)"
                )),
                Some(v) if !(v.is_null() || v.is_number()) => {
                    problems.push(format!("{at}: {name}: expected a number or null"))
                }
                Some(_) => {}
            }
        }
        if inputs.table.get(&row.provider).is_none() {
            problems.push(format!(
                "{at}: provider: `{}` is not in the spec's provider table",
                row.provider
            ));
        }
        if list == "combined_provider_metrics"
            && (row.eligible.is_none() || row.ineligibility_reasons.is_none())
        {
            problems.push(format!(
                "{at}: eligible, ineligibility_reasons: missing from a pooled row"
            ));
        }
    }
}
