//! The run's phase in the header (setup with its progress, a bounded run's count, a finished
//! run), the verified count as a plain number, and quitting a run that proves until quit.

mod common;

use common::*;
use provetop_telemetry::control::Control;
use provetop_telemetry::{Event, JobEvent, JobState};
use provetop_ui::app::RunPhase;
use provetop_ui::ratatui::crossterm::event::KeyCode;

fn header(app: &mut provetop_ui::App, w: u16, h: u16) -> String {
    let screen = text(&render(app, w, h));
    screen.lines().next().unwrap_or_default().to_string()
}

#[test]
fn the_header_says_where_the_run_is() {
    let mut app = gpu_app();
    app.ui.run = RunPhase::Setup {
        what: "parameters for synthetic-k24: G1 queries".into(),
        done: 0.52,
        elapsed: 41.0,
        left: Some(38.0),
    };
    let top = header(&mut app, 160, 48);
    assert!(
        top.contains("setup: parameters for synthetic-k24: G1 queries 52 % · 0:41 ~0:38 left"),
        "{top}"
    );
    // The smallest terminal still says it is setting up.
    assert!(
        header(&mut app, 60, 15).contains("setup:"),
        "{}",
        header(&mut app, 60, 15)
    );
    app.ui.run = RunPhase::Proving {
        done: 3,
        bound: Some(10),
    };
    assert!(header(&mut app, 160, 48).contains("3 of 10 jobs done"));
    app.ui.run = RunPhase::Proving {
        done: 3,
        bound: None,
    };
    let top = header(&mut app, 160, 48);
    assert!(
        !top.contains("jobs done") && !top.contains("finished"),
        "{top}"
    );
    app.ui.run = RunPhase::Finished { jobs: 10 };
    assert!(header(&mut app, 80, 24).contains("finished: 10 jobs"));
    // The verified count is a plain number, whatever its size.
    app.state.pipeline.verified = 1234;
    let top = header(&mut app, 160, 48);
    assert!(top.contains("✓1234 "), "{top}");
}

#[test]
fn q_ends_a_run_until_quit_at_once_and_asks_for_a_bounded_one() {
    let mut app = gpu_app();
    let t = app.state.now;
    app.state.apply(&Event::Job(JobEvent {
        t,
        job: 900,
        partition: None,
        state: JobState::Submitted,
        detail: None,
        kind: None,
        name: None,
    }));
    app.ui.run = RunPhase::Proving {
        done: 0,
        bound: Some(10),
    };
    assert!(key(&mut app, KeyCode::Char('q')).is_empty());
    key(&mut app, KeyCode::Char('j'));
    app.ui.run = RunPhase::Proving {
        done: 0,
        bound: None,
    };
    assert_eq!(key(&mut app, KeyCode::Char('q')), vec![Control::Quit]);
}

#[test]
fn the_help_scrolls_where_it_does_not_fit() {
    let mut app = gpu_app();
    keys(&mut app, "?");
    let screen = text(&render(&mut app, 80, 15));
    assert!(screen.contains("Help · ↑↓ scroll 0/"), "{screen}");
    assert!(!screen.contains("esc closes"), "{screen}");
    for _ in 0..40 {
        key(&mut app, KeyCode::Down);
    }
    let screen = text(&render(&mut app, 80, 15));
    assert!(screen.contains("esc closes"), "{screen}");
    assert!(app.ui.help, "scrolling closed the help");
}

#[test]
fn setup_before_the_first_job_is_not_idle_time() {
    use provetop_telemetry::fixture::{self, Spec};
    use provetop_telemetry::{Lane, Span, Stage};
    const S: u64 = 1_000_000_000;
    let spec = Spec::cpu();
    let events = [
        Event::Job(JobEvent {
            t: 30 * S,
            job: 1,
            partition: None,
            state: JobState::Submitted,
            detail: None,
            kind: None,
            name: None,
        }),
        Event::Span(Span {
            lane: Lane::Compute {
                device: "cpu0".into(),
            },
            stage: Stage::MsmH,
            start: 31 * S,
            end: 40 * S,
            job: Some(1),
            partition: Some(0),
            bytes: 0,
        }),
    ];
    let st = provetop_ui::State::replayed(fixture::session(&spec), &events, 40 * S);
    let idle = st.timelines.devices[0].idle(0, 40 * S, 40 * S, 0);
    // Thirty seconds of setup are not in the window; the second before the span is idle.
    assert_eq!((idle.window, idle.idle), (10 * S, S));
}
