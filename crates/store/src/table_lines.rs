//! `events.parquet` read back as the log's lines: what a sealed log is read from when its seal
//! recorded the table (`crate::event_log::LogReader::open`), a record batch at a time and only
//! the columns that hold a line.
use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray};
use inferbench_contract::event::{Envelope, Event, SseEvent};
use inferbench_contract::tables::EventRow;

/// Rows of the table decoded a record batch at a time.
const BATCH_ROWS: usize = 1024;

/// The columns that hold a log line (everything else is derived from them).
const LINE_COLUMNS: [&str; 14] = [
    "segment",
    "seq",
    "t_ns",
    "type",
    "request_id",
    "attempt",
    "sse_index",
    "sse_data",
    "sse_event",
    "sse_id",
    "sse_retry",
    "sse_comment",
    "sse_redacted",
    "data",
];

/// One line of the log, read back from the table: its segment and its envelope (or why the
/// row's `data` is not the event its type names).
pub type LogLine = (u32, std::result::Result<Envelope, serde_json::Error>);

/// The log's lines from a sealed `events.parquet`, in log order, a record batch at a time,
/// reading only the columns that hold them. Each envelope is the one the line it was written
/// from reads as: `v` is the format version (every line was checked to have it when the table
/// was written) and `run_id` the run's.
pub struct LogLines {
    path: std::path::PathBuf,
    run_id: String,
    batches: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
}

impl LogLines {
    pub fn open(path: &std::path::Path, run_id: &str) -> inferbench_contract::Result<LogLines> {
        let builder = crate::parquet_io::open_columns::<EventRow>(path)?;
        let schema = builder.parquet_schema();
        let mut indices = Vec::with_capacity(LINE_COLUMNS.len());
        for name in LINE_COLUMNS {
            let index = schema
                .columns()
                .iter()
                .position(|c| c.name() == name)
                .ok_or_else(|| crate::parquet_io::corrupt_table(path, format!("no column `{name}`")))?;
            indices.push(index);
        }
        let mask = parquet::arrow::ProjectionMask::leaves(schema, indices);
        let batches = builder
            .with_projection(mask)
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| crate::parquet_io::corrupt_table(path, e))?;
        Ok(LogLines { path: path.to_path_buf(), run_id: run_id.to_string(), batches })
    }

    fn lines(&self, batch: &RecordBatch) -> inferbench_contract::Result<Vec<LogLine>> {
        let bad = |e: String| crate::parquet_io::corrupt_table(&self.path, e);
        let column = |name: &str| batch.column_by_name(name).ok_or_else(|| bad(format!("no column `{name}`")));
        let ints = |name: &str| -> inferbench_contract::Result<&Int64Array> {
            column(name)?.as_any().downcast_ref::<Int64Array>().ok_or_else(|| bad(format!("`{name}` is not Int64")))
        };
        let texts = |name: &str| -> inferbench_contract::Result<&StringArray> {
            column(name)?.as_any().downcast_ref::<StringArray>().ok_or_else(|| bad(format!("`{name}` is not Utf8")))
        };
        let (segment, seq, t_ns, kind) = (ints("segment")?, ints("seq")?, ints("t_ns")?, texts("type")?);
        let (request_id, attempt, index) = (texts("request_id")?, ints("attempt")?, ints("sse_index")?);
        let (data, event, id, retry) = (texts("sse_data")?, texts("sse_event")?, texts("sse_id")?, texts("sse_retry")?);
        let comment = texts("sse_comment")?;
        let redacted = column("sse_redacted")?
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(|| bad("`sse_redacted` is not Boolean".into()))?;
        let other = texts("data")?;
        let text = |a: &StringArray, i: usize| a.is_valid(i).then(|| a.value(i).to_string());
        let int = |a: &Int64Array, name: &str, i: usize| -> inferbench_contract::Result<u64> {
            let v = a.is_valid(i).then(|| a.value(i)).ok_or_else(|| bad(format!("row {i}: `{name}` is null")))?;
            u64::try_from(v).map_err(|_| bad(format!("row {i}: `{name}` is negative")))
        };
        let small = |a: &Int64Array, name: &str, i: usize| -> inferbench_contract::Result<u32> {
            u32::try_from(int(a, name, i)?).map_err(|_| bad(format!("row {i}: `{name}` is out of range")))
        };
        let mut lines = Vec::with_capacity(batch.num_rows());
        for i in 0..batch.num_rows() {
            if !kind.is_valid(i) {
                return Err(bad(format!("row {i}: `type` is null")));
            }
            let event = if kind.value(i) == "sse_event" {
                Ok(Event::SseEvent(SseEvent {
                    request_id: text(request_id, i).ok_or_else(|| bad(format!("row {i}: `request_id` is null")))?,
                    attempt: small(attempt, "attempt", i)?,
                    index: small(index, "sse_index", i)?,
                    data: text(data, i),
                    event: text(event, i),
                    id: text(id, i),
                    retry: text(retry, i),
                    comment: text(comment, i),
                    redacted: redacted.is_valid(i) && redacted.value(i),
                }))
            } else if other.is_valid(i) {
                inferbench_contract::event::event_from_data(kind.value(i), other.value(i))
            } else {
                return Err(bad(format!("row {i}: a `{}` row without `data`", kind.value(i))));
            };
            let (seq, t_ns) = (int(seq, "seq", i)?, int(t_ns, "t_ns", i)?);
            let envelope = event.map(|event| Envelope {
                v: inferbench_contract::FORMAT_VERSION,
                run_id: self.run_id.clone(),
                seq,
                t_ns,
                event,
            });
            lines.push((small(segment, "segment", i)?, envelope));
        }
        Ok(lines)
    }
}

impl Iterator for LogLines {
    type Item = inferbench_contract::Result<Vec<LogLine>>;
    fn next(&mut self) -> Option<Self::Item> {
        let batch = match self.batches.next()? {
            Ok(batch) => batch,
            Err(e) => return Some(Err(crate::parquet_io::corrupt_table(&self.path, e))),
        };
        Some(self.lines(&batch))
    }
}
