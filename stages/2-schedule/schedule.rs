//! The schedule stage: lock + selection in, `schedule.parquet` out: paired rounds for the
//! closed-loop workflow, paired arrivals for a load workflow.
use crate::args::Args;
use crate::cache;
use crate::load;
use crate::rounds;
use anyhow::{bail, Result};
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::tables::SelectionRow;
use inferbench_contract::vocab::TaskFamily;
use inferbench_inputs::spec::{LoadPlan, StepTarget};
use inferbench_store::parquet_io;
use inferbench_store::pipeline::Pipeline;
use inferbench_store::run::RunDir;
use std::collections::BTreeMap;

pub fn run(args: Args) -> Result<()> {
    let Args { run, spec: spec_path } = args;
    let mut pipeline = Pipeline::open(&run, &spec_path)?;
    let _writer = pipeline.run.lock_for_writing("ib-schedule")?;
    let selection: Vec<SelectionRow> = pipeline.table(&pipeline.run.selection(), "ib-select")?;
    let trace = pipeline.trace()?;
    let Pipeline { run, spec, lock, hashes, .. } = pipeline;
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
    let version = &lock.selection.algorithm_version;
    let mut inputs = BTreeMap::from([
        (RunDir::LOCK.to_string(), file_sha256(&run.lock())?),
        (RunDir::SELECTION.to_string(), file_sha256(&run.selection())?),
    ]);
    let Some(plan) = &spec.load else {
        let mut rows = rounds::build(version, &families, &lock.providers);
        let added = cache::apply(&spec.inference.cache, version, &mut rows, &lock.providers)?;
        parquet_io::write(&run.schedule(), &rows, &inputs)?;
        eprintln!(
            "ib-schedule: {} rounds × {} providers = {} requests",
            rows.len() / lock.providers.len().max(1),
            lock.providers.len(),
            rows.len()
        );
        announce_cache(&added);
        return Ok(());
    };
    // A replayed trace is an input of the schedule.
    inputs.extend(hashes.into_iter().filter(|(name, _)| plan.trace_name.as_ref() == Some(name)));
    if plan.workload.synthetic().is_some() {
        // Every prompt's exact length rests on its words being single tokens: checked with the
        // tokenizer before any prompt is written.
        inferbench_judge::synthetic::check_words().map_err(anyhow::Error::msg)?;
    }
    let (mut rows, steps) = load::build(version, plan, trace.as_ref(), &families, &lock.providers);
    let added = cache::apply(&spec.inference.cache, version, &mut rows, &lock.providers)?;
    if rows.is_empty() {
        bail!(
            "{}: no request arrives in any step (step_seconds {}); nothing to schedule",
            spec.path.display(),
            plan.step_seconds
        );
    }
    parquet_io::write(&run.schedule(), &rows, &inputs)?;
    announce_load(plan, &steps, lock.providers.len(), rows.len());
    announce_cache(&added);
    Ok(())
}

/// What the cache settings added to the schedule, when they added anything.
fn announce_cache(added: &cache::Added) {
    if added.nonced_rounds > 0 {
        eprintln!("  a nonce for each of the {} rounds (inference.cache_busting)", added.nonced_rounds);
    }
    if added.probe_rounds > 0 {
        eprintln!(
            "  {} cache-probe rounds, each sent twice, after the run's rounds (inference.cache_probe)",
            added.probe_rounds
        );
    }
}

/// One line per step: what it asks and how many arrivals it drew.
fn announce_load(plan: &LoadPlan, steps: &[load::StepSummary], providers: usize, requests: usize) {
    eprintln!(
        "ib-schedule: load ({}, {} arrivals), {} step(s) of {} s, {requests} requests to {providers} provider(s):",
        plan.mode,
        plan.arrivals,
        steps.len(),
        plan.step_seconds
    );
    if let Some(w) = plan.workload.synthetic() {
        let shown = |l: Option<&inferbench_contract::documents::TokenLengths>| match l {
            None => "the trace's".to_string(),
            Some(l) if l.min == l.max => l.min.to_string(),
            Some(l) => match (l.mean, l.stddev) {
                (Some(mean), Some(sd)) => {
                    format!("{} (mean {mean}, sd {sd}) in [{}, {}]", l.distribution, l.min, l.max)
                }
                _ => format!("{} in [{}, {}]", l.distribution, l.min, l.max),
            },
        };
        eprintln!(
            "  synthetic prompts: {} o200k_base tokens ({} shared), asking for {} answer tokens{}",
            shown(w.input_tokens.as_ref()),
            w.shared_prefix_tokens,
            shown(w.output_tokens.as_ref()),
            if w.ignore_eos { ", ignore_eos" } else { "" }
        );
    }
    for (index, (target, step)) in plan.steps.iter().zip(steps).enumerate() {
        let target = match target {
            StepTarget::Rate(rate) => format!("{rate} req/s per provider"),
            StepTarget::Speedup(speedup) => format!("the trace at {speedup}× its speed"),
            StepTarget::Users(users) => {
                format!("{users} user(s) per provider, {} request(s) each", plan.requests_per_user.unwrap_or(0))
            }
        };
        let cut = if step.cut > 0 {
            format!(" ({} of the trace's arrivals fall after the step's end)", step.cut)
        } else {
            String::new()
        };
        eprintln!("  step {index}: {target}: {} arrivals{cut}", step.arrivals);
    }
}
