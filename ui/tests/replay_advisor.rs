//! The advisor in a replay judges the window it names: after a seek (`C` to the next config
//! change, then on), its verdict is over the stretch since that change, worked out anew, and
//! never claims a device computed 0 % of a window it did not look at.

use provetop_telemetry::control::Transport;
use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::record::{Header, RecorderOptions, Recording, Writer};
use provetop_ui::replay::Replay;
use provetop_ui::{App, AppOptions, UiSettings};
use std::time::Instant;

const S: u64 = 1_000_000_000;

#[test]
fn after_a_seek_the_advisor_judges_the_new_window() {
    let spec = Spec::gpus();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tour.ptrec");
    let header = Header {
        session: fixture::session(&spec),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut w = Writer::new(file, &header, RecorderOptions::default()).unwrap();
    let mut next = S;
    for r in fixture::records(&spec) {
        if r.time() >= next {
            w.flush_frame().unwrap();
            next += S;
        }
        w.push(&r).unwrap();
    }
    w.finish().unwrap();

    let rec = Recording::open(&path).unwrap();
    let mut replay = Replay::new(rec, "tour.ptrec", Instant::now());
    let mut app = App::new(
        replay.session().clone(),
        UiSettings::default(),
        AppOptions::default(),
    );
    let now = Instant::now();
    replay.transport(Transport::Pause, &mut app, now);
    // To 0:20, then `C`: the tour's lock change at 0:24.
    replay.transport(Transport::SeekTo(20 * S), &mut app, now);
    replay.transport(Transport::NextConfig, &mut app, now);
    let change = app.state.now;
    assert!((23 * S..=25 * S).contains(&change), "at {change}");
    let v = app.state.verdict.clone().expect("a verdict after the seek");
    assert!(
        v.bottleneck
            .starts_with("too few proofs to judge: 0 finished"),
        "{v:?}"
    );
    assert!(!v.bottleneck.contains("computes 0 %"), "{v:?}");
    // On to 0:50: the verdict is over the 26 s since the change, not the whole session.
    replay.transport(Transport::SeekTo(50 * S), &mut app, now);
    let v = app.state.verdict.clone().expect("a verdict");
    let (from, to) = v.window.expect("the window judged");
    assert!((from - change as f64 / 1e9).abs() < 1e-6, "{v:?}");
    assert!((to - 50.0).abs() < 1e-6, "{v:?}");
    assert!(!v.bottleneck.contains("computes 0 %"), "{v:?}");
    // And back before the change: the window is the session's start, judged anew.
    replay.transport(Transport::SeekTo(15 * S), &mut app, now);
    let v = app.state.verdict.clone().expect("a verdict");
    let (from, to) = v.window.expect("the window judged");
    assert!(from < 3.0 && (to - 15.0).abs() < 1e-6, "{v:?}");
}
