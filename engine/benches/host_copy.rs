//! Partition-sized host copies, as the GPU path's prestaging makes them (the source into a
//! reused destination, in parallel pieces of 2 MiB): plain copies against `hostmem`'s streaming
//! ones, with and without zeroing a 32-byte pattern. Rounds alternate them; prints median GB/s.
//!
//!     cargo bench -p provetop-engine --bench host_copy [-- MIB [ROUNDS]]

// A benchmark whose setup fails is a failed run; unwrapping says where.
#![allow(clippy::unwrap_used)]

use provetop_engine::hostmem::{stream_copy, stream_copy_zeroing};
use provetop_telemetry::report::Stat;
use rayon::prelude::*;
use std::time::Instant;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// A copy of one piece, destination first.
type Copy<'a> = dyn Fn(&mut [u8], &[u8]) + Sync + 'a;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<usize>().ok());
    let mib = args.next().unwrap_or(1024);
    let rounds = args.next().unwrap_or(7);
    let bytes = mib << 20;
    let src: Vec<u8> = (0..bytes).into_par_iter().map(|i| i as u8).collect();
    let mut dst = vec![0u8; bytes];
    const PIECE: usize = 2 << 20;
    let time = |f: &Copy<'_>, dst: &mut [u8]| {
        let t = Instant::now();
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| f(d, s));
        bytes as f64 / t.elapsed().as_secs_f64() / 1e9
    };
    // The zeroing copies replace a 32-byte pattern, as prestaging zeroes the scalar ones.
    let one = [1u8; 32];
    let plain_zeroing = |d: &mut [u8], s: &[u8]| {
        for (d, s) in d.chunks_exact_mut(32).zip(s.chunks_exact(32)) {
            if s == one {
                d.fill(0);
            } else {
                d.copy_from_slice(s);
            }
        }
    };
    let copies: [(&str, &Copy<'_>); 4] = [
        ("copy, plain", &|d, s| d.copy_from_slice(s)),
        ("copy, streaming", &stream_copy),
        ("zeroing copy, plain", &plain_zeroing),
        ("zeroing copy, streaming", &|d, s| {
            stream_copy_zeroing(d, s, &one)
        }),
    ];
    let mut rates = vec![vec![]; copies.len()];
    for _ in 0..rounds {
        for ((_, f), r) in copies.iter().zip(&mut rates) {
            r.push(time(f, &mut dst));
        }
    }
    assert_eq!(dst, src);
    println!(
        "| copy ({mib} MiB, {} threads) | median GB/s |",
        rayon::current_num_threads()
    );
    println!("|---|---|");
    for ((name, _), r) in copies.iter().zip(&mut rates) {
        println!("| {name} | {:.2} |", Stat::of(r).unwrap().median);
    }
}
