//! What the report takes from `responses.parquet`, and the one place that reads it.
//!
//! The report never needs a whole response: the charts draw a few numbers of each (its
//! provider, family, round, class, TTFA, E2E, tokens/s) and the failure log shows a bounded
//! number of failed requests. So the table is read in batches of the columns named in
//! [`COLUMNS`] only (never the answers, reasoning or error bodies), and each batch is folded
//! into a [`Responses`]: a compact [`Cell`] per response (about 40 bytes; a million responses
//! fit in 40 MB) plus the first [`FAILURE_LOG_CAP`] failures in the order they ran. Memory is
//! bounded by the batch and by those, never by the table's text.
#[cfg(test)]
use inferbench_contract::tables::ResponseRow;
use inferbench_contract::vocab::{ErrorKind, OperationalOutcome, TaskFamily};
use inferbench_contract::Error;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use serde::Deserialize;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::path::Path;

/// Failed requests listed in the failure log, report.md and report.html alike; the total is
/// always given, and the full list is a query on responses.parquet away.
pub const FAILURE_LOG_CAP: usize = 200;

/// The query that lists every failed request, for the failure log's note.
pub const FAILURES_QUERY: &str = "SELECT round_index, provider, task_family, operational_outcome, error_type, \
http_status, retry_after, error_message, error_body, request_id FROM 'responses.parquet' WHERE \
operational_outcome <> '2xx' ORDER BY round_index, started_t_ns, request_id";

/// The columns of `responses.parquet` the report reads.
const COLUMNS: [&str; 13] = [
    "request_id",
    "round_index",
    "provider",
    "task_family",
    "operational_outcome",
    "http_status",
    "error_type",
    "error_message",
    "retry_after",
    "ttfa_ms",
    "e2e_latency_ms",
    "output_tokens_per_second",
    "started_t_ns",
];

/// Rows per batch read.
const BATCH: usize = 8192;

/// One response as read: the columns of [`COLUMNS`].
#[derive(Debug, Deserialize)]
struct Slim {
    request_id: String,
    round_index: i64,
    provider: String,
    task_family: TaskFamily,
    operational_outcome: OperationalOutcome,
    http_status: Option<i64>,
    error_type: Option<ErrorKind>,
    error_message: Option<String>,
    retry_after: Option<String>,
    ttfa_ms: Option<f64>,
    e2e_latency_ms: Option<f64>,
    output_tokens_per_second: Option<f64>,
    started_t_ns: i64,
}

/// What the charts draw of one response.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    /// Index into [`Responses::providers`].
    pub provider: u32,
    pub family: TaskFamily,
    pub round: u32,
    pub outcome: OperationalOutcome,
    pub ttfa_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub tokens_per_second: Option<f64>,
}

/// A failed request as the failure log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub round_index: i64,
    pub started_t_ns: i64,
    pub request_id: String,
    pub provider: String,
    pub task_family: TaskFamily,
    pub outcome: OperationalOutcome,
    pub error_type: Option<ErrorKind>,
    pub http_status: Option<i64>,
    pub retry_after: Option<String>,
    /// At most [`MESSAGE_KEPT`] bytes of the message (it is cut shorter when shown).
    pub message: String,
    /// The message was longer than what is kept.
    pub message_cut: bool,
}

/// Bytes of an error message kept per listed failure.
const MESSAGE_KEPT: usize = 512;

impl Failure {
    fn key(&self) -> (i64, i64, &str) {
        (self.round_index, self.started_t_ns, &self.request_id)
    }
}

impl Ord for Failure {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Failure {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The report's view of `responses.parquet`.
#[derive(Debug, Default)]
pub struct Responses {
    /// Provider names in order of first appearance; [`Cell::provider`] indexes this.
    pub providers: Vec<String>,
    index: HashMap<String, u32>,
    pub cells: Vec<Cell>,
    /// Failed requests in the table.
    pub failed_total: usize,
    /// The first [`FAILURE_LOG_CAP`] of them in the order they ran (round, send time, id).
    pub failures: Vec<Failure>,
    /// Kept while folding: the largest kept failure on top, to be dropped for an earlier one.
    heap: BinaryHeap<Failure>,
    /// Responses of the prompt-cache probe's rounds, counted and left out of everything above
    /// (they count in no figure but the probe's).
    pub probe_count: usize,
}

impl Responses {
    /// Responses shown (the probe's left out).
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Every response of the table, the probe's included.
    pub fn total(&self) -> usize {
        self.cells.len() + self.probe_count
    }

    /// The index of `provider` among [`Responses::providers`], if it has any response.
    pub fn provider_index(&self, provider: &str) -> Option<u32> {
        self.index.get(provider).copied()
    }

    fn intern(&mut self, provider: &str) -> u32 {
        if let Some(i) = self.index.get(provider) {
            return *i;
        }
        let i = self.providers.len() as u32;
        self.providers.push(provider.to_string());
        self.index.insert(provider.to_string(), i);
        i
    }

    fn add(&mut self, r: Slim) {
        let provider = self.intern(&r.provider);
        self.cells.push(Cell {
            provider,
            family: r.task_family,
            round: u32::try_from(r.round_index.max(0)).unwrap_or(u32::MAX),
            outcome: r.operational_outcome,
            ttfa_ms: r.ttfa_ms,
            e2e_ms: r.e2e_latency_ms,
            tokens_per_second: r.output_tokens_per_second,
        });
        if !r.operational_outcome.is_failure() {
            return;
        }
        self.failed_total += 1;
        let full = self.heap.len() >= FAILURE_LOG_CAP;
        if full
            && self.heap.peek().is_some_and(|top| (r.round_index, r.started_t_ns, r.request_id.as_str()) > top.key())
        {
            return;
        }
        let message = r.error_message.unwrap_or_default();
        let kept = inferbench_judge::stream::cap(&message, MESSAGE_KEPT).to_string();
        self.heap.push(Failure {
            round_index: r.round_index,
            started_t_ns: r.started_t_ns,
            request_id: r.request_id,
            provider: r.provider,
            task_family: r.task_family,
            outcome: r.operational_outcome,
            error_type: r.error_type,
            http_status: r.http_status,
            retry_after: r.retry_after,
            message_cut: kept.len() < message.len(),
            message: kept,
        });
        if self.heap.len() > FAILURE_LOG_CAP {
            self.heap.pop();
        }
    }

    fn finish(mut self) -> Responses {
        self.failures = std::mem::take(&mut self.heap).into_sorted_vec();
        self
    }

    /// From whole rows, as the tests build a run's.
    #[cfg(test)]
    pub fn from_rows<'a>(rows: impl IntoIterator<Item = &'a ResponseRow>) -> Responses {
        let mut out = Responses::default();
        for r in rows {
            out.add(Slim {
                request_id: r.request_id.clone(),
                round_index: r.round_index,
                provider: r.provider.clone(),
                task_family: r.task_family,
                operational_outcome: r.operational_outcome,
                http_status: r.http_status,
                error_type: r.error_type,
                error_message: r.error_message.clone(),
                retry_after: r.retry_after.clone(),
                ttfa_ms: r.ttfa_ms,
                e2e_latency_ms: r.e2e_latency_ms,
                output_tokens_per_second: r.output_tokens_per_second,
                started_t_ns: r.started_t_ns,
            });
        }
        out.finish()
    }
}

/// Reads `responses.parquet` at `path` in batches of the report's columns, counting the
/// responses of `probe_rounds` (the prompt-cache probe's) apart. The caller has checked the
/// table's name, version and provenance (`parquet_io::read_inputs`).
pub fn read(path: &Path, probe_rounds: &BTreeSet<i64>) -> Result<Responses, Error> {
    let corrupt = |e: &dyn std::fmt::Display| Error::Parquet { path: path.to_path_buf(), message: e.to_string() };
    let file = std::fs::File::open(path).map_err(|e| Error::unreadable(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| corrupt(&e))?;
    let present: Vec<&str> = builder.schema().fields().iter().map(|f| f.name().as_str()).collect();
    if let Some(missing) = COLUMNS.iter().find(|c| !present.contains(c)) {
        return Err(Error::bad(format!("{}: no `{missing}` column", path.display())));
    }
    let mask = ProjectionMask::columns(builder.parquet_schema(), COLUMNS);
    let reader = builder.with_projection(mask).with_batch_size(BATCH).build().map_err(|e| corrupt(&e))?;
    let mut out = Responses::default();
    for batch in reader {
        let batch = batch.map_err(|e| corrupt(&e))?;
        let rows: Vec<Slim> = serde_arrow::from_record_batch(&batch).map_err(|e| corrupt(&e))?;
        out.cells.reserve(rows.len());
        for r in rows {
            if probe_rounds.contains(&r.round_index) {
                out.probe_count += 1;
            } else {
                out.add(r);
            }
        }
    }
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(round: i64, id: &str) -> Slim {
        Slim {
            request_id: id.into(),
            round_index: round,
            provider: "a".into(),
            task_family: TaskFamily::TicketTriage,
            operational_outcome: OperationalOutcome::Timeout,
            http_status: None,
            error_type: None,
            error_message: Some("x".repeat(2000)),
            retry_after: None,
            ttfa_ms: None,
            e2e_latency_ms: None,
            output_tokens_per_second: None,
            started_t_ns: 0,
        }
    }

    #[test]
    fn the_failure_log_keeps_the_earliest_failures_and_counts_all() {
        let mut r = Responses::default();
        // Later rounds first: what is kept is decided by run order, not by table order.
        for round in (0..(FAILURE_LOG_CAP as i64 * 3)).rev() {
            r.add(failed(round, &format!("req-{round}")));
        }
        let r = r.finish();
        assert_eq!(r.failed_total, FAILURE_LOG_CAP * 3);
        assert_eq!(r.len(), FAILURE_LOG_CAP * 3);
        assert_eq!(r.failures.len(), FAILURE_LOG_CAP);
        let rounds: Vec<i64> = r.failures.iter().map(|f| f.round_index).collect();
        assert_eq!(rounds, (0..FAILURE_LOG_CAP as i64).collect::<Vec<_>>());
        assert!(r.failures.iter().all(|f| f.message.len() == MESSAGE_KEPT && f.message_cut));
    }
}
