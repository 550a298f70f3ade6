//! A recording as Perfetto's native protobuf trace (`provetop export FILE --perfetto
//! OUT.pftrace`): a track per device engine (compute, copies), per GPU worker and per CPU
//! pool, grouped under a track per device and one for the host; a counter track for every
//! sampled metric; flows from a partition's synthesis to its device region (GPU or cpu
//! executor) to its proof; config changes, marks and proofs as instants. The JSON stays for
//! chrome://tracing.
//!
//! A track's slices must nest: a span that would cross another's end on its lane goes to an
//! overlap track beside it, as in the JSON.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::perfetto::Counts;
use super::protobuf::Msg;
use crate::record::{Record, Recording};
use crate::{Event, Lane, Nanos, Span, Stage};

// Field numbers of perfetto_trace.proto.
const TRACE_PACKET: u32 = 1;
const PKT_TIMESTAMP: u32 = 8;
const PKT_SEQUENCE: u32 = 10;
const PKT_TRACK_EVENT: u32 = 11;
const PKT_TRACK_DESCRIPTOR: u32 = 60;
const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PARENT: u32 = 5;
const TD_COUNTER: u32 = 8;
const TE_TYPE: u32 = 9;
const TE_TRACK: u32 = 11;
const TE_NAME: u32 = 23;
const TE_DOUBLE_VALUE: u32 = 44;
const TE_FLOW_IDS: u32 = 47;
const TE_TERMINATING_FLOWS: u32 = 48;
const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
const INSTANT: u64 = 3;
const COUNTER: u64 = 4;
/// Every packet comes from one writer.
const SEQUENCE: u64 = 1;

/// Tracks by name, each with a stable uuid and its parent.
#[derive(Default)]
struct Tracks {
    by_name: BTreeMap<String, u64>,
    defs: Vec<(u64, String, Option<u64>, bool)>,
}

impl Tracks {
    fn get(&mut self, path: &str, name: &str, parent: Option<u64>, counter: bool) -> u64 {
        if let Some(u) = self.by_name.get(path) {
            return *u;
        }
        let uuid = self.defs.len() as u64 + 1;
        self.by_name.insert(path.to_string(), uuid);
        self.defs.push((uuid, name.to_string(), parent, counter));
        uuid
    }

    /// The group track of a device, or of the host.
    fn group(&mut self, name: &str) -> u64 {
        self.get(name, name, None, false)
    }
}

/// Lane → (group, lane track name).
fn lane_track(lane: &Lane) -> (String, String) {
    match lane {
        Lane::Compute { device } => (device.clone(), "compute".into()),
        Lane::H2d { device } => (device.clone(), "h2d copy".into()),
        Lane::D2h { device } => (device.clone(), "d2h copy".into()),
        Lane::Worker { device, worker } => (device.clone(), format!("worker {worker}")),
        Lane::Pool { name } => ("host".into(), format!("{name} pool")),
    }
}

fn flow_id(job: u64, partition: u32) -> u64 {
    (job << 20) ^ u64::from(partition) ^ 0x5eed_0000_0000_0000
}

fn packet(out: &mut impl Write, t: Option<Nanos>, f: impl FnOnce(&mut Msg)) -> io::Result<()> {
    let mut p = Msg::default();
    if let Some(t) = t {
        p.uint(PKT_TIMESTAMP, t);
    }
    p.uint(PKT_SEQUENCE, SEQUENCE);
    f(&mut p);
    let mut outer = Msg::default();
    outer.msg(TRACE_PACKET, &p);
    out.write_all(&outer.0)
}

fn event(
    out: &mut impl Write,
    t: Nanos,
    track: u64,
    kind: u64,
    f: impl FnOnce(&mut Msg),
) -> io::Result<()> {
    packet(out, Some(t), |p| {
        let mut e = Msg::default();
        e.uint(TE_TYPE, kind).uint(TE_TRACK, track);
        f(&mut e);
        p.msg(PKT_TRACK_EVENT, &e);
    })
}

/// Slices of one lane placed on tracks where they nest: (track index, span).
fn nest(mut spans: Vec<Span>) -> Vec<(usize, Span)> {
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut open: Vec<Vec<Nanos>> = vec![];
    let mut out = vec![];
    for s in spans {
        let slot = open.iter_mut().position(|stack| {
            while stack.last().is_some_and(|&e| e <= s.start) {
                stack.pop();
            }
            stack.last().is_none_or(|&e| s.end <= e)
        });
        let i = slot.unwrap_or_else(|| {
            open.push(vec![]);
            open.len() - 1
        });
        open[i].push(s.end);
        out.push((i, s));
    }
    out
}

/// Writes the trace; returns what it wrote and the reader's notes on the file.
pub fn write_pftrace<W: Write>(
    rec: &mut Recording,
    out: &mut W,
) -> io::Result<(Counts, Vec<String>)> {
    let mut lanes: BTreeMap<(String, String), Vec<Span>> = BTreeMap::new();
    let mut others: Vec<Event> = vec![];
    let mut names = super::JobNames::default();
    let report = rec.for_each(|r| match r {
        Record::Event(Event::Span(s)) => lanes
            .entry(lane_track(&s.lane))
            .or_default()
            .push(s.clone()),
        Record::Event(
            e @ (Event::Sample(_) | Event::Config(_) | Event::Mark(_) | Event::Proof(_)),
        ) => others.push(e.clone()),
        Record::Event(e @ Event::Job(_)) => names.observe(e),
        _ => {}
    });
    let mut tracks = Tracks::default();
    for d in &rec.header.session.devices {
        tracks.group(&d.id);
    }
    let host = tracks.group("host");
    let events_track = tracks.get(
        "host/config changes, marks",
        "config changes, marks",
        Some(host),
        false,
    );
    let mut counts = Counts::default();
    let mut body: Vec<u8> = vec![];
    // The flow's first hop on a synthesis span, the next on the partition's first device
    // operation (a kernel on its device's compute lane), the last on the proof.
    let mut first_device: BTreeMap<(u64, u32), (Nanos, String)> = BTreeMap::new();
    for ((group, _), spans) in &lanes {
        if group == "host" {
            continue;
        }
        let on_device = |s: &&Span| s.stage.is_compute() && matches!(s.lane, Lane::Compute { .. });
        for s in spans.iter().filter(on_device) {
            if let (Some(j), Some(p)) = (s.job, s.partition) {
                let e = first_device
                    .entry((j, p))
                    .or_insert((s.start, String::new()));
                if s.start <= e.0 {
                    *e = (s.start, format!("{:?}", s.lane));
                }
            }
        }
    }
    for ((group, name), spans) in lanes {
        let parent = tracks.group(&group);
        for (i, s) in nest(spans) {
            let label = match i {
                0 => name.clone(),
                i => format!("{name} (overlap {i})"),
            };
            let track = tracks.get(&format!("{group}/{label}"), &label, Some(parent), false);
            let flow = match (s.job, s.partition) {
                (Some(j), Some(p)) if s.stage == Stage::Synthesis => Some(flow_id(j, p)),
                (Some(j), Some(p))
                    if first_device.get(&(j, p)) == Some(&(s.start, format!("{:?}", s.lane))) =>
                {
                    Some(flow_id(j, p))
                }
                _ => None,
            };
            event(&mut body, s.start, track, SLICE_BEGIN, |e| {
                e.str(TE_NAME, s.stage.key());
                if let Some(f) = flow {
                    e.fixed64(TE_FLOW_IDS, f);
                }
            })?;
            event(&mut body, s.end, track, SLICE_END, |_| {})?;
            counts.slices += 1;
        }
    }
    for e in &others {
        match e {
            Event::Sample(s) if s.value.is_finite() => {
                let group = s.device.clone().unwrap_or_else(|| "host".into());
                let parent = tracks.group(&group);
                let track = tracks.get(
                    &format!("{group}/#{}", s.metric),
                    &s.metric,
                    Some(parent),
                    true,
                );
                event(&mut body, s.t, track, COUNTER, |e| {
                    e.double(TE_DOUBLE_VALUE, s.value);
                })?;
                counts.counters += 1;
            }
            Event::Config(c) => {
                let state = if c.applied { "" } else { " (refused)" };
                let name = format!("{}: {} → {}{state} (by {})", c.key, c.from, c.to, c.by);
                event(&mut body, c.t, events_track, INSTANT, |e| {
                    e.str(TE_NAME, &name);
                })?;
                counts.instants += 1;
            }
            Event::Mark(m) => {
                event(&mut body, m.t, events_track, INSTANT, |e| {
                    e.str(TE_NAME, &format!("mark: {}", m.label));
                })?;
                counts.instants += 1;
            }
            Event::Proof(p) => {
                let parent = tracks.group(if p.device.is_empty() {
                    "host"
                } else {
                    &p.device
                });
                let path = format!("{}/proofs", p.device);
                let track = tracks.get(&path, "proofs", Some(parent), false);
                event(&mut body, p.t, track, INSTANT, |e| {
                    e.str(TE_NAME, &names.proof(p.job, p.partition, p.verified));
                    e.fixed64(TE_TERMINATING_FLOWS, flow_id(p.job, p.partition));
                })?;
                counts.instants += 1;
            }
            _ => {}
        }
    }
    // Descriptors first, so every event's track is known when it is read.
    for (uuid, name, parent, counter) in &tracks.defs {
        packet(out, None, |p| {
            let mut d = Msg::default();
            d.uint(TD_UUID, *uuid).str(TD_NAME, name);
            if let Some(parent) = parent {
                d.uint(TD_PARENT, *parent);
            }
            if *counter {
                d.msg(TD_COUNTER, &Msg::default());
            }
            p.msg(PKT_TRACK_DESCRIPTOR, &d);
        })?;
    }
    out.write_all(&body)?;
    Ok((counts, report.notes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: Nanos, end: Nanos) -> Span {
        Span {
            lane: Lane::Compute {
                device: "gpu0".into(),
            },
            stage: Stage::MsmH,
            start,
            end,
            job: None,
            partition: None,
            bytes: 0,
        }
    }

    #[test]
    fn slices_that_would_cross_go_to_an_overlap_track() {
        // A group with a kernel inside nests; a span crossing the group's end does not.
        let placed = nest(vec![span(0, 10), span(2, 5), span(8, 12), span(12, 14)]);
        let tracks: Vec<(usize, Nanos)> = placed.iter().map(|(i, s)| (*i, s.start)).collect();
        assert_eq!(tracks, vec![(0, 0), (0, 2), (1, 8), (0, 12)]);
    }
}
