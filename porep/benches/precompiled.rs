//! Host-side synthesis of one partition, plain against pre-compiled (the witness alone, then
//! a, b, c from the recorded matrices on the CPU), in constraints per second on one core and on
//! every core, and the witness's CPU nanoseconds a row; for PoRep and SnapDeals 2KiB (a test
//! sector sealed here once and cached; `SNAP=8MiB` for an 8MiB update), SHA-256 and the
//! synthetic workload, in wall-clock and CPU seconds (the CPU's are what a shared machine's load
//! leaves alone). Every pre-compiled assignment is checked equal to the plain one. Then
//! the memory of each: the recorded matrices and a partition's witness and a, b, c, in bytes per
//! constraint.
//!
//!     cargo bench -p provetop-porep --bench precompiled [-- ROUNDS=N] [C1=FILE] [SNAP=SIZE] [porep] [snap] [sha256] [synthetic]
//!
//! `C1=FILE` proves the sector of a C1 file (e.g. an 8MiB one sealed before) instead of the
//! 2KiB test sector.

// A benchmark whose setup fails has nothing to measure: the panic is the failed run.
#![allow(clippy::unwrap_used)]

use provetop_engine::circuit::precompiled::Precompiled;
use provetop_engine::circuit::Workload;
use provetop_porep::kind::Kind;
use provetop_porep::prepared::prepare_sealed;
use provetop_porep::{prepare, PorepArgs, SectorSize};
use std::time::Instant;

// The provetop binary's allocator (src/alloc.rs), keeping freed pages as the engine does.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 36] = b"dirty_decay_ms:-1,muzzy_decay_ms:-1\0";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[(n - 1) / 2] + v[n / 2]) / 2.0
}

/// CPU seconds of the whole process so far (every thread's).
fn cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Wall and CPU seconds of `f`.
fn seconds<T>(f: impl FnOnce() -> T) -> ([f64; 2], T) {
    let (t, c) = (Instant::now(), cpu());
    let out = f();
    ([t.elapsed().as_secs_f64(), cpu() - c], out)
}

/// Median wall and CPU seconds of plain synthesis, of the witness and of the evaluation, over
/// `rounds` seeds, on the current rayon pool.
fn measure(w: &Workload, pc: &Precompiled, rounds: u64) -> [[f64; 2]; 3] {
    let mut times = vec![];
    for seed in 1..=rounds {
        let (plain, want) = seconds(|| w.synthesize(seed, 0).unwrap());
        let (wit, witness) = seconds(|| w.witness(seed, 0).unwrap());
        let (eval, got) = seconds(|| pc.evaluate(witness).unwrap());
        assert!(
            got == want,
            "{}: pre-compiled differs from plain",
            w.label()
        );
        times.push([plain, wit, eval]);
    }
    std::array::from_fn(|s| {
        std::array::from_fn(|k| median(times.iter().map(|t| t[s][k]).collect()))
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args
        .iter()
        .find_map(|a| a.strip_prefix("ROUNDS=")?.parse().ok())
        .unwrap_or(3);
    let picked = |name: &str| {
        let names = ["porep", "snap", "sha256", "synthetic"];
        !args.iter().any(|a| names.contains(&a.as_str())) || args.iter().any(|a| a == name)
    };
    let mut cases = vec![];
    if picked("porep") {
        let c1 = args
            .iter()
            .find_map(|a| a.strip_prefix("C1="))
            .map(Into::into);
        let args = PorepArgs {
            sector_size: c1.is_none().then_some(SectorSize::S2KiB),
            c1,
            ..PorepArgs::default()
        };
        let porep = prepare(&args, &|line| eprintln!("{line}")).expect("a PoRep sector");
        cases.push(porep.circuits.workload());
    }
    if picked("snap") {
        let size = args
            .iter()
            .find_map(|a| a.strip_prefix("SNAP="))
            .map_or(SectorSize::S2KiB, |s| s.parse().expect("SNAP=2KiB or 8MiB"));
        let progress = |line: &str| eprintln!("{line}");
        let snap = prepare_sealed(Kind::Snap, size, 0, None, &progress).expect("an update");
        cases.push(snap.circuits().workload());
    }
    if picked("sha256") {
        cases.push(Workload::Sha256 { blocks: 64 });
    }
    if picked("synthetic") {
        cases.push(Workload::Synthetic {
            log2_constraints: 20,
        });
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut table = vec![];
    let mut memory = vec![];
    for w in &cases {
        let shape = w.shape().unwrap();
        let progress = |stage: &str, done: usize, total: usize| {
            eprint!("\r{}: {stage} {done} of {total}", w.label());
        };
        let ([record, _], pc) = seconds(|| w.record(&shape, &progress).unwrap());
        eprintln!();
        let rows = pc.rows() as f64;
        for threads in [1, all] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let [plain, wit, eval] = pool.install(|| measure(w, &pc, rounds));
            let pre = wit[0] + eval[0];
            table.push(format!(
                "| {} | {} | {:.0} | {:.0} | {:.0} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.0} | {:.2} ({:.2}) | {:.2}× |",
                w.label(),
                threads,
                rows,
                rows / plain[0] / 1e3,
                rows / pre / 1e3,
                plain[0],
                plain[1],
                wit[0],
                wit[1],
                wit[1] / rows * 1e9,
                eval[0],
                eval[1],
                plain[0] / pre
            ));
        }
        let asg = w.synthesize(1, 0).unwrap();
        let [a, b, c] = pc.matrices().map(|m| m.nnz() as f64 / rows);
        memory.push(format!(
            "| {} | {:.0} | {a:.2} / {b:.2} / {c:.2} | {} | {:.1} | {:.1} | {:.1} | {record:.1} |",
            w.label(),
            rows,
            pc.table().len(),
            pc.bytes() as f64 / 1e6,
            pc.bytes() as f64 / rows,
            asg.bytes() as f64 / rows,
        ));
    }
    println!(
        "medians of {rounds} partitions; k/s: thousands of rows (constraints and input rows) a \
         wall-clock second; CPU s: every thread's\n"
    );
    println!("| circuit | threads | rows | plain k/s | pre-compiled k/s | plain s (CPU s) | witness s (CPU s) | witness CPU ns/row | abc_eval s (CPU s) | speed-up |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for line in table {
        println!("{line}");
    }
    println!();
    println!("| circuit | rows | entries a row A / B / C | coefficients | matrices MB | matrices B/row | witness + a, b, c B/row | recording s |");
    println!("|---|---|---|---|---|---|---|---|");
    for line in memory {
        println!("{line}");
    }
}
