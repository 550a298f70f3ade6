//! Idle-gap attribution: for each device, every interval in which no compute span runs on its
//! compute lane is a gap, and each moment of a gap gets the cause the event stream shows.
//!
//! It is a pure function of the events (their order of arrival does not matter), so a live
//! session, its recording and a replay give the same answer. The inputs it reads:
//!
//! - compute spans on `Lane::Compute { device }` (stages for which `Stage::is_compute`);
//! - `alloc`, `h2d`, `prep` and `d2h` spans on any lane of the device (its copy lanes, its
//!   compute lane, its workers' lanes);
//! - `lock_wait` spans on a worker's lane; a worker's partition region is the extent of its
//!   lane's spans for that partition, and the worker that most recently finished a lock wait
//!   inside its current region is taken as the lock's holder;
//! - `synthesis` spans on the `synthesis` pool;
//! - job events: a partition is queued from `synthesized` to `proving` (or to the end of its
//!   job, when the job is cancelled).
//!
//! When several causes apply at once, the first in this order wins (most specific first; what
//! the device itself is doing before what it waits for elsewhere):
//!
//! 1. `alloc` — a worker of the device is allocating device memory;
//! 2. `upload` — a host-to-device copy is in flight;
//! 3. `prep` — a worker is preparing inputs on the CPU inside its region;
//! 4. `download` — a device-to-host copy is in flight;
//! 5. `lock_held` — a worker of the device waits for its lock while another worker holds it
//!    (the holder's worker number is kept on the gap);
//! 6. `unattributed` — a worker is inside a partition's region but no span says what it does;
//! 7. `queued` — synthesised partitions are waiting but no worker of this device has one;
//! 8. `imbalance` — nothing is queued, but a worker of another device holds a partition it
//!    waits to compute (for its device's lock): work this device could have run;
//! 9. `waiting_synthesis` — nothing is ready and partitions are being synthesised;
//! 10. `no_work` — nothing is ready and nothing is being synthesised: no work was
//!     submitted, or every open partition is past this device.

//!
//! Four causes also get their reasons (`detail`): what the lock's holder was doing, the memory
//! an allocation waited on, what synthesis lacked, and whether no work meant too few jobs in
//! flight or the run's start or end.
//!
//! `analyzer` collects these inputs from the events (`levels` the sampled ones), `sweep` cuts
//! a device's window into busy time and gaps by cause, `reasons` explains each moment of a
//! gap, `cause` names the causes and their order, `detail` holds the reasons.

mod analyzer;
mod cause;
pub mod detail;
mod levels;
mod reasons;
mod sweep;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_detail;

pub use analyzer::{attribute, GapAnalyzer};
pub use cause::GapCause;
pub use detail::{AllocDetail, GapDetail};

use serde::Serialize;
use std::collections::BTreeMap;

use crate::Nanos;

/// A stretch of a gap with one cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GapSegment {
    /// Where it begins (nanoseconds since session start).
    pub start: Nanos,
    /// Where it ends, exclusive (nanoseconds since session start).
    pub end: Nanos,
    /// Why the device was idle; flattened into the segment's JSON as `cause` (and `holder`).
    #[serde(flatten)]
    pub cause: GapCause,
}

/// A maximal interval with no compute on a device, cut into segments by cause.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Gap {
    /// Where it begins (nanoseconds since session start).
    pub start: Nanos,
    /// Where it ends, exclusive (nanoseconds since session start).
    pub end: Nanos,
    /// Its stretches by cause, in time order, covering `start..end`.
    pub segments: Vec<GapSegment>,
}

impl Gap {
    /// Its length (nanoseconds).
    pub fn duration(&self) -> Nanos {
        self.end - self.start
    }

    /// The cause that covers most of the gap (the earliest in priority order on a tie).
    pub fn cause(&self) -> GapCause {
        let mut totals: Vec<(GapCause, Nanos)> = vec![];
        for s in &self.segments {
            match totals.iter_mut().find(|(c, _)| *c == s.cause) {
                Some((_, n)) => *n += s.end - s.start,
                None => totals.push((s.cause, s.end - s.start)),
            }
        }
        totals
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.index().cmp(&a.0.index())))
            .map_or(GapCause::NoWork, |(c, _)| c)
    }

    /// The cause at time `t`, if `t` is inside the gap.
    pub fn cause_at(&self, t: Nanos) -> Option<GapCause> {
        self.segments
            .iter()
            .find(|s| s.start <= t && t < s.end)
            .map(|s| s.cause)
    }
}

/// One device's gaps over a window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceGaps {
    /// The device id (`gpu0`).
    pub device: String,
    /// The window's start (nanoseconds since session start).
    pub from: Nanos,
    /// The window's end (nanoseconds since session start).
    pub to: Nanos,
    /// Time with at least one compute span.
    pub busy: Nanos,
    /// Time without: the sum of the gaps.
    pub idle: Nanos,
    /// Idle time per cause key (every key of `GapCause::KEYS`, zero included).
    pub by_cause: BTreeMap<&'static str, Nanos>,
    /// What lies behind `lock_held`, `alloc`, `waiting_synthesis` and `no_work`.
    pub detail: GapDetail<Nanos>,
    /// The gaps in the window, in time order.
    pub gaps: Vec<Gap>,
}

impl DeviceGaps {
    /// Seconds lost per cause.
    pub fn seconds_by_cause(&self) -> BTreeMap<&'static str, f64> {
        self.by_cause
            .iter()
            .map(|(k, v)| (*k, *v as f64 / 1e9))
            .collect()
    }

    /// The gap containing `t`, if any (gaps are sorted, so this is a binary search).
    pub fn gap_at(&self, t: Nanos) -> Option<&Gap> {
        let i = self.gaps.partition_point(|g| g.end <= t);
        self.gaps.get(i).filter(|g| g.start <= t)
    }
}
