//! The allocator: mimalloc, and the settings ib-fetch gives it (and glibc's, which its C code
//! uses) at startup.

// glibc's free of a large block merges every small block freed before it (a thousand
// exchanges' worth at the end of a round): milliseconds between two rounds, and the
// preparing thread allocates beside the sending one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc v3's `mi_option_purge_delay` (the 16th of `mi_option_e` in its mimalloc.h); the
/// -sys crate names only the options v2 and v3 number alike.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// mimalloc decommits the pages freed at the end of a round a second later (its default purge
/// delay), and the next round's launch faults them in again: a third of a millisecond of launch
/// skew at 1,000 providers, measured (BENCHMARKS.md). The fetch's own peak does not change;
/// the seal that follows it allocates beside the kept pages instead of in purged ones (peak RSS
/// +11–13% at 1,000 providers, none measurable at 10): bounded either way. Set for round-based
/// runs only: a load run sends one request at a time, and keeping its freed pages cost it memory
/// and saved nothing (a slow provider at 500 req/s, ~3,760 streams open: peak RSS 232–248 MiB
/// kept, 197 MiB purged; at 2,000 req/s the same CPU and send lag either way; see
/// benches/results/2026-12-07-stream-memory-pieces). Set here, the option is no longer read
/// from `MIMALLOC_PURGE_DELAY`.
pub fn keep_freed_pages() {
    // SAFETY: sets one integer option; mimalloc reads it at each purge, from any thread.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// The most a block glibc's `malloc` serves from mmap'd pages of its own may be: its maximum
/// (`DEFAULT_MMAP_THRESHOLD_MAX` on 64-bit Linux).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 << 20;

/// How much free memory at the top of a glibc heap is kept rather than given back.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 256 << 20;

/// The C code in the fetch (zstd, through the seal's compressors and every Parquet page of
/// `events.parquet`) allocates with glibc's `malloc`, not mimalloc: a compression context's
/// workspace (a megabyte or so) for every column of every row group. Above glibc's dynamic mmap
/// threshold each is mapped afresh and unmapped when freed, and every page of it is faulted in
/// and zeroed by the kernel again: 39,000 page faults sealing a 20,000-request log, 2,100 with
/// these two settings, a few percent of the seal's CPU (measured, see
/// benches/results/2026-12-07-seal-one-read). Kept blocks are bounded by the seal's own peak.
pub fn keep_c_library_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets two of glibc malloc's parameters, before any other thread runs.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index is mimalloc v3's: its purge delay defaults to 1000 ms, and neither neighbour
    /// does (the deprecated eager-commit delay 1, the NUMA node count 0).
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads one integer option.
            assert_eq!(unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }, 1000);
        }
        keep_freed_pages();
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }, -1);
    }
}
