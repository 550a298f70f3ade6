//! The telemetry service's admission, pacing and refusals.

use super::*;
use provetop_telemetry::record::stream::decode_frame;

fn hello() -> Hello {
    Hello::default()
}

async fn next(rx: &mut mpsc::Receiver<Result<WatchMessage, Status>>) -> Body {
    let m = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a message in time")
        .expect("the stream goes on")
        .expect("no error");
    m.body.expect("a body")
}

/// Records a frame message holds: (samples, holes' sample counts).
fn counts(b: &Body) -> (u64, u64) {
    let Body::Frame(f) = b else {
        panic!("not a frame")
    };
    let mut out = (0, 0);
    for r in decode_frame(&f.data).expect("decodes") {
        match r {
            Record::Hole(h) => out.1 += h.samples,
            _ => out.0 += 1,
        }
    }
    out
}

#[tokio::test]
async fn a_viewer_that_stops_reading_holds_a_few_frames_then_skips_and_is_told_what_it_missed() {
    let hub = hub::tests::hub(Duration::from_secs(3600));
    for k in 0..3 {
        let (b, kinds) = hub::tests::samples(k * 10, 10);
        hub.publish(b, kinds);
    }
    let (_stop_tx, stopping) = watch::channel(false);
    let watching = Arc::new(AtomicUsize::new(1));
    let (tx, mut rx) = mpsc::channel(IN_FLIGHT);
    let lag = Duration::from_millis(200);
    let task = tokio::spawn(stream(
        tx,
        hello(),
        hub.clone(),
        0,
        stopping,
        Watching(watching.clone()),
        Pace {
            max_lag: lag,
            idle: Duration::from_secs(3600),
        },
    ));
    assert!(matches!(next(&mut rx).await, Body::Hello(_)));
    let mut seen = 0;
    for _ in 0..3 {
        seen += counts(&next(&mut rx).await).0;
    }
    assert_eq!(seen, 30);
    assert!(matches!(next(&mut rx).await, Body::CaughtUp(_)));
    // The viewer stops reading while 100 frames arrive: its stream holds IN_FLIGHT of them.
    for k in 0..100 {
        let (b, kinds) = hub::tests::samples(1000 + k * 10, 10);
        hub.publish(b, kinds);
    }
    tokio::time::sleep(lag * 2).await;
    assert_eq!(rx.len(), IN_FLIGHT);
    // It reads again: what it held, a hole for what it skipped, then the newest frames.
    let (fresh, kinds) = hub::tests::samples(5000, 10);
    hub.publish(fresh, kinds);
    let (mut got, mut lost) = (0, 0);
    while got + lost < 1010 {
        let (g, l) = counts(&next(&mut rx).await);
        got += g;
        lost += l;
    }
    assert_eq!(got + lost, 1010, "every sample arrived or was counted");
    assert!(lost >= 900, "the frames past the lag were skipped: {lost}");
    assert!(
        got >= 10 * IN_FLIGHT as u64,
        "the frames in flight arrived: {got}"
    );
    drop(rx);
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the stream ends with its viewer")
        .expect("no panic");
    assert_eq!(watching.load(Ordering::SeqCst), 0);
}

#[test]
fn access_is_granted_only_with_the_servers_token_and_says_why_not() {
    let cases = [
        (None, &b""[..], false, "started without control_token_file"),
        (None, b"x", false, "the token is not used"),
        (Some("t0k"), b"", false, "need the server's control token"),
        (Some("t0k"), b"nope", false, "the token was refused"),
        (Some("t0k"), b"t0k", true, "logged as made by attach:a"),
    ];
    for (server, presented, ok, why) in cases {
        let (granted, note) = access(
            server.map(|t| Token::of(t.as_bytes())).as_ref(),
            presented,
            "attach:a",
        );
        assert_eq!(granted, ok, "{note}");
        assert!(note.contains(why), "{note}");
    }
    assert!(viewer_name("alice@rig-7.lan").is_ok());
    assert!(viewer_name("").is_err());
    assert!(viewer_name("a b").is_err());
    assert!(viewer_name("a\u{1b}[2J").is_err());
    assert!(viewer_name(&"x".repeat(65)).is_err());
}

#[tokio::test]
async fn a_viewer_that_reads_nothing_is_let_go_and_frees_its_slot() {
    let hub = hub::tests::hub(Duration::from_secs(3600));
    let (_stop_tx, stopping) = watch::channel(false);
    let watching = Arc::new(AtomicUsize::new(0));
    let slot = admit(&watching, false).unwrap();
    let (tx, rx) = mpsc::channel(IN_FLIGHT);
    let pace = Pace {
        max_lag: Duration::from_secs(3600),
        idle: Duration::from_millis(300),
    };
    let task = tokio::spawn(stream(tx, hello(), hub.clone(), 0, stopping, slot, pace));
    // Frames keep coming; the viewer never reads.
    for k in 0..2 * IN_FLIGHT as u64 {
        let (b, kinds) = hub::tests::samples(k * 10, 10);
        hub.publish(b, kinds);
    }
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("the stream ends though its viewer never read")
        .expect("no panic");
    assert_eq!(watching.load(Ordering::SeqCst), 0);
    drop(rx);
}

#[test]
fn read_only_viewers_leave_places_for_the_token_holder() {
    let watching = Arc::new(AtomicUsize::new(0));
    let mut held = vec![];
    while let Ok(w) = admit(&watching, false) {
        held.push(w);
    }
    assert_eq!(held.len(), MAX_VIEWERS - TOKEN_SLOTS);
    let e = admit(&watching, false).err().unwrap();
    assert!(e.contains("kept for viewers with the control token"), "{e}");
    for _ in 0..TOKEN_SLOTS {
        held.push(admit(&watching, true).unwrap());
    }
    assert!(admit(&watching, true).is_err());
    held.clear();
    assert_eq!(watching.load(Ordering::SeqCst), 0);
}
