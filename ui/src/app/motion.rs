//! Moving in the focused pane: arrows and pages through lanes, jobs, rows and history, enter
//! and back, and stepping from one idle gap to the next.

use provetop_telemetry::control::Control;

use super::input::{apply, save};
use super::{App, GapSel, Pane, Row, ROWS};
use crate::keys::Action;
use crate::view::timeline::min_gap;

pub(super) fn motion(app: &mut App, a: Action) -> Vec<Control> {
    let now = app.state.now;
    let ui = &mut app.ui;
    let dir: i64 = match a {
        Action::Left | Action::Up | Action::PageUp => -1,
        _ => 1,
    };
    let page = matches!(a, Action::PageUp | Action::PageDown);
    let vertical = matches!(a, Action::Up | Action::Down) || page;
    match ui.focus {
        Pane::Lanes if !vertical || page => {
            // Scroll back pauses; a tenth of the window a step, a whole window a page.
            let len = ui.zoom_len();
            let step = if page { len } else { len / 10 };
            // Back never moves the paused point later: in the first window, where the
            // window cannot start before 0, it stays where it was.
            let at = ui.paused_point(now).unwrap_or(now);
            let (_, end) = ui.window(now);
            ui.paused_at = Some(if dir < 0 {
                end.saturating_sub(step).max(len.min(now)).min(at)
            } else {
                (end + step).min(now)
            });
        }
        Pane::Lanes => {
            let n = app.state.timelines.lanes().len();
            ui.lane = step(ui.lane.min(n.saturating_sub(1)), dir, n);
        }
        Pane::Jobs if vertical => {
            let table: Vec<u64> = app.state.pipeline.table().iter().map(|j| j.job).collect();
            let i = ui.job.and_then(|j| table.iter().position(|x| *x == j));
            let n = if page { 10 } else { 1 };
            let next = match i {
                None => 0,
                Some(i) => (0..n).fold(i, |i, _| step(i, dir, table.len())),
            };
            ui.job = table.get(next).copied();
        }
        Pane::Form if vertical => {
            let n = if page { 5 } else { 1 };
            ui.form.row = (0..n).fold(ui.form.row, |i, _| step(i, dir, ROWS.len()));
        }
        Pane::Form => {
            let cfg = app.state.config.current.clone();
            match ui.form.current_row() {
                Row::Engine(key) => ui.form.step(key, dir, &cfg),
                Row::Theme => {
                    let names = crate::theme::names();
                    let i = names.iter().position(|n| *n == ui.theme_name).unwrap_or(0) as i64;
                    let next = names[(i + dir).rem_euclid(names.len() as i64) as usize];
                    app.set_theme(next);
                }
                Row::Refresh => {
                    let (lo, hi) = crate::settings::REFRESH_HZ;
                    ui.settings.refresh_hz =
                        (ui.settings.refresh_hz.round() + dir as f64).clamp(lo, hi);
                }
                Row::Save => {}
            }
        }
        Pane::LogStrip | Pane::LogLines if vertical => {
            let n = if page { 10 } else { 1 };
            ui.log_scroll = if dir < 0 {
                ui.log_scroll + n
            } else {
                ui.log_scroll.saturating_sub(n)
            };
        }
        Pane::History if vertical => {
            ui.history_scroll = if dir < 0 {
                ui.history_scroll + 1
            } else {
                ui.history_scroll.saturating_sub(1)
            };
        }
        Pane::Devices if vertical => {
            ui.device_scroll = if dir < 0 {
                ui.device_scroll.saturating_sub(1)
            } else {
                (ui.device_scroll + 1).min(app.state.timelines.devices.len())
            };
        }
        _ => {}
    }
    vec![]
}

fn step(i: usize, dir: i64, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    (i as i64 + dir).clamp(0, n as i64 - 1) as usize
}

pub(super) fn enter(app: &mut App) -> Vec<Control> {
    if app.ui.focus != Pane::Form {
        return vec![];
    }
    match app.ui.form.current_row() {
        Row::Save => {
            save(app);
            vec![]
        }
        Row::Engine(key) if app.ui.form.pending.is_empty() => {
            if super::field_kind(key) != super::FieldKind::Startup {
                app.ui.form.editing = Some(String::new());
            } else {
                app.ui.notify(
                    app.state.now,
                    format!("{key} is fixed while the engine runs"),
                    true,
                );
            }
            vec![]
        }
        _ => apply(app),
    }
}

/// Cancels what the focused pane holds (pending edits, a selection, a pause); false when it
/// held nothing to cancel.
pub(super) fn back(app: &mut App) -> bool {
    let ui = &mut app.ui;
    match ui.focus {
        Pane::Form if !ui.form.pending.is_empty() => ui.form.pending.clear(),
        Pane::Lanes if ui.gap.is_some() || ui.cell.is_some() => {
            ui.gap = None;
            ui.cell = None;
        }
        Pane::Lanes if ui.paused_at.is_some() => ui.paused_at = None,
        Pane::Jobs if ui.job.is_some() => ui.job = None,
        _ => return false,
    }
    true
}

/// Selects the previous or next idle gap of the device under the lane cursor, scrolling the
/// window (and pausing) when the gap lies outside it.
pub(super) fn step_gap(app: &mut App, dir: i64) {
    let state = &app.state;
    let ui = &mut app.ui;
    let Some(dev) = ui.selected_device(state) else {
        return;
    };
    let d = &state.timelines.devices[dev];
    let (t0, t1) = ui.window(state.now);
    let geom = crate::view::timeline::LanesGeom {
        bars: ratatui::layout::Rect::new(0, 0, ui.size.0.saturating_sub(20).max(40), 1),
        rows: vec![],
        t0,
        t1,
    };
    let min = min_gap(&geom);
    // A selection the playhead has left (a seek, `end`, a scroll) no longer anchors the step:
    // it starts from the window instead.
    let sel = ui
        .gap
        .filter(|g| g.device == dev && g.start >= t0 && g.start < t1);
    let earliest = state.now.saturating_sub(state.history);
    let found = match (sel, dir > 0) {
        (None, true) => d
            .gaps(t0, state.now, state.now)
            .into_iter()
            .find(|g| g.start >= t0 && g.len() >= min),
        (None, false) => d
            .gaps(earliest, t1.min(state.now), state.now)
            .into_iter()
            .rfind(|g| g.start < t1 && g.len() >= min),
        (Some(s), true) => d
            .gaps(s.start + 1, state.now, state.now)
            .into_iter()
            .find(|g| g.start > s.start && g.len() >= min),
        (Some(s), false) => d
            .gaps(earliest, s.start, state.now)
            .into_iter()
            .rfind(|g| g.start < s.start && g.len() >= min),
    };
    let Some(g) = found else {
        ui.notify(state.now, "no further gap at this zoom", false);
        return;
    };
    ui.gap = Some(GapSel {
        device: dev,
        start: g.start,
    });
    if g.start < t0 || g.start >= t1 {
        let len = ui.zoom_len();
        let centre = g.start + g.len().min(len) / 2;
        ui.paused_at = Some((centre + len / 2).clamp(len.min(state.now), state.now));
    }
}
