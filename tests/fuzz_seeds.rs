//! The fuzz targets' seed corpus on stable, in CI: every seed of every target (fuzz/harness.rs,
//! from a fixed seed) through the very functions the cargo-fuzz targets call. Longer fuzzing
//! runs live in scripts/slow-tests.sh.

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
