//! The run directory: `runs/<workflow>/<run-id>/`. See `docs/reference/run-directory.md` for the layout.
use std::path::{Path, PathBuf};

/// Canonical paths inside one run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    // The run's files by their names relative to the run directory, each spelled here once:
    // the paths below join them, and provenance maps and the manifest key files by them.
    pub const LOCK: &'static str = "lock.json";
    pub const SELECTION: &'static str = "selection.parquet";
    pub const SCHEDULE: &'static str = "schedule.parquet";
    /// The event log's directory: one `NNNN.jsonl` per fetch process, and the seal.
    pub const EVENTS: &'static str = "events";
    /// The seal record, in [`RunDir::EVENTS`].
    pub const SEAL: &'static str = "seal.json";
    pub const EVENTS_TABLE: &'static str = "events.parquet";
    pub const RESPONSES: &'static str = "responses.parquet";
    pub const EVALUATIONS: &'static str = "evaluations.parquet";
    pub const METRICS_JSON: &'static str = "metrics.json";
    pub const METRICS_PARQUET: &'static str = "metrics.parquet";
    pub const POOLED: &'static str = "pooled.parquet";
    pub const COMPARISONS: &'static str = "comparisons.json";
    pub const REPORT_MD: &'static str = "report.md";
    pub const REPORT_HTML: &'static str = "report.html";
    pub const MANIFEST: &'static str = "manifest.json";
    /// A publisher's Ed25519 signature of `manifest.json`'s bytes, and the public key it
    /// verifies with (`ib-verify --sign`); beside the manifest, never in it (a manifest cannot
    /// list the signature of its own bytes).
    pub const MANIFEST_SIG: &'static str = "manifest.sig";
    pub const MANIFEST_PUB: &'static str = "manifest.pub";
    /// An imported run's copy of the reference's records and evaluations.
    pub const REFERENCE: &'static str = "reference";
    /// In [`RunDir::REFERENCE`].
    pub const REFERENCE_RECORDS: &'static str = "records.jsonl";
    /// In [`RunDir::REFERENCE`].
    pub const REFERENCE_EVALUATIONS: &'static str = "evaluations.jsonl";
    /// In [`RunDir::REFERENCE`]: what `ib-import` imported, and from where.
    pub const REFERENCE_IMPORT: &'static str = "import.json";
    /// The pipeline (spec, provider table, prompts) a run was made from, when it was written
    /// into the run before the run was locked (`make load`: `ib-load-spec`).
    pub const PIPELINE: &'static str = "pipeline";

    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunDir { root: root.into() }
    }
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// The run id: the directory's name.
    pub fn run_id(&self) -> String {
        self.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".into())
    }
    pub fn lock(&self) -> PathBuf {
        self.root.join(Self::LOCK)
    }
    pub fn selection(&self) -> PathBuf {
        self.root.join(Self::SELECTION)
    }
    pub fn schedule(&self) -> PathBuf {
        self.root.join(Self::SCHEDULE)
    }
    pub fn events_dir(&self) -> PathBuf {
        self.root.join(Self::EVENTS)
    }
    /// `events/0001.jsonl`, … one file per fetch process, never rewritten.
    pub fn segment(&self, n: u32) -> PathBuf {
        self.root.join(Self::segment_name(n))
    }
    /// `events/0001.jsonl`: segment `n` by its name relative to the run directory, as
    /// provenance names it (also once it is sealed).
    pub fn segment_name(n: u32) -> String {
        format!("{}/{n:04}.jsonl", Self::EVENTS)
    }
    /// The number of the segment a name relative to the run directory names
    /// (`events/0001.jsonl` → 1), if it names one.
    pub fn segment_number(name: &str) -> Option<u32> {
        Self::log_file(name)
            .and_then(|n| n.strip_suffix(".jsonl"))
            .filter(|n| n.len() == 4)
            .and_then(|n| n.parse::<u32>().ok())
    }
    /// Whether a name relative to the run directory is a file of the event log.
    pub fn is_log_file(name: &str) -> bool {
        Self::log_file(name).is_some()
    }
    /// The name inside [`RunDir::EVENTS`] of a name relative to the run directory.
    fn log_file(name: &str) -> Option<&str> {
        name.strip_prefix(Self::EVENTS).and_then(|n| n.strip_prefix('/'))
    }
    /// `events/0001.jsonl.zst`, …: a segment sealed once the run was complete
    /// (`sealed::seal`), the same bytes zstd-compressed.
    pub fn sealed_segment(&self, n: u32) -> PathBuf {
        self.events_dir().join(format!("{n:04}.jsonl.zst"))
    }
    /// `events/seal.json`: what sealing compressed (`inferbench_contract::seal::SealRecord`).
    pub fn seal_record(&self) -> PathBuf {
        self.events_dir().join(Self::SEAL)
    }
    /// The event-log segments that exist, in order, each as the file to read: the live
    /// `NNNN.jsonl` while it exists (also while a seal is in progress: it is the original),
    /// else the sealed `NNNN.jsonl.zst`.
    pub fn segments(&self) -> std::io::Result<Vec<(u32, PathBuf)>> {
        let dir = self.events_dir();
        if !dir.exists() {
            return Ok(Vec::new());
        }
        let mut found: std::collections::BTreeMap<u32, PathBuf> = std::collections::BTreeMap::new();
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            let (stem, sealed) = match name.strip_suffix(".jsonl.zst") {
                Some(stem) => (stem, true),
                None => match name.strip_suffix(".jsonl") {
                    Some(stem) => (stem, false),
                    None => continue,
                },
            };
            let Some(n) = Some(stem)
                .filter(|n| n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if !sealed || !found.contains_key(&n) {
                found.insert(n, path);
            }
        }
        Ok(found.into_iter().collect())
    }
    pub fn events_parquet(&self) -> PathBuf {
        self.root.join(Self::EVENTS_TABLE)
    }
    pub fn responses(&self) -> PathBuf {
        self.root.join(Self::RESPONSES)
    }
    pub fn evaluations(&self) -> PathBuf {
        self.root.join(Self::EVALUATIONS)
    }
    pub fn metrics_json(&self) -> PathBuf {
        self.root.join(Self::METRICS_JSON)
    }
    pub fn metrics_parquet(&self) -> PathBuf {
        self.root.join(Self::METRICS_PARQUET)
    }
    pub fn pooled_parquet(&self) -> PathBuf {
        self.root.join(Self::POOLED)
    }
    pub fn comparisons(&self) -> PathBuf {
        self.root.join(Self::COMPARISONS)
    }
    pub fn report_md(&self) -> PathBuf {
        self.root.join(Self::REPORT_MD)
    }
    pub fn report_html(&self) -> PathBuf {
        self.root.join(Self::REPORT_HTML)
    }
    pub fn manifest(&self) -> PathBuf {
        self.root.join(Self::MANIFEST)
    }
    /// An imported run's copy of what the reference runner recorded and derived that the log
    /// has no field for (`ib-import`).
    pub fn reference(&self) -> PathBuf {
        self.root.join(Self::REFERENCE)
    }

    /// `reference/records.jsonl`: an imported run's reference records, one a line.
    pub fn reference_records(&self) -> PathBuf {
        self.reference().join(Self::REFERENCE_RECORDS)
    }

    /// `reference/evaluations.jsonl`: the reference's evaluations of those records.
    pub fn reference_evaluations(&self) -> PathBuf {
        self.reference().join(Self::REFERENCE_EVALUATIONS)
    }

    /// `reference/import.json`: `ib-import`'s summary of the import.
    pub fn reference_import(&self) -> PathBuf {
        self.reference().join(Self::REFERENCE_IMPORT)
    }
}

/// The run's writer lock file (hidden, so no inventory lists it).
pub const WRITER_LOCK: &str = ".writer.lock";

/// The exclusive right to write into one run directory, held until dropped. Every stage that
/// writes into a run takes it first, so two processes can never interleave their writes (two
/// `ib-fetch` on one run would send every request twice and corrupt the log).
#[derive(Debug)]
pub struct WriterLock {
    _files: Vec<std::fs::File>,
}

/// Who holds a writer lock, as its holder recorded it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Holder {
    program: String,
    pid: u32,
    since_unix_ms: u64,
}

impl Holder {
    /// This process, as `program`, from now.
    fn now(program: String) -> Holder {
        let since_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        Holder { program, pid: std::process::id(), since_unix_ms }
    }
}

impl RunDir {
    /// Takes the run's writer lock (the directory must exist), then finishes a group commit a
    /// killed writer left half done and removes its temporary files. Refuses at once, writing
    /// nothing, when another process holds the lock.
    pub fn lock_for_writing(&self, program: &str) -> inferbench_contract::Result<WriterLock> {
        use std::io::{Read, Seek, Write};
        let path = self.root.join(WRITER_LOCK);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| inferbench_contract::Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let holder = serde_json::from_str::<Holder>(&text)
                    .map(|h| format!("{} (pid {})", h.program, h.pid))
                    .unwrap_or_else(|_| "another process".to_string());
                return Err(inferbench_contract::Error::Busy(format!(
                    "{}: {holder} is writing this run; {program} wrote nothing. Wait for it to finish, or stop it \
                     and rerun",
                    self.root.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(inferbench_contract::Error::io(&path, e)),
        }
        let holder = Holder::now(program.to_string());
        let record = serde_json::to_vec(&holder).unwrap_or_default();
        let written = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(&record));
        written.map_err(|e| inferbench_contract::Error::io(&path, e))?;
        crate::atomic::recover(&self.root)?;
        Ok(WriterLock { _files: vec![file] })
    }

    /// The right of one shard's fetch (`ib-fetch --shard i/N`) to append its segments: the
    /// run's writer lock shared with the other shards, so that no other stage writes the run
    /// while any shard fetches (each takes it exclusively), and the shard's own lock
    /// (`.writer-shard-<i>.lock`) exclusively, so that each shard has one process. A shard only
    /// appends to its own segment files, so it finishes no other writer's commit: whoever
    /// takes the run's lock exclusively next does.
    pub fn lock_shard_for_writing(
        &self,
        program: &str,
        shard: inferbench_contract::shard::Shard,
    ) -> inferbench_contract::Result<WriterLock> {
        use std::io::{Seek, Write};
        let open = |path: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(path)
                .map_err(|e| inferbench_contract::Error::io(path, e))
        };
        let path = self.root.join(WRITER_LOCK);
        let run = open(&path)?;
        match run.try_lock_shared() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(inferbench_contract::Error::Busy(format!(
                    "{}: another stage is writing this run; {program} (shard {shard}) wrote nothing. Wait for it to \
                     finish, or stop it and rerun",
                    self.root.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(inferbench_contract::Error::io(&path, e)),
        }
        let path = self.root.join(format!(".writer-shard-{}.lock", shard.index));
        let mut own = open(&path)?;
        match own.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(inferbench_contract::Error::Busy(format!(
                    "{}: another process is fetching shard {shard} of this run; {program} wrote nothing",
                    self.root.display()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(inferbench_contract::Error::io(&path, e)),
        }
        let holder = Holder::now(format!("{program} --shard {shard}"));
        let record = serde_json::to_vec(&holder).unwrap_or_default();
        let written = own.set_len(0).and_then(|()| own.rewind()).and_then(|()| own.write_all(&record));
        written.map_err(|e| inferbench_contract::Error::io(&path, e))?;
        Ok(WriterLock { _files: vec![run, own] })
    }
}

/// Who is writing a run now, as [`RunDir::writer`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writer {
    /// No process holds the run's writer lock.
    Idle,
    /// A process holds it: its pid, and the program it recorded in the lock file (`None` when
    /// the record names another pid, i.e. the holder has not written its record yet).
    Held { pid: u32, program: Option<String> },
    /// This system does not say (no readable `/proc/locks`).
    Unknown,
}

impl RunDir {
    /// Who holds the run's writer lock, found without taking it, creating or modifying any
    /// file: the kernel's table of held locks (`/proc/locks`, Linux) is searched for a `flock`
    /// on the lock file's inode, and the holder's record in the file is read. Taking even a
    /// shared lock to test it could make a writer starting at that instant refuse the run.
    pub fn writer(&self) -> Writer {
        let path = self.root.join(WRITER_LOCK);
        let Ok(meta) = std::fs::metadata(&path) else {
            return Writer::Idle;
        };
        let Ok(table) = std::fs::read_to_string("/proc/locks") else {
            return Writer::Unknown;
        };
        use std::os::unix::fs::MetadataExt;
        let Some(pid) = flock_holder(&table, meta.ino()) else {
            return Writer::Idle;
        };
        let program = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str::<Holder>(&text).ok())
            .filter(|holder| holder.pid == pid)
            .map(|holder| holder.program);
        Writer::Held { pid, program }
    }
}

/// The pid holding a `flock` on inode `inode` in a `/proc/locks` table, if any. Lines read
/// `1: FLOCK  ADVISORY  WRITE 2210 fd:01:2883597 0 EOF`; a waiter's line has `->` after the
/// number and holds nothing.
fn flock_holder(table: &str, inode: u64) -> Option<u32> {
    table.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [_, "FLOCK", _, _, pid, device_inode, ..] => {
                let found = device_inode.rsplit(':').next()?.parse::<u64>().ok()?;
                (found == inode).then(|| pid.parse().ok()).flatten()
            }
            _ => None,
        }
    })
}

/// Whether `path` is a sealed (compressed) segment file rather than a live one.
pub fn is_sealed_segment(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        std::fs::write(dir.path().join(".metrics.json.123.tmp"), "half").unwrap();
        let first = run.lock_for_writing("ib-fetch").unwrap();
        assert!(!dir.path().join(".metrics.json.123.tmp").exists(), "a killed writer's temporary is removed");
        let err = run.lock_for_writing("ib-reconstruct").unwrap_err();
        assert!(matches!(err, inferbench_contract::Error::Busy(_)));
        let text = err.to_string();
        assert!(text.contains(&format!("ib-fetch (pid {}) is writing this run", std::process::id())), "{text}");
        drop(first);
        run.lock_for_writing("ib-reconstruct").unwrap();
    }

    #[test]
    fn shards_write_side_by_side_and_no_other_writer_with_them() {
        use inferbench_contract::shard::Shard;
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let first = run.lock_shard_for_writing("ib-fetch", Shard { index: 0, count: 2 }).unwrap();
        let second = run.lock_shard_for_writing("ib-fetch", Shard { index: 1, count: 2 }).unwrap();
        let again = run.lock_shard_for_writing("ib-fetch", Shard { index: 1, count: 2 }).unwrap_err();
        assert!(again.to_string().contains("another process is fetching shard 1/2"), "{again}");
        let other = run.lock_for_writing("ib-reconstruct").unwrap_err();
        assert!(matches!(other, inferbench_contract::Error::Busy(_)), "{other}");
        drop((first, second));
        let whole = run.lock_for_writing("ib-fetch").unwrap();
        let shard = run.lock_shard_for_writing("ib-fetch", Shard { index: 0, count: 2 }).unwrap_err();
        assert!(shard.to_string().contains("another stage is writing this run"), "{shard}");
        drop(whole);
    }

    #[test]
    fn the_writer_is_found_without_taking_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        assert_eq!(run.writer(), Writer::Idle, "no lock file: nobody ever wrote");
        assert!(!dir.path().join(WRITER_LOCK).exists(), "looking creates nothing");
        let held = run.lock_for_writing("ib-fetch").unwrap();
        let before = std::fs::read(dir.path().join(WRITER_LOCK)).unwrap();
        let me = std::process::id();
        if std::path::Path::new("/proc/locks").exists() {
            assert_eq!(run.writer(), Writer::Held { pid: me, program: Some("ib-fetch".into()) });
            drop(held);
            assert_eq!(run.writer(), Writer::Idle);
        }
        assert_eq!(std::fs::read(dir.path().join(WRITER_LOCK)).unwrap(), before, "the record is unchanged");
        // A second writer can take it at once: looking held nothing.
        run.lock_for_writing("ib-reconstruct").unwrap();
    }

    #[test]
    fn proc_locks_lines_name_the_holder_of_an_inode() {
        let table = "1: POSIX  ADVISORY  WRITE 77 fd:01:42 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 2210 fd:01:2883597 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 2211 fd:01:2883597 0 EOF\n";
        assert_eq!(flock_holder(table, 2883597), Some(2210));
        assert_eq!(flock_holder(table, 42), None, "a POSIX lock is not the writer lock");
        assert_eq!(flock_holder(table, 7), None);
    }

    #[test]
    fn segments_are_listed_in_numeric_order_and_strays_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path().join("run-1"));
        assert!(run.segments().unwrap().is_empty());
        std::fs::create_dir_all(run.events_dir()).unwrap();
        for name in ["0002.jsonl", "0001.jsonl", "notes.txt", ".0003.jsonl.tmp", "0003.jsonl.zst", "0002.jsonl.zst"] {
            std::fs::write(run.events_dir().join(name), "").unwrap();
        }
        let numbers: Vec<u32> = run.segments().unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(numbers, vec![1, 2, 3]);
        let paths: Vec<PathBuf> = run.segments().unwrap().into_iter().map(|(_, p)| p).collect();
        assert!(paths[1].ends_with("0002.jsonl"), "the live file while both exist");
        assert!(paths[2].ends_with("0003.jsonl.zst") && is_sealed_segment(&paths[2]));
        assert_eq!(run.run_id(), "run-1");
        assert!(run.segment(12).ends_with("events/0012.jsonl"));
        assert_eq!(RunDir::segment_name(12), "events/0012.jsonl");
        assert_eq!(RunDir::segment_number("events/0012.jsonl"), Some(12));
        for other in ["events/seal.json", "events/12.jsonl", "0012.jsonl", "eventsx/0012.jsonl"] {
            assert_eq!(RunDir::segment_number(other), None, "{other}");
        }
        assert!(RunDir::is_log_file("events/seal.json") && !RunDir::is_log_file("events.parquet"));
    }
}
