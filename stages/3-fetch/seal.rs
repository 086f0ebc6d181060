//! The fetch's last phase: the log sealed (`events.parquet` written, and the segments
//! compressed once every request is terminal), and the operator told what was sealed.
use crate::plan::Plan;
use anyhow::Result;
use inferbench_contract::shard::Shard;
use inferbench_contract::Error;
use inferbench_store::run::RunDir;

/// Seals the log once every request is terminal (or says it stays open). With nothing sent,
/// sealing a complete, perhaps already sealed, run again finishes a seal a kill interrupted
/// and otherwise changes nothing.
pub fn seal(plan: &Plan, nothing_sent: bool) -> Result<()> {
    let sealed = inferbench_store::sealed::seal(&plan.run, &plan.run_id)?;
    print_sealed(sealed, nothing_sent, &plan.run);
    Ok(())
}

/// Tells the operator what was sealed.
fn print_sealed(sealed: inferbench_store::sealed::Sealed, nothing_sent: bool, run: &RunDir) {
    let (original, compressed) =
        sealed.segments.iter().fold((0, 0), |(o, c), s| (o + s.original_bytes, c + s.compressed_bytes));
    let summary = if sealed.complete {
        format!(
            "{} events; log sealed: {} segment(s), {original} bytes compressed to {compressed}",
            sealed.events,
            sealed.segments.len()
        )
    } else {
        format!("{} events; the log stays open (requests remain)", sealed.events)
    };
    if nothing_sent {
        eprintln!("ib-fetch: every scheduled request is terminal; {summary}");
    } else {
        eprintln!("ib-fetch: {summary} ({})", run.events_parquet().display());
    }
}

/// How long a shard that found every shard done waits for the run's writer lock, which the
/// other shards, finishing at the same moment, may still hold for an instant (and the first of
/// them to get it seals).
const SEAL_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// A shard's last phase, once its segment is closed and its lock let go: when every shard of
/// the run directory is done, the log is sealed (by whichever shard finds it so first; sealing
/// again changes nothing); otherwise it says which shards are not done yet.
pub fn seal_if_every_shard_is_done(run: &RunDir, run_id: &str, shard: Shard) -> Result<()> {
    // Read without the lock, which the other shards may hold: one of them may be sealing the
    // log meanwhile (compressing the segments under this read), and then has done the work.
    let waiting: Vec<String> = match not_done(run, run_id) {
        Ok(waiting) => waiting,
        Err(_) if run.seal_record().exists() => {
            eprintln!("ib-fetch: shard {shard} is done; another shard sealed the log");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if !waiting.is_empty() {
        eprintln!(
            "ib-fetch: shard {shard} is done; the log is sealed once every shard is (by the last one to finish in this \
             directory, or by ib-fetch --seal-only once their events/ files are brought together):"
        );
        for why in waiting {
            eprintln!("  {why}");
        }
        return Ok(());
    }
    let since = std::time::Instant::now();
    let _writer = loop {
        match run.lock_for_writing("ib-fetch") {
            Ok(lock) => break lock,
            Err(Error::Busy(_)) if since.elapsed() < SEAL_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            Err(e) => {
                eprintln!("ib-fetch: shard {shard} is done, and so is every shard, but the log could not be sealed now ({e}); run ib-fetch --seal-only");
                return Ok(());
            }
        }
    };
    print_sealed(inferbench_store::sealed::seal(run, run_id)?, true, run);
    Ok(())
}

/// `ib-fetch --seal-only`: seals a log whose every request is terminal (every shard of a
/// sharded one done), or refuses, naming each shard that is missing or not done.
pub fn seal_only(run: &RunDir) -> Result<()> {
    let run_id = inferbench_store::lock::read(&run.lock())?.run_id;
    let _writer = run.lock_for_writing("ib-fetch")?;
    let waiting = not_done(run, &run_id)?;
    if !waiting.is_empty() {
        return Err(Error::bad(format!(
            "{}: not every shard is done, so the log was not sealed: {}",
            run.events_dir().display(),
            waiting.join("; ")
        ))
        .into());
    }
    let sealed = inferbench_store::sealed::seal(run, &run_id)?;
    if !sealed.complete {
        return Err(Error::bad(format!(
            "{}: requests remain to be sent, so the log was not sealed; rerun ib-fetch to send them",
            run.events_dir().display()
        ))
        .into());
    }
    print_sealed(sealed, true, run);
    Ok(())
}

/// Why each shard of `run`'s log that is not done is not (nothing when it is not sharded).
fn not_done(run: &RunDir, run_id: &str) -> Result<Vec<String>> {
    let shards = inferbench_store::shards::progress(run, run_id)?;
    Ok(shards.iter().filter(|s| !s.done()).map(|s| s.why_not()).collect())
}
