//! The records inside one frame, before compression: a tag byte per record, then its fields.
//! Integers are LEB128 varints, times zigzag deltas from the frame's previous time, floats
//! 8 bytes, strings references into a table built as the frame goes (0 = a new string follows:
//! its length and bytes; n = the n-th string so far). Enums are written by name or by an
//! explicit number here, never by declaration order, so reordering a Rust enum cannot change
//! the format.

use std::collections::{BTreeMap, HashMap};

use super::{Hole, Record};
use crate::telemetry::{
    ConfigChange, Event, JobEvent, JobState, Lane, LogLine, Mark, Nanos, ProofRecord, Sample, Span,
    Stage,
};

/// Longest string written; longer ones (a huge log message) are cut at a char boundary.
pub const MAX_STRING: usize = 64 * 1024;
/// Strings one frame may define.
pub const MAX_STRINGS: usize = 1 << 16;
/// Bytes of strings one frame may expand to once every reference is copied out: what bounds
/// a decoder's memory when a frame refers to one long string many times.
pub const MAX_STRING_BYTES: usize = 16 << 20;

const SPAN: u8 = 1;
const SAMPLE: u8 = 2;
const CONFIG: u8 = 3;
const JOB: u8 = 4;
const PROOF: u8 = 5;
const LOG: u8 = 6;
const MARK: u8 = 7;
const HOLE: u8 = 16;
const RUN: u8 = 17;

fn job_state_code(s: JobState) -> u8 {
    match s {
        JobState::Submitted => 0,
        JobState::Synthesized => 1,
        JobState::Proving => 2,
        JobState::Verified => 3,
        JobState::Failed => 4,
        JobState::Cancelled => 5,
    }
}

fn job_state(c: u8) -> Option<JobState> {
    Some(match c {
        0 => JobState::Submitted,
        1 => JobState::Synthesized,
        2 => JobState::Proving,
        3 => JobState::Verified,
        4 => JobState::Failed,
        5 => JobState::Cancelled,
        _ => return None,
    })
}

fn stage_named(key: &str) -> Option<Stage> {
    Stage::ALL.iter().copied().find(|s| s.key() == key)
}

/// Builds one frame's records.
#[derive(Default)]
pub struct BlockEncoder {
    pub buf: Vec<u8>,
    strings: HashMap<String, u32>,
    prev_t: Nanos,
    pub count: u32,
    pub t_first: Nanos,
    pub t_last: Nanos,
}

impl BlockEncoder {
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.strings.clear();
        self.prev_t = 0;
        self.count = 0;
        self.t_first = 0;
        self.t_last = 0;
    }

    pub fn push(&mut self, r: &Record) {
        let t = r.time();
        if self.count == 0 {
            (self.t_first, self.t_last) = (t, t);
        } else {
            self.t_first = self.t_first.min(t);
            self.t_last = self.t_last.max(t);
        }
        self.count += 1;
        match r {
            Record::Event(e) => self.event(e),
            Record::Hole(h) => {
                self.buf.push(HOLE);
                self.time(h.from);
                self.varint(h.to.saturating_sub(h.from));
                self.varint(h.samples);
                self.varint(h.spans);
                self.varint(h.other);
            }
            Record::Run { start, end } => {
                self.buf.push(RUN);
                self.time(*start);
                self.varint(end.saturating_sub(*start));
            }
        }
    }

    fn event(&mut self, e: &Event) {
        match e {
            Event::Span(s) => {
                self.buf.push(SPAN);
                self.lane(&s.lane);
                self.str(s.stage.key());
                self.time(s.start);
                self.varint(s.end.saturating_sub(s.start));
                self.opt_varint(s.job);
                self.opt_varint(s.partition.map(u64::from));
                self.varint(s.bytes);
            }
            Event::Sample(s) => {
                self.buf.push(SAMPLE);
                self.time(s.t);
                self.str(&s.metric);
                self.opt_str(s.device.as_deref());
                self.buf.extend_from_slice(&s.value.to_le_bytes());
            }
            Event::Config(c) => {
                self.buf.push(CONFIG);
                self.time(c.t);
                self.str(&c.key);
                self.str(&c.from);
                self.str(&c.to);
                self.str(&c.by);
                self.buf.push(c.applied as u8);
                self.opt_str(c.error.as_deref());
            }
            Event::Job(j) => {
                self.buf.push(JOB);
                self.time(j.t);
                self.varint(j.job);
                self.opt_varint(j.partition.map(u64::from));
                self.buf.push(job_state_code(j.state));
                self.opt_str(j.detail.as_deref());
            }
            Event::Proof(p) => {
                self.buf.push(PROOF);
                self.time(p.t);
                self.varint(p.job);
                self.varint(u64::from(p.partition));
                self.str(&p.device);
                self.buf.push(p.verified as u8);
                self.opt_str(p.error.as_deref());
                self.varint(p.stages.len() as u64);
                for (stage, v) in &p.stages {
                    self.str(stage.key());
                    self.buf.extend_from_slice(&v.to_le_bytes());
                }
            }
            Event::Log(l) => {
                self.buf.push(LOG);
                self.time(l.t);
                self.str(&l.level);
                self.str(&l.message);
            }
            Event::Mark(m) => {
                self.buf.push(MARK);
                self.time(m.t);
                self.str(&m.label);
            }
        }
    }

    fn lane(&mut self, l: &Lane) {
        match l {
            Lane::Compute { device } => {
                self.buf.push(0);
                self.str(device);
            }
            Lane::H2d { device } => {
                self.buf.push(1);
                self.str(device);
            }
            Lane::D2h { device } => {
                self.buf.push(2);
                self.str(device);
            }
            Lane::Worker { device, worker } => {
                self.buf.push(3);
                self.str(device);
                self.varint(u64::from(*worker));
            }
            Lane::Pool { name } => {
                self.buf.push(4);
                self.str(name);
            }
        }
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn opt_varint(&mut self, v: Option<u64>) {
        self.varint(v.map_or(0, |v| v.saturating_add(1)));
    }

    fn time(&mut self, t: Nanos) {
        let d = t.wrapping_sub(self.prev_t) as i64;
        self.varint(((d << 1) ^ (d >> 63)) as u64);
        self.prev_t = t;
    }

    fn str(&mut self, s: &str) {
        let s = if s.len() > MAX_STRING {
            let mut end = MAX_STRING;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            &s[..end]
        } else {
            s
        };
        if let Some(&i) = self.strings.get(s) {
            self.varint(u64::from(i) + 1);
            return;
        }
        self.varint(0);
        self.varint(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
        if self.strings.len() < MAX_STRINGS {
            self.strings
                .insert(s.to_string(), self.strings.len() as u32);
        } else {
            // The table is full: the decoder ignores definitions past the cap too.
        }
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.buf.push(0),
            Some(s) => {
                self.buf.push(1);
                self.str(s);
            }
        }
    }
}

/// Reads one frame's records; every length is checked against what is left and the caps.
struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    strings: Vec<String>,
    string_bytes: usize,
    prev_t: Nanos,
}

type R<T> = Result<T, String>;

impl<'a> Decoder<'a> {
    fn u8(&mut self) -> R<u8> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| "a record runs past the end of its frame".to_string())?;
        self.pos += 1;
        Ok(b)
    }

    fn bool(&mut self) -> R<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("a flag of {b}")),
        }
    }

    fn varint(&mut self) -> R<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a number longer than 64 bits".into())
    }

    fn opt_varint(&mut self) -> R<Option<u64>> {
        Ok(self.varint()?.checked_sub(1))
    }

    fn u32(&mut self) -> R<u32> {
        u32::try_from(self.varint()?).map_err(|_| "a number out of range".to_string())
    }

    fn opt_u32(&mut self) -> R<Option<u32>> {
        self.opt_varint()?
            .map(|v| u32::try_from(v).map_err(|_| "a number out of range".to_string()))
            .transpose()
    }

    fn time(&mut self) -> R<Nanos> {
        let z = self.varint()?;
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        self.prev_t = self.prev_t.wrapping_add(d as u64);
        Ok(self.prev_t)
    }

    fn after(&mut self, start: Nanos) -> R<Nanos> {
        start
            .checked_add(self.varint()?)
            .ok_or_else(|| "a time past the end of the clock".to_string())
    }

    fn f64(&mut self) -> R<f64> {
        let b = self
            .data
            .get(self.pos..self.pos + 8)
            .ok_or_else(|| "a value runs past the end of its frame".to_string())?;
        self.pos += 8;
        Ok(f64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn str(&mut self) -> R<String> {
        let r = self.varint()?;
        let s = if r == 0 {
            let len = self.varint()?;
            let left = self.data.len() - self.pos;
            if len > MAX_STRING as u64 || len > left as u64 {
                return Err(format!("a string of {len} bytes"));
            }
            let bytes = &self.data[self.pos..self.pos + len as usize];
            self.pos += len as usize;
            let s = std::str::from_utf8(bytes)
                .map_err(|_| "a string that is not UTF-8".to_string())?
                .to_string();
            if self.strings.len() < MAX_STRINGS {
                self.strings.push(s.clone());
            }
            s
        } else {
            self.strings
                .get((r - 1) as usize)
                .cloned()
                .ok_or_else(|| format!("string {r} before it was defined"))?
        };
        self.string_bytes += s.len();
        if self.string_bytes > MAX_STRING_BYTES {
            return Err("the frame's strings expand past their cap".into());
        }
        Ok(s)
    }

    fn opt_str(&mut self) -> R<Option<String>> {
        Ok(if self.bool()? {
            Some(self.str()?)
        } else {
            None
        })
    }

    fn stage(&mut self) -> R<Stage> {
        let k = self.str()?;
        stage_named(&k).ok_or_else(|| format!("an unknown stage `{k}`"))
    }

    fn lane(&mut self) -> R<Lane> {
        Ok(match self.u8()? {
            0 => Lane::Compute {
                device: self.str()?,
            },
            1 => Lane::H2d {
                device: self.str()?,
            },
            2 => Lane::D2h {
                device: self.str()?,
            },
            3 => Lane::Worker {
                device: self.str()?,
                worker: self.u32()?,
            },
            4 => Lane::Pool { name: self.str()? },
            k => return Err(format!("a lane of kind {k}")),
        })
    }

    fn record(&mut self) -> R<Record> {
        let tag = self.u8()?;
        Ok(Record::Event(match tag {
            SPAN => {
                let lane = self.lane()?;
                let stage = self.stage()?;
                let start = self.time()?;
                Event::Span(Span {
                    lane,
                    stage,
                    start,
                    end: self.after(start)?,
                    job: self.opt_varint()?,
                    partition: self.opt_u32()?,
                    bytes: self.varint()?,
                })
            }
            SAMPLE => Event::Sample(Sample {
                t: self.time()?,
                metric: self.str()?,
                device: self.opt_str()?,
                value: self.f64()?,
            }),
            CONFIG => Event::Config(ConfigChange {
                t: self.time()?,
                key: self.str()?,
                from: self.str()?,
                to: self.str()?,
                by: self.str()?,
                applied: self.bool()?,
                error: self.opt_str()?,
            }),
            JOB => Event::Job(JobEvent {
                t: self.time()?,
                job: self.varint()?,
                partition: self.opt_u32()?,
                state: job_state(self.u8()?).ok_or("an unknown job state")?,
                detail: self.opt_str()?,
            }),
            PROOF => {
                let (t, job, partition) = (self.time()?, self.varint()?, self.u32()?);
                let (device, verified, error) = (self.str()?, self.bool()?, self.opt_str()?);
                let n = self.varint()?;
                // Each stage takes at least 9 bytes, so `n` cannot outrun the frame; the map
                // holds each stage once however many times it repeats.
                if n > (self.data.len() - self.pos) as u64 / 9 {
                    return Err(format!("a proof with {n} stages"));
                }
                let mut stages = BTreeMap::new();
                for _ in 0..n {
                    let s = self.stage()?;
                    stages.insert(s, self.f64()?);
                }
                Event::Proof(ProofRecord {
                    t,
                    job,
                    partition,
                    device,
                    verified,
                    error,
                    stages,
                })
            }
            LOG => Event::Log(LogLine {
                t: self.time()?,
                level: self.str()?,
                message: self.str()?,
            }),
            MARK => Event::Mark(Mark {
                t: self.time()?,
                label: self.str()?,
            }),
            HOLE => {
                let from = self.time()?;
                return Ok(Record::Hole(Hole {
                    from,
                    to: self.after(from)?,
                    samples: self.varint()?,
                    spans: self.varint()?,
                    other: self.varint()?,
                }));
            }
            RUN => {
                let start = self.time()?;
                return Ok(Record::Run {
                    start,
                    end: self.after(start)?,
                });
            }
            t => return Err(format!("a record of kind {t}")),
        }))
    }
}

/// Decodes a frame's `count` records, appending them to `out`.
pub fn decode_block(data: &[u8], count: u32, out: &mut Vec<Record>) -> Result<(), String> {
    let mut d = Decoder {
        data,
        pos: 0,
        strings: vec![],
        string_bytes: 0,
        prev_t: 0,
    };
    // Reserve no more than the bytes could hold (a record takes at least two).
    out.reserve((count as usize).min(data.len() / 2));
    for _ in 0..count {
        out.push(d.record()?);
    }
    if d.pos != data.len() {
        return Err(format!(
            "{} bytes left after the frame's {count} records",
            data.len() - d.pos
        ));
    }
    Ok(())
}

/// LEB128 helpers for the end frame's index.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

pub fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
