//! A run's human inputs, loaded and checked against its lock in one place: every stage after
//! `ib-select` opens the spec, the provider table and (when it needs one) the dataset through
//! here, so they all refuse a changed input the same way (exit 4, naming the input).
use crate::parquet_io::{self};
use crate::provenance::{self, Current};
use crate::run::RunDir;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::lock::Lock;
use inferbench_contract::tables::Table;
use inferbench_contract::{Error, Result};
use inferbench_inputs::dataset::{self, Dataset, LoadOptions};
use inferbench_inputs::providers::{self, ProviderTable};
use inferbench_inputs::spec::Spec;
use inferbench_inputs::trace::Trace;
use std::collections::BTreeMap;
use std::path::Path;

pub struct Pipeline {
    pub run: RunDir,
    pub spec: Spec,
    pub providers: ProviderTable,
    pub lock: Lock,
    /// Logical name → SHA-256 of every input checked so far (`lock.json`, `spec.yaml`, the
    /// providers — `providers.yaml`, or `providers.vendors` for a spec that lists them inline
    /// (see [`providers::bound_hashes`]) — the dataset's files once [`Pipeline::dataset`] ran,
    /// every table read): the outputs' provenance.
    pub hashes: BTreeMap<String, String>,
    /// Hashes of the run's own files, for checking the provenance of what the stage reads.
    pub current: Current,
}

impl Pipeline {
    /// Reads `lock.json`, the spec and its providers, and verifies both against the lock.
    pub fn open(run: &Path, spec_path: &Path) -> Result<Pipeline> {
        let run = RunDir::new(run);
        let lock = crate::lock::read(&run.lock())?;
        let spec = Spec::load(spec_path)?;
        let providers = ProviderTable::of_spec(&spec)?;
        let mut hashes = BTreeMap::from([("spec.yaml".to_string(), file_sha256(spec_path)?)]);
        hashes.extend(providers::bound_hashes(&spec, &providers)?);
        lock.verify(&hashes)?;
        if providers.names() != lock.providers {
            return Err(Error::LockMismatch(format!(
                "{}: providers: {:?} differ from the provider table's {:?}; start a new run",
                run.lock().display(),
                lock.providers,
                providers.names()
            )));
        }
        let lock_hash = file_sha256(&run.lock())?;
        let mut current = Current::default();
        current.insert(RunDir::LOCK, &lock_hash);
        hashes.insert(RunDir::LOCK.to_string(), lock_hash);
        Ok(Pipeline { run, spec, providers, lock, hashes, current })
    }

    /// Loads the dataset (default: the spec's `dataset.source`) with the relaxation the run
    /// was locked with, and verifies its files against the lock.
    pub fn dataset(&mut self, dir: Option<&Path>) -> Result<Dataset> {
        let dir = dir.unwrap_or(&self.spec.dataset_source);
        let data = dataset::load(dir, &self.spec, LoadOptions { sample: self.lock.selection.sample })?;
        self.lock.verify(&data.file_hashes)?;
        self.hashes.extend(data.file_hashes.clone());
        Ok(data)
    }

    /// A load run's arrival trace, verified against the lock and read; `None` when the spec
    /// replays no trace.
    pub fn trace(&mut self) -> Result<Option<Trace>> {
        let Some((name, path)) = self.spec.load.as_ref().and_then(|l| Some((l.trace_name.clone()?, l.trace.clone()?)))
        else {
            return Ok(None);
        };
        let bound = BTreeMap::from([(name, file_sha256(&path)?)]);
        self.lock.verify(&bound)?;
        self.hashes.extend(bound);
        Trace::load(&path).map(Some)
    }

    /// Reads one of the run's tables, checks that its recorded provenance matches the run's
    /// current files (see [`provenance`]), and records its hash under its file name. A missing
    /// table is bad input naming the stage that writes it.
    pub fn table<T: Table>(&mut self, path: &Path, writer: &str) -> Result<Vec<T>> {
        if !path.exists() {
            return Err(Error::bad(format!("{}: missing; run {writer} first", path.display())));
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let table = parquet_io::read::<T>(path)?;
        self.verify(&name, writer, &table.inputs)?;
        let hash = file_sha256(path)?;
        self.current.insert(&name, &hash);
        self.hashes.insert(name, hash);
        Ok(table.rows)
    }

    /// Opens one of the run's tables to be read a batch at a time, with [`Pipeline::table`]'s
    /// checks (existence, provenance, its hash recorded) made before the first batch.
    pub fn reader<T: Table>(&mut self, path: &Path, writer: &str) -> Result<parquet_io::Reader<T>> {
        if !path.exists() {
            return Err(Error::bad(format!("{}: missing; run {writer} first", path.display())));
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let reader = parquet_io::Reader::<T>::open(path)?;
        self.verify(&name, writer, &reader.inputs)?;
        let hash = file_sha256(path)?;
        self.current.insert(&name, &hash);
        self.hashes.insert(name, hash);
        Ok(reader)
    }

    /// Checks the provenance `recorded` by the run's derived file `name` (written by `writer`).
    pub fn verify(&mut self, name: &str, writer: &str, recorded: &BTreeMap<String, String>) -> Result<()> {
        provenance::verify(&self.run, &mut self.current, name, writer, recorded, &self.hashes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock for the reference spec fixture binding `inputs`.
    fn write_lock(run: &Path, inputs: BTreeMap<String, String>, providers: Vec<String>) {
        let lock = Lock {
            run_id: "r".into(),
            workflow: "reference".into(),
            benchmark_slug: "inference-micro-single-task".into(),
            inputs,
            providers,
            ..inferbench_contract::testutil::lock()
        };
        crate::testutil::write_lock(&RunDir::new(run), &lock);
    }

    /// A spec listing the reference's vendors binds the resolved table as `providers.vendors`
    /// (there is no provider table file), and every stage checks it.
    #[test]
    fn inline_vendors_are_bound_by_the_hash_of_the_resolved_table() {
        let dir = tempfile::tempdir().unwrap();
        let spec_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/reference/spec.yaml");
        let spec = Spec::load(&spec_path).unwrap();
        let table = ProviderTable::of_spec(&spec).unwrap();
        let bound = providers::bound_hashes(&spec, &table).unwrap();
        assert_eq!(bound.keys().collect::<Vec<_>>(), ["providers.vendors"]);
        let value = serde_json::to_value(&table).unwrap();
        assert_eq!(bound["providers.vendors"], inferbench_contract::canonical::hash(&value));
        let mut inputs = BTreeMap::from([("spec.yaml".to_string(), file_sha256(&spec_path).unwrap())]);
        inputs.extend(bound.clone());
        let run = dir.path().join("run");
        write_lock(&run, inputs.clone(), table.names());
        let opened = Pipeline::open(&run, &spec_path).unwrap();
        assert_eq!(opened.hashes["providers.vendors"], bound["providers.vendors"]);
        // What new built-in knowledge would do to an old run: refused by name.
        inputs.insert("providers.vendors".into(), "0".repeat(64));
        write_lock(&run, inputs, table.names());
        let err = Pipeline::open(&run, &spec_path).err().unwrap();
        assert!(matches!(err, Error::LockMismatch(_)), "{err:?}");
        assert!(err.to_string().contains("providers.vendors changed since the run was locked"), "{err}");
    }

    #[test]
    fn a_run_without_a_lock_is_refused_before_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../pipelines/micro-single-task/spec.yaml");
        let err = Pipeline::open(&dir.path().join("run-x"), &spec).err().unwrap().to_string();
        assert!(err.contains("lock.json: missing; run ib-select first"), "{err}");
    }
}
