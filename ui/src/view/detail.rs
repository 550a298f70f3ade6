//! The lines under the lanes: what the cursor's cell, the selected gap or the selected device
//! did, then the legend, wrapped over as many rows as it needs. A line that does not fit
//! drops whole parts from its end, so a number never loses its unit.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use provetop_telemetry::Nanos;

use super::cells::cell_line;
use super::fmt;
use super::timeline::{min_gap, LanesGeom};
use crate::keys::Action;
use crate::state::ui::Ui;
use crate::state::{Gap, State};
use crate::theme::{Theme, ALL_STAGES};

pub(super) type Seen = [bool; ALL_STAGES.len()];

/// The stages that ran on any lane over `[t0, t1)`: the legend's entries.
pub(super) fn stages_seen(state: &State, t0: Nanos, t1: Nanos) -> Seen {
    let mut seen = [false; ALL_STAGES.len()];
    for lane in state.timelines.lanes() {
        if let Some(tl) = state.timelines.lane(lane) {
            for s in tl.in_window(t0, t1) {
                if let Some(i) = ALL_STAGES.iter().position(|x| *x == s.stage) {
                    seen[i] = true;
                }
            }
        }
    }
    seen
}

/// The legend's entries: the idle glyph, then a glyph and a key per stage seen.
fn legend_items(theme: &Theme, seen: &Seen) -> Vec<[Span<'static>; 2]> {
    let mut items = vec![[
        Span::styled(theme.idle_glyph.to_string(), Style::default().fg(theme.gap)),
        Span::styled(" idle", theme.dim()),
    ]];
    for (s, _) in ALL_STAGES.iter().zip(seen).filter(|(_, on)| **on) {
        items.push([
            Span::styled(
                theme.glyph(*s).to_string(),
                Style::default().fg(theme.stage(*s)),
            ),
            Span::styled(format!(" {}", s.key()), theme.dim()),
        ]);
    }
    items
}

/// The rows of the legend at `width`: which entries each holds, entries never split.
fn legend_layout(seen: &Seen, width: u16) -> Vec<std::ops::Range<usize>> {
    let names: Vec<&str> = std::iter::once("idle")
        .chain(
            ALL_STAGES
                .iter()
                .zip(seen)
                .filter(|(_, on)| **on)
                .map(|(s, _)| s.key()),
        )
        .collect();
    let mut rows = vec![];
    let (mut start, mut used) = (0, 0);
    for (i, name) in names.iter().enumerate() {
        // A space, the glyph, a space and the name, a space.
        let w = name.chars().count() + 4;
        if used + w > width as usize && i > start {
            rows.push(start..i);
            (start, used) = (i, 0);
        }
        used += w;
    }
    rows.push(start..names.len());
    rows
}

fn legend_lines(theme: &Theme, seen: &Seen, width: u16) -> Vec<Line<'static>> {
    let items = legend_items(theme, seen);
    legend_layout(seen, width)
        .into_iter()
        .map(|r| {
            let mut spans = vec![];
            for item in &items[r] {
                spans.push(Span::raw(" "));
                spans.extend(item.iter().cloned());
                spans.push(Span::raw(" "));
            }
            Line::from(spans)
        })
        .collect()
}

/// Rows the legend needs at `width`.
pub(super) fn legend_rows(seen: &Seen, width: u16) -> u16 {
    legend_layout(seen, width).len() as u16
}

/// Spans in order, up to the last that fits in `width` whole.
fn fit(parts: Vec<Span<'static>>, width: u16) -> Line<'static> {
    let mut used = 0;
    let mut out = vec![];
    for p in parts {
        let w = p.content.chars().count();
        if used + w > width as usize {
            break;
        }
        used += w;
        out.push(p);
    }
    Line::from(out)
}

pub(super) fn detail_lines(
    state: &State,
    theme: &Theme,
    ui: &Ui,
    g: &LanesGeom,
    selected: Option<&(usize, Gap)>,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines = vec![];
    let gap_keys = format!(
        "{}{}",
        ui.settings.keymap.key(Action::PrevGap),
        ui.settings.keymap.key(Action::NextGap)
    );
    let plain = Style::default().fg(theme.fg);
    // A click on an idle cell selects its gap: the gap's line says more than the cell's.
    let in_gap = selected.is_some_and(|(_, gap)| {
        ui.cell
            .is_some_and(|t| gap.start <= t && (gap.open || t < gap.end))
    });
    if let Some(cell) = cell_line(state, theme, ui, g).filter(|_| !in_gap) {
        lines.push(fit(cell.spans, width));
    } else if let Some((d, gap)) = selected {
        let id = &state.timelines.devices[*d].id;
        let when = if gap.open {
            format!("since {} (still idle)", fmt::clock(gap.start, true))
        } else {
            format!(
                "{} → {}",
                fmt::clock(gap.start, true),
                fmt::clock(gap.end, true)
            )
        };
        let mut parts = vec![
            Span::styled(
                format!(" gap on {id}: "),
                Style::default()
                    .fg(theme.gap_selected)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!("{} idle, {when}", fmt::nanos(gap.len())), plain),
        ];
        let bold = plain.add_modifier(Modifier::BOLD);
        let causes = state.gap_causes(*d, gap.start, gap.end);
        match causes.as_slice() {
            [] => parts.push(Span::styled(" · cause not reported", bold)),
            [g] => parts.push(Span::styled(format!(" · {}", g.cause), bold)),
            many => parts.extend(
                many.iter()
                    .take(3)
                    .map(|g| Span::styled(format!(" · {} {}", g.cause, fmt::pct(g.share)), bold)),
            ),
        }
        // Why the largest cause happened, where the analyser knows (gap_detail), after it.
        if let Some(why) = causes.first().and_then(|g| g.why.as_ref()) {
            parts.insert(3, Span::styled(format!(" ({why})"), plain));
        }
        lines.push(fit(parts, width));
    } else if let Some(d) = ui.selected_device(state) {
        let dev = &state.timelines.devices[d];
        let idle = dev.idle(g.t0, g.t1, state.now, min_gap(g));
        let mut parts = vec![
            Span::styled(format!(" {}: ", dev.id), plain),
            Span::styled(
                format!("compute busy {} of the window", fmt::pct(idle.busy())),
                plain,
            ),
            Span::styled(
                format!(" · {}", fmt::plural(idle.gaps as u64, "gap")),
                plain,
            ),
        ];
        if let Some((start, len)) = idle.longest {
            parts.push(Span::styled(
                format!(", longest {}", fmt::nanos(len)),
                plain,
            ));
            parts.push(Span::styled(
                format!(" at {}", fmt::clock(start, true)),
                plain,
            ));
        }
        parts.push(Span::styled(format!(" · {gap_keys} gaps"), theme.dim()));
        lines.push(fit(parts, width));
    }
    lines.extend(legend_lines(theme, &stages_seen(state, g.t0, g.t1), width));
    lines
}
