//! The schedule stage: lock + selection in, `schedule.parquet` out.
use crate::args::Args;
use crate::rounds;
use anyhow::{bail, Result};
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::tables::SelectionRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_store::parquet_io;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;

pub fn run(args: Args) -> Result<()> {
    let Args { run, spec: spec_path } = args;
    let mut pipeline = Pipeline::open(&run, &spec_path)?;
    let _writer = pipeline.run.lock_for_writing("ib-schedule")?;
    let selection: Vec<SelectionRow> = pipeline.table(&pipeline.run.selection(), "ib-select")?;
    let Pipeline { run, spec, lock, .. } = pipeline;
    let families: Vec<(TaskFamily, Vec<String>)> = spec
        .task_families()
        .into_iter()
        .map(|family| {
            let mut chosen: Vec<&SelectionRow> =
                selection.iter().filter(|r| r.task_family == family && r.selected).collect();
            chosen.sort_by_key(|r| r.position);
            (family, chosen.into_iter().map(|r| r.item_id.clone()).collect())
        })
        .collect();
    let per_family = lock.selection.selected_items_per_task_family;
    if let Some((family, ids)) = families.iter().find(|(_, ids)| ids.len() != per_family) {
        bail!("{}: {family} has {} selected items, the lock says {per_family}", run.selection().display(), ids.len());
    }
    let rows = rounds::build(&lock.selection.algorithm_version, &families, &lock.providers);
    let inputs = BTreeMap::from([
        (RunDir::LOCK.to_string(), file_sha256(&run.lock())?),
        (RunDir::SELECTION.to_string(), file_sha256(&run.selection())?),
    ]);
    parquet_io::write(&run.schedule(), &rows, &inputs)?;
    eprintln!(
        "ib-schedule: {} rounds × {} providers = {} requests",
        rows.len() / lock.providers.len().max(1),
        lock.providers.len(),
        rows.len()
    );
    Ok(())
}
