//! The terminal view: the snapshot redrawn in place every interval (ratatui on crossterm, in
//! the alternate screen); q, Esc or Ctrl-C quits and restores the terminal, and so do SIGTERM
//! and SIGHUP and a refresh that fails. It draws the snapshots it is given and knows nothing of
//! where they come from.
use crate::snapshot::Snapshot;
use crate::text;
use anyhow::{Context, Result};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table, Wrap};
use ratatui::{DefaultTerminal, Frame};
use signal_hook::consts::{SIGHUP, SIGTERM};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the loop looks at the signal flag while it waits for a key.
const TICK: Duration = Duration::from_millis(100);

/// Shows `refresh`'s snapshot, taking a new one every `interval`, until the reader quits.
pub fn run(refresh: impl FnMut() -> Result<Snapshot>, interval: Duration) -> Result<()> {
    if !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "standard output is not a terminal: use --once for a plain-text snapshot, --once --json for JSON"
        );
    }
    // SIGTERM and SIGHUP (a closed terminal) end the view as q does, terminal restored; in raw
    // mode Ctrl-C is a key, not a SIGINT.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGTERM, SIGHUP] {
        signal_hook::flag::register(signal, Arc::clone(&stop)).context("installing the signal handlers")?;
    }
    let mut terminal = ratatui::try_init().context("opening the terminal view (use --once outside a terminal)")?;
    let result = event_loop(&mut terminal, refresh, interval, &stop);
    ratatui::try_restore().context("restoring the terminal")?;
    result
}

fn quits(key: &KeyEvent) -> bool {
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc => true,
        KeyCode::Char('c') => key.modifiers.contains(KeyModifiers::CONTROL),
        _ => false,
    }
}

fn event_loop(
    terminal: &mut DefaultTerminal,
    mut refresh: impl FnMut() -> Result<Snapshot>,
    interval: Duration,
    stop: &AtomicBool,
) -> Result<()> {
    let mut snapshot = refresh()?;
    let mut next = Instant::now() + interval;
    loop {
        terminal.draw(|frame| draw(frame, &snapshot, interval)).context("drawing")?;
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let wait = next.saturating_duration_since(Instant::now()).min(TICK);
        if event::poll(wait).context("reading the keyboard")? {
            if let Event::Key(key) = event::read().context("reading the keyboard")? {
                if key.kind == KeyEventKind::Press && quits(&key) {
                    return Ok(());
                }
            }
        }
        if Instant::now() >= next {
            snapshot = refresh()?;
            next = Instant::now() + interval;
        }
    }
}

/// A table row: the provider's name to the left, the figures to the right of their columns.
fn aligned(cells: Vec<String>) -> Row<'static> {
    Row::new(cells.into_iter().enumerate().map(|(i, c)| {
        let line = Line::from(c);
        Cell::from(if i == 0 { line } else { line.right_aligned() })
    }))
}

fn draw(frame: &mut Frame, s: &Snapshot, interval: Duration) {
    let header = text::header(s.window);
    let rows = text::rows(s);
    let widths: Vec<Constraint> = (0..header.len())
        .map(|i| {
            let w = rows.iter().map(|r| r[i].chars().count()).chain([header[i].chars().count()]).max().unwrap_or(1);
            Constraint::Length(w as u16)
        })
        .collect();
    let table_height = rows.len() as u16 + 3;
    // The state and progress lines, a load run's step line, and the borders.
    let top_height = if s.load.is_some() { 5 } else { 4 };
    let [top, table_area, legend_area, lists_area, footer_area] = Layout::vertical([
        Constraint::Length(top_height),
        Constraint::Length(table_height),
        Constraint::Length(3),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut top_lines = vec![Line::styled(text::state_line(s), bold), Line::raw(text::rounds_line(s))];
    top_lines.extend(text::load_line(s).map(Line::raw));
    frame.render_widget(
        Paragraph::new(top_lines).wrap(Wrap { trim: true }).block(Block::bordered().title(" ib-watch ")),
        top,
    );
    let table = Table::new(rows.into_iter().map(aligned), widths)
        .header(aligned(header).style(bold))
        .column_spacing(1)
        .block(Block::bordered().title(" providers "));
    frame.render_widget(table, table_area);
    frame.render_widget(Paragraph::new(text::legend(s.window)).wrap(Wrap { trim: true }), legend_area);
    let mut lines: Vec<Line> = text::in_flight_lines(s).into_iter().map(Line::raw).collect();
    lines.extend(text::failure_lines(s).into_iter().map(Line::raw));
    frame.render_widget(Paragraph::new(lines), lists_area);
    let footer = format!("q, Esc or Ctrl-C quits · refreshed every {:.1} s · read-only", interval.as_secs_f64());
    frame.render_widget(Paragraph::new(footer), footer_area);
}
