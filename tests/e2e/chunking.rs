//! Stream integrity against a server written apart from inferbench
//! (`tests/fixtures/chunking-server.py`) that sends the same answer six ways: word by word as
//! a model generates it, held back and flushed as two events at once, held back and sent in
//! one chunk, in chunks of many tokens spread over time, and held back and written in two or
//! three large pieces a fraction of a millisecond apart (which a busy client reads
//! milliseconds apart). The four flushes are buffered: flagged in `responses.parquet`,
//! counted per provider, and no tokens/s sample; the streamed ones are not, and the
//! many-tokens chunking shows in tokens per chunk.
use crate::support::{ok, repo, Workspace};
use inferbench_contract::documents::{MetricsDocument, PooledMetrics};
use inferbench_contract::tables::ResponseRow;
use inferbench_contract::vocab::Outcome;
use inferbench_store::parquet_io;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const MODES: [&str; 6] = ["normal", "buffered", "single", "bulk", "flush2", "flush3"];

/// The chunkings that hold the answer back and flush it.
fn flushes(mode: &str) -> bool {
    matches!(mode, "buffered" | "single" | "flush2" | "flush3")
}

struct ChunkingServer {
    child: Child,
    url: String,
}

impl ChunkingServer {
    fn start(dir: &Path) -> ChunkingServer {
        let port_file = dir.join("chunking-url");
        let child = Command::new("python3")
            .arg(repo().join("tests/fixtures/chunking-server.py"))
            .arg("--port-file")
            .arg(&port_file)
            .spawn()
            .expect("python3");
        // Held from the spawn, so that the server is stopped however the wait ends.
        let mut server = ChunkingServer { child, url: String::new() };
        let started = Instant::now();
        loop {
            if let Ok(url) = std::fs::read_to_string(&port_file) {
                server.url = url;
                return server;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the chunking server did not start");
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for ChunkingServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One provider per chunking, each on its own path of the server.
fn provider_table(url: &str) -> String {
    let mut table = String::from("providers:\n");
    for mode in MODES {
        table.push_str(&format!(
            "  - name: {mode}\n    endpoint: {url}/{mode}/v1/chat/completions\n    auth: {{kind: bearer, env: IB_CHUNKING_KEY}}\n    \
             model_id: {mode}\n    token_limit_field: max_tokens\n    reasoning: {{reasoning_effort: low}}\n    stream_usage: false\n    \
             price_usd_per_million_tokens: {{input: 0.01, output: 0.01}}\n"
        ));
    }
    table
}

/// The rule of README "Definitions", applied to the logged chunk times and token counts: the
/// chunks with the same arrival time are one delivery; an answer of two or more tokens is
/// buffered when one delivery brought them all or it spans less than 2 ms per token of its
/// largest delivery.
fn flushed_at_once(r: &ResponseRow) -> bool {
    let tokens: i64 = r.answer_chunk_tokens.iter().sum();
    let mut deliveries: Vec<(f64, i64)> = Vec::new();
    for (&ms, &k) in r.answer_chunk_ms.iter().zip(&r.answer_chunk_tokens) {
        match deliveries.last_mut() {
            Some((at, sum)) if *at == ms => *sum += k,
            _ => deliveries.push((ms, k)),
        }
    }
    let largest = deliveries.iter().map(|&(_, k)| k).max().unwrap();
    let (first, last) = (r.answer_chunk_ms.first().unwrap(), r.answer_chunk_ms.last().unwrap());
    tokens >= 2 && (largest == tokens || last - first < 2.0 * largest as f64)
}

#[test]
fn answers_flushed_at_once_are_flagged_counted_and_no_speed_sample() {
    let one_at_a_time = crate::support::timed_section();
    let scratch = tempfile::tempdir().unwrap();
    let server = ChunkingServer::start(scratch.path());
    let ws = Workspace::with_table(&provider_table(&server.url), "sim-profiles.yaml", |spec| spec);
    let run = ws.run("run-chunking");
    ok(ws.stage("ib-select", &run).args(["--per-family", "2", "--sample"]));
    ok(&mut ws.stage("ib-schedule", &run));
    ok(ws
        .stage("ib-fetch", &run)
        .args(["--deadline-seconds", "60", "--env-file", "/nonexistent"])
        .env("IB_CHUNKING_KEY", "sk-chunking-local-9c2e"));
    drop(server);
    drop(one_at_a_time);
    ws.derive(&run);

    let responses = parquet_io::read::<ResponseRow>(&run.join("responses.parquet")).unwrap().rows;
    assert_eq!(responses.len(), 6 * MODES.len(), "2 items × 3 families × 6 chunkings");
    for r in &responses {
        assert_eq!(r.outcome, Outcome::Completed, "{r:?}");
        assert!(r.visible_answer_tokens >= 20, "a long enough answer: {r:?}");
        let flushed = flushes(&r.provider);
        assert_eq!(flushed_at_once(r), flushed, "the logged chunks of {}: {:?}", r.provider, r.answer_chunk_ms);
        assert_eq!(r.answer_buffered, flushed, "{}: {r:?}", r.provider);
        assert_eq!(r.output_tokens_per_second.is_none(), flushed, "a flush is no speed sample: {r:?}");
        assert!(r.e2e_latency_ms.is_some() && r.ttfa_ms.is_some(), "its latency still counts: {r:?}");
    }

    let doc: MetricsDocument = serde_json::from_slice(&std::fs::read(run.join("metrics.json")).unwrap()).unwrap();
    let pooled = |name: &str| -> &PooledMetrics {
        doc.combined_provider_metrics.iter().find(|p| p.metrics.provider == name).unwrap()
    };
    for mode in MODES {
        let streaming = &pooled(mode).metrics.stream_diagnostics.answer_streaming;
        let expected = if flushes(mode) { 6 } else { 0 };
        assert_eq!((streaming.answer_count, streaming.buffered.numerator), (6, expected), "{mode}: {streaming:?}");
        let speed_samples = pooled(mode).metrics.summaries.output_tokens_per_second.population_count;
        assert_eq!(speed_samples, 6 - expected, "{mode}: buffered answers are no tokens/s sample");
    }
    let per_chunk = |mode: &str| pooled(mode).metrics.stream_diagnostics.answer_streaming.tokens_per_chunk.clone();
    assert!(per_chunk("normal").p50.unwrap() <= 3.0, "a word per chunk: {:?}", per_chunk("normal"));
    assert!(per_chunk("bulk").p50.unwrap() >= 8.0, "eight words per chunk: {:?}", per_chunk("bulk"));
    assert!(per_chunk("single").max.unwrap() >= 20.0, "the whole answer in one chunk: {:?}", per_chunk("single"));
    let gaps = pooled("normal").metrics.stream_diagnostics.answer_streaming.inter_chunk_gap_ms.clone();
    assert!(gaps.p50.unwrap() >= 10.0, "words 25 ms apart: {gaps:?}");

    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    let section = &report[report.find("### How answers streamed").expect("the report's stream integrity section")..];
    let rows = [("buffered", "6 (100.00%)"), ("single", "6 (100.00%)"), ("flush2", "6 (100.00%)"), ("normal", "| 0 |")];
    for (mode, buffered) in rows {
        let row = section.lines().find(|l| l.starts_with(&format!("| {mode} |"))).unwrap();
        assert!(row.ends_with(&format!("{} |", buffered.trim_start_matches("| ").trim_end_matches(" |"))), "{row}");
    }
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("How answers streamed"), "the page has the section too");
}
