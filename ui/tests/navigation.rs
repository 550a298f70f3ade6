//! Pausing and stepping through gaps where the window and the playhead disagree: the first
//! window of a session, and after the playhead jumps (`end`, a seek).

mod common;

use common::*;
use provetop_telemetry::fixture::{self, Spec};
use provetop_ui::app::{App, AppOptions};
use provetop_ui::ratatui::crossterm::event::KeyCode;
use provetop_ui::{State, UiSettings};

const S: u64 = 1_000_000_000;

/// The fixture's session as it stood `at` into it.
fn app_at(spec: &Spec, at: u64) -> App {
    let mut app = App::new(
        fixture::session(spec),
        UiSettings::default(),
        AppOptions::default(),
    );
    let events: Vec<_> = fixture::events(spec)
        .into_iter()
        .filter(|e| e.time() < at)
        .collect();
    app.state = State::replayed(fixture::session(spec), &events, at);
    app
}

#[test]
fn pausing_in_the_first_window_counts_from_the_pause_and_back_never_moves_it_later() {
    let mut app = app_at(&Spec::gpus(), 5 * S);
    keys(&mut app, " ");
    assert_eq!(app.ui.paused_at, Some(5 * S));
    app.state.advance(8 * S);
    let screen = text(&render(&mut app, 200, 60));
    assert!(screen.contains("⏸ paused, 3.00 s ago"), "{screen}");
    // The window cannot start before 0, so ← leaves the paused point where it is.
    key(&mut app, KeyCode::Left);
    assert_eq!(app.ui.paused_at, Some(5 * S));
    let screen = text(&render(&mut app, 200, 60));
    assert!(screen.contains("⏸ paused, 3.00 s ago"), "{screen}");
    // → goes on towards now.
    key(&mut app, KeyCode::Right);
    assert_eq!(app.ui.paused_at, Some(8 * S));
}

#[test]
fn gap_steps_start_from_the_playhead_after_it_jumps() {
    let mut app = gpu_app();
    let now = app.state.now;
    // Select the gap nearest the end, then scroll a long way back and step again.
    keys(&mut app, "[");
    let newest = app.ui.gap.expect("a gap near the end");
    for _ in 0..40 {
        key(&mut app, KeyCode::PageUp);
    }
    let (t0, t1) = app.ui.window(now);
    assert!(newest.start >= t1, "the window left the selection behind");
    keys(&mut app, "[");
    let prev = app.ui.gap.expect("a gap before the playhead");
    assert!(prev.start < t1, "`[` stepped from the old selection");
    assert!(prev.start + 30 * S >= t0, "`[` went far before the window");
    keys(&mut app, "]");
    let next = app.ui.gap.expect("a gap after it");
    assert!(
        next.start > prev.start && next.start < newest.start,
        "{next:?}"
    );
    // `end` goes back to live and clears the selection and its gap line.
    key(&mut app, KeyCode::End);
    assert_eq!(app.ui.gap, None);
    let screen = text(&render(&mut app, 200, 60));
    assert!(!screen.contains("gap on gpu"), "{screen}");
}
