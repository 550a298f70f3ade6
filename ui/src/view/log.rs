//! The log: warnings and errors, marks and configuration changes, in time order, newest at
//! the bottom. A strip of it sits under the timeline; the log view shows it whole.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use provetop_telemetry::Nanos;

use super::fmt;
use super::widgets::{block, label};
use crate::state::ui::{Pane, Ui};
use crate::state::{LogEntry, State};
use crate::theme::Theme;

fn lines<'a>(state: &State, theme: &Theme, width: usize) -> Vec<Line<'a>> {
    let mut items: Vec<(Nanos, Line)> = state
        .logs
        .entries()
        .into_iter()
        .map(|e| {
            let at = e.t();
            let t = fmt::clock(at, true);
            let line = match e {
                LogEntry::Log(l) => {
                    let colour = match l.level.to_ascii_lowercase().as_str() {
                        "error" => theme.error,
                        "warn" | "warning" => theme.warn,
                        _ => theme.fg,
                    };
                    Line::from(vec![
                        label(format!(" {t:>8} "), theme),
                        Span::styled(
                            format!("{:<7}", l.level.to_ascii_lowercase()),
                            Style::default().fg(colour),
                        ),
                        Span::styled(
                            fmt::fit(&l.message, width.saturating_sub(18)),
                            Style::default().fg(theme.fg),
                        ),
                    ])
                }
                LogEntry::Mark(m) => Line::from(vec![
                    label(format!(" {t:>8} "), theme),
                    Span::styled("mark   ", Style::default().fg(theme.mark)),
                    Span::styled(
                        fmt::fit(&m.label, width.saturating_sub(18)),
                        Style::default().fg(theme.fg),
                    ),
                ]),
            };
            (at, line)
        })
        .collect();
    for c in state.config.history.iter() {
        let t = fmt::clock(c.t, true);
        let (text, colour) = if c.applied {
            (
                format!("{}: {} → {} (by {})", c.key, c.from, c.to, c.by),
                theme.config,
            )
        } else {
            (
                format!(
                    "refused {} → {} (by {}): {}",
                    c.key,
                    c.to,
                    c.by,
                    c.error.as_deref().unwrap_or("")
                ),
                theme.error,
            )
        };
        items.push((
            c.t,
            Line::from(vec![
                label(format!(" {t:>8} "), theme),
                Span::styled("config ", Style::default().fg(theme.config)),
                Span::styled(
                    fmt::fit(&text, width.saturating_sub(18)),
                    Style::default().fg(colour),
                ),
            ]),
        ));
    }
    items.sort_by_key(|(t, _)| *t);
    items.into_iter().map(|(_, l)| l).collect()
}

pub fn draw(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui, full: bool) {
    let pane = if full { Pane::LogLines } else { Pane::LogStrip };
    let h = area.height.saturating_sub(2) as usize;
    let all = lines(state, theme, area.width.saturating_sub(2) as usize);
    let scroll = ui.log_scroll.min(all.len().saturating_sub(h));
    let end = all.len() - scroll;
    let mut shown: Vec<Line> = all[end.saturating_sub(h)..end].to_vec();
    if shown.is_empty() {
        let full = " no warnings, marks or changes yet";
        let short = " nothing logged yet";
        let fits = full.chars().count() <= area.width.saturating_sub(2) as usize;
        shown.push(Line::from(label(if fits { full } else { short }, theme)));
    }
    let logs = &state.logs;
    let title = if scroll > 0 {
        format!(" Log · {scroll} newer below ")
    } else if logs.warnings + logs.errors > 0 {
        format!(" Log · {} warnings, {} errors ", logs.warnings, logs.errors)
    } else {
        " Log ".to_string()
    };
    f.render_widget(
        Paragraph::new(shown).block(block(title, ui.focus == pane, theme)),
        area,
    );
}
