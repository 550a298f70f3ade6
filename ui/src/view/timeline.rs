//! The timeline view: a row per lane (each device's compute stream, copy engines and
//! workers, then the CPU pools) over a window of 1 s to 10 min, spans coloured by stage,
//! idle gaps on compute lanes drawn as such, the selected gap highlighted and described.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use ratatui::Frame;

use provetop_telemetry::Nanos;

use super::cells::lane_cells;
use super::detail::{detail_lines, legend_rows, stages_seen};
use super::widgets::block;
use super::{fmt, log, metrics, pipeline, Regions};
use crate::keys::Action;
use crate::state::ui::{Pane, Ui, SECOND};
use crate::state::{Gap, LaneKind, LaneRef, State};
use crate::theme::Theme;

const LABEL_W: u16 = 18;
/// From this width the timeline has the devices and the pipeline beside it; narrower, the
/// lanes get every column.
const SIDE_FROM: u16 = 160;
/// The most rows a lane takes.
const LANE_ROWS: u16 = 3;

/// Where the lanes are drawn: rows, the bars' columns, and the window they span.
#[derive(Clone, Debug, PartialEq)]
pub struct LanesGeom {
    /// The columns the bars take, and the lanes' rows.
    pub bars: Rect,
    /// Each screen row of a lane (a lane may take up to 3): (screen row, lane).
    pub rows: Vec<(u16, LaneRef)>,
    /// Session time at the bars' left edge (nanoseconds).
    pub t0: Nanos,
    /// Session time at the bars' right edge (nanoseconds), exclusive.
    pub t1: Nanos,
}

impl LanesGeom {
    /// The session time at column `x`.
    pub fn time_at(&self, x: u16) -> Option<Nanos> {
        if x < self.bars.x || x >= self.bars.x + self.bars.width {
            return None;
        }
        let dt = (self.t1 - self.t0) as f64 / self.bars.width as f64;
        Some(self.t0 + (((x - self.bars.x) as f64 + 0.5) * dt) as Nanos)
    }
}

struct Parts {
    block: Rect,
    /// Lanes that did not fit (scroll with the lane cursor).
    hidden: usize,
    geom: LanesGeom,
    axis: Rect,
    detail: Rect,
    side: Option<(Rect, Rect)>,
    summary: Option<Rect>,
    log: Rect,
}

fn layout(body: Rect, state: &State, ui: &Ui) -> Parts {
    let wide = body.width >= SIDE_FROM;
    let (main, side) = if wide {
        let [m, s] = Layout::horizontal([Constraint::Min(60), Constraint::Length(58)]).areas(body);
        (m, Some(s))
    } else {
        (body, None)
    };
    let bottom_h = if wide {
        (main.height / 5).clamp(5, 12)
    } else if main.height >= 18 {
        7
    } else {
        5
    };
    // Under the lanes: the gap line and the legend, wrapped to the width.
    let (t0, t1) = ui.window(state.now);
    let legend = legend_rows(&stages_seen(state, t0, t1), main.width.saturating_sub(2));
    let detail_h = 1 + legend.clamp(1, 3);
    // The lanes take what they need (up to LANE_ROWS each, finer fills the taller they
    // are); the log gets the rest.
    let want = state.timelines.lanes().len() as u16 * LANE_ROWS + 1 + detail_h + 2;
    let bottom_h = bottom_h.max(main.height.saturating_sub(want));
    let [block, bottom] =
        Layout::vertical([Constraint::Min(6), Constraint::Length(bottom_h)]).areas(main);
    let (summary, log) = if wide {
        (None, bottom)
    } else {
        let [s, l] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(bottom);
        (Some(s), l)
    };
    let side = side.map(|s| {
        let dev_h = metrics::summary_height(state).min(s.height / 2);
        let [d, p] = Layout::vertical([Constraint::Length(dev_h), Constraint::Min(4)]).areas(s);
        (d, p)
    });
    let inner = block.inner(ratatui::layout::Margin::new(1, 1));
    let lanes = state.timelines.lanes();
    // Lanes before legends: on a short terminal the legend gives way until a few lanes fit.
    let lanes_min = (lanes.len() as u16).clamp(1, 3);
    let detail_h = detail_h.min(inner.height.saturating_sub(1 + lanes_min));
    let lane_rows = inner.height.saturating_sub(1 + detail_h);
    // Room to spare makes lanes taller, with stage names inside spans.
    let h = (lane_rows as usize / lanes.len().max(1)).clamp(1, LANE_ROWS as usize);
    let fit = lane_rows as usize / h;
    let cursor = ui.lane.min(lanes.len().saturating_sub(1));
    let offset = (cursor + 1).saturating_sub(fit);
    let rows = lanes
        .iter()
        .skip(offset)
        .take(fit)
        .enumerate()
        .flat_map(|(i, l)| (0..h).map(move |k| (inner.y + (i * h + k) as u16, *l)))
        .collect();
    let bars_x = inner.x + LABEL_W.min(inner.width / 3);
    let bars = Rect::new(
        bars_x,
        inner.y,
        inner.width.saturating_sub(bars_x - inner.x),
        lane_rows,
    );
    Parts {
        block,
        geom: LanesGeom { bars, rows, t0, t1 },
        hidden: lanes.len().saturating_sub(fit),
        axis: Rect::new(
            inner.x,
            inner.y + lane_rows,
            inner.width,
            1.min(inner.height),
        ),
        detail: Rect::new(
            inner.x,
            inner.y + lane_rows + 1,
            inner.width,
            detail_h.min(inner.height.saturating_sub(lane_rows + 1)),
        ),
        side,
        summary,
        log,
    }
}

/// Adds the timeline view's panes and lane geometry to `r`.
pub fn regions(r: &mut Regions, state: &State, ui: &Ui) {
    let p = layout(r.body, state, ui);
    r.panes.push((Pane::Lanes, p.block));
    r.panes.push((Pane::LogStrip, p.log));
    r.lanes = Some(p.geom);
}

/// Draws the timeline view into `r.body`: lanes, axis, detail line, side panels and log strip.
pub fn draw(f: &mut Frame, r: &Regions, state: &State, theme: &Theme, ui: &Ui) {
    let p = layout(r.body, state, ui);
    let focused = ui.focus == Pane::Lanes;
    let title = Line::from(vec![
        Span::raw(" Timeline "),
        Span::styled(
            format!("· {} window ", fmt::window(ui.zoom_len())),
            theme.dim(),
        ),
        match (ui.paused_at, &ui.replay) {
            (None, Some(r)) if r.playing => {
                Span::styled("· ▶ replay ", Style::default().fg(theme.accent))
            }
            (None, Some(_)) => Span::styled("· ⏸ replay paused ", Style::default().fg(theme.warn)),
            (None, None) => Span::styled("· ▶ live ", Style::default().fg(theme.ok)),
            (Some(at), _) => Span::styled(
                format!(
                    "· ⏸ paused, {} ago ",
                    fmt::nanos(state.now - at.min(state.now))
                ),
                Style::default().fg(theme.warn),
            ),
        },
    ]);
    f.render_widget(block(title, focused, theme), p.block);
    if p.hidden > 0 {
        let note = format!(" {} more lanes: ↑↓ ", p.hidden);
        let x = p.block.x
            + p.block
                .width
                .saturating_sub(note.chars().count() as u16 + 2);
        f.buffer_mut()
            .set_string(x, p.block.y + p.block.height - 1, note, theme.dim());
    }
    advisor_line(f.buffer_mut(), p.block, p.hidden > 0, state, theme, ui);
    let buf = f.buffer_mut();
    let selected_gap = selected_gap(state, ui);
    let cursor = ui.selected_lane(state);
    let mut i = 0;
    while i < p.geom.rows.len() {
        let (y, lane) = p.geom.rows[i];
        let h = p.geom.rows[i..].iter().take_while(|r| r.1 == lane).count();
        draw_label(
            buf,
            &p,
            y,
            lane,
            state,
            theme,
            cursor == Some(lane) && focused,
        );
        let (cells, labels) = lane_cells(&p.geom, lane, state, theme, selected_gap.as_ref());
        for k in 0..h as u16 {
            for (c, cell) in cells.iter().enumerate() {
                let out = &mut buf[(p.geom.bars.x + c as u16, y + k)];
                out.set_char(cell.glyph(h as u16 - 1 - k, h as u16))
                    .set_fg(cell.fg);
                if let Some(bg) = cell.bg {
                    out.set_bg(bg);
                }
            }
        }
        if h >= 2 {
            let row = y + (h as u16 - 1) / 2;
            for (c0, text, colour) in labels {
                buf.set_string(
                    p.geom.bars.x + c0,
                    row,
                    text,
                    Style::default().fg(theme.bg_or_black()).bg(colour),
                );
            }
        }
        i += h;
    }
    draw_axis(buf, &p.geom, p.axis, state, theme);
    let detail = detail_lines(
        state,
        theme,
        ui,
        &p.geom,
        selected_gap.as_ref(),
        p.detail.width,
    );
    Paragraph::new(detail)
        .style(theme.base())
        .render(p.detail, buf);
    if let Some(s) = p.summary {
        pipeline::summary(f, s, state, theme, false);
    }
    if let Some((d, s)) = p.side {
        metrics::summary(f, d, state, theme, ui);
        pipeline::summary(f, s, state, theme, true);
    }
    log::draw(f, p.log, state, theme, ui, false);
}

/// The advisor on the lanes' bottom border: the bottleneck and the first advice with its key,
/// cut to the width (left of the `more lanes` note when there is one).
fn advisor_line(buf: &mut Buffer, block: Rect, note: bool, state: &State, theme: &Theme, ui: &Ui) {
    let Some(v) = &state.verdict else {
        return;
    };
    let mut text = format!(" advisor: {}", v.bottleneck);
    if let Some(a) = v.advice.first() {
        text.push_str(&format!(
            " · {} {}: {} → {} ×{:.2}",
            ui.settings.keymap.key(Action::ApplyAdvice),
            a.knob,
            a.from,
            a.to,
            a.expected_gain
        ));
    }
    text.push(' ');
    let room = block.width.saturating_sub(if note { 24 } else { 4 }) as usize;
    let text: String = match text.chars().count() > room {
        true => text
            .chars()
            .take(room.saturating_sub(2))
            .chain(['…', ' '])
            .collect(),
        false => text,
    };
    if block.height >= 2 && room > 12 {
        buf.set_string(
            block.x + 1,
            block.y + block.height - 1,
            text,
            Style::default().fg(theme.accent),
        );
    }
}

/// The selected gap, whole, as it is now.
pub fn selected_gap(state: &State, ui: &Ui) -> Option<(usize, Gap)> {
    let sel = ui.gap?;
    let d = state.timelines.devices.get(sel.device)?;
    let g = d
        .gaps(sel.start, sel.start + 1, state.now)
        .into_iter()
        .find(|g| g.start <= sel.start && sel.start < g.end.max(g.start + 1))?;
    Some((sel.device, g))
}

#[allow(clippy::too_many_arguments)]
fn draw_label(
    buf: &mut Buffer,
    p: &Parts,
    y: u16,
    lane: LaneRef,
    state: &State,
    theme: &Theme,
    cursor: bool,
) {
    let (dev, name) = state.timelines.label(lane);
    let (t0, t1) = (p.geom.t0, p.geom.t1.min(state.now));
    let busy = match lane {
        LaneRef::Device(d, LaneKind::Compute) => {
            Some(state.timelines.devices[d].compute_busy(t0, t1, state.now))
        }
        _ => state
            .timelines
            .lane(lane)
            .filter(|_| t1 > t0)
            .map(|l| l.covered(t0, t1) as f64 / (t1 - t0) as f64),
    };
    let busy = match busy {
        Some(b) if b > 1.05 => format!("×{b:.1}"),
        Some(b) => fmt::pct(b),
        None => String::new(),
    };
    let text = match lane {
        LaneRef::Device(_, LaneKind::Compute) => format!("{dev} {name}"),
        LaneRef::Device(..) => format!("  {name}"),
        LaneRef::Pool(_) => name,
    };
    let w = (p.geom.bars.x - p.block.x - 1) as usize;
    let text = fmt::fit(&text, w.saturating_sub(busy.len() + 2));
    let pad = w.saturating_sub(text.chars().count() + busy.len() + 1);
    let style = if cursor {
        theme.selected().fg(theme.fg).add_modifier(Modifier::BOLD)
    } else if matches!(lane, LaneRef::Device(_, LaneKind::Compute)) {
        Style::default().fg(theme.fg)
    } else {
        theme.dim()
    };
    let line = Line::from(vec![
        Span::styled(text, style),
        Span::styled(" ".repeat(pad), style),
        Span::styled(busy, style.fg(theme.dim)),
        Span::raw(" "),
    ]);
    buf.set_line(p.block.x + 1, y, &line, w as u16);
}

/// A tick every `step`, chosen so labels have room.
fn tick_step(len: Nanos, width: u16) -> Nanos {
    const STEPS_MS: [u64; 13] = [
        100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
        600_000,
    ];
    let max_ticks = (width as u64 / 10).max(1);
    STEPS_MS
        .iter()
        .map(|ms| ms * 1_000_000)
        .find(|step| len / step <= max_ticks)
        .unwrap_or(600 * SECOND)
}

fn draw_axis(buf: &mut Buffer, g: &LanesGeom, axis: Rect, state: &State, theme: &Theme) {
    if axis.height == 0 || g.bars.width == 0 {
        return;
    }
    let y = axis.y;
    let w = g.bars.width;
    let dt = (g.t1 - g.t0) as f64 / w as f64;
    let col = |t: Nanos| -> Option<u16> {
        (t >= g.t0 && t < g.t1).then(|| (((t - g.t0) as f64 / dt) as u16).min(w - 1))
    };
    for x in g.bars.x..g.bars.x + w {
        buf[(x, y)].set_char('─').set_fg(theme.border);
    }
    let mut markers: Vec<(u16, char, Color)> = vec![];
    for c in state.config.history.iter().filter(|c| c.applied) {
        markers.extend(col(c.t).map(|x| (x, '◆', theme.config)));
    }
    for m in state.logs.marks.iter() {
        markers.extend(col(m.t).map(|x| (x, '▼', theme.mark)));
    }
    // Where a recording lost events, every column the hole covers, under the other markers.
    let mut holes = vec![];
    for h in state.holes.iter().filter(|h| h.to >= g.t0 && h.from < g.t1) {
        let a = col(h.from.max(g.t0)).unwrap_or(0);
        let b = col(h.to.min(g.t1.saturating_sub(1))).unwrap_or(w - 1);
        holes.extend((a..=b.max(a)).map(|x| (x, '╳', theme.error)));
    }
    holes.append(&mut markers);
    let markers = holes;
    let step = tick_step(g.t1 - g.t0, w);
    let fine = step < SECOND;
    let mut t = g.t0.div_ceil(step) * step;
    let mut free_from = 0;
    while t < g.t1 {
        if let Some(c) = col(t) {
            buf[(g.bars.x + c, y)].set_char('┴').set_fg(theme.border);
            let label = fmt::clock(t, fine);
            let (l0, l1) = (c + 1, c + 1 + label.len() as u16);
            let clear = !markers.iter().any(|(x, _, _)| (l0..l1).contains(x));
            if l0 >= free_from && l1 <= w && clear {
                buf.set_string(g.bars.x + l0, y, &label, theme.dim());
                free_from = l1 + 1;
            }
        }
        t += step;
    }
    for (x, ch, colour) in markers {
        buf[(g.bars.x + x, y)].set_char(ch).set_fg(colour);
    }
    let legend = "◆ config ▼ mark";
    if axis.width > g.bars.width + legend.len() as u16 {
        let x = axis.x;
        buf.set_string(x, y, "◆", Style::default().fg(theme.config));
        buf.set_string(x + 1, y, " config ", theme.dim());
        buf.set_string(x + 9, y, "▼", Style::default().fg(theme.mark));
        buf.set_string(x + 10, y, " mark", theme.dim());
    }
}

/// Gaps shorter than this are noise at the current zoom (under half a column, or 1 ms).
pub fn min_gap(g: &LanesGeom) -> Nanos {
    ((g.t1 - g.t0) / (2 * g.bars.width.max(1) as Nanos)).max(1_000_000)
}
