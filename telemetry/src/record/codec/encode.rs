//! Writing one frame's records: tags, varints, time deltas and the frame's string table.

use std::collections::HashMap;

use super::*;
use crate::record::Record;
use crate::{Event, Lane, Nanos};

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
                self.buf.push(match (&j.name, &j.kind) {
                    (Some(_), _) => JOB_NAMED,
                    (None, Some(_)) => JOB_KIND,
                    (None, None) => JOB,
                });
                self.time(j.t);
                self.varint(j.job);
                self.opt_varint(j.partition.map(u64::from));
                self.buf.push(job_state_code(j.state));
                self.opt_str(j.detail.as_deref());
                match &j.name {
                    Some(name) => {
                        self.opt_str(j.kind.as_deref());
                        self.str(name);
                    }
                    None => {
                        if let Some(kind) = &j.kind {
                            self.str(kind);
                        }
                    }
                }
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
