//! Samplers: threads that read counters at their own rates and publish `Event::Sample`s
//! named in `metrics`. None of them touches the proving path: they read the engine's atomic
//! byte accounting, its status, the kernel's per-thread CPU time, NVML, sysinfo, and a small
//! memory-bandwidth probe.
//!
//! | sampler | period | metrics |
//! |---|---|---|
//! | `nvml` | 500 ms (GPM 1 s) | `vram.reserved`, `vram.total`, `gpu.util`, `gpu.mem_util`, `gpu.clock.*`, `gpu.power`, `gpu.temp`, `nvml.pcie.*`, `pcie.link.*`, `pcie.ceiling`, GPM `nvml.gpm.pcie.*`, `gpu.dram_util`, `gpu.sm_util`, `gpu.sm_occupancy` |
//! | `system` | 1 s | `cpu.core.N`, `host.ram.used`, `host.ram.total`, `process.rss` |
//! | `pools` | 1 s | `cpu.pool.synthesis`, `cpu.pool.prover`, `cpu.pool.<device>` |
//! | `accounting` | 250 ms | `vram.used`, `vram.used.<purpose>`, `pcie.h2d`, `pcie.d2h`, `pcie.*.total` |
//! | `pipeline` | 250 ms | `pipeline.pending`, `pipeline.synthesizing`, `pipeline.queued`, `pipeline.proving`, `params.tier.<set>`, `params.bytes.<set>`, `params.users.<set>` |
//! | `ddr` | 1 s | `host.ddr`, `host.ddr.source.<source>`, `host.ddr.pressure`, `host.ddr.idle`, `host.ddr.probe.*`, `host.engine_bytes` |
//!
//! A sampler whose source is missing (no NVML, no counters) logs once and stops, or falls
//! back (the DDR sampler to its probe); nothing fails because of it.

pub mod ddr;
mod nvml;
pub mod pools;
mod system;

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use super::accounting::{self, Accounting};
use super::{metrics, Bus, Clock, Event, Sample};

/// Pipeline depths: what the pipeline sampler publishes, filled from the engine's status (the
/// samplers know nothing of the pipeline).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Depths {
    /// Partitions waiting for synthesis.
    pub pending: usize,
    /// Partitions in synthesis.
    pub synthesizing: usize,
    /// Synthesised partitions waiting for a device.
    pub queued: usize,
    /// Partitions on a device or in the finalizer.
    pub proving: usize,
    /// The parameter sets and their tiers.
    pub params: Vec<crate::params::residency::SetStatus>,
}

/// Reads the engine's depths; None once the engine is gone, which stops the pipeline sampler.
pub type DepthsFn = Box<dyn Fn() -> Option<Depths> + Send + 'static>;

/// What to sample.
pub struct SamplerOptions {
    /// GPUs (NVML indices) to watch; empty means all.
    pub gpus: Vec<u32>,
    /// Whether to run the NVML sampler (GPU utilisation, clocks, power, PCIe).
    pub nvml: bool,
    /// Whether to run the system sampler (per-core CPU, host RAM, process RSS).
    pub system: bool,
    /// Whether to run the thread-pool CPU sampler.
    pub pools: bool,
    /// Whether to run the DDR bandwidth sampler.
    pub ddr: bool,
    /// The byte accounting to sample (VRAM, PCIe) and to give the DDR sampler; None samples none.
    pub accounting: Option<&'static Accounting>,
    /// The engine's depths; the sampler stops when it returns `None` (the engine is gone).
    pub depths: Option<DepthsFn>,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            gpus: vec![],
            nvml: true,
            system: true,
            pools: true,
            ddr: true,
            accounting: Some(accounting::global()),
            depths: None,
        }
    }
}

/// What each sampler thread gets: where to publish, the clock, and the stop signal.
#[derive(Clone)]
pub(crate) struct Ctx {
    bus: Bus,
    clock: Clock,
    stop: Receiver<()>,
}

impl Ctx {
    /// Sleeps for `d`; false when the samplers are stopping.
    pub(crate) fn sleep(&self, d: Duration) -> bool {
        matches!(self.stop.recv_timeout(d), Err(RecvTimeoutError::Timeout))
    }

    pub(crate) fn now(&self) -> super::Nanos {
        self.clock.now()
    }

    pub(crate) fn emit_at(
        &self,
        t: super::Nanos,
        metric: impl Into<String>,
        device: Option<&str>,
        value: f64,
    ) {
        if !value.is_finite() {
            return;
        }
        self.bus.publish(Event::Sample(Sample {
            t,
            metric: metric.into(),
            device: device.map(str::to_string),
            value,
        }));
    }
}

/// The running samplers. Stopping (or dropping) signals every thread and joins them.
pub struct Samplers {
    stop: Mutex<Option<Sender<()>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Samplers {
    /// Starts the samplers `opts` asks for, each on its own thread. On a disabled bus
    /// (`--telemetry off`) nothing starts.
    pub fn start(bus: &Bus, clock: Clock, opts: SamplerOptions) -> Samplers {
        let samplers = Samplers {
            stop: Mutex::new(None),
            threads: Mutex::new(vec![]),
        };
        if !bus.is_enabled() {
            return samplers;
        }
        let (tx, rx) = bounded::<()>(0);
        *samplers.stop.lock() = Some(tx);
        let ctx = Ctx {
            bus: bus.clone(),
            clock,
            stop: rx,
        };
        let mut threads = samplers.threads.lock();
        let mut spawn = |name: &str, f: Box<dyn FnOnce(Ctx) + Send>| {
            let ctx = ctx.clone();
            match std::thread::Builder::new()
                .name(format!("sampler-{name}"))
                .spawn(move || f(ctx))
            {
                Ok(h) => threads.push(h),
                Err(e) => tracing::warn!("starting the {name} sampler: {e}"),
            }
        };
        if opts.nvml {
            let gpus = opts.gpus.clone();
            spawn("nvml", Box::new(move |ctx| nvml::run(&ctx, &gpus)));
        }
        if opts.system {
            spawn("system", Box::new(|ctx| system::run(&ctx)));
        }
        if opts.pools {
            spawn("pools", Box::new(|ctx| pools::run(&ctx)));
        }
        if let Some(acc) = opts.accounting {
            spawn("accounting", Box::new(move |ctx| run_accounting(&ctx, acc)));
        }
        if let Some(depths) = opts.depths {
            spawn("pipeline", Box::new(move |ctx| run_depths(&ctx, depths)));
        }
        if opts.ddr {
            let acc = opts.accounting;
            spawn("ddr", Box::new(move |ctx| ddr::run(&ctx, acc)));
        }
        drop(threads);
        samplers
    }

    /// The samplers of a running engine: everything, with the engine's depths read through
    /// `depths` while `engine` lives, and NVML on the GPUs `gpus` names (all when empty).
    pub fn for_engine<S: Send + Sync + 'static>(
        bus: &Bus,
        clock: Clock,
        gpus: &[u32],
        engine: std::sync::Weak<S>,
        depths: impl Fn(&S) -> Depths + Send + 'static,
    ) -> Samplers {
        let depths: DepthsFn = Box::new(move || engine.upgrade().map(|s| depths(&s)));
        Samplers::start(
            bus,
            clock,
            SamplerOptions {
                gpus: gpus.to_vec(),
                depths: Some(depths),
                ..SamplerOptions::default()
            },
        )
    }

    /// A handle that samples nothing.
    pub fn none() -> Samplers {
        Samplers {
            stop: Mutex::new(None),
            threads: Mutex::new(vec![]),
        }
    }

    /// How many sampler threads are running.
    pub fn running(&self) -> usize {
        self.threads
            .lock()
            .iter()
            .filter(|h| !h.is_finished())
            .count()
    }

    /// Stops every sampler and waits for it (at most one sample's time).
    pub fn stop(&self) {
        drop(self.stop.lock().take());
        let threads = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for Samplers {
    fn drop(&mut self) {
        self.stop();
    }
}

/// VRAM by purpose and PCIe rates from the engine's own accounting.
fn run_accounting(ctx: &Ctx, acc: &Accounting) {
    const PERIOD: Duration = Duration::from_millis(250);
    let mut last: Vec<(String, u64, u64)> = vec![];
    let mut last_t = ctx.now();
    loop {
        let t = ctx.now();
        let dt = (t.saturating_sub(last_t)) as f64 / 1e9;
        for s in acc.snapshot() {
            let dev = Some(s.device.as_str());
            for p in accounting::VramPurpose::ALL {
                ctx.emit_at(
                    t,
                    format!("{}{}", metrics::VRAM_USED_PREFIX, p.key()),
                    dev,
                    s.vram_of(p) as f64,
                );
            }
            ctx.emit_at(t, metrics::VRAM_USED, dev, s.vram_used() as f64);
            ctx.emit_at(t, metrics::PCIE_H2D_TOTAL, dev, s.h2d_bytes as f64);
            ctx.emit_at(t, metrics::PCIE_D2H_TOTAL, dev, s.d2h_bytes as f64);
            if let Some(prev) = last.iter_mut().find(|p| p.0 == s.device) {
                if dt > 0.0 {
                    let h2d = s.h2d_bytes.saturating_sub(prev.1) as f64 / dt;
                    let d2h = s.d2h_bytes.saturating_sub(prev.2) as f64 / dt;
                    ctx.emit_at(t, metrics::PCIE_H2D, dev, h2d);
                    ctx.emit_at(t, metrics::PCIE_D2H, dev, d2h);
                }
                (prev.1, prev.2) = (s.h2d_bytes, s.d2h_bytes);
            } else {
                last.push((s.device.clone(), s.h2d_bytes, s.d2h_bytes));
            }
        }
        last_t = t;
        if !ctx.sleep(PERIOD) {
            return;
        }
    }
}

/// Partitions waiting, in synthesis, queued and on a device.
fn run_depths(ctx: &Ctx, depths: DepthsFn) {
    const PERIOD: Duration = Duration::from_millis(250);
    loop {
        let Some(d) = depths() else { return };
        let t = ctx.now();
        ctx.emit_at(t, metrics::PIPELINE_PENDING, None, d.pending as f64);
        ctx.emit_at(
            t,
            metrics::PIPELINE_SYNTHESIZING,
            None,
            d.synthesizing as f64,
        );
        ctx.emit_at(t, metrics::PIPELINE_QUEUED, None, d.queued as f64);
        ctx.emit_at(t, metrics::PIPELINE_PROVING, None, d.proving as f64);
        for p in &d.params {
            let per = |prefix: &str| format!("{prefix}{}", p.name);
            let tier = p.tier.code() as f64;
            ctx.emit_at(t, per(metrics::PARAMS_TIER_PREFIX), None, tier);
            ctx.emit_at(t, per(metrics::PARAMS_BYTES_PREFIX), None, p.bytes as f64);
            ctx.emit_at(t, per(metrics::PARAMS_USERS_PREFIX), None, p.users as f64);
        }
        if !ctx.sleep(PERIOD) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn samplers_publish_and_stop_promptly() {
        let bus = Bus::new();
        let sub = bus.subscribe(1 << 16);
        let acc: &'static Accounting = Box::leak(Box::new(Accounting::new()));
        let d = acc.device("gpu9");
        d.allocated(accounting::VramPurpose::Srs, 4096);
        let samplers = Samplers::start(
            &bus,
            Clock::start(),
            SamplerOptions {
                nvml: true,
                system: true,
                pools: true,
                ddr: false,
                accounting: Some(acc),
                depths: Some(Box::new(|| {
                    Some(Depths {
                        pending: 3,
                        ..Depths::default()
                    })
                })),
                gpus: vec![],
            },
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let mut seen = BTreeSet::new();
        let want = [
            metrics::VRAM_USED,
            "vram.used.srs",
            metrics::PIPELINE_PENDING,
            metrics::HOST_RAM_TOTAL,
            metrics::PROCESS_RSS,
            "cpu.core.0",
            metrics::PCIE_H2D,
        ];
        while !want.iter().all(|w| seen.contains(*w)) && std::time::Instant::now() < deadline {
            if let Ok(Event::Sample(s)) = sub.rx.recv_timeout(Duration::from_millis(100)) {
                if s.metric == "vram.used.srs" {
                    assert_eq!((s.device.as_deref(), s.value), (Some("gpu9"), 4096.0));
                }
                if s.metric == metrics::PIPELINE_PENDING {
                    assert_eq!(s.value, 3.0);
                }
                seen.insert(s.metric);
            }
        }
        for w in want {
            assert!(seen.contains(w), "no {w} sample in {seen:?}");
        }
        let t = std::time::Instant::now();
        samplers.stop();
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "stop took {:?}",
            t.elapsed()
        );
        assert_eq!(samplers.running(), 0);
    }

    #[test]
    fn nothing_starts_on_a_disabled_bus() {
        let samplers = Samplers::start(&Bus::disabled(), Clock::start(), SamplerOptions::default());
        assert_eq!(samplers.running(), 0);
    }
}
