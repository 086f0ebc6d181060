//! `events/seal.json`: what sealing a run's log compressed, and the events table it wrote.
//! Sealing and reading it are the store's (`inferbench_store::sealed`).
use crate::{canonical, Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `events/seal.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SealRecord {
    pub v: u32,
    pub run_id: String,
    /// How to get the original bytes back without inferbench.
    pub recover_with: String,
    /// Every sealed segment, in order.
    pub segments: Vec<SealedSegment>,
    /// `events.parquet` as this seal wrote it from exactly these segments: readers of a sealed
    /// log take its rows instead of parsing the JSONL again, once its hash is checked (absent
    /// in seals written before it was recorded, whose log is read from the JSONL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<SealedTable>,
}

/// The events table a seal wrote, and how many lines of each segment it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SealedTable {
    /// `events.parquet`, beside `events/`.
    pub file: String,
    pub bytes: u64,
    pub sha256: String,
    /// Rows: the log's complete lines.
    pub rows: u64,
    /// Per segment, in order: its complete lines (one row each) and the bytes of an
    /// unterminated last line the table does not hold.
    pub segments: Vec<TableSegment>,
}

/// One segment's share of [`SealedTable`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TableSegment {
    pub segment: u32,
    pub lines: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torn_tail_bytes: Option<u64>,
}

/// One sealed segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SealedSegment {
    pub segment: u32,
    /// The original file's name, `NNNN.jsonl` (removed once sealed).
    pub original: String,
    pub original_bytes: u64,
    pub original_sha256: String,
    /// The compressed file's name, `NNNN.jsonl.zst`.
    pub compressed: String,
    pub compressed_bytes: u64,
    pub compressed_sha256: String,
    /// The seal chain up to and including this segment ([`SealRecord::chain_link`]): each
    /// entry hashes the one before it, so an entry dropped, reordered or edited no longer
    /// chains. Absent in seals written before the chain was recorded, which are read as
    /// unchained (every entry's own hashes still checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_sha256: Option<String>,
}

impl SealRecord {
    /// The chain link of `segment` after `previous` (the entry before it in segment order;
    /// `None` for the first): SHA-256 of the text
    /// `inferbench-seal-chain/1\n<run_id>\n<previous link or empty>\n<segment>\n<original_sha256>\n<compressed_sha256>\n`.
    /// One chain over the whole log in segment-number order, a sharded log's too: the shards'
    /// segments are sealed together once every shard is done (docs/reference/event-log.md, "Shards").
    pub fn chain_link(run_id: &str, previous: Option<&str>, segment: &SealedSegment) -> String {
        canonical::sha256_hex(
            format!(
                "inferbench-seal-chain/1\n{run_id}\n{}\n{}\n{}\n{}\n",
                previous.unwrap_or(""),
                segment.segment,
                segment.original_sha256,
                segment.compressed_sha256
            )
            .as_bytes(),
        )
    }

    /// Sorts the segments by number and links each to the one before it.
    pub fn link(&mut self) {
        self.segments.sort_by_key(|s| s.segment);
        let mut previous: Option<String> = None;
        for segment in &mut self.segments {
            let link = SealRecord::chain_link(&self.run_id, previous.as_deref(), segment);
            segment.chain_sha256 = Some(link.clone());
            previous = Some(link);
        }
    }

    /// Whether the record carries the chain (a seal written before it was recorded does not).
    pub fn is_chained(&self) -> bool {
        self.segments.iter().any(|s| s.chain_sha256.is_some())
    }

    /// Checks the chain of a chained record (`path` names it in messages): segments in
    /// strictly increasing order, each entry's link the one its predecessor and its own hashes
    /// give. A record without any link (written before the chain) passes; one with some links
    /// missing does not, since only an edit leaves it so.
    pub fn check_chain(&self, path: &Path) -> Result<()> {
        if !self.is_chained() {
            return Ok(());
        }
        // The order first, so that a reordering is named as one rather than as a broken link.
        for pair in self.segments.windows(2) {
            if pair[1].segment <= pair[0].segment {
                return Err(Error::bad(format!(
                    "{}: segment {} is listed after segment {}; the sealed segments were reordered",
                    path.display(),
                    pair[1].segment,
                    pair[0].segment
                )));
            }
        }
        let mut previous: Option<&str> = None;
        for segment in &self.segments {
            let expected = SealRecord::chain_link(&self.run_id, previous, segment);
            match segment.chain_sha256.as_deref() {
                Some(link) if link == expected => {}
                Some(link) => {
                    return Err(Error::bad(format!(
                        "{}: segment {}'s chain_sha256 {}… is not the {}… the segments before it and its own hashes \
                         give; a sealed segment was dropped, reordered or changed since sealing",
                        path.display(),
                        segment.segment,
                        canonical::short_hash(link),
                        canonical::short_hash(&expected)
                    )))
                }
                None => {
                    return Err(Error::bad(format!(
                        "{}: segment {} has no chain_sha256 while others do; the seal record was edited",
                        path.display(),
                        segment.segment
                    )))
                }
            }
            previous = segment.chain_sha256.as_deref();
        }
        Ok(())
    }
}

impl SealedSegment {
    /// Whether `now`, the SHA-256 of the compressed file at `path`, is the one this segment was
    /// sealed with; refused as bad input, naming the file, when it is not.
    pub fn check_compressed_sha256(&self, path: &Path, now: &str) -> Result<()> {
        if now == self.compressed_sha256 {
            return Ok(());
        }
        Err(self.modified(path, now))
    }

    /// The compressed file at `path`, which hashes to `now` or does not decompress to the
    /// original this segment records, is not the one sealed.
    pub fn modified(&self, path: &Path, now: &str) -> Error {
        Error::bad(format!(
            "{}: sha256 {}… is not the {}… it was sealed with; the sealed log was modified",
            path.display(),
            canonical::short_hash(now),
            canonical::short_hash(&self.compressed_sha256)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(number: u32) -> SealedSegment {
        SealedSegment {
            segment: number,
            original: format!("{number:04}.jsonl"),
            original_bytes: 10,
            original_sha256: format!("{number:064x}"),
            compressed: format!("{number:04}.jsonl.zst"),
            compressed_bytes: 5,
            compressed_sha256: format!("{:064x}", number + 100),
            chain_sha256: None,
        }
    }

    fn record(numbers: &[u32]) -> SealRecord {
        let mut record = SealRecord {
            v: 1,
            run_id: "run".into(),
            recover_with: String::new(),
            segments: numbers.iter().map(|&n| segment(n)).collect(),
            table: None,
        };
        record.link();
        record
    }

    #[test]
    fn a_linked_record_checks_and_each_link_depends_on_the_one_before() {
        let linked = record(&[1, 2, 3]);
        linked.check_chain(Path::new("seal.json")).unwrap();
        let first = SealRecord::chain_link("run", None, &linked.segments[0]);
        assert_eq!(linked.segments[0].chain_sha256.as_deref(), Some(first.as_str()));
        let second = SealRecord::chain_link("run", Some(&first), &linked.segments[1]);
        assert_eq!(linked.segments[1].chain_sha256.as_deref(), Some(second.as_str()));
        // Another run's identical segments chain differently.
        assert_ne!(SealRecord::chain_link("other", None, &linked.segments[0]), first);
    }

    #[test]
    fn a_sharded_log_chains_in_segment_order_whatever_order_it_was_listed_in() {
        let mut shuffled = record(&[]);
        shuffled.segments = vec![segment(4), segment(1), segment(2), segment(3)];
        shuffled.link();
        assert_eq!(shuffled, record(&[1, 2, 3, 4]));
    }

    #[test]
    fn a_dropped_reordered_or_edited_entry_breaks_the_chain() {
        let path = Path::new("events/seal.json");
        let mut dropped = record(&[1, 2, 3]);
        dropped.segments.remove(1);
        let err = dropped.check_chain(path).unwrap_err().to_string();
        assert!(err.contains("segment 3's chain_sha256") && err.contains("dropped"), "{err}");

        let mut swapped = record(&[1, 2, 3]);
        swapped.segments.swap(0, 1);
        let err = swapped.check_chain(path).unwrap_err().to_string();
        assert!(err.contains("segment 1 is listed after segment 2"), "{err}");

        // Renumbered to look in order: the links still name the old order.
        let mut renumbered = record(&[1, 2]);
        renumbered.segments.swap(0, 1);
        renumbered.segments[0].segment = 1;
        renumbered.segments[1].segment = 2;
        assert!(renumbered.check_chain(path).is_err());

        let mut edited = record(&[1, 2]);
        edited.segments[0].original_sha256 = "0".repeat(64);
        assert!(edited.check_chain(path).unwrap_err().to_string().contains("segment 1's"));

        let mut unlinked_one = record(&[1, 2]);
        unlinked_one.segments[1].chain_sha256 = None;
        assert!(unlinked_one.check_chain(path).unwrap_err().to_string().contains("no chain_sha256"));
    }

    #[test]
    fn a_seal_written_before_the_chain_reads_as_unchained() {
        let old = r#"{"v":1,"run_id":"run","recover_with":"","segments":[{"segment":1,"original":"0001.jsonl",
            "original_bytes":1,"original_sha256":"a","compressed":"0001.jsonl.zst","compressed_bytes":1,
            "compressed_sha256":"b"}]}"#;
        let record: SealRecord = serde_json::from_str(old).unwrap();
        assert!(!record.is_chained());
        record.check_chain(Path::new("seal.json")).unwrap();
    }
}
