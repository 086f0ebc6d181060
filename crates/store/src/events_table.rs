//! `events.parquet`: the event log as a typed table for analysis, one row per line of the log,
//! in log order. The JSONL (sealed or live) stays the source of truth; this table is
//! re-derivable from it byte for byte.
//!
//! Each row has the envelope (`segment`, `seq`, `t_ns`, `type`), the request it belongs to and
//! that request's context from its attempt's `request_started` (provider, task family, item,
//! round, and `offset_ms` from the attempt's actual send), and:
//! - for `sse_event` rows, the fields the timing reads, as typed columns derived by the same
//!   parsing, by the grammar of the attempt's wire API
//!   ([`inferbench_judge::timing::chunk_fields_on`]), so they agree with `responses.parquet`:
//!   answer and reasoning delta, finish reason, usage, model; beside the exact raw event: its
//!   `data` field as plain text (`[DONE]` is the string `[DONE]`), `event`, `id`, `retry` and
//!   a comment's text;
//! - for every other event type, its `data` object as one JSON text (`data`).
//!
//! The table is written from the log's JSONL when the log is sealed (`crate::sealed::seal`);
//! reading it back is `crate::table_lines`'.
use crate::event_log::{LogReader, SegmentRead};
use crate::inventory::Inventory;
use crate::parquet_io::Writer;
use crate::run::RunDir;
use inferbench_contract::canonical::file_sha256;
use inferbench_contract::event::{Envelope, Event, Outcome, SseEvent, TaskFamily, WireApi};
use inferbench_contract::seal::{SealedTable, TableSegment};
use inferbench_contract::tables::EventRow;
use inferbench_contract::{Error, Result};
use inferbench_judge::timing;
use std::collections::{BTreeMap, HashMap};

/// Fills the columns of an `sse_event` row of a stream of `api`'s grammar: the fields the
/// timing reads, beside the raw event.
fn fill_sse(row: &mut EventRow, api: WireApi, e: SseEvent) {
    if let Some(chunk) = timing::chunk_fields_on(api, e.event.as_deref(), e.data.as_deref()) {
        row.answer_delta = Some(chunk.answer).filter(|s| !s.is_empty());
        row.reasoning_delta = Some(chunk.reasoning).filter(|s| !s.is_empty());
        row.finish_reason = chunk.finish_reason;
        row.usage_prompt_tokens = chunk.usage.prompt_tokens;
        row.usage_completion_tokens = chunk.usage.completion_tokens;
        row.usage_total_tokens = chunk.usage.total_tokens;
        row.usage_cached_tokens = chunk.usage.cached_tokens;
        row.model = chunk.model;
    }
    row.sse_index = Some(i64::from(e.index));
    row.sse_data = e.data;
    row.sse_event = e.event;
    row.sse_id = e.id;
    row.sse_retry = e.retry;
    row.sse_comment = e.comment;
    row.sse_redacted = Some(e.redacted);
}

/// What an attempt's rows in `events.parquet` take from its `request_started`.
struct Context {
    provider: String,
    task_family: TaskFamily,
    item_id: String,
    round_index: i64,
    sent_t_ns: u64,
    api: WireApi,
}

/// Writes `events.parquet` from the JSONL of the segments `inventory` lists, streaming, in
/// one read of the log that also hashes each segment (the table's provenance, in its footer)
/// and compresses each live one (see `crate::compress`; the seal publishes or removes the
/// frames). Returns what it wrote, whether every scheduled request is terminal, and each
/// segment as read.
pub fn write(inventory: &Inventory, run_id: &str) -> Result<(SealedTable, bool, Vec<SegmentRead>)> {
    let run = inventory.run();
    let path = run.events_parquet();
    let unencodable = |e: serde_json::Error| Error::Parquet { path: path.clone(), message: e.to_string() };
    let lock_sha256 = file_sha256(&run.lock())?;
    // Never from the table being rewritten.
    let mut log = LogReader::jsonl(inventory, run_id).compressing(run);
    let mut writer = Writer::<EventRow>::create_deferred(&path)?;
    let mut open: HashMap<(String, u32), Context> = HashMap::new();
    let mut scheduled: Option<u64> = None;
    let mut terminal = 0u64;
    let mut batch: Vec<EventRow> = Vec::with_capacity(4096);
    for entry in &mut log {
        let entry = entry?;
        let Envelope { seq, t_ns, event, .. } = entry.env;
        let mut row = EventRow::new(entry.segment, seq, t_ns, kind(&event));
        // Fills a request's row from its attempt's start; returns the attempt's wire API (chat
        // completions' for an attempt without a start in the log).
        let context = |open: &HashMap<(String, u32), Context>, row: &mut EventRow, id: &str, attempt: u32| {
            row.request_id = Some(id.to_string());
            row.attempt = Some(i64::from(attempt));
            let c = open.get(&(id.to_string(), attempt))?;
            row.provider = Some(c.provider.clone());
            row.task_family = Some(c.task_family);
            row.item_id = Some(c.item_id.clone());
            row.round_index = Some(c.round_index);
            row.offset_ms = Some(timing::ms_between(c.sent_t_ns, t_ns));
            Some(c.api)
        };
        let mut api = WireApi::ChatCompletions;
        match &event {
            Event::SegmentOpened(s) => {
                scheduled.get_or_insert(s.scheduled_requests);
            }
            Event::RequestStarted(s) => {
                open.insert(
                    (s.request_id.clone(), s.attempt),
                    Context {
                        provider: s.provider.clone(),
                        task_family: s.task_family,
                        item_id: s.item_id.clone(),
                        round_index: s.round_index as i64,
                        sent_t_ns: t_ns,
                        api: s.api,
                    },
                );
                context(&open, &mut row, &s.request_id, s.attempt);
            }
            Event::ResponseHead(h) => {
                context(&open, &mut row, &h.request_id, h.attempt);
            }
            Event::CredentialEcho(c) => {
                context(&open, &mut row, &c.request_id, c.attempt);
            }
            Event::RequestTerminal(t) => {
                context(&open, &mut row, &t.request_id, t.attempt);
                open.remove(&(t.request_id.clone(), t.attempt));
                terminal += u64::from(t.outcome != Outcome::Interrupted);
            }
            Event::SseEvent(e) => {
                api = context(&open, &mut row, &e.request_id, e.attempt).unwrap_or(WireApi::ChatCompletions);
            }
            Event::RoundReleased(r) => row.round_index = Some(r.round_index as i64),
            Event::RoundClosed(r) => row.round_index = Some(r.round_index as i64),
            Event::SegmentClosed(_) | Event::StepOpened(_) | Event::StepClosed(_) => {}
        }
        if let Event::SseEvent(e) = event {
            fill_sse(&mut row, api, e);
        } else {
            row.data = Some(data_text(&event).map_err(unencodable)?);
        }
        batch.push(row);
        if batch.len() == batch.capacity() {
            writer.write(&batch)?;
            batch.clear();
        }
    }
    writer.write(&batch)?;
    let rows = writer.rows();
    let mut inputs = BTreeMap::from([(RunDir::LOCK.to_string(), lock_sha256)]);
    inputs.extend(log.segments().iter().map(|s| (RunDir::segment_name(s.number), s.sha256.clone())));
    writer.finish_with_inputs(&inputs)?;
    let complete = open.is_empty() && scheduled.is_some_and(|n| terminal >= n);
    let segments = log
        .segments()
        .iter()
        .map(|s| TableSegment {
            segment: s.number,
            lines: s.lines as u64,
            torn_tail_bytes: s.torn_tail.map(|n| n as u64),
        })
        .collect();
    let bytes = std::fs::metadata(&path).map_err(|e| Error::unreadable(&path, e))?.len();
    let table =
        SealedTable { file: RunDir::EVENTS_TABLE.to_string(), bytes, sha256: file_sha256(&path)?, rows, segments };
    let read = log.segments().to_vec();
    Ok((table, complete, read))
}

/// The JSON text of `event`'s `data` object, as it stands in the event's own serialisation
/// (`{"type":…,"data":…}`, cut out of it rather than serialised through a `Value` tree: a
/// `request_started`'s data holds a whole request body).
fn data_text(event: &Event) -> serde_json::Result<String> {
    let mut text = serde_json::to_string(event)?;
    let prefix = format!("{{\"type\":\"{}\",\"data\":", kind(event));
    if !(text.starts_with(&prefix) && text.ends_with('}')) {
        return Err(serde::ser::Error::custom(format!("an event that does not serialise as {prefix}…}}")));
    }
    text.pop();
    text.drain(..prefix.len());
    Ok(text)
}

fn kind(event: &Event) -> &'static str {
    match event {
        Event::SegmentOpened(_) => "segment_opened",
        Event::RoundReleased(_) => "round_released",
        Event::RequestStarted(_) => "request_started",
        Event::ResponseHead(_) => "response_head",
        Event::SseEvent(_) => "sse_event",
        Event::CredentialEcho(_) => "credential_echo",
        Event::RequestTerminal(_) => "request_terminal",
        Event::RoundClosed(_) => "round_closed",
        Event::SegmentClosed(_) => "segment_closed",
        Event::StepOpened(_) => "step_opened",
        Event::StepClosed(_) => "step_closed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inferbench_contract::event::{RequestStarted, SegmentStatus, StepStatus};
    use inferbench_contract::testutil::*;

    #[test]
    fn an_events_data_text_is_its_data_object_serialised() {
        let body = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "é \"q\"\n\u{1}"}],
            "temperature": 0.1, "top_p": 1e-7, "n": u64::MAX, "z": null, "b": [true, {"k": -3}]});
        let events = [
            opened(2),
            Event::RoundReleased(round_released(3, &["a", "b"])),
            Event::RequestStarted(RequestStarted { body, ..request_started("q\"1", 4) }),
            Event::ResponseHead(response_head("q1", 503)),
            Event::CredentialEcho(credential_echo("q1", &["answer"])),
            Event::RequestTerminal(request_terminal("q1", Outcome::Timeout)),
            Event::RoundClosed(round_closed(4)),
            Event::SegmentClosed(segment_closed(2, SegmentStatus::Complete)),
            Event::StepOpened(step_opened(1, 10)),
            Event::StepClosed(step_closed(1, StepStatus::Complete)),
        ];
        for event in events {
            let value = serde_json::to_value(&event).unwrap();
            let through_value = serde_json::to_string(&value["data"]).unwrap();
            assert_eq!(data_text(&event).unwrap(), through_value);
        }
    }
}
