//! Builds the dashboard over the fixed event stream and renders it to a `TestBackend`.

#![allow(dead_code)]

use provetop_telemetry::fixture::{self, Spec};
use provetop_ui::app::{App, AppOptions};
use provetop_ui::ratatui::backend::TestBackend;
use provetop_ui::ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use provetop_ui::ratatui::Terminal;
use provetop_ui::{State, UiSettings};

pub fn app(spec: &Spec) -> App {
    let mut app = App::new(
        fixture::session(spec),
        UiSettings::default(),
        AppOptions {
            partitions: 1,
            config_path: Some("/home/op/.config/provetop/config.toml".into()),
            theme_dir: None,
        },
    );
    app.state = State::replayed(fixture::session(spec), &fixture::events(spec), spec.end());
    app
}

pub fn gpu_app() -> App {
    app(&Spec::gpus())
}

pub fn cpu_app() -> App {
    app(&Spec::cpu())
}

pub fn render(app: &mut App, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    t
}

pub fn key(app: &mut App, code: KeyCode) -> Vec<provetop_telemetry::control::Control> {
    app.handle(&Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

pub fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

pub fn click(app: &mut App, x: u16, y: u16) {
    app.handle(&Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
}

pub fn scroll(app: &mut App, x: u16, y: u16, up: bool) {
    app.handle(&Event::Mouse(MouseEvent {
        kind: if up {
            MouseEventKind::ScrollUp
        } else {
            MouseEventKind::ScrollDown
        },
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }));
}

/// The screen as text, one line per row.
pub fn text(t: &Terminal<TestBackend>) -> String {
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}
