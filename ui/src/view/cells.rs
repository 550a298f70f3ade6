//! A lane's cells: in each column the stage that ran most of it, filled as far as the column
//! was busy (eighth blocks, stacked over the lane's rows), so a column 40 % busy reads unlike
//! one 99 % busy at every zoom; and the exact figures of the cell under the cursor.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use provetop_telemetry::{Nanos, Stage};

use super::fmt;
use super::timeline::LanesGeom;
use crate::state::ui::Ui;
use crate::state::{Gap, LaneKind, LaneRef, State};
use crate::theme::{Theme, ALL_STAGES};

/// Partial fills, an eighth to seven eighths of a row; a whole row is the stage's glyph.
const EIGHTHS: [char; 7] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇'];

/// One column of a lane.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cell {
    /// The fraction of the column that was busy, 0 to 1.
    pub busy: f32,
    /// The glyph of a whole row: the stage's, or the idle glyph of an idle column.
    pub full: char,
    pub idle: bool,
    pub fg: Color,
    pub bg: Option<Color>,
}

impl Cell {
    fn blank(theme: &Theme) -> Cell {
        Cell {
            busy: 0.0,
            full: ' ',
            idle: false,
            fg: theme.fg,
            bg: None,
        }
    }

    /// The glyph of row `row` (0 the bottom) of a lane `rows` tall: the rows fill from the
    /// bottom up, in eighths, and a busy column shows at least its bottom eighth.
    pub fn glyph(&self, row: u16, rows: u16) -> char {
        if self.idle {
            return self.full;
        }
        if self.busy <= 0.0 {
            return ' ';
        }
        let sub = (self.busy * rows as f32 - row as f32).clamp(0.0, 1.0);
        match (sub * 8.0).round() as usize {
            0 if row == 0 => EIGHTHS[0],
            0 => ' ',
            8.. => self.full,
            n => EIGHTHS[n - 1],
        }
    }
}

/// Text to write inside spans wide enough for it: (column, text, the span's colour).
pub(super) type Labels = Vec<(u16, String, Color)>;

fn stage_index(s: Stage) -> usize {
    ALL_STAGES.iter().position(|x| *x == s).unwrap_or(0)
}

/// Time per stage over `[t0, t1)` of a lane, in nanoseconds.
fn coverage(state: &State, lane: LaneRef, t0: Nanos, t1: Nanos) -> [Nanos; ALL_STAGES.len()] {
    let mut cov = [0; ALL_STAGES.len()];
    if let Some(tl) = state.timelines.lane(lane) {
        for s in tl.in_window(t0, t1) {
            cov[stage_index(s.stage)] += s.end.min(t1).saturating_sub(s.start.max(t0));
        }
    }
    cov
}

/// One lane's cells over the window; on a compute lane, idle columns drawn as such and the
/// selected gap highlighted.
pub(super) fn lane_cells(
    g: &LanesGeom,
    lane: LaneRef,
    state: &State,
    theme: &Theme,
    selected: Option<&(usize, Gap)>,
) -> (Vec<Cell>, Labels) {
    let w = g.bars.width as usize;
    let mut cells = vec![Cell::blank(theme); w];
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
            (_, Some(j)) if last_job != Some(j) => state.pipeline.label(j),
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
        // A compute lane fills by its compute time; a column only a non-compute stage
        // (staging) mostly covered shows that stage instead of idle.
        let busy = match is_compute_lane {
            true if compute[c] > 0.0 => compute[c],
            true if amount > 0.5 => total,
            true => 0.0,
            false => total,
        };
        let cell = &mut cells[c];
        if busy > 0.0 {
            cell.busy = busy.min(1.0);
            cell.full = theme.glyph(stage);
            cell.fg = theme.stage(stage);
        } else if is_compute_lane {
            cell.idle = true;
            cell.full = theme.idle_glyph;
            cell.fg = theme.gap;
        }
        if let Some((s, e)) = sel {
            if s < ct1 && e > ct0 {
                cell.fg = theme.bg_or_black();
                cell.bg = Some(theme.gap_selected);
            }
        }
    }
    // Labels stay where their span is the column's stage, and off the selected gap.
    labels.retain(|(c0, text, _)| {
        let r = *c0 as usize..(*c0 as usize + text.len()).min(w);
        r.clone().all(|c| cells[c].bg.is_none())
    });
    (cells, labels)
}

/// `gpu0 compute 2:20.10 → 2:20.20: 37.2% busy · msm_h 30.1% · ntt_h 7.1%`: the column under
/// the cursor (the last click or hover on the lanes) of the selected lane, exactly.
pub(super) fn cell_line<'a>(
    state: &State,
    theme: &Theme,
    ui: &Ui,
    g: &LanesGeom,
) -> Option<Line<'a>> {
    let t = ui
        .cell
        .filter(|t| *t >= g.t0 && *t < g.t1 && *t < state.now)?;
    let lane = ui.selected_lane(state)?;
    let w = g.bars.width.max(1) as f64;
    let dt = (g.t1 - g.t0) as f64 / w;
    let c = ((t - g.t0) as f64 / dt).floor();
    let ct0 = g.t0 + (c * dt) as Nanos;
    let ct1 = (g.t0 + ((c + 1.0) * dt) as Nanos).min(state.now);
    if ct1 <= ct0 {
        return None;
    }
    let cov = coverage(state, lane, ct0, ct1);
    let len = (ct1 - ct0) as f64;
    // A compute lane's busy time is its spans' union (they may overlap), as the label's.
    let busy = match lane {
        LaneRef::Device(d, LaneKind::Compute) => {
            state.timelines.devices[d].compute_busy(ct0, ct1, state.now)
        }
        _ => cov.iter().sum::<Nanos>() as f64 / len,
    };
    let mut stages: Vec<(Stage, Nanos)> = ALL_STAGES
        .iter()
        .zip(cov)
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| (*s, n))
        .collect();
    stages.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let (dev, name) = state.timelines.label(lane);
    let mut spans = vec![
        Span::styled(
            format!(
                " {dev} {name} {} → {}: ",
                fmt::clock(ct0, true),
                fmt::clock(ct1, true)
            ),
            Style::default().fg(theme.fg),
        ),
        Span::styled(
            format!("{:.1}% busy", busy * 100.0),
            Style::default().fg(theme.accent),
        ),
    ];
    for (s, n) in stages.iter().take(4) {
        spans.push(Span::styled(" · ", theme.dim()));
        spans.push(Span::styled(
            format!("{} {:.1}%", s.key(), *n as f64 / len * 100.0),
            Style::default().fg(theme.stage(*s)),
        ));
    }
    Some(Line::from(spans))
}
