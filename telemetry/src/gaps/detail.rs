//! What lies behind four causes, deep enough to act on: for each, its time split by reason (the
//! parts sum to the cause's time), and for `alloc` the memory at stake. `devices[].gap_detail`
//! of `bench --json` is this in seconds.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::Nanos;

/// `lock_held` without a holder in sight (the waiter started before any holder's region).
pub const HOLDER_UNKNOWN: &str = "unknown";
/// `lock_held` while the holder runs no span: `after_<stage>` names its last one.
pub const HOLDER_AFTER: &str = "after_";

/// `alloc` while the allocating worker also waits for its lock (the memory gate).
pub const ALLOC_LOCK: &str = "waiting_for_lock";
/// `alloc` while the worker allocates.
pub const ALLOC_ALLOCATING: &str = "allocating";

/// `waiting_synthesis` with host memory bandwidth pressed (`host.ddr.pressure` ≥ `DDR_HIGH`).
pub const SYNTH_BANDWIDTH: &str = "memory_bandwidth";
/// `waiting_synthesis` with the synthesis pool busy (≥ `POOL_BUSY`): too few cores for it.
pub const SYNTH_CORES: &str = "cores";
/// `waiting_synthesis` with the pool's threads partly idle: too few synthesis workers.
pub const SYNTH_WORKERS: &str = "workers";
/// `waiting_synthesis` without host samples (telemetry's samplers off).
pub const SYNTH_UNKNOWN: &str = "unknown";

/// `no_work` before the first job was submitted.
pub const IDLE_START: &str = "run_start";
/// `no_work` with partitions pending that synthesis has not started.
pub const IDLE_PENDING: &str = "pending_not_started";
/// `no_work` between submissions: more jobs came later, too few were in flight.
pub const IDLE_FEW_JOBS: &str = "too_few_jobs";
/// `no_work` after the last submission seen: the run's end.
pub const IDLE_END: &str = "run_end";

/// DDR pressure from which synthesis is taken to be starved of bandwidth: the probe streams
/// at half its idle rate.
pub const DDR_HIGH: f64 = 0.5;
/// Busy fraction from which the synthesis pool counts as out of cores.
pub const POOL_BUSY: f64 = 0.9;

/// The reasons behind a device's gaps over a window, `T` being nanoseconds or seconds. Causes
/// without time are left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GapDetail<T> {
    /// Time by the lock holder's stage at the moment: a span's stage key, `after_<stage>`
    /// (no span since that one: host work the engine does not time) or `unknown`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub lock_held: BTreeMap<String, T>,
    /// Why allocations waited and the memory at stake; `None` when no time went to `alloc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc: Option<AllocDetail<T>>,
    /// `memory_bandwidth`, `cores`, `workers` or `unknown`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub waiting_synthesis: BTreeMap<&'static str, T>,
    /// `run_start`, `pending_not_started`, `too_few_jobs` or `run_end`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub no_work: BTreeMap<&'static str, T>,
}

/// Allocation waits: why, and the device memory at stake while they lasted.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AllocDetail<T> {
    /// `waiting_for_lock` or `allocating`.
    pub reasons: BTreeMap<&'static str, T>,
    /// The most bytes one allocation asked for (0: the worker's buffers were kept, or a
    /// recording from before allocations carried their size).
    pub wanted_bytes: u64,
    /// The least device memory free (`vram.total` − `vram.reserved`), where NVML is sampled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_bytes: Option<f64>,
    /// The most the engine held by purpose (`vram.used.<purpose>`: srs, abc, buckets, scratch).
    pub held_bytes: BTreeMap<String, f64>,
    /// Time each other worker of the device held a partition (and its buffers): `worker N`.
    pub held_by: BTreeMap<String, T>,
}

fn add<K: Ord>(map: &mut BTreeMap<K, Nanos>, key: K, d: Nanos) {
    *map.entry(key).or_default() += d;
}

impl GapDetail<Nanos> {
    pub(super) fn lock_held(&mut self, holder_stage: String, d: Nanos) {
        add(&mut self.lock_held, holder_stage, d);
    }

    pub(super) fn waiting_synthesis(&mut self, reason: &'static str, d: Nanos) {
        add(&mut self.waiting_synthesis, reason, d);
    }

    pub(super) fn no_work(&mut self, reason: &'static str, d: Nanos) {
        add(&mut self.no_work, reason, d);
    }

    pub(super) fn alloc(&mut self) -> &mut AllocDetail<Nanos> {
        self.alloc.get_or_insert_with(AllocDetail::default)
    }

    /// The reason behind `cause` in a few words, for a gap line: its largest part with its
    /// share (`cores 80 %`; `msm_h` for `lock_held`), and for `alloc` the bytes wanted. None for
    /// a cause without detail or without time.
    pub fn why(&self, cause: &str) -> Option<String> {
        fn top<K: AsRef<str>>(m: &BTreeMap<K, Nanos>) -> Option<String> {
            let total: Nanos = m.values().sum();
            let (k, v) = m.iter().max_by_key(|(_, v)| **v)?;
            if total == 0 {
                return None;
            }
            if *v == total {
                return Some(k.as_ref().to_string());
            }
            Some(format!(
                "{} {:.0} %",
                k.as_ref(),
                *v as f64 * 100.0 / total as f64
            ))
        }
        match cause {
            "lock_held" => top(&self.lock_held).map(|h| format!("holder in {h}")),
            "waiting_synthesis" => {
                top(&self.waiting_synthesis).map(|r| format!("short of {}", r.replace('_', " ")))
            }
            "no_work" => top(&self.no_work).map(|r| {
                [
                    (IDLE_START, "before the first job"),
                    (IDLE_PENDING, "partitions pending, none in synthesis"),
                    (IDLE_FEW_JOBS, "too few jobs in flight"),
                    (IDLE_END, "after the last job"),
                ]
                .iter()
                .fold(r, |r, (key, text)| r.replacen(key, text, 1))
            }),
            "alloc" => {
                let a = self.alloc.as_ref()?;
                let r = top(&a.reasons)?;
                Some(match a.wanted_bytes {
                    0 => r,
                    w => format!("{r}, {:.1} GB wanted", w as f64 / 1e9),
                })
            }
            _ => None,
        }
    }

    /// The same in seconds.
    pub fn seconds(&self) -> GapDetail<f64> {
        GapDetail {
            lock_held: seconds(&self.lock_held),
            alloc: self.alloc.as_ref().map(|a| AllocDetail {
                reasons: seconds(&a.reasons),
                wanted_bytes: a.wanted_bytes,
                free_bytes: a.free_bytes,
                held_bytes: a.held_bytes.clone(),
                held_by: seconds(&a.held_by),
            }),
            waiting_synthesis: seconds(&self.waiting_synthesis),
            no_work: seconds(&self.no_work),
        }
    }
}

impl AllocDetail<Nanos> {
    pub(super) fn reason(&mut self, reason: &'static str, d: Nanos) {
        add(&mut self.reasons, reason, d);
    }

    pub(super) fn held_by(&mut self, worker: u32, d: Nanos) {
        add(&mut self.held_by, format!("worker {worker}"), d);
    }

    /// Memory seen while waiting: wanted and held are maxima, free a minimum.
    pub(super) fn memory(&mut self, wanted: u64, free: Option<f64>, held: Vec<(String, f64)>) {
        self.wanted_bytes = self.wanted_bytes.max(wanted);
        if let Some(f) = free {
            self.free_bytes = Some(self.free_bytes.map_or(f, |x| x.min(f)));
        }
        for (purpose, bytes) in held {
            let h = self.held_bytes.entry(purpose).or_insert(bytes);
            *h = h.max(bytes);
        }
    }
}

fn seconds<K: Ord + Clone>(m: &BTreeMap<K, Nanos>) -> BTreeMap<K, f64> {
    m.iter()
        .map(|(k, v)| (k.clone(), *v as f64 / 1e9))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn why_names_the_largest_reason_and_its_share() {
        let mut d = GapDetail::<Nanos>::default();
        assert_eq!(d.why("waiting_synthesis"), None);
        d.waiting_synthesis(SYNTH_CORES, 80);
        d.waiting_synthesis(SYNTH_WORKERS, 20);
        assert_eq!(d.why("waiting_synthesis").unwrap(), "short of cores 80 %");
        d.lock_held("msm_h".into(), 5);
        assert_eq!(d.why("lock_held").unwrap(), "holder in msm_h");
        d.alloc().reason(ALLOC_LOCK, 3);
        d.alloc().memory(3_100_000_000, None, vec![]);
        assert_eq!(d.why("alloc").unwrap(), "waiting_for_lock, 3.1 GB wanted");
        assert_eq!(d.why("upload"), None);
        d.no_work(IDLE_FEW_JOBS, 3);
        d.no_work(IDLE_END, 1);
        assert_eq!(d.why("no_work").unwrap(), "too few jobs in flight 75 %");
    }
}
