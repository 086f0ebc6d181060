//! Reading the stage's inputs. The lock is checked first: metrics computed against a spec or
//! provider table other than the run's would price, check and rank with the wrong entries.
use crate::args::Args;
use crate::join::Tables;
use anyhow::Context;
use inferbench_schemas::lock::Lock;
use inferbench_schemas::parquet_io::{self, Table};
use inferbench_schemas::providers::ProviderTable;
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::spec::Spec;
use inferbench_schemas::Error;
use std::collections::BTreeMap;
use std::path::Path;

/// Everything the stage reads, validated individually (the join checks them together).
pub struct RunInputs {
    pub spec: Spec,
    pub table: ProviderTable,
    pub lock: Lock,
    pub tables: Tables,
    /// Logical name → SHA-256 of every file read: the outputs' provenance.
    pub hashes: BTreeMap<String, String>,
}

pub fn load(args: &Args) -> anyhow::Result<RunInputs> {
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
    let tables = Tables {
        schedule: read(&run.schedule(), "ib-schedule", &mut hashes)?,
        responses: read(&run.responses(), "ib-reconstruct", &mut hashes)?,
        evaluations: read(&run.evaluations(), "ib-evaluate", &mut hashes)?,
    };
    Ok(RunInputs {
        spec,
        table,
        lock,
        tables,
        hashes,
    })
}

/// Reads one table and records its hash under its file name. A missing table is bad input
/// that names the stage which writes it.
fn read<T: Table>(
    path: &Path,
    writer: &str,
    hashes: &mut BTreeMap<String, String>,
) -> anyhow::Result<Vec<T>> {
    if !path.exists() {
        return Err(Error::bad(format!("{}: missing; run {writer} first", path.display())).into());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let rows = parquet_io::read::<T>(path)?.rows;
    hashes.insert(name, file_sha256(path)?);
    Ok(rows)
}
