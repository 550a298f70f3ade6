//! The values of the `[engine]` keys left at `auto`, chosen for the machine: its cores, its
//! GPUs and the backend that proves. Chosen once when the engine starts (and when a key is set
//! back to `auto`); each choice carries the reason the log, `bench --json` and the dashboard
//! show.

use crate::circuit::Workload;
use crate::config::{BackendKind, EngineConfig, Placement, MAX_WORKERS};

/// What the choices depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Logical cores the process may use.
    pub cores: usize,
    /// GPUs the engine proves on (0 on the cpu backend).
    pub gpus: usize,
    /// The backend that proves, already resolved from `auto`.
    pub backend: BackendKind,
}

impl Machine {
    /// This machine, proving on `backend` with `gpus` GPUs.
    pub fn here(backend: BackendKind, gpus: usize) -> Machine {
        Machine {
            cores: crate::config::cores(),
            gpus,
            backend,
        }
    }
}

/// Resolves every key of `cfg` still at `auto`, recording why.
pub fn resolve(cfg: &mut EngineConfig, m: &Machine) {
    let cores = m.cores.max(1);
    let gpu = m.backend == BackendKind::Cuda && m.gpus > 0;
    let pending: Vec<String> = cfg
        .auto
        .iter()
        .filter(|(_, why)| why.is_none())
        .map(|(k, _)| k.clone())
        .collect();
    for key in pending {
        let why = match key.as_str() {
            "synthesis_threads" => {
                cfg.synthesis_threads = cores;
                format!("{cores}: every core, shared out among the synthesis workers")
            }
            "prover_threads" => {
                cfg.prover_threads = cores;
                format!("{cores}: every core, shared with synthesis as the work comes")
            }
            "precompiled" => {
                cfg.precompiled = true;
                match gpu {
                    true => "true: every workload's a, b, c come from its matrices, resident on \
                             the GPU (synthetic 2^24 on an H200: 1.11× the fused synthesis)"
                        .into(),
                    false => "true, but for the synthetic workload: its fused synthesis is 3× \
                              faster than a, b, c from the matrices on the CPU"
                        .into(),
                }
            }
            "prestage" if gpu => {
                cfg.prestage = true;
                let cap = crate::hostmem::page_locked_ceiling();
                format!(
                    "true: a page-locked block for every partition in flight (the pool up to {} \
                     GiB, half the memory available) lets a GPU worker upload a partition at \
                     link speed before it takes the lock",
                    cap >> 30
                )
            }
            "prestage" => {
                cfg.prestage = false;
                "false: no GPU proves here, so nothing is copied to a device".into()
            }
            "b_g2_on" if gpu => {
                cfg.b_g2_on = Placement::Gpu;
                "gpu: a G2 MSM on the device leaves the host's cores to synthesis".into()
            }
            "b_g2_on" => {
                cfg.b_g2_on = Placement::Cpu;
                "cpu: no GPU proves here".into()
            }
            "synthesis_workers" if gpu => {
                // A GPU proves a partition far faster than one core synthesises it: enough
                // partitions at once to use the host, each on several cores (PoRep's
                // challenges are synthesised in parallel), within the host-memory budget the
                // dispatcher enforces.
                let n = (cores / 2).clamp(2, MAX_WORKERS);
                cfg.synthesis_workers = n;
                format!("{n}: half of {cores} cores, to keep {} GPU(s) fed", m.gpus)
            }
            "synthesis_workers" => {
                // On the cpu backend the prover needs the same cores: synthesis of the next
                // partition overlaps the proof of this one, no more.
                let n = cores.min(2);
                cfg.synthesis_workers = n;
                format!("{n}: the cpu backend proves on the same {cores} core(s)")
            }
            _ => continue,
        };
        tracing::info!("{key} = auto: {why}");
        cfg.auto.insert(key, Some(why));
    }
}

/// `synthesis_workers` left to `auto` on a GPU, for the open jobs: partitions of up to `bytes`
/// each with `room` bytes of host memory for them, some with a `serial` witness (one core's: a
/// partition a core, where half as many pools of two threads left one of each pair idle). As
/// many as the cores want, or as fit when fewer do (a 32 GiB PoRep partition's 8.3 GB beside 47
/// GB of parameters), so that the cores go to partitions that can run. None where it is not
/// `auto` or nothing changes.
pub fn workers_for(
    cfg: &EngineConfig,
    m: &Machine,
    (room, bytes): (u64, u64),
    serial: bool,
) -> Option<(usize, String)> {
    if !cfg.is_auto("synthesis_workers") || m.backend != BackendKind::Cuda || m.gpus == 0 {
        return None;
    }
    let cores = m.cores.max(1);
    let wanted = match serial {
        true => cores.clamp(2, MAX_WORKERS),
        false => (cores / 2).clamp(2, MAX_WORKERS),
    };
    let fit = (room / bytes.max(1)).max(1) as usize;
    let n = wanted.min(fit);
    let why = match (n < wanted, serial) {
        (true, _) => format!(
            "{n}: host memory holds {fit} partition(s) of {:.1} GB beside what the run keeps \
             ({:.1} GB free of the budget), each with a share of every synthesis thread",
            bytes as f64 / 1e9,
            room as f64 / 1e9
        ),
        (false, true) => {
            format!("{n}: a partition on each of {cores} cores, its witness being one core's")
        }
        (false, false) => format!("{n}: half of {cores} cores, to keep {} GPU(s) fed", m.gpus),
    };
    (n != cfg.synthesis_workers).then_some((n, why))
}

/// Whether a job of `workload` takes the pre-compiled path: `precompiled`, except that `auto`
/// leaves the synthetic workload its own fused synthesis when a, b, c would be evaluated on
/// the host (`abc_on_devices` false): there the fused synthesis is faster (bench/results/
/// 2026-12-02-h200-real-circuits: 2^24 on the H200, 8,794 proofs/h against 6,826), while
/// evaluated on the GPU the matrices win (2026-12-02-h200-abc: 12,831 against 11,583).
pub fn precompiled_for(cfg: &EngineConfig, workload: &Workload, abc_on_devices: bool) -> bool {
    let synthetic = matches!(workload, Workload::Synthetic { .. });
    cfg.precompiled && !(cfg.is_auto("precompiled") && synthetic && !abc_on_devices)
}

/// Jobs of `partitions` each to keep submitted so that every synthesis worker and every
/// device worker has a partition, with the ready queue's slack behind them; and why.
pub fn jobs_in_flight(cfg: &EngineConfig, device_workers: usize, partitions: u32) -> (u64, String) {
    let slack = crate::pipeline::QUEUE_SLACK;
    let want = cfg.synthesis_workers + device_workers + slack;
    let jobs = want.div_ceil(partitions.max(1) as usize).max(1) as u64;
    let why = format!(
        "{jobs}: {want} partitions in flight ({} in synthesis, {device_workers} on devices, {slack} queued) at {partitions} a job",
        cfg.synthesis_workers
    );
    (jobs, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AUTO_KEYS, MAX_THREADS};

    #[test]
    fn auto_resolves_to_valid_values_on_any_machine() {
        for cores in [1, 2, 16, 64] {
            for (backend, gpus) in [
                (BackendKind::Cpu, 0),
                (BackendKind::Cuda, 1),
                (BackendKind::Cuda, 8),
            ] {
                let mut cfg = EngineConfig::default();
                resolve(
                    &mut cfg,
                    &Machine {
                        cores,
                        gpus,
                        backend,
                    },
                );
                let at = format!("{cores} cores, {backend:?} with {gpus} GPU(s)");
                for key in AUTO_KEYS {
                    let why = cfg.auto[key].clone();
                    assert!(why.is_some_and(|w| !w.is_empty()), "{key} unresolved: {at}");
                    // What was chosen is a value `set` accepts.
                    let value = cfg.get(key).unwrap();
                    let mut again = cfg.clone();
                    again
                        .set(key, &value)
                        .unwrap_or_else(|e| panic!("{at}: {e}"));
                }
                assert!((1..=MAX_WORKERS).contains(&cfg.synthesis_workers), "{at}");
                assert!((1..=MAX_THREADS).contains(&cfg.synthesis_threads), "{at}");
                assert!(cfg.synthesis_workers <= cores.max(2), "{at}");
                let on_gpu = backend == BackendKind::Cuda;
                assert_eq!(cfg.b_g2_on == Placement::Gpu, on_gpu, "{at}");
                assert_eq!(cfg.prestage, on_gpu, "{at}");
            }
        }
    }

    #[test]
    fn synthesis_workers_fit_the_witness_and_the_host_memory_left_to_partitions() {
        let m = Machine {
            cores: 16,
            gpus: 1,
            backend: BackendKind::Cuda,
        };
        let mut cfg = EngineConfig::default();
        resolve(&mut cfg, &m);
        assert_eq!(cfg.synthesis_workers, 8);
        // 8MiB partitions: memory is not the limit.
        assert!(workers_for(&cfg, &m, (60 << 30, 246 << 20), false).is_none());
        // A serial witness (SnapDeals, PoSt): a partition a core.
        let (n, why) = workers_for(&cfg, &m, (60 << 30, 246 << 20), true).unwrap();
        assert_eq!(n, 16, "{why}");
        // 32 GiB: 20 GB left beside the parameters holds two of 8.3 GB.
        let (n, why) = workers_for(&cfg, &m, (20_000_000_000, 8_300_000_000), false).unwrap();
        assert_eq!(n, 2, "{why}");
        assert!(why.contains("host memory"), "{why}");
        // Less than one partition's room still runs one at a time.
        cfg.synthesis_workers = 2;
        assert_eq!(workers_for(&cfg, &m, (1, 8 << 30), true).unwrap().0, 1);
        // Back to the machine's choice once the room is there again.
        cfg.synthesis_workers = 1;
        assert_eq!(
            workers_for(&cfg, &m, (1 << 40, 1 << 20), false).unwrap().0,
            8
        );
        // A value the user set is theirs; the cpu backend keeps its own.
        cfg.set("synthesis_workers", "3").unwrap();
        assert!(workers_for(&cfg, &m, (1, 8 << 30), true).is_none());
        let cpu = Machine {
            backend: BackendKind::Cpu,
            gpus: 0,
            ..m
        };
        let mut cfg = EngineConfig::default();
        resolve(&mut cfg, &cpu);
        assert!(workers_for(&cfg, &cpu, (1, 8 << 30), true).is_none());
    }

    #[test]
    fn jobs_in_flight_cover_every_worker() {
        let cfg = EngineConfig {
            synthesis_workers: 8,
            ..EngineConfig::default()
        };
        assert_eq!(jobs_in_flight(&cfg, 2, 1).0, 12);
        assert_eq!(jobs_in_flight(&cfg, 2, 10).0, 2);
        assert_eq!(jobs_in_flight(&cfg, 0, 100).0, 1);
    }

    #[test]
    fn auto_keeps_the_synthetic_workloads_fused_synthesis() {
        let mut cfg = EngineConfig::default();
        resolve(
            &mut cfg,
            &Machine {
                cores: 2,
                gpus: 0,
                backend: BackendKind::Cpu,
            },
        );
        let synthetic = Workload::Synthetic {
            log2_constraints: 10,
        };
        let sha = Workload::Sha256 { blocks: 1 };
        assert!(!precompiled_for(&cfg, &synthetic, false) && precompiled_for(&cfg, &sha, false));
        assert!(
            precompiled_for(&cfg, &synthetic, true),
            "auto takes every workload's matrices to a device that evaluates them"
        );
        cfg.set("precompiled", "true").unwrap();
        assert!(
            precompiled_for(&cfg, &synthetic, false),
            "true means every workload"
        );
        cfg.set("precompiled", "false").unwrap();
        assert!(!precompiled_for(&cfg, &sha, true) && !precompiled_for(&cfg, &synthetic, true));
    }

    #[test]
    fn a_value_given_is_kept() {
        let mut cfg = EngineConfig::default();
        cfg.set("synthesis_workers", "5").unwrap();
        cfg.set("b_g2_on", "cpu").unwrap();
        let m = Machine {
            cores: 16,
            gpus: 1,
            backend: BackendKind::Cuda,
        };
        resolve(&mut cfg, &m);
        assert_eq!((cfg.synthesis_workers, cfg.b_g2_on), (5, Placement::Cpu));
        assert_eq!(cfg.synthesis_threads, 16);
    }
}
