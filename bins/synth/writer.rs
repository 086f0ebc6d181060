//! The segment writer: the same bytes as `ib-fetch`'s (one envelope per line, serialised by
//! serde_json as `jsonl::AppendWriter` does, gap-free `seq`), through a buffer, since nothing
//! here needs a line to reach the kernel before the next is made; synced once at the end.
use anyhow::{Context, Result};
use inferbench_schemas::event::{Envelope, Event};
use inferbench_schemas::FORMAT_VERSION;
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
