//! The advisor: from what a run's report holds, what the devices waited for (`bottleneck`, one
//! sentence) and which `[engine]` knobs would help (`advice`, at most three, best first).
//!
//! It reads only the report (stage medians, each device's busy time and idle gaps by cause and
//! reason, the host's cores and pools, the configuration in force), so a recording gets the
//! same advice on any machine as the live run did.
//!
//! # The model
//!
//! A device's time is its busy time and its gaps by cause (`report::DeviceReport`). The run's
//! first and last idle stretches (`no_work`'s `run_start` and `run_end`) are left out: no knob
//! shortens them. Over the rest, let `f_c` be the share of a device's time idle for cause `c`
//! (the mean over devices) and `R` the measured rate (steady proofs per hour where there are
//! enough proofs, else the whole run's). If a knob removes the idle time of `c`, a proof's
//! share of device time shrinks by `f_c` and the rate becomes `R / (1 − f_c)`: that is the most
//! the knob can give. It gives less when the stage it feeds cannot supply that much more:
//!
//! - synthesis supplies at most `S = 3600 · synthesis_workers / t_s` partitions an hour, `t_s`
//!   the median synthesis (with `abc_eval`) of a partition; `N` workers supply `S · N / W`, and
//!   no more than its threads allow: `1 / busy(synthesis pool)` times what they do now;
//! - more threads (`synthesis_threads`) give at most `T′ / T`, and no more than the idle cores
//!   allow: `1 / busy(cores)`;
//! - `C` jobs in flight give at most `C′ / C`, no more than synthesis supplies (`S / R`), and no
//!   more than the cores allow: each proof takes its CPU time, so at most `0.85 / busy(cores)`
//!   (the share past which the host has no cores to spare);
//! - a looser `lock` removes the `lock_held` time, B in G2 on the GPU the part of it whose holder
//!   was in that MSM, `prestage` the `upload` time, one more GPU worker the `queued` time (at
//!   most `(G + 1) / G`);
//! - B in G2 on the host, when the cores are all busy, takes its share of the host's CPU time
//!   from synthesis: moving it to the GPU gives at most `1 / (1 − share)`; when too few jobs are
//!   in flight it is also on every job's way through: a job's turnaround `L` (its partition's
//!   stage medians end to end) becomes `L − t_g2`, and the same jobs in flight give `L / (L −
//!   t_g2)`.
//!
//! `expected_gain` is the least of these bounds for the knob: the predicted ratio of proofs per
//! hour after the change to before. A recommendation needs a gain of at least 3 %; none is a
//! valid answer (a device busy nearly all the time has nothing to gain from the host).

mod rules;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::config::EngineConfig;
use crate::gaps::detail::{HOLDER_AFTER, IDLE_END, IDLE_START};
use crate::report::{DeviceReport, HostReport, Summary};

/// The least gain worth recommending a change for.
pub const MIN_GAIN: f64 = 1.03;
/// At most this many recommendations.
pub const MAX_ADVICE: usize = 3;
/// A device busy this much of its steady time is the bottleneck itself.
const DEVICE_BOUND: f64 = 0.9;
/// Cores busy this much on average: the host has no cores to spare.
const CORES_BOUND: f64 = 0.85;
/// The jobs-in-flight knob (`--concurrency`): not an `[engine]` key, but the run's own.
pub const CONCURRENCY: &str = "concurrency";

/// One recommendation: change `knob` from `from` to `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// The `[engine]` key (or `concurrency`, the jobs kept in flight).
    pub knob: String,
    /// Its value in the run, as the config file writes it (`?` where the run did not say).
    pub from: String,
    /// The value recommended.
    pub to: String,
    /// Predicted proofs per hour after the change over before (the module's model).
    pub expected_gain: f64,
    /// Why, from the measurements.
    pub reason: String,
}

impl Advice {
    /// `synthesis_workers 2 → 6 (×1.80): reason`.
    pub fn line(&self) -> String {
        format!(
            "{} {} → {} (×{:.2}): {}",
            self.knob, self.from, self.to, self.expected_gain, self.reason
        )
    }
}

/// The advisor's answer for a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// What the devices waited for and the evidence, in one sentence.
    pub bottleneck: String,
    /// At most three recommendations, the largest expected gain first; may be empty.
    pub advice: Vec<Advice>,
    /// The stretch judged (seconds on the session clock): the asked window cut to its work;
    /// `None` where none had work, or the caller gave the evidence itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(f64, f64)>,
}

/// What the advisor reads: a report's parts and the configuration in force.
pub struct Evidence<'a> {
    /// The run's counts, rate and stage statistics.
    pub summary: &'a Summary,
    /// Each device's busy time and gaps over the run.
    pub devices: &'a [DeviceReport],
    /// The host's cores and pools; `None` without host samples.
    pub host: Option<&'a HostReport>,
    /// The configuration in force (`auto` keys resolved where the run said).
    pub config: &'a EngineConfig,
    /// The host's cores.
    pub cores: usize,
    /// Jobs kept in flight, where known.
    pub jobs_in_flight: Option<u64>,
}

/// The shares of the devices' steady time (the run without its first and last idle stretch).
#[derive(Debug, Default)]
struct Shares {
    /// Share of time busy, mean over devices.
    busy: f64,
    /// Share of time idle by cause (`no_work` without its start and end), mean over devices.
    cause: BTreeMap<&'static str, f64>,
    /// Seconds by reason, summed over devices, for the causes with reasons.
    lock_held: BTreeMap<String, f64>,
    waiting_synthesis: BTreeMap<&'static str, f64>,
    no_work: BTreeMap<&'static str, f64>,
}

impl Shares {
    fn of(devices: &[DeviceReport]) -> Shares {
        let mut s = Shares::default();
        let n = devices.len().max(1) as f64;
        for d in devices {
            let nw = &d.gap_detail.no_work;
            let ends = nw.get(IDLE_START).unwrap_or(&0.0) + nw.get(IDLE_END).unwrap_or(&0.0);
            let steady = (d.busy_seconds + d.idle_seconds - ends).max(1e-9);
            s.busy += d.busy_seconds / steady / n;
            for (c, secs) in &d.gaps {
                let secs = match *c {
                    "no_work" => (secs - ends).max(0.0),
                    _ => *secs,
                };
                *s.cause.entry(c).or_default() += secs / steady / n;
            }
            for (k, v) in &d.gap_detail.lock_held {
                *s.lock_held.entry(k.clone()).or_default() += v;
            }
            for (k, v) in &d.gap_detail.waiting_synthesis {
                *s.waiting_synthesis.entry(k).or_default() += v;
            }
            for (k, v) in nw {
                *s.no_work.entry(k).or_default() += v;
            }
        }
        s
    }

    fn of_cause(&self, c: &str) -> f64 {
        self.cause.get(c).copied().unwrap_or(0.0)
    }

    /// The idle share a fix of `c` removes and the ratio that gives: `1 / (1 − f)`.
    fn removing(&self, f: f64) -> f64 {
        1.0 / (1.0 - f.clamp(0.0, 0.95))
    }
}

/// The largest entry of a map of seconds, with its share of the total.
fn top<K: Clone>(m: &BTreeMap<K, f64>) -> Option<(K, f64)> {
    let total: f64 = m.values().sum();
    let (k, v) = m.iter().max_by(|a, b| a.1.total_cmp(b.1))?;
    (total > 0.0).then(|| (k.clone(), v / total))
}

fn pct(f: f64) -> String {
    format!("{:.0} %", f * 100.0)
}

/// The advisor over a report's parts; see the module's model.
pub fn advise(e: &Evidence) -> Verdict {
    if e.devices.is_empty() {
        return Verdict {
            bottleneck: "no device telemetry in this run: nothing to attribute".into(),
            advice: vec![],
            window: None,
        };
    }
    let a = Advisor::new(e);
    if a.s.busy >= DEVICE_BOUND {
        return Verdict {
            bottleneck: a.bottleneck(),
            advice: vec![],
            window: None,
        };
    }
    let mut advice: Vec<Advice> = [
        a.synthesis(),
        a.jobs_in_flight(),
        a.lock(),
        a.b_g2_host(),
        a.workers(),
        a.prestage(),
    ]
    .into_iter()
    .flatten()
    .filter(|x| x.expected_gain >= MIN_GAIN && x.expected_gain.is_finite())
    .collect();
    advice.sort_by(|x, y| y.expected_gain.total_cmp(&x.expected_gain));
    let mut seen = vec![];
    advice.retain(|x| {
        let fresh = !seen.contains(&x.knob);
        seen.push(x.knob.clone());
        fresh
    });
    advice.truncate(MAX_ADVICE);
    for x in &mut advice {
        x.expected_gain = (x.expected_gain * 100.0).round() / 100.0;
    }
    Verdict {
        bottleneck: a.bottleneck(),
        advice,
        window: None,
    }
}

/// The measurements the rules share.
struct Advisor<'a> {
    e: &'a Evidence<'a>,
    s: Shares,
    /// Proofs per hour measured.
    rate: f64,
    /// Whether the devices are GPUs (B in G2 can move there).
    gpu: bool,
    /// Mean busy fraction of the cores, of the synthesis pool, of the prover pool.
    cpu_busy: Option<f64>,
    synth_busy: Option<f64>,
    prover_busy: Option<f64>,
}

impl<'a> Advisor<'a> {
    fn new(e: &'a Evidence<'a>) -> Self {
        let rate = match e.summary.steady_proofs_per_hour {
            r if r > 0.0 => r,
            _ => e.summary.proofs_per_hour,
        };
        let pool = |name: &str| {
            e.host
                .and_then(|h| h.pools_busy_mean.get(name).copied())
                .filter(|b| *b > 0.0)
        };
        Advisor {
            s: Shares::of(e.devices),
            rate,
            gpu: e.devices.iter().any(|d| d.id.starts_with("gpu")),
            cpu_busy: e
                .host
                .filter(|h| h.samples > 0)
                .map(|h| h.cpu_busy_mean.clamp(0.0, 1.0)),
            synth_busy: pool("synthesis"),
            prover_busy: pool("prover"),
            e,
        }
    }

    fn stage(&self, key: &str) -> f64 {
        self.e.summary.stages.get(key).map_or(0.0, |s| s.median)
    }

    /// A partition's way from synthesis to its finished proof: the medians of the stages it
    /// passes one after another.
    fn turnaround(&self) -> f64 {
        [
            "synthesis",
            "abc_eval",
            "queue_wait",
            "lock_wait",
            "prep",
            "h2d",
            "device_wall",
            "msm_b_g2",
            "finalize",
            "verify",
        ]
        .iter()
        .map(|k| self.stage(k))
        .sum()
    }

    fn cfg(&self) -> &EngineConfig {
        self.e.config
    }

    /// `9 of 16 cores idle`, where the host was sampled.
    fn idle_cores(&self) -> Option<(usize, usize)> {
        let busy = self.cpu_busy?;
        let n = self.e.cores.max(1);
        Some((((1.0 - busy) * n as f64).round() as usize, n))
    }

    /// How many times the current rate synthesis could supply if its workers never waited:
    /// `S / R` of the model; `None` without synthesis times or a rate.
    fn synthesis_capacity(&self) -> Option<f64> {
        let t = self.stage("synthesis") + self.stage("abc_eval");
        (t > 0.0 && self.rate > 0.0)
            .then(|| 3600.0 * self.cfg().synthesis_workers as f64 / t / self.rate)
    }

    /// The share of device time lost to partitions that did not reach synthesis: `no_work`
    /// with jobs to come (`too_few_jobs`, `pending_not_started`: what is left of it once the
    /// run's start and end are set aside).
    fn unfed(&self) -> f64 {
        self.s.of_cause("no_work")
    }

    /// One sentence: the largest cause of idle time and its evidence, or the device itself.
    fn bottleneck(&self) -> String {
        let subject = match (self.gpu, self.e.devices.len()) {
            (true, 1) => "the GPU".to_string(),
            (true, n) => format!("each of the {n} GPUs"),
            (false, 1) => self.e.devices[0].id.to_string(),
            (false, n) => format!("each of the {n} CPU executors"),
        };
        let busy = self.s.busy.min(1.0);
        let top_cause = self
            .s
            .cause
            .iter()
            .filter(|(_, f)| **f > 0.0)
            .max_by(|a, b| a.1.total_cmp(b.1));
        if busy < DEVICE_BOUND && top_cause.is_none() {
            // Neither busy nor idle for a cause: the window held no device time to judge.
            return format!("{subject} did no work in this window: nothing to judge");
        }
        let Some((cause, f)) = top_cause.filter(|_| busy < DEVICE_BOUND) else {
            let kernels = self.stage("device_kernels");
            return format!(
                "{subject} computes {} of the time: the device is the bottleneck{}",
                pct(busy),
                match kernels > 0.0 {
                    true => format!(" ({kernels:.3} s of kernels a partition)"),
                    false => String::new(),
                }
            );
        };
        let cores = self.idle_cores();
        let f = pct(*f);
        match *cause {
            "waiting_synthesis" => {
                let why = top(&self.s.waiting_synthesis)
                    .map(|(r, _)| format!(" (short of {})", r.replace('_', " ")))
                    .unwrap_or_default();
                match cores {
                    Some((i, n)) => format!(
                        "{subject} waits for synthesis {f} of the time{why} while {i} of {n} cores idle"
                    ),
                    None => format!("{subject} waits for synthesis {f} of the time{why}"),
                }
            }
            "no_work" => format!(
                "{subject} has no work {f} of the time: too few jobs in flight{}",
                self.e
                    .jobs_in_flight
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default()
            ),
            "lock_held" => {
                let holder = top(&self.s.lock_held)
                    .map(|(h, _)| match h.strip_prefix(HOLDER_AFTER) {
                        Some(stage) => format!(", held through host work after {stage}"),
                        None if h == crate::gaps::detail::HOLDER_UNKNOWN => {
                            ", its holder out of sight".to_string()
                        }
                        None => format!(", its holder in {h}"),
                    })
                    .unwrap_or_default();
                format!(
                    "{subject} waits for its lock ({}) {f} of the time{holder}",
                    self.cfg().get("lock").unwrap_or_default()
                )
            }
            "queued" => format!(
                "partitions wait queued {f} of the time while {subject} idles: too few GPU workers"
            ),
            other => {
                let what = match other {
                    "upload" => "uploads",
                    "download" => "downloads",
                    "alloc" => "allocations",
                    "prep" => "CPU preparation",
                    "imbalance" => "another device's work",
                    _ => "something no span names (unattributed)",
                };
                format!("{subject} waits for {what} {f} of the time")
            }
        }
    }
}
