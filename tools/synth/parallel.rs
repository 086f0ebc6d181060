//! The log written in parallel and in order: rounds are planned by the caller in order,
//! serialised by worker threads (the most of the cost) and appended in order by one writer.
//! Every channel is bounded, so a few rounds are in memory at a time whatever the run's size.
use crate::writer::{self, SegmentWriter};
use anyhow::Result;
use inferbench_contract::event::Event;
use std::collections::BTreeMap;
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};

/// One round's events, each with its run time.
pub type Events = Vec<(u64, Event)>;

/// Runs `plan`, which hands each round's events in order to its argument (which answers
/// false once the writer has stopped), and returns `log` with every round appended.
pub fn write_in_order(
    log: SegmentWriter,
    run_id: &str,
    plan: impl FnOnce(&mut dyn FnMut(Events) -> bool),
) -> Result<SegmentWriter> {
    let threads = inferbench_store::worker_threads();
    let (work_tx, work_rx) = sync_channel::<(u64, u64, Events)>(threads * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = sync_channel::<Result<(u64, Vec<u8>, u64)>>(threads * 2);
    let mut seq = log.lines();
    std::thread::scope(|scope| -> Result<SegmentWriter> {
        for _ in 0..threads {
            let (work_rx, done_tx) = (Arc::clone(&work_rx), done_tx.clone());
            scope.spawn(move || loop {
                let job = work_rx.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()));
                let Ok((n, first_seq, events)) = job else { break };
                let lines = events.len() as u64;
                let bytes = writer::serialize(run_id, first_seq, events).map(|b| (n, b, lines));
                if done_tx.send(bytes).is_err() {
                    break;
                }
            });
        }
        drop((work_rx, done_tx));
        let writer = scope.spawn(move || -> Result<SegmentWriter> {
            let mut log = log;
            let mut pending = BTreeMap::new();
            let mut next = 0;
            for done in done_rx {
                let (n, bytes, lines) = done?;
                pending.insert(n, (bytes, lines));
                while let Some((bytes, lines)) = pending.remove(&next) {
                    log.append_serialized(&bytes, lines)?;
                    next += 1;
                }
            }
            Ok(log)
        });
        let mut n = 0;
        plan(&mut |events| {
            let lines = events.len() as u64;
            if work_tx.send((n, seq, events)).is_err() {
                return false;
            }
            seq += lines;
            n += 1;
            true
        });
        drop(work_tx);
        writer.join().map_err(|_| anyhow::anyhow!("the log writer panicked"))?
    })
}
