//! Sparse sectors through the binary: a sparse 2KiB PoRep request (`gen-vanilla --sparse`)
//! proved by the engine and accepted by filecoin-proofs' `verify_seal`; the same request with
//! one label changed refused by `bench --request` and `verify` before any proving, naming the
//! partition, challenge and check; `bench --workload porep --sector-size 32GiB` building its
//! sparse sector in-process; and the kinds and proofs that cannot be sparse refused. Sparse
//! WindowPoSt, WinningPoSt and SnapDeals requests at 2KiB proved and accepted by
//! filecoin-proofs' verifier of the kind, and tampered ones refused naming the check.

use base64::Engine as _;
use std::path::Path;
use std::process::Output;

mod common;
use common::{porep_cache, provetop_cached};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn run(home: &Path, args: &[&str]) -> Output {
    provetop_cached(home, &porep_cache(), args)
}

/// `bench --json --request` of one proof on the cpu backend, with `extra` arguments: its report.
fn proved(home: &Path, request: &Path, extra: &[&str]) -> serde_json::Value {
    let path = request.to_str().expect("a UTF-8 temporary path");
    let mut args = vec!["bench", "--backend", "cpu", "--json", "--proofs", "1"];
    args.extend(["--request", path]);
    args.extend_from_slice(extra);
    let out = run(home, &args);
    assert!(out.status.success(), "{path}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("bench --json prints one object")
}

/// `gen-vanilla` of a sparse sector with `extra` arguments, into `out`.
fn gen(home: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "gen-vanilla",
        "--miner-id",
        "1000",
        "--sector-id",
        "9",
        "--out",
        out.to_str().expect("a UTF-8 temporary path"),
    ];
    args.extend_from_slice(extra);
    run(home, &args)
}

/// `bench --workload KIND --sector-size 32GiB` with an empty parameter folder: its sparse
/// inputs are built and checked in-process (in a cache of its own), then the missing
/// parameters stop it (exit 2) before any setup. Its stderr.
fn in_process_32gib(home: &Path, kind: &str) -> String {
    let empty = home.join(format!("no-params-{kind}"));
    std::fs::create_dir_all(&empty).expect("an empty parameter folder");
    let args = ["--workload", kind, "--sector-size", "32GiB"];
    let empty = empty.to_str().expect("a UTF-8 temporary path");
    // A cache of its own: the sparse sector is built, not read from an earlier run's.
    let bench = [
        &["bench", "--backend", "cpu"],
        &args[..],
        &["--params-dir", empty],
    ]
    .concat();
    let out = provetop_cached(home, &home.join("cache"), &bench);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{kind}: {e}");
    e
}

/// The request at `from` with one byte of the first labeling proof's first parent label
/// changed (inside the C1 output, inside lotus-bench's wrapper), written to `to`.
fn one_label_changed(from: &Path, to: &Path) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut request: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from).expect("the request")).expect("JSON");
    let wrapper = b64
        .decode(request["vanillaProof"].as_str().expect("a bytes field"))
        .expect("base64");
    let mut wrapper: serde_json::Value = serde_json::from_slice(&wrapper).expect("JSON");
    let inner = b64
        .decode(
            wrapper["Phase1Out"]
                .as_str()
                .expect("lotus-bench's wrapper"),
        )
        .expect("base64");
    let mut inner: serde_json::Value = serde_json::from_slice(&inner).expect("JSON");
    let label =
        &mut inner["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]["labeling_proofs"][0]["parents"][0];
    let first = label.as_array_mut().expect("a label is a list of bytes");
    first[0] = (first[0].as_u64().expect("a byte") ^ 1).into();
    wrapper["Phase1Out"] = b64.encode(serde_json::to_vec(&inner).expect("JSON")).into();
    request["vanillaProof"] = b64
        .encode(serde_json::to_vec(&wrapper).expect("JSON"))
        .into();
    std::fs::write(to, request.to_string()).expect("writing the tampered request");
}

#[test]
fn sparse_porep_requests_prove_verify_and_tampered_ones_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let request = dir.join("porep-sparse.json");
    let out = gen(
        dir,
        &request,
        &["--kind", "porep", "--sector-size", "2KiB", "--sparse"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("sparse"), "{}", stderr(&out));
    assert!(stderr(&out).contains("peak memory"), "{}", stderr(&out));

    // Proved by the engine, verified by us and by filecoin-proofs' verify_seal.
    let export = dir.join("export");
    let v = proved(dir, &request, &["--export-dir", export.to_str().unwrap()]);
    assert_eq!(v["summary"]["verified"], 1);
    assert_eq!(
        v["filecoin"]["verifier"], "verify_seal",
        "{}",
        v["filecoin"]
    );
    assert_eq!(v["filecoin"]["verified"], 1, "{}", v["filecoin"]);
    let proof = export.join("proof-0.bin");
    let verify = |req: &Path| {
        run(
            dir,
            &[
                "verify",
                "--test-params",
                "--request",
                req.to_str().unwrap(),
                "--proof",
                proof.to_str().unwrap(),
            ],
        )
    };
    let out = verify(&request);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // One label changed: refused before any proving by bench --request and verify, exit 2,
    // naming the partition, the challenge and the check.
    let tampered = dir.join("porep-tampered.json");
    one_label_changed(&request, &tampered);
    let says = |out: &Output| {
        let e = stderr(out);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(
            e.contains("partition 0, challenge 0") && e.contains("label check fails at layer 1"),
            "{e}"
        );
    };
    let tampered_str = tampered.to_str().unwrap();
    says(&run(
        dir,
        &["bench", "--backend", "cpu", "--request", tampered_str],
    ));
    says(&verify(&tampered));

    // In-process at 32 GiB: the sparse sector is built and checked in seconds (no sealing),
    // then Filecoin's parameters named but not there stop it before any setup.
    let e = in_process_32gib(dir, "porep");
    assert!(e.contains("built a sparse 32GiB sector"), "{e}");
    assert!(e.contains("no v28-stacked-proof-of-replication"), "{e}");

    // What cannot be sparse is refused with the reason, exit 2.
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "--kind",
                "window-post",
                "--sector-size",
                "32GiB",
                "--sectors",
                "2350",
            ],
            "holds at most 2349 sectors",
        ),
        (
            &[
                "--kind",
                "porep",
                "--sector-size",
                "32GiB",
                "--registered-proof",
                "13",
            ],
            "derive their challenges from comm_r",
        ),
        (
            &[
                "--kind",
                "porep",
                "--sector-size",
                "32GiB",
                "--sectors",
                "3",
            ],
            "sparse WindowPoSt or WinningPoSt",
        ),
        (
            &[
                "--kind",
                "porep",
                "--sector-size",
                "2KiB",
                "--registered-proof",
                "8",
            ],
            "is a 32GiB seal proof",
        ),
    ];
    for (args, reason) in cases {
        let out = gen(dir, &dir.join("refused.json"), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(reason), "{args:?}: {}", stderr(&out));
    }
}

/// The request at `from` with one bit of its base64 field `key` flipped, written to `to`.
fn one_bit_flipped(from: &Path, key: &str, to: &Path) {
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut request: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from).expect("the request")).expect("JSON");
    let mut bytes = b64
        .decode(request[key].as_str().expect("a bytes field"))
        .expect("base64");
    bytes[0] ^= 1;
    request[key] = b64.encode(bytes).into();
    std::fs::write(to, request.to_string()).expect("writing the tampered request");
}

#[test]
fn sparse_post_and_snap_requests_prove_and_filecoin_proofs_accepts_them() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let kinds = [
        ("window-post", "verify_window_post"),
        ("winning-post", "verify_winning_post"),
        ("snap", "verify_empty_sector_update_proof"),
    ];
    for (kind, verifier) in kinds {
        let request = dir.join(format!("{kind}-sparse.json"));
        let out = gen(
            dir,
            &request,
            &["--kind", kind, "--sector-size", "2KiB", "--sparse"],
        );
        assert!(out.status.success(), "{kind}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(", sparse)"),
            "{kind}: {}",
            stderr(&out)
        );
        // Proved, verified by us and by filecoin-proofs' verifier of the kind.
        let v = proved(dir, &request, &[]);
        let f = &v["filecoin"];
        let summary = (&v["summary"]["verified"], &f["verifier"], &f["verified"]);
        assert_eq!(
            summary,
            (&1.into(), &verifier.into(), &1.into()),
            "{kind}: {v}"
        );
        assert_eq!(f["failed"], 0, "{kind}: {f}");
    }

    // Tampered: refused by bench --request before any proving, exit 2, naming the check.
    let cases = [
        ("window-post", "randomness", "challenge 0 (leaf"),
        ("window-post", "randomness", "the leaf check fails"),
        (
            "snap",
            "commRNew",
            "partition 0: the comm_r_new check fails",
        ),
    ];
    for (kind, key, says) in cases {
        let tampered = dir.join(format!("{kind}-tampered.json"));
        one_bit_flipped(&dir.join(format!("{kind}-sparse.json")), key, &tampered);
        let t = tampered.to_str().unwrap();
        let out = run(dir, &["bench", "--backend", "cpu", "--request", t]);
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{kind} {key}: {e}");
        assert!(
            e.contains("do not verify") && e.contains(says),
            "{kind} {key}: {e}"
        );
    }

    // In-process at 32 GiB: the sparse update built and checked, then the parameters missing.
    let e = in_process_32gib(dir, "snap");
    assert!(e.contains("building a sparse 32GiB snap"), "{e}");
    assert!(e.contains("no v28-empty-sector-update"), "{e}");
}
