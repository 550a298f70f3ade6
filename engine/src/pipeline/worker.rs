//! Device workers: each takes the next synthesised partition, passes its device's lock
//! strategy as the gate of the executor's region, and hands the MSM results to the finalizer.
//! Between partitions (the safe point) a worker notices it is surplus and leaves.

use std::sync::Arc;
use std::time::Instant;

use super::finalize;
use super::state::{requeue, Ready, State, Ticket};
use super::{Priority, Shared};
use crate::backend::{DeviceFault, Engine, RegionInput, RegionOptions, Step, Steps};
use crate::config::Placement;
use crate::telemetry::{Event, JobEvent, JobState, Lane, Span, Stage};

pub(super) fn spawn(shared: &Arc<Shared>, st: &mut State, device: usize) {
    start(shared, st, device, false);
}

/// A worker for one CRITICAL partition, when it was synthesised while every worker was in a
/// region or waiting for the lock: on the device running the fewest workers, beyond its
/// target, gone after that partition. Waiting for a worker to come free could cost a
/// WinningPoSt a whole region of other work.
pub(super) fn spawn_urgent(shared: &Arc<Shared>, st: &mut State) {
    let critical_waits = st
        .ready
        .front()
        .is_some_and(|r| r.ticket.priority == Priority::Critical);
    if !critical_waits || st.idle_workers > 0 {
        return;
    }
    let in_service = (0..st.devices.len()).filter(|&d| !st.devices[d].retiring);
    if let Some(d) = in_service.min_by_key(|&d| st.devices[d].running()) {
        st.devices[d].urgent += 1;
        start(shared, st, d, true);
    }
}

fn start(shared: &Arc<Shared>, st: &mut State, device: usize, urgent: bool) {
    let dev = &mut st.devices[device];
    let slot = match dev.slots.iter().position(|s| !s) {
        Some(i) => i,
        None => {
            dev.slots.push(false);
            dev.slots.len() - 1
        }
    };
    dev.slots[slot] = true;
    let name = dev.exec.device().to_string();
    let s = shared.clone();
    let handle = std::thread::Builder::new()
        .name(format!("{name}-w{slot}"))
        .spawn(move || run(&s, name, slot, urgent))
        .expect("spawning a device worker");
    // Urgent workers come and go: forget the ones that have ended.
    st.threads.retain(|t| !t.is_finished());
    st.threads.push(handle);
}

/// Frees the worker's slot; a retiring device leaves once its last worker has.
fn leave(st: &mut State, device: usize, slot: usize, urgent: bool) {
    st.devices[device].slots[slot] = false;
    st.devices[device].urgent -= usize::from(urgent);
    if st.devices[device].retiring && st.devices[device].running() == 0 {
        st.devices.remove(device);
    }
}

/// A worker's loop: the next synthesised partition through the device, until the worker is
/// surplus (or, `urgent`, after its one CRITICAL partition).
fn run(shared: &Arc<Shared>, name: String, slot: usize, urgent: bool) {
    let position = |st: &State| {
        st.devices
            .iter()
            .position(|d| d.exec.device() == name)
            .expect("a worker's device exists")
    };
    let mut done = false;
    loop {
        let mut st = shared.state.lock();
        let ready = loop {
            let d = position(&st);
            let dev = &st.devices[d];
            let surplus = match urgent {
                // its partition, unless another worker took it meanwhile
                true => {
                    done || st
                        .ready
                        .front()
                        .is_none_or(|r| r.ticket.priority != Priority::Critical)
                }
                false => dev.regular() > dev.target,
            };
            if st.shutdown || dev.retiring || surplus {
                leave(&mut st, d, slot, urgent);
                drop(st);
                shared.cv.notify_all();
                return;
            }
            if let Some(r) = st.ready.pop_front() {
                break r;
            }
            st.idle_workers += 1;
            shared.cv.wait(&mut st);
            st.idle_workers -= 1;
        };
        done = true;
        let d = position(&st);
        let (exec, lock) = (st.devices[d].exec.clone(), st.devices[d].lock.clone());
        let b_g2_here = st.cfg.b_g2_on == Placement::Gpu;
        let opts = RegionOptions::from(&st.cfg);
        st.proving += 1;
        let prover_pool = st.prover_pool.clone();
        drop(st);
        // A partition left the queue: the dispatcher may synthesise another.
        shared.cv.notify_all();
        prove(
            shared,
            &name,
            slot,
            exec,
            lock,
            (b_g2_here, opts),
            ready,
            &prover_pool,
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn prove(
    shared: &Arc<Shared>,
    device: &str,
    slot: usize,
    exec: Arc<dyn crate::backend::Executor>,
    lock: Arc<dyn super::locks::DeviceLock>,
    (b_g2_here, opts): (bool, RegionOptions),
    mut ready: Ready,
    prover_pool: &rayon::ThreadPool,
) {
    let start = Instant::now();
    let (job, partition) = (ready.ticket.job, ready.ticket.partition);
    ready
        .stages
        .insert(Stage::QueueWait, (start - ready.queued).as_secs_f64());
    shared.bus.publish(Event::Job(JobEvent {
        t: shared.clock.at(start),
        job,
        partition: Some(partition),
        state: JobState::Proving,
        detail: Some(device.to_string()),
        kind: None,
        name: None,
    }));
    let mut steps = Steps::publishing(step_sink(shared, device, slot, job, partition));
    let result = {
        let urgent = ready.ticket.priority == Priority::Critical;
        let mut gate = super::locks::gate_for(&*lock, urgent, &shared.holds);
        // Its region starts now: ordinary kernels may go again.
        ready.hold = None;
        let input = RegionInput::new(
            &mut ready.asg,
            &ready.msms,
            &ready.loaded.params,
            b_g2_here,
            opts,
            ready.prestaged.as_ref(),
        )
        .with_circuit(ready.circuit.as_deref())
        .with_urgent(urgent);
        exec.prove_region(input, &mut *gate, &mut steps)
    };
    // Its page-locked block goes back to the pool for the next partition.
    ready.prestaged = None;
    for step in steps.all() {
        *ready.stages.entry(step.stage).or_insert(0.0) += (step.end - step.start).as_secs_f64();
    }
    if let Some(fault) = result
        .as_ref()
        .err()
        .and_then(|e| e.downcast_ref::<DeviceFault>())
    {
        if fail_over(shared, device, fault, &mut ready) {
            return;
        }
    }
    let shared2 = shared.clone();
    let device = device.to_string();
    prover_pool.spawn(move || finalize::finalize(&shared2, device, ready, result));
}

/// Publishes each step of a partition's region as a span once its end is known, on the lane
/// where it ran: the worker's own for what its thread did, the device engine's otherwise.
fn step_sink(
    shared: &Arc<Shared>,
    device: &str,
    slot: usize,
    job: u64,
    partition: u32,
) -> crate::backend::StepSink {
    let (shared, device) = (shared.clone(), device.to_string());
    Box::new(move |step: &Step| {
        if step.end <= step.start {
            return;
        }
        let device = device.clone();
        let lane = match step.engine {
            Engine::Host => Lane::Worker {
                device,
                worker: slot as u32,
            },
            Engine::Compute => Lane::Compute { device },
            Engine::H2d => Lane::H2d { device },
            Engine::D2h => Lane::D2h { device },
        };
        shared.bus.publish(Event::Span(Span {
            lane,
            stage: step.stage,
            start: shared.clock.at(step.start),
            end: shared.clock.at(step.end),
            job: Some(job),
            partition: Some(partition),
            bytes: step.bytes,
        }));
    })
}

/// A device fault: the device leaves service for good and the partition goes back to be
/// synthesised again (synthesis is a function of the job's seed) for the other devices. False
/// when no other device is in service: then the partition fails with the fault, as on any
/// error, and the device stays (an engine without devices would hold its jobs forever).
fn fail_over(shared: &Arc<Shared>, device: &str, fault: &DeviceFault, ready: &mut Ready) -> bool {
    let mut st = shared.state.lock();
    let others = st
        .devices
        .iter()
        .any(|d| d.exec.device() != device && !d.retiring);
    if !others {
        return false;
    }
    if let Some(d) = st.devices.iter_mut().find(|d| d.exec.device() == device) {
        if d.failed.is_none() {
            tracing::error!(
                "{device}: {fault}; it leaves service and its partitions move to the other devices"
            );
            d.failed = Some(fault.0.clone());
            d.retiring = true;
        }
    }
    let (job, partition) = (ready.ticket.job, ready.ticket.partition);
    st.proving -= 1;
    ready.host.release();
    requeue(
        &mut st.pending,
        Ticket {
            job,
            partition,
            priority: ready.ticket.priority,
        },
    );
    drop(st);
    shared.bus.publish(Event::Job(JobEvent {
        t: shared.clock.now(),
        job,
        partition: Some(partition),
        state: JobState::Submitted,
        detail: Some(format!("moved off {device}: {fault}")),
        kind: None,
        name: None,
    }));
    shared.cv.notify_all();
    true
}
