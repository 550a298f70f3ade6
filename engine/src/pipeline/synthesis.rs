//! Admission and synthesis: jobs become partition tickets; a dispatcher starts up to
//! `synthesis_workers` of them at once, each on a synthesis pool of its own, as long as the
//! queue of synthesised partitions and the host memory budget allow.

use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::pools::SynthesisPool;
use super::state::{Job, Ready, Ticket};
use super::{JobId, JobSpec, Outcome, Priority, Shared};
use crate::backend::{Executor, StagePlan};
use crate::circuit::partition_seed;
use crate::circuit::precompiled::Precompiled;
use crate::memory::Reservation;
use crate::prover;
use crate::telemetry::{Event, JobEvent, JobState, Lane, ProofRecord, Span, Stage};

/// What a partition of `loaded`'s shape prestages: a, b and c, or, `deferred` (evaluated in
/// the region), the witness; and its L, A and B MSMs' scalars.
pub(super) fn stage_plan(loaded: &crate::store::Loaded, deferred: bool) -> StagePlan {
    let (p, shape) = (&loaded.params, &loaded.shape);
    StagePlan {
        rows: shape.num_rows(),
        tails: [shape.num_aux, p.a.len(), p.b_g1.len()],
        witness: deferred.then_some(shape.num_inputs + shape.num_aux),
    }
}

/// Host bytes one partition of `rows` rows holds: a, b, c and the witness, the MSM scalars,
/// NTT scratch. The least `host_memory_budget` that proves it.
pub fn partition_bytes(rows: usize) -> u64 {
    rows.next_power_of_two() as u64 * 32 * 6
}

/// Host bytes a partition staged as `plan` holds beside the page-locked blocks: with a, b and c
/// left to the device, its witness and a copy of it as it is staged (a 32 GiB PoRep partition:
/// 8.3 GB, where [`partition_bytes`] is 25.8 GB); else [`partition_bytes`].
pub(super) fn held_bytes(plan: &StagePlan) -> u64 {
    match plan.witness {
        Some(n) => n as u64 * 32 * 2,
        None => partition_bytes(plan.rows),
    }
}

pub(super) fn submit(shared: &Arc<Shared>, spec: JobSpec) -> Result<JobId> {
    if !(1..=super::MAX_PARTITIONS).contains(&spec.partitions) {
        bail!(
            "a job has 1 to {} partitions, not {}",
            super::MAX_PARTITIONS,
            spec.partitions
        );
    }
    spec.workload.validate()?;
    let loaded = shared.store.get(&spec.workload, &|_, _, _| {})?;
    let (wanted, on_devices) = {
        let st = shared.state.lock();
        let on_devices = st.abc_on_devices();
        let wanted = crate::pipeline::auto::precompiled_for(&st.cfg, &spec.workload, on_devices);
        (wanted, on_devices)
    };
    let precompiled = match wanted {
        true => Some(shared.store.circuit(&spec.workload, &|_, _, _| {})?.0),
        false => None,
    };
    let t = shared.clock.now();
    let mut st = shared.state.lock();
    if st.shutdown {
        bail!("the engine is shutting down");
    }
    let job = st.next_job;
    st.next_job += 1;
    for partition in 0..spec.partitions {
        super::state::enqueue(
            &mut st.pending,
            Ticket {
                job,
                partition,
                priority: spec.priority,
            },
        );
    }
    let bytes = held_bytes(&stage_plan(&loaded, precompiled.is_some() && on_devices));
    let (label, kind, priority) = (spec.workload.label(), spec.workload.kind(), spec.priority);
    let name = spec.name.clone();
    st.jobs.insert(
        job,
        Job {
            remaining: spec.partitions,
            spec,
            loaded,
            precompiled,
            verified: 0,
            failed: 0,
            cancelled: 0,
            is_cancelled: false,
            bytes,
        },
    );
    fit_workers(shared, &mut st);
    drop(st);
    shared.bus.publish(Event::Job(JobEvent {
        t,
        job,
        partition: None,
        state: JobState::Submitted,
        detail: Some(format!("{} · {}", label, priority.name())),
        kind: Some(kind),
        name,
    }));
    shared.cv.notify_all();
    Ok(job)
}

/// `synthesis_workers` on `auto`, as the open jobs want it (`auto::workers_for`): a partition
/// a core where a witness is serial, and no more than the host memory left beside what the run
/// keeps holds of the largest, each pool with its share of the threads.
fn fit_workers(shared: &Arc<Shared>, st: &mut super::state::State) {
    let bytes = st.jobs.values().map(|j| j.bytes).max().unwrap_or(0);
    let serial = (st.jobs.values()).any(|j| !j.spec.workload.parallel_witness());
    let room = st.partitions_room();
    let Some((n, why)) =
        crate::pipeline::auto::workers_for(&st.cfg, &shared.machine, (room, bytes), serial)
    else {
        return;
    };
    let change = crate::telemetry::ConfigChange {
        t: shared.clock.now(),
        key: "synthesis_workers".into(),
        from: st.cfg.synthesis_workers.to_string(),
        to: n.to_string(),
        by: "auto".into(),
        applied: true,
        error: None,
    };
    if let Err(e) = st.synthesis.rebuild(n, st.cfg.synthesis_threads) {
        tracing::warn!("synthesis pools for {n} workers: {e:#}");
        return;
    }
    tracing::info!("synthesis_workers = auto: {why}");
    st.cfg.synthesis_workers = n;
    st.cfg.auto.insert("synthesis_workers".into(), Some(why));
    super::reconfigure::record(shared, st, change);
}

pub(super) fn cancel(shared: &Arc<Shared>, job: JobId) -> bool {
    let mut st = shared.state.lock();
    let Some(j) = st.jobs.get_mut(&job) else {
        return false;
    };
    j.is_cancelled = true;
    // Partitions not yet started are dropped now; the others at their next safe point.
    let dropped = st.pending.iter().filter(|t| t.job == job).count() as u32;
    st.pending.retain(|t| t.job != job);
    // Synthesised ones give their host memory back as they are dropped, here under the lock.
    let mut ready_dropped = 0;
    st.ready.retain(|r| {
        let keep = r.ticket.job != job;
        if !keep {
            ready_dropped += 1;
        }
        keep
    });
    finish_partitions(
        shared,
        &mut st,
        job,
        PartitionEnd::Cancelled,
        dropped + ready_dropped,
    );
    drop(st);
    shared.bus.publish(Event::Job(JobEvent {
        t: shared.clock.now(),
        job,
        partition: None,
        state: JobState::Cancelled,
        detail: None,
        kind: None,
        name: None,
    }));
    shared.cv.notify_all();
    true
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PartitionEnd {
    Verified,
    Failed,
    Cancelled,
}

/// Counts `n` partitions of `job` as ended; reports the job when none remain.
pub(super) fn finish_partitions(
    shared: &Shared,
    st: &mut super::state::State,
    job: JobId,
    end: PartitionEnd,
    n: u32,
) {
    if n == 0 {
        return;
    }
    let Some(j) = st.jobs.get_mut(&job) else {
        return;
    };
    match end {
        PartitionEnd::Verified => j.verified += n,
        PartitionEnd::Failed => j.failed += n,
        PartitionEnd::Cancelled => j.cancelled += n,
    }
    j.remaining -= n;
    if j.remaining == 0 {
        let j = st.jobs.remove(&job).expect("job present");
        let state = if j.failed > 0 {
            JobState::Failed
        } else if j.cancelled > 0 {
            JobState::Cancelled
        } else {
            JobState::Verified
        };
        shared.bus.publish(Event::Job(JobEvent {
            t: shared.clock.now(),
            job,
            partition: None,
            state,
            detail: None,
            kind: None,
            name: None,
        }));
        let _ = shared.outcomes.send(Outcome::JobDone {
            job,
            verified: j.verified,
            failed: j.failed,
            cancelled: j.cancelled,
        });
    }
}

pub(super) fn spawn_dispatcher(shared: Arc<Shared>) {
    let s = shared.clone();
    let handle = std::thread::Builder::new()
        .name("dispatcher".into())
        .spawn(move || dispatch(s))
        .expect("spawning the dispatcher");
    shared.state.lock().threads.push(handle);
}

fn dispatch(shared: Arc<Shared>) {
    loop {
        let mut st = shared.state.lock();
        while !st.shutdown && !st.can_synthesize() {
            shared.cv.wait(&mut st);
        }
        if st.shutdown {
            return;
        }
        let ticket = st.pending.pop_front().expect("can_synthesize saw a ticket");
        let job = &st.jobs[&ticket.job];
        let (spec, loaded, bytes) = (job.spec.clone(), job.loaded.clone(), job.bytes);
        let precompiled = job.precompiled.clone();
        let in_service = || st.devices.iter().filter(|d| !d.retiring);
        // A pre-compiled circuit's a, b and c are left to the region when every device in
        // service evaluates them itself (the cuda backend, from its resident matrices).
        let deferred = precompiled.is_some() && st.abc_on_devices();
        // Prestaging lays the witness out for the copy engines here, off the device workers'
        // path: the first device in service that can does it (page-locked memory serves every
        // GPU; a device that cannot read the layout takes a/b/c back out of it).
        let stagers: Vec<_> = match st.cfg.prestage {
            true => in_service().map(|d| d.exec.clone()).collect(),
            false => vec![],
        };
        st.synthesizing += 1;
        // Admitted by `can_synthesize`, beyond the budget when nothing else holds any.
        let host = st.host.reserve(bytes);
        let pool = match ticket.priority {
            Priority::Critical => st.synthesis.take_critical(),
            _ => st.synthesis.take(),
        };
        let pool = pool.expect("can_synthesize saw a pool for it");
        drop(st);
        let hold = (ticket.priority == Priority::Critical).then(|| shared.holds.hold());
        let shared = shared.clone();
        let work = Work {
            ticket,
            spec,
            loaded,
            precompiled,
            deferred,
            hold,
        };
        pool.pool
            .clone()
            .spawn(move || synthesize(&shared, work, host, stagers, pool));
    }
}

/// One partition to synthesise, with what its job was submitted with.
struct Work {
    ticket: Ticket,
    spec: JobSpec,
    loaded: Arc<crate::store::Loaded>,
    precompiled: Option<Arc<Precompiled>>,
    /// Its a, b and c are left to the region: synthesis computes the witness alone.
    deferred: bool,
    /// A CRITICAL partition's hold on the devices (`holds`), passed on with it.
    hold: Option<super::holds::Hold>,
}

/// Runs on the synthesis pool.
fn synthesize(
    shared: &Arc<Shared>,
    work: Work,
    host: Reservation,
    stagers: Vec<Arc<dyn Executor>>,
    pool: SynthesisPool,
) {
    let Work {
        ticket,
        spec,
        loaded,
        precompiled,
        deferred,
        hold,
    } = work;
    let start = Instant::now();
    let seed = partition_seed(spec.seed, ticket.job, ticket.partition);
    // With prestaging, synthesis writes a/b/c straight into the first willing device's
    // page-locked block: no host copy of them between synthesis and the link.
    let plan = stage_plan(&loaded, deferred);
    let mut target = stagers.iter().find_map(|exec| exec.stage_target(plan));
    let abc = target.as_mut().map(|t| t.abc());
    // Pre-compiled: the witness alone, then a, b, c from the recorded matrices (here, or in
    // the region when deferred).
    let mut evaluated = None;
    let result = match &precompiled {
        Some(pc) if deferred => spec
            .workload
            .witness(seed, ticket.partition)
            .and_then(|w| pc.deferred(w)),
        Some(pc) => spec.workload.witness(seed, ticket.partition).and_then(|w| {
            let witnessed = Instant::now();
            let asg = pc.evaluate_into(w, abc);
            evaluated = Some(witnessed);
            asg
        }),
        None => spec.workload.synthesize_into(seed, ticket.partition, abc),
    }
    .and_then(|asg| prover::prepare(&asg, &loaded.params).map(|m| (asg, m)));
    let synthesized = Instant::now();
    let span = |stage, start, end| {
        shared.bus.publish(Event::Span(Span {
            lane: Lane::Pool {
                name: "synthesis".into(),
            },
            stage,
            start: shared.clock.at(start),
            end: shared.clock.at(end),
            job: Some(ticket.job),
            partition: Some(ticket.partition),
            bytes: 0,
        }))
    };
    let witnessed = evaluated.unwrap_or(synthesized);
    span(Stage::Synthesis, start, witnessed);
    if evaluated.is_some() {
        span(Stage::AbcEval, witnessed, synthesized);
    }
    let result = result.map(|(asg, msms)| {
        let prestaged = target.map(|t| t.finish(&asg, &msms));
        (asg, msms, prestaged)
    });
    let end = Instant::now();
    if matches!(result, Ok((_, _, Some(_)))) {
        span(Stage::Prep, synthesized, end);
    }
    let mut st = shared.state.lock();
    st.synthesizing -= 1;
    st.synthesis.give_back(pool);
    match result {
        Ok((asg, msms, prestaged)) => {
            let mut stages = BTreeMap::new();
            stages.insert(Stage::Synthesis, (witnessed - start).as_secs_f64());
            if evaluated.is_some() {
                stages.insert(Stage::AbcEval, (synthesized - witnessed).as_secs_f64());
            }
            if prestaged.is_some() {
                stages.insert(Stage::Prep, (end - synthesized).as_secs_f64());
            }
            let (job, partition) = (ticket.job, ticket.partition);
            super::state::enqueue(
                &mut st.ready,
                Ready {
                    ticket,
                    asg,
                    msms,
                    loaded,
                    queued: end,
                    stages,
                    host,
                    prestaged,
                    circuit: precompiled.filter(|_| deferred),
                    hold,
                },
            );
            super::worker::spawn_urgent(shared, &mut st);
            drop(st);
            shared.bus.publish(Event::Job(JobEvent {
                t: shared.clock.at(end),
                job,
                partition: Some(partition),
                state: JobState::Synthesized,
                detail: None,
                kind: None,
                name: None,
            }));
        }
        Err(e) => {
            drop(host);
            let record = ProofRecord {
                t: shared.clock.now(),
                job: ticket.job,
                partition: ticket.partition,
                device: String::new(),
                verified: false,
                error: Some(format!("{e:#}")),
                stages: BTreeMap::new(),
            };
            super::finalize::report(shared, &mut st, record, None, vec![]);
            drop(st);
        }
    }
    shared.cv.notify_all();
}
