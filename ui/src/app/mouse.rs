//! Mouse: a click focuses the pane under it and selects the tab, lane, gap, job or setting
//! there; the wheel zooms over the timeline and scrolls elsewhere.

use ratatui::crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::{App, GapSel, Pane, View};
use crate::keys::Action;
use crate::state::{LaneKind, LaneRef};

pub(super) fn mouse(app: &mut App, m: &MouseEvent) {
    let area = Rect::new(0, 0, app.ui.size.0, app.ui.size.1);
    if crate::view::too_small(area) {
        return;
    }
    if app.ui.help {
        if matches!(m.kind, MouseEventKind::Down(_)) {
            app.ui.help = false;
        }
        return;
    }
    let r = crate::view::regions(area, &app.state, &app.ui);
    let at = Position::new(m.column, m.row);
    let pane = r
        .panes
        .iter()
        .find(|(_, a)| a.contains(at))
        .map(|(p, _)| *p);
    match m.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            if r.tabs.contains(at) {
                if let Some((v, _, _)) = r
                    .tab_hits
                    .iter()
                    .find(|(_, x0, x1)| (*x0..*x1).contains(&m.column))
                {
                    if app.ui.view() != *v {
                        app.ui.focus = v.first_pane();
                    }
                }
                return;
            }
            if let Some(p) = pane {
                app.ui.focus = p;
            }
            click(app, &r, at);
        }
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let up = m.kind == MouseEventKind::ScrollUp;
            let action = match pane {
                Some(Pane::Lanes) => {
                    if up {
                        Action::ZoomIn
                    } else {
                        Action::ZoomOut
                    }
                }
                _ => {
                    if up {
                        Action::Up
                    } else {
                        Action::Down
                    }
                }
            };
            if let Some(p) = pane {
                app.ui.focus = p;
            }
            if app.ui.view() == View::Timeline || pane.is_some() {
                let _ = super::input::key(
                    app,
                    &ratatui::crossterm::event::KeyEvent::from(first_key(app, action)),
                );
            }
        }
        MouseEventKind::Moved => {
            app.ui.cell = r
                .lanes
                .as_ref()
                .filter(|g| g.rows.iter().any(|(y, _)| *y == at.y))
                .and_then(|g| g.time_at(at.x));
        }
        _ => {}
    }
}

/// The key an action is bound to, so the wheel goes through the same path as the keyboard.
fn first_key(app: &App, a: Action) -> ratatui::crossterm::event::KeyCode {
    use ratatui::crossterm::event::KeyCode;
    let name = app.ui.settings.keymap.key(a);
    match crate::keys::Key::parse(match name.as_str() {
        "↑" => "up",
        "↓" => "down",
        "←" => "left",
        "→" => "right",
        "pgup" => "pageup",
        "pgdn" => "pagedown",
        "shift-tab" => "backtab",
        n => n,
    }) {
        Ok(k) => k.code,
        Err(_) => KeyCode::Null,
    }
}

fn click(app: &mut App, r: &crate::view::Regions, at: Position) {
    if let Some(g) = r.lanes.as_ref() {
        if let Some(&(_, lane)) = g.rows.iter().find(|(y, _)| *y == at.y) {
            let lanes = app.state.timelines.lanes();
            if let Some(i) = lanes.iter().position(|l| *l == lane) {
                app.ui.lane = i;
            }
            app.ui.cell = g.time_at(at.x);
            if let (LaneRef::Device(d, LaneKind::Compute), Some(t)) = (lane, g.time_at(at.x)) {
                let dev = &app.state.timelines.devices[d];
                app.ui.gap = dev
                    .gaps(t, t + 1, app.state.now)
                    .into_iter()
                    .find(|gap| gap.start <= t && t < gap.end)
                    .map(|gap| GapSel {
                        device: d,
                        start: gap.start,
                    });
            }
            return;
        }
    }
    if let Some(j) = r.jobs.as_ref() {
        if let Some(&(_, idx)) = j.rows.iter().find(|(y, _)| *y == at.y) {
            app.ui.job = app.state.pipeline.table().get(idx).map(|j| j.job);
            return;
        }
    }
    if let Some(f) = r.form.as_ref() {
        if let Some(&(_, idx)) = f.rows.iter().find(|(y, _)| *y == at.y) {
            if app.ui.form.row != idx {
                app.ui.form.editing = None;
            }
            app.ui.form.row = idx;
        }
    }
}
