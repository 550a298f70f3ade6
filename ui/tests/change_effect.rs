//! The changes pane in the Settings view: an applied change keeps its values whole, and under
//! it the effect so far: proofs per hour since against before, with the proof counts and
//! whether the difference is inside the noise.

mod common;

use common::*;

/// The change's row and the line under it.
fn change_lines(screen: &str) -> (String, String) {
    let lines: Vec<&str> = screen.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains("single → two-lock"))
        .unwrap_or_else(|| panic!("no lock change on screen\n{screen}"));
    let under = lines.get(i + 1).copied().unwrap_or_default();
    // The changes pane is the right-hand one: what follows the settings pane's border.
    let pane = |l: &str| match l.rfind("││") {
        Some(at) => l[at + "││".len()..].to_string(),
        None => l.to_string(),
    };
    (pane(lines[i]), pane(under))
}

#[test]
fn an_applied_change_shows_its_effect_under_it() {
    let mut app = gpu_app();
    keys(&mut app, "4");
    let screen = text(&render(&mut app, 160, 48));
    let (row, under) = change_lines(&screen);
    assert!(row.contains("lock: single → two-lock"), "{row}");
    // The tour's change: 10 proofs before at 3,000/h, 6 since at 3,600/h, judged by the noise.
    assert!(
        under.contains("3,600/h (6) vs 3,000/h (10)") && under.contains("+20.0 % "),
        "{under}"
    );
    assert!(
        under.contains("within noise") || under.contains("beyond noise"),
        "{under}"
    );
    insta::assert_snapshot!("change_effect_160x48", format!("{row}\n{under}"));
    // Narrower: the values stay whole, the effect still there.
    let screen = text(&render(&mut app, 120, 40));
    let (row, under) = change_lines(&screen);
    assert!(row.contains(": single → two-lock"), "{row}");
    assert!(under.contains("+20.0 %"), "{under}\n{screen}");
}
