//! A recording as Chrome Trace Event JSON (`provetop export FILE --perfetto OUT.json`), which
//! Perfetto and chrome://tracing open. A process per device (and one for the host), a thread
//! per lane named by metadata events, `X` slices for spans, `C` counters for samples (VRAM,
//! PCIe, DDR and the rest), `i` instants for config changes, marks, proofs and warnings, and
//! `X` slices on the host's `recorder` thread where the recording has holes.
//!
//! The format wants the slices of one thread to nest. Spans of one lane nearly always do (a
//! kernel group contains its kernels), but a lane may overlap itself (double-buffered MSMs):
//! such a span goes to an extra thread of the same lane, `compute (overlap 1)`, so no slice
//! ever crosses another's end.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::record::{Hole, Record, Recording};
use crate::{Event, Lane, Nanos};

const HOST: u32 = 1;
/// Host threads: instants, holes, then the CPU pools.
const EVENTS_TID: u32 = 1;
const RECORDER_TID: u32 = 2;
const POOL_TID0: u32 = 10;
/// Device threads.
const COMPUTE_TID: u32 = 1;
const H2D_TID: u32 = 2;
const D2H_TID: u32 = 3;
const WORKER_TID0: u32 = 100;
/// Overlap tracks of a lane: its tid plus this, times the track.
const OVERLAP: u32 = 10_000;

/// What a trace holds, by kind of trace event (metadata events not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `X` slices: spans and holes.
    pub slices: u64,
    /// `C` counter events: samples.
    pub counters: u64,
    /// `i` instants: config changes, marks, proofs and warnings.
    pub instants: u64,
}

#[derive(Clone, Debug)]
struct Slice {
    start: Nanos,
    end: Nanos,
    name: &'static str,
    args: String,
}

struct Trace<'w, W: Write> {
    out: &'w mut W,
    first: bool,
    /// Device id → pid, in the header's order, then as devices appear.
    pids: BTreeMap<String, u32>,
    pools: BTreeMap<String, u32>,
    /// (pid, tid) → the lane's name and its slices.
    lanes: BTreeMap<(u32, u32), (String, Vec<Slice>)>,
    counts: Counts,
    names: super::JobNames,
}

/// Microseconds with nanosecond precision: `1234.567`.
fn us(t: Nanos) -> String {
    format!("{}.{:03}", t / 1000, t % 1000)
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

impl<W: Write> Trace<'_, W> {
    fn emit(&mut self, json: &str) -> io::Result<()> {
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        self.out.write_all(json.as_bytes())
    }

    fn pid(&mut self, device: &str) -> u32 {
        let next = self.pids.len() as u32 + 2;
        *self.pids.entry(device.to_string()).or_insert(next)
    }

    fn lane(&mut self, lane: &Lane) -> (u32, u32, String) {
        match lane {
            Lane::Compute { device } => (self.pid(device), COMPUTE_TID, "compute".into()),
            Lane::H2d { device } => (self.pid(device), H2D_TID, "h2d copy".into()),
            Lane::D2h { device } => (self.pid(device), D2H_TID, "d2h copy".into()),
            Lane::Worker { device, worker } => (
                self.pid(device),
                WORKER_TID0 + worker.min(&(OVERLAP - WORKER_TID0 - 1)),
                format!("worker {worker}"),
            ),
            Lane::Pool { name } => {
                let next = self.pools.len() as u32 + POOL_TID0;
                let tid = *self.pools.entry(name.clone()).or_insert(next);
                (HOST, tid, format!("{name} pool"))
            }
        }
    }

    fn slice(&mut self, pid: u32, tid: u32, lane: String, s: Slice) {
        self.lanes
            .entry((pid, tid))
            .or_insert_with(|| (lane, vec![]))
            .1
            .push(s);
    }

    fn instant(
        &mut self,
        t: Nanos,
        scope: &str,
        pid: u32,
        tid: u32,
        name: &str,
        args: &str,
    ) -> io::Result<()> {
        self.counts.instants += 1;
        self.emit(&format!(
            r#"{{"ph":"i","s":"{scope}","name":{},"ts":{},"pid":{pid},"tid":{tid},"args":{args}}}"#,
            q(name),
            us(t)
        ))
    }

    fn record(&mut self, r: &Record) -> io::Result<()> {
        match r {
            Record::Event(Event::Span(s)) => {
                let (pid, tid, lane) = self.lane(&s.lane);
                let mut args = String::from("{");
                let mut sep = "";
                for (k, v) in [("job", s.job), ("partition", s.partition.map(u64::from))] {
                    if let Some(v) = v {
                        args.push_str(&format!("{sep}\"{k}\":{v}"));
                        sep = ",";
                    }
                }
                if s.bytes > 0 {
                    args.push_str(&format!("{sep}\"bytes\":{}", s.bytes));
                }
                args.push('}');
                self.slice(
                    pid,
                    tid,
                    lane,
                    Slice {
                        start: s.start,
                        end: s.end.max(s.start),
                        name: s.stage.key(),
                        args,
                    },
                );
            }
            Record::Event(Event::Sample(s)) => {
                let pid = match &s.device {
                    Some(d) => self.pid(d),
                    None => HOST,
                };
                if s.value.is_finite() {
                    self.counts.counters += 1;
                    self.emit(&format!(
                        r#"{{"ph":"C","name":{},"ts":{},"pid":{pid},"tid":0,"args":{{"value":{}}}}}"#,
                        q(&s.metric),
                        us(s.t),
                        s.value
                    ))?;
                }
            }
            Record::Event(Event::Config(c)) => {
                let state = if c.applied { "" } else { " (refused)" };
                let name = format!("{}: {} → {}{state}", c.key, c.from, c.to);
                let args = serde_json::json!({
                    "key": c.key, "from": c.from, "to": c.to, "by": c.by,
                    "applied": c.applied, "error": c.error,
                });
                self.instant(c.t, "g", HOST, EVENTS_TID, &name, &args.to_string())?;
            }
            Record::Event(Event::Mark(m)) => {
                self.instant(m.t, "g", HOST, EVENTS_TID, &m.label, r#"{"mark":true}"#)?;
            }
            Record::Event(Event::Proof(p)) => {
                let pid = self.pid(&p.device);
                let name = self.names.proof(p.job, p.partition, p.verified);
                let args =
                    serde_json::json!({"job": p.job, "partition": p.partition, "error": p.error});
                self.instant(p.t, "p", pid, 0, &name, &args.to_string())?;
            }
            Record::Event(Event::Log(l)) => {
                let name = format!("{}: {}", l.level, l.message);
                self.instant(l.t, "p", HOST, EVENTS_TID, &name, "{}")?;
            }
            Record::Event(e @ Event::Job(_)) => self.names.observe(e),
            Record::Run { .. } => {}
            Record::Hole(h) => self.hole(h),
        }
        Ok(())
    }

    fn hole(&mut self, h: &Hole) {
        let args = format!(
            r#"{{"samples":{},"spans":{},"other":{}}}"#,
            h.samples, h.spans, h.other
        );
        self.slice(
            HOST,
            RECORDER_TID,
            "recorder".into(),
            Slice {
                start: h.from,
                end: h.to.max(h.from),
                name: "not recorded",
                args,
            },
        );
    }

    /// Every lane's slices, each on the first track of the lane where it nests.
    fn slices(&mut self) -> io::Result<Vec<(u32, u32, String)>> {
        let lanes = std::mem::take(&mut self.lanes);
        let mut threads = vec![];
        for ((pid, tid), (name, mut slices)) in lanes {
            slices.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
            let mut tracks: Vec<Vec<Nanos>> = vec![];
            for s in slices {
                let fits = |open: &mut Vec<Nanos>| {
                    while open.last().is_some_and(|&e| e <= s.start) {
                        open.pop();
                    }
                    open.last().is_none_or(|&e| s.end <= e)
                };
                let k = match tracks.iter_mut().position(fits) {
                    Some(k) => k,
                    None => {
                        tracks.push(vec![]);
                        tracks.len() - 1
                    }
                };
                tracks[k].push(s.end);
                self.counts.slices += 1;
                let t = tid + OVERLAP * k as u32;
                self.emit(&format!(
                    r#"{{"ph":"X","name":"{}","ts":{},"dur":{},"pid":{pid},"tid":{t},"args":{}}}"#,
                    s.name,
                    us(s.start),
                    us(s.end - s.start),
                    s.args
                ))?;
            }
            for k in 0..tracks.len() as u32 {
                let label = if k == 0 {
                    name.clone()
                } else {
                    format!("{name} (overlap {k})")
                };
                threads.push((pid, tid + OVERLAP * k, label));
            }
        }
        Ok(threads)
    }
}

/// Writes the whole trace; returns what it wrote and the reader's notes (damage, a cut).
pub fn write_trace<W: Write>(
    rec: &mut Recording,
    out: &mut W,
) -> io::Result<(Counts, Vec<String>)> {
    out.write_all(b"{\"traceEvents\":[\n")?;
    let mut t = Trace {
        out,
        first: true,
        pids: BTreeMap::new(),
        pools: BTreeMap::new(),
        lanes: BTreeMap::new(),
        counts: Counts::default(),
        names: super::JobNames::default(),
    };
    for d in &rec.header.session.devices {
        t.pid(&d.id);
    }
    let mut err = None;
    let report = rec.for_each(|r| {
        if err.is_none() {
            err = t.record(r).err();
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let mut threads = t.slices()?;
    threads.push((HOST, EVENTS_TID, "config changes, marks, log".into()));
    // Metadata: every process and thread named, in a stable order.
    let names: BTreeMap<String, String> = rec
        .header
        .session
        .devices
        .iter()
        .map(|d| (d.id.clone(), d.name.clone()))
        .collect();
    let mut procs: Vec<(u32, String)> = vec![(
        HOST,
        format!("host {}", rec.header.session.machine.hostname)
            .trim()
            .to_string(),
    )];
    for (id, pid) in t.pids.clone() {
        let label = match names.get(&id) {
            Some(n) if *n != id => format!("{id} ({n})"),
            _ => id,
        };
        procs.push((pid, label));
    }
    for (pid, label) in procs {
        t.emit(&format!(
            r#"{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"args":{{"name":{}}}}}"#,
            q(&label)
        ))?;
        t.emit(&format!(
            r#"{{"ph":"M","name":"process_sort_index","pid":{pid},"tid":0,"args":{{"sort_index":{pid}}}}}"#
        ))?;
    }
    for (pid, tid, label) in threads {
        t.emit(&format!(
            r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#,
            q(&label)
        ))?;
        t.emit(&format!(
            r#"{{"ph":"M","name":"thread_sort_index","pid":{pid},"tid":{tid},"args":{{"sort_index":{tid}}}}}"#
        ))?;
    }
    let counts = t.counts;
    let other = serde_json::json!({
        "source": "provetop",
        "workload": rec.header.session.workload,
        "writer": rec.header.writer,
        "complete": report.stop.is_none() && report.damage.is_empty(),
    });
    write!(
        out,
        "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{other}}}\n"
    )?;
    Ok((counts, report.notes()))
}
