//! The engine publishes each span once, on the lane where it ran. The recording shipped in
//! examples/ was made when it also published every device step a second time on its worker's
//! lane: it must still give the figures it gave then, and the same figures as the session it
//! records published the new way.

use provetop_telemetry::gaps::{self, DeviceGaps};
use provetop_telemetry::record::{Record, Recording};
use provetop_telemetry::{Event, Lane, Stage};

const SHIPPED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/h200-k22-single-to-two-lock.ptrec"
);

fn shipped() -> (Vec<Event>, u64, u64) {
    let mut rec = Recording::open(std::path::Path::new(SHIPPED)).expect("the shipped recording");
    let (start, end) = (rec.start(), rec.end_time());
    let mut events = vec![];
    let report = rec.for_each(|r| {
        if let Record::Event(e) = r {
            events.push(e.clone());
        }
    });
    assert!(report.damage.is_empty(), "{:?}", report.damage);
    (events, start, end)
}

/// What the worker's own thread did: the steps the engine now puts on its lane alone.
fn host_step(stage: Stage) -> bool {
    matches!(stage, Stage::LockWait | Stage::Alloc | Stage::Prep)
}

/// The same session as the engine publishes it now: a host step only on the worker's lane, a
/// device step only on its engine's.
fn published_once(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .filter(|e| match e {
            Event::Span(s) => match s.lane {
                Lane::Worker { .. } => host_step(s.stage),
                Lane::Compute { .. } => !host_step(s.stage),
                _ => true,
            },
            _ => true,
        })
        .cloned()
        .collect()
}

/// Busy, idle and each cause in milliseconds, with the detail behind them.
fn figures(g: &[DeviceGaps]) -> Vec<String> {
    g.iter()
        .map(|d| {
            let causes: Vec<String> = d
                .by_cause
                .iter()
                .filter(|(_, v)| **v > 0)
                .map(|(k, v)| format!("{k} {}", v / 1_000_000))
                .collect();
            format!(
                "{} busy {} idle {} | {}",
                d.device,
                d.busy / 1_000_000,
                d.idle / 1_000_000,
                causes.join(", ")
            )
        })
        .collect()
}

#[test]
fn the_shipped_recording_gives_the_same_gaps_once_published() {
    let (events, start, end) = shipped();
    let doubled = events
        .iter()
        .filter(|e| matches!(e, Event::Span(s) if matches!(s.lane, Lane::Worker { .. })))
        .count();
    let once = published_once(&events);
    assert!(
        events.len() - once.len() > doubled / 2,
        "the recording holds the doubled spans this test is about"
    );
    let before = gaps::attribute(&events, start, end);
    let after = gaps::attribute(&once, start, end);
    assert_eq!(figures(&before), figures(&after));
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.by_cause, a.by_cause);
        assert_eq!((b.busy, b.idle), (a.busy, a.idle));
        assert_eq!(b.detail, a.detail);
    }
    // The figures this recording gave when the engine published device steps twice (the
    // analyser of that time, over the whole recording).
    assert_eq!(figures(&before), vec![GOLDEN.to_string()]);
}

const GOLDEN: &str = "gpu0 busy 81508 idle 153733 | alloc 3, download 75, lock_held 1, \
    no_work 2725, prep 34253, queued 130, unattributed 57, upload 54546, waiting_synthesis 61939";
