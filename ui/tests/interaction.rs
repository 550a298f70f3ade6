//! Keys and mouse against the fixed stream: what the UI changes and which `Control`s it sends.

mod common;

use common::*;
use provetop_telemetry::control::Control;
use provetop_telemetry::{ConfigChange, Event, JobEvent, JobState};
use provetop_ui::app::{Pane, View};
use provetop_ui::ratatui::crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};

#[test]
fn settings_edits_are_sent_together_and_refusals_show_inline() {
    let mut app = gpu_app();
    keys(&mut app, "4jjj");
    key(&mut app, KeyCode::Right); // gpu_workers_per_device 2 → 3
    keys(&mut app, "j");
    key(&mut app, KeyCode::Right); // lock two-lock → none
    let sent = key(&mut app, KeyCode::Enter);
    assert_eq!(
        sent,
        vec![Control::Reconfigure {
            changes: vec![
                ("gpu_workers_per_device".into(), "3".into()),
                ("lock".into(), "none".into())
            ]
        }]
    );
    assert!(app.ui.form.pending.is_empty());
    // The engine refuses a typed value: the Config event puts the error under the row.
    keys(&mut app, "k");
    key(&mut app, KeyCode::Enter);
    keys(&mut app, "99");
    let sent = key(&mut app, KeyCode::Enter);
    assert_eq!(
        sent,
        vec![Control::Reconfigure {
            changes: vec![("gpu_workers_per_device".into(), "99".into())]
        }]
    );
    let error = "gpu_workers_per_device: expected a whole number from 1 to 16, got `99`";
    app.state.apply(&Event::Config(ConfigChange {
        t: app.state.now,
        key: "gpu_workers_per_device".into(),
        from: "2".into(),
        to: "99".into(),
        by: "ui".into(),
        applied: false,
        error: Some(error.into()),
    }));
    let screen = text(&render(&mut app, 200, 60));
    assert!(
        screen.contains(&format!("refused `99`: {error}")),
        "{screen}"
    );
    // An applied change updates the value and clears the refusal.
    app.state.apply(&Event::Config(ConfigChange {
        t: app.state.now,
        key: "gpu_workers_per_device".into(),
        from: "2".into(),
        to: "3".into(),
        by: "ui".into(),
        applied: true,
        error: None,
    }));
    assert_eq!(app.state.config.current.gpu_workers_per_device, 3);
    assert!(!text(&render(&mut app, 200, 60)).contains("refused `99`"));
}

#[test]
fn jobs_marks_and_quit() {
    let mut app = cpu_app();
    assert_eq!(
        keys_sent(&mut app, "n"),
        vec![Control::Submit { partitions: 1 }]
    );
    // Nothing is open in the fixture at its end.
    assert!(keys_sent(&mut app, "x").is_empty());
    keys(&mut app, "m");
    assert!(app.ui.prompt.is_some());
    keys(&mut app, "q1"); // typed into the label, not quitting or switching view
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Control::Mark { label: "q1".into() }]
    );
    assert_eq!(app.ui.view(), View::Timeline);
    assert_eq!(keys_sent(&mut app, "q"), vec![Control::Quit]);
    let ctrl_c = TermEvent::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(app.handle(&ctrl_c), vec![Control::Quit]);
}

#[test]
fn quitting_with_jobs_in_flight_asks_first() {
    let mut app = cpu_app();
    let t = app.state.now;
    for job in [900, 901] {
        app.state.apply(&Event::Job(JobEvent {
            t,
            job,
            partition: None,
            state: JobState::Submitted,
            detail: None,
            kind: None,
            name: None,
        }));
    }
    // The first q only warns, saying how many jobs would be dropped.
    assert!(keys_sent(&mut app, "q").is_empty());
    let screen = text(&render(&mut app, 120, 30));
    assert!(
        screen.contains("2 job(s) in flight will be dropped: q again to quit"),
        "{screen}"
    );
    // Any other key keeps the dashboard; the next q asks again, and a second one quits.
    assert!(keys_sent(&mut app, "j").is_empty());
    assert!(keys_sent(&mut app, "q").is_empty());
    assert_eq!(keys_sent(&mut app, "q"), vec![Control::Quit]);
    // ctrl-c never asks: the exit line says what was dropped.
    let ctrl_c = TermEvent::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(app.handle(&ctrl_c), vec![Control::Quit]);
}

fn keys_sent(app: &mut provetop_ui::App, s: &str) -> Vec<Control> {
    s.chars().flat_map(|c| key(app, KeyCode::Char(c))).collect()
}

#[test]
fn focus_pause_zoom_and_scroll() {
    let mut app = gpu_app();
    assert_eq!(app.ui.focus, Pane::Lanes);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.ui.focus, Pane::LogStrip);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.ui.view(), View::Pipeline);
    key(&mut app, KeyCode::BackTab);
    key(&mut app, KeyCode::BackTab);
    keys(&mut app, " ");
    assert_eq!(app.ui.paused_at, Some(app.state.now));
    keys(&mut app, " ");
    assert_eq!(app.ui.paused_at, None);
    let before = app.ui.zoom;
    keys(&mut app, "-");
    assert_eq!(app.ui.zoom, before + 1);
    keys(&mut app, "+");
    key(&mut app, KeyCode::Left);
    let paused = app.ui.paused_at.expect("scrolling back pauses");
    assert!(paused < app.state.now);
    key(&mut app, KeyCode::End);
    assert_eq!(app.ui.paused_at, None);
}

#[test]
fn mouse_selects_tabs_lanes_gaps_and_zooms() {
    let mut app = gpu_app();
    render(&mut app, 200, 60);
    // The tabs row: " 1 Timeline   2 Pipeline …"; click "Pipeline".
    click(&mut app, 17, 1);
    assert_eq!(app.ui.view(), View::Pipeline);
    click(&mut app, 3, 1);
    assert_eq!(app.ui.view(), View::Timeline);
    // Wheel over the lanes zooms.
    let z = app.ui.zoom;
    scroll(&mut app, 60, 5, true);
    assert_eq!(app.ui.zoom, z - 1);
    scroll(&mut app, 60, 5, false);
    assert_eq!(app.ui.zoom, z);
    // A click on an idle cell of gpu0's compute lane selects that gap.
    let t = render(&mut app, 200, 60);
    let buf = t.backend().buffer();
    let x = (19..138)
        .find(|&x| buf[(x, 3)].symbol() == "░")
        .expect("an idle cell");
    click(&mut app, x, 3);
    let sel = app.ui.gap.expect("a gap is selected");
    assert_eq!(sel.device, 0);
    let screen = text(&render(&mut app, 200, 60));
    assert!(screen.contains("gap on gpu0"), "{screen}");
    // A click on a settings row selects it.
    keys(&mut app, "4");
    render(&mut app, 80, 24);
    // Rows start under the hint line; gpu_workers_per_device has its refusal under it.
    click(&mut app, 10, 9);
    assert_eq!(
        app.ui.form.current_row(),
        provetop_ui::app::Row::Engine("lock")
    );
}

#[test]
fn w_upper_saves_the_engine_values_changed_from_the_dashboard() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[engine]\nlock = \"single\" # was fine\nprover_threads = 4\n",
    )
    .unwrap();
    let mut app = gpu_app();
    app.ui.config_path = Some(path.clone());
    // The fixture's own changes aside: nothing changed yet, nothing to save.
    app.state.config.changed_by_ui.clear();
    keys(&mut app, "W");
    assert!(app.ui.notice.as_ref().unwrap().error);
    for (key, from, to, by) in [
        ("lock", "single", "two-lock", "ui"),
        ("gpu_workers_per_device", "2", "3", "ui"),
        // A scheduled change is not the operator's to save.
        ("prestage", "true", "false", "schedule"),
    ] {
        app.state.apply(&Event::Config(ConfigChange {
            t: app.state.now,
            key: key.into(),
            from: from.into(),
            to: to.into(),
            by: by.into(),
            applied: true,
            error: None,
        }));
    }
    keys(&mut app, "W");
    let notice = app.ui.notice.clone().unwrap();
    assert!(!notice.error, "{notice:?}");
    assert!(
        notice
            .text
            .contains("gpu_workers_per_device = 3, lock = two-lock"),
        "{notice:?}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        "[engine]\nlock = \"two-lock\" # was fine\nprover_threads = 4\ngpu_workers_per_device = 3\n"
    );
}

#[test]
fn the_pipeline_view_compares_the_segments_between_changes() {
    let mut app = gpu_app();
    keys(&mut app, "2");
    let screen = text(&render(&mut app, 200, 60));
    assert!(app.state.segments.len() >= 3, "{:?}", app.state.segments);
    assert!(
        screen.contains("Segments: did the change help?"),
        "{screen}"
    );
    // Each change line starts a row of the block; the newest three segments are listed.
    assert!(
        screen.contains("│   after lock single → two-lock: since "),
        "{screen}"
    );
    assert!(
        screen.contains("│   after mark: after two-lock: since "),
        "{screen}"
    );
}

/// A rig's dashboard opened from the fleet: Esc first cancels what the pane holds (here a
/// selected job), and with nothing left to cancel goes back; elsewhere Esc never quits.
#[test]
fn esc_leaves_only_a_dashboard_opened_from_the_fleet() {
    let mut app = gpu_app();
    keys(&mut app, "2");
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    app.ui.esc_leaves = true;
    key(&mut app, KeyCode::Down);
    assert!(app.ui.job.is_some(), "a job is selected");
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert!(app.ui.job.is_none(), "the first Esc clears the selection");
    assert_eq!(key(&mut app, KeyCode::Esc), vec![Control::Quit]);
}
