//! Filecoin PoRep C2 end to end, as the command runs it: a 2KiB test sector sealed by
//! filecoin-proofs, its partitions proved by the engine, every proof checked by our verifier
//! and by filecoin-proofs' `verify_seal`; then the C1 layouts and the early errors.

use std::process::Output;

mod common;
use common::{porep_cache, provetop_cached};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn porep_2kib_proofs_verify_with_filecoin_proofs() {
    let dir = tempfile::tempdir().unwrap();
    let bench = |extra: &[&str]| {
        let mut args = vec!["bench", "--backend", "cpu", "--workload", "porep", "--json"];
        args.extend_from_slice(extra);
        provetop_cached(dir.path(), &porep_cache(), &args)
    };
    // One proof: porep/tests/precompiled.rs proves the same partition twice more, and
    // scripts/slow-tests.sh several at 8MiB (CI's two cores take ~1 min a partition).
    let out = bench(&["--sector-size", "2KiB", "--proofs", "1"]);
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status,
        stderr(&out)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The partition proved and verified by us...
    assert_eq!(v["workload"]["partitions"], 1);
    assert_eq!(v["summary"]["proofs"], 1);
    assert_eq!(v["summary"]["verified"], 1);
    // ...and by filecoin-proofs' own verifier, given our verifying key.
    assert_eq!(v["filecoin"]["verified"], 1, "{}", v["filecoin"]);
    assert_eq!(v["filecoin"]["failed"], 0);
    // The real circuit: millions of constraints, and the per-stage timings.
    assert!(v["workload"]["constraints"].as_u64().unwrap() > 1_000_000);
    for stage in ["synthesis", "ntt_h", "msm_h", "msm_b_g2", "verify"] {
        assert!(
            v["summary"]["stages"][stage]["median"].as_f64().unwrap() > 0.0,
            "{stage}"
        );
    }

    // The sealed sector's C1 output, in lotus-bench's layout, is what `--c1` reads.
    let c1 = porep_cache().join("provetop/porep/sealed/2KiB-seed0.c1.json");
    assert!(c1.is_file(), "no cached C1 output at {}", c1.display());
    let c1 = c1.to_str().unwrap();
    // A C1 file for another size, or a foreign file, is refused at once with exit 2.
    let out = bench(&["--c1", c1, "--sector-size", "8MiB"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("for 2KiB sectors, not the 8MiB"),
        "{}",
        stderr(&out)
    );
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, "{\"hello\": 1}").unwrap();
    let out = bench(&["--c1", foreign.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("foreign.json"), "{}", stderr(&out));
    // A prover id that did not seal this sector is caught before any proving.
    let out = bench(&["--c1", c1, "--prover-id", "f01000"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("replica id"), "{}", stderr(&out));
    let out = bench(&["--c1", "/nonexistent/c1.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("/nonexistent/c1.json"),
        "{}",
        stderr(&out)
    );
    let out = bench(&["--c1", c1, "--params-dir", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("v28-stacked-proof-of-replication"),
        "{}",
        stderr(&out)
    );
}
