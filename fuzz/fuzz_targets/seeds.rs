//! Writes every target's seed corpus (harness.rs, from a fixed seed) under a folder, one
//! folder per target (`decode` holds the recordings):
//!   cargo run --manifest-path fuzz/Cargo.toml --bin seeds -- fuzz/corpus

#[path = "../harness.rs"]
mod harness;

fn main() {
    let root = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    for (target, _) in harness::TARGETS {
        let dir = match *target {
            "recording" => format!("{root}/decode"),
            t => format!("{root}/{t}"),
        };
        std::fs::create_dir_all(&dir).expect("creating the corpus folder");
        for (i, s) in harness::seeds(target).iter().enumerate() {
            std::fs::write(format!("{dir}/seed-{i:04}"), s).expect("writing a seed");
        }
    }
}
