//! Parameter generation's first stage for the synthetic workload: every variable's A, B and C
//! at tau, row by row through the evaluating constraint system (any circuit) against the
//! synthetic circuit's parallel evaluation. Medians of ROUNDS runs; the two must agree.
//!
//!     cargo bench -p provetop-engine --bench setup [-- K… [ROUNDS=N]]

// A benchmark whose setup fails is a failed run; unwrapping says where.
#![allow(clippy::unwrap_used)]

use blstrs::Scalar;
use ff::Field;
use provetop_engine::circuit::synthetic::SyntheticCircuit;
use provetop_engine::params::setup;
use provetop_telemetry::report::Stat;
use rand::SeedableRng;
use std::time::Instant;

mod common;

fn main() {
    let (sizes, rounds) = common::sizes_and_rounds(&[16, 18, 20], 3);
    let threads = rayon::current_num_threads();
    println!("| log2 rows | row by row ms | parallel ms | ratio | threads |");
    println!("|---|---|---|---|---|");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for k in sizes {
        let circuit = SyntheticCircuit::new(k, 0);
        let shape = circuit.shape();
        let lagrange: Vec<Scalar> = (0..1usize << k).map(|_| Scalar::random(&mut rng)).collect();
        let (mut serial, mut parallel) = (vec![], vec![]);
        for _ in 0..rounds {
            let t = Instant::now();
            let want = setup::evaluate(circuit.clone(), &shape, &lagrange).unwrap();
            serial.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let got = circuit.evaluate_at(&lagrange);
            parallel.push(t.elapsed().as_secs_f64());
            assert!(got == want, "the parallel evaluation differs at 2^{k}");
        }
        let (s, p) = (
            Stat::of(&mut serial).unwrap().median,
            Stat::of(&mut parallel).unwrap().median,
        );
        println!(
            "| {k} | {:.1} | {:.1} | {:.2} | {threads} |",
            s * 1e3,
            p * 1e3,
            p / s
        );
    }
}
