//! The reasons behind one moment of a gap, for the causes that have them: what the lock's
//! holder was doing, why an allocation took time and what memory was at stake, what
//! synthesis lacked, and whether no work meant too few jobs in flight or the run's start or
//! end. The sweep calls it for stretches in which nothing it reads changes.

use std::collections::BTreeMap;

use super::detail::*;
use super::levels::SYNTHESIS_POOL;
use super::sweep::{Who, Worker};
use super::{GapAnalyzer, GapCause, GapDetail};
use crate::{metrics, Nanos, Stage};

/// A stretch [from, to) of a device's gap and its workers then.
pub(super) struct Moment<'a> {
    pub(super) device: &'a str,
    pub(super) workers: &'a BTreeMap<Who, Worker>,
    pub(super) from: Nanos,
    pub(super) to: Nanos,
}

impl GapAnalyzer {
    pub(super) fn explain(&self, cause: GapCause, at: &Moment<'_>, detail: &mut GapDetail<Nanos>) {
        let d = at.to - at.from;
        match cause {
            GapCause::LockHeld { holder } => {
                let partition = holder
                    .and_then(|w| at.workers.get(&Who::Worker(w)))
                    .and_then(|w| w.partition);
                let stage = partition.map_or(HOLDER_UNKNOWN.to_string(), |k| {
                    self.holder_stage(k, at.from)
                });
                detail.lock_held(stage, d);
            }
            GapCause::Alloc => self.alloc_reason(at, detail.alloc()),
            GapCause::WaitingSynthesis => {
                detail.waiting_synthesis(self.synthesis_reason(at.from), d)
            }
            GapCause::NoWork => detail.no_work(self.idle_reason(at.from), d),
            _ => {}
        }
    }

    /// What the holder of partition `k` was doing at `t`: the stage of one of its spans running
    /// then (on any lane), else `after_<stage>` of the last one that ended.
    fn holder_stage(&self, k: (u64, u32), t: Nanos) -> String {
        let spans = self.partition_spans.get(&k).map_or(&[][..], Vec::as_slice);
        let running = spans
            .iter()
            .filter(|s| s.0 <= t && t < s.1 && s.2 != Stage::LockWait)
            .map(|s| s.2)
            .min();
        if let Some(stage) = running {
            return stage.key().to_string();
        }
        spans
            .iter()
            .filter(|s| s.1 <= t)
            .max_by_key(|s| (s.1, s.2))
            .map_or(HOLDER_UNKNOWN.to_string(), |s| {
                format!("{HOLDER_AFTER}{}", s.2.key())
            })
    }

    /// An allocation waits for the lock (the memory gate inside it) or allocates; the other
    /// workers in a region hold their buffers meanwhile.
    fn alloc_reason(&self, at: &Moment<'_>, a: &mut AllocDetail<Nanos>) {
        let d = at.to - at.from;
        let allocating: Vec<&Worker> = at.workers.values().filter(|w| w.allocating > 0).collect();
        let locked = allocating.iter().any(|w| w.waits > 0);
        a.reason(if locked { ALLOC_LOCK } else { ALLOC_ALLOCATING }, d);
        for (n, w) in at.workers {
            if let (Some(n), true) = (n.worker(), w.regions > 0 && w.allocating == 0) {
                a.held_by(n, d);
            }
        }
        let wanted = allocating.iter().map(|w| w.wanted).max().unwrap_or(0);
        let free = self.levels.free(at.device, at.from);
        a.memory(wanted, free, self.levels.held(at.device, at.from));
    }

    /// Bandwidth before cores: a pool stalled on memory still reads as busy.
    fn synthesis_reason(&self, t: Nanos) -> &'static str {
        let ddr = self.levels.global(metrics::HOST_DDR_PRESSURE, t);
        let pool = self.levels.global(SYNTHESIS_POOL, t);
        match (ddr, pool) {
            (Some(p), _) if p >= DDR_HIGH => SYNTH_BANDWIDTH,
            (_, Some(b)) if b >= POOL_BUSY => SYNTH_CORES,
            (_, Some(_)) => SYNTH_WORKERS,
            _ => SYNTH_UNKNOWN,
        }
    }

    /// Nothing ready and nothing in synthesis: before the first job, partitions held back,
    /// a lull between submissions (too few jobs in flight), or past the last one.
    fn idle_reason(&self, t: Nanos) -> &'static str {
        let before = self.submitted.partition_point(|s| *s <= t);
        if before == 0 {
            IDLE_START
        } else if self
            .levels
            .gauge(metrics::PIPELINE_PENDING, t)
            .is_some_and(|n| n > 0.0)
        {
            IDLE_PENDING
        } else if before < self.submitted.len() {
            IDLE_FEW_JOBS
        } else {
            IDLE_END
        }
    }
}
