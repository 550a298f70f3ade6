//! The advisor's line on the Timeline view's lanes border, and the key that applies its first
//! recommendation through the settings' path (a `Reconfigure`), listed in the help overlay.

mod common;

use common::*;
use provetop_telemetry::advice::{Advice, Verdict, CONCURRENCY};
use provetop_telemetry::control::Control;
use provetop_ui::ratatui::crossterm::event::KeyCode;

fn verdict(knob: &str, from: &str, to: &str) -> Verdict {
    Verdict {
        bottleneck: "the GPU waits for synthesis 62 % of the time while 9 of 16 cores idle".into(),
        advice: vec![Advice {
            knob: knob.into(),
            from: from.into(),
            to: to.into(),
            expected_gain: 1.8,
            reason: "measured".into(),
        }],
        window: None,
    }
}

#[test]
fn the_timeline_shows_the_bottleneck_and_the_first_advice_with_its_key() {
    let mut app = gpu_app();
    // The fixture's own session gets a verdict once proofs are in.
    assert!(app.state.verdict.is_some(), "no verdict over the fixture");
    app.state.verdict = Some(verdict("synthesis_workers", "2", "6"));
    let screen = text(&render(&mut app, 200, 60));
    let line = screen
        .lines()
        .find(|l| l.contains(" advisor: "))
        .unwrap_or_else(|| panic!("no advisor line\n{screen}"));
    insta::assert_snapshot!("advisor_line_200x60", line);
    assert!(
        line.contains("the GPU waits for synthesis 62 %")
            && line.contains("a synthesis_workers: 2 → 6 ×1.80"),
        "{line}"
    );
    // At 80 columns it is cut, not wrapped or spilled over the border.
    let screen = text(&render(&mut app, 80, 24));
    let line = screen.lines().find(|l| l.contains(" advisor: ")).unwrap();
    assert!(line.contains('…') && line.chars().count() <= 80, "{line}");
}

#[test]
fn the_advice_key_applies_the_first_recommendation_live() {
    let mut app = gpu_app();
    app.state.verdict = Some(verdict("lock", "single", "two-lock"));
    let sent = key(&mut app, KeyCode::Char('a'));
    assert_eq!(
        sent,
        vec![Control::Reconfigure {
            changes: vec![("lock".into(), "two-lock".into())]
        }]
    );
    let screen = text(&render(&mut app, 120, 40));
    assert!(
        screen.contains("advisor: applying lock=two-lock"),
        "{screen}"
    );
    // Jobs in flight are the session's, not the engine's: the key says how, sends nothing.
    app.state.verdict = Some(verdict(CONCURRENCY, "2", "4"));
    assert!(key(&mut app, KeyCode::Char('a')).is_empty());
    // Nothing to apply: a word, no control.
    app.state.verdict = Some(Verdict::default());
    assert!(key(&mut app, KeyCode::Char('a')).is_empty());
}

#[test]
fn the_help_overlay_lists_the_advice_key() {
    let mut app = gpu_app();
    keys(&mut app, "?");
    let screen = text(&render(&mut app, 120, 40));
    assert!(
        screen.contains("apply the advisor's first advice"),
        "{screen}"
    );
}
