//! The advisor's rules, one a knob: each names what the devices waited for, bounds the gain of
//! removing it by what the stage it feeds can supply (the model in the module above), and says
//! why in its `reason`.

use super::{pct, top, Advice, Advisor, CONCURRENCY, CORES_BOUND};
use crate::config::{LockStrategy, Placement, MAX_WORKERS};
use crate::gaps::detail::{HOLDER_AFTER, POOL_BUSY, SYNTH_BANDWIDTH, SYNTH_CORES};

impl Advisor<'_> {
    /// Waiting for synthesis: more workers when its threads idle, more threads when its pool is
    /// full and cores idle; nothing when memory bandwidth is short or every core is busy.
    pub(super) fn synthesis(&self) -> Option<Advice> {
        let f = self.s.of_cause("waiting_synthesis");
        if f <= 0.0 {
            return None;
        }
        let want = self.s.removing(f);
        let (reason, _) = top(&self.s.waiting_synthesis).unwrap_or(("unknown", 1.0));
        let cfg = self.cfg();
        let cores = self.e.cores.max(1);
        let pool_full = self.synthesis_pool_full();
        if reason == SYNTH_BANDWIDTH {
            return None;
        }
        if pool_full {
            let t = cfg.synthesis_threads;
            let to = (((t as f64) * want).ceil() as usize).min(cores);
            if to <= t {
                return None;
            }
            let headroom = self.cpu_busy.map_or(f64::INFINITY, |b| 1.0 / b.max(0.05));
            return Some(Advice {
                knob: "synthesis_threads".into(),
                from: t.to_string(),
                to: to.to_string(),
                expected_gain: want.min(to as f64 / t as f64).min(headroom),
                reason: format!(
                    "the GPU waits for synthesis {} of the time with its pool {} busy{}",
                    pct(f),
                    pct(self.synth_busy.unwrap_or(1.0)),
                    self.idle_cores()
                        .map(|(i, n)| format!(" and {i} of {n} cores idle"))
                        .unwrap_or_default()
                ),
            });
        }
        let w = cfg.synthesis_workers.max(1);
        // Synthesis that could keep up if it had partitions is not short of workers: the jobs
        // in flight are (`jobs_in_flight`).
        let capacity = self.synthesis_capacity().unwrap_or(1.0);
        if capacity >= want {
            return None;
        }
        let to = ((w as f64 * want / capacity).ceil() as usize)
            .max(w + 1)
            .min(cores.max(w + 1))
            .min(MAX_WORKERS);
        let threads = self.synth_busy.map_or(f64::INFINITY, |b| 1.0 / b.max(0.05));
        Some(Advice {
            knob: "synthesis_workers".into(),
            from: w.to_string(),
            to: to.to_string(),
            expected_gain: want.min(capacity * to as f64 / w as f64).min(threads),
            reason: format!(
                "the GPU waits for synthesis {} of the time{}; {w} worker(s) at {:.2} s a partition supply {:.0} partitions/h",
                pct(f),
                self.idle_cores()
                    .map(|(i, n)| format!(" while {i} of {n} cores idle"))
                    .unwrap_or_default(),
                self.stage("synthesis") + self.stage("abc_eval"),
                capacity * self.rate,
            ),
        })
    }

    /// Whether synthesis waited for cores (its pool full) rather than for work.
    pub(super) fn synthesis_pool_full(&self) -> bool {
        let reason = top(&self.s.waiting_synthesis).map(|(r, _)| r);
        reason == Some(SYNTH_CORES) || self.synth_busy.is_some_and(|b| b >= POOL_BUSY)
    }

    /// Too few jobs in flight: the devices idle between submissions, or synthesis waits for
    /// partitions it could have made.
    pub(super) fn jobs_in_flight(&self) -> Option<Advice> {
        let mut f = self.unfed();
        let cores = self
            .cpu_busy
            .map_or(f64::INFINITY, |b| CORES_BOUND / b.max(0.01));
        let capacity = self
            .synthesis_capacity()
            .unwrap_or(f64::INFINITY)
            .min(cores);
        let ws = self.s.of_cause("waiting_synthesis");
        let synth_unfed =
            ws > 0.0 && !self.synthesis_pool_full() && capacity >= self.s.removing(ws);
        if synth_unfed {
            f += ws;
        }
        if f <= 0.0 {
            return None;
        }
        let c = self.e.jobs_in_flight;
        let want = self.s.removing(f);
        let (from, to, ratio) = match c {
            Some(c) if c > 0 => {
                let to = ((c as f64 * want).ceil() as u64).max(c + 1);
                (c.to_string(), to.to_string(), to as f64 / c as f64)
            }
            _ => ("?".into(), "more".into(), want),
        };
        Some(Advice {
            knob: CONCURRENCY.into(),
            from,
            to,
            expected_gain: want.min(ratio).min(capacity),
            reason: match synth_unfed {
                true => format!(
                    "the GPU idles {} of the time for partitions synthesis could have made: it runs below its {:.0} partitions/h",
                    pct(f),
                    capacity * self.rate
                ),
                false => format!("the GPU has no work {} of the time between jobs", pct(f)),
            },
        })
    }

    /// `lock_held`: the holder's time outside kernels goes when workers stop excluding each
    /// other; B in G2 on the host inside the region goes to the GPU instead (`b_g2_host`).
    pub(super) fn lock(&self) -> Option<Advice> {
        let f = self.s.of_cause("lock_held");
        let cfg = self.cfg();
        if f <= 0.0 || cfg.gpu_workers_per_device < 2 {
            return None;
        }
        let to = match cfg.lock {
            LockStrategy::Single => "two-lock",
            LockStrategy::TwoLock => "none",
            LockStrategy::None => return None,
        };
        let (holder, share) = top(&self.s.lock_held).unwrap_or(("unknown".into(), 1.0));
        let what = match holder.strip_prefix(HOLDER_AFTER) {
            Some(stage) => format!("host work after {stage}"),
            None => holder.clone(),
        };
        Some(Advice {
            knob: "lock".into(),
            from: self.cfg().get("lock").unwrap_or_default(),
            to: to.into(),
            expected_gain: self.s.removing(f),
            reason: format!(
                "the GPU waits for its lock {} of the time while the holder is in {what} ({} of it)",
                pct(f),
                pct(share)
            ),
        })
    }

    /// B in G2 on the host: the finalizers' MSM takes cores synthesis needs, or holds the lock.
    pub(super) fn b_g2_host(&self) -> Option<Advice> {
        let cfg = self.cfg();
        let t_g2 = self.stage("msm_b_g2");
        if !self.gpu || cfg.b_g2_on != Placement::Cpu || t_g2 <= 0.0 {
            return None;
        }
        let idle = 1.0 - self.s.busy.min(1.0);
        // Its part of the lock's time, where the holder was in it.
        let held: f64 = self.s.lock_held.values().sum();
        let in_g2: f64 = self
            .s
            .lock_held
            .iter()
            .filter(|(k, _)| k.ends_with("msm_b_g2"))
            .map(|(_, v)| v)
            .sum();
        let lock_part = match held > 0.0 {
            true => self.s.of_cause("lock_held") * in_g2 / held,
            false => 0.0,
        };
        // Its share of the host's CPU time, when the cores are all busy.
        let cpu_part = match (self.cpu_busy, self.prover_busy) {
            (Some(cpu), Some(prover)) if cpu >= CORES_BOUND => {
                let fin = t_g2 + self.stage("finalize") + self.stage("verify");
                let prover_cpu = prover * cfg.prover_threads as f64;
                let all_cpu = cpu * self.e.cores.max(1) as f64;
                (prover_cpu / all_cpu.max(1e-9)).min(1.0) * t_g2 / fin.max(1e-9)
            }
            _ => 0.0,
        };
        // On every job's way through, while the devices wait for jobs.
        let turnaround = self.turnaround();
        let latency = match self.unfed() > 0.0 && turnaround > t_g2 {
            true => turnaround / (turnaround - t_g2),
            false => 1.0,
        };
        let gain = self
            .s
            .removing(lock_part)
            .max(1.0 / (1.0 - cpu_part.clamp(0.0, 0.95)))
            .max(latency)
            .min(1.0 / (1.0 - idle.clamp(0.0, 0.95)));
        Some(Advice {
            knob: "b_g2_on".into(),
            from: "cpu".into(),
            to: "gpu".into(),
            expected_gain: gain,
            reason: format!(
                "B in G2 takes {t_g2:.2} s a partition on the host{}{}{}",
                match latency > 1.0 {
                    true => format!(", of a job's {turnaround:.2} s turnaround"),
                    false => String::new(),
                },
                match cpu_part > 0.0 {
                    true => format!(", {} of the busy cores' time", pct(cpu_part)),
                    false => String::new(),
                },
                match lock_part > 0.0 {
                    true => format!(
                        ", the GPU waits for its lock {} of the time",
                        pct(lock_part)
                    ),
                    false => String::new(),
                }
            ),
        })
    }

    /// `queued`: synthesised partitions wait while the device idles and no worker takes one.
    pub(super) fn workers(&self) -> Option<Advice> {
        let f = self.s.of_cause("queued");
        let g = self.cfg().gpu_workers_per_device;
        if f <= 0.0 || g >= 16 {
            return None;
        }
        Some(Advice {
            knob: "gpu_workers_per_device".into(),
            from: g.to_string(),
            to: (g + 1).to_string(),
            expected_gain: self.s.removing(f).min((g + 1) as f64 / g as f64),
            reason: format!(
                "partitions wait queued {} of the time while the device idles",
                pct(f)
            ),
        })
    }

    /// `upload` with staging under the lock: witnesses laid out page-locked upload before it.
    pub(super) fn prestage(&self) -> Option<Advice> {
        let f = self.s.of_cause("upload");
        if f <= 0.0 || self.cfg().prestage {
            return None;
        }
        Some(Advice {
            knob: "prestage".into(),
            from: "false".into(),
            to: "true".into(),
            expected_gain: self.s.removing(f),
            reason: format!(
                "the GPU waits for uploads {} of the time, staged under the lock",
                pct(f)
            ),
        })
    }
}
