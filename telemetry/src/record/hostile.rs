//! Hostile recordings, made from a seed: what a careless disk or a careful attacker hands the
//! reader. Most are built with valid checksums, so they reach the decoder rather than being
//! turned away at a frame's CRC. Tests replay and export every one (no panic, no exit code but
//! 0, 1 or 2), the fuzz targets take them as seeds, and a benchmark measures each one's peak
//! memory.

use super::codec::{put_varint, BlockEncoder, MAX_STRING};
use super::frame::{
    encode_file_header, encode_frame, encode_trailer, EndPayload, Header, IndexEntry, KIND_END,
    KIND_EVENTS, MAX_RECORDS, MAX_STORED,
};
use super::{Hole, Record, RecorderOptions, Writer};
use crate::fixture::{self, Spec};
use crate::{ConfigChange, Event, Lane, LogLine, Mark, ProofRecord, Sample, Span, Stage};

/// One hostile file: its kind and number in the name (`expanding-0042`), and its bytes.
pub struct Case {
    /// `<kind>-<number>`, the number four digits wide; a file name for the fuzz corpus.
    pub name: String,
    /// The whole file.
    pub bytes: Vec<u8>,
}

/// The kinds, in the order cases cycle through them.
pub const KINDS: &[&str] = &[
    "bit-flip",
    "truncated",
    "resealed-flip",
    "resealed-garbage",
    "huge-claims",
    "expanding",
    "bad-strings",
    "counter-overflow",
    "duplicated-frames",
    "lying-index",
    "garbage",
    "spliced",
];

/// `n` hostile recordings from `seed`, every kind in turn.
pub fn corpus(seed: u64, n: usize) -> Vec<Case> {
    let bases: Vec<Base> = (0..3).map(|i| Base::new(1 + i, seed ^ i)).collect();
    (0..n)
        .map(|i| {
            let kind = KINDS[i % KINDS.len()];
            let mut rng = Rng(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let base = &bases[rng.below(bases.len() as u64) as usize];
            Case {
                name: format!("{kind}-{i:04}"),
                bytes: make(kind, base, &mut rng),
            }
        })
        .collect()
}

/// A real-shaped recording and what it was made of.
struct Base {
    header: Header,
    records: Vec<Record>,
    bytes: Vec<u8>,
    /// Offsets and lengths of its events frames.
    frames: Vec<(usize, usize)>,
    data_start: usize,
}

impl Base {
    fn new(seconds: u64, seed: u64) -> Base {
        let header = header();
        let records = fixture::records(&Spec::busy_gpu(seconds, seed));
        let mut w = Writer::new(vec![], &header, RecorderOptions::default()).expect("a writer");
        let every = 250_000_000;
        let mut next = every;
        for r in &records {
            if r.time() >= next {
                w.flush_frame().expect("a frame");
                next += every;
            }
            w.push(r).expect("a record");
        }
        let bytes = w.finish().expect("the end");
        let data_start = encode_file_header(&header).len();
        let mut frames = vec![];
        let mut off = data_start;
        while off + 44 <= bytes.len() && &bytes[off..off + 4] == b"PTRF" && bytes[off + 4] == 1 {
            let stored = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().expect("4"));
            let len = 44 + stored as usize;
            frames.push((off, len));
            off += len;
        }
        Base {
            header,
            records,
            bytes,
            frames,
            data_start,
        }
    }

    fn frame(&self, i: usize) -> &[u8] {
        let (at, len) = self.frames[i % self.frames.len()];
        &self.bytes[at..at + len]
    }
}

fn header() -> Header {
    Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "hostile".into(),
        version: super::VERSION,
    }
}

/// A file of `frames`, with an end frame indexing them (and a trailer) when `end`.
fn file(header: &Header, frames: &[Vec<u8>], end: bool) -> Vec<u8> {
    let mut out = encode_file_header(header);
    let mut index = vec![];
    for f in frames {
        let t = |at: usize| u64::from_le_bytes(f[at..at + 8].try_into().expect("8"));
        index.push(IndexEntry {
            offset: out.len() as u64,
            len: f.len() as u64,
            t_first: t(20),
            t_last: t(28),
            count: u32::from_le_bytes(f[16..20].try_into().expect("4")),
        });
        out.extend_from_slice(f);
    }
    if end {
        let t_end = index.iter().map(|e| e.t_last).max().unwrap_or(0);
        let payload = EndPayload {
            t_end,
            records: index.iter().map(|e| u64::from(e.count)).sum(),
            dropped: Hole::default(),
            index: Some(index),
        };
        let at = out.len() as u64;
        out.extend(encode_frame(
            KIND_END,
            &payload.encode(),
            1,
            (t_end, t_end),
            None,
        ));
        out.extend_from_slice(&encode_trailer(at));
    }
    out
}

/// An events frame of `records`, compressed or stored.
fn frame_of(records: &[Record], compress: bool) -> Vec<u8> {
    let mut b = BlockEncoder::default();
    records.iter().for_each(|r| b.push(r));
    sealed(&b.buf, b.count, (b.t_first, b.t_last), compress)
}

/// Any payload as an events frame whose checksums hold.
fn sealed(raw: &[u8], count: u32, t: (u64, u64), compress: bool) -> Vec<u8> {
    let mut z = zstd::bulk::Compressor::new(3).ok().filter(|_| compress);
    encode_frame(KIND_EVENTS, raw, count, (t.0.min(t.1), t.1), z.as_mut())
}

fn make(kind: &str, base: &Base, rng: &mut Rng) -> Vec<u8> {
    let h = &base.header;
    match kind {
        "bit-flip" => {
            let mut b = base.bytes.clone();
            for _ in 0..1 + rng.below(16) {
                let i = rng.below(b.len() as u64) as usize;
                b[i] ^= 1 << rng.below(8);
            }
            b
        }
        "truncated" => base.bytes[..rng.below(base.bytes.len() as u64) as usize].to_vec(),
        "resealed-flip" => {
            let n = base.records.len() as u64;
            let from = rng.below(n) as usize;
            let rs = &base.records[from..(from + 1 + rng.below(400) as usize).min(n as usize)];
            let mut b = BlockEncoder::default();
            rs.iter().for_each(|r| b.push(r));
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(b.buf.len() as u64) as usize;
                b.buf[i] ^= 1 << rng.below(8);
            }
            let f = sealed(&b.buf, b.count, (b.t_first, b.t_last), rng.below(2) == 0);
            file(h, &[base.frame(0).to_vec(), f], rng.below(2) == 0)
        }
        "resealed-garbage" => {
            let raw = rng.some_bytes(4096);
            let f = sealed(
                &raw,
                rng.below(2000) as u32,
                (rng.next(), rng.next()),
                false,
            );
            file(h, &[f], rng.below(2) == 0)
        }
        "huge-claims" => huge_claims(base, rng),
        "expanding" => expanding(rng),
        "bad-strings" => bad_strings(base, rng),
        "counter-overflow" => counter_overflow(base, rng),
        "duplicated-frames" => {
            let n = base.frames.len();
            let mut frames: Vec<Vec<u8>> = vec![];
            for _ in 0..2 + rng.below(40) {
                let i = match rng.below(3) {
                    0 => 0,
                    1 => n - 1,
                    _ => rng.below(n as u64) as usize,
                };
                frames.push(base.frame(i).to_vec());
            }
            file(h, &frames, rng.below(2) == 0)
        }
        "lying-index" => lying_index(base, rng),
        "garbage" => match rng.below(5) {
            0 => vec![],
            1 => rng.some_bytes(2048),
            2 => {
                let mut b = super::frame::MAGIC.to_vec();
                b.extend(rng.some_bytes(512));
                b
            }
            3 => base.bytes[..base.data_start].to_vec(),
            _ => {
                let mut b = base.bytes[..base.data_start].to_vec();
                b.extend(rng.some_bytes(8192));
                b
            }
        },
        _ => {
            // Spliced: pieces of files and junk, end to end.
            let mut b = base.bytes.clone();
            for _ in 0..1 + rng.below(3) {
                let at = rng.below(b.len() as u64) as usize;
                let piece = match rng.below(3) {
                    0 => rng.some_bytes(300),
                    1 => base.frame(rng.below(8) as usize).to_vec(),
                    _ => base.bytes[base.data_start..].to_vec(),
                };
                b.splice(at..at, piece);
            }
            b
        }
    }
}

/// Frame and file headers whose checksums hold but whose lengths claim the most they may, or
/// more than the file has.
fn huge_claims(base: &Base, rng: &mut Rng) -> Vec<u8> {
    let h = &base.header;
    let fh = |stored: u32, raw: u32, count: u32, codec: u8| {
        let mut b = [0u8; 44];
        b[..4].copy_from_slice(b"PTRF");
        b[4] = KIND_EVENTS;
        b[5] = codec;
        b[8..12].copy_from_slice(&stored.to_le_bytes());
        b[12..16].copy_from_slice(&raw.to_le_bytes());
        b[16..20].copy_from_slice(&count.to_le_bytes());
        b[28..36].copy_from_slice(&1u64.to_le_bytes());
        let crc = crc32fast::hash(&b[..40]);
        b[40..44].copy_from_slice(&crc.to_le_bytes());
        b.to_vec()
    };
    let mut out = encode_file_header(h);
    match rng.below(6) {
        // A frame claiming the largest payload, the file ending long before.
        0 => out.extend(fh(MAX_STORED, MAX_STORED, MAX_RECORDS, 0)),
        // The most records, a few bytes to hold them.
        1 => {
            let raw = rng.bytes(16);
            let mut f = sealed(&raw, 1, (0, 1), false);
            f[16..20].copy_from_slice(&MAX_RECORDS.to_le_bytes());
            let crc = crc32fast::hash(&f[..40]);
            f[40..44].copy_from_slice(&crc.to_le_bytes());
            out.extend(f);
        }
        // A string, a proof's stages and a varint claiming far more than the frame holds.
        2 => {
            let mut raw = vec![6u8, 0, 0];
            put_varint(&mut raw, u64::MAX >> rng.below(60));
            raw.extend(rng.bytes(8));
            out.extend(sealed(&raw, 1, (0, 0), false));
        }
        3 => {
            let mut raw = vec![5u8, 0, 0, 0, 0, 1, b'g', 1, 0];
            put_varint(&mut raw, u64::MAX - rng.below(1000));
            out.extend(sealed(&raw, 1, (0, 0), false));
        }
        // A zstd frame claiming to decompress to the most raw bytes, holding junk.
        4 => {
            let junk = rng.bytes(64);
            let mut f = fh(64, 4 << 20, 1, 1);
            f[36..40].copy_from_slice(&crc32fast::hash(&junk).to_le_bytes());
            let crc = crc32fast::hash(&f[..40]);
            f[40..44].copy_from_slice(&crc.to_le_bytes());
            out.extend(f);
            out.extend(junk);
        }
        // A header claiming a JSON of a megabyte or more than it allows.
        _ => {
            let mut b = base.bytes.clone();
            let len = [1u32 << 20, (1 << 20) + 1, u32::MAX][rng.below(3) as usize];
            b[20..24].copy_from_slice(&len.to_le_bytes());
            return b;
        }
    }
    out.extend_from_slice(base.frame(1));
    out
}

/// Small files whose frames expand, each to the most its strings may (a long string referred
/// to again and again): what a whole file's decoded state is bounded against.
fn expanding(rng: &mut Rng) -> Vec<u8> {
    let long = "x".repeat(MAX_STRING - 8);
    let frames = 20 + rng.below(120) as usize;
    let per = (super::codec::MAX_STRING_BYTES / MAX_STRING) - 2;
    let kind = rng.below(5);
    let one = (0..per)
        .map(|i| {
            let t = i as u64;
            Record::Event(match kind {
                0 => Event::Log(LogLine {
                    t,
                    level: "WARN".into(),
                    message: long.clone(),
                }),
                1 => Event::Mark(Mark {
                    t,
                    label: long.clone(),
                }),
                2 => Event::Config(ConfigChange {
                    t,
                    key: "lock".into(),
                    from: "single".into(),
                    to: long.clone(),
                    by: "file".into(),
                    applied: false,
                    error: None,
                }),
                3 => Event::Proof(ProofRecord {
                    t,
                    job: t,
                    partition: 0,
                    device: "gpu0".into(),
                    verified: false,
                    error: Some(long.clone()),
                    stages: Default::default(),
                }),
                _ => Event::Span(Span {
                    lane: Lane::Compute {
                        device: long.clone(),
                    },
                    stage: Stage::MsmH,
                    start: t,
                    end: t + 1,
                    job: Some(t),
                    partition: Some(0),
                    bytes: 0,
                }),
            })
        })
        .collect::<Vec<_>>();
    let f = frame_of(&one, true);
    file(&header(), &vec![f; frames], rng.below(2) == 0)
}

fn bad_strings(base: &Base, rng: &mut Rng) -> Vec<u8> {
    let mut h = base.header.clone();
    let nasty = [
        "\x1b[2J\x1b[H",
        "\x1b]0;owned\x07",
        "a\rb\x08",
        "\u{9b}31m",
        "\0nul",
    ];
    let pick = |rng: &mut Rng| nasty[rng.below(nasty.len() as u64) as usize].to_string();
    h.session.machine.hostname = pick(rng);
    h.session.workload = pick(rng);
    if let Some(d) = h.session.devices.first_mut() {
        d.name = pick(rng);
    }
    let raw = match rng.below(4) {
        // Not UTF-8.
        0 => vec![6u8, 0, 0, 2, 0xff, 0xfe, 0, 1, b'x'],
        // A reference before any string.
        1 => {
            let mut r = vec![6u8, 0];
            put_varint(&mut r, 1 + rng.below(1 << 40));
            r.extend([0, 1, b'x']);
            r
        }
        // A length past the frame.
        2 => vec![7u8, 0, 0, 200, b'x'],
        // Well-formed strings full of terminal escapes.
        _ => {
            let rs: Vec<Record> = (0..20)
                .map(|i| {
                    Record::Event(match i % 4 {
                        0 => Event::Log(LogLine {
                            t: i,
                            level: pick(rng),
                            message: pick(rng),
                        }),
                        1 => Event::Mark(Mark {
                            t: i,
                            label: pick(rng),
                        }),
                        2 => Event::Sample(Sample {
                            t: i,
                            metric: pick(rng),
                            device: Some(pick(rng)),
                            value: f64::NAN,
                        }),
                        _ => Event::Config(ConfigChange {
                            t: i,
                            key: pick(rng),
                            from: pick(rng),
                            to: pick(rng),
                            by: pick(rng),
                            applied: false,
                            error: Some(pick(rng)),
                        }),
                    })
                })
                .collect();
            return file(&h, &[frame_of(&rs, false)], true);
        }
    };
    file(&h, &[sealed(&raw, 1, (0, 0), false)], rng.below(2) == 0)
}

/// Counts and times at the edges of a u64: holes whose sum overflows, spans of the most bytes,
/// times at the end of the clock.
fn counter_overflow(base: &Base, rng: &mut Rng) -> Vec<u8> {
    let big = |rng: &mut Rng| u64::MAX - rng.below(4);
    let mut rs = vec![];
    for i in 0..2 + rng.below(6) {
        rs.push(Record::Hole(Hole {
            from: i,
            to: i + 1,
            samples: big(rng),
            spans: big(rng),
            other: big(rng),
        }));
    }
    let t = if rng.below(2) == 0 { 0 } else { big(rng) - 10 };
    rs.push(Record::Event(Event::Span(Span {
        lane: Lane::H2d {
            device: "gpu0".into(),
        },
        stage: Stage::H2d,
        start: t,
        end: t.saturating_add(rng.below(1 << 40)),
        job: Some(big(rng)),
        partition: Some(u32::MAX),
        bytes: big(rng),
    })));
    rs.push(Record::Event(Event::Span(Span {
        lane: Lane::H2d {
            device: "gpu0".into(),
        },
        stage: Stage::H2d,
        start: t,
        end: t,
        job: None,
        partition: None,
        bytes: big(rng),
    })));
    rs.push(Record::Run {
        start: big(rng) - 5,
        end: big(rng),
    });
    let mut frames = vec![base.frame(0).to_vec(), frame_of(&rs, false)];
    // Times in the frame header at the edges too.
    let mut f = frame_of(&rs[..2], false);
    f[20..28].copy_from_slice(&0u64.to_le_bytes());
    f[28..36].copy_from_slice(&u64::MAX.to_le_bytes());
    let crc = crc32fast::hash(&f[..40]);
    f[40..44].copy_from_slice(&crc.to_le_bytes());
    frames.push(f);
    file(&base.header, &frames, rng.below(2) == 0)
}

/// A valid trailer and end frame whose index points where it should not.
fn lying_index(base: &Base, rng: &mut Rng) -> Vec<u8> {
    let mut out = base.bytes[..base.data_start].to_vec();
    let frames: Vec<&[u8]> = (0..4).map(|i| base.frame(i)).collect();
    for f in &frames {
        out.extend_from_slice(f);
    }
    let at = out.len() as u64;
    let index = (0..1 + rng.below(50))
        .map(|_| {
            let t_first = rng.next() >> rng.below(64);
            IndexEntry {
                offset: rng.below(at + 100),
                len: rng.below(1 << 20),
                t_first,
                t_last: t_first.saturating_add(rng.next() >> rng.below(64)),
                count: rng.below(1 << 17) as u32,
            }
        })
        .collect::<Vec<_>>();
    let end = EndPayload {
        t_end: rng.next(),
        records: rng.next(),
        dropped: Hole {
            samples: u64::MAX,
            ..Hole::default()
        },
        index: Some(index),
    };
    out.extend(encode_frame(KIND_END, &end.encode(), 1, (0, 0), None));
    let target = if rng.below(2) == 0 { at } else { rng.below(at) };
    out.extend_from_slice(&encode_trailer(target));
    out
}

/// splitmix64: the same cases from the same seed on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// Fewer than `max` random bytes.
    fn some_bytes(&mut self, max: u64) -> Vec<u8> {
        let n = self.below(max) as usize;
        self.bytes(n)
    }
}
