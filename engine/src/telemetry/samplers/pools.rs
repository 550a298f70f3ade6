//! Busy fraction of each CPU pool, from the kernel's per-thread CPU time: the threads of a
//! pool are named `<pool>-<n>` (`synth-3`, `prover-0`, `cpu0-7`), so the CPU time its threads
//! used over a period, divided by the period times the pool's size, is how busy it was. This
//! costs the pools nothing (no counters on their hot paths) and counts what actually ran,
//! including work inside a task that spans do not resolve.
//!
//! Metrics: `cpu.pool.synthesis`, `cpu.pool.prover`, and `cpu.pool.<device>` for a cpu
//! executor's pool. Idle rayon threads spin briefly before they sleep, which shows as a few
//! percent of busy time on a pool that is nearly idle.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::Ctx;
use crate::telemetry::metrics;

const PERIOD: Duration = Duration::from_secs(1);

/// The pool a thread belongs to, from its name: `synth-N` → `synthesis`, `prover-N` →
/// `prover`, `cpu0-N` → `cpu0`. Worker threads (`cpu0-w1`) and others belong to none.
pub fn pool_of(thread_name: &str) -> Option<String> {
    let (base, n) = thread_name.rsplit_once('-')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || base.is_empty() {
        return None;
    }
    Some(match base {
        "synth" => "synthesis".to_string(),
        "prover" => "prover".to_string(),
        // An executor's pool: a device name, letters then digits (`cpu0`).
        b if b.trim_end_matches(|c: char| c.is_ascii_digit()).len() < b.len()
            && b.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && b.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            b.to_string()
        }
        _ => return None,
    })
}

/// CPU time a thread has used, in nanoseconds: `schedstat` where the kernel has it, else
/// user + system time from `stat` (clock ticks).
fn cpu_ns(task: &Path, ticks: f64) -> Option<u64> {
    if let Ok(s) = std::fs::read_to_string(task.join("schedstat")) {
        if let Some(ns) = s.split_whitespace().next().and_then(|v| v.parse().ok()) {
            return Some(ns);
        }
    }
    let stat = std::fs::read_to_string(task.join("stat")).ok()?;
    // Fields after the parenthesised name: state is field 3; utime, stime are 14, 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some(((utime + stime) / ticks * 1e9) as u64)
}

/// Per thread of this process: (tid, pool, CPU ns). Thread names are read once per tid.
struct Tasks {
    names: HashMap<u32, Option<String>>,
    ticks: f64,
}

impl Tasks {
    fn new() -> Self {
        // SAFETY: sysconf has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        Tasks {
            names: HashMap::new(),
            ticks: if ticks > 0 { ticks as f64 } else { 100.0 },
        }
    }

    fn read(&mut self) -> Vec<(u32, String, u64)> {
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
            return vec![];
        };
        let mut out = vec![];
        let mut alive = vec![];
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            alive.push(tid);
            let path = e.path();
            let pool = self
                .names
                .entry(tid)
                .or_insert_with(|| {
                    std::fs::read_to_string(path.join("comm"))
                        .ok()
                        .and_then(|n| pool_of(n.trim()))
                })
                .clone();
            if let Some(pool) = pool {
                if let Some(ns) = cpu_ns(&path, self.ticks) {
                    out.push((tid, pool, ns));
                }
            }
        }
        self.names.retain(|t, _| alive.contains(t));
        out
    }
}

/// Busy fraction per pool between two readings `dt_ns` apart: CPU time of the threads seen
/// in both, over `dt_ns` times the pool's threads now.
pub fn busy(
    before: &[(u32, String, u64)],
    after: &[(u32, String, u64)],
    dt_ns: u64,
) -> Vec<(String, f64)> {
    let mut pools: Vec<(String, u64, usize)> = vec![];
    for (tid, pool, ns) in after {
        let used = before
            .iter()
            .find(|b| b.0 == *tid)
            .map_or(0, |b| ns.saturating_sub(b.2));
        match pools.iter_mut().find(|p| &p.0 == pool) {
            Some(p) => {
                p.1 += used;
                p.2 += 1;
            }
            None => pools.push((pool.clone(), used, 1)),
        }
    }
    pools
        .into_iter()
        .map(|(p, used, n)| {
            let f = used as f64 / (dt_ns.max(1) as f64 * n as f64);
            (p, f.clamp(0.0, 1.0))
        })
        .collect()
}

/// CPU seconds used so far by this process's live threads whose name `pick` accepts (thread
/// names are at most 15 bytes on Linux). Telemetry measures its own samplers with it.
pub fn threads_cpu_seconds(pick: impl Fn(&str) -> bool) -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    let ticks = Tasks::new().ticks;
    dir.flatten()
        .filter(|e| std::fs::read_to_string(e.path().join("comm")).is_ok_and(|n| pick(n.trim())))
        .filter_map(|e| cpu_ns(&e.path(), ticks))
        .sum::<u64>() as f64
        / 1e9
}

/// Whether a thread is one of telemetry's own: a sampler or the metrics exporter.
pub fn is_telemetry_thread(name: &str) -> bool {
    name.starts_with("sampler-") || name.starts_with("metrics-")
}

pub(super) fn run(ctx: &Ctx) {
    if !Path::new("/proc/self/task").is_dir() {
        tracing::info!("no /proc/self/task; the pool sampler is off");
        return;
    }
    let mut tasks = Tasks::new();
    let mut before = tasks.read();
    let mut t0 = ctx.now();
    while ctx.sleep(PERIOD) {
        let after = tasks.read();
        let t = ctx.now();
        for (pool, f) in busy(&before, &after, t - t0) {
            ctx.emit_at(t, format!("{}{pool}", metrics::CPU_POOL_PREFIX), None, f);
        }
        (before, t0) = (after, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_names_map_to_pools() {
        assert_eq!(pool_of("synth-0").as_deref(), Some("synthesis"));
        assert_eq!(pool_of("prover-12").as_deref(), Some("prover"));
        assert_eq!(pool_of("cpu0-3").as_deref(), Some("cpu0"));
        assert_eq!(pool_of("cpu0-w1"), None, "a device worker");
        assert_eq!(pool_of("dispatcher"), None);
        assert_eq!(pool_of("sampler-ddr"), None);
        assert_eq!(pool_of("tokio-runtime-w"), None);
        assert_eq!(pool_of("gpu1-0").as_deref(), Some("gpu1"));
        assert_eq!(pool_of("foo-1"), None);
    }

    #[test]
    fn busy_is_cpu_time_over_wall_and_threads() {
        let before = vec![(1, "synthesis".into(), 0), (2, "synthesis".into(), 0)];
        let after = vec![
            (1, "synthesis".into(), 500),
            (2, "synthesis".into(), 300),
            (3, "prover".into(), 999),
        ];
        let b = busy(&before, &after, 1000);
        assert_eq!(b[0], ("synthesis".into(), 0.4));
        assert_eq!(b[1], ("prover".into(), 0.0), "a new thread has no baseline");
    }

    #[test]
    fn telemetry_threads_are_measured() {
        assert!(is_telemetry_thread("sampler-ddr") && is_telemetry_thread("metrics-http"));
        assert!(!is_telemetry_thread("prover-0"));
        let h = std::thread::Builder::new()
            .name("sampler-test".into())
            .spawn(|| {
                let t = std::time::Instant::now();
                while t.elapsed() < Duration::from_millis(60) {
                    std::hint::black_box(0u64);
                }
                std::thread::sleep(Duration::from_millis(300));
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(150));
        let used = threads_cpu_seconds(|n| n == "sampler-test");
        assert!(used > 0.005 && used < 1.0, "{used}");
        h.join().unwrap();
    }

    #[test]
    fn this_process_threads_are_read() {
        let h = std::thread::Builder::new()
            .name("prover-77".into())
            .spawn(|| {
                let t = std::time::Instant::now();
                let mut x = 0u64;
                while t.elapsed() < Duration::from_millis(50) {
                    x = x.wrapping_add(std::hint::black_box(1));
                }
                std::thread::sleep(Duration::from_millis(200));
                x
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let mut tasks = Tasks::new();
        let seen = tasks.read();
        assert!(
            seen.iter()
                .any(|(_, p, ns)| p == "prover" && *ns >= 10_000_000),
            "{seen:?}"
        );
        h.join().unwrap();
    }
}
