//! Lock strategies: how the workers of one device share it. Each is one small implementation
//! of `DeviceLock`; a worker takes the device's current strategy at the start of a partition
//! and keeps it to the end, so a swap applies between partitions. A CRITICAL partition passes
//! every lock and runs beside the region in flight (never interrupting it; the cuda backend
//! gives it the device's most urgent streams): a WinningPoSt that waited its turn behind 8MiB
//! PoReps took 2.1–2.4× its idle latency, where a block has ~30 s.

use parking_lot::{Mutex, MutexGuard};
use std::time::Instant;

use super::holds::Holds;
use crate::backend::{Engine, Gate, Steps};
use crate::config::LockStrategy;
use crate::telemetry::Stage;

/// A lock strategy of one device: what its workers wait for before staging memory and before
/// computing.
pub trait DeviceLock: Send + Sync {
    /// The strategy this lock implements.
    fn strategy(&self) -> LockStrategy;
    /// A gate for one ordinary partition; the locks it takes are released when it is dropped.
    fn gate(&self) -> Box<dyn Gate + '_>;
}

/// The gate of one partition on `lock`: an `urgent` (CRITICAL) one waits for no one; an
/// ordinary one also waits before its kernels while `holds` keeps the devices for CRITICAL work.
pub(crate) fn gate_for<'a>(
    lock: &'a dyn DeviceLock,
    urgent: bool,
    holds: &'a Holds,
) -> Box<dyn Gate + 'a> {
    match urgent {
        true => Box::new(Open),
        false => Box::new(Yielding {
            inner: lock.gate(),
            holds,
        }),
    }
}

/// An ordinary partition's gate: its kernels wait for the holds of CRITICAL work too.
struct Yielding<'a> {
    inner: Box<dyn Gate + 'a>,
    holds: &'a Holds,
}

impl Gate for Yielding<'_> {
    fn memory(&mut self, steps: &mut Steps) {
        self.inner.memory(steps);
    }
    fn compute(&mut self, steps: &mut Steps) {
        let start = Instant::now();
        if self.holds.wait_clear() {
            steps.push(Stage::LockWait, Engine::Host, start, 0);
        }
        self.inner.compute(steps);
    }
}

/// A fresh lock of `strategy`, held by no one.
pub fn new_lock(strategy: LockStrategy) -> Box<dyn DeviceLock> {
    match strategy {
        LockStrategy::Single => Box::new(Single::default()),
        LockStrategy::TwoLock => Box::new(TwoLock::default()),
        LockStrategy::None => Box::new(NoLock),
    }
}

/// Takes `lock`, recording the wait (zero when it was free) as a `lock_wait` step.
fn acquire<'a>(lock: &'a Mutex<()>, steps: &mut Steps) -> MutexGuard<'a, ()> {
    let start = Instant::now();
    let held = lock.lock();
    steps.push(Stage::LockWait, Engine::Host, start, 0);
    held
}

/// One mutex around the whole GPU region: staging and kernels of one partition at a time.
#[derive(Default)]
struct Single(Mutex<()>);

struct SingleGate<'a> {
    lock: &'a Mutex<()>,
    held: Option<MutexGuard<'a, ()>>,
}

impl Gate for SingleGate<'_> {
    fn memory(&mut self, steps: &mut Steps) {
        if self.held.is_none() {
            self.held = Some(acquire(self.lock, steps));
        }
    }
    fn compute(&mut self, steps: &mut Steps) {
        self.memory(steps);
    }
}

impl DeviceLock for Single {
    fn strategy(&self) -> LockStrategy {
        LockStrategy::Single
    }
    fn gate(&self) -> Box<dyn Gate + '_> {
        Box::new(SingleGate {
            lock: &self.0,
            held: None,
        })
    }
}

/// A memory lock for allocation and staging, a compute lock for kernels: one worker stages
/// while another computes.
#[derive(Default)]
struct TwoLock {
    memory: Mutex<()>,
    compute: Mutex<()>,
}

struct TwoLockGate<'a> {
    locks: &'a TwoLock,
    memory: Option<MutexGuard<'a, ()>>,
    compute: Option<MutexGuard<'a, ()>>,
}

impl Gate for TwoLockGate<'_> {
    fn memory(&mut self, steps: &mut Steps) {
        if self.memory.is_none() && self.compute.is_none() {
            self.memory = Some(acquire(&self.locks.memory, steps));
        }
    }
    fn compute(&mut self, steps: &mut Steps) {
        if self.compute.is_none() {
            // Staging is done: let the next worker stage while this one computes.
            self.memory = None;
            self.compute = Some(acquire(&self.locks.compute, steps));
        }
    }
}

impl DeviceLock for TwoLock {
    fn strategy(&self) -> LockStrategy {
        LockStrategy::TwoLock
    }
    fn gate(&self) -> Box<dyn Gate + '_> {
        Box::new(TwoLockGate {
            locks: self,
            memory: None,
            compute: None,
        })
    }
}

/// Workers own disjoint budgets and streams and never wait on each other.
struct NoLock;

struct Open;

impl Gate for Open {
    fn memory(&mut self, _: &mut Steps) {}
    fn compute(&mut self, _: &mut Steps) {}
}

impl DeviceLock for NoLock {
    fn strategy(&self) -> LockStrategy {
        LockStrategy::None
    }
    fn gate(&self) -> Box<dyn Gate + '_> {
        Box::new(Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Runs two workers through memory → compute → work, returning the most that computed at
    /// once and the most that staged while another computed.
    fn overlap(strategy: LockStrategy) -> (usize, usize) {
        let lock: Arc<dyn DeviceLock> = Arc::from(new_lock(strategy));
        let computing = Arc::new(AtomicUsize::new(0));
        let max_compute = Arc::new(AtomicUsize::new(0));
        let staged_during_compute = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let (lock, computing, max_compute, sdc) = (
                    lock.clone(),
                    computing.clone(),
                    max_compute.clone(),
                    staged_during_compute.clone(),
                );
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let mut steps = Steps::default();
                        let mut gate = lock.gate();
                        gate.memory(&mut steps);
                        // looked at the end of staging, not its start: the other worker needs
                        // a moment to wake and begin computing after this one took the lock
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        if computing.load(Ordering::SeqCst) > 0 {
                            sdc.fetch_add(1, Ordering::SeqCst);
                        }
                        gate.compute(&mut steps);
                        let now = computing.fetch_add(1, Ordering::SeqCst) + 1;
                        max_compute.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(2));
                        computing.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        (
            max_compute.load(Ordering::SeqCst),
            staged_during_compute.load(Ordering::SeqCst),
        )
    }

    #[test]
    fn strategies_allow_what_they_promise() {
        let (single, single_sdc) = overlap(LockStrategy::Single);
        assert_eq!(
            (single, single_sdc),
            (1, 0),
            "single serialises staging and compute"
        );
        let (two, two_sdc) = overlap(LockStrategy::TwoLock);
        assert_eq!(two, 1, "two-lock serialises compute");
        assert!(
            two_sdc > 0,
            "two-lock lets one worker stage while another computes"
        );
        let (none, _) = overlap(LockStrategy::None);
        assert_eq!(none, 2, "none lets workers compute together");
    }

    #[test]
    fn an_urgent_partition_passes_a_held_lock_and_ordinary_ones_wait() {
        for strategy in [LockStrategy::Single, LockStrategy::TwoLock] {
            let lock: Arc<dyn DeviceLock> = Arc::from(new_lock(strategy));
            let mut holder = lock.gate();
            holder.compute(&mut Steps::default());
            let through = |urgent: bool| {
                let (lock, done) = (lock.clone(), Arc::new(AtomicUsize::new(0)));
                let d = done.clone();
                let t = std::thread::spawn(move || {
                    let holds = Holds::new(std::time::Duration::ZERO);
                    let mut gate = gate_for(&*lock, urgent, &holds);
                    gate.memory(&mut Steps::default());
                    gate.compute(&mut Steps::default());
                    d.store(1, Ordering::SeqCst);
                });
                (t, done)
            };
            let (normal, normal_done) = through(false);
            let (critical, critical_done) = through(true);
            critical.join().unwrap();
            assert_eq!(critical_done.load(Ordering::SeqCst), 1, "{strategy:?}");
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert_eq!(
                normal_done.load(Ordering::SeqCst),
                0,
                "{strategy:?}: an ordinary partition waits for the holder"
            );
            drop(holder);
            normal.join().unwrap();
            assert_eq!(normal_done.load(Ordering::SeqCst), 1);
        }
    }
}
