//! The fetch's last phase: the log sealed (`events.parquet` written, and the segments
//! compressed once every request is terminal), and the operator told what was sealed.
use crate::plan::Plan;
use anyhow::Result;

/// Seals the log once every request is terminal (or says it stays open). With nothing sent,
/// sealing a complete, perhaps already sealed, run again finishes a seal a kill interrupted
/// and otherwise changes nothing.
pub fn seal(plan: &Plan, nothing_sent: bool) -> Result<()> {
    let sealed = inferbench_store::sealed::seal(&plan.run, &plan.run_id)?;
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
        eprintln!("ib-fetch: {summary} ({})", plan.run.events_parquet().display());
    }
    Ok(())
}
