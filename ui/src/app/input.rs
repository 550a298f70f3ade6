//! Keys: text entry first (a mark's label, a value being typed), then the bindings, read in
//! the light of the focused pane.

use provetop_telemetry::control::{Control, Transport};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::motion::{back, enter, motion, step_gap};
pub use super::text::parse_time;
use super::text::{edit_key, prompt_key};
use super::{App, Prompt, PromptKind, View, PANES, ZOOMS};
use crate::keys::Action;

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
        let ui = &mut app.ui;
        match action {
            Action::Quit => return quit(app),
            Action::Up | Action::PageUp => {
                let n = if action == Action::PageUp { 10 } else { 1 };
                ui.help_scroll = ui.help_scroll.saturating_sub(n);
                return vec![];
            }
            // The overlay clamps it to what there is to scroll.
            Action::Down | Action::PageDown => {
                let n = if action == Action::PageDown { 10 } else { 1 };
                ui.help_scroll = (ui.help_scroll + n).min(200);
                return vec![];
            }
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
    // A run until quit ends by quitting: its jobs in flight are cancelled without asking.
    let until_quit = matches!(app.ui.run, super::RunPhase::Proving { bound: None, .. });
    if open == 0 || until_quit || app.ui.replay.is_some() || app.ui.remote.is_some() {
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
pub(super) fn apply(app: &mut App) -> Vec<Control> {
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
        Action::Help => {
            ui.help = true;
            ui.help_scroll = 0;
        }
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
        Action::Back => {
            if !back(app) && app.ui.esc_leaves {
                return vec![Control::Quit];
            }
        }
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
            let msg = format!("job {} has already ended", j.label());
            app.ui.notify(app.state.now, msg, true);
            return vec![];
        }
        None => p.open_jobs().next().map(|j| j.job),
    };
    match target {
        Some(job) => {
            app.ui.notify(
                app.state.now,
                format!("cancelling job {}", p.label(job)),
                false,
            );
            vec![Control::Cancel { job }]
        }
        None => {
            app.ui.notify(app.state.now, "no open job to cancel", true);
            vec![]
        }
    }
}
