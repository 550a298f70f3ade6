//! Memory budgets: a limit in bytes and the reservations held against it, each giving its bytes
//! back when dropped. The engine keeps one for the host memory of partitions between synthesis
//! and their proof (the pipeline admits a partition against it), one for the page-locked blocks
//! of prestaged witnesses, and one per GPU for its device memory.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes held against a limit. Reservations are atomic: two takers never both get the last
/// room.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: AtomicU64,
    used: AtomicU64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes (`u64::MAX`: none but what allocation itself allows).
    pub fn new(limit: u64) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit: AtomicU64::new(limit),
            used: AtomicU64::new(0),
        })
    }

    /// The limit in bytes (`u64::MAX`: none).
    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Acquire)
    }

    /// A new limit; reservations held beyond it stay until they are dropped.
    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit, Ordering::Release);
    }

    /// Bytes the live reservations hold.
    pub fn in_use(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// Whether `bytes` more would fit under the limit now.
    pub fn fits(&self, bytes: u64) -> bool {
        self.fits_under(bytes, u64::MAX)
    }

    /// Whether `bytes` more would fit under `cap` and the limit now.
    pub fn fits_under(&self, bytes: u64, cap: u64) -> bool {
        self.in_use().saturating_add(bytes) <= cap.min(self.limit())
    }

    /// `bytes` under the limit, or None when they do not fit.
    pub fn try_reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        self.try_reserve_under(bytes, u64::MAX)
    }

    /// `bytes` under `cap` (a caller's lower bound, e.g. a region's `vram_budget`) and the
    /// limit, or None when they do not fit.
    pub fn try_reserve_under(self: &Arc<Self>, bytes: u64, cap: u64) -> Option<Reservation> {
        let cap = cap.min(self.limit());
        let mut used = self.in_use();
        loop {
            let after = used.checked_add(bytes).filter(|a| *a <= cap)?;
            match self
                .used
                .compare_exchange_weak(used, after, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(self.held(bytes)),
                Err(now) => used = now,
            }
        }
    }

    /// `bytes` whatever the limit: memory that is counted but was admitted otherwise (an
    /// allocation the budget does not gate, a partition admitted because nothing else runs).
    pub fn reserve(self: &Arc<Self>, bytes: u64) -> Reservation {
        self.used.fetch_add(bytes, Ordering::AcqRel);
        self.held(bytes)
    }

    fn held(self: &Arc<Self>, bytes: u64) -> Reservation {
        Reservation {
            budget: self.clone(),
            bytes,
        }
    }
}

/// Bytes held against a `MemoryBudget` until dropped (or `release`d).
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<MemoryBudget>,
    bytes: u64,
}

impl Reservation {
    /// Bytes it holds; 0 once released.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Gives the bytes back now, before the holder itself goes.
    pub fn release(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
        self.bytes = 0;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_hold_bytes_until_dropped_and_never_pass_the_limit() {
        let b = MemoryBudget::new(100);
        let r1 = b.try_reserve(60).expect("room");
        assert!(b.try_reserve(41).is_none());
        assert!(b.fits(40) && !b.fits(41));
        let r2 = b.try_reserve(40).expect("exactly the rest");
        assert_eq!((b.in_use(), r1.bytes() + r2.bytes()), (100, 100));
        drop(r1);
        assert_eq!(b.in_use(), 40);
        assert!(b.try_reserve_under(30, 69).is_none());
        let r3 = b.try_reserve_under(30, 70).expect("under the cap");
        // Counted beyond the limit, refused to others until it goes.
        let mut r4 = b.reserve(500);
        assert_eq!(b.in_use(), 570);
        assert!(b.try_reserve(0).is_none());
        r4.release();
        assert_eq!((b.in_use(), r4.bytes()), (70, 0));
        drop((r2, r3, r4));
        assert_eq!(b.in_use(), 0);
    }

    #[test]
    fn a_lower_limit_refuses_new_reservations_and_keeps_the_old() {
        let b = MemoryBudget::new(u64::MAX);
        let r = b.try_reserve(1 << 40).expect("no limit");
        b.set_limit(1 << 30);
        assert_eq!(b.in_use(), 1 << 40);
        assert!(b.try_reserve(1).is_none());
        drop(r);
        assert!(b.try_reserve(1 << 30).is_some());
        assert_eq!(b.in_use(), 0);
    }

    #[test]
    fn concurrent_takers_never_share_the_last_room() {
        let b = MemoryBudget::new(1000);
        let got: Vec<Reservation> = std::thread::scope(|s| {
            let jobs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        (0..1000)
                            .filter_map(|_| b.try_reserve(1))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            jobs.into_iter().flat_map(|j| j.join().unwrap()).collect()
        });
        assert_eq!((got.len(), b.in_use()), (1000, 1000));
        drop(got);
        assert_eq!(b.in_use(), 0);
    }
}
