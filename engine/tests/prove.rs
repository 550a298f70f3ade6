//! End to end on the cpu backend: setup, proofs through the pipeline, verification, and the
//! rejection of tampered proofs and wrong inputs.

use blstrs::Scalar;
use ff::Field;
use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::circuit::Workload;
use provetop_engine::config::EngineConfig;
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome};
use provetop_engine::prover::{self, Proof, VerifyError};
use provetop_engine::store::ParamsStore;
use provetop_engine::telemetry::{Bus, Clock};
use std::sync::Arc;

fn store(dir: &tempfile::TempDir) -> Arc<ParamsStore> {
    Arc::new(ParamsStore::new(Some(dir.path().to_path_buf()), None))
}

#[test]
fn pipeline_proves_and_verifies_every_partition() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = EngineConfig {
        synthesis_threads: 2,
        prover_threads: 2,
        ..Default::default()
    };
    let engine = EngineHandle::start(cfg, store(&dir), Bus::new(), Clock::start()).unwrap();
    let workload = Workload::Synthetic {
        log2_constraints: 9,
    };
    let job = engine
        .submit(JobSpec {
            workload: workload.clone(),
            partitions: 3,
            seed: 1,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    let sha = engine
        .submit(JobSpec {
            workload: Workload::Sha256 { blocks: 1 },
            partitions: 1,
            seed: 2,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        })
        .unwrap();
    let mut partitions = vec![];
    let mut done = 0;
    while done < 2 {
        match engine.outcomes().recv().unwrap() {
            Outcome::Partition(p) => partitions.push(p),
            Outcome::JobDone {
                job: j,
                verified,
                failed,
                cancelled,
            } => {
                let want = if j == job { 3 } else { 1 };
                assert_eq!((verified, failed, cancelled), (want, 0, 0));
                done += 1;
            }
        }
    }
    engine.shutdown();
    assert_eq!(partitions.len(), 4);
    assert!(
        partitions.iter().all(|p| p.record.verified),
        "{partitions:?}"
    );
    let mut ids: Vec<_> = partitions
        .iter()
        .filter(|p| p.record.job == job)
        .map(|p| p.record.partition)
        .collect();
    ids.sort();
    assert_eq!(ids, vec![0, 1, 2]);
    assert!(partitions.iter().any(|p| p.record.job == sha));

    // The verifier rejects a tampered proof and a wrong public input.
    let loaded = engine.store().get(&workload, &|_, _, _| {}).unwrap();
    let p = partitions.iter().find(|p| p.record.job == job).unwrap();
    let proof = p.proof.unwrap();
    assert_eq!(prover::verify(&loaded.pvk, &proof, &p.inputs), Ok(()));
    let mut wrong = p.inputs.clone();
    wrong[0] += Scalar::ONE;
    assert_eq!(
        prover::verify(&loaded.pvk, &proof, &wrong),
        Err(VerifyError::Rejected)
    );
    assert!(matches!(
        prover::verify(&loaded.pvk, &proof, &p.inputs[1..]),
        Err(VerifyError::InputCount { .. })
    ));
    let swapped = Proof {
        a: proof.c,
        b: proof.b,
        c: proof.a,
    };
    assert_eq!(
        prover::verify(&loaded.pvk, &swapped, &p.inputs),
        Err(VerifyError::Rejected)
    );
    let mut bytes = proof.to_bytes();
    bytes[10] ^= 1;
    match Proof::from_bytes(&bytes) {
        Err(e) => assert!(e.to_string().contains("not a valid compressed")),
        Ok(tampered) => assert!(prover::verify(&loaded.pvk, &tampered, &p.inputs).is_err()),
    }
}

#[test]
fn same_randomisers_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let workload = Workload::Synthetic {
        log2_constraints: 8,
    };
    let loaded = store(&dir).get(&workload, &|_, _, _| {}).unwrap();
    let exec = CpuExecutor::new(0, 2).unwrap();
    let (r, s) = (Scalar::from(7u64), Scalar::from(11u64));
    let a = prover::prove_with(
        &exec,
        workload.synthesize(5, 0).unwrap(),
        &loaded.params,
        r,
        s,
    )
    .unwrap();
    let b = prover::prove_with(
        &exec,
        workload.synthesize(5, 0).unwrap(),
        &loaded.params,
        r,
        s,
    )
    .unwrap();
    assert_eq!(a.to_bytes(), b.to_bytes());
    let inputs = workload.synthesize(5, 0).unwrap().public_inputs().to_vec();
    assert_eq!(prover::verify(&loaded.pvk, &a, &inputs), Ok(()));
}

/// A pre-compiled circuit's witness with a, b and c left to the region (as the pipeline leaves
/// them for the cuda backend): an executor that does not evaluate them on a device evaluates
/// them on the host (`RegionInput::restore_abc`, also the cuda backend's fallback when the
/// matrices do not fit), and the proof is the plain path's, byte for byte.
#[test]
fn a_proof_with_a_b_c_left_to_the_region_is_the_plain_proof() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let w = Workload::Sha256 { blocks: 1 };
    let loaded = store.get(&w, &|_, _, _| {}).unwrap();
    let (pc, _) = store.circuit(&w, &|_, _, _| {}).unwrap();
    let cpu = CpuExecutor::new(0, 2).unwrap();
    let rs = (Scalar::from(7u64), Scalar::from(11u64));
    let asg = w.synthesize(5, 0).unwrap();
    let inputs = asg.public_inputs().to_vec();
    let plain = prover::prove_with(&cpu, asg, &loaded.params, rs.0, rs.1).unwrap();
    let witness = w.witness(5, 0).unwrap();
    let deferred = prover::prove_deferred(&cpu, &pc, witness, &loaded.params, rs, false).unwrap();
    assert_eq!(deferred.to_bytes(), plain.to_bytes());
    prover::verify(&loaded.pvk, &deferred, &inputs).unwrap();
}
