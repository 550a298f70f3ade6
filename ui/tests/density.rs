//! Lanes show how busy each cell is: a device 40 % busy and one 99 % busy look different at
//! every zoom, and the cell under the mouse gives its exact fraction.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::{Event, Lane, Span, Stage};
use provetop_ui::app::{App, AppOptions, ZOOMS};
use provetop_ui::ratatui::crossterm::event::{
    Event as TermEvent, KeyModifiers, MouseEvent, MouseEventKind,
};
use provetop_ui::{State, UiSettings};

const MS: u64 = 1_000_000;
const S: u64 = 1_000 * MS;

/// gpu0 busy 40 % of every `period` for `secs` seconds, then 99 %; gpu1 idle.
fn duty_app(secs: u64, period: u64) -> App {
    let spec = Spec::gpus();
    let mut events = vec![];
    let n = secs * S / period;
    for i in 0..2 * n {
        let busy = if i < n {
            period * 2 / 5
        } else {
            period * 99 / 100
        };
        events.push(Event::Span(Span {
            lane: Lane::Compute {
                device: "gpu0".into(),
            },
            stage: Stage::MsmH,
            start: i * period,
            end: i * period + busy,
            job: Some(0),
            partition: Some(0),
            bytes: 0,
        }));
    }
    let mut app = App::new(
        fixture::session(&spec),
        UiSettings::default(),
        AppOptions::default(),
    );
    app.state = State::replayed(fixture::session(&spec), &events, 2 * secs * S);
    app
}

/// Where gpu0's compute lane is drawn at 200×60: its columns and its rows.
fn bars(app: &App) -> (std::ops::Range<u16>, Vec<u16>) {
    let r = provetop_ui::view::regions(
        provetop_ui::ratatui::layout::Rect::new(0, 0, 200, 60),
        &app.state,
        &app.ui,
    );
    let g = r.lanes.expect("the lanes");
    let rows: Vec<u16> = g
        .rows
        .iter()
        .filter(|(_, l)| *l == g.rows[0].1)
        .map(|(y, _)| *y)
        .collect();
    (g.bars.x..g.bars.x + g.bars.width, rows)
}

#[test]
fn forty_and_ninety_nine_percent_differ_at_every_zoom() {
    for (zoom, len) in ZOOMS.iter().enumerate() {
        // Each half at least a whole window long, so both show side by side at the split.
        let secs = (len / S).max(1);
        let mut app = duty_app(secs, secs * MS);
        app.ui.zoom = zoom;
        // Pause with the split in the middle of the window.
        app.ui.paused_at = Some(secs * S + len / 2);
        let t = render(&mut app, 200, 60);
        let buf = t.backend().buffer();
        let (xs, ys) = bars(&app);
        // Each column top to bottom.
        let cols: Vec<String> = xs
            .map(|x| ys.iter().map(|y| buf[(x, *y)].symbol()).collect())
            .collect();
        let full = "█".repeat(ys.len());
        let (left, right) = (&cols[10], &cols[cols.len() - 10]);
        assert_ne!(left, right, "zoom {zoom}: {cols:?}");
        assert_ne!(left, &full, "zoom {zoom}: 40% drawn full: {cols:?}");
        assert_eq!(right, &full, "zoom {zoom}: 99% not full: {cols:?}");
    }
}

#[test]
fn the_cell_under_the_mouse_gives_its_exact_fraction() {
    let mut app = duty_app(30, MS);
    app.ui.paused_at = Some(45 * S);
    render(&mut app, 200, 60);
    let (xs, ys) = bars(&app);
    let y = ys[0];
    // Hover over gpu0's lane in the 40 % half of the window (15 s → 45 s).
    app.handle(&TermEvent::Mouse(MouseEvent {
        kind: MouseEventKind::Moved,
        column: xs.start + 20,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
    let screen = text(&render(&mut app, 200, 60));
    assert!((busy_shown(&screen) - 40.0).abs() <= 0.2, "{screen}");
    assert!(screen.contains(" gpu0 compute 0:"), "{screen}");
    assert!(screen.contains("% busy · msm_h "), "{screen}");
    app.handle(&TermEvent::Mouse(MouseEvent {
        kind: MouseEventKind::Moved,
        column: xs.end - 5,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
    let screen = text(&render(&mut app, 200, 60));
    assert!((busy_shown(&screen) - 99.0).abs() <= 0.2, "{screen}");
}

/// The `NN.N% busy` figure of the cell line.
fn busy_shown(screen: &str) -> f64 {
    let i = screen.find("% busy").expect("a cell line");
    let start = screen[..i].rfind(' ').unwrap() + 1;
    screen[start..i].parse().unwrap()
}
