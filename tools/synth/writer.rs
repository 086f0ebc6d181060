//! The segment writer: the same bytes as `ib-fetch`'s (one envelope per line, serialised by
//! serde_json as `jsonl::AppendWriter` does, gap-free `seq`), through a buffer, since nothing
//! here needs a line to reach the kernel before the next is made; synced once at the end.
use anyhow::{Context, Result};
use inferbench_contract::event::{Envelope, Event};
use inferbench_contract::FORMAT_VERSION;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct SegmentWriter {
    path: PathBuf,
    out: BufWriter<File>,
    run_id: String,
    next_seq: u64,
    bytes: u64,
    line: Vec<u8>,
}

/// The lines of `events`, numbered from `first_seq`, as [`SegmentWriter::write`] writes them.
pub fn serialize(run_id: &str, first_seq: u64, events: Vec<(u64, Event)>) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(events.len() * 512);
    for (i, (t_ns, event)) in events.into_iter().enumerate() {
        let envelope =
            Envelope { v: FORMAT_VERSION, run_id: run_id.to_string(), seq: first_seq + i as u64, t_ns, event };
        serde_json::to_writer(&mut out, &envelope)?;
        out.push(b'\n');
    }
    Ok(out)
}

impl SegmentWriter {
    /// Creates `path`; an existing file is an error (a log is never overwritten).
    pub fn create(path: &Path, run_id: &str) -> Result<SegmentWriter> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .with_context(|| format!("creating {}", path.display()))?;
        Ok(SegmentWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(4 << 20, file),
            run_id: run_id.to_string(),
            next_seq: 0,
            bytes: 0,
            line: Vec::with_capacity(64 << 10),
        })
    }

    pub fn write(&mut self, t_ns: u64, event: Event) -> Result<()> {
        let envelope = Envelope { v: FORMAT_VERSION, run_id: self.run_id.clone(), seq: self.next_seq, t_ns, event };
        self.line.clear();
        serde_json::to_writer(&mut self.line, &envelope)?;
        self.line.push(b'\n');
        self.out.write_all(&self.line).with_context(|| format!("writing {}", self.path.display()))?;
        self.bytes += self.line.len() as u64;
        self.next_seq += 1;
        Ok(())
    }

    /// Appends lines serialised elsewhere by [`serialize`], which numbered them from
    /// [`SegmentWriter::lines`] on.
    pub fn append_serialized(&mut self, bytes: &[u8], lines: u64) -> Result<()> {
        self.out.write_all(bytes).with_context(|| format!("writing {}", self.path.display()))?;
        self.bytes += bytes.len() as u64;
        self.next_seq += lines;
        Ok(())
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.next_seq
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Flushes and syncs the segment.
    pub fn finish(self) -> Result<()> {
        let path = self.path.clone();
        let file =
            self.out.into_inner().map_err(|e| e.into_error()).with_context(|| format!("writing {}", path.display()))?;
        file.sync_all().with_context(|| format!("syncing {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, Request};
    use crate::profiles::Shape;
    use crate::shares::Class;
    use inferbench_contract::event::{RequestStarted, SegmentOpened};
    use inferbench_contract::testutil;
    use inferbench_sim::answer;
    use inferbench_sim::rng::SplitMix64;
    use inferbench_store::run::RunDir;

    /// A log of one request of each class, as the run writes it.
    fn write_log(run: &RunDir, seed: u64) -> Vec<u8> {
        std::fs::create_dir_all(run.events_dir()).unwrap();
        let mut log = SegmentWriter::create(&run.segment(1), "run-w").unwrap();
        let opened = SegmentOpened { scheduled_requests: 8, ..testutil::segment_opened(1) };
        log.write(0, Event::SegmentOpened(opened)).unwrap();
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
        for (i, class) in classes.enumerate() {
            let id = format!("req-{i}");
            let started =
                RequestStarted { body: serde_json::json!({"model": "m"}), ..testutil::request_started(&id, 0) };
            let send = 1_000 + i as u64;
            log.write(send, Event::RequestStarted(started)).unwrap();
            let req = Request {
                request_id: &id,
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
            for (offset, event) in plan(&req, &mut SplitMix64::new(seed + i as u64)) {
                log.write(send + offset, event).unwrap();
            }
        }
        let lines = log.lines();
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
        assert_eq!(terminals, 8);
        assert_eq!(write_log(&b, 1), bytes, "same seed, same bytes");
        assert_ne!(write_log(&c, 2), bytes, "another seed draws other times");
        // A log is never overwritten.
        assert!(SegmentWriter::create(&a.segment(1), "run-w").is_err());
    }
}
