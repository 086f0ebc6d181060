//! The snapshot as lines of text: `--once` prints them, and the terminal view draws the same
//! header, provider table and lists, so the two never show different figures.
use crate::snapshot::{Snapshot, Status, LIVE_E2E, LIVE_TTFA};
use inferbench_contract::vocab::Outcome;

/// The provider table's outcome columns: every final outcome of the vocabulary, abbreviated.
pub const OUTCOME_COLUMNS: [(Outcome, &str); 7] = [
    (Outcome::Completed, "ok"),
    (Outcome::Timeout, "tmo"),
    (Outcome::HttpError, "http"),
    (Outcome::TransportError, "conn"),
    (Outcome::InvalidStream, "inv"),
    (Outcome::StreamError, "serr"),
    (Outcome::Truncated, "trunc"),
];

/// `1:02:03`, `2:03`, or `-`.
pub fn clock(seconds: Option<f64>) -> String {
    let Some(s) = seconds.filter(|s| s.is_finite() && *s >= 0.0) else { return "-".into() };
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

fn ms(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{v:.0}"))
}

/// The run's state line.
pub fn state_line(s: &Snapshot) -> String {
    format!("run {}: {}: {}", s.run_id, s.status.as_str(), s.status_detail)
}

/// The progress line: rounds and requests done of the totals, time and ETA, last seq.
pub fn rounds_line(s: &Snapshot) -> String {
    let eta = if s.status == Status::Running { clock(s.eta_seconds) } else { "-".into() };
    format!(
        "rounds {}/{} done · requests {}/{} · providers {} · open attempts {} · elapsed {} · ETA {} · seq {}",
        s.rounds_done,
        s.totals.rounds,
        s.requests_done,
        s.totals.requests,
        s.totals.providers,
        s.open_attempts,
        clock(Some(s.elapsed_seconds)),
        eta,
        s.last_seq.map_or("-".into(), |q| q.to_string())
    )
}

/// A load run's step line: which step, what was sent at what rate, what is in flight, how
/// late the client is, and the failures; `None` in the closed-loop workflow.
pub fn load_line(s: &Snapshot) -> Option<String> {
    let l = s.load.as_ref()?;
    Some(format!(
        "step {}/{}{} {} · {}/{} sent · {:.1} req/s over the last second · {} in flight · send lag p99 {} ms · {} failures",
        l.step + 1,
        l.steps,
        if l.attempt > 1 { format!(" (run {})", l.attempt) } else { String::new() },
        if l.running { "running" } else { "closed" },
        l.sent,
        l.scheduled,
        l.achieved_rate,
        l.in_flight,
        l.send_lag_p99_ms.map_or("-".into(), |v| format!("{v:.3}")),
        l.failures
    ))
}

/// The provider table's header.
pub fn header(window: u64) -> Vec<String> {
    let mut cells = vec!["provider".to_string(), "done".to_string()];
    cells.extend(OUTCOME_COLUMNS.iter().map(|(_, short)| short.to_string()));
    cells.extend(["intr", "open"].map(String::from));
    let live = [LIVE_TTFA, LIVE_E2E].map(|c| c.short_heading());
    cells.extend(live.clone());
    cells.extend(live.map(|heading| format!("{heading}/{window}")));
    cells
}

/// One row per provider, cells as the header orders them (times in ms).
pub fn rows(s: &Snapshot) -> Vec<Vec<String>> {
    s.providers
        .iter()
        .map(|p| {
            let mut cells = vec![p.provider.clone(), format!("{}/{}", p.done, p.scheduled)];
            cells.extend(OUTCOME_COLUMNS.iter().map(|(o, _)| p.outcomes.get(o).copied().unwrap_or(0).to_string()));
            cells.push(p.interrupted_attempts.to_string());
            cells.push(p.open_attempts.to_string());
            cells.extend([p.ttfa_p50_ms, p.e2e_p50_ms, p.rolling.ttfa_p50_ms, p.rolling.e2e_p50_ms].map(ms));
            cells
        })
        .collect()
}

/// What the abbreviated columns mean.
pub fn legend(window: u64) -> String {
    let outcomes: Vec<String> = OUTCOME_COLUMNS.iter().map(|(o, short)| format!("{short} {o}")).collect();
    format!(
        "final outcomes: {}; intr: attempts interrupted and re-sent; open: started, not ended; p50s in ms over every \
         finished request and over the last {window}",
        outcomes.join(", ")
    )
}

/// The round in progress and its requests in flight.
pub fn in_flight_lines(s: &Snapshot) -> Vec<String> {
    let Some(round) = &s.current_round else { return vec!["no round in progress".into()] };
    let mut lines = vec![format!(
        "round {} ({}) in progress for {}: {} in flight",
        round.round_index + 1,
        round.round_id,
        clock(Some(round.elapsed_seconds)),
        round.in_flight.len()
    )];
    lines.extend(
        round
            .in_flight
            .iter()
            .map(|r| format!("  {} {} attempt {}: {:.1} s", r.provider, r.request_id, r.attempt, r.elapsed_seconds)),
    );
    lines
}

/// The recent failures, most recent first.
pub fn failure_lines(s: &Snapshot) -> Vec<String> {
    if s.recent_failures.is_empty() {
        return vec!["no failures".into()];
    }
    let mut lines = vec!["recent failures:".to_string()];
    lines.extend(s.recent_failures.iter().map(|f| {
        let status = f.http_status.map_or(String::new(), |c| format!(" HTTP {c}"));
        let error = f.error_message.as_deref().or(f.error_type.as_deref()).unwrap_or("");
        let error: String = error.chars().take(100).collect();
        format!("  {} {} round {} ({}{status}): {error}", f.provider, f.request_id, f.round_index + 1, f.outcome)
    }));
    lines
}

/// Cells padded to their column's width.
pub fn table(header: &[String], rows: &[Vec<String>]) -> Vec<String> {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].chars().count()]).max().unwrap_or(0))
        .collect();
    std::iter::once(header)
        .chain(rows.iter().map(Vec::as_slice))
        .map(|cells| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| if i == 0 { format!("{c:<w$}") } else { format!("{c:>w$}") })
                .collect();
            padded.join("  ").trim_end().to_string()
        })
        .collect()
}

/// The whole snapshot as plain text.
pub fn render(s: &Snapshot) -> String {
    let mut lines = vec![state_line(s), rounds_line(s)];
    lines.extend(load_line(s));
    lines.push(String::new());
    lines.extend(table(&header(s.window), &rows(s)));
    lines.push(legend(s.window));
    lines.push(String::new());
    lines.extend(in_flight_lines(s));
    lines.extend(failure_lines(s));
    lines.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_read_as_minutes_or_hours() {
        assert_eq!(clock(Some(0.4)), "0:00");
        assert_eq!(clock(Some(125.0)), "2:05");
        assert_eq!(clock(Some(3723.0)), "1:02:03");
        assert_eq!(clock(None), "-");
        assert_eq!(clock(Some(f64::NAN)), "-");
    }

    #[test]
    fn the_live_p50s_are_headed_by_their_catalogue_labels() {
        let header = header(20);
        assert_eq!(header[header.len() - 4..], ["TTFA p50", "E2E p50", "TTFA p50/20", "E2E p50/20"]);
    }

    #[test]
    fn the_table_pads_every_column() {
        let header = vec!["provider".to_string(), "n".to_string()];
        let rows = vec![vec!["a".to_string(), "10".to_string()]];
        assert_eq!(table(&header, &rows), ["provider   n", "a         10"]);
    }
}
