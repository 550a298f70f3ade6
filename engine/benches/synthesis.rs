//! Synthesis of the synthetic workload by size: median wall time of a partition and its cost
//! per row and core, the host's side of feeding a GPU (a 2^24 partition keeps an H200 busy for
//! ~0.37 s). The structure of each size is built once, outside the timings.
//!
//!     cargo bench -p provetop-engine --bench synthesis [-- K… [ROUNDS=N]]

// A benchmark whose setup fails is a failed run; unwrapping says where.
#![allow(clippy::unwrap_used)]

use provetop_engine::circuit::Workload;

// The allocator of the provetop binary (src/alloc.rs), keeping freed pages: partitions then
// reuse mapped memory instead of faulting it in again, as they do in the engine.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 36] = b"dirty_decay_ms:-1,muzzy_decay_ms:-1\0";
use provetop_telemetry::report::Stat;
use std::time::Instant;

mod common;

fn main() {
    let (sizes, rounds) = common::sizes_and_rounds(&[16, 18, 20, 22], 5);
    let threads = rayon::current_num_threads();
    println!("| log2 rows | median ms | min ms | ns per row-core | A and B scalar selection ms | threads |");
    println!("|---|---|---|---|---|---|");
    for k in sizes {
        let w = Workload::Synthetic {
            log2_constraints: k,
        };
        // The first synthesis builds the size's structure.
        drop(w.synthesize(0, 0).unwrap());
        // Synthesis, then the selection of A's and B's scalars that `prover::prepare` makes.
        let (mut times, mut selects): (Vec<f64>, Vec<f64>) = (1..=rounds as u64)
            .map(|seed| {
                let t = Instant::now();
                let asg = w.synthesize(seed, 0).unwrap();
                let s = t.elapsed().as_secs_f64();
                let t = Instant::now();
                let a = asg.a_aux_density.select_after(&asg.input, &asg.aux);
                let b = asg.b_aux_density.select_after(&asg.input[..1], &asg.aux);
                let sel = t.elapsed().as_secs_f64();
                drop((asg, a, b));
                (s, sel)
            })
            .unzip();
        let st = Stat::of(&mut times).unwrap();
        let sel = Stat::of(&mut selects).unwrap();
        let per_row = st.median * 1e9 * threads as f64 / (1u64 << k) as f64;
        println!(
            "| {k} | {:.1} | {:.1} | {per_row:.0} | {:.1} | {threads} |",
            st.median * 1e3,
            st.min * 1e3,
            sel.median * 1e3
        );
    }
}
