//! A recorder killed at any moment loses at most a second: whatever reached it half a second
//! ago (plus scheduling) is in the file, framed and readable, while it still runs.

// A failed unwrap here fails the test where it happened, helpers included.
#![allow(clippy::unwrap_used)]

use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::record::{Record, Recorder, RecorderOptions, Recording};
use provetop_telemetry::{Bus, Event, Mark};
use std::io::Cursor;
use std::time::{Duration, Instant};

/// Marks in the file as it is on disk now (what a SIGKILL would leave).
fn marks_on_disk(path: &std::path::Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    let Ok(mut rec) = Recording::from_reader(Cursor::new(bytes)) else {
        return vec![];
    };
    let mut out = vec![];
    rec.for_each(|r| {
        if let Record::Event(Event::Mark(m)) = r {
            out.push(m.label.clone());
        }
    });
    out
}

#[test]
fn what_reached_the_recorder_800_ms_ago_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.ptrec");
    let bus = Bus::new();
    let rec = Recorder::create(&path, &bus, RecorderOptions::default())
        .begin(fixture::session(&Spec::busy_gpu(1, 1)), 0)
        .unwrap();
    let start = Instant::now();
    for (i, at) in [0u64, 300, 1100].into_iter().enumerate() {
        let when = start + Duration::from_millis(at);
        std::thread::sleep(when.saturating_duration_since(Instant::now()));
        let label = format!("mark {i}");
        bus.publish(Event::Mark(Mark {
            t: at * 1_000_000,
            label: label.clone(),
        }));
        std::thread::sleep(Duration::from_millis(800));
        let on_disk = marks_on_disk(&path);
        assert!(
            on_disk.contains(&label),
            "{label} published {at} ms in is not on disk 800 ms later: {on_disk:?}"
        );
    }
    rec.stop();
}
