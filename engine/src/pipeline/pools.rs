//! The synthesis pools: `synthesis_threads` divided among `synthesis_workers` small rayon pools,
//! one partition on each at a time.
//!
//! One shared pool let a partition's parallel loops wait behind other partitions: a thread
//! waiting in a join takes any job in the pool, including another partition's whole synthesis,
//! and the waiting partition cannot finish before that one does (and whatever it took in turn).
//! On the H200 a 0.24 s witness then took up to 15 s, its slot held, while threads idled. A pool
//! of its own gives each partition its share of the cores and nothing else to take.
//!
//! Synthesis threads run at a lower priority (nice +10): they always have work, and a device
//! worker waking from a synchronisation, the lock or the prover pool's finalizer would
//! otherwise wait for a time slice while the GPU idles (on the H200's host with 16 busy
//! synthesis threads, 13 ms a partition from one region's last kernel to the next's first).
//!
//! A `CRITICAL` partition does not wait for a worker's pool: it runs on a pool of its own with
//! every synthesis thread, at the usual priority, so the kernel gives it the cores the other
//! partitions' syntheses were using (nice 0 against +10: about nine tenths of them) without
//! stopping those.

use anyhow::Result;
use rayon::ThreadPool;
use std::sync::Arc;

use super::state::pool_with;

/// How much lower synthesis threads run than the device workers and the prover pool.
const SYNTHESIS_NICE: i32 = 10;

/// One worker's pool, and which set of pools it came from.
pub(crate) struct SynthesisPool {
    pub pool: Arc<ThreadPool>,
    generation: u64,
    /// The critical pool, shared: never one of the idle ones.
    critical: bool,
}

pub(crate) struct SynthesisPools {
    idle: Vec<Arc<ThreadPool>>,
    /// Every synthesis thread again, at the usual priority, for critical partitions.
    critical: Option<Arc<ThreadPool>>,
    /// Bumped whenever the pools are rebuilt: a pool of an older set is dropped when its
    /// partition ends instead of coming back.
    generation: u64,
}

impl SynthesisPools {
    pub fn new(workers: usize, threads: usize) -> Result<Self> {
        let mut pools = SynthesisPools {
            idle: vec![],
            critical: None,
            generation: 0,
        };
        pools.rebuild(workers, threads)?;
        Ok(pools)
    }

    /// Replaces every pool: `threads` split as evenly as can be, at least one each.
    pub fn rebuild(&mut self, workers: usize, threads: usize) -> Result<()> {
        let workers = workers.max(1);
        self.generation += 1;
        self.idle = (0..workers)
            .map(|i| {
                // at least one: rayon takes 0 to mean one a core
                let n = threads / workers + usize::from(i < threads % workers);
                synthesis_pool(n.max(1))
            })
            .collect::<Result<_>>()?;
        self.critical = Some(pool_with("critical", threads.max(1), || {})?);
        Ok(())
    }

    /// Whether a partition may start: the dispatcher admits at most `synthesis_workers`
    /// partitions, so one of the current set is idle whenever it may.
    pub fn has_idle(&self) -> bool {
        !self.idle.is_empty()
    }

    /// A pool for one partition, if one is idle.
    pub fn take(&mut self) -> Option<SynthesisPool> {
        let pool = self.idle.pop()?;
        Some(SynthesisPool {
            pool,
            generation: self.generation,
            critical: false,
        })
    }

    /// The pool of critical partitions, shared by all of them.
    pub fn take_critical(&self) -> Option<SynthesisPool> {
        Some(SynthesisPool {
            pool: self.critical.clone()?,
            generation: self.generation,
            critical: true,
        })
    }

    /// Gives a partition's pool back once its synthesis is over.
    pub fn give_back(&mut self, p: SynthesisPool) {
        if p.generation == self.generation && !p.critical {
            self.idle.push(p.pool);
        }
    }
}

fn synthesis_pool(threads: usize) -> Result<Arc<ThreadPool>> {
    pool_with("synth", threads, lower_priority)
}

/// Lowers the calling thread's scheduling priority by [`SYNTHESIS_NICE`]. Best effort: where
/// it cannot be done the thread runs at the usual priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take and return plain integers; on Linux a thread id
    // names just the calling thread (nice is per thread), and nothing is read or written
    // through a pointer.
    unsafe {
        let tid = libc::gettid();
        let now = libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t);
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, now + SYNTHESIS_NICE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn synthesis_threads_run_below_the_callers_priority() {
        // SAFETY: as in lower_priority.
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let mine = nice();
        let p = synthesis_pool(1).unwrap();
        assert_eq!(p.install(nice), (mine + SYNTHESIS_NICE).min(19));
    }

    #[test]
    fn threads_are_divided_and_old_pools_do_not_come_back() {
        let mut p = SynthesisPools::new(3, 8).unwrap();
        let mut sizes: Vec<usize> = p.idle.iter().map(|t| t.current_num_threads()).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, [2, 3, 3]);
        let running = p.take().unwrap();
        p.rebuild(2, 1).unwrap();
        assert!(p.idle.iter().all(|t| t.current_num_threads() == 1));
        p.give_back(running);
        assert_eq!(p.idle.len(), 2, "a pool of the old set came back");
        let a = p.take().unwrap();
        assert_eq!(p.idle.len(), 1);
        p.give_back(a);
        assert_eq!(p.idle.len(), 2);
        // The critical pool has every thread, is there with no pool idle, and is never idle.
        let (x, y) = (p.take().unwrap(), p.take().unwrap());
        let c = p.take_critical().unwrap();
        assert_eq!(c.pool.current_num_threads(), 1);
        p.give_back(c);
        assert!(!p.has_idle());
        p.give_back(x);
        p.give_back(y);
        assert_eq!(p.idle.len(), 2);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_critical_pool_runs_at_the_callers_priority() {
        // SAFETY: as in lower_priority.
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let p = SynthesisPools::new(2, 4).unwrap();
        let c = p.take_critical().unwrap();
        assert_eq!(c.pool.current_num_threads(), 4);
        assert_eq!(c.pool.install(nice), nice());
    }
}
