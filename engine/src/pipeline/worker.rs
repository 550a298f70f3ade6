//! Device workers: each takes the next synthesised partition, passes its device's lock
//! strategy as the gate of the executor's region, and hands the MSM results to the finalizer.
//! Between partitions (the safe point) a worker notices it is surplus and leaves.

use std::sync::Arc;
use std::time::Instant;

use super::finalize;
use super::state::{Ready, State, Ticket};
use super::Shared;
use crate::backend::{DeviceFault, Engine, RegionInput, RegionOptions, Steps};
use crate::config::Placement;
use crate::telemetry::{Event, JobEvent, JobState, Lane, Span, Stage};

pub(super) fn spawn(shared: &Arc<Shared>, st: &mut State, device: usize) {
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
        .spawn(move || run(&s, name, slot))
        .expect("spawning a device worker");
    st.threads.push(handle);
}

/// Frees the worker's slot; a retiring device leaves once its last worker has.
fn leave(st: &mut State, device: usize, slot: usize) {
    st.devices[device].slots[slot] = false;
    if st.devices[device].retiring && st.devices[device].running() == 0 {
        st.devices.remove(device);
    }
}

fn run(shared: &Arc<Shared>, name: String, slot: usize) {
    loop {
        let mut st = shared.state.lock();
        let ready = loop {
            let d = st
                .devices
                .iter()
                .position(|d| d.exec.device() == name)
                .expect("a worker's device exists");
            let dev = &st.devices[d];
            if st.shutdown || dev.retiring || dev.running() > dev.target {
                leave(&mut st, d, slot);
                drop(st);
                shared.cv.notify_all();
                return;
            }
            if let Some(r) = st.ready.pop_front() {
                break r;
            }
            shared.cv.wait(&mut st);
        };
        let d = st
            .devices
            .iter()
            .position(|d| d.exec.device() == name)
            .expect("device");
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
    }));
    let mut steps = Steps::default();
    let result = {
        let mut gate = lock.gate();
        let input = RegionInput::new(
            &mut ready.asg,
            &ready.msms,
            &ready.loaded.params,
            b_g2_here,
            opts,
            ready.prestaged.as_ref(),
        );
        exec.prove_region(input, &mut *gate, &mut steps)
    };
    // Its page-locked block goes back to the pool for the next partition.
    ready.prestaged = None;
    for step in &steps.0 {
        *ready.stages.entry(step.stage).or_insert(0.0) += (step.end - step.start).as_secs_f64();
        let lane = match (step.stage, step.engine) {
            (Stage::LockWait, _) => Lane::Worker {
                device: device.to_string(),
                worker: slot as u32,
            },
            (_, Engine::Compute) => Lane::Compute {
                device: device.to_string(),
            },
            (_, Engine::H2d) => Lane::H2d {
                device: device.to_string(),
            },
            (_, Engine::D2h) => Lane::D2h {
                device: device.to_string(),
            },
        };
        let span = Span {
            lane,
            stage: step.stage,
            start: shared.clock.at(step.start),
            end: shared.clock.at(step.end),
            job: Some(job),
            partition: Some(partition),
            bytes: step.bytes,
        };
        if span.end == span.start {
            continue;
        }
        // The worker's own lane shows what it did, whichever engine did it (copy pieces are
        // inside its upload).
        if !matches!(span.lane, Lane::Worker { .. }) && span.stage != Stage::Dma {
            let mut own = span.clone();
            own.lane = Lane::Worker {
                device: device.to_string(),
                worker: slot as u32,
            };
            shared.bus.publish(Event::Span(own));
        }
        shared.bus.publish(Event::Span(span));
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
    st.pending.push_front(Ticket { job, partition });
    drop(st);
    shared.bus.publish(Event::Job(JobEvent {
        t: shared.clock.now(),
        job,
        partition: Some(partition),
        state: JobState::Submitted,
        detail: Some(format!("moved off {device}: {fault}")),
    }));
    shared.cv.notify_all();
    true
}
