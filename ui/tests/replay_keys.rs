//! Transport and record keys: in a replay they drive the player and the engine's own keys are
//! refused; live, the record key toggles recording and the transport keys say where they work.

mod common;

use common::*;
use provetop_telemetry::control::{Control, Transport};
use provetop_ui::app::input::parse_time;
use provetop_ui::app::{RecordingStatus, ReplayStatus};
use provetop_ui::ratatui::crossterm::event::KeyCode;

fn replaying(app: &mut provetop_ui::App, playing: bool) {
    app.ui.replay = Some(ReplayStatus {
        file: "x.ptrec".into(),
        playing,
        speed: 1.0,
        start: 0,
        end: 3_600_000_000_000,
    });
}

fn send(app: &mut provetop_ui::App, s: &str) -> Vec<Control> {
    let mut out = vec![];
    for c in s.chars() {
        out.extend(key(app, KeyCode::Char(c)));
    }
    out
}

#[test]
fn transport_keys_drive_a_replay() {
    let mut app = gpu_app();
    replaying(&mut app, true);
    assert_eq!(send(&mut app, " "), vec![Control::Replay(Transport::Pause)]);
    replaying(&mut app, false);
    assert_eq!(send(&mut app, " "), vec![Control::Replay(Transport::Play)]);
    assert_eq!(
        send(&mut app, ">"),
        vec![Control::Replay(Transport::Speed(2.0))]
    );
    assert_eq!(
        send(&mut app, ","),
        vec![Control::Replay(Transport::Speed(0.5))]
    );
    assert_eq!(
        send(&mut app, "M"),
        vec![Control::Replay(Transport::NextMark)]
    );
    assert_eq!(
        send(&mut app, "C"),
        vec![Control::Replay(Transport::NextConfig)]
    );
    assert!(send(&mut app, "g1:30").is_empty());
    assert!(text(&render(&mut app, 120, 30)).contains("go to (1:30, 90s, 2.5m): 1:30"));
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Control::Replay(Transport::SeekTo(90_000_000_000))]
    );
    assert!(send(&mut app, "gsoon").is_empty());
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert!(app.ui.notice.as_ref().unwrap().error);
    // The engine's keys do nothing to a recording.
    for k in ["n", "x", "m", "R"] {
        assert!(send(&mut app, k).is_empty(), "{k}");
        assert!(app.ui.notice.as_ref().unwrap().error, "{k}");
    }
    app.ui.notice = None;
    let screen = text(&render(&mut app, 200, 60));
    assert!(screen.contains("⏸ replay 1:00 / 1:00:00 ×1"), "{screen}");
    assert!(screen.contains("space play"), "{screen}");
}

#[test]
fn the_record_key_toggles_a_live_recording() {
    let mut app = gpu_app();
    let sent = send(&mut app, "R");
    match sent.as_slice() {
        [Control::Record { path: Some(p) }] => {
            let name = p.to_str().unwrap();
            assert!(
                name.starts_with("provetop-") && name.ends_with(".ptrec"),
                "{name}"
            );
        }
        other => panic!("{other:?}"),
    }
    app.ui.recording = Some(RecordingStatus {
        file: "a.ptrec".into(),
        bytes: 3 << 20,
        dropped: 12,
    });
    let screen = text(&render(&mut app, 200, 60));
    assert!(screen.contains("● REC 3.0 MiB ⚠12 dropped"), "{screen}");
    assert_eq!(send(&mut app, "R"), vec![Control::Record { path: None }]);
    // Transport keys are for replays.
    assert!(send(&mut app, ">").is_empty());
    assert!(app
        .ui
        .notice
        .as_ref()
        .unwrap()
        .text
        .contains("provetop replay"));
}

#[test]
fn times_parse_as_typed() {
    let s = 1_000_000_000u64;
    assert_eq!(parse_time("1:30"), Some(90 * s));
    assert_eq!(parse_time("1:02:03"), Some(3723 * s));
    assert_eq!(parse_time(" 90 "), Some(90 * s));
    assert_eq!(parse_time("90s"), Some(90 * s));
    assert_eq!(parse_time("2.5m"), Some(150 * s));
    assert_eq!(parse_time("1h"), Some(3600 * s));
    for bad in ["", "soon", "1:60", "-5", "1:2:3:4", "1.5:00", "NaN", "5y"] {
        assert_eq!(parse_time(bad), None, "{bad}");
    }
}
