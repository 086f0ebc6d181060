use super::source::BLOCK_BYTES;
use super::*;
use crate::jsonl::AppendWriter;
use inferbench_contract::event::Event;
use inferbench_contract::shard::Shard;
use inferbench_contract::testutil::{envelope, opened, round_closed};
use std::io::Write;

fn closed() -> Event {
    Event::RoundClosed(round_closed(0))
}

fn write(run: &RunDir, segment: u32, lines: &[(&str, u64, Event)]) {
    std::fs::create_dir_all(run.events_dir()).unwrap();
    let mut w = AppendWriter::open(&run.segment(segment)).unwrap();
    for (run_id, seq, event) in lines {
        w.append(&Envelope { run_id: run_id.to_string(), t_ns: *seq, ..envelope(*seq, event.clone()) }).unwrap();
    }
}

fn read_err(run: &RunDir) -> String {
    read(run, "run-a").unwrap_err().to_string()
}

#[test]
fn a_clean_log_reads_across_segments() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    write(&run, 1, &[("run-a", 0, opened(1)), ("run-a", 1, closed())]);
    write(&run, 2, &[("run-a", 2, opened(2))]);
    let segments = read(&run, "run-a").unwrap();
    assert_eq!(segments.iter().map(|s| s.records.len()).collect::<Vec<_>>(), [2, 1]);
}

#[test]
fn duplicated_foreign_and_missing_lines_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    write(&run, 1, &[("run-a", 0, opened(1)), ("run-a", 1, closed()), ("run-a", 1, closed())]);
    assert!(read_err(&run).ends_with("0001.jsonl:3: seq: 1 where 2 was expected (a repeated or duplicated line)"));
    write(&run, 1, &[]);
    std::fs::write(run.segment(1), "").unwrap();
    write(&run, 1, &[("run-a", 0, opened(1)), ("run-b", 1, closed())]);
    assert!(read_err(&run).contains("0001.jsonl:2: run_id: `run-b` is not this run (`run-a`)"));
    std::fs::write(run.segment(1), "").unwrap();
    write(&run, 1, &[("run-a", 0, opened(1)), ("run-a", 3, closed())]);
    assert!(read_err(&run).contains("seq: 3 where 1 was expected (lines are missing)"));
    std::fs::write(run.segment(1), "").unwrap();
    write(&run, 1, &[("run-a", 0, closed())]);
    assert!(read_err(&run).contains("a segment must open with its own segment_opened"));
}

#[test]
fn a_log_of_many_blocks_reads_in_order_with_its_size_hash_and_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    let n = 40 * BLOCK_BYTES / 100;
    let lines: Vec<(&str, u64, Event)> =
        std::iter::once(("run-a", 0, opened(1))).chain((1..n as u64).map(|seq| ("run-a", seq, closed()))).collect();
    write(&run, 1, &lines);
    std::fs::OpenOptions::new().append(true).open(run.segment(1)).unwrap().write_all(b"{\"v\":1,\"ru").unwrap();
    let text = std::fs::read(run.segment(1)).unwrap();
    assert!(text.len() > 20 * BLOCK_BYTES, "{} bytes: many blocks", text.len());
    let mut reader = LogReader::open(&run, "run-a").unwrap();
    let entries: Vec<Entry> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(entries.len(), n);
    assert!(entries.iter().enumerate().all(|(i, e)| e.line == i + 1 && e.env.seq == i as u64));
    let read = &reader.segments()[0];
    assert_eq!((read.bytes, read.lines, read.torn_tail), (text.len() as u64, n, Some(10)));
    assert_eq!(read.sha256, inferbench_contract::canonical::sha256_hex(&text));
}

#[test]
fn a_sharded_log_reads_as_one_each_shard_checked_as_a_log_of_its_own() {
    use inferbench_contract::testutil::shard_opened;
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    // Shard 0 wrote segments 1 and 3 (it was resumed), shard 1 segment 2; each counts its
    // own lines from 0.
    write(&run, 1, &[("run-a", 0, shard_opened(1, 0, 2)), ("run-a", 1, closed())]);
    write(&run, 2, &[("run-a", 0, shard_opened(2, 1, 2)), ("run-a", 1, closed()), ("run-a", 2, closed())]);
    write(&run, 3, &[("run-a", 2, shard_opened(3, 0, 2))]);
    let mut reader = LogReader::open(&run, "run-a").unwrap();
    let lines: Vec<(u32, u64)> = reader.by_ref().map(|e| e.map(|e| (e.segment, e.env.seq)).unwrap()).collect();
    assert_eq!(lines, [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (3, 2)], "segment by segment, in number order");
    assert_eq!(reader.checker().shard_count(), Some(2));
    assert!(reader.checker().missing_shards().is_empty());
    assert_eq!(reader.checker().next_seq(), 6, "lines checked in every shard");

    // A gap in one shard's lines, or in its segments, is that shard's.
    write(&run, 3, &[("run-a", 4, closed())]);
    let err = read_err(&run);
    assert!(err.ends_with("0003.jsonl:2: seq: 4 where 3 was expected (lines are missing)"), "{err}");
    std::fs::remove_file(run.segment(3)).unwrap();
    write(&run, 5, &[("run-a", 2, shard_opened(5, 0, 2))]);
    let err = read_err(&run);
    assert!(err.contains("segment 5 of shard 0/2 follows its segment 1; segment 3 is missing"), "{err}");
    std::fs::remove_file(run.segment(5)).unwrap();

    // A segment that names another shard than its number's, another N, or no shard.
    write(&run, 3, &[("run-a", 3, shard_opened(3, 1, 2))]);
    assert!(read_err(&run).contains("segment 3 is shard 0/2's by its number, but it names shard 1/2"));
    std::fs::remove_file(run.segment(3)).unwrap();
    write(&run, 3, &[("run-a", 2, shard_opened(3, 0, 3))]);
    assert!(read_err(&run).contains("every shard of a run is given the same --shard N and --start-at"));
    std::fs::remove_file(run.segment(3)).unwrap();
    write(&run, 3, &[("run-a", 2, opened(3))]);
    assert!(read_err(&run).contains("a log is fetched either whole or by shards"));
    std::fs::remove_file(run.segment(3)).unwrap();

    // A shard none of whose segments is here is named by whoever needs the whole log.
    std::fs::remove_file(run.segment(2)).unwrap();
    let mut reader = LogReader::open(&run, "run-a").unwrap();
    assert_eq!(reader.by_ref().count(), 2);
    assert_eq!(reader.checker().missing_shards(), [Shard { index: 1, count: 2 }]);
    let err = reader.checker().require_every_shard(&run.events_dir()).unwrap_err().to_string();
    assert!(err.contains("no segment of shard 1/2 (segments 2, 4, …)"), "{err}");
}

#[test]
fn an_unsharded_segment_after_shards_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    write(&run, 1, &[("run-a", 0, opened(1))]);
    write(&run, 2, &[("run-a", 0, inferbench_contract::testutil::shard_opened(2, 1, 2))]);
    assert!(read_err(&run).contains("0002.jsonl:1: shard: a log is fetched either whole or by shards"));
}

#[test]
fn a_missing_segment_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path());
    write(&run, 2, &[("run-a", 0, opened(2))]);
    assert!(read_err(&run).contains("segment 2 follows segment 0; a segment file is missing"));
}
