//! Sealing: the raw JSONL segments copied into one columnar `events.parquet` for analysis.
//! The JSONL stays the source of truth; the Parquet is re-derivable from it byte for byte.
use anyhow::Result;
use inferbench_schemas::event_log;
use inferbench_schemas::parquet_io;
use inferbench_schemas::run::{file_sha256, RunDir};
use inferbench_schemas::tables::EventRow;
use serde_json::Value;
use std::collections::BTreeMap;

pub fn seal(run: &RunDir, run_id: &str) -> Result<usize> {
    let mut rows = Vec::new();
    let mut inputs = BTreeMap::from([("lock.json".to_string(), file_sha256(&run.lock())?)]);
    for seg in event_log::read(run, run_id)? {
        let segment = seg.number;
        inputs.insert(format!("events/{segment:04}.jsonl"), file_sha256(&seg.path)?);
        for env in seg.records {
            let value = serde_json::to_value(&env)?;
            let data = value.get("data").cloned().unwrap_or(Value::Null);
            rows.push(EventRow {
                segment: i64::from(segment),
                seq: env.seq as i64,
                t_ns: env.t_ns as i64,
                kind: value["type"].as_str().unwrap_or_default().to_string(),
                request_id: data.get("request_id").and_then(Value::as_str).map(str::to_string),
                attempt: data.get("attempt").and_then(Value::as_i64),
                data: serde_json::to_string(&data)?,
            });
        }
    }
    parquet_io::write(&run.events_parquet(), &rows, &inputs)?;
    Ok(rows.len())
}
