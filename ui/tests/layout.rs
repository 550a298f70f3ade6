//! The timeline at the common terminal sizes: every stage that ran in the window is in the
//! legend (it wraps), the lanes get the columns, and no figure is cut from its unit.

mod common;

use common::*;
use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::Event;
use provetop_ui::ratatui::crossterm::event::KeyCode;
use std::collections::BTreeSet;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// The stage keys of the spans inside the default window at the fixture's end.
fn stages_in_window(spec: &Spec) -> BTreeSet<&'static str> {
    let end = spec.end();
    let t0 = end.saturating_sub(30_000_000_000);
    fixture::events(spec)
        .iter()
        .filter_map(|e| match e {
            Event::Span(s) if s.end > t0 && s.start < end => Some(s.stage.key()),
            _ => None,
        })
        .collect()
}

/// Every `longest N` and `N idle` on screen carries its unit.
fn units_whole(screen: &str) {
    const UNITS: [&str; 5] = ["ms", "s", "µs", "min", "ns"];
    for needle in ["longest ", "gap on "] {
        for (i, _) in screen.match_indices(needle) {
            let rest = &screen[i + needle.len()..];
            let words: Vec<&str> = rest.split_whitespace().take(3).collect();
            let (num, unit) = match needle {
                "longest " => (words[0], words.get(1).copied()),
                _ => (words[1], words.get(2).copied()),
            };
            if num.parse::<f64>().is_ok() {
                let unit = unit.unwrap_or("").trim_end_matches(',');
                assert!(
                    UNITS.contains(&unit),
                    "`{needle}{num}` without its unit: {unit:?}\n{screen}"
                );
            }
        }
    }
}

#[test]
fn the_legend_wraps_and_units_stay_at_every_size() {
    let spec = Spec::gpus();
    let want = stages_in_window(&spec);
    for (w, h) in SIZES {
        let mut app = gpu_app();
        let screen = text(&render(&mut app, w, h));
        for key in &want {
            assert!(
                screen.contains(&format!(" {key} ")),
                "{w}×{h}: `{key}` missing from the legend\n{screen}"
            );
        }
        units_whole(&screen);
        insta::assert_snapshot!(format!("timeline_{w}x{h}"), screen);
        // With a gap selected, its causes are whole too (each ends in `%`).
        keys(&mut app, "[");
        let screen = text(&render(&mut app, w, h));
        units_whole(&screen);
        if let Some(line) = screen.lines().find(|l| l.contains(" gap on ")) {
            for cause in line.split(" · ").skip(1) {
                let cause = cause.trim_end_matches([' ', '│']);
                let last = cause.split_whitespace().last().unwrap_or("");
                assert!(
                    last.ends_with('%') || !last.chars().any(|c| c.is_ascii_digit()),
                    "{w}×{h}: a cause cut: {cause:?}\n{screen}"
                );
            }
        }
        insta::assert_snapshot!(format!("timeline_gap_{w}x{h}"), screen);
    }
}

#[test]
fn at_120_columns_the_lanes_get_the_width() {
    let mut app = gpu_app();
    render(&mut app, 120, 40);
    let r = provetop_ui::view::regions(
        provetop_ui::ratatui::layout::Rect::new(0, 0, 120, 40),
        &app.state,
        &app.ui,
    );
    let bars = r.lanes.unwrap().bars;
    assert!(bars.width >= 95, "bars {} of 120 columns", bars.width);
    key(&mut app, KeyCode::Esc);
}
