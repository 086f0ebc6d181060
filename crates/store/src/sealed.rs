//! Sealing a complete run's log: `events.parquet` derived from it, and each segment
//! compressed in place.
//!
//! Once every scheduled request has reached a terminal outcome, no process appends to the log
//! again, and its JSONL (most of a run's bytes: every request body and SSE payload, verbatim)
//! is compressed: each `events/NNNN.jsonl` becomes `events/NNNN.jsonl.zst`, a standard zstd
//! frame of exactly the same bytes (`zstd -d events/0001.jsonl.zst` gives the original file
//! back, byte for byte). `events/seal.json` (`SealRecord`) records each segment's original
//! size and SHA-256 and the compressed file's, each entry chained to the one before it
//! (`SealRecord::link`), so no entry can be dropped or reordered unnoticed. Provenance keeps naming the segment
//! `events/NNNN.jsonl` with the original's hash, so sealing changes no derived file's inputs.
//!
//! The log is read once: the same read hashes each segment, derives the table and compresses
//! each live segment (`crate::compress`), so a seal costs one pass over the log's bytes.
//!
//! Crash safety: each compressed file is written to a temporary name, synced, decompressed
//! again and checked against the original (its length, and the frame's content checksum of
//! the very bytes hashed), then renamed into place once the log is known complete (an
//! incomplete log's frames are removed); the record is written atomically after every segment
//! is compressed; only then are the plain files removed. Readers take the plain file while it
//! exists, so a seal killed at any point leaves a readable log, and sealing again finishes it
//! (it is idempotent).
use crate::compress::{discard, publish};
use crate::event_log::SegmentRead;
use crate::inventory::Inventory;
use crate::run::RunDir;
use inferbench_contract::seal::{SealRecord, SealedSegment};
use inferbench_contract::{Error, Result, FORMAT_VERSION};
use std::collections::BTreeMap;

/// What [`seal`] did.
#[derive(Debug, Clone)]
pub struct Sealed {
    /// Rows of `events.parquet` (lines of the log).
    pub events: u64,
    /// Whether every scheduled request is terminal, so the segments were compressed.
    pub complete: bool,
    /// The segments sealed now or earlier.
    pub segments: Vec<SealedSegment>,
}

/// Seals the log of `run` (whose lock names it `run_id`): writes `events.parquet` from it and,
/// when every scheduled request is terminal, compresses its segments (see the module docs).
/// Sealing a sealed run again rewrites the same `events.parquet` and changes nothing else.
pub fn seal(run: &RunDir, run_id: &str) -> Result<Sealed> {
    // The log as it stands, taken once: the table is written from its segments, their hashes
    // are the table's provenance and what each compressed file must decompress to, and the
    // earlier record keeps the segments sealed before.
    let inventory = Inventory::take(run)?;
    for (number, path) in inventory.listed() {
        if crate::run::is_sealed_segment(path) {
            inventory.recorded(*number, path)?;
        }
    }
    let discard_all = || inventory.listed().iter().for_each(|(number, _)| discard(run, *number));
    let (table, complete, read) = crate::events_table::write(&inventory, run_id).inspect_err(|_| discard_all())?;
    let events = table.rows;
    let earlier = inventory.record().map(|r| r.segments.clone()).unwrap_or_default();
    if !complete {
        discard_all();
        return Ok(Sealed { events, complete, segments: earlier });
    }
    let plain: Vec<&SegmentRead> = read.iter().filter(|s| !s.sealed).collect();
    let mut sealed: BTreeMap<u32, SealedSegment> = earlier.into_iter().map(|s| (s.segment, s)).collect();
    for segment in &plain {
        let compressed = segment.compressed.as_ref().expect("the seal's read compresses every live segment");
        let entry = publish(compressed, segment.number, &segment.path, segment.bytes, &segment.sha256)
            .inspect_err(|_| discard_all())?;
        sealed.insert(segment.number, entry);
    }
    let mut record = SealRecord {
        v: FORMAT_VERSION,
        run_id: run_id.to_string(),
        recover_with: "zstd -d events/NNNN.jsonl.zst (any zstd decoder) gives events/NNNN.jsonl byte for byte".into(),
        segments: sealed.into_values().collect(),
        table: Some(table),
    };
    // The whole chain again: a segment sealed after earlier ones (a sealed run that fetched
    // more) may sort before some of them (another shard's), and an earlier seal may predate it.
    record.link();
    crate::atomic::write_json(&run.seal_record(), &record)?;
    for segment in &plain {
        std::fs::remove_file(&segment.path).map_err(|e| Error::io(&segment.path, e))?;
    }
    std::fs::File::open(run.events_dir()).and_then(|d| d.sync_all()).map_err(|e| Error::io(run.events_dir(), e))?;
    Ok(Sealed { events, complete, segments: record.segments })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_log;
    use crate::inventory::{read_record, segment_sha256};
    use crate::jsonl::AppendWriter;
    use inferbench_contract::event::{Envelope, Event, Outcome, RequestStarted, RequestTerminal};
    use inferbench_contract::seal::TableSegment;
    use inferbench_contract::tables::EventRow;
    use inferbench_contract::testutil::{envelope, opened, request_started, request_terminal, sse_event};
    use std::io::Write;
    use std::path::Path;

    fn started() -> Event {
        Event::RequestStarted(RequestStarted { body: serde_json::json!({"model": "m"}), ..request_started("q1", 3) })
    }

    fn sse(index: u32, data: &str) -> Event {
        Event::SseEvent(sse_event("q1", index, data))
    }

    fn terminal() -> Event {
        let completed = request_terminal("q1", Outcome::Completed);
        Event::RequestTerminal(RequestTerminal {
            http_status: Some(200),
            bytes_received: 10,
            done_seen: true,
            ..completed
        })
    }

    /// A complete one-request run: its log, with a torn last line a killed writer left.
    fn complete_run(dir: &Path) -> RunDir {
        let run = RunDir::new(dir);
        std::fs::create_dir_all(run.events_dir()).unwrap();
        std::fs::write(run.lock(), "{}").unwrap();
        let mut w = AppendWriter::open(&run.segment(1)).unwrap();
        let events = [
            opened(1),
            started(),
            sse(0, r#"{"model":"m1","choices":[{"delta":{"content":"Hel"}}]}"#),
            sse(
                1,
                r#"{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            ),
            sse(2, "[DONE]"),
            terminal(),
        ];
        for (seq, event) in events.into_iter().enumerate() {
            let seq = seq as u64;
            w.append(&Envelope { t_ns: 1000 + seq * 2_000_000, ..envelope(seq, event) }).unwrap();
        }
        drop(w);
        std::fs::OpenOptions::new().append(true).open(run.segment(1)).unwrap().write_all(b"{\"v\":1,\"ru").unwrap();
        run
    }

    #[test]
    fn sealing_compresses_losslessly_records_hashes_and_keeps_the_log_readable() {
        let dir = tempfile::tempdir().unwrap();
        let run = complete_run(dir.path());
        let original = std::fs::read(run.segment(1)).unwrap();
        let before = event_log::read(&run, "run-a").unwrap();
        let sealed = seal(&run, "run-a").unwrap();
        assert!(sealed.complete);
        assert_eq!(sealed.events, 6);
        assert!(!run.segment(1).exists() && run.sealed_segment(1).exists());
        let entry = &read_record(&run).unwrap().unwrap().segments[0];
        assert_eq!(entry.original_bytes, original.len() as u64);
        assert_eq!(entry.original_sha256, inferbench_contract::canonical::sha256_hex(&original));
        let compressed = std::fs::read(run.sealed_segment(1)).unwrap();
        assert_eq!(entry.compressed_sha256, inferbench_contract::canonical::sha256_hex(&compressed));
        assert_eq!(zstd::decode_all(compressed.as_slice()).unwrap(), original, "a standard zstd frame of the bytes");
        let after = event_log::read(&run, "run-a").unwrap();
        assert_eq!(after[0].records, before[0].records);
        assert_eq!(after[0].torn_tail, Some(10));
        // The sealed segment's hash is its JSONL's, established from the compressed file.
        let mut reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert_eq!(reader.by_ref().count(), 6);
        assert_eq!(
            (reader.segments()[0].bytes, &reader.segments()[0].sha256),
            (original.len() as u64, &entry.original_sha256)
        );
        assert_eq!(segment_sha256(&run, 1).unwrap(), Some(entry.original_sha256.clone()));
        // Sealing again changes nothing.
        let table = std::fs::read(run.events_parquet()).unwrap();
        seal(&run, "run-a").unwrap();
        assert_eq!(std::fs::read(run.sealed_segment(1)).unwrap(), compressed);
        assert_eq!(std::fs::read(run.events_parquet()).unwrap(), table);
        // A modified sealed file is refused where provenance looks at it.
        std::fs::write(run.sealed_segment(1), zstd::encode_all(&original[..original.len() - 3], 3).unwrap()).unwrap();
        assert!(segment_sha256(&run, 1).unwrap_err().to_string().contains("the sealed log was modified"));
        let err = event_log::read(&run, "run-a").unwrap_err().to_string();
        assert!(err.contains("0001.jsonl.zst: sha256") && err.contains("the sealed log was modified"), "{err}");
    }

    #[test]
    fn a_seal_killed_before_the_plain_files_went_is_readable_and_finished_by_sealing_again() {
        let dir = tempfile::tempdir().unwrap();
        let run = complete_run(dir.path());
        let original = std::fs::read(run.segment(1)).unwrap();
        seal(&run, "run-a").unwrap();
        // As if killed after the record was written, before the plain file was removed, and
        // with a stray temporary of a compression in progress.
        std::fs::write(run.segment(1), &original).unwrap();
        std::fs::write(run.events_dir().join(".0001.jsonl.zst.99.tmp"), b"partial").unwrap();
        assert_eq!(run.segments().unwrap()[0].1, run.segment(1), "the plain file is read while it exists");
        assert_eq!(event_log::read(&run, "run-a").unwrap()[0].records.len(), 6);
        seal(&run, "run-a").unwrap();
        assert!(!run.segment(1).exists());
        assert_eq!(zstd::decode_all(std::fs::File::open(run.sealed_segment(1)).unwrap()).unwrap(), original);
    }

    #[test]
    fn an_incomplete_run_is_not_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let run = complete_run(dir.path());
        let text = std::fs::read_to_string(run.segment(1)).unwrap();
        let kept: Vec<&str> = text.split_inclusive('\n').take(3).collect();
        std::fs::write(run.segment(1), kept.concat()).unwrap();
        let sealed = seal(&run, "run-a").unwrap();
        assert!(!sealed.complete && sealed.segments.is_empty());
        assert!(run.segment(1).exists() && !run.sealed_segment(1).exists() && !run.seal_record().exists());
        // The frame the seal's read compressed is not left behind.
        let mut names: Vec<String> = std::fs::read_dir(run.events_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["0001.jsonl"]);
    }

    #[test]
    fn the_events_table_has_typed_columns_beside_the_raw_data() {
        let dir = tempfile::tempdir().unwrap();
        let run = complete_run(dir.path());
        seal(&run, "run-a").unwrap();
        let rows = crate::parquet_io::read::<EventRow>(&run.events_parquet()).unwrap().rows;
        assert_eq!(
            rows.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>()[..3],
            ["segment_opened", "request_started", "sse_event"]
        );
        let first = &rows[2];
        assert_eq!(first.answer_delta.as_deref(), Some("Hel"));
        assert_eq!(first.model.as_deref(), Some("m1"));
        assert_eq!((first.round_index, first.offset_ms), (Some(3), Some(2.0)));
        assert_eq!(first.provider.as_deref(), Some("p"));
        assert_eq!(rows[3].finish_reason.as_deref(), Some("stop"));
        assert_eq!((rows[3].usage_prompt_tokens, rows[3].usage_completion_tokens), (Some(5), Some(2)));
        assert_eq!(rows[4].sse_data.as_deref(), Some("[DONE]"));
        assert_eq!(rows[4].answer_delta, None);
        let data: serde_json::Value = serde_json::from_str(rows[1].data.as_deref().unwrap()).unwrap();
        assert_eq!(data["body"]["model"], "m", "one level of JSON, the body an object in it");
        assert!(rows[2].data.is_none());
    }

    /// Every line (segment, line number, envelope) a reader yields, and its segments after.
    fn read_all(mut reader: event_log::LogReader) -> (Vec<(u32, usize, Envelope)>, Vec<event_log::SegmentRead>) {
        let lines = reader.by_ref().map(|e| e.map(|e| (e.segment, e.line, e.env))).collect::<Result<_>>().unwrap();
        (lines, reader.segments().to_vec())
    }

    /// [`complete_run`] with a second segment (a resumed fetch that found nothing to send).
    fn two_segment_run(dir: &Path) -> RunDir {
        let run = complete_run(dir);
        let mut w = AppendWriter::open(&run.segment(2)).unwrap();
        w.append(&Envelope { t_ns: 99_000_000, ..envelope(6, opened(2)) }).unwrap();
        run
    }

    #[test]
    fn a_sealed_log_is_read_from_its_table_line_for_line() {
        let dir = tempfile::tempdir().unwrap();
        let run = two_segment_run(dir.path());
        let live = read_all(event_log::LogReader::open(&run, "run-a").unwrap());
        seal(&run, "run-a").unwrap();
        let record = read_record(&run).unwrap().unwrap();
        let table = record.table.as_ref().expect("the seal records the table");
        assert_eq!((table.file.as_str(), table.rows), ("events.parquet", 7));
        assert_eq!(
            table.segments,
            [
                TableSegment { segment: 1, lines: 6, torn_tail_bytes: Some(10) },
                TableSegment { segment: 2, lines: 1, torn_tail_bytes: None }
            ]
        );
        assert_eq!(table.sha256, inferbench_contract::canonical::file_sha256(&run.events_parquet()).unwrap());
        let reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert!(reader.reads_table());
        let from_table = read_all(reader);
        let jsonl = event_log::LogReader::open_jsonl(&run, "run-a").unwrap();
        assert!(!jsonl.reads_table());
        let from_jsonl = read_all(jsonl);
        assert_eq!(from_table, from_jsonl, "the same lines, line numbers, sizes, hashes and torn tails");
        assert_eq!(from_table.0, live.0);
        assert_eq!(
            from_table.1.iter().map(|s| (s.bytes, &s.sha256, s.lines, s.torn_tail)).collect::<Vec<_>>(),
            live.1.iter().map(|s| (s.bytes, &s.sha256, s.lines, s.torn_tail)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_seal_chains_its_segments_and_readers_refuse_a_broken_chain() {
        let dir = tempfile::tempdir().unwrap();
        let run = two_segment_run(dir.path());
        seal(&run, "run-a").unwrap();
        let record = read_record(&run).unwrap().unwrap();
        assert!(record.is_chained());
        let first = SealRecord::chain_link("run-a", None, &record.segments[0]);
        let second = SealRecord::chain_link("run-a", Some(&first), &record.segments[1]);
        assert_eq!(record.segments[1].chain_sha256.as_deref(), Some(second.as_str()));
        // Entries swapped (their files left alone): refused by every reader of the record.
        let mut swapped = record.clone();
        swapped.segments.swap(0, 1);
        crate::atomic::write_json(&run.seal_record(), &swapped).unwrap();
        let err = event_log::read(&run, "run-a").unwrap_err().to_string();
        assert!(err.contains("seal.json: segment 1 is listed after segment 2"), "{err}");
        // The first entry dropped, and its file with it.
        let mut dropped = record.clone();
        dropped.segments.remove(0);
        crate::atomic::write_json(&run.seal_record(), &dropped).unwrap();
        let err = read_record(&run).unwrap_err().to_string();
        assert!(err.contains("segment 2's chain_sha256") && err.contains("dropped"), "{err}");
        // A seal written before the chain (no links) is read as it always was.
        let mut unchained = record.clone();
        unchained.segments.iter_mut().for_each(|s| s.chain_sha256 = None);
        crate::atomic::write_json(&run.seal_record(), &unchained).unwrap();
        assert!(!std::fs::read_to_string(run.seal_record()).unwrap().contains("chain_sha256"));
        assert_eq!(event_log::read(&run, "run-a").unwrap().len(), 2);
        // Sealing it again links it.
        seal(&run, "run-a").unwrap();
        assert_eq!(read_record(&run).unwrap().unwrap(), record);
    }

    #[test]
    fn a_table_that_is_not_the_sealed_one_is_passed_over_for_the_jsonl() {
        let dir = tempfile::tempdir().unwrap();
        let run = two_segment_run(dir.path());
        seal(&run, "run-a").unwrap();
        let expected = read_all(event_log::LogReader::open_jsonl(&run, "run-a").unwrap());
        let table = std::fs::read(run.events_parquet()).unwrap();
        // Another table in its place (the same rows but one), then no table at all.
        let mut rows = crate::parquet_io::read::<EventRow>(&run.events_parquet()).unwrap().rows;
        rows.pop();
        crate::parquet_io::write(&run.events_parquet(), &rows, &Default::default()).unwrap();
        let reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert!(!reader.reads_table());
        assert_eq!(read_all(reader), expected);
        std::fs::remove_file(run.events_parquet()).unwrap();
        let reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert!(!reader.reads_table());
        assert_eq!(read_all(reader), expected);
        // A seal written before the table was recorded.
        std::fs::write(run.events_parquet(), &table).unwrap();
        let mut record = read_record(&run).unwrap().unwrap();
        record.table = None;
        crate::atomic::write_json(&run.seal_record(), &record).unwrap();
        let reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert!(!reader.reads_table());
        assert_eq!(read_all(reader), expected);
    }

    #[test]
    fn a_table_read_for_a_modified_or_miscounted_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = two_segment_run(dir.path());
        seal(&run, "run-a").unwrap();
        let record = read_record(&run).unwrap().unwrap();
        // The seal's count of a segment's lines is what the table must hold.
        let mut miscounted = record.clone();
        miscounted.table.as_mut().unwrap().segments[0].lines = 5;
        crate::atomic::write_json(&run.seal_record(), &miscounted).unwrap();
        let reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert!(reader.reads_table());
        let err = reader.collect::<Result<Vec<_>>>().unwrap_err().to_string();
        assert!(err.contains("holds 6 lines of segment 1") && err.contains("records 5"), "{err}");
        // A sealed segment modified under an intact table is refused, as the JSONL reader
        // refuses it.
        crate::atomic::write_json(&run.seal_record(), &record).unwrap();
        let original = zstd::decode_all(std::fs::File::open(run.sealed_segment(2)).unwrap()).unwrap();
        std::fs::write(run.sealed_segment(2), zstd::encode_all(&original[..original.len() - 1], 3).unwrap()).unwrap();
        let reader = event_log::LogReader::open(&run, "run-a").unwrap();
        assert!(reader.reads_table());
        let err = reader.collect::<Result<Vec<_>>>().unwrap_err().to_string();
        assert!(err.contains("0002.jsonl.zst: sha256") && err.contains("the sealed log was modified"), "{err}");
    }
}
