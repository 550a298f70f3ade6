//! The finalizer: B in G2 when it runs on the CPU, the r/s randomisation and assembly, and
//! verification of every proof before it is reported. Runs on the prover pool.

use anyhow::Result;
use blstrs::{G2Projective, Scalar};
use ff::Field;
use rand::rngs::OsRng;
use std::sync::Arc;
use std::time::Instant;

use super::state::{Ready, State};
use super::synthesis::{finish_partitions, PartitionEnd};
use super::{Outcome, PartitionResult, Shared};
use crate::backend::cpu::msm;
use crate::backend::RegionResult;
use crate::prover::{self, Proof};
use crate::telemetry::{Event, JobEvent, Lane, ProofRecord, Span, Stage};

pub(super) fn finalize(
    shared: &Arc<Shared>,
    device: String,
    ready: Ready,
    region: Result<RegionResult>,
) {
    let Ready {
        ticket,
        asg,
        msms,
        loaded,
        mut stages,
        host,
        ..
    } = ready;
    let (job, partition) = (ticket.job, ticket.partition);
    let mut timed = |stage: Stage, start: Instant| {
        let end = Instant::now();
        stages.insert(stage, (end - start).as_secs_f64());
        shared.bus.publish(Event::Span(Span {
            lane: Lane::Pool {
                name: "prover".into(),
            },
            stage,
            start: shared.clock.at(start),
            end: shared.clock.at(end),
            job: Some(job),
            partition: Some(partition),
            bytes: 0,
        }));
    };
    let inputs = asg.public_inputs().to_vec();
    let outcome = region.map(|m| {
        let b_g2 = match m.b_g2 {
            Some(b) => b,
            None => {
                let t = Instant::now();
                let b = msm::msm::<G2Projective>(&loaded.params.b_g2, &msms.b).0;
                timed(Stage::MsmBG2, t);
                b
            }
        };
        let t = Instant::now();
        let (r, s) = (Scalar::random(OsRng), Scalar::random(OsRng));
        let proof = prover::assemble(&loaded.params.vk, r, s, &m, b_g2);
        timed(Stage::Finalize, t);
        let t = Instant::now();
        let verified = prover::verify(&loaded.pvk, &proof, &inputs);
        timed(Stage::Verify, t);
        (proof, verified)
    });
    let (proof, error) = match outcome {
        Ok((proof, Ok(()))) => (Some(proof), None),
        Ok((proof, Err(e))) => (Some(proof), Some(e.to_string())),
        Err(e) => (None, Some(format!("{e:#}"))),
    };
    let record = ProofRecord {
        t: shared.clock.now(),
        job,
        partition,
        device,
        verified: error.is_none(),
        error,
        stages,
    };
    drop((asg, msms));
    {
        let mut st = shared.state.lock();
        st.proving -= 1;
        drop(host);
        report(shared, &mut st, record, proof, inputs);
    }
    shared.cv.notify_all();
}

/// Reports a finished partition after applying the scheduled changes it makes due, so a
/// caller that sees the outcome also sees the changes in the config log. The caller wakes
/// waiters.
pub(super) fn report(
    shared: &Arc<Shared>,
    st: &mut State,
    record: ProofRecord,
    proof: Option<Proof>,
    inputs: Vec<Scalar>,
) {
    let cancelled = st.jobs.get(&record.job).is_none_or(|j| j.is_cancelled);
    if cancelled {
        finish_partitions(shared, st, record.job, PartitionEnd::Cancelled, 1);
        return;
    }
    st.finished += 1;
    super::schedule::partition_finished(shared, st);
    let end = if record.verified {
        PartitionEnd::Verified
    } else {
        PartitionEnd::Failed
    };
    let job = record.job;
    if let Some(e) = &record.error {
        let name = st.jobs.get(&job).and_then(|j| j.spec.name.as_deref());
        let label = JobEvent::label(job, name);
        tracing::warn!("job {label} partition {}: {e}", record.partition);
    }
    shared.bus.publish(Event::Proof(record.clone()));
    let _ = shared
        .outcomes
        .send(Outcome::Partition(Box::new(PartitionResult {
            record,
            proof,
            inputs,
        })));
    finish_partitions(shared, st, job, end, 1);
}
