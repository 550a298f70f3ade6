//! The timeline view: a row per lane (each device's compute stream, copy engines and
//! workers, then the CPU pools) over a window of 1 s to 10 min, spans coloured by stage,
//! idle gaps on compute lanes drawn as such, the selected gap highlighted and described.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use ratatui::Frame;

use provetop_telemetry::{Nanos, Stage};

use super::widgets::block;
use super::{fmt, log, metrics, pipeline, Regions, WIDE};
use crate::app::{Pane, Ui, SECOND};
use crate::keys::Action;
use crate::state::{Gap, LaneKind, LaneRef, State};
use crate::theme::{Theme, ALL_STAGES};

const LABEL_W: u16 = 18;
/// Rows under the lanes inside the block: the gap line and the legend.
const DETAIL_H: u16 = 2;

/// Where the lanes are drawn: rows, the bars' columns, and the window they span.
#[derive(Clone, Debug, PartialEq)]
pub struct LanesGeom {
    pub bars: Rect,
    pub rows: Vec<(u16, LaneRef)>,
    pub t0: Nanos,
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
    let wide = body.width >= WIDE;
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
    // The lanes take what they need (two rows each at most); the log gets the rest.
    let want = state.timelines.lanes().len() as u16 * 2 + 1 + DETAIL_H + 2;
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
    let lane_rows = inner.height.saturating_sub(1 + DETAIL_H);
    let lanes = state.timelines.lanes();
    // Room to spare makes lanes taller (two rows), with stage names inside spans.
    let h = (lane_rows as usize / lanes.len().max(1)).clamp(1, 2);
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
    let (t0, t1) = ui.window(state.now);
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
            DETAIL_H.min(inner.height.saturating_sub(lane_rows + 1)),
        ),
        side,
        summary,
        log,
    }
}

pub fn regions(r: &mut Regions, state: &State, ui: &Ui) {
    let p = layout(r.body, state, ui);
    r.panes.push((Pane::Lanes, p.block));
    r.panes.push((Pane::LogStrip, p.log));
    r.lanes = Some(p.geom);
}

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
            (Some(_), _) => Span::styled(
                format!("· ⏸ paused, {} ago ", fmt::nanos(state.now - p.geom.t1)),
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
    let buf = f.buffer_mut();
    let selected_gap = selected_gap(state, ui);
    let cursor = ui.selected_lane(state);
    let mut seen = [false; ALL_STAGES.len()];
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
        let (cells, labels) = lane_cells(
            &p.geom,
            lane,
            state,
            theme,
            selected_gap.as_ref(),
            &mut seen,
        );
        for k in 0..h as u16 {
            for (c, (ch, fg, bg)) in cells.iter().enumerate() {
                let cell = &mut buf[(p.geom.bars.x + c as u16, y + k)];
                cell.set_char(*ch).set_fg(*fg);
                if let Some(bg) = bg {
                    cell.set_bg(*bg);
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
    let detail = detail_lines(state, theme, ui, &p.geom, selected_gap.as_ref(), &seen);
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

fn stage_index(s: Stage) -> usize {
    ALL_STAGES.iter().position(|x| *x == s).unwrap_or(0)
}

type Cells = Vec<(char, Color, Option<Color>)>;
/// Text to write inside spans wide enough for it: (column, text, the span's colour).
type Labels = Vec<(u16, String, Color)>;

/// One lane's cells over the window: in each column the stage that ran most of it; on a
/// compute lane, idle columns drawn as such and the selected gap highlighted.
fn lane_cells(
    g: &LanesGeom,
    lane: LaneRef,
    state: &State,
    theme: &Theme,
    selected: Option<&(usize, Gap)>,
    seen: &mut [bool; ALL_STAGES.len()],
) -> (Cells, Labels) {
    let w = g.bars.width as usize;
    let mut cells: Cells = vec![(' ', theme.fg, None); w];
    let mut labels = vec![];
    let Some(tl) = state.timelines.lane(lane).filter(|_| w > 0) else {
        return (cells, labels);
    };
    let dt = (g.t1 - g.t0) as f64 / w as f64;
    // Time per stage in each column, in columns (1.0 = the whole column).
    let mut cov = vec![[0f32; ALL_STAGES.len()]; w];
    let mut compute = vec![0f32; w];
    let is_compute_lane = matches!(lane, LaneRef::Device(_, LaneKind::Compute));
    let mut last_job = None;
    for s in tl.in_window(g.t0, g.t1) {
        let a = (s.start.max(g.t0) - g.t0) as f64 / dt;
        let b = (s.end.min(g.t1) - g.t0) as f64 / dt;
        let si = stage_index(s.stage);
        seen[si] = true;
        let (c0, c1) = (a.floor() as usize, (b.ceil() as usize).min(w));
        for c in c0.min(w)..c1 {
            let o = (b.min(c as f64 + 1.0) - a.max(c as f64)).max(0.0) as f32;
            cov[c][si] += o;
            if is_compute_lane && s.stage.is_compute() {
                compute[c] += o;
            }
        }
        // Compute lanes name the stage; other lanes name the job, once per run of its spans.
        let text = match (lane, s.job) {
            (LaneRef::Device(_, LaneKind::Compute), _) => s.stage.key().to_string(),
            (_, Some(j)) if last_job != Some(j) => format!("#{j}"),
            _ => String::new(),
        };
        if s.job.is_some() {
            last_job = s.job;
        }
        let (first, last) = (a.ceil() as usize, b.floor() as usize);
        let room = last.saturating_sub(first);
        let free = labels
            .last()
            .is_none_or(|(c, t, _): &(u16, String, Color)| (*c as usize + t.len()) < first);
        if !text.is_empty() && room >= text.len() + 2 && free {
            let at = first + (room - text.len()) / 2;
            labels.push((at as u16, text, theme.stage(s.stage)));
        }
    }
    let since = match lane {
        LaneRef::Device(d, _) => state.timelines.devices[d].since,
        LaneRef::Pool(_) => 0,
    };
    let sel = selected.and_then(|(d, gap)| {
        (lane == LaneRef::Device(*d, LaneKind::Compute)).then_some((gap.start, gap.end))
    });
    for (c, col) in cov.iter().enumerate() {
        let ct0 = g.t0 + (c as f64 * dt) as Nanos;
        let ct1 = g.t0 + ((c + 1) as f64 * dt) as Nanos;
        if ct0 >= state.now || ct1 <= since {
            continue;
        }
        let (best, amount) =
            col.iter().enumerate().fold(
                (0, 0f32),
                |acc, (i, v)| if *v > acc.1 { (i, *v) } else { acc },
            );
        let total: f32 = col.iter().sum();
        let stage = ALL_STAGES[best];
        cells[c] = if total > 0.5 && (!is_compute_lane || compute[c] > 0.0 || amount > 0.5) {
            (theme.glyph(stage), theme.stage(stage), None)
        } else if total > 0.0 && (!is_compute_lane || compute[c] > 0.0) {
            ('▄', theme.stage(stage), None)
        } else if is_compute_lane {
            (theme.idle_glyph, theme.gap, None)
        } else {
            (' ', theme.fg, None)
        };
        if let Some((s, e)) = sel {
            if s < ct1 && e > ct0 {
                cells[c].1 = theme.bg_or_black();
                cells[c].2 = Some(theme.gap_selected);
            }
        }
    }
    // Labels stay where their span is the column's stage, and off the selected gap.
    labels.retain(|(c0, text, _)| {
        let r = *c0 as usize..(*c0 as usize + text.len()).min(w);
        r.clone().all(|c| cells[c].2.is_none())
    });
    (cells, labels)
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

fn detail_lines<'a>(
    state: &State,
    theme: &Theme,
    ui: &Ui,
    g: &LanesGeom,
    selected: Option<&(usize, Gap)>,
    seen: &[bool; ALL_STAGES.len()],
) -> Vec<Line<'a>> {
    let mut lines = vec![];
    let gap_keys = format!(
        "{}{}",
        ui.settings.keymap.key(Action::PrevGap),
        ui.settings.keymap.key(Action::NextGap)
    );
    if let Some((d, gap)) = selected {
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
        lines.push(Line::from(vec![
            Span::styled(
                format!(" gap on {id}: "),
                Style::default()
                    .fg(theme.gap_selected)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("{} idle, {when}", fmt::nanos(gap.len())),
                Style::default().fg(theme.fg),
            ),
            Span::styled(" · ", theme.dim()),
            Span::styled(
                cause_text(state, *d, gap),
                Style::default().fg(theme.fg).add_modifier(Modifier::BOLD),
            ),
        ]));
    } else if let Some(d) = ui.selected_device(state) {
        let dev = &state.timelines.devices[d];
        let idle = dev.idle(g.t0, g.t1, state.now, min_gap(g));
        let mut spans = vec![
            Span::styled(format!(" {}: ", dev.id), Style::default().fg(theme.fg)),
            Span::styled(
                format!(
                    "compute busy {} of the window · {} gaps",
                    fmt::pct(idle.busy()),
                    idle.gaps
                ),
                Style::default().fg(theme.fg),
            ),
        ];
        if let Some((start, len)) = idle.longest {
            spans.push(Span::styled(
                format!(
                    ", longest {} at {}",
                    fmt::nanos(len),
                    fmt::clock(start, true)
                ),
                Style::default().fg(theme.fg),
            ));
        }
        spans.push(Span::styled(format!(" · {gap_keys} gaps"), theme.dim()));
        lines.push(Line::from(spans));
    }
    let mut legend = vec![
        Span::raw(" "),
        Span::styled(theme.idle_glyph.to_string(), Style::default().fg(theme.gap)),
        Span::styled(" idle  ", theme.dim()),
    ];
    let width = g.bars.x as usize + g.bars.width as usize;
    let mut used = 8;
    for s in ALL_STAGES
        .iter()
        .zip(seen)
        .filter(|(_, on)| **on)
        .map(|(s, _)| s)
    {
        let text = format!(" {}  ", s.key());
        used += 1 + text.len();
        if used > width {
            break;
        }
        legend.push(Span::styled(
            theme.glyph(*s).to_string(),
            Style::default().fg(theme.stage(*s)),
        ));
        legend.push(Span::styled(text, theme.dim()));
    }
    lines.push(Line::from(legend));
    lines
}

/// `waiting for synthesis 80% · lock held by worker 1 20%`, or why there is no cause.
fn cause_text(state: &State, d: usize, gap: &Gap) -> String {
    let causes = state.gap_causes(d, gap.start, gap.end);
    // The largest cause says why it happened where the analyser knows (gap_detail).
    let why =
        |g: &crate::state::GapShare| g.why.as_ref().map_or(String::new(), |w| format!(" ({w})"));
    match causes.as_slice() {
        [] => "cause not reported".into(),
        [g] => format!("{}{}", g.cause, why(g)),
        many => many
            .iter()
            .take(3)
            .enumerate()
            .map(|(i, g)| {
                let w = if i == 0 { why(g) } else { String::new() };
                format!("{} {}{w}", g.cause, fmt::pct(g.share))
            })
            .collect::<Vec<_>>()
            .join(" · "),
    }
}

/// Gaps shorter than this are noise at the current zoom (under half a column, or 1 ms).
pub fn min_gap(g: &LanesGeom) -> Nanos {
    ((g.t1 - g.t0) / (2 * g.bars.width.max(1) as Nanos)).max(1_000_000)
}
