//! A made-up session of a busy one-GPU rig, deterministic from a seed: the event mix the
//! samplers and a GPU pipeline produce (the rates of `samplers`' table, two partitions a
//! second with the spans of every lane), for measuring recordings' size and open time, for
//! the decoder's fuzz corpus and for tests, where no GPU is at hand.

use std::collections::BTreeMap;

use super::Record;
use crate::telemetry::{
    metrics, ConfigChange, DeviceInfo, Event, JobEvent, JobState, Lane, MachineInfo, Mark, Nanos,
    ProofRecord, Sample, SessionInfo, Span, Stage,
};

const MS: Nanos = 1_000_000;
const S: Nanos = 1_000_000_000;

/// Cores of the made-up host (one `cpu.core.N` sample each a second).
pub const CORES: usize = 64;
/// Partitions a second.
pub const RATE: u64 = 2;

pub fn session() -> SessionInfo {
    SessionInfo {
        machine: MachineInfo {
            hostname: "rig".into(),
            os: "linux".into(),
            cpu: "synthetic".into(),
            cores: CORES,
            memory_bytes: 1 << 40,
        },
        devices: vec![DeviceInfo {
            id: "gpu0".into(),
            name: "NVIDIA H200".into(),
            kind: "gpu".into(),
            memory_bytes: 141 << 30,
            pcie: Some((5, 16)),
        }],
        config: Default::default(),
        workload: "synthetic-k22".into(),
        started_unix: 1.7e9,
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn f(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn jitter(&mut self, base: Nanos) -> Nanos {
        base / 2 + self.next() % base.max(1)
    }
}

/// Every record of `seconds` of the session, in the order a bus would deliver them (roughly
/// by time), a config change at the middle and a mark every ten minutes.
pub fn busy_gpu(seconds: u64, seed: u64) -> Vec<Record> {
    let mut out = Vec::with_capacity((seconds * 400) as usize);
    let mut rng = Rng(seed | 1);
    let dev = || Some("gpu0".to_string());
    let sample = |t, metric: &str, device: Option<String>, value| {
        Record::Event(Event::Sample(Sample {
            t,
            metric: metric.into(),
            device,
            value,
        }))
    };
    let span = |lane: Lane, stage, start, end, job, bytes| {
        Record::Event(Event::Span(Span {
            lane,
            stage,
            start,
            end,
            job: Some(job),
            partition: Some(0),
            bytes,
        }))
    };
    let gpu = |t: &str| match t {
        "compute" => Lane::Compute {
            device: "gpu0".into(),
        },
        "h2d" => Lane::H2d {
            device: "gpu0".into(),
        },
        "d2h" => Lane::D2h {
            device: "gpu0".into(),
        },
        "synthesis" | "prover" => Lane::Pool { name: t.into() },
        w => Lane::Worker {
            device: "gpu0".into(),
            worker: w.parse().unwrap_or(0),
        },
    };
    let mut job = 0u64;
    for sec in 0..seconds {
        let t0 = sec * S;
        // Samplers: NVML twice a second, accounting and pipeline four times, the rest once.
        for k in 0..4 {
            let t = t0 + k * 250 * MS + rng.next() % MS;
            let vram = 60e9 + rng.f() * 20e9;
            out.push(sample(t, metrics::VRAM_USED, dev(), vram));
            for p in ["srs", "abc", "buckets", "scratch"] {
                out.push(sample(t, &format!("vram.used.{p}"), dev(), vram / 4.0));
            }
            out.push(sample(t, metrics::PCIE_H2D, dev(), rng.f() * 50e9));
            out.push(sample(t, metrics::PCIE_D2H, dev(), rng.f() * 1e9));
            out.push(sample(
                t,
                metrics::PCIE_H2D_TOTAL,
                dev(),
                (sec * 4 + k) as f64 * 5e9,
            ));
            out.push(sample(
                t,
                metrics::PCIE_D2H_TOTAL,
                dev(),
                (sec * 4 + k) as f64 * 1e8,
            ));
            for m in [
                metrics::PIPELINE_PENDING,
                metrics::PIPELINE_SYNTHESIZING,
                metrics::PIPELINE_QUEUED,
                metrics::PIPELINE_PROVING,
            ] {
                out.push(sample(t, m, None, (rng.next() % 4) as f64));
            }
            if k % 2 == 0 {
                for m in [
                    metrics::VRAM_RESERVED,
                    metrics::GPU_UTIL,
                    metrics::GPU_MEM_UTIL,
                    metrics::GPU_SM_CLOCK,
                    metrics::GPU_MEM_CLOCK,
                    metrics::GPU_POWER,
                    metrics::GPU_TEMP,
                    metrics::NVML_PCIE_TX,
                    metrics::NVML_PCIE_RX,
                    metrics::VRAM_TOTAL,
                    metrics::PCIE_CEILING,
                ] {
                    out.push(sample(t, m, dev(), rng.f() * 1e3));
                }
            }
        }
        let t = t0 + 900 * MS;
        for c in 0..CORES {
            out.push(sample(t, &format!("cpu.core.{c}"), None, rng.f()));
        }
        for m in [
            metrics::HOST_RAM_USED,
            metrics::PROCESS_RSS,
            metrics::HOST_DDR,
            metrics::HOST_DDR_PRESSURE,
            metrics::HOST_ENGINE_BYTES,
            "cpu.pool.synthesis",
            "cpu.pool.prover",
            metrics::GPU_DRAM_UTIL,
            metrics::GPU_SM_UTIL,
            metrics::NVML_GPM_PCIE_TX,
        ] {
            out.push(sample(t, m, None, rng.f() * 1e9));
        }
        // Partitions: synthesis, the worker's region, the kernels, copies, finalize, proof.
        for p in 0..RATE {
            let base = t0 + p * (S / RATE);
            let j = job;
            job += 1;
            let ev = |t, state, partition| {
                Record::Event(Event::Job(JobEvent {
                    t,
                    job: j,
                    partition,
                    state,
                    detail: (state == JobState::Proving).then(|| "gpu0".to_string()),
                }))
            };
            out.push(ev(base, JobState::Submitted, None));
            let synth_end = base + rng.jitter(100 * MS);
            out.push(span(
                gpu("synthesis"),
                Stage::Synthesis,
                base,
                synth_end,
                j,
                0,
            ));
            out.push(ev(synth_end, JobState::Synthesized, Some(0)));
            out.push(ev(synth_end + MS, JobState::Proving, Some(0)));
            let w = (j % 2).to_string();
            let mut t = synth_end + MS;
            let lock = t + rng.jitter(5 * MS);
            out.push(span(gpu(&w), Stage::LockWait, t, lock, j, 0));
            t = lock;
            let h2d = t + rng.jitter(20 * MS);
            out.push(span(gpu("h2d"), Stage::H2d, t, h2d, j, 1 << 30));
            out.push(span(gpu(&w), Stage::H2d, t, h2d, j, 1 << 30));
            t = h2d;
            let ntt = t + rng.jitter(60 * MS);
            out.push(span(gpu("compute"), Stage::NttH, t, ntt, j, 0));
            let step = (ntt - t) / 7;
            for (i, st) in [
                Stage::Intt,
                Stage::Intt,
                Stage::Intt,
                Stage::CosetNtt,
                Stage::CosetNtt,
                Stage::CosetNtt,
                Stage::Pointwise,
            ]
            .into_iter()
            .enumerate()
            {
                let a = t + i as Nanos * step;
                out.push(span(gpu("compute"), st, a, a + step, j, 0));
            }
            out.push(span(gpu(&w), Stage::NttH, t, ntt, j, 0));
            t = ntt;
            for st in [
                Stage::MsmH,
                Stage::MsmL,
                Stage::BatchAdd,
                Stage::MsmA,
                Stage::MsmBG1,
            ] {
                let e = t + rng.jitter(40 * MS);
                out.push(span(gpu("compute"), st, t, e, j, 0));
                out.push(span(gpu(&w), st, t, e, j, 0));
                t = e;
            }
            let d2h = t + rng.jitter(MS);
            out.push(span(gpu("d2h"), Stage::D2h, t, d2h, j, 1 << 12));
            out.push(span(gpu(&w), Stage::D2h, t, d2h, j, 1 << 12));
            let mut stages = BTreeMap::new();
            let mut f = d2h;
            for st in [Stage::MsmBG2, Stage::Finalize, Stage::Verify] {
                let e = f + rng.jitter(10 * MS);
                out.push(span(gpu("prover"), st, f, e, j, 0));
                stages.insert(st, (e - f) as f64 / 1e9);
                f = e;
            }
            stages.insert(Stage::Synthesis, (synth_end - base) as f64 / 1e9);
            out.push(Record::Event(Event::Proof(ProofRecord {
                t: f,
                job: j,
                partition: 0,
                device: "gpu0".into(),
                verified: true,
                error: None,
                stages,
            })));
            out.push(ev(f, JobState::Verified, None));
        }
        if sec == seconds / 2 {
            out.push(Record::Event(Event::Config(ConfigChange {
                t: t0,
                key: "lock".into(),
                from: "single".into(),
                to: "two-lock".into(),
                by: "schedule".into(),
                applied: true,
                error: None,
            })));
        }
        if sec % 600 == 300 {
            out.push(Record::Event(Event::Mark(Mark {
                t: t0,
                label: format!("mark at {sec} s"),
            })));
        }
    }
    out.sort_by_key(Record::time);
    out
}
