//! The dashboard over a one-hour recording: the first frame is on screen in well under a
//! second (opening reads the index, not the file), and the transport works over the hour:
//! pause, speed, seeking forward and back, the next mark, the next config change, and a hole
//! the recorder left shows on the timeline and in the header.

use provetop_telemetry::control::Transport;
use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::record::{Header, Hole, Record, RecorderOptions, Recording, Writer};
use provetop_ui::ratatui::backend::TestBackend;
use provetop_ui::ratatui::Terminal;
use provetop_ui::replay::Replay;
use provetop_ui::{App, AppOptions, UiSettings};
use std::time::{Duration, Instant};

const S: u64 = 1_000_000_000;

fn screen(app: &mut App) -> String {
    let mut t = Terminal::new(TestBackend::new(200, 60)).unwrap();
    t.draw(|f| app.draw(f)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

#[test]
fn an_hour_long_recording_opens_at_once_and_its_transport_works() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hour.ptrec");
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let mut w = Writer::new(
        std::io::BufWriter::new(std::fs::File::create(&path).unwrap()),
        &header,
        RecorderOptions::default(),
    )
    .unwrap();
    let mut next = S;
    let mut hole = Some(Record::Hole(Hole {
        from: 1240 * S,
        to: 1250 * S,
        samples: 1500,
        spans: 40,
        other: 0,
    }));
    for r in fixture::records(&Spec::busy_gpu(3600, 9)) {
        if r.time() >= next {
            w.flush_frame().unwrap();
            next += S;
            if next > 1251 * S {
                if let Some(h) = hole.take() {
                    w.push(&h).unwrap();
                }
            }
        }
        w.push(&r).unwrap();
    }
    w.finish().unwrap();

    let started = Instant::now();
    let rec = Recording::open(&path).unwrap();
    let mut replay = Replay::new(rec, "hour.ptrec", Instant::now());
    let mut app = App::new(
        replay.session().clone(),
        UiSettings::default(),
        AppOptions::default(),
    );
    replay.ingest(&mut app, Instant::now());
    let first = screen(&mut app);
    let took = started.elapsed();
    eprintln!(
        "one-hour recording ({} bytes): first frame on screen in {:.1} ms",
        std::fs::metadata(&path).unwrap().len(),
        took.as_secs_f64() * 1e3
    );
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(first.contains("replay 0:00 / 59:59 ×1"), "{first}");

    let now = Instant::now();
    replay.transport(Transport::Pause, &mut app, now);
    assert!(!app.ui.replay.as_ref().unwrap().playing);
    replay.transport(Transport::Speed(100.0), &mut app, now);
    assert_eq!(app.ui.replay.as_ref().unwrap().speed, 64.0);

    // Forward to the middle: the lock change there has applied.
    let t = Instant::now();
    replay.transport(Transport::SeekTo(1801 * S), &mut app, Instant::now());
    let forward = t.elapsed();
    assert_eq!(app.state.now, 1801 * S);
    assert_eq!(
        app.state.config.current.get("lock").as_deref(),
        Some("two-lock")
    );
    let proofs = app.state.pipeline.verified;
    assert!(proofs >= 3600, "{proofs} proofs by 30:01");

    // Back to 10:00: the state starts over and plays forward, counts whole.
    let t = Instant::now();
    replay.transport(Transport::SeekTo(600 * S), &mut app, Instant::now());
    let back = t.elapsed();
    eprintln!(
        "seek forward 30 min: {:.0} ms; back to 10:00: {:.0} ms",
        forward.as_secs_f64() * 1e3,
        back.as_secs_f64() * 1e3
    );
    assert_eq!(app.state.now, 600 * S);
    assert_eq!(
        app.state.config.current.get("lock").as_deref(),
        Some("single")
    );
    let at_ten = app.state.pipeline.verified;
    assert!(at_ten > 1100 && at_ten < proofs, "{at_ten} proofs by 10:00");

    // The next mark (every ten minutes from 5:00) and the next config change.
    replay.transport(Transport::NextMark, &mut app, Instant::now());
    assert_eq!(app.state.now, 900 * S);
    replay.transport(Transport::NextConfig, &mut app, Instant::now());
    assert_eq!(app.state.now, 1800 * S);

    // Back before the hole and through it: counted, drawn and logged.
    replay.transport(Transport::SeekTo(1255 * S), &mut app, Instant::now());
    assert_eq!(app.state.not_recorded.samples, 1500);
    let s = screen(&mut app);
    assert!(s.contains("1,540 not recorded"), "{s}");
    assert!(s.contains('╳'), "the hole on the axis: {s}");

    // Playing moves on at the chosen speed.
    replay.transport(Transport::Play, &mut app, Instant::now());
    std::thread::sleep(Duration::from_millis(50));
    replay.ingest(&mut app, Instant::now());
    assert!(app.state.now >= 1255 * S + 3 * S, "{}", app.state.now);
}
