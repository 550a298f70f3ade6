//! Writes the hostile-recording corpus (the one tests/hostile.rs reads) into a folder, for
//! scripts/hostile-bench.sh:
//!   cargo run --release --example hostile_corpus -- DIR [SEED] [COUNT]

use provetop_telemetry::record::hostile::corpus;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .expect("usage: hostile_corpus DIR [SEED] [COUNT]");
    let seed = args.next().map_or(23, |s| s.parse().expect("a seed"));
    let count = args.next().map_or(1200, |s| s.parse().expect("a count"));
    std::fs::create_dir_all(&dir).expect("creating the folder");
    for c in corpus(seed, count) {
        std::fs::write(format!("{dir}/{}.ptrec", c.name), &c.bytes).expect("writing a case");
    }
}
