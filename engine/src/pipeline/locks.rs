//! Lock strategies: how the workers of one device share it. Each is one small implementation
//! of `DeviceLock`; a worker takes the device's current strategy at the start of a partition
//! and keeps it to the end, so a swap applies between partitions. A worker with a CRITICAL
//! partition goes before the others waiting for the same lock (never interrupting the one
//! that holds it): a WinningPoSt sent while 8MiB PoReps filled the GPU waited for the region
//! in flight and then for the next worker's, 2.4× its idle latency where a block has ~30 s.

use parking_lot::{Condvar, Mutex};
use std::time::Instant;

use crate::backend::{Engine, Gate, Steps};
use crate::config::LockStrategy;
use crate::telemetry::Stage;

/// A lock strategy of one device: what its workers wait for before staging memory and before
/// computing.
pub trait DeviceLock: Send + Sync {
    /// The strategy this lock implements.
    fn strategy(&self) -> LockStrategy;
    /// A gate for one partition (`urgent`: a CRITICAL one, first among the waiters); the locks
    /// it takes are released when it is dropped.
    fn gate(&self, urgent: bool) -> Box<dyn Gate + '_>;
}

/// A fresh lock of `strategy`, held by no one.
pub fn new_lock(strategy: LockStrategy) -> Box<dyn DeviceLock> {
    match strategy {
        LockStrategy::Single => Box::new(Single::default()),
        LockStrategy::TwoLock => Box::new(TwoLock::default()),
        LockStrategy::None => Box::new(NoLock),
    }
}

/// A mutex whose urgent waiters go before the others.
#[derive(Default)]
struct Turn {
    state: Mutex<TurnState>,
    freed: Condvar,
}

#[derive(Default)]
struct TurnState {
    held: bool,
    urgent_waiting: usize,
}

/// A held `Turn`, given back when dropped.
struct Held<'a>(&'a Turn);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.state.lock().held = false;
        // every waiter looks again: an urgent one may be among them
        self.0.freed.notify_all();
    }
}

impl Turn {
    fn take(&self, urgent: bool) -> Held<'_> {
        let mut st = self.state.lock();
        if urgent {
            st.urgent_waiting += 1;
            while st.held {
                self.freed.wait(&mut st);
            }
            st.urgent_waiting -= 1;
        } else {
            while st.held || st.urgent_waiting > 0 {
                self.freed.wait(&mut st);
            }
        }
        st.held = true;
        Held(self)
    }
}

/// Takes `turn`, recording the wait (zero when it was free) as a `lock_wait` step.
fn acquire<'a>(turn: &'a Turn, urgent: bool, steps: &mut Steps) -> Held<'a> {
    let start = Instant::now();
    let held = turn.take(urgent);
    steps.push(Stage::LockWait, Engine::Host, start, 0);
    held
}

/// One mutex around the whole GPU region: staging and kernels of one partition at a time.
#[derive(Default)]
struct Single(Turn);

struct SingleGate<'a> {
    lock: &'a Turn,
    urgent: bool,
    held: Option<Held<'a>>,
}

impl Gate for SingleGate<'_> {
    fn memory(&mut self, steps: &mut Steps) {
        if self.held.is_none() {
            self.held = Some(acquire(self.lock, self.urgent, steps));
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
    fn gate(&self, urgent: bool) -> Box<dyn Gate + '_> {
        Box::new(SingleGate {
            lock: &self.0,
            urgent,
            held: None,
        })
    }
}

/// A memory lock for allocation and staging, a compute lock for kernels: one worker stages
/// while another computes.
#[derive(Default)]
struct TwoLock {
    memory: Turn,
    compute: Turn,
}

struct TwoLockGate<'a> {
    locks: &'a TwoLock,
    urgent: bool,
    memory: Option<Held<'a>>,
    compute: Option<Held<'a>>,
}

impl Gate for TwoLockGate<'_> {
    fn memory(&mut self, steps: &mut Steps) {
        if self.memory.is_none() && self.compute.is_none() {
            self.memory = Some(acquire(&self.locks.memory, self.urgent, steps));
        }
    }
    fn compute(&mut self, steps: &mut Steps) {
        if self.compute.is_none() {
            // Staging is done: let the next worker stage while this one computes.
            self.memory = None;
            self.compute = Some(acquire(&self.locks.compute, self.urgent, steps));
        }
    }
}

impl DeviceLock for TwoLock {
    fn strategy(&self) -> LockStrategy {
        LockStrategy::TwoLock
    }
    fn gate(&self, urgent: bool) -> Box<dyn Gate + '_> {
        Box::new(TwoLockGate {
            locks: self,
            urgent,
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
    fn gate(&self, _urgent: bool) -> Box<dyn Gate + '_> {
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
                        let mut gate = lock.gate(false);
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
    fn an_urgent_waiter_goes_before_the_others_but_never_interrupts_the_holder() {
        for strategy in [LockStrategy::Single, LockStrategy::TwoLock] {
            let lock: Arc<dyn DeviceLock> = Arc::from(new_lock(strategy));
            let order = Arc::new(parking_lot::Mutex::new(vec![]));
            let mut holder = lock.gate(false);
            holder.compute(&mut Steps::default());
            let started = Arc::new(AtomicUsize::new(0));
            let waiter = |name: &'static str, urgent: bool, after_ms: u64| {
                let (lock, order, started) = (lock.clone(), order.clone(), started.clone());
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(after_ms));
                    started.fetch_add(1, Ordering::SeqCst);
                    let mut gate = lock.gate(urgent);
                    gate.compute(&mut Steps::default());
                    order.lock().push(name);
                })
            };
            // two ordinary waiters first, the urgent one last: it still goes first
            let a = waiter("normal-1", false, 0);
            let b = waiter("normal-2", false, 10);
            let c = waiter("critical", true, 40);
            // every waiter is about to wait; a loaded machine still needs a moment to get it there
            while started.load(Ordering::SeqCst) < 3 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            std::thread::sleep(std::time::Duration::from_millis(150));
            assert!(order.lock().is_empty(), "nobody passes the holder");
            drop(holder);
            [a, b, c].into_iter().for_each(|t| t.join().unwrap());
            let order = order.lock();
            assert_eq!(order[0], "critical", "{strategy:?}: {order:?}");
            assert_eq!(order.len(), 3);
        }
    }
}
