//! Each engine job's partitions as the telemetry bus tells them (synthesised, on a device,
//! done or failed, with their times), for the status page's `pipelines` and `gpu_workers`.
//! A thread of its own folds the bus in; it ends when the board is dropped.

use parking_lot::Mutex;
use provetop_telemetry::{Bus, Event, JobState, Stage};
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// A partition's state, as cuzk's status page names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PartState {
    #[default]
    Pending,
    Synthesizing,
    SynthDone,
    Gpu,
    Done,
    Failed,
}

impl PartState {
    /// cuzk's name: `pending | synthesizing | synth_done | gpu | done | failed`.
    pub fn name(self) -> &'static str {
        match self {
            PartState::Pending => "pending",
            PartState::Synthesizing => "synthesizing",
            PartState::SynthDone => "synth_done",
            PartState::Gpu => "gpu",
            PartState::Done => "done",
            PartState::Failed => "failed",
        }
    }
}

/// One partition.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Part {
    pub state: PartState,
    pub synth_ms: u64,
    pub gpu_ms: u64,
    /// The device proving it (`gpu0`, `cpu0`), while it is on one.
    pub device: Option<String>,
    /// When it went onto its device.
    pub since: Option<Instant>,
}

/// The partitions of every job the engine has open, by engine job.
#[derive(Default)]
pub struct Board {
    jobs: Mutex<HashMap<u64, HashMap<u32, Part>>>,
}

impl Board {
    /// A board fed from `bus` from now on.
    pub fn start(bus: &Bus) -> std::io::Result<Arc<Board>> {
        let board = Arc::new(Board::default());
        let sub = bus.subscribe(1 << 14);
        let weak: Weak<Board> = Arc::downgrade(&board);
        std::thread::Builder::new()
            .name("serve-board".into())
            .spawn(move || loop {
                let event = sub.rx.recv_timeout(Duration::from_millis(500));
                let Some(board) = weak.upgrade() else { return };
                match event {
                    Ok(e) => board.observe(&e),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
                }
            })?;
        Ok(board)
    }

    /// Folds one event in.
    pub fn observe(&self, e: &Event) {
        let mut jobs = self.jobs.lock();
        match e {
            Event::Job(j) => match (j.partition, j.state) {
                (None, JobState::Verified | JobState::Failed | JobState::Cancelled) => {
                    jobs.remove(&j.job);
                }
                (Some(p), state) => {
                    let part = jobs.entry(j.job).or_default().entry(p).or_default();
                    match state {
                        JobState::Submitted => *part = Part::default(),
                        JobState::Synthesized => part.state = PartState::SynthDone,
                        JobState::Proving => {
                            part.state = PartState::Gpu;
                            part.device = j.detail.clone();
                            part.since = Some(Instant::now());
                        }
                        _ => {}
                    }
                }
                _ => {}
            },
            Event::Proof(r) => {
                let Some(job) = jobs.get_mut(&r.job) else {
                    return;
                };
                let stage = |s: Stage| r.stages.get(&s).copied().unwrap_or(0.0);
                let ms = |s: f64| (s * 1000.0).round() as u64;
                let device: f64 = [
                    Stage::H2d,
                    Stage::NttH,
                    Stage::MsmH,
                    Stage::MsmL,
                    Stage::MsmA,
                    Stage::MsmBG1,
                    Stage::MsmBG2,
                    Stage::BatchAdd,
                ]
                .into_iter()
                .map(stage)
                .sum();
                job.insert(
                    r.partition,
                    Part {
                        state: match r.verified {
                            true => PartState::Done,
                            false => PartState::Failed,
                        },
                        synth_ms: ms(stage(Stage::Synthesis) + stage(Stage::AbcEval)),
                        gpu_ms: ms(device),
                        device: None,
                        since: None,
                    },
                );
            }
            _ => {}
        }
    }

    /// The `partitions` partitions of engine job `job`; of the ones not yet synthesised, the
    /// first `synthesizing` (the engine's count in synthesis now, taken by the oldest jobs
    /// first) are marked so, as synthesis takes them in order.
    pub fn partitions(&self, job: u64, partitions: u32, synthesizing: &mut usize) -> Vec<Part> {
        let jobs = self.jobs.lock();
        let known = jobs.get(&job);
        (0..partitions)
            .map(|p| {
                let mut part = known.and_then(|j| j.get(&p)).cloned().unwrap_or_default();
                if part.state == PartState::Pending && *synthesizing > 0 {
                    *synthesizing -= 1;
                    part.state = PartState::Synthesizing;
                }
                part
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use provetop_telemetry::{JobEvent, ProofRecord};

    fn job(job: u64, partition: Option<u32>, state: JobState) -> Event {
        Event::Job(JobEvent {
            t: 0,
            job,
            partition,
            state,
            detail: Some("gpu0".into()),
            kind: None,
            name: None,
        })
    }

    #[test]
    fn partitions_move_through_cuzks_states() {
        let b = Board::default();
        b.observe(&job(1, None, JobState::Submitted));
        b.observe(&job(1, Some(0), JobState::Synthesized));
        b.observe(&job(1, Some(1), JobState::Synthesized));
        b.observe(&job(1, Some(1), JobState::Proving));
        let mut stages = std::collections::BTreeMap::new();
        stages.insert(Stage::Synthesis, 0.25);
        stages.insert(Stage::MsmH, 0.5);
        b.observe(&Event::Proof(ProofRecord {
            t: 0,
            job: 1,
            partition: 2,
            device: "gpu0".into(),
            verified: true,
            error: None,
            stages,
        }));
        let mut synthesizing = 1;
        let parts = b.partitions(1, 4, &mut synthesizing);
        let states: Vec<&str> = parts.iter().map(|p| p.state.name()).collect();
        assert_eq!(states, ["synth_done", "gpu", "done", "synthesizing"]);
        assert_eq!(synthesizing, 0);
        assert_eq!(parts[1].device.as_deref(), Some("gpu0"));
        assert_eq!((parts[2].synth_ms, parts[2].gpu_ms), (250, 500));
        b.observe(&job(1, None, JobState::Verified));
        assert_eq!(b.partitions(1, 1, &mut 0)[0].state, PartState::Pending);
    }
}
