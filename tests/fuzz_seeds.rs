//! The fuzz targets' seed corpus on stable, in CI: every seed of every target (fuzz/harness.rs,
//! from a fixed seed) and every committed corpus file (fuzz/regressions/<target>/) through the very
//! functions the cargo-fuzz targets call. Longer fuzzing runs live in scripts/slow-tests.sh.

#[path = "../fuzz/harness.rs"]
mod harness;

#[test]
fn every_fuzz_seed_goes_through_its_target_without_a_panic() {
    for (target, run) in harness::TARGETS {
        let seeds = harness::seeds(target);
        assert!(seeds.len() >= 10, "{target}: {} seeds", seeds.len());
        for (i, s) in seeds.iter().enumerate() {
            let r = std::panic::catch_unwind(|| run(s));
            assert!(r.is_ok(), "{target}: seed {i} panicked");
        }
    }
}

#[test]
fn every_committed_corpus_file_goes_through_its_target_without_a_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for (target, run) in harness::TARGETS {
        for (name, bytes) in harness::corpus(&root, target) {
            let r = std::panic::catch_unwind(|| run(&bytes));
            assert!(r.is_ok(), "{target}: {name} panicked");
            replayed += 1;
        }
    }
    // The request decoders' corpora are committed: they must be found and replayed.
    for t in [
        "request_json",
        "request_proto",
        "vanilla_post",
        "vanilla_snap",
    ] {
        assert!(harness::corpus(&root, t).len() >= 8, "fuzz/regressions/{t}");
    }
    assert!(replayed >= 16);
}
