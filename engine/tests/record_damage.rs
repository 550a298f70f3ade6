//! Damaged recordings: a file cut at any byte gives everything before the cut and says where
//! it stopped; a flipped bit costs exactly the frame it lands in; files that are not
//! recordings, empty, or from a newer format are refused with a clear error.

// A failed unwrap in a test or its helpers fails the test where it happened.
#![allow(clippy::unwrap_used)]

use provetop_engine::telemetry::fixture::{self, Spec};
use provetop_engine::telemetry::record::{
    Header, OpenError, Record, RecorderOptions, Recording, Writer, VERSION,
};
use std::io::Cursor;

/// A small recording (a frame every quarter second of a busy rig) and where its frames are:
/// (offset, length, records) of each events frame, and the end frame's offset and length.
struct Sample {
    bytes: Vec<u8>,
    data_start: u64,
    frames: Vec<(u64, u64, Vec<Record>)>,
    end: (u64, u64),
}

fn sample() -> Sample {
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let mut w = Writer::new(vec![], &header, RecorderOptions::default()).unwrap();
    let mut next = 250_000_000;
    for r in fixture::records(&Spec::busy_gpu(3, 2)) {
        if r.time() >= next {
            w.flush_frame().unwrap();
            next += 250_000_000;
        }
        w.push(&r).unwrap();
    }
    let bytes = w.finish().unwrap();
    let mut rec = Recording::from_reader(Cursor::new(bytes.clone())).unwrap();
    assert!(rec.indexed_by_trailer);
    let infos = rec.frames().to_vec();
    let frames: Vec<_> = infos
        .iter()
        .enumerate()
        .map(|(i, f)| (f.offset, f.len, rec.read_frame(i).unwrap()))
        .collect();
    let data_start = frames[0].0;
    let last = frames.last().unwrap();
    let end_at = last.0 + last.1;
    let end = (end_at, bytes.len() as u64 - 16 - end_at);
    Sample {
        bytes,
        data_start,
        frames,
        end,
    }
}

fn read(
    bytes: &[u8],
) -> Result<(Vec<Record>, provetop_engine::telemetry::record::ReadReport), OpenError> {
    let mut rec = Recording::from_reader(Cursor::new(bytes.to_vec()))?;
    let mut out = vec![];
    let report = rec.for_each(|r| out.push(r.clone()));
    Ok((out, report))
}

#[test]
fn a_file_cut_at_any_byte_gives_what_comes_before_and_says_where() {
    let s = sample();
    let len = s.bytes.len() as u64;
    assert!(s.frames.len() >= 10, "{} frames", s.frames.len());
    for c in 0..=len {
        let got = read(&s.bytes[..c as usize]);
        if c == 0 {
            assert!(matches!(got, Err(OpenError::Empty)));
            continue;
        }
        if c < s.data_start {
            assert!(
                matches!(got, Err(OpenError::TruncatedHeader { .. })),
                "cut at {c}: {got:?}"
            );
            continue;
        }
        let (records, report) = got.unwrap_or_else(|e| panic!("cut at {c}: {e}"));
        let whole: Vec<&(u64, u64, Vec<Record>)> =
            s.frames.iter().filter(|f| f.0 + f.1 <= c).collect();
        let expected: Vec<Record> = whole.iter().flat_map(|f| f.2.clone()).collect();
        assert_eq!(records.len(), expected.len(), "cut at {c}");
        assert_eq!(records, expected, "cut at {c}");
        assert!(report.damage.is_empty(), "cut at {c}: {report:?}");
        let end_end = s.end.0 + s.end.1;
        let stop = report.stop.as_ref().map(|s| s.at);
        let want = if c == len || c == end_end {
            None
        } else if c > end_end {
            Some(end_end)
        } else {
            // The start of the frame the cut is in, or the cut itself on a boundary.
            let cut_in = s
                .frames
                .iter()
                .map(|f| (f.0, f.1))
                .chain([s.end])
                .find(|f| f.0 < c && c < f.0 + f.1);
            Some(cut_in.map_or(c, |f| f.0))
        };
        assert_eq!(stop, want, "cut at {c}: {report:?}");
        if c < len {
            let notes = report.notes().join("\n");
            assert!(
                c == end_end || notes.contains(&format!("stops at byte {}", want.unwrap())),
                "cut at {c}: {notes}"
            );
        }
    }
}

#[test]
fn a_flipped_bit_costs_only_the_frame_it_lands_in() {
    let s = sample();
    let all: Vec<Record> = s.frames.iter().flat_map(|f| f.2.clone()).collect();
    let mut bit = 0u32;
    for i in 0..s.bytes.len() as u64 {
        let mut bytes = s.bytes.clone();
        bit = (bit + 3) % 8;
        bytes[i as usize] ^= 1 << bit;
        let got = read(&bytes);
        if i < s.data_start {
            let e = got.expect_err("a damaged header is refused");
            let msg = e.to_string();
            assert!(
                msg.contains("damaged") || msg.contains("not a provetop") || msg.contains("newer"),
                "byte {i}: {msg}"
            );
            continue;
        }
        let (records, report) = got.unwrap_or_else(|e| panic!("byte {i}: {e}"));
        let hit = s.frames.iter().position(|f| f.0 <= i && i < f.0 + f.1);
        let expected: Vec<Record> = match hit {
            Some(k) => s
                .frames
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .flat_map(|(_, f)| f.2.clone())
                .collect(),
            None => all.clone(),
        };
        assert_eq!(records.len(), expected.len(), "byte {i}");
        assert_eq!(records, expected, "byte {i}");
        if let Some(k) = hit {
            assert_eq!(report.damage.len(), 1, "byte {i}: {report:?}");
            assert_eq!(report.damage[0].at, s.frames[k].0, "byte {i}");
        }
    }
}

#[test]
fn files_that_cannot_be_replayed_say_why() {
    let s = sample();
    let err = |b: &[u8]| read(b).expect_err("refused").to_string();
    assert!(err(b"").contains("empty"));
    // Random bytes, and text.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let random: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    assert!(err(&random).contains("not a provetop recording"));
    assert!(err(b"{\"version\": 1}\n").contains("not a provetop recording"));
    // A newer format (its checksum recomputed, so only the version differs).
    let mut newer = s.bytes.clone();
    newer[16] = (VERSION + 1) as u8;
    let e = err(&newer);
    let format = format!("format {}", VERSION + 1);
    assert!(e.contains(&format) && e.contains("newer"), "{e}");
    // A header that claims a huge JSON is refused before anything is allocated for it.
    let mut huge = s.bytes.clone();
    huge[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(err(&huge).contains("damaged"));
    // The JSON damaged: its checksum says so.
    let mut json = s.bytes.clone();
    json[40] ^= 0x20;
    assert!(err(&json).contains("checksum"));
}
