//! The log written in parallel and in order: rounds are planned by the caller in order,
//! serialised by worker threads (the most of the cost) and appended in order by one writer.
//! Every channel is bounded, so a few rounds are in memory at a time whatever the run's size.
use anyhow::Result;
use inferbench_contract::event::Event;
use inferbench_store::segment_writer::SegmentWriter;
use std::collections::BTreeMap;
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};

/// One round's events, each with its run time.
pub type Events = Vec<(u64, Event)>;

/// The buffered segment writer of a whole log.
type Log = SegmentWriter<std::io::BufWriter<std::fs::File>>;

/// Runs `plan`, which hands each round's events in order to its argument (which answers
/// false once the writer has stopped), and returns `log` with every round appended.
pub fn write_in_order(log: Log, plan: impl FnOnce(&mut dyn FnMut(Events) -> bool)) -> Result<Log> {
    let threads = inferbench_store::worker_threads();
    let (work_tx, work_rx) = sync_channel::<(u64, u64, Events)>(threads * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = sync_channel::<Result<(u64, Vec<u8>, u64)>>(threads * 2);
    let mut seq = log.next_seq();
    let rendering = log.lines().clone();
    let rendering = &rendering;
    std::thread::scope(|scope| -> Result<Log> {
        for _ in 0..threads {
            let (work_rx, done_tx) = (Arc::clone(&work_rx), done_tx.clone());
            scope.spawn(move || loop {
                let job = work_rx.lock().map_err(|_| ()).and_then(|rx| rx.recv().map_err(|_| ()));
                let Ok((n, first_seq, events)) = job else { break };
                let bytes = rendering.render_all(first_seq, &events).map(|b| (n, b, events.len() as u64));
                if done_tx.send(bytes.map_err(Into::into)).is_err() {
                    break;
                }
            });
        }
        drop((work_rx, done_tx));
        let writer = scope.spawn(move || -> Result<Log> {
            let mut log = log;
            let mut pending = BTreeMap::new();
            let mut next = 0;
            for done in done_rx {
                let (n, bytes, lines) = done?;
                pending.insert(n, (bytes, lines));
                while let Some((bytes, lines)) = pending.remove(&next) {
                    log.write_rendered(&bytes, lines)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, Request};
    use crate::profiles::Shape;
    use crate::shares::Class;
    use inferbench_contract::testutil::opened;
    use inferbench_contract::vocab::WireApi;
    use inferbench_sim::answer;
    use inferbench_stats::rng::SplitMix64;
    use inferbench_store::run::RunDir;

    /// A log of one request of each class on each wire API, a round each, as the run writes it
    /// (each request's events after its `request_started`).
    fn write_log(run: &RunDir, seed: u64) -> Vec<u8> {
        let mut log = SegmentWriter::create(&run.segment(1), "run-w").unwrap();
        log.write(0, &opened(1)).unwrap();
        let shape = Shape {
            ttft_ms: 300.0,
            tokens_per_second: 80.0,
            reasoning_mean: 4.0,
            reasoning_field: "reasoning_content".into(),
            tokens_per_chunk: 2,
            accuracy: 1.0,
        };
        let text = answer::tokenize(r#"{"answer":"Priya Raman"}"#, 2);
        let thought = answer::reasoning(4, 2, false);
        let classes = [Class::Completed].into_iter().chain(Class::FAILURES);
        let each = classes.flat_map(|class| WireApi::ALL.iter().map(move |&api| (class, api)));
        let mut rounds: Vec<Events> = Vec::new();
        for (i, (class, api)) in each.enumerate() {
            let id = format!("req-{i}");
            let send = 1_000 + i as u64;
            let req = Request {
                request_id: &id,
                api,
                slug: "p",
                counter: i as u64,
                model: "m",
                shape: &shape,
                class,
                answer: &text,
                reasoning: &thought,
                prompt_tokens: 10,
                usage: true,
                time_scale: 0.001,
                deadline_ns: 20_000_000_000,
            };
            let planned = plan(&req, &mut SplitMix64::new(seed + i as u64));
            rounds.push(planned.into_iter().map(|(offset, event)| (send + offset, event)).collect());
        }
        let log = write_in_order(log, |send| {
            for round in rounds {
                assert!(send(round));
            }
        })
        .unwrap();
        let lines = log.next_seq();
        log.finish().unwrap();
        let bytes = std::fs::read(run.segment(1)).unwrap();
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count() as u64, lines);
        bytes
    }

    #[test]
    fn the_log_passes_the_checked_reader_and_the_same_seed_writes_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) =
            (RunDir::new(dir.path().join("a")), RunDir::new(dir.path().join("b")), RunDir::new(dir.path().join("c")));
        let bytes = write_log(&a, 1);
        let segments = inferbench_store::event_log::read(&a, "run-w").unwrap();
        assert_eq!(segments.len(), 1);
        assert!(segments[0].torn_tail.is_none());
        let terminals = segments[0].records.iter().filter(|e| matches!(e.event, Event::RequestTerminal(_))).count();
        assert_eq!(terminals, 8 * WireApi::ALL.len());
        assert_eq!(write_log(&b, 1), bytes, "same seed, same bytes");
        assert_ne!(write_log(&c, 2), bytes, "another seed draws other times");
    }
}
