//! The stage, in order: read and check the lock (`inputs`), join and check the tables
//! (`join`), take the prompt-cache probe's requests out (`cache`), compute every group, the pooled rows and the ranking (`metrics`), the paired
//! comparisons (`comparisons`), and only then write the four outputs, as one atomic group.
use crate::args::Args;
use crate::{cache, error, inputs, join, load, metrics, output};
use inferbench_contract::documents::Provenance;
use inferbench_contract::vocab::TaskFamily;
use inferbench_store::run::RunDir;
use inferbench_store::{atomic, execution, parquet_io};
use std::collections::BTreeSet;

pub fn run(args: Args) -> anyhow::Result<()> {
    let inputs = inputs::load(&args)?;
    // A synthetic load workload's requests are all of the one family that is not the dataset's.
    let synthetic = inputs.spec.load.as_ref().is_some_and(|l| l.workload.synthetic().is_some());
    let families = if synthetic { vec![TaskFamily::Synthetic] } else { inputs.spec.task_families() };
    let mut joined = join::join(inputs.tables, &families, &inputs.table.names()).map_err(error::invalid)?;
    // Before any other figure: the probe's requests count in its section only.
    let probe = cache::split_off(&mut joined);
    let computed = metrics::compute_with(
        inputs.rules,
        &joined,
        &families,
        &inputs.table,
        inputs.reference_paired_failures.as_ref(),
    );
    let identity = output::RunIdentity {
        benchmark_slug: &inputs.spec.slug,
        run_id: &inputs.lock.run_id,
        provenance: Provenance::new(&inputs.hashes),
    };
    let mut metrics_doc = output::metrics_doc(&identity, &computed);
    if let Some(plan) = &inputs.spec.load {
        metrics_doc.load = Some(load_metrics(&args, plan, &inputs.table.names(), &joined)?);
    }
    if let Some(probe) = &probe {
        let providers: BTreeSet<String> = probe.schedule.iter().map(|r| r.provider.clone()).collect();
        metrics_doc.cache_probe = Some(cache::compute(probe, &providers.into_iter().collect::<Vec<_>>()));
    }
    let comparisons_doc = output::comparisons_doc(&identity, &computed, &joined);
    let rows = output::metric_rows(&computed);
    let pooled = output::pooled_rows(&computed);
    let run = RunDir::new(&args.run);
    let mut outputs = atomic::Group::new(run.root());
    outputs.add(&run.metrics_json(), &atomic::json_bytes(&run.metrics_json(), &metrics_doc)?)?;
    outputs.add(&run.metrics_parquet(), &parquet_io::to_bytes(&rows, &inputs.hashes)?)?;
    outputs.add(&run.pooled_parquet(), &parquet_io::to_bytes(&pooled, &inputs.hashes)?)?;
    outputs.add(&run.comparisons(), &atomic::json_bytes(&run.comparisons(), &comparisons_doc)?)?;
    outputs.commit()?;
    eprintln!(
        "ib-aggregate: {} providers, {} responses, {} ranked; wrote metrics.json, metrics.parquet, pooled.parquet, comparisons.json",
        computed.pooled.len(),
        joined.observations.len(),
        computed.ranking.len()
    );
    Ok(())
}

/// A load run's figures per step and provider: the responses read again for what they hold
/// of the load (intended times, answer chunks), with the evaluations' verdicts and the log's
/// step runs (recorded in `responses.parquet`'s metadata).
fn load_metrics(
    args: &crate::args::Args,
    plan: &inferbench_inputs::spec::LoadPlan,
    providers: &[String],
    joined: &join::Joined,
) -> anyhow::Result<inferbench_contract::documents::LoadMetrics> {
    use inferbench_contract::tables::ResponseRow;
    let run = RunDir::new(&args.run);
    let mut facts = Vec::new();
    for batch in parquet_io::Reader::<ResponseRow>::open(&run.responses())? {
        facts.extend(batch?.into_iter().map(load::LoadFacts::from));
    }
    let steps = execution::recorded(&run)?.1.map(|execution| execution.steps).unwrap_or_default();
    let correct = joined.observations.iter().map(|o| (o.response.request_id.clone(), o.evaluation.correct)).collect();
    Ok(load::compute(plan, providers, &joined.schedule, facts, &correct, &steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req};
    use inferbench_cli::{exit_for, Exit};
    use inferbench_contract::canonical::file_sha256;
    use inferbench_contract::lock::Lock;
    use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    fn bundled_spec() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines/micro-single-task/spec.yaml")
    }

    /// A run directory locked to the bundled spec, with two bundled providers answering three
    /// rounds (with their own model ids, so both are eligible).
    fn write_run(dir: &Path) {
        atomic::write_json(&dir.join("lock.json"), &lock()).unwrap();
        let models = [("together", "zai-org/GLM-5.3-Flash"), ("fireworks", "accounts/fireworks/models/glm-5p3-flash")];
        let e2e = |p: &str, round: i64| {
            if p == "together" {
                300.0 + round as f64
            } else {
                200.0
            }
        };
        let reqs: Vec<Req> = fixture::balanced(&["together", "fireworks"], e2e)
            .into_iter()
            .map(|q| {
                let model = models.iter().find(|(p, _)| *p == q.response.provider).unwrap().1;
                q.with(|r| r.response_model = Some(model.into()))
            })
            .collect();
        let t = fixture::rows(&reqs);
        let lock_only = provenance(dir);
        parquet_io::write::<ScheduleRow>(&dir.join("schedule.parquet"), &t.schedule, &lock_only).unwrap();
        parquet_io::write::<ResponseRow>(&dir.join("responses.parquet"), &t.responses, &lock_only).unwrap();
        parquet_io::write::<EvaluationRow>(&dir.join("evaluations.parquet"), &t.evaluations, &lock_only).unwrap();
    }

    /// Provenance naming only the run's lock.
    fn provenance(dir: &Path) -> BTreeMap<String, String> {
        BTreeMap::from([("lock.json".to_string(), file_sha256(&dir.join("lock.json")).unwrap())])
    }

    /// A lock binding the bundled spec and provider table.
    fn lock() -> Lock {
        let spec = inferbench_inputs::spec::Spec::load(&bundled_spec()).unwrap();
        let inputs = BTreeMap::from([
            ("spec.yaml".to_string(), file_sha256(&bundled_spec()).unwrap()),
            ("providers.yaml".to_string(), file_sha256(&spec.providers_path).unwrap()),
        ]);
        Lock {
            run_id: "run-test".into(),
            benchmark_slug: spec.slug.clone(),
            code_version: "test".into(),
            inputs,
            providers: inferbench_inputs::providers::ProviderTable::load(&spec.providers_path, &spec).unwrap().names(),
            ..inferbench_contract::testutil::lock()
        }
    }

    fn outputs(dir: &Path) -> Vec<Vec<u8>> {
        ["metrics.json", "metrics.parquet", "pooled.parquet", "comparisons.json"]
            .iter()
            .map(|n| std::fs::read(dir.join(n)).unwrap())
            .collect()
    }

    #[test]
    fn a_run_is_aggregated_reproducibly_with_provenance() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let args = || Args { run: dir.path().into(), spec: bundled_spec().into() };
        run(args()).unwrap();
        let first = outputs(dir.path());
        run(args()).unwrap();
        assert_eq!(first, outputs(dir.path()), "re-deriving must give the same bytes");
        let metrics: serde_json::Value = serde_json::from_slice(&first[0]).unwrap();
        assert_eq!(metrics["run_id"], "run-test");
        assert_eq!(metrics["ranking"], serde_json::json!(["fireworks", "together"]));
        let inputs = metrics["provenance"]["inputs"].as_object().unwrap();
        let names: Vec<&str> = inputs.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "evaluations.parquet",
                "lock.json",
                "providers.yaml",
                "responses.parquet",
                "schedule.parquet",
                "spec.yaml"
            ]
        );
        let table =
            parquet_io::read::<inferbench_contract::tables::MetricRow>(&dir.path().join("metrics.parquet")).unwrap();
        assert_eq!(table.rows.len(), 6);
        assert_eq!(serde_json::to_value(&table.inputs).unwrap(), metrics["provenance"]["inputs"]);
        let pooled =
            parquet_io::read::<inferbench_contract::tables::PooledRow>(&dir.path().join("pooled.parquet")).unwrap();
        let ranked: Vec<(&str, Option<i64>)> = pooled.rows.iter().map(|r| (r.provider.as_str(), r.rank)).collect();
        assert_eq!(ranked, [("fireworks", Some(1)), ("together", Some(2))]);
        assert_eq!(pooled.inputs, table.inputs);
        let text = String::from_utf8(first[0].clone()).unwrap();
        assert!(!text.contains(dir.path().to_str().unwrap()), "no machine paths in outputs");
    }

    #[test]
    fn bad_tables_write_nothing_and_exit_3() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let lock_only = provenance(dir.path());
        parquet_io::write::<EvaluationRow>(&dir.path().join("evaluations.parquet"), &[], &lock_only).unwrap();
        let err = run(Args { run: dir.path().into(), spec: bundled_spec().into() }).unwrap_err();
        assert_eq!(exit_for(&err), Exit::BadInput, "{err:#}");
        assert!(format!("{err:#}").contains("no evaluation in evaluations.parquet"), "{err:#}");
        assert!(!dir.path().join("metrics.json").exists());
    }

    #[test]
    fn a_changed_spec_is_a_lock_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        write_run(dir.path());
        let spec_dir = dir.path().join("pipeline");
        std::fs::create_dir(&spec_dir).unwrap();
        let bundled = bundled_spec();
        let text = std::fs::read_to_string(&bundled).unwrap() + "\n# edited\n";
        std::fs::write(spec_dir.join("spec.yaml"), text).unwrap();
        std::fs::copy(bundled.with_file_name("providers.yaml"), spec_dir.join("providers.yaml")).unwrap();
        let err = run(Args { run: dir.path().into(), spec: spec_dir.join("spec.yaml").into() }).unwrap_err();
        assert_eq!(exit_for(&err), Exit::LockMismatch, "{err:#}");
        assert!(!dir.path().join("metrics.json").exists());
    }
}
