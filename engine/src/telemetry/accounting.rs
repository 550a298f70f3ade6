//! The engine's own byte accounting, per device: PCIe bytes by direction, VRAM in use by
//! purpose, and host memory traffic of explicit host copies (pinned pre-staging).
//!
//! Executors update counters on their copy and allocation paths: each update is one relaxed
//! atomic add, no lock and no allocation. A sampler turns the counters into `Sample`s (rates
//! from deltas, VRAM as levels); the Prometheus exporter reports the cumulative byte counts.
//!
//! The registry is process-wide, keyed by device id (`gpu0`): a device's VRAM and link are
//! the same whichever engine in the process uses them, and executors need no plumbing to
//! reach it. On the cpu backend nothing registers, so nothing is reported.

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// What a VRAM allocation holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VramPurpose {
    /// Parameters (SRS bases) resident or streamed into the device.
    Srs,
    /// The a/b/c evaluations and the H polynomial's working vectors.
    Abc,
    /// MSM buckets and their sort/index buffers.
    Buckets,
    /// Everything else: temporaries, twiddles, results.
    Scratch,
}

impl VramPurpose {
    /// Every purpose, in the order `CountersSnapshot::vram` holds them.
    pub const ALL: [VramPurpose; 4] = [
        VramPurpose::Srs,
        VramPurpose::Abc,
        VramPurpose::Buckets,
        VramPurpose::Scratch,
    ];

    /// The suffix of the `vram.used.<key>` metric and the `purpose` label.
    pub fn key(self) -> &'static str {
        match self {
            VramPurpose::Srs => "srs",
            VramPurpose::Abc => "abc",
            VramPurpose::Buckets => "buckets",
            VramPurpose::Scratch => "scratch",
        }
    }
}

/// Direction of a copy over PCIe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Host to device.
    H2d,
    /// Device to host.
    D2h,
}

impl Direction {
    /// Short lower-case name: `h2d`, `d2h`.
    pub fn key(self) -> &'static str {
        match self {
            Direction::H2d => "h2d",
            Direction::D2h => "d2h",
        }
    }
}

/// One device's counters. Cheap to update from any thread.
#[derive(Debug)]
pub struct DeviceCounters {
    device: String,
    h2d: AtomicU64,
    d2h: AtomicU64,
    host_copy: AtomicU64,
    vram: [AtomicU64; 4],
}

/// A consistent-enough copy of one device's counters (each value is read atomically).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CountersSnapshot {
    /// The device id (`gpu0`).
    pub device: String,
    /// Cumulative bytes copied host to device.
    pub h2d_bytes: u64,
    /// Cumulative bytes copied device to host.
    pub d2h_bytes: u64,
    /// Cumulative bytes of host memory traffic of explicit host copies (read + write).
    pub host_copy_bytes: u64,
    /// VRAM in use now, by purpose, in `VramPurpose::ALL` order.
    pub vram: [u64; 4],
}

impl CountersSnapshot {
    /// VRAM in use now, bytes, all purposes together.
    pub fn vram_used(&self) -> u64 {
        self.vram.iter().sum()
    }

    /// VRAM in use now for `p`, bytes.
    pub fn vram_of(&self, p: VramPurpose) -> u64 {
        self.vram[p as usize]
    }

    /// Host memory traffic the engine accounts for: every PCIe copy reads or writes host
    /// memory once, and explicit host copies count what they read and wrote.
    pub fn host_bytes(&self) -> u64 {
        self.h2d_bytes + self.d2h_bytes + self.host_copy_bytes
    }
}

impl DeviceCounters {
    fn new(device: &str) -> Self {
        DeviceCounters {
            device: device.to_string(),
            h2d: AtomicU64::new(0),
            d2h: AtomicU64::new(0),
            host_copy: AtomicU64::new(0),
            vram: Default::default(),
        }
    }

    /// The device id these counters are of (`gpu0`).
    pub fn device(&self) -> &str {
        &self.device
    }

    /// Counts `bytes` copied in `dir` (call when the copy is issued or completes; once).
    #[inline]
    pub fn copied(&self, dir: Direction, bytes: u64) {
        match dir {
            Direction::H2d => self.h2d.fetch_add(bytes, Ordering::Relaxed),
            Direction::D2h => self.d2h.fetch_add(bytes, Ordering::Relaxed),
        };
    }

    /// Counts a host-side copy of `bytes` (e.g. into a pinned staging buffer): it reads and
    /// writes host memory, so it costs 2 × `bytes` of DDR traffic.
    #[inline]
    pub fn host_copied(&self, bytes: u64) {
        self.host_copy.fetch_add(2 * bytes, Ordering::Relaxed);
    }

    /// `bytes` of VRAM allocated for `purpose`.
    #[inline]
    pub fn allocated(&self, purpose: VramPurpose, bytes: u64) {
        self.vram[purpose as usize].fetch_add(bytes, Ordering::Relaxed);
    }

    /// `bytes` of VRAM for `purpose` freed. Never goes below zero, so a mismatched free shows
    /// as zero rather than as 18 exabytes.
    #[inline]
    pub fn freed(&self, purpose: VramPurpose, bytes: u64) {
        let _ =
            self.vram[purpose as usize].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(bytes))
            });
    }

    /// Sets the VRAM held for `purpose` (for allocators that know their level rather than
    /// their deltas).
    #[inline]
    pub fn set_vram(&self, purpose: VramPurpose, bytes: u64) {
        self.vram[purpose as usize].store(bytes, Ordering::Relaxed);
    }

    /// Every counter now, each read atomically (not all at one instant).
    pub fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            device: self.device.clone(),
            h2d_bytes: self.h2d.load(Ordering::Relaxed),
            d2h_bytes: self.d2h.load(Ordering::Relaxed),
            host_copy_bytes: self.host_copy.load(Ordering::Relaxed),
            vram: std::array::from_fn(|i| self.vram[i].load(Ordering::Relaxed)),
        }
    }
}

/// A registry of device counters.
#[derive(Default)]
pub struct Accounting {
    devices: RwLock<Vec<Arc<DeviceCounters>>>,
}

impl Accounting {
    /// An empty registry; executors report to `global`.
    pub fn new() -> Self {
        Accounting::default()
    }

    /// The counters of `device`, registered on first use. Executors call this once when
    /// they start and keep the `Arc`.
    pub fn device(&self, device: &str) -> Arc<DeviceCounters> {
        if let Some(d) = self.devices.read().iter().find(|d| d.device == device) {
            return d.clone();
        }
        let mut devices = self.devices.write();
        if let Some(d) = devices.iter().find(|d| d.device == device) {
            return d.clone();
        }
        let d = Arc::new(DeviceCounters::new(device));
        devices.push(d.clone());
        d
    }

    /// Every registered device's counters, in registration order.
    pub fn snapshot(&self) -> Vec<CountersSnapshot> {
        self.devices.read().iter().map(|d| d.snapshot()).collect()
    }

    /// Whether no device has registered (the cpu backend).
    pub fn is_empty(&self) -> bool {
        self.devices.read().is_empty()
    }
}

/// The process-wide registry executors report to.
pub fn global() -> &'static Accounting {
    static GLOBAL: OnceLock<Accounting> = OnceLock::new();
    GLOBAL.get_or_init(Accounting::new)
}

/// The counters of `device` in the process-wide registry.
pub fn device(device: &str) -> Arc<DeviceCounters> {
    global().device(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_and_never_underflow() {
        let acc = Accounting::new();
        let d = acc.device("gpu7");
        assert!(Arc::ptr_eq(&d, &acc.device("gpu7")), "one entry per device");
        d.copied(Direction::H2d, 100);
        d.copied(Direction::H2d, 50);
        d.copied(Direction::D2h, 7);
        d.host_copied(10);
        d.allocated(VramPurpose::Srs, 1000);
        d.allocated(VramPurpose::Buckets, 300);
        d.freed(VramPurpose::Buckets, 100);
        d.freed(VramPurpose::Scratch, 5);
        let s = &acc.snapshot()[0];
        assert_eq!((s.h2d_bytes, s.d2h_bytes, s.host_copy_bytes), (150, 7, 20));
        assert_eq!(s.vram, [1000, 0, 200, 0]);
        assert_eq!(s.vram_used(), 1200);
        assert_eq!(s.host_bytes(), 177);
        d.set_vram(VramPurpose::Abc, 64);
        assert_eq!(acc.snapshot()[0].vram_of(VramPurpose::Abc), 64);
    }

    #[test]
    fn updates_from_many_threads_are_not_lost() {
        let acc = Arc::new(Accounting::new());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let d = acc.device("gpu0");
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        d.copied(Direction::D2h, 3);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(acc.snapshot()[0].d2h_bytes, 120_000);
    }
}
