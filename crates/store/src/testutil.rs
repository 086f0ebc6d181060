//! A run's lock for tests, here and in the binaries (feature `testutil`, which only
//! `[dev-dependencies]` turn on), written as `ib-select` writes it; the lock itself comes from
//! `inferbench_contract::testutil::lock`, changed with struct-update syntax where a test cares.
use crate::run::RunDir;
use inferbench_contract::lock::Lock;

/// Writes `lock` as `run`'s `lock.json`, atomically, as `ib-select` does (the run directory is
/// created when missing).
pub fn write_lock(run: &RunDir, lock: &Lock) {
    std::fs::create_dir_all(run.root()).expect("the run directory");
    crate::atomic::write_json(&run.lock(), lock).expect("lock.json written");
}
