//! Reading one frame's records back, every length checked against what is left and the caps.

use std::collections::BTreeMap;

use super::*;
use crate::record::{Hole, Record};
use crate::{ConfigChange, Event, JobEvent, Lane, LogLine, Mark, Nanos, ProofRecord, Sample, Span};

/// Reads one frame's records; every length is checked against what is left and the caps.
struct Decoder<'a> {
    data: &'a [u8],
    pos: usize,
    strings: Vec<String>,
    string_bytes: usize,
    /// Proof stages decoded (each a map entry).
    stages: usize,
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
            JOB | JOB_KIND | JOB_NAMED => {
                let mut j = JobEvent {
                    t: self.time()?,
                    job: self.varint()?,
                    partition: self.opt_u32()?,
                    state: job_state(self.u8()?).ok_or("an unknown job state")?,
                    detail: self.opt_str()?,
                    kind: None,
                    name: None,
                };
                match tag {
                    JOB_KIND => j.kind = Some(self.str()?),
                    JOB_NAMED => (j.kind, j.name) = (self.opt_str()?, Some(self.str()?)),
                    _ => {}
                }
                Event::Job(j)
            }
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
                self.stages += n as usize;
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

/// Heap a decoded proof stage takes (a B-tree map entry, with the tree's overhead).
const STAGE_BYTES: usize = 48;

/// Decodes a frame's `count` records, appending them to `out`; returns what the frame costs in
/// memory: the records themselves, their maps, and their strings twice (once decoded, once in
/// what a reader keeps of them: measured, a summary's peak is up to 1.7 times the bytes of the
/// strings it decoded).
pub fn decode_block(data: &[u8], count: u32, out: &mut Vec<Record>) -> Result<usize, String> {
    let mut d = Decoder {
        data,
        pos: 0,
        strings: vec![],
        string_bytes: 0,
        stages: 0,
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
    Ok(
        count as usize * std::mem::size_of::<Record>()
            + 2 * d.string_bytes
            + d.stages * STAGE_BYTES,
    )
}
