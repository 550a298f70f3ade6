//! Keys: text entry first (a mark's label, a value being typed), then the bindings, read in
//! the light of the focused pane.

use provetop_telemetry::control::{Control, Transport};
use provetop_telemetry::Nanos;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{App, GapSel, Pane, Prompt, PromptKind, Row, View, PANES, ROWS, ZOOMS};
use crate::keys::Action;
use crate::view::timeline::min_gap;

pub(crate) fn key(app: &mut App, k: &KeyEvent) -> Vec<Control> {
    if k.kind == KeyEventKind::Release {
        return vec![];
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
        return vec![Control::Quit];
    }
    let action = app.ui.settings.keymap.action(k);
    if let Some(deadline) = app.ui.confirm_quit.take() {
        if action == Some(Action::Quit) && app.state.now <= deadline {
            return vec![Control::Quit];
        }
        app.ui.notify(app.state.now, "still running", false);
        return vec![];
    }
    if app.ui.prompt.is_some() {
        return prompt_key(app, k);
    }
    if app.ui.form.editing.is_some() {
        return edit_key(app, k);
    }
    let Some(action) = action else {
        return vec![];
    };
    if app.ui.help {
        match action {
            Action::Quit => return quit(app),
            _ => {
                app.ui.help = false;
                return vec![];
            }
        }
    }
    act(app, action)
}

/// Quits, but with jobs in flight on a live engine asks first: they would be dropped (a
/// server's jobs go on when its viewer leaves).
fn quit(app: &mut App) -> Vec<Control> {
    let open = app.state.pipeline.open_jobs().count();
    if open == 0 || app.ui.replay.is_some() || app.ui.remote.is_some() {
        return vec![Control::Quit];
    }
    let key = app.ui.settings.keymap.key(Action::Quit);
    let now = app.state.now;
    let msg = format!(
        "{open} job(s) in flight will be dropped: {key} again to quit, any other key to stay"
    );
    app.ui.notify(now, msg, true);
    app.ui.confirm_quit = app.ui.notice.as_ref().map(|n| n.until);
    vec![]
}

fn text_key(text: &mut String, k: &KeyEvent) {
    match k.code {
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => text.push(c),
        _ => {}
    }
}

fn prompt_key(app: &mut App, k: &KeyEvent) -> Vec<Control> {
    match k.code {
        KeyCode::Esc => app.ui.prompt = None,
        KeyCode::Enter => {
            let Some(p) = app.ui.prompt.take() else {
                return vec![];
            };
            let text = p.text;
            if p.kind == PromptKind::Seek {
                return match parse_time(&text) {
                    Some(t) => vec![Control::Replay(Transport::SeekTo(t))],
                    None => {
                        let msg = format!(
                            "`{}`: a time is 1:30, 1:02:03, 90s, 2.5m or 1h",
                            text.trim()
                        );
                        app.ui.notify(app.state.now, msg, true);
                        vec![]
                    }
                };
            }
            let label = if text.trim().is_empty() {
                format!("mark {}", app.state.logs.marks.len() + 1)
            } else {
                text.trim().to_string()
            };
            return vec![Control::Mark { label }];
        }
        _ => {
            if let Some(p) = app.ui.prompt.as_mut() {
                text_key(&mut p.text, k);
            }
        }
    }
    vec![]
}

fn edit_key(app: &mut App, k: &KeyEvent) -> Vec<Control> {
    match k.code {
        KeyCode::Esc => app.ui.form.editing = None,
        KeyCode::Enter => {
            let text = app.ui.form.editing.take().unwrap_or_default();
            if let Row::Engine(key) = app.ui.form.current_row() {
                let cfg = app.state.config.current.clone();
                app.ui.form.set_pending(key, text.trim().to_string(), &cfg);
            }
            return apply(app);
        }
        _ => {
            if let Some(t) = app.ui.form.editing.as_mut() {
                text_key(t, k);
            }
        }
    }
    vec![]
}

/// A session time as typed: `1:30`, `1:02:03`, `90`, `90s`, `2.5m`, `1h`.
pub fn parse_time(s: &str) -> Option<Nanos> {
    let s = s.trim();
    let secs = if s.contains(':') {
        let mut total = 0.0;
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() > 3 {
            return None;
        }
        for (i, p) in parts.iter().enumerate() {
            let v: f64 = p.parse().ok()?;
            // Every part but the last is a whole number; minutes and seconds below 60.
            if v.is_nan()
                || v < 0.0
                || (i + 1 < parts.len() && v.fract() != 0.0)
                || (i > 0 && v >= 60.0)
            {
                return None;
            }
            total = total * 60.0 + v;
        }
        total
    } else {
        let (num, unit) = match s.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
            Some((i, _)) => (&s[..i], &s[i..]),
            None => (s, "s"),
        };
        let v: f64 = num.trim().parse().ok()?;
        let scale = match unit.trim() {
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "ms" => 1e-3,
            _ => return None,
        };
        if v.is_nan() || v < 0.0 {
            return None;
        }
        v * scale
    };
    (secs.is_finite() && secs < 1e9).then_some((secs * 1e9) as Nanos)
}

/// Replays are read-only: what a live session would send is refused with a word.
fn read_only(app: &mut App, what: &str) -> bool {
    if app.ui.replay.is_some() {
        let msg = format!("a replay is read-only: it cannot {what}");
        app.ui.notify(app.state.now, msg, true);
        return true;
    }
    false
}

/// Transport keys outside a replay say where they work.
fn replay_only(app: &mut App) -> bool {
    if app.ui.replay.is_none() {
        let msg = "transport keys work in a replay: provetop replay FILE";
        app.ui.notify(app.state.now, msg, true);
        return true;
    }
    false
}

fn speed_step(app: &mut App, up: bool) -> Vec<Control> {
    let Some(r) = &app.ui.replay else {
        return vec![];
    };
    let s = if up { r.speed * 2.0 } else { r.speed / 2.0 };
    vec![Control::Replay(Transport::Speed(s.clamp(0.25, 64.0)))]
}

fn record(app: &mut App) -> Vec<Control> {
    if app.ui.replay.is_some() {
        let msg = "this is a replay: record a live session (R there, or --record FILE)";
        app.ui.notify(app.state.now, msg, true);
        return vec![];
    }
    if app.ui.recording.is_some() {
        return vec![Control::Record { path: None }];
    }
    let unix = app.state.session.started_unix + app.state.now as f64 / 1e9;
    let name = provetop_telemetry::record::default_file_name(unix);
    vec![Control::Record {
        path: Some(name.into()),
    }]
}

/// Sends the advisor's first recommendation through the same path as the settings form; the
/// log shows the change when the engine applies it (or its refusal).
fn apply_advice(app: &mut App) -> Vec<Control> {
    let now = app.state.now;
    let Some(a) = app
        .state
        .verdict
        .as_ref()
        .and_then(|v| v.advice.first())
        .cloned()
    else {
        app.ui
            .notify(now, "advisor: nothing to apply (no advice yet)", false);
        return vec![];
    };
    if a.knob == provetop_telemetry::advice::CONCURRENCY {
        let key = app.ui.settings.keymap.key(Action::Submit);
        let msg = format!(
            "advisor: keep {} jobs in flight (now {}): submit more with {key}, or --concurrency {}",
            a.to, a.from, a.to
        );
        app.ui.notify(now, msg, false);
        return vec![];
    }
    let msg = format!(
        "advisor: applying {}={} (expected ×{:.2})",
        a.knob, a.to, a.expected_gain
    );
    app.ui.notify(now, msg, false);
    vec![Control::Reconfigure {
        changes: vec![(a.knob, a.to)],
    }]
}

/// Sends the pending engine changes as one set.
fn apply(app: &mut App) -> Vec<Control> {
    if read_only(app, "change settings") {
        app.ui.form.pending.clear();
        return vec![];
    }
    let changes = app.ui.form.take_changes();
    if changes.is_empty() {
        return vec![];
    }
    let what = changes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    app.ui
        .notify(app.state.now, format!("applying {what}"), false);
    vec![Control::Reconfigure { changes }]
}

fn act(app: &mut App, action: Action) -> Vec<Control> {
    let refused = match action {
        Action::Submit => read_only(app, "submit jobs"),
        Action::CancelJob => read_only(app, "cancel jobs"),
        Action::Mark => read_only(app, "add marks"),
        Action::ApplyAdvice => read_only(app, "apply advice"),
        Action::SaveEngine => read_only(app, "save engine settings"),
        _ => false,
    };
    if refused {
        return vec![];
    }
    if action == Action::ApplyAdvice {
        return apply_advice(app);
    }
    let ui = &mut app.ui;
    match action {
        Action::Quit => return quit(app),
        Action::Help => ui.help = true,
        Action::Pause => {
            if let Some(r) = &ui.replay {
                let t = if r.playing {
                    Transport::Pause
                } else {
                    Transport::Play
                };
                return vec![Control::Replay(t)];
            }
            ui.paused_at = match ui.paused_at {
                Some(_) => None,
                None => Some(app.state.now),
            }
        }
        Action::Live => {
            ui.paused_at = None;
            ui.gap = None;
            ui.cell = None;
        }
        Action::FocusNext | Action::FocusPrev => {
            let i = PANES.iter().position(|p| *p == ui.focus).unwrap_or(0) as i64;
            let d = if action == Action::FocusNext { 1 } else { -1 };
            ui.focus = PANES[(i + d).rem_euclid(PANES.len() as i64) as usize];
        }
        Action::ViewTimeline => go(app, View::Timeline),
        Action::ViewPipeline => go(app, View::Pipeline),
        Action::ViewMetrics => go(app, View::Metrics),
        Action::ViewSettings => go(app, View::Settings),
        Action::ViewLog => go(app, View::Log),
        Action::ZoomIn => ui.zoom = ui.zoom.saturating_sub(1),
        Action::ZoomOut => ui.zoom = (ui.zoom + 1).min(ZOOMS.len() - 1),
        Action::PrevGap => step_gap(app, -1),
        Action::NextGap => step_gap(app, 1),
        Action::Submit => {
            let partitions = ui.partitions;
            ui.notify(app.state.now, "submitted a job", false);
            return vec![Control::Submit { partitions }];
        }
        Action::CancelJob => return cancel(app),
        Action::Mark => ui.prompt = Some(Prompt::default()),
        Action::ApplyAdvice => {}
        Action::Theme => {
            let names = crate::theme::names();
            let i = names.iter().position(|n| *n == ui.theme_name);
            let next = names[i.map_or(0, |i| (i + 1) % names.len())];
            app.set_theme(next);
            if app.ui.theme_name == next {
                let msg = format!(
                    "theme {next} ({} saves it)",
                    app.ui.settings.keymap.key(Action::Save)
                );
                app.ui.notify(app.state.now, msg, false);
            }
        }
        Action::Save => save(app),
        Action::SaveEngine => save_engine(app),
        Action::Record => return record(app),
        Action::Slower | Action::Faster if !replay_only(app) => {
            return speed_step(app, action == Action::Faster)
        }
        Action::Seek if !replay_only(app) => {
            app.ui.prompt = Some(Prompt {
                text: String::new(),
                kind: PromptKind::Seek,
            })
        }
        Action::NextMark if !replay_only(app) => return vec![Control::Replay(Transport::NextMark)],
        Action::NextConfig if !replay_only(app) => {
            return vec![Control::Replay(Transport::NextConfig)]
        }
        Action::Slower | Action::Faster | Action::Seek | Action::NextMark | Action::NextConfig => {}
        Action::Left
        | Action::Right
        | Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown => return motion(app, action),
        Action::Enter => return enter(app),
        Action::Back => back(app),
    }
    vec![]
}

fn go(app: &mut App, v: View) {
    if app.ui.view() != v {
        app.ui.focus = v.first_pane();
    }
}

pub(super) fn save(app: &mut App) {
    let result = match &app.ui.config_path {
        None => Err("nowhere to save: give --config FILE, or set HOME".to_string()),
        Some(p) => app
            .ui
            .settings
            .save(p)
            .map(|_| format!("saved [ui] to {}", p.display())),
    };
    match &result {
        Ok(m) => app.ui.notify(app.state.now, m.clone(), false),
        Err(e) => app.report(e),
    }
    app.ui.form.saved = Some(result);
}

/// Writes the `[engine]` values changed from the dashboard into the config file, and only
/// those, so the next start begins where this session ended.
fn save_engine(app: &mut App) {
    let changed = &app.state.config.changed_by_ui;
    let result = match (&app.ui.config_path, changed.is_empty()) {
        (_, true) => Err("no [engine] value changed from the dashboard to save".to_string()),
        (None, _) => Err("nowhere to save: give --config FILE, or set HOME".to_string()),
        (Some(p), _) => crate::config_edit::save_engine(p, changed).map(|_| {
            let keys: Vec<String> = changed.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("saved [engine] {} to {}", keys.join(", "), p.display())
        }),
    };
    match result {
        Ok(m) => app.ui.notify(app.state.now, m, false),
        Err(e) => app.report(&e),
    }
}

fn cancel(app: &mut App) -> Vec<Control> {
    let p = &app.state.pipeline;
    let target = match app.ui.job.and_then(|j| p.jobs.get(&j)) {
        Some(j) if j.is_open() => Some(j.job),
        Some(j) => {
            let msg = format!("job {} has already ended", j.job);
            app.ui.notify(app.state.now, msg, true);
            return vec![];
        }
        None => p.open_jobs().next().map(|j| j.job),
    };
    match target {
        Some(job) => {
            app.ui
                .notify(app.state.now, format!("cancelling job {job}"), false);
            vec![Control::Cancel { job }]
        }
        None => {
            app.ui.notify(app.state.now, "no open job to cancel", true);
            vec![]
        }
    }
}

fn motion(app: &mut App, a: Action) -> Vec<Control> {
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

fn enter(app: &mut App) -> Vec<Control> {
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

fn back(app: &mut App) {
    let ui = &mut app.ui;
    match ui.focus {
        Pane::Form if !ui.form.pending.is_empty() => ui.form.pending.clear(),
        Pane::Lanes if ui.gap.is_some() || ui.cell.is_some() => {
            ui.gap = None;
            ui.cell = None;
        }
        Pane::Lanes if ui.paused_at.is_some() => ui.paused_at = None,
        Pane::Jobs => ui.job = None,
        _ => {}
    }
}

/// Selects the previous or next idle gap of the device under the lane cursor, scrolling the
/// window (and pausing) when the gap lies outside it.
fn step_gap(app: &mut App, dir: i64) {
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
