//! The fetch stage, phase by phase: the plan checked before anything is sent, the log's state
//! from earlier fetches, the rounds (or a load run's steps) that remain sent, and the log sealed.
use crate::args::Args;
use crate::{plan, priority, resume, rounds, seal, segment, steps};
use anyhow::Result;
use inferbench_cli::nofile;
use inferbench_contract::Error;
use std::sync::Arc;

pub fn run(args: Args) -> Result<()> {
    if args.seal_only {
        return seal::seal_only(&inferbench_store::run::RunDir::new(&args.run.path));
    }
    // rustls is built without a default crypto provider (no C build of aws-lc); ring is
    // installed once here. It fails only if a provider is already installed, which is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let plan = Arc::new(plan::prepare(args)?);
    let state = Arc::new(resume::scan(&plan.run, &plan.run_id, plan.shard.as_ref().map(|s| s.shard))?);
    if let Some(mode) = state.endpoint_mode.filter(|m| *m != plan.endpoint_mode) {
        return Err(Error::LockMismatch(format!(
            "{}: this run was fetched from {mode} providers; it cannot continue against {} ones (a run never \
             mixes simulated and real segments); start a new run",
            plan.run.events_dir().display(),
            plan.endpoint_mode
        ))
        .into());
    }
    if let Some(shard) = &plan.shard {
        match (state.shard_origin_ns, shard.start_at_unix_ns) {
            (Some(logged), Some(given)) if logged != given => {
                return Err(Error::LockMismatch(format!(
                    "{}: this run's shards were started at {} (--start-at), not {}; every shard of a run is given \
                     the same --start-at",
                    plan.run.events_dir().display(),
                    inferbench_contract::civil::utc_millis(logged),
                    inferbench_contract::civil::utc_millis(given)
                ))
                .into())
            }
            (None, None) => {
                return Err(Error::bad(format!(
                    "--shard {}: the run's first shards need --start-at, the run clock's zero every shard is given; \
                     nothing was sent",
                    shard.shard
                ))
                .into())
            }
            _ => {}
        }
        segment::wait_for(segment::origin(shard, &state));
    }
    if plan.spec.load.is_some() {
        return load(plan, state);
    }
    let pending = plan.schedule.iter().filter(|r| !state.terminal.contains(&r.request_id)).count();
    let nothing_to_send = pending == 0 && state.open.is_empty() && !first_of_shard(&plan, &state);
    if !nothing_to_send {
        // One connection per provider: a fleet of a thousand needs more than the usual 1,024 files.
        nofile::ensure(plan.clients.len() as u64)?;
        // Rounds launch at once what the round before freed: kept, not faulted in again. (A load
        // run sends one request at a time and leaves mimalloc's purge as it is.)
        crate::allocator::keep_freed_pages();
        // One thread runs every request. A round's launch then queues all its requests before
        // any byte of them is written, so their `request_started` lines go to the log in one
        // write ahead of the wire, and no other work runs between two sends (see
        // `release::run_round`). Preparing the next round and flushing the log run on blocking
        // threads beside it.
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(rounds::execute(Arc::clone(&plan), state))?;
    }
    finish(&plan, nothing_to_send)
}

/// A load run: its steps that remain, in the open loop of `steps`, then the seal.
fn load(plan: Arc<plan::Plan>, state: Arc<resume::LogState>) -> Result<()> {
    let nothing_to_send =
        steps::remaining(&plan, &state).is_empty() && state.open.is_empty() && !first_of_shard(&plan, &state);
    if !nothing_to_send {
        // A step's connections number as many as its requests in flight: as many files as allowed.
        nofile::raise()?;
        if !priority::raise() {
            eprintln!(
                "ib-fetch: at ordinary priority (a higher one needs root or CAP_SYS_NICE): on a busy machine the \
                 send lag shows the wait for a core"
            );
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(steps::execute(Arc::clone(&plan), state))?;
    }
    finish(&plan, nothing_to_send)
}

/// A shard that has written nothing yet writes its segment even when its share is empty (a
/// run of fewer providers than shards): the log then shows that it ran.
fn first_of_shard(plan: &plan::Plan, state: &resume::LogState) -> bool {
    plan.shard.is_some() && state.anchor_wall_ns.is_none()
}

/// The log sealed: by an unsharded fetch at once; by a shard once every shard is done.
fn finish(plan: &plan::Plan, nothing_sent: bool) -> Result<()> {
    match &plan.shard {
        None => seal::seal(plan, nothing_sent),
        Some(shard) => {
            plan.release();
            seal::seal_if_every_shard_is_done(&plan.run, &plan.run_id, shard.shard)
        }
    }
}
