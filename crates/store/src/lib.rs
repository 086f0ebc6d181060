//! `inferbench-store`: where a run's files live and how they are written and read back.
//!
//! Every write is atomic or append-only ([`atomic`], [`jsonl`], [`parquet_io`]); a run is a
//! directory ([`run`]) bound to its inputs by its lock ([`lock`], [`pipeline`]), and every
//! derived file records what it was derived from ([`provenance`]). The raw event log is
//! written a segment at a time by `ib-fetch`, `ib-synth` and `ib-import` alike
//! ([`segment_writer`]; a fetch's behind its senders, [`write_behind`]), listed and hashed
//! ([`inventory`]), read back whole or a block at a time ([`event_log`]), and sealed into zstd
//! segments and the `events.parquet` table ([`sealed`], [`events_table`]); [`execution`]
//! gathers what the fetches recorded of themselves (the execution facts) and is their one
//! writer and reader in `responses.parquet`'s metadata, and [`shards`] says where each shard of
//! a sharded fetch stands. [`manifest`] lists the files `manifest.json` covers. The
//! store stands on the contract, the judge (the events table holds each chunk's parsed
//! fields) and the inputs (a lock binds them); it never touches the network.

pub mod atomic;
pub mod compress;
pub mod event_log;
pub mod events_table;
pub mod execution;
pub mod inventory;
pub mod jsonl;
pub mod lock;
pub mod manifest;
pub mod parquet_io;
pub mod pipeline;
pub mod provenance;
pub mod run;
pub mod sealed;
pub mod segment_writer;
pub mod shards;
pub mod stages;
pub mod table_lines;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
pub mod write_behind;

/// Worker threads for a stage's parallel work: the machine's cores, at most four (beyond
/// that the stages wait on their reader, not on the workers).
pub fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 4)
}
