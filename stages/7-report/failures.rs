//! What went wrong, per provider and per request: the failure classes with their counts, how
//! the 2xx streams ended (missing `[DONE]`, missing `finish_reason`, usage that disagrees with
//! the local token count), and the failure log: the first failed requests in the order they
//! ran (at most `responses::FAILURE_LOG_CAP`, with the total and the query that lists every
//! one) with provider, family, outcome, error type and message, HTTP status and Retry-After,
//! so a malformed stream is told apart from a dropped connection and a 429 storm from a slow
//! provider.
use crate::format::{figure, percent, UNAVAILABLE};
use crate::labels::label;
use crate::leaderboard;
use crate::responses::{Failure, Responses, FAILURES_QUERY};
use inferbench_contract::documents::PooledMetrics;
use inferbench_contract::metrics;
use inferbench_contract::vocab::OperationalOutcome;
use inferbench_inputs::providers::ProviderTable;
use inferbench_judge::stream::cap;
use inferbench_present::markdown::Table;
use inferbench_present::number::grouped;

/// A failure class's column heading: its rate's label in the metric catalogue.
fn heading(class: OperationalOutcome) -> &'static str {
    metrics::failure_rate(class).map_or("Success", |rate| rate.label)
}

const CLASSES_NOTE: &str = "Each failed request falls in exactly one class; a cell is the count and, \
when there is any, its rate over the submitted requests (the `<class>_rate` of metrics.json). Connection: the \
connection could not be made or broke (reset, truncated body). Invalid stream: a 2xx whose body \
was not a valid event stream (another content type, no event, data that is not JSON, a line or \
body over the spec's size caps). Stream error: the provider reported an error inside a 2xx \
stream. Truncated: a 2xx stream that ended cleanly with neither `[DONE]` nor a `finish_reason`. \
None of them is a latency or speed sample; all count in the failure rate.";

const STREAMS_NOTE: &str = "Over the 2xx streams that ended by themselves (completed, truncated, \
or reporting an error). Usage mismatch: the provider's `usage.completion_tokens` differs from the \
o200k_base count of the reasoning and answer it streamed; providers count with their own \
tokenizer, so some disagreement is expected.";

const ANSWERS_NOTE: &str = "Over the complete answers: how many chunks each answer came in, how many \
visible-answer tokens each chunk brought and the gaps between an answer's chunks. Buffered: an answer \
of two or more tokens that arrived at once, in a single chunk or with its first and last chunks less \
than 1 ms apart, a span no generation achieves; its speed would measure the network, not the model, \
so under inferbench's rules it is no tokens/s sample (the reference's rules keep it).";

/// Longest error message shown in the failure log (the full text is in responses.parquet).
const MESSAGE_SHOWN: usize = 160;

pub fn section(pooled: &[PooledMetrics], responses: &Responses, table: &ProviderTable) -> Vec<String> {
    let ordered = leaderboard::order(pooled);
    let mut lines = vec!["## Failures".to_string(), String::new(), "### Failures by class".to_string()];
    lines.extend([String::new(), CLASSES_NOTE.to_string(), String::new()]);
    let mut headers = vec!["Provider", "Submitted"];
    headers.extend(OperationalOutcome::FAILURES.iter().map(|c| heading(*c)));
    headers.push("Failure rate");
    let mut classes = Table::new(&headers);
    for row in &ordered {
        let m = &row.metrics;
        let mut cells = vec![label(&m.provider, table).to_string(), m.submitted_count.to_string()];
        cells.extend(m.failures.classes().iter().map(|(_, count, rate)| match count {
            0 => "0".to_string(),
            n => format!("{n} ({})", percent(*rate)),
        }));
        cells.push(percent(m.failure_rate));
        classes.row(cells);
    }
    lines.extend(classes.lines());
    lines.extend(["", "### How streams ended", "", STREAMS_NOTE, ""].map(String::from));
    let mut streams = Table::new(&[
        "Provider",
        "Ended streams",
        "Without [DONE]",
        "Without a finish reason",
        "Usage reported",
        "Usage mismatch",
    ]);
    for row in &ordered {
        let d = &row.metrics.stream_diagnostics;
        streams.row(vec![
            label(&row.metrics.provider, table).to_string(),
            d.ended_stream_count.to_string(),
            d.missing_done_count.to_string(),
            d.missing_finish_reason_count.to_string(),
            d.usage_reported_count.to_string(),
            d.usage_mismatch_count.to_string(),
        ]);
    }
    lines.extend(streams.lines());
    lines.extend(answer_streaming(&ordered, table));
    lines.extend(failure_log(responses, table));
    lines
}

/// How each provider's complete answers streamed, and how many were buffered.
fn answer_streaming(ordered: &[&PooledMetrics], table: &ProviderTable) -> Vec<String> {
    let mut lines = ["", "### How answers streamed", "", ANSWERS_NOTE, ""].map(String::from).to_vec();
    let mut answers = Table::new(&[
        "Provider",
        "Complete answers",
        "Chunks per answer p50",
        "Tokens per chunk p50",
        "Tokens per chunk p99",
        "Tokens per chunk max",
        "Chunk gap p50 (ms)",
        "Chunk gap p99 (ms)",
        "Buffered",
    ]);
    let whole = |x: Option<f64>| x.map_or_else(|| UNAVAILABLE.to_string(), |v| grouped(v, 0));
    for row in ordered {
        let a = &row.metrics.stream_diagnostics.answer_streaming;
        let buffered = match a.buffered.numerator {
            0 => "0".to_string(),
            n => format!("{n} ({})", percent(a.buffered.value)),
        };
        answers.row(vec![
            label(&row.metrics.provider, table).to_string(),
            a.answer_count.to_string(),
            whole(a.chunks_per_answer.p50),
            whole(a.tokens_per_chunk.p50),
            whole(a.tokens_per_chunk.p99),
            whole(a.tokens_per_chunk.max),
            figure(a.inter_chunk_gap_ms.p50),
            figure(a.inter_chunk_gap_ms.p99),
            buffered,
        ]);
    }
    lines.extend(answers.lines());
    lines
}

/// A failure's message as the failure logs show it: its first `MESSAGE_SHOWN` bytes.
pub fn shown_message(r: &Failure) -> String {
    if r.message.len() > MESSAGE_SHOWN || r.message_cut {
        format!("{}…", cap(&r.message, MESSAGE_SHOWN))
    } else {
        r.message.clone()
    }
}

/// How many requests failed and how many the log lists; `columns` names where the rest is.
pub fn count_note(responses: &Responses, columns: &str) -> String {
    let (total, listed) = (responses.failed_total, responses.failures.len());
    let of =
        format!("{} failed request(s) of {} responses", grouped(total as f64, 0), grouped(responses.len() as f64, 0));
    if listed < total {
        format!(
            "{of}; the first {} in the order they ran are listed. Every failed request, with its full error message \
             and body ({columns}), is in responses.parquet: the query below lists them.",
            grouped(listed as f64, 0)
        )
    } else {
        format!(
            "{of}, in the order they ran. The full error message and body of each are in responses.parquet ({columns})."
        )
    }
}

/// The first failed requests, in the order they ran (at most `FAILURE_LOG_CAP`).
fn failure_log(responses: &Responses, table: &ProviderTable) -> Vec<String> {
    let mut lines = vec![String::new(), "### Failure log".to_string(), String::new()];
    lines.push(count_note(responses, "`error_message`, `error_body`"));
    if responses.failed_total > responses.failures.len() {
        lines.extend([String::new(), format!("```sql\n{FAILURES_QUERY}\n```")]);
    }
    lines.push(String::new());
    let mut log =
        Table::new(&["Round", "Provider", "Family", "Outcome", "Error type", "HTTP", "Retry-After", "Message"]);
    for r in &responses.failures {
        log.row(vec![
            r.round_index.to_string(),
            label(&r.provider, table).to_string(),
            r.task_family.to_string(),
            r.outcome.to_string(),
            r.error_type.map_or(String::new(), |e| e.to_string()),
            r.http_status.map_or(String::new(), |s| s.to_string()),
            r.retry_after.clone().unwrap_or_default(),
            shown_message(r),
        ]);
    }
    lines.extend(log.lines());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample;

    #[test]
    fn classes_show_count_and_rate_and_the_log_counts_failed_requests() {
        let inputs = sample::inputs();
        let lines = section(&inputs.metrics.combined_provider_metrics, &Responses::default(), &inputs.table);
        let header = lines.iter().find(|l| l.starts_with("| Provider | Submitted | Timeout |")).unwrap();
        assert!(header.ends_with("| Invalid stream | Stream error | Truncated | Failure rate |"), "{header}");
        // Provider c: 9 of 600 timed out (the sample's 1.48% timeout rate).
        assert!(lines.iter().any(|l| l.starts_with("| Provider c | 600 | 9 (1.48%) | 0 |")), "{lines:#?}");
        assert!(lines.iter().any(|l| l == "0 failed request(s) of 0 responses, in the order they ran. The full error message and body of each are in responses.parquet (`error_message`, `error_body`)."), "{lines:#?}");
    }
}
