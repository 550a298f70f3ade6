//! A made-up session: a deterministic event stream shaped like a real one, for the dashboard's
//! snapshot tests and render benchmark, the recorder's tests, the decoder's fuzz corpus and
//! development without an engine or a GPU: devices with compute, copy and worker lanes, pools,
//! samples, jobs and proofs, configuration changes, a warning and marks. The same spec always
//! gives the same events; nothing reads a clock.

use std::collections::BTreeMap;

use crate::config::EngineConfig;
use crate::metrics as m;
use crate::record::Record;
use crate::{
    ConfigChange, DeviceInfo, Event, JobEvent, JobState, Lane, LogLine, MachineInfo, Mark, Nanos,
    ProofRecord, Sample, SessionInfo, Span, Stage,
};

const S: Nanos = 1_000_000_000;
const MS: Nanos = 1_000_000;
const GIB: f64 = (1u64 << 30) as f64;

/// The shape of a made-up session; `Spec::gpus`, `Spec::cpu` and `Spec::busy_gpu` are the
/// ones the tests use.
#[derive(Clone, Debug)]
pub struct Spec {
    /// GPUs (`gpu0`…) or, when `gpu` is false, CPU executors (`cpu0`…).
    pub devices: usize,
    /// Whether the devices are GPUs (with copy lanes and NVML samples) or CPU executors.
    pub gpu: bool,
    /// Worker lanes per device, at least 1; regions go to them in turn.
    pub workers: u32,
    /// The session's length (seconds).
    pub seconds: u64,
    /// A partition's GPU region, about.
    pub partition_ms: u64,
    /// Kernel spans each compute stage is split into (the benchmark's density).
    pub kernels: usize,
    /// Samples of each metric per second.
    pub sample_hz: u64,
    /// The made-up host's cores.
    pub cores: usize,
    /// Only what the dashboard draws, or every sampler of the engine (a sample per core each
    /// second, NVML's PCIe and memory-controller counters, GPM, the copy accounting's byte
    /// totals, the memory probe's own figures), as a recording of a real rig holds them.
    pub every_sampler: bool,
    /// What happens beside the proofs.
    pub story: Story,
    /// Seeds the generator of region lengths, gaps and sampled values.
    pub seed: u64,
}

/// What happens beside the proofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Story {
    /// A tour of the dashboard in one screen: a mark at a fifth of the session, a warning, the
    /// lock changed at two fifths, a change refused, a second mark at the half.
    Tour,
    /// A long run: the lock changed at the middle by the schedule, a mark every ten minutes
    /// from 5:00.
    Long,
}

impl Spec {
    /// Two H200s for a minute.
    pub fn gpus() -> Spec {
        Spec {
            devices: 2,
            gpu: true,
            workers: 2,
            seconds: 60,
            partition_ms: 2300,
            kernels: 1,
            sample_hz: 4,
            cores: 96,
            every_sampler: false,
            story: Story::Tour,
            seed: 0x5eed,
        }
    }

    /// One CPU executor, as `provetop --backend cpu` runs on a machine without a GPU.
    pub fn cpu() -> Spec {
        Spec {
            devices: 1,
            gpu: false,
            workers: 2,
            seconds: 30,
            partition_ms: 900,
            cores: 2,
            ..Spec::gpus()
        }
    }

    /// A busy one-GPU rig for `seconds`: an H200 on a 64-core host proving about two partitions
    /// a second, with every sampler running (what a recording of a long run holds).
    pub fn busy_gpu(seconds: u64, seed: u64) -> Spec {
        Spec {
            devices: 1,
            seconds,
            partition_ms: 460,
            cores: 64,
            every_sampler: true,
            story: Story::Long,
            seed,
            ..Spec::gpus()
        }
    }

    /// Where the session ends: the dashboard's clock after the whole stream.
    pub fn end(&self) -> Nanos {
        self.seconds * S
    }
}

struct Lcg(u64);

impl Lcg {
    /// Uniform in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The workload's label, as a real session's header and job events name it.
fn workload(spec: &Spec) -> &'static str {
    match spec.gpu {
        true => "synthetic-k24",
        false => "synthetic-k10",
    }
}

/// The session header for `spec`: its machine, devices and a default configuration.
pub fn session(spec: &Spec) -> SessionInfo {
    let devices = (0..spec.devices)
        .map(|i| {
            if spec.gpu {
                DeviceInfo {
                    id: format!("gpu{i}"),
                    name: "NVIDIA H200".into(),
                    kind: "gpu".into(),
                    memory_bytes: 150_754_820_096,
                    pcie: Some((5, 16)),
                }
            } else {
                DeviceInfo {
                    id: format!("cpu{i}"),
                    name: "CPU executor (2 threads)".into(),
                    kind: "cpu".into(),
                    memory_bytes: 0,
                    pcie: None,
                }
            }
        })
        .collect();
    let threads = if spec.gpu { 16 } else { 2 };
    let config = EngineConfig {
        synthesis_threads: threads,
        prover_threads: threads,
        ..EngineConfig::default()
    };
    SessionInfo {
        machine: MachineInfo {
            hostname: if spec.gpu { "rig-01" } else { "ci" }.into(),
            os: "linux".into(),
            cpu: "fixture".into(),
            cores: spec.cores,
            memory_bytes: if spec.gpu { 1 << 40 } else { 24 << 30 },
        },
        devices,
        config,
        workload: workload(spec).into(),
        started_unix: 1_790_000_000.0,
    }
}

/// The region's steps as (stage, share of the region, lane).
const REGION: [(Stage, f64, u8); 8] = [
    (Stage::H2d, 0.08, 1),
    (Stage::NttH, 0.16, 0),
    (Stage::MsmH, 0.18, 0),
    (Stage::MsmL, 0.24, 0),
    (Stage::MsmA, 0.09, 0),
    (Stage::MsmBG1, 0.09, 0),
    (Stage::BatchAdd, 0.04, 0),
    (Stage::D2h, 0.02, 2),
];

struct Gen {
    out: Vec<Event>,
    rng: Lcg,
}

impl Gen {
    fn span(&mut self, lane: Lane, stage: Stage, start: Nanos, end: Nanos, job: u64, bytes: u64) {
        self.out.push(Event::Span(Span {
            lane,
            stage,
            start,
            end,
            job: Some(job),
            partition: Some(0),
            bytes,
        }));
    }

    fn sample(&mut self, t: Nanos, metric: &str, device: Option<&str>, value: f64) {
        self.out.push(Event::Sample(Sample {
            t,
            metric: metric.into(),
            device: device.map(str::to_string),
            value,
        }));
    }

    fn job(
        &mut self,
        t: Nanos,
        job: u64,
        partition: Option<u32>,
        state: JobState,
        detail: Option<&str>,
    ) {
        self.out.push(Event::Job(JobEvent {
            t,
            job,
            partition,
            state,
            detail: detail.map(str::to_string),
            kind: None,
            name: None,
        }));
    }
}

/// The session's events, in time order (`Event::time`).
pub fn events(spec: &Spec) -> Vec<Event> {
    let mut g = Gen {
        out: vec![],
        rng: Lcg(spec.seed),
    };
    let end = spec.seconds * S;
    let period = spec.partition_ms * MS;
    let mut job = 0u64;
    for d in 0..spec.devices {
        let dev = if spec.gpu {
            format!("gpu{d}")
        } else {
            format!("cpu{d}")
        };
        // Regions start after a warm-up (parameters, the first synthesis), then follow one
        // another with idle gaps of varying length between them.
        let mut t = period + d as Nanos * period / 3;
        let mut k = 0u32;
        let mut prev_start: Option<Nanos> = None;
        while t + period < end {
            let worker = k % spec.workers;
            let j = job;
            job += 1;
            let len = (period as f64 * (0.85 + 0.3 * g.rng.next())) as Nanos;
            let synth_end =
                t.saturating_sub(period / 5 + (g.rng.next() * period as f64 * 0.2) as Nanos);
            let synth_start = synth_end.saturating_sub(period * 6 / 5);
            g.job(
                synth_start.saturating_sub(MS),
                j,
                None,
                JobState::Submitted,
                Some(&format!("{} · normal", workload(spec))),
            );
            g.span(
                Lane::Pool {
                    name: "synthesis".into(),
                },
                Stage::Synthesis,
                synth_start,
                synth_end,
                j,
                0,
            );
            g.job(synth_end, j, Some(0), JobState::Synthesized, None);
            g.job(t, j, Some(0), JobState::Proving, Some(&dev));
            let wlane = Lane::Worker {
                device: dev.clone(),
                worker,
            };
            if let Some(p) = prev_start {
                g.span(wlane.clone(), Stage::LockWait, p.max(synth_end), t, j, 0);
            }
            let mut stages: BTreeMap<Stage, f64> = BTreeMap::new();
            stages.insert(Stage::Synthesis, (synth_end - synth_start) as f64 / 1e9);
            stages.insert(Stage::QueueWait, (t - synth_end) as f64 / 1e9);
            let mut s = t;
            for (stage, share, lane) in REGION {
                let dur = (len as f64 * share) as Nanos;
                if !spec.gpu && lane != 0 {
                    continue;
                }
                let lane_of = match lane {
                    0 => Lane::Compute {
                        device: dev.clone(),
                    },
                    1 => Lane::H2d {
                        device: dev.clone(),
                    },
                    _ => Lane::D2h {
                        device: dev.clone(),
                    },
                };
                let n = if lane == 0 { spec.kernels.max(1) } else { 1 };
                let piece = dur / n as Nanos;
                for i in 0..n as Nanos {
                    let a = s + i * piece;
                    let b = a + piece.saturating_sub(if n > 1 { 20_000 } else { 0 });
                    let bytes = if lane == 0 { 0 } else { 12 << 30 };
                    g.span(lane_of.clone(), stage, a, b, j, bytes);
                    g.span(wlane.clone(), stage, a, b, j, bytes);
                }
                stages.insert(stage, dur as f64 / 1e9);
                s += dur;
            }
            let mut p = s + MS;
            for (stage, ms) in [
                (Stage::MsmBG2, 0.12),
                (Stage::Finalize, 0.004),
                (Stage::Verify, 0.002),
            ] {
                let dur = (period as f64 * ms) as Nanos;
                g.span(
                    Lane::Pool {
                        name: "prover".into(),
                    },
                    stage,
                    p,
                    p + dur,
                    j,
                    0,
                );
                stages.insert(stage, dur as f64 / 1e9);
                p += dur;
            }
            if p < end {
                g.out.push(Event::Proof(ProofRecord {
                    t: p,
                    job: j,
                    partition: 0,
                    device: dev.clone(),
                    verified: true,
                    error: None,
                    stages,
                }));
                g.job(p, j, None, JobState::Verified, None);
            }
            prev_start = Some(t);
            let gap = (period as f64 * (0.02 + 0.25 * g.rng.next() * g.rng.next())) as Nanos;
            t = s + gap;
            k += 1;
        }
    }
    samples(&mut g, spec);
    match spec.story {
        Story::Tour => tour(&mut g, spec),
        Story::Long => long_run(&mut g, spec),
    }
    g.out.sort_by_key(Event::time);
    g.out
}

/// The tour's marks, warning and changes.
fn tour(g: &mut Gen, spec: &Spec) {
    let end = spec.end();
    let at = |f: f64| (end as f64 * f) as Nanos;
    g.out.push(Event::Mark(Mark {
        t: at(0.2),
        label: "baseline".into(),
    }));
    g.out.push(Event::Log(LogLine {
        t: at(0.3),
        level: "WARN".into(),
        message: if spec.gpu {
            "gpu1: PCIe link trained at gen4 ×16, expected gen5".into()
        } else {
            "cpu0: the synthesis pool shares 2 cores with the prover".into()
        },
    }));
    g.out.push(Event::Config(ConfigChange {
        t: at(0.4),
        key: "lock".into(),
        from: "single".into(),
        to: "two-lock".into(),
        by: "ui".into(),
        applied: true,
        error: None,
    }));
    g.out.push(Event::Config(ConfigChange {
        t: at(0.45),
        key: "gpu_workers_per_device".into(),
        from: "2".into(),
        to: "32".into(),
        by: "ui".into(),
        applied: false,
        error: Some(
            "gpu_workers_per_device: expected a whole number from 1 to 16, got `32`".into(),
        ),
    }));
    g.out.push(Event::Mark(Mark {
        t: at(0.5),
        label: "after two-lock".into(),
    }));
}

/// The long run's lock change at the middle and a mark every ten minutes from 5:00.
fn long_run(g: &mut Gen, spec: &Spec) {
    g.out.push(Event::Config(ConfigChange {
        t: spec.seconds / 2 * S,
        key: "lock".into(),
        from: "single".into(),
        to: "two-lock".into(),
        by: "schedule".into(),
        applied: true,
        error: None,
    }));
    for sec in (300..spec.seconds).step_by(600) {
        g.out.push(Event::Mark(Mark {
            t: sec * S,
            label: format!("mark at {sec} s"),
        }));
    }
}

/// Every record of the session, as a recording holds them.
pub fn records(spec: &Spec) -> Vec<Record> {
    events(spec).into_iter().map(Record::Event).collect()
}

fn samples(g: &mut Gen, spec: &Spec) {
    let end = spec.seconds * S;
    let step = S / spec.sample_hz.max(1);
    let mut t = step;
    while t < end {
        let x = t as f64 / 1e9;
        let wave = (x / 7.0).sin();
        for d in 0..spec.devices.min(if spec.gpu { usize::MAX } else { 0 }) {
            let id = format!("gpu{d}");
            let dev = Some(id.as_str());
            let used = (84.0 + 6.0 * wave + d as f64 * 3.0) * GIB;
            g.sample(t, m::VRAM_USED, dev, used);
            for (p, share) in [
                ("srs", 0.48),
                ("abc", 0.24),
                ("buckets", 0.11),
                ("scratch", 0.17),
            ] {
                g.sample(t, &format!("{}{p}", m::VRAM_USED_PREFIX), dev, used * share);
            }
            g.sample(t, m::VRAM_RESERVED, dev, used + 6.0 * GIB);
            g.sample(t, m::VRAM_TOTAL, dev, 150_754_820_096.0);
            let burst = g.rng.next();
            g.sample(
                t,
                m::PCIE_H2D,
                dev,
                if burst > 0.7 {
                    24e9 * burst
                } else {
                    0.4e9 * burst
                },
            );
            let d2h = 0.3e9 * g.rng.next();
            g.sample(t, m::PCIE_D2H, dev, d2h);
            g.sample(t, m::PCIE_CEILING, dev, 63e9);
            g.sample(
                t,
                m::GPU_UTIL,
                dev,
                (0.9 + 0.1 * wave).min(1.0) * (0.8 + 0.2 * burst),
            );
            g.sample(t, m::GPU_SM_CLOCK, dev, 1.98e9);
            g.sample(t, m::GPU_MEM_CLOCK, dev, 2.619e9);
            g.sample(t, m::GPU_POWER, dev, 610.0 + 60.0 * wave);
            g.sample(t, m::GPU_TEMP, dev, 61.0 + 3.0 * wave + d as f64);
        }
        if spec.gpu {
            g.sample(t, m::HOST_DDR, None, (120.0 + 30.0 * wave) * 1e9);
            g.sample(t, m::HOST_DDR_PRESSURE, None, 0.45 + 0.2 * wave);
            g.sample(t, &format!("{}probe", m::HOST_DDR_SOURCE_PREFIX), None, 1.0);
            g.sample(t, m::HOST_ENGINE_BYTES, None, 38e9);
            g.sample(
                t,
                &format!("{}synthesis", m::CPU_POOL_PREFIX),
                None,
                0.7 + 0.2 * wave,
            );
            g.sample(t, &format!("{}prover", m::CPU_POOL_PREFIX), None, 0.2);
        }
        g.sample(
            t,
            m::HOST_RAM_USED,
            None,
            (if spec.gpu { 310.0 } else { 3.1 }) * GIB + wave * GIB,
        );
        g.sample(
            t,
            m::HOST_RAM_TOTAL,
            None,
            (if spec.gpu { 1024.0 } else { 24.0 }) * GIB,
        );
        g.sample(
            t,
            m::PROCESS_RSS,
            None,
            (if spec.gpu { 220.0 } else { 0.4 }) * GIB,
        );
        let q = (2.0 + 2.0 * wave).round();
        g.sample(t, m::PIPELINE_PENDING, None, q);
        g.sample(t, m::PIPELINE_SYNTHESIZING, None, 2.0);
        g.sample(t, m::PIPELINE_QUEUED, None, (1.0 + wave).round());
        g.sample(t, m::PIPELINE_PROVING, None, spec.devices as f64);
        if spec.every_sampler {
            other_samplers(g, spec, t, wave);
        }
        t += step;
    }
}

/// The samplers the dashboard does not draw: the devices' at every tick, the host's once a
/// second (as the system sampler and the memory probe run).
fn other_samplers(g: &mut Gen, spec: &Spec, t: Nanos, wave: f64) {
    let x = t as f64 / 1e9;
    for d in 0..spec.devices.min(if spec.gpu { usize::MAX } else { 0 }) {
        let id = format!("gpu{d}");
        let dev = Some(id.as_str());
        g.sample(t, m::PCIE_H2D_TOTAL, dev, 5e9 * x);
        g.sample(t, m::PCIE_D2H_TOTAL, dev, 1e8 * x);
        let (tx, rx) = (1e9 * g.rng.next(), 20e9 * g.rng.next());
        g.sample(t, m::NVML_PCIE_TX, dev, tx);
        g.sample(t, m::NVML_PCIE_RX, dev, rx);
        g.sample(t, m::NVML_GPM_PCIE_TX, dev, tx * 0.98);
        g.sample(t, m::NVML_GPM_PCIE_RX, dev, rx * 0.98);
        g.sample(t, m::PCIE_LINK_GEN, dev, 5.0);
        g.sample(t, m::PCIE_LINK_WIDTH, dev, 16.0);
        g.sample(t, m::GPU_MEM_UTIL, dev, 0.5 + 0.3 * wave);
        g.sample(t, m::GPU_DRAM_UTIL, dev, 0.4 + 0.2 * wave);
        g.sample(t, m::GPU_SM_UTIL, dev, 0.8 + 0.1 * wave);
        g.sample(t, m::GPU_SM_OCCUPANCY, dev, 0.35 + 0.05 * wave);
    }
    if t % S != 0 {
        return;
    }
    for c in 0..spec.cores {
        let busy = g.rng.next();
        g.sample(t, &format!("{}{c}", m::CPU_CORE_PREFIX), None, busy);
    }
    g.sample(t, m::HOST_ENGINE_BYTES_TOTAL, None, 38e9 * x);
    g.sample(t, m::HOST_DDR_IDLE, None, 14e9);
    g.sample(
        t,
        m::HOST_DDR_PROBE_ACHIEVED,
        None,
        14e9 * (0.55 - 0.2 * wave),
    );
    g.sample(t, m::HOST_DDR_PROBE_DUTY, None, 0.01);
    g.sample(t, m::HOST_DDR_PROBE_BYTES, None, 0.1e9);
}
