//! The devices kept free for CRITICAL work on its way. From the start of a CRITICAL
//! partition's synthesis until its region starts, ordinary partitions do not start their
//! kernels (their uploads go on), so the partition finds the GPU free instead of queued behind
//! a region that began meanwhile: on the H200 a WinningPoSt's first copy waited 30-72 ms for
//! the 8MiB PoRep region in flight even on streams of the highest priority, 2.0× its idle
//! latency at worst. Nothing running is interrupted, and a hold lapses after `HOLD_MAX`, so a
//! long CRITICAL synthesis costs the devices at most that much idle time.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest a hold keeps ordinary kernels waiting: a loaded 16-core host synthesises a
/// WinningPoSt in 85-130 ms.
pub(crate) const HOLD_MAX: Duration = Duration::from_millis(250);

/// The holds of CRITICAL partitions between their synthesis and their region.
pub(crate) struct Holds {
    /// When each live hold began, by id.
    live: Mutex<Vec<(u64, Instant)>>,
    changed: Condvar,
    next: AtomicU64,
    max: Duration,
}

/// One CRITICAL partition's hold, released when dropped (its region starts, or it fails or
/// is cancelled first).
pub(crate) struct Hold {
    holds: Arc<Holds>,
    id: u64,
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.holds.live.lock().retain(|(id, _)| *id != self.id);
        self.holds.changed.notify_all();
    }
}

impl Holds {
    /// Holds that lapse after `max`.
    pub fn new(max: Duration) -> Arc<Holds> {
        Arc::new(Holds {
            live: Mutex::default(),
            changed: Condvar::new(),
            next: AtomicU64::new(0),
            max,
        })
    }

    /// A hold for one CRITICAL partition, from now.
    pub fn hold(self: &Arc<Self>) -> Hold {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.live.lock().push((id, Instant::now()));
        Hold {
            holds: self.clone(),
            id,
        }
    }

    /// Waits while a hold younger than the lapse time is live; true when it waited.
    pub fn wait_clear(&self) -> bool {
        let mut live = self.live.lock();
        let mut waited = false;
        loop {
            let lapse = live.iter().map(|(_, t)| *t + self.max).max();
            match lapse {
                Some(at) if at > Instant::now() => {
                    waited = true;
                    self.changed.wait_until(&mut live, at);
                }
                _ => return waited,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn waiter(holds: &Arc<Holds>) -> (std::thread::JoinHandle<()>, Arc<AtomicBool>) {
        let (holds, passed) = (holds.clone(), Arc::new(AtomicBool::new(false)));
        let p = passed.clone();
        let t = std::thread::spawn(move || {
            holds.wait_clear();
            p.store(true, Ordering::SeqCst);
        });
        (t, passed)
    }

    #[test]
    fn ordinary_work_waits_for_a_hold_until_it_is_released() {
        let holds = Holds::new(Duration::from_secs(60));
        assert!(!holds.wait_clear(), "no hold, no wait");
        let hold = holds.hold();
        let (t, passed) = waiter(&holds);
        std::thread::sleep(Duration::from_millis(100));
        assert!(!passed.load(Ordering::SeqCst), "passed a live hold");
        drop(hold);
        t.join().unwrap();
        assert!(passed.load(Ordering::SeqCst));
    }

    #[test]
    fn a_hold_lapses_after_its_time() {
        let holds = Holds::new(Duration::from_millis(50));
        let _hold = holds.hold();
        let start = Instant::now();
        let (t, _) = waiter(&holds);
        t.join().unwrap();
        assert!(start.elapsed() >= Duration::from_millis(40));
        assert!(!holds.wait_clear(), "a lapsed hold holds nothing");
    }
}
