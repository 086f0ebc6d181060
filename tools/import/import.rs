//! The import: read and check the reference run, check it against the spec, provider table and
//! dataset given, then write the new run directory in one step (built beside the target and
//! renamed into place, so a refused or failed import leaves nothing behind).
use crate::args::Args;
use crate::convert::{self, Counts};
use crate::source::{self, Source};
use anyhow::{Context, Result};
use inferbench_contract::canonical::{sha256_hex, short_hash};
use inferbench_contract::event::SegmentOpened;
use inferbench_contract::lock::{
    ImportedFrom, Lock, LockFile, LockSelection, LockTokenizer, ReleaseHash, ReleaseHashConvention,
};
use inferbench_contract::tables::{ScheduleRow, SelectionRow};
use inferbench_contract::vocab::{EndpointMode, TaskFamily};
use inferbench_contract::{Error, CODE_VERSION, FORMAT_VERSION};
use inferbench_inputs::dataset::{self, Dataset, LoadOptions};
use inferbench_inputs::providers::{self, ProviderTable};
use inferbench_inputs::spec::Spec;
use inferbench_judge::tokenizer;
use inferbench_store::lock::{self};
use inferbench_store::run::RunDir;
use inferbench_store::segment_writer::{self, SegmentWriter};
use inferbench_store::{atomic, parquet_io};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The reference runner's name in an imported lock.
const RUNNER: &str = "openbench-inference";

pub fn run(args: Args) -> Result<()> {
    let started = std::time::Instant::now();
    let from = args.from;
    let target = args.run.path.clone();
    refuse_existing(&target)?;

    // Read and check the source, then the inputs given against it.
    let kind = source::choose(&from, args.partition.as_deref())?;
    let source =
        Source::read(&from, kind).with_context(|| format!("{}: refused (nothing was written)", from.display()))?;
    let spec = Spec::load(&args.spec)?;
    let dataset_dir = args.dataset.path.clone().unwrap_or_else(|| spec.dataset_source.clone());
    let providers = ProviderTable::of_spec(&spec)?;
    let data = dataset::load(&dataset_dir, &spec, LoadOptions { sample: args.sample })
        .with_context(|| format!("dataset {} is invalid; nothing was written", dataset_dir.display()))?;
    let notes = check_inputs(&source, &spec, &providers, &data, &args.spec)?;
    let (selection_rows, per_family) = selection_rows(&source, &spec, &data)?;

    // The new run's lock, then the run written in one step.
    let run_id = RunDir::new(&target).run_id();
    let bound = lock::bound_inputs(&args.spec, &spec, &dataset_dir);
    let mut inputs = lock::input_hashes(&bound, &data.file_hashes)?;
    inputs.extend(providers::bound_hashes(&spec, &providers)?);
    let lock = imported_lock(&run_id, &spec, &providers, inputs, &source, per_family, args.sample);
    let counts =
        write_in_place(&target, |staging| write_run(staging, &run_id, &source, &lock, &selection_rows, notes.clone()))?;
    for note in &notes {
        eprintln!("ib-import: note: {note}");
    }
    announce(&target, &source, &counts, started);
    Ok(())
}

/// The lock of the imported run: the inputs given, the reference's release hash and
/// selection, and where the run came from.
fn imported_lock(
    run_id: &str,
    spec: &Spec,
    providers: &ProviderTable,
    inputs: BTreeMap<String, String>,
    source: &Source,
    per_family: usize,
    sample: bool,
) -> Lock {
    Lock {
        v: FORMAT_VERSION,
        run_id: run_id.to_string(),
        workflow: spec.dir().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        benchmark_slug: spec.slug.clone(),
        code_version: CODE_VERSION.to_string(),
        inputs,
        dataset_release_hash: source.lock.dataset_release_hash.clone(),
        selection: LockSelection {
            algorithm_version: source.selection.algorithm_version.clone(),
            selected_items_per_task_family: per_family,
            sample,
            seeds: source.selection.families.iter().map(|(f, (_, seed))| (f.to_string(), seed.clone())).collect(),
        },
        tokenizer: LockTokenizer {
            encoding: tokenizer::ENCODING.to_string(),
            implementation: tokenizer::IMPLEMENTATION.to_string(),
            vocabulary_sha256: tokenizer::vocabulary_sha256(),
        },
        providers: providers.names(),
        imported_from: Some(ImportedFrom {
            runner: RUNNER.to_string(),
            run_id: source.lock.run_id.clone(),
            kind: source.kind.name().to_string(),
            attempt: source.kind.attempt(),
            partition: source.kind.partition(),
            run_lock_sha256: source.lock.sha256.clone(),
            dataset_release_hash: source.lock.dataset_release_hash.clone(),
            selection_hash: source.lock.selection_hash.clone(),
            execution_configuration_hash: source.lock.execution_configuration_hash.clone(),
            resolved_adapters_sha256: source.lock.resolved_adapters_sha256.clone(),
            input_hashes: source.lock.input_hashes.clone(),
        }),
    }
}

/// Writes the run into a staging directory beside `target`, then renames it into place; a
/// failure at either step leaves nothing behind.
fn write_in_place(target: &Path, write: impl FnOnce(&Path) -> Result<Counts>) -> Result<Counts> {
    let staging = staging_dir(target)?;
    let written = write(&staging).and_then(|counts| publish(&staging, target).map(|()| counts));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}

/// What was imported: the requests, their events, and what the reference never finished.
fn announce(target: &Path, source: &Source, counts: &Counts, started: std::time::Instant) {
    eprintln!(
        "ib-import: {} ← {} ({} {}): {} of {} scheduled requests, {} stream events{}{} in {:.1} s",
        target.display(),
        source.lock.run_id,
        source.kind.name(),
        source.kind.partition(),
        counts.records - counts.runner_errors.len(),
        counts.scheduled,
        counts.events,
        if counts.never_finished.is_empty() {
            String::new()
        } else {
            format!("; {} never finished (missing, not failures)", counts.never_finished.len())
        },
        if counts.runner_errors.is_empty() {
            String::new()
        } else {
            format!("; {} reference runner errors (missing, not provider failures)", counts.runner_errors.len())
        },
        started.elapsed().as_secs_f64()
    );
}

fn refuse_existing(target: &Path) -> Result<()> {
    let occupied = std::fs::read_dir(target).map(|mut d| d.next().is_some()).unwrap_or(false);
    if occupied || target.is_file() {
        return Err(Error::bad(format!(
            "{}: exists; ib-import writes a new run directory (choose another --run)",
            target.display()
        ))
        .into());
    }
    Ok(())
}

/// A hidden directory beside the target, so the final rename stays on one file system.
fn staging_dir(target: &Path) -> Result<PathBuf> {
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into());
    let staging = parent.join(format!(".{name}.import-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
    }
    std::fs::create_dir(&staging).map_err(|e| Error::io(&staging, e))?;
    Ok(staging)
}

fn publish(staging: &Path, target: &Path) -> Result<()> {
    if target.is_dir() {
        // Empty (checked first): a directory made for the run, e.g. by the caller.
        std::fs::remove_dir(target).map_err(|e| Error::io(target, e))?;
    }
    std::fs::rename(staging, target).map_err(|e| Error::io(target, e))?;
    Ok(())
}

/// The spec, provider table and dataset given must be the reference run's where that decides
/// the figures (slug, providers, the dataset's bytes); where it does not (the prompt templates
/// and spec of an already-sent run), a difference is a note.
fn check_inputs(
    source: &Source,
    spec: &Spec,
    providers: &ProviderTable,
    data: &Dataset,
    spec_path: &Path,
) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    if spec.slug != source.lock.benchmark_slug {
        return Err(Error::LockMismatch(format!(
            "{}: benchmark.slug `{}` is not the reference run's `{}`",
            spec_path.display(),
            spec.slug,
            source.lock.benchmark_slug
        ))
        .into());
    }
    let planned: BTreeSet<&str> = source.rounds.iter().flat_map(|r| &r.units).map(|u| u.provider.as_str()).collect();
    let table: BTreeSet<String> = providers.names().into_iter().collect();
    let table: BTreeSet<&str> = table.iter().map(String::as_str).collect();
    if planned != table {
        return Err(Error::LockMismatch(format!(
            "{}: the provider table's providers {:?} are not the reference run's {:?}",
            spec.providers_path.display(),
            table,
            planned
        ))
        .into());
    }
    let mut dataset_files: Vec<String> = vec!["manifest.json".into()];
    dataset_files.extend(spec.families.iter().map(|f| format!("{}.jsonl", f.name)));
    let mut differ = Vec::new();
    for name in &dataset_files {
        let ours = &data.file_hashes[name];
        match source.lock.input_hashes.get(name) {
            Some(theirs) if theirs == ours => {}
            Some(theirs) => differ.push(format!(
                "{name} is sha256 {}…, the reference ran on {}…",
                short_hash(ours),
                short_hash(theirs)
            )),
            None => {
                return Err(Error::bad(format!(
                    "{}/run-lock.json: human_input_hashes: names no {name}, so the dataset cannot be checked",
                    source.dir.display()
                ))
                .into())
            }
        }
    }
    if !differ.is_empty() {
        return Err(Error::LockMismatch(format!(
            "dataset {}: not the dataset the reference run used: {}",
            data.dir.display(),
            differ.join("; ")
        ))
        .into());
    }
    let spec_hash = inferbench_contract::canonical::file_sha256(spec_path)?;
    if source.lock.input_hashes.get("spec.yaml").is_some_and(|h| *h != spec_hash) {
        notes.push(format!(
            "{} is not the spec the reference run was locked with (the import binds the one given)",
            spec_path.display()
        ));
    }
    for family in &spec.families {
        let name = Path::new(&family.prompt_template).file_name().map(|n| n.to_string_lossy().into_owned());
        if let (Some(name), Some(ours)) = (name, data.file_hashes.get(&family.prompt_template)) {
            if source.lock.input_hashes.get(&name).is_some_and(|theirs| theirs != ours) {
                notes.push(format!(
                    "prompt template {} differs from the reference's {name}; the log keeps the prompts it sent",
                    family.prompt_template
                ));
            }
        }
    }
    Ok(notes)
}

/// `selection.parquet` from the reference's selection: each family's full order, the items the
/// plan uses marked selected. The plan must use each family's first items in order.
fn selection_rows(source: &Source, spec: &Spec, data: &Dataset) -> Result<(Vec<SelectionRow>, usize)> {
    let mut used: BTreeMap<TaskFamily, Vec<&str>> = BTreeMap::new();
    for round in &source.rounds {
        if let Some(unit) = round.units.first() {
            used.entry(unit.task_family).or_default().push(&unit.item_id);
        }
    }
    let plan_file = source.kind.plan_file();
    let counts: BTreeSet<usize> = spec.task_families().iter().map(|f| used.get(f).map_or(0, Vec::len)).collect();
    let per_family = match counts.iter().collect::<Vec<_>>().as_slice() {
        [n] if **n > 0 => **n,
        _ => {
            return Err(Error::bad(format!(
                "{plan_file}: the families have unequal numbers of rounds ({counts:?}); a paired plan has the same per family"
            ))
            .into())
        }
    };
    let mut rows = Vec::new();
    for family in spec.task_families() {
        let Some((order, _)) = source.selection.families.get(&family) else {
            return Err(Error::bad(format!("artifacts/selection.json: families: no entry for {family}")).into());
        };
        let items = &used[&family];
        if order.len() < per_family || order[..per_family] != items[..] {
            return Err(Error::bad(format!(
                "{plan_file}: the {family} rounds do not use the first {per_family} items of artifacts/selection.json's \
                 full_family_order, in order"
            ))
            .into());
        }
        let ids: BTreeSet<&str> = data.items[&family].iter().map(|i| i.id.as_str()).collect();
        let listed: BTreeSet<&str> = order.iter().map(String::as_str).collect();
        if ids != listed {
            return Err(Error::LockMismatch(format!(
                "dataset {}: its {family} items are not the ones artifacts/selection.json ordered",
                data.dir.display()
            ))
            .into());
        }
        for (position, id) in order.iter().enumerate() {
            let item = data.item(family, id).expect("checked above");
            rows.push(SelectionRow {
                task_family: family,
                position: position as i64,
                item_id: id.clone(),
                selected: position < per_family,
                item_sha256: item.sha256.clone(),
            });
        }
    }
    Ok((rows, per_family))
}

fn schedule_rows(source: &Source) -> Vec<ScheduleRow> {
    source
        .rounds
        .iter()
        .flat_map(|r| &r.units)
        .map(|u| {
            ScheduleRow::new(
                u.round_index as i64,
                u.round_id.clone(),
                u.task_family,
                u.item_id.clone(),
                u.provider.clone(),
                u.launch_index as i64,
                u.request_id.clone(),
            )
        })
        .collect()
}

/// `Linux-6.18.44-…-x86_64-with-glibc2.36` → (`linux`, `x86_64`).
fn os_and_arch(platform: Option<&str>) -> (String, String) {
    let Some(platform) = platform else { return ("unknown".into(), "unknown".into()) };
    let os = platform.split('-').next().unwrap_or("unknown").to_ascii_lowercase();
    let arch = ["x86_64", "aarch64", "arm64", "i686", "armv7l", "ppc64le", "s390x"]
        .into_iter()
        .find(|a| platform.contains(a))
        .unwrap_or("unknown");
    (os, arch.to_string())
}

fn jsonl_bytes<'a>(values: impl Iterator<Item = &'a Value>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for value in values {
        serde_json::to_writer(&mut out, value)?;
        out.push(b'\n');
    }
    Ok(out)
}

fn write_run(
    dir: &Path,
    run_id: &str,
    source: &Source,
    lock: &Lock,
    selection: &[SelectionRow],
    notes: Vec<String>,
) -> Result<Counts> {
    let run = RunDir::new(dir);
    // The release hash is the reference's, as its lock records it (its path keys are of
    // another machine): the `recorded` convention of `ib-select --release-hash`.
    let file = LockFile {
        lock: lock.clone(),
        release_hash: ReleaseHash {
            convention: ReleaseHashConvention::Recorded,
            keys: BTreeMap::new(),
            reference_lock_sha256: Some(source.lock.sha256.clone()),
        },
    };
    let lock_bytes = atomic::json_bytes(&run.lock(), &file)?;
    let lock_hash = sha256_hex(&lock_bytes);
    parquet_io::write(&run.selection(), selection, &BTreeMap::from([(RunDir::LOCK.to_string(), lock_hash.clone())]))?;
    let selection_hash = inferbench_contract::canonical::file_sha256(&run.selection())?;
    let schedule_inputs =
        BTreeMap::from([(RunDir::LOCK.to_string(), lock_hash), (RunDir::SELECTION.to_string(), selection_hash)]);
    parquet_io::write(&run.schedule(), &schedule_rows(source), &schedule_inputs)?;

    let first = source.records.values().min_by_key(|r| r.start_ns);
    let platform: Option<String> = source
        .copied
        .get("run-lock.json")
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|l| l.pointer("/runtime/platform").and_then(Value::as_str).map(str::to_string));
    let (os, arch) = os_and_arch(platform.as_deref());
    let opening = SegmentOpened {
        wall_clock_unix_ns: first.and_then(|r| r.started_at.as_deref()).and_then(convert::unix_ns).unwrap_or(0),
        os,
        arch,
        ..segment_writer::opening(&run, 1, EndpointMode::Imported)?
    };
    let (events, counts) = convert::log(source, opening);
    let mut log = SegmentWriter::create(&run.segment(1), run_id)?;
    for (t_ns, event) in &events {
        log.write(*t_ns, event)?;
    }
    log.finish()?;
    atomic::write(&run.lock(), &lock_bytes)?;
    inferbench_store::sealed::seal(&run, run_id)?;

    let reference = run.reference();
    for (rel, bytes) in &source.copied {
        let path = reference.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        atomic::write(&path, bytes)?;
    }
    let order: Vec<&str> = source.rounds.iter().flat_map(|r| &r.units).map(|u| u.request_id.as_str()).collect();
    let records = order.iter().filter_map(|id| source.records.get(*id)).map(|r| &r.kept);
    atomic::write(&run.reference_records(), &jsonl_bytes(records)?)?;
    let evaluations = order.iter().filter_map(|id| source.evaluations.get(*id));
    atomic::write(&run.reference_evaluations(), &jsonl_bytes(evaluations)?)?;
    let summary = json!({
        "runner": RUNNER,
        "run_id": source.lock.run_id,
        "kind": source.kind.name(),
        "attempt": source.kind.attempt(),
        "partition": source.kind.partition(),
        "source_directory": source.dir.file_name().map(|n| n.to_string_lossy().into_owned()),
        "imported_by": CODE_VERSION,
        "scheduled_requests": counts.scheduled,
        "terminal_records": counts.records,
        "stream_events": counts.events,
        "reference_evaluations": source.evaluations.len(),
        "reference_figures": source::reference_figures(source).is_some(),
        "never_finished": counts.never_finished,
        "runner_errors": counts.runner_errors,
        "historical_runner_errors": counts.historical_runner_errors,
        "inferred_2xx_heads": counts.inferred_heads,
        "notes": notes,
        "files": source.copied.keys().map(|k| format!("{}/{k}", RunDir::REFERENCE)).collect::<Vec<_>>(),
    });
    atomic::write_json(&run.reference_import(), &summary)?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_strings_give_os_and_arch() {
        assert_eq!(
            os_and_arch(Some("Linux-6.18.44-fc-v857-x86_64-with-glibc2.36")),
            ("linux".to_string(), "x86_64".to_string())
        );
        assert_eq!(os_and_arch(Some("macOS-14.4-arm64-arm-64bit")), ("macos".to_string(), "arm64".to_string()));
        assert_eq!(os_and_arch(None), ("unknown".to_string(), "unknown".to_string()));
    }
}
