//! Every view at the smallest accepted terminal (60×15) and at 80×24 keeps its values whole: a
//! number is never cut from its unit at a pane's edge, and the footer's hints are whole words.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;

const SIZES: [(u16, u16); 2] = [(60, 15), (80, 24)];
/// The keys that open each view: the five views, then the help overlay.
const VIEWS: [&str; 6] = ["1", "2", "3", "4", "5", "?"];
/// Where a pane's text ends.
const EDGES: [char; 6] = ['│', '┐', '┘', '┤', '─', '…'];

/// The places in `screen` where a number runs into a pane's edge or an ellipsis with its unit
/// cut short (`1.2 G│`, `356…`, `4.0 kB/…`).
fn cut_values(screen: &str) -> Vec<String> {
    let mut found = vec![];
    for line in screen.lines() {
        let chars: Vec<char> = line.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            if !EDGES.contains(c) || i == 0 {
                continue;
            }
            // The word before the edge, and the one before that.
            let before: String = chars[..i].iter().collect();
            let mut words = before.rsplitn(3, ' ');
            let last = words.next().unwrap_or("");
            let prev = words.next().unwrap_or("");
            let digit_cut = last.ends_with(|c: char| c.is_ascii_digit()) && *c == '…';
            let unit_cut = prev.ends_with(|c: char| c.is_ascii_digit())
                && matches!(
                    last,
                    "G" | "Gi" | "M" | "Mi" | "k" | "K" | "kB/" | "GB/" | "MB/"
                );
            if digit_cut || unit_cut {
                found.push(line.trim_end().to_string());
            }
        }
    }
    found
}

#[test]
fn every_view_keeps_values_with_their_units() {
    for (w, h) in SIZES {
        for view in VIEWS {
            for mut app in [gpu_app(), cpu_app()] {
                keys(&mut app, view);
                let screen = text(&render(&mut app, w, h));
                let cut = cut_values(&screen);
                assert!(
                    cut.is_empty(),
                    "view {view} at {w}×{h} cuts values from their units: {cut:?}\n{screen}"
                );
            }
        }
    }
}

#[test]
fn the_footer_shows_whole_hints_and_always_help() {
    for (w, h) in SIZES {
        for view in ["1", "2", "3", "4", "5"] {
            let mut app = gpu_app();
            keys(&mut app, view);
            let screen = text(&render(&mut app, w, h));
            let footer = screen.lines().last().unwrap().trim_end();
            assert!(
                footer.ends_with("? help"),
                "view {view} at {w}×{h}: the footer lost its help hint: {footer:?}"
            );
        }
    }
}

#[test]
fn the_checker_finds_a_cut_unit() {
    assert_eq!(cut_values("│ srs 1.1 GiB · scratch 1.2 G│").len(), 1);
    assert_eq!(cut_values("│ time 356…").len(), 1);
    assert!(cut_values("│ srs 1.1 GiB · scratch 1.2 GiB │").is_empty());
}
