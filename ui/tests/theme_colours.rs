//! The theme's colours reach the buffer: title, selected tab, idle gaps and stage spans, for
//! each built-in theme; a malformed theme falls back to the default and says so.

mod common;

use common::*;
use provetop_ui::ratatui::style::Color;
use provetop_ui::theme::{self, Theme, ALL_STAGES};

#[test]
fn each_theme_colours_the_buffer() {
    let mut seen_bg = vec![];
    for name in theme::names() {
        let mut app = gpu_app();
        app.set_theme(name);
        let th = Theme::builtin(name).unwrap();
        let t = render(&mut app, 200, 60);
        let buf = t.backend().buffer();
        // " provetop" in the header is in the title colour.
        assert_eq!(buf[(1, 0)].symbol(), "p");
        assert_eq!(buf[(1, 0)].fg, th.title, "{name}: title");
        // The selected tab sits on the accent colour.
        assert_eq!(buf[(3, 1)].bg, th.accent, "{name}: selected tab");
        // Every lane cell is a stage's colour in the stage's glyph, idle, or blank.
        let stage_colours: Vec<Color> = ALL_STAGES.iter().map(|s| th.stage(*s)).collect();
        let (mut idle, mut busy) = (0, 0);
        for y in 3..14 {
            for x in 19..138 {
                let c = &buf[(x, y)];
                let sym = c.symbol().chars().next().unwrap();
                if sym == th.idle_glyph {
                    assert_eq!(c.fg, th.gap, "{name}: idle at {x},{y}");
                    idle += 1;
                } else if "▁▂▃▄▅▆▇".contains(sym) {
                    // A partly busy column: the stage's colour, filled as far as it was busy.
                    assert!(stage_colours.contains(&c.fg), "{name}: {sym} at {x},{y}");
                } else if sym != ' ' {
                    assert!(stage_colours.contains(&c.fg), "{name}: {sym} at {x},{y}");
                    assert!(
                        ALL_STAGES
                            .iter()
                            .any(|s| th.glyph(*s) == sym && th.stage(*s) == c.fg),
                        "{name}: {sym} in {:?} is no stage's glyph and colour",
                        c.fg
                    );
                    busy += 1;
                }
            }
        }
        assert!(
            idle > 0 && busy > 100,
            "{name}: {idle} idle, {busy} busy cells"
        );
        seen_bg.push(buf[(100, 58)].bg);
    }
    // Light and high-contrast paint their own background; dark keeps the terminal's.
    assert_eq!(seen_bg[0], Color::Reset);
    assert_eq!(seen_bg[1], Color::Rgb(0xfa, 0xfa, 0xfa));
    assert_eq!(seen_bg[2], Color::Rgb(0, 0, 0));
}

#[test]
fn a_malformed_theme_is_reported_and_the_default_used() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.toml");
    std::fs::write(&bad, "[ui]\nfg = \"not-a-colour\"\n").unwrap();
    let settings = provetop_ui::UiSettings {
        theme: bad.display().to_string(),
        ..Default::default()
    };
    let spec = provetop_telemetry::fixture::Spec::cpu();
    let mut app = provetop_ui::App::new(
        provetop_telemetry::fixture::session(&spec),
        settings,
        provetop_ui::AppOptions::default(),
    );
    assert_eq!(app.theme, Theme::default());
    assert_eq!(app.ui.theme_name, "dark");
    let screen = text(&render(&mut app, 200, 60));
    assert!(
        screen.contains("ui.fg: unknown colour `not-a-colour`"),
        "{screen}"
    );
    assert!(screen.contains("using the dark theme"), "{screen}");
}
