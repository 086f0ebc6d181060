//! A run directory for tests, here and in the binaries (feature `testutil`, which only
//! `[dev-dependencies]` turn on): a temporary directory holding a run with its lock, written
//! as `ib-select` writes it.
use crate::run::RunDir;
use inferbench_contract::lock::Lock;

/// A temporary run directory, removed when dropped.
pub struct TempRun {
    /// Kept for its lifetime: the directory goes when this does.
    pub dir: tempfile::TempDir,
    pub run: RunDir,
}

impl TempRun {
    /// An empty run directory.
    pub fn new() -> TempRun {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let run = RunDir::new(dir.path());
        TempRun { dir, run }
    }

    /// A run directory holding `lock` as its `lock.json`.
    pub fn with_lock(lock: &Lock) -> TempRun {
        let temp = TempRun::new();
        write_lock(&temp.run, lock);
        temp
    }
}

impl Default for TempRun {
    fn default() -> Self {
        TempRun::new()
    }
}

/// Writes `lock` as `run`'s `lock.json`, atomically, as `ib-select` does.
pub fn write_lock(run: &RunDir, lock: &Lock) {
    std::fs::create_dir_all(run.root()).expect("the run directory");
    crate::atomic::write_json(&run.lock(), lock).expect("lock.json written");
}
