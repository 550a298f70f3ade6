//! Every view at 60×15 (the smallest accepted), 80×24, 120×40 and 200×60 from the fixed event
//! stream, as text. A change to what the dashboard draws shows up here as a snapshot diff to
//! review.

mod common;

use common::*;
use provetop_ui::ratatui::crossterm::event::KeyCode;

const MINIMUM: (u16, u16) = (60, 15);
const SMALL: (u16, u16) = (80, 24);
const MEDIUM: (u16, u16) = (120, 40);
const LARGE: (u16, u16) = (200, 60);

fn snap(name: &str, app: &mut provetop_ui::App, (w, h): (u16, u16)) {
    let screen = text(&render(app, w, h));
    insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
}

fn every_size(name: &str, setup: impl Fn(&mut provetop_ui::App)) {
    for size in [MINIMUM, SMALL, MEDIUM, LARGE] {
        let mut app = gpu_app();
        setup(&mut app);
        snap(name, &mut app, size);
    }
}

#[test]
fn timeline() {
    every_size("timeline", |_| {});
}

#[test]
fn timeline_paused_zoomed_gap_selected() {
    every_size("timeline_gap", |app| {
        // Zoom to 5 s, scroll back two steps (pausing), select the last gap in view.
        keys(app, "++");
        key(app, KeyCode::Left);
        key(app, KeyCode::Left);
        keys(app, "[");
    });
}

#[test]
fn timeline_cpu() {
    for size in [SMALL, LARGE] {
        let mut app = cpu_app();
        snap("timeline_cpu", &mut app, size);
    }
}

#[test]
fn pipeline() {
    every_size("pipeline", |app| keys(app, "2"));
}

#[test]
fn metrics() {
    every_size("metrics", |app| keys(app, "3"));
}

#[test]
fn metrics_cpu_shows_na() {
    let mut app = cpu_app();
    keys(&mut app, "3");
    snap("metrics_cpu", &mut app, SMALL);
}

#[test]
fn settings_with_pending_and_invalid_edits() {
    every_size("settings", |app| {
        keys(app, "4");
        // Two pending changes: lock two-lock → none, synthesis_workers 2 → 1.
        keys(app, "jjjj");
        key(app, KeyCode::Right);
        keys(app, "j");
        key(app, KeyCode::Left);
    });
    // Typing a value: the engine's check runs as it is typed.
    let mut app = gpu_app();
    keys(&mut app, "4jjjjj");
    key(&mut app, KeyCode::Enter);
    keys(&mut app, "0");
    snap("settings_typing", &mut app, SMALL);
}

#[test]
fn settings_shows_the_parameter_sets_and_their_tiers() {
    use provetop_telemetry::fixture::{self, Spec};
    use provetop_telemetry::{metrics as m, Event, Sample};
    let spec = Spec::gpus();
    let mut events = fixture::events(&spec);
    let t = spec.end() - 1_000_000_000;
    for (name, tier, bytes, users) in [
        ("porep-32GiB", 0.0, 47.2e9, 2.0),
        ("porep-8MiB", 1.0, 1.21e9, 0.0),
        ("porep-2KiB", 2.0, 4.9e6, 0.0),
    ] {
        for (prefix, value) in [
            (m::PARAMS_TIER_PREFIX, tier),
            (m::PARAMS_BYTES_PREFIX, bytes),
            (m::PARAMS_USERS_PREFIX, users),
        ] {
            events.push(Event::Sample(Sample {
                t,
                metric: format!("{prefix}{name}"),
                device: None,
                value,
            }));
        }
    }
    events.sort_by_key(Event::time);
    let mut app = gpu_app();
    app.state = provetop_ui::State::replayed(fixture::session(&spec), &events, spec.end());
    keys(&mut app, "4");
    snap("settings_parameter_sets", &mut app, LARGE);
    let screen = text(&render(&mut app, LARGE.0, LARGE.1));
    let at = |s: &str| {
        screen
            .find(s)
            .unwrap_or_else(|| panic!("no `{s}` in\n{screen}"))
    };
    // Hot first, then warm, then cold; the set in use says so.
    assert!(at("hot  porep-32GiB") < at("warm porep-8MiB") && at("warm") < at("cold porep-2KiB"));
    assert!(screen.contains("2 using it"), "{screen}");
}

#[test]
fn log() {
    every_size("log", |app| keys(app, "5"));
}

#[test]
fn help() {
    every_size("help", |app| keys(app, "?"));
}

#[test]
fn too_small() {
    let mut app = gpu_app();
    snap("too_small", &mut app, (40, 10));
}

/// The fixed session with its jobs named as Filecoin's kinds (a WinningPoSt every fifth job,
/// PoReps between): the pipeline view's per-kind block.
#[test]
fn pipeline_with_kinds() {
    use provetop_telemetry::fixture::{self, Spec};
    use provetop_telemetry::{Event, JobState};
    let spec = Spec::gpus();
    let mut events = fixture::events(&spec);
    for e in &mut events {
        if let Event::Job(j) = e {
            if j.state == JobState::Submitted && j.partition.is_none() {
                let kind = if j.job % 5 == 4 {
                    "winning-post"
                } else {
                    "porep"
                };
                j.kind = Some(kind.into());
            }
        }
    }
    for size in [SMALL, MEDIUM] {
        let mut app = gpu_app();
        app.state = provetop_ui::State::replayed(fixture::session(&spec), &events, spec.end());
        keys(&mut app, "2");
        snap("pipeline_kinds", &mut app, size);
        // Both kinds whole, each with what its devices waited for.
        let screen = text(&render(&mut app, size.0, size.1));
        assert!(screen.contains("Per kind · session ─"), "{screen}");
        for kind in [" porep ", " winning-post "] {
            assert!(screen.contains(kind), "{kind} in\n{screen}");
        }
        assert_eq!(screen.matches("waited").count(), 2, "{screen}");
    }
}
