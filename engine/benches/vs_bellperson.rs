//! provetop's CPU prover against bellperson 0.27's on the same circuits and parameters.
//!
//! Rounds alternate between the two provers so both see the same machine; each prover's time
//! includes synthesis from the circuit. Prints medians and the ratio provetop / bellperson
//! (below 1.0: provetop is faster) as a markdown table.
//!
//!     cargo bench -p provetop-engine --bench vs_bellperson [-- ROUNDS]

// A benchmark whose setup fails is a failed run; unwrapping says where.
#![allow(clippy::unwrap_used)]

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use ff::Field;
use provetop_engine::backend::cpu::CpuExecutor;
use provetop_engine::circuit::Workload;
use provetop_engine::params::io;
use provetop_engine::prover;
use provetop_engine::store::ParamsStore;
use provetop_telemetry::report::Stat;
use rand::rngs::OsRng;
use std::time::Instant;

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let threads = rayon::current_num_threads();
    let cache = std::env::temp_dir().join("provetop-bench-params");
    let store = ParamsStore::new(Some(cache), None);
    let exec = CpuExecutor::new(0, threads).unwrap();
    println!("| circuit | constraints | provetop median s | bellperson median s | ratio |");
    println!("|---|---|---|---|---|");
    for workload in [
        Workload::Sha256 { blocks: 16 },
        Workload::Synthetic {
            log2_constraints: 16,
        },
    ] {
        eprintln!("{}: parameters…", workload.label());
        let loaded = store.get(&workload, &|_, _, _| {}).unwrap();
        let mut bytes = vec![];
        io::write_params(&loaded.params, &mut bytes).unwrap();
        let theirs = bp::Parameters::<Bls12>::read(&bytes[..], false).unwrap();
        drop(bytes);
        let bp_pvk = bp::prepare_verifying_key(&theirs.vk);
        let (mut ours_t, mut theirs_t) = (vec![], vec![]);
        for round in 0..rounds {
            let seed = round as u64;
            let t = Instant::now();
            let asg = workload.synthesize(seed, 0).unwrap();
            let inputs = asg.public_inputs().to_vec();
            let proof = prover::prove_with(
                &exec,
                asg,
                &loaded.params,
                Scalar::random(OsRng),
                Scalar::random(OsRng),
            )
            .unwrap();
            ours_t.push(t.elapsed().as_secs_f64());
            assert_eq!(prover::verify(&loaded.pvk, &proof, &inputs), Ok(()));

            let t = Instant::now();
            let p = bp::create_random_proof(workload.circuit(seed).unwrap(), &theirs, &mut OsRng)
                .unwrap();
            theirs_t.push(t.elapsed().as_secs_f64());
            assert!(bp::verify_proof(&bp_pvk, &p, &inputs).unwrap());
            eprintln!(
                "{} round {round}: provetop {:.3} s, bellperson {:.3} s",
                workload.label(),
                ours_t[round],
                theirs_t[round]
            );
        }
        let (o, b) = (
            Stat::of(&mut ours_t).unwrap().median,
            Stat::of(&mut theirs_t).unwrap().median,
        );
        println!(
            "| {} | {} | {o:.3} | {b:.3} | {:.3} |",
            workload.label(),
            loaded.shape.num_constraints,
            o / b
        );
    }
    println!("\n{rounds} alternating rounds, {threads} threads, release build.");
}
