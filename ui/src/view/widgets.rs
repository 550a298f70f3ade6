//! Small drawing helpers shared by the views.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use crate::theme::Theme;

/// A bordered pane with `title`, its border and title in the focus colours when `focused`.
pub fn block<'a>(title: impl Into<Line<'a>>, focused: bool, theme: &Theme) -> Block<'a> {
    let title = title.into().style(if focused {
        theme.title()
    } else {
        Style::default().fg(theme.fg).add_modifier(Modifier::BOLD)
    });
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(focused))
        .title(title)
        .style(theme.base())
}

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A sparkline of `values` scaled to `max` (their own maximum when `None`); gaps are blank.
pub fn sparkline(values: &[Option<f64>], max: Option<f64>) -> String {
    let top = max
        .unwrap_or_else(|| values.iter().flatten().copied().fold(0.0, f64::max))
        .max(f64::MIN_POSITIVE);
    values
        .iter()
        .map(|v| match v {
            None => ' ',
            Some(v) => {
                let i = ((v / top).clamp(0.0, 1.0) * 7.0).round() as usize;
                SPARKS[i]
            }
        })
        .collect()
}

const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// A horizontal bar `width` cells long filled to `ratio`: (filled part, empty part).
pub fn bar(ratio: f64, width: usize) -> (String, String) {
    let cells = ratio.clamp(0.0, 1.0) * width as f64;
    let full = cells.floor() as usize;
    let mut filled: String = "█".repeat(full);
    let rest = ((cells - full as f64) * 8.0).floor() as usize;
    let mut used = full;
    if full < width && rest > 0 {
        filled.push(EIGHTHS[rest]);
        used += 1;
    }
    (filled, "░".repeat(width - used))
}

/// A gauge as spans: the bar in the gauge colours.
pub fn gauge_spans(ratio: f64, width: usize, theme: &Theme) -> Vec<Span<'static>> {
    let (f, e) = bar(ratio, width);
    vec![
        Span::styled(f, Style::default().fg(theme.gauge)),
        Span::styled(e, Style::default().fg(theme.gauge_empty)),
    ]
}

/// A rectangle of `w`×`h` centred in `area`, clipped to it.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// A label, in the secondary text colour.
pub fn label(text: impl Into<String>, theme: &Theme) -> Span<'static> {
    Span::styled(text.into(), theme.dim())
}

/// A value, in the text colour.
pub fn value(text: impl Into<String>, theme: &Theme) -> Span<'static> {
    Span::styled(text.into(), Style::default().fg(theme.fg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_sparks() {
        assert_eq!(bar(0.5, 4), ("██".into(), "░░".into()));
        assert_eq!(bar(0.3, 4).0, "█▏");
        assert_eq!(bar(1.5, 3).1, "");
        assert_eq!(sparkline(&[Some(0.0), None, Some(1.0)], None), "▁ █");
    }
}
