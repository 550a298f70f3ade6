//! Every kind of record through the codec and back, and the string caps.

use std::collections::BTreeMap;

use super::*;
use crate::record::{Hole, Record};
use crate::{
    ConfigChange, Event, JobEvent, JobState, Lane, LogLine, Mark, ProofRecord, Sample, Span, Stage,
};

fn every_kind() -> Vec<Record> {
    let mut stages = BTreeMap::new();
    stages.insert(Stage::Synthesis, 0.25);
    stages.insert(Stage::MsmH, 1.5e-3);
    vec![
        Record::Event(Event::Span(Span {
            lane: Lane::Worker {
                device: "gpu0".into(),
                worker: 3,
            },
            stage: Stage::CosetNtt,
            start: 1_000_000_123,
            end: 1_000_500_000,
            job: Some(0),
            partition: None,
            bytes: 1 << 40,
        })),
        Record::Event(Event::Sample(Sample {
            t: 999_000_000,
            metric: "vram.used".into(),
            device: Some("gpu0".into()),
            value: -0.0,
        })),
        Record::Event(Event::Sample(Sample {
            t: 2_000_000_000,
            metric: "vram.used".into(),
            device: None,
            value: f64::MAX,
        })),
        Record::Event(Event::Config(ConfigChange {
            t: 5,
            key: "lock".into(),
            from: "single".into(),
            to: "two-lock".into(),
            by: "schedule".into(),
            applied: false,
            error: Some("é ✓".into()),
        })),
        Record::Event(Event::Job(JobEvent {
            t: u64::MAX,
            job: u64::MAX - 1,
            partition: Some(u32::MAX),
            state: JobState::Cancelled,
            detail: None,
            kind: None,
            name: None,
        })),
        Record::Event(Event::Job(JobEvent {
            t: 12,
            job: 3,
            partition: None,
            state: JobState::Submitted,
            detail: Some("winning-post-2KiB · critical".into()),
            kind: Some("winning-post".into()),
            name: None,
        })),
        Record::Event(Event::Proof(ProofRecord {
            t: 0,
            job: 7,
            partition: 2,
            device: "cpu0".into(),
            verified: true,
            error: None,
            stages,
        })),
        Record::Event(Event::Log(LogLine {
            t: 10,
            level: "WARN".into(),
            message: String::new(),
        })),
        Record::Event(Event::Mark(Mark {
            t: 11,
            label: "here".into(),
        })),
        Record::Hole(Hole {
            from: 3,
            to: 9,
            samples: 4,
            spans: 1,
            other: 0,
        }),
        Record::Run { start: 1, end: 2 },
    ]
}

#[test]
fn every_kind_round_trips() {
    let mut e = BlockEncoder::default();
    let records = every_kind();
    for r in &records {
        e.push(r);
    }
    let mut out = vec![];
    decode_block(&e.buf, e.count, &mut out).unwrap();
    assert_eq!(out, records);
    assert_eq!((e.t_first, e.t_last), (0, u64::MAX));
    // Every proper prefix is an error, never a panic.
    for n in 0..e.buf.len() {
        assert!(decode_block(&e.buf[..n], e.count, &mut vec![]).is_err());
    }
}

/// A job event without a kind is written as format version 1 wrote every job event, so a
/// version 1 file's jobs read back, their kind `None`; one with a kind, or a name, has a record
/// of its own.
#[test]
fn job_events_without_a_kind_keep_version_1_s_layout() {
    let job = |kind: Option<&str>, name: Option<&str>| {
        Record::Event(Event::Job(JobEvent {
            t: 1,
            job: 2,
            partition: None,
            state: JobState::Submitted,
            detail: Some("porep-2KiB · normal".into()),
            kind: kind.map(str::to_string),
            name: name.map(str::to_string),
        }))
    };
    let mut e = BlockEncoder::default();
    e.push(&job(None, None));
    // Tag, time delta, job, no partition, state, a detail, a new string and its length and
    // bytes: version 1's record.
    let detail = "porep-2KiB · normal";
    let mut v1 = vec![JOB, 2, 2, 0, 0, 1, 0, detail.len() as u8];
    v1.extend_from_slice(detail.as_bytes());
    assert_eq!(e.buf, v1);
    let mut out = vec![];
    decode_block(&v1, 1, &mut out).unwrap();
    assert_eq!(out, vec![job(None, None)]);
    for (kind, name, tag) in [
        (Some("porep"), None, JOB_KIND),
        (Some("porep"), Some("porep-1000-7"), JOB_NAMED),
        (None, Some("porep-1000-7"), JOB_NAMED),
    ] {
        let mut e = BlockEncoder::default();
        e.push(&job(kind, name));
        assert_eq!(e.buf[0], tag);
        let mut out = vec![];
        decode_block(&e.buf, 1, &mut out).unwrap();
        assert_eq!(out, vec![job(kind, name)]);
    }
}

#[test]
fn long_strings_are_cut_and_repeats_are_capped() {
    let mut e = BlockEncoder::default();
    let long = "ü".repeat(MAX_STRING);
    let log = |m: &str| {
        Record::Event(Event::Log(LogLine {
            t: 0,
            level: "WARN".into(),
            message: m.to_string(),
        }))
    };
    e.push(&log(&long));
    let mut out = vec![];
    decode_block(&e.buf, 1, &mut out).unwrap();
    let Record::Event(Event::Log(l)) = &out[0] else {
        panic!()
    };
    assert_eq!(l.message.len(), MAX_STRING);
    // The same long string referenced past the cap is refused, not copied out.
    for _ in 0..(MAX_STRING_BYTES / MAX_STRING) + 1 {
        e.push(&log(&long));
    }
    assert!(decode_block(&e.buf, e.count, &mut vec![])
        .unwrap_err()
        .contains("cap"));
}
