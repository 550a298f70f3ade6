//! Why a device had no compute running: the causes, in the order the attribution tries them.

use serde::Serialize;

/// Why a device had no compute running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum GapCause {
    /// A worker of the device is allocating device memory.
    Alloc,
    /// A host-to-device copy is in flight.
    Upload,
    /// A worker is preparing inputs on the CPU inside its region.
    Prep,
    /// A device-to-host copy is in flight.
    Download,
    /// A worker waits for the device's lock while another holds it.
    LockHeld {
        /// The holder's worker number; `None` when no holder's region is in sight.
        holder: Option<u32>,
    },
    /// A worker is inside a partition's region but no span says what it does.
    Unattributed,
    /// Synthesised partitions wait but no worker of this device has taken one.
    Queued,
    /// Nothing is queued, but another device's worker holds a partition it waits to compute.
    Imbalance,
    /// Nothing is ready and partitions are being synthesised.
    WaitingSynthesis,
    /// Nothing is ready or being synthesised.
    NoWork,
}

impl GapCause {
    /// Every cause key, in priority order: the keys of `devices[].gaps` in `bench --json` and
    /// the `cause` label of `provetop_gpu_idle_seconds_total`.
    pub const KEYS: [&'static str; 10] = [
        "alloc",
        "upload",
        "prep",
        "download",
        "lock_held",
        "unattributed",
        "queued",
        "imbalance",
        "waiting_synthesis",
        "no_work",
    ];

    /// The cause's key in `KEYS` (its serde tag).
    pub fn key(&self) -> &'static str {
        Self::KEYS[self.index()]
    }

    pub(super) fn index(&self) -> usize {
        match self {
            GapCause::Alloc => 0,
            GapCause::Upload => 1,
            GapCause::Prep => 2,
            GapCause::Download => 3,
            GapCause::LockHeld { .. } => 4,
            GapCause::Unattributed => 5,
            GapCause::Queued => 6,
            GapCause::Imbalance => 7,
            GapCause::WaitingSynthesis => 8,
            GapCause::NoWork => 9,
        }
    }
}

impl std::fmt::Display for GapCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GapCause::LockHeld { holder: Some(w) } => write!(f, "lock held by worker {w}"),
            GapCause::LockHeld { holder: None } => f.write_str("lock held"),
            GapCause::Alloc => f.write_str("allocation"),
            GapCause::Upload => f.write_str("upload in flight"),
            GapCause::Prep => f.write_str("CPU prep"),
            GapCause::Download => f.write_str("download in flight"),
            GapCause::Unattributed => f.write_str("in a region, no span"),
            GapCause::Queued => f.write_str("partitions queued, no worker took one"),
            GapCause::Imbalance => f.write_str("another device holds queued work"),
            GapCause::WaitingSynthesis => f.write_str("waiting for synthesis"),
            GapCause::NoWork => f.write_str("no work"),
        }
    }
}
