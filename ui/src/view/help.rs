//! The help overlay: every binding as configured, the mouse, and the idle glyph.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

use super::widgets::{block, centered, label};
use crate::keys::ACTIONS;
use crate::state::ui::Ui;
use crate::theme::Theme;

pub fn draw(f: &mut Frame, area: Rect, theme: &Theme, ui: &Ui) {
    let keys = &ui.settings.keymap;
    let entries: Vec<(String, &str)> = ACTIONS
        .iter()
        .map(|(a, _, _, what)| (keys.keys(*a), *what))
        .collect();
    let two_cols = area.width >= 78;
    let col_w = 48usize.min((area.width as usize).saturating_sub(4) / 2);
    let key_w = 10usize;
    let cell = |(k, what): &(String, &str)| -> Vec<Span<'static>> {
        vec![
            Span::styled(format!(" {:<key_w$}", k), Style::default().fg(theme.accent)),
            Span::styled(
                format!("{:<w$}", what, w = col_w - key_w - 1),
                Style::default().fg(theme.fg),
            ),
        ]
    };
    let mut lines: Vec<Line> = vec![];
    if two_cols {
        let half = entries.len().div_ceil(2);
        for i in 0..half {
            let mut spans = cell(&entries[i]);
            if let Some(e) = entries.get(i + half) {
                spans.extend(cell(e));
            }
            lines.push(Line::from(spans));
        }
    } else {
        lines.extend(entries.iter().map(|e| Line::from(cell(e))));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(label(
        " mouse: a click selects, the wheel zooms the timeline",
        theme,
    )));
    lines.push(Line::from(vec![
        label(" timeline: ", theme),
        Span::styled(theme.idle_glyph.to_string(), Style::default().fg(theme.gap)),
        label(" idle compute · ▄ partly busy · ", theme),
        Span::styled("◆", Style::default().fg(theme.config)),
        label(" config change · ", theme),
        Span::styled("▼", Style::default().fg(theme.mark)),
        label(" mark", theme),
    ]));
    lines.push(Line::from(label(
        " rebind keys in [ui.keys] of the config file · esc closes",
        theme,
    )));
    let w = if two_cols {
        col_w as u16 * 2 + 2
    } else {
        col_w as u16 + 2
    };
    let h = lines.len() as u16 + 2;
    let rect = centered(area, w.max(60).min(area.width), h);
    // Taller than the terminal: it scrolls, and its title says how far.
    let room = rect.height.saturating_sub(2) as usize;
    let most = lines.len().saturating_sub(room);
    let scroll = ui.help_scroll.min(most);
    let title = match most {
        0 => " Help ".to_string(),
        _ => format!(" Help · ↑↓ scroll {scroll}/{most} "),
    };
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(lines)
            .scroll((scroll as u16, 0))
            .block(block(title, true, theme)),
        rect,
    );
}
