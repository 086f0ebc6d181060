//! A run's human inputs, loaded and checked against its lock in one place: every stage after
//! `ib-select` opens the spec, the provider table and (when it needs one) the dataset through
//! here, so they all refuse a changed input the same way (exit 4, naming the input).
use crate::dataset::{self, Dataset, LoadOptions};
use crate::lock::Lock;
use crate::parquet_io::{self, Table};
use crate::providers::ProviderTable;
use crate::run::{file_sha256, RunDir};
use crate::spec::Spec;
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::Path;

pub struct Pipeline {
    pub run: RunDir,
    pub spec: Spec,
    pub providers: ProviderTable,
    pub lock: Lock,
    /// Logical name → SHA-256 of every input checked so far (`spec.yaml`, `providers.yaml`,
    /// and the dataset's files once [`Pipeline::dataset`] ran): the outputs' provenance.
    pub hashes: BTreeMap<String, String>,
}

impl Pipeline {
    /// Reads `lock.json`, the spec and its provider table, and verifies both against the lock.
    pub fn open(run: &Path, spec_path: &Path) -> Result<Pipeline> {
        let run = RunDir::new(run);
        let lock = Lock::read(&run.lock())?;
        let spec = Spec::load(spec_path)?;
        let providers = ProviderTable::load(&spec.providers_path, &spec)?;
        let hashes = BTreeMap::from([
            ("spec.yaml".to_string(), file_sha256(spec_path)?),
            ("providers.yaml".to_string(), file_sha256(&spec.providers_path)?),
        ]);
        lock.verify(&hashes)?;
        Ok(Pipeline { run, spec, providers, lock, hashes })
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

    /// Reads one of the run's tables and records its hash under its file name. A missing
    /// table is bad input naming the stage that writes it.
    pub fn table<T: Table>(&mut self, path: &Path, writer: &str) -> Result<Vec<T>> {
        if !path.exists() {
            return Err(Error::bad(format!("{}: missing; run {writer} first", path.display())));
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let rows = parquet_io::read::<T>(path)?.rows;
        self.hashes.insert(name, file_sha256(path)?);
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_a_lock_is_refused_before_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../pipelines/micro-single-task/spec.yaml");
        let err = Pipeline::open(&dir.path().join("run-x"), &spec).err().unwrap().to_string();
        assert!(err.contains("lock.json: missing; run ib-select first"), "{err}");
    }
}
