//! The select stage: validate everything, then write `selection.parquet` and `lock.json`.
use crate::args::Args;
use crate::selection::{self, ALGORITHM_VERSION};
use anyhow::{Context, Result};
use inferbench_contract::lock::{Lock, LockFile, LockSelection, LockTokenizer, ReleaseHashConvention};
use inferbench_contract::tables::SelectionRow;
use inferbench_contract::{canonical, Error, CODE_VERSION, FORMAT_VERSION};
use inferbench_inputs::dataset::{self, Dataset, LoadOptions};
use inferbench_inputs::providers::{self, ProviderTable};
use inferbench_inputs::spec::Spec;
use inferbench_judge::tokenizer;
use inferbench_store::lock::{self};
use inferbench_store::run::RunDir;
use inferbench_store::{atomic, parquet_io};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(args: Args) -> Result<()> {
    let Args {
        run,
        spec: spec_path,
        dataset: dataset_dir,
        per_family,
        sample,
        list_inputs,
        release_hash,
        reference_lock,
    } = args;
    let spec = Spec::load(&spec_path)?;
    let dataset_dir = dataset_dir.path.unwrap_or_else(|| spec.dataset_source.clone());
    let bound = lock::bound_inputs(&spec_path, &spec, &dataset_dir);
    if list_inputs {
        return print_inputs(&bound);
    }
    let run = run.context("--run is required")?;

    // Validate every input and select, before anything is written.
    let providers = ProviderTable::of_spec(&spec)?;
    if let Some(load) = &spec.load {
        if load.search.is_some() {
            // A search is many runs, one per probe, each locked with its own one-rate spec.
            return Err(inferbench_contract::Error::bad(format!(
                "{}: a capacity search (load.search) is not one run but one per measured rate: \
                 run it with `make search SPEC={}` (ib-search); no run was created",
                spec_path.display(),
                spec_path.display()
            ))
            .into());
        }
        load.read_trace().context("the load trace is invalid; no run was created")?;
    }
    let data = dataset::load(&dataset_dir, &spec, LoadOptions { sample })
        .with_context(|| format!("dataset {} is invalid; no run was created", dataset_dir.display()))?;
    let (release, release_record) = crate::release::release_hash(release_hash, reference_lock.as_deref(), &spec, &data)
        .context("the release hash cannot be computed; no run was created")?;
    let per_family = per_family_within(per_family.unwrap_or(spec.selected_per_family), &data, &dataset_dir)?;
    let (rows, seeds) = selection::select(&data, &release, &spec.slug, &spec.task_families(), per_family);
    let run_dir = RunDir::new(&run);
    let mut inputs = lock::input_hashes(&bound, &data.file_hashes)?;
    inputs.extend(providers::bound_hashes(&spec, &providers)?);
    let selection = LockSelection {
        algorithm_version: ALGORITHM_VERSION.to_string(),
        selected_items_per_task_family: per_family,
        sample,
        seeds: seeds.into_iter().collect(),
    };
    let lock = new_lock(&run_dir, &spec, &providers, inputs, &release, selection);
    let lock = LockFile { lock, release_hash: release_record };

    // Write, unless the run is already locked.
    if run_dir.lock().exists() {
        return compare_with_existing(&run_dir, &lock);
    }
    refuse_a_foreign_directory(&run)?;
    std::fs::create_dir_all(&run).with_context(|| format!("creating {}", run.display()))?;
    let _writer = run_dir.lock_for_writing("ib-select")?;
    if run_dir.lock().exists() {
        // Another ib-select locked the run while this one validated its inputs.
        return compare_with_existing(&run_dir, &lock);
    }
    write_selection_and_lock(&run_dir, &lock, &rows)?;
    announce(&run, &dataset_dir, &lock, &rows);
    Ok(())
}

/// `--list-inputs`: the files a run would bind, one a line.
fn print_inputs(bound: &BTreeMap<String, PathBuf>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for path in bound.values() {
        writeln!(out, "{}", path.display())?;
    }
    Ok(out.flush()?)
}

/// The items per family asked for, when every family has that many.
fn per_family_within(per_family: usize, data: &Dataset, dataset_dir: &Path) -> Result<usize> {
    let smallest = data.items.values().map(Vec::len).min().unwrap_or(0);
    if per_family == 0 || per_family > smallest {
        return Err(Error::bad(format!(
            "--per-family {per_family}: must be between 1 and {smallest} (the smallest family of {})",
            dataset_dir.display()
        ))
        .into());
    }
    Ok(per_family)
}

/// The run's lock: what every later stage checks its inputs against.
fn new_lock(
    run_dir: &RunDir,
    spec: &Spec,
    providers: &ProviderTable,
    inputs: BTreeMap<String, String>,
    release: &str,
    selection: LockSelection,
) -> Lock {
    Lock {
        v: FORMAT_VERSION,
        run_id: run_dir.run_id(),
        workflow: spec.dir().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        benchmark_slug: spec.slug.clone(),
        code_version: CODE_VERSION.to_string(),
        inputs,
        dataset_release_hash: release.to_string(),
        selection,
        tokenizer: LockTokenizer {
            encoding: tokenizer::ENCODING.to_string(),
            implementation: tokenizer::IMPLEMENTATION.to_string(),
            vocabulary_sha256: tokenizer::vocabulary_sha256(),
        },
        providers: providers.names(),
        imported_from: None,
    }
}

/// A run directory is made here, or was left empty: one with visible files and no lock is
/// someone else's.
fn refuse_a_foreign_directory(run: &Path) -> Result<()> {
    // A run may hold the pipeline it is made from (`make load` writes it there first).
    let foreign = |name: &str, path: &Path| !name.starts_with('.') && (name != RunDir::PIPELINE || !path.is_dir());
    let visible_entries = |dir: &Path| {
        std::fs::read_dir(dir).map(|d| d.flatten().any(|e| foreign(&e.file_name().to_string_lossy(), &e.path())))
    };
    if run.exists() && visible_entries(run).unwrap_or(true) {
        return Err(Error::bad(format!(
            "{}: exists and is not an ib-select run (no lock.json); choose a new run directory",
            run.display()
        ))
        .into());
    }
    Ok(())
}

/// `selection.parquet`, then `lock.json`.
fn write_selection_and_lock(run_dir: &RunDir, lock: &LockFile, rows: &[SelectionRow]) -> Result<()> {
    // The selection records the hash of the lock it belongs to, so a selection copied from
    // another run, or a lock edited afterwards, is refused by every later stage.
    let lock_bytes = atomic::json_bytes(&run_dir.lock(), lock)?;
    let selection_inputs = BTreeMap::from([(RunDir::LOCK.to_string(), canonical::sha256_hex(&lock_bytes))]);
    parquet_io::write(&run_dir.selection(), rows, &selection_inputs)?;
    // The lock is written last: its presence marks a complete, valid selection.
    atomic::write(&run_dir.lock(), &lock_bytes)?;
    Ok(())
}

/// What was locked, from which dataset, under which release hash.
fn announce(run: &Path, dataset_dir: &Path, lock: &LockFile, rows: &[SelectionRow]) {
    let selected = rows.iter().filter(|r| r.selected).count();
    let per_family = lock.lock.selection.selected_items_per_task_family;
    let convention = match lock.release_hash.convention {
        ReleaseHashConvention::Logical => "",
        ReleaseHashConvention::Reference => ", the reference runner's path keys",
        ReleaseHashConvention::Recorded => ", as the reference lock records it",
    };
    eprintln!(
        "ib-select: {} locked; {selected} items selected ({per_family} per family) from {} (release {}{convention})",
        run.display(),
        dataset_dir.display(),
        canonical::short_hash(&lock.lock.dataset_release_hash)
    );
}

/// An existing run: unchanged inputs are a no-op; anything else is refused by name.
fn compare_with_existing(run_dir: &RunDir, file: &LockFile) -> Result<()> {
    let LockFile { lock, release_hash } = file;
    let existing_file = inferbench_store::lock::read_file(&run_dir.lock())?;
    let existing = &existing_file.lock;
    existing.verify(&lock.inputs)?;
    let mut differences = Vec::new();
    if existing.inputs.len() != lock.inputs.len() {
        differences.push("the set of bound inputs".to_string());
    }
    if existing.selection != lock.selection {
        differences.push("selection settings (--per-family, --sample)".to_string());
    }
    if existing.tokenizer != lock.tokenizer {
        differences.push("tokenizer".to_string());
    }
    if existing.providers != lock.providers {
        differences.push("provider list".to_string());
    }
    if existing.dataset_release_hash != lock.dataset_release_hash || existing_file.release_hash != *release_hash {
        differences.push("the dataset release hash (--release-hash, --reference-lock)".to_string());
    }
    if !differences.is_empty() {
        return Err(Error::LockMismatch(format!(
            "{}: {} differ from this run's lock; start a new run",
            run_dir.lock().display(),
            differences.join(", ")
        ))
        .into());
    }
    eprintln!("ib-select: {} is already locked to these inputs; nothing to do", run_dir.root().display());
    Ok(())
}
