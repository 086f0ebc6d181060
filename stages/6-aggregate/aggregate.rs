//! The stage, in three phases: read every input once and check it against the run's lock
//! (`inputs`), compute every figure (`figures`), and only then write the four outputs, as one
//! atomic group (`output`).
use crate::args::Args;
use crate::{figures, inputs, output};
use inferbench_store::run::RunDir;

pub fn run(args: Args) -> anyhow::Result<()> {
    // Held until the outputs are written: no other stage writes into the run meanwhile.
    let (read, _writer) = inputs::read(&args)?;
    let about = &read.about;
    let figures = figures::compute(about, read.tables, read.load)?;
    let id =
        output::RunIdentity { benchmark_slug: &about.spec.slug, run_id: &about.lock.run_id, inputs: &about.hashes };
    output::write(&RunDir::new(&args.run), &id, &figures)?;
    eprintln!(
        "ib-aggregate: {} providers, {} responses, {} ranked; wrote metrics.json, metrics.parquet, pooled.parquet, comparisons.json",
        figures.metrics.pooled.len(),
        figures.responses,
        figures.metrics.ranking.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{self, Req};
    use inferbench_cli::{exit_for, Exit};
    use inferbench_contract::canonical::file_sha256;
    use inferbench_contract::lock::Lock;
    use inferbench_contract::tables::{EvaluationRow, ResponseRow, ScheduleRow};
    use inferbench_store::{atomic, parquet_io};
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
