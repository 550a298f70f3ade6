//! The recorder on a bus: what goes in comes out, in order; a disk that cannot keep up costs
//! samples first, then spans, never the engine's time, and every loss is counted and marked;
//! a one-hour recording opens and plays its first frame at once.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::telemetry::fixture::{self, Spec};
use provetop_engine::telemetry::record::{
    Header, Player, Record, Recorder, RecorderOptions, Recording, Writer,
};
use provetop_engine::telemetry::{
    Bus, ConfigChange, Event, Lane, Mark, Nanos, Sample, Span, Stage,
};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

fn sample(t: Nanos, v: f64) -> Event {
    Event::Sample(Sample {
        t,
        metric: "vram.used".into(),
        device: Some("gpu0".into()),
        value: v,
    })
}

fn span(t: Nanos) -> Event {
    Event::Span(Span {
        lane: Lane::Compute {
            device: "gpu0".into(),
        },
        stage: Stage::MsmH,
        start: t,
        end: t + 10,
        job: Some(t),
        partition: Some(0),
        bytes: 0,
    })
}

fn config(t: Nanos) -> Event {
    Event::Config(ConfigChange {
        t,
        key: "lock".into(),
        from: "single".into(),
        to: "two-lock".into(),
        by: "ui".into(),
        applied: true,
        error: None,
    })
}

fn header() -> Header {
    Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    }
}

fn events_of(path: &std::path::Path) -> (Vec<Record>, Recording) {
    let mut rec = Recording::open(path).unwrap();
    let mut out = vec![];
    let report = rec.for_each(|r| out.push(r.clone()));
    assert!(
        report.damage.is_empty() && report.stop.is_none(),
        "{report:?}"
    );
    (out, rec)
}

#[test]
fn what_the_bus_carries_is_what_the_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.ptrec");
    let bus = Bus::new();
    let opts = RecorderOptions {
        flush_every: Duration::from_millis(5),
        ..Default::default()
    };
    let rec = Recorder::create(&path, &bus, opts)
        .begin(fixture::session(&Spec::busy_gpu(1, 1)), 7)
        .unwrap();
    let mut sent = vec![];
    for i in 0..20_000u64 {
        let e = match i % 5 {
            0 | 1 => sample(i, i as f64 * 0.5),
            2 | 3 => span(i),
            _ if i % 1000 == 4 => config(i),
            _ => Event::Mark(Mark {
                t: i,
                label: format!("m{i}"),
            }),
        };
        bus.publish(e.clone());
        sent.push(Record::Event(e));
        if i % 4000 == 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    rec.run_window(3, 19_999);
    let status = rec.stop();
    assert_eq!(status.dropped.total(), 0, "{status:?}");
    assert!(status.error.is_none());
    let (got, r) = events_of(&path);
    assert!(r.indexed_by_trailer);
    assert!(r.frames().len() > 1, "several frames");
    assert_eq!(r.header.t0, 7);
    assert_eq!(r.header.session, fixture::session(&Spec::busy_gpu(1, 1)));
    assert_eq!(
        got.last(),
        Some(&Record::Run {
            start: 3,
            end: 19_999
        })
    );
    assert_eq!(&got[..got.len() - 1], &sent[..]);
    assert_eq!(status.bytes, std::fs::metadata(&path).unwrap().len());

    // Without its trailer the file is indexed by a scan of frame headers, to the same result.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("b.ptrec");
    std::fs::write(&cut, &bytes[..bytes.len() - 16]).unwrap();
    let mut r2 = Recording::open(&cut).unwrap();
    assert!(!r2.indexed_by_trailer);
    assert_eq!(r2.frames(), r.frames());
    let mut again = vec![];
    let report = r2.for_each(|x| again.push(x.clone()));
    assert_eq!(again, got);
    assert!(report.stop.is_none() && report.damage.is_empty());
}

/// A sink that holds every write until released: a disk that has stopped.
#[derive(Clone, Default)]
struct StuckDisk {
    open: Arc<(Mutex<bool>, Condvar)>,
    data: Arc<Mutex<Vec<u8>>>,
}

impl StuckDisk {
    fn release(&self) {
        *self.open.0.lock().unwrap() = true;
        self.open.1.notify_all();
    }
}

impl Write for StuckDisk {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut open = self.open.0.lock().unwrap();
        while !*open {
            open = self.open.1.wait(open).unwrap();
        }
        self.data.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_disk_that_falls_behind_costs_samples_first_then_spans_and_never_the_engine() {
    let bus = Bus::new();
    let disk = StuckDisk::default();
    let opts = RecorderOptions {
        flush_every: Duration::from_millis(2),
        // The header alone is past the soft limit: samples go at once; spans once a few
        // frames of them are queued too.
        soft_backlog: 1,
        hard_backlog: 16 << 10,
        max_backlog: 1 << 30,
        ..Default::default()
    };
    let rec = Recorder::start_with(
        Box::new(disk.clone()),
        None,
        bus.subscribe(1 << 16),
        header(),
        opts,
    );
    let (mut samples, mut spans, mut t) = (0u64, 0u64, 0u64);
    let mut slowest = Duration::ZERO;
    let deadline = Instant::now() + Duration::from_secs(20);
    // Publish until spans are being dropped too; publishing never waits for the disk.
    while rec.status().dropped.spans == 0 {
        assert!(Instant::now() < deadline, "spans were never dropped");
        for _ in 0..50 {
            t += 1;
            let e = if t % 2 == 0 {
                samples += 1;
                sample(t, 1.0)
            } else {
                spans += 1;
                span(t)
            };
            let at = Instant::now();
            bus.publish(e);
            slowest = slowest.max(at.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    t += 1;
    bus.publish(config(t));
    std::thread::sleep(Duration::from_millis(20));
    disk.release();
    let status = rec.stop();
    assert!(
        slowest < Duration::from_millis(50),
        "publish took {slowest:?}"
    );
    assert_eq!(
        status.dropped.other, 0,
        "the bus never had to drop for the recorder"
    );

    let bytes = disk.data.lock().unwrap().clone();
    let mut r = Recording::from_reader(std::io::Cursor::new(bytes)).unwrap();
    let (mut got_samples, mut got_spans, mut configs) = (0, 0, 0);
    let mut holes = vec![];
    r.for_each(|rec| match rec {
        Record::Event(Event::Sample(_)) => got_samples += 1,
        Record::Event(Event::Span(_)) => got_spans += 1,
        Record::Event(Event::Config(_)) => configs += 1,
        Record::Hole(h) => holes.push(*h),
        _ => {}
    });
    let lost_samples: u64 = holes.iter().map(|h| h.samples).sum();
    let lost_spans: u64 = holes.iter().map(|h| h.spans).sum();
    assert_eq!(configs, 1, "the config change is kept");
    assert_eq!(got_samples + lost_samples, samples, "every sample counted");
    assert_eq!(got_spans + lost_spans, spans, "every span counted");
    assert_eq!(
        (lost_samples, lost_spans),
        (status.dropped.samples, status.dropped.spans)
    );
    assert_eq!(got_samples, 0, "samples went first");
    assert!(got_spans > 0 && lost_spans > 0, "spans went later");
    // The holes say when: the first span was lost after the first sample.
    let first_sample_hole = holes.iter().find(|h| h.samples > 0).unwrap();
    let first_span_hole = holes.iter().find(|h| h.spans > 0).unwrap();
    assert!(first_sample_hole.from <= first_span_hole.from);
}

#[test]
fn a_one_hour_recording_opens_and_plays_its_first_frame_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hour.ptrec");
    let records = fixture::records(&Spec::busy_gpu(3600, 1));
    let mut w = Writer::new(
        std::io::BufWriter::new(std::fs::File::create(&path).unwrap()),
        &header(),
        RecorderOptions::default(),
    )
    .unwrap();
    // A frame a second, as the recorder writes them.
    let mut next = 1_000_000_000;
    for r in &records {
        if r.time() >= next {
            w.flush_frame().unwrap();
            next += 1_000_000_000;
        }
        w.push(r).unwrap();
    }
    w.finish().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let per_minute = size as f64 / 60.0;
    eprintln!(
        "one hour: {} records, {size} bytes, {:.0} KB a minute, {:.1} bytes a record",
        records.len(),
        per_minute / 1e3,
        size as f64 / records.len() as f64
    );
    assert!(per_minute < 2e6, "{per_minute} bytes a minute");

    for (name, file) in [("indexed", path.clone()), ("killed", dir.path().join("k"))] {
        if name == "killed" {
            let bytes = std::fs::read(&path).unwrap();
            std::fs::write(&file, &bytes[..bytes.len() - 100]).unwrap();
        }
        let t = Instant::now();
        let rec = Recording::open(&file).unwrap();
        let mut player = Player::new(rec, Instant::now());
        let mut first = 0;
        player.advance(Instant::now() + Duration::from_millis(100), |_| first += 1);
        let took = t.elapsed();
        eprintln!(
            "{name}: open and first frame in {:.1} ms ({} frames, {first} records handed out)",
            took.as_secs_f64() * 1e3,
            player.recording().frames().len()
        );
        assert!(first > 0);
        assert!(took < Duration::from_secs(1), "{name}: {took:?}");
        assert!(player.end() >= 3599 * 1_000_000_000);
    }
}
