//! The other proofs a Filecoin rig makes, at 2KiB on the cpu backend, from the test sector the
//! PoRep tests seal (the same cache): a WinningPoSt, a WindowPoSt partition and a SnapDeals
//! update, each proved by the engine, verified by our verifier and accepted by filecoin-proofs'
//! own verifier; then requests as Curio sends them (`gen-vanilla`), proved with `bench
//! --request` and checked with `verify`, and tampered ones refused before any proving or their
//! proof rejected, never reported verified.

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

/// `bench --json` (one proof unless `args` say); its report.
fn bench(home: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["bench", "--backend", "cpu", "--json"];
    if !args.contains(&"--proofs") {
        all.extend(["--proofs", "1"]);
    }
    all.extend_from_slice(args);
    let out = run(home, &all);
    assert!(
        out.status.success(),
        "{args:?}: exit {:?}\n{}",
        out.status,
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).expect("bench --json prints one object")
}

#[test]
fn snap_window_and_winning_post_at_2kib_verify_with_filecoin_proofs() {
    let home = tempfile::tempdir().unwrap();
    // (kind, filecoin-proofs' verifier, fewest constraints a partition has)
    let kinds = [
        ("winning-post", "verify_winning_post", 90_000),
        ("window-post", "verify_window_post", 20_000),
        ("snap", "verify_empty_sector_update_proof", 1_000_000),
    ];
    for (kind, verifier, constraints) in kinds {
        let v = bench(home.path(), &["--workload", kind, "--sector-size", "2KiB"]);
        // Proved and verified by us...
        assert_eq!(v["summary"]["proofs"], 1, "{kind}");
        assert_eq!(v["summary"]["verified"], 1, "{kind}");
        // ...and by filecoin-proofs' verifier of the kind, given our verifying key.
        let f = &v["filecoin"];
        assert_eq!(f["verifier"], verifier, "{kind}: {f}");
        assert_eq!(
            (&f["verified"], &f["failed"]),
            (&1.into(), &0.into()),
            "{kind}: {f}"
        );
        // The real circuit, with the stages of a proof.
        let n = v["workload"]["constraints"].as_u64().unwrap();
        assert!(n > constraints, "{kind}: {n} constraints");
        assert!(v["summary"]["stages"]["msm_h"]["median"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn a_mix_of_kinds_is_summarised_per_kind_live_and_in_its_replay() {
    let home = tempfile::tempdir().unwrap();
    let rec = home.path().join("mix.ptrec");
    let v = bench(
        home.path(),
        &[
            "--mix",
            "window-post:2,winning-post:1",
            "--sector-size",
            "2KiB",
            "--proofs",
            "3",
            "--record",
            rec.to_str().unwrap(),
        ],
    );
    // Every job checked by its own kind's verifier.
    let f = &v["filecoin"];
    assert_eq!(
        (&f["verified"], &f["failed"]),
        (&3.into(), &0.into()),
        "{f}"
    );
    assert_eq!(f["kinds"]["window-post"]["verifier"], "verify_window_post");
    assert_eq!(f["kinds"]["winning-post"]["verified"], 1);
    // Two WindowPoSts to one WinningPoSt, each kind with its stages and latency.
    let kinds = &v["summary"]["kinds"];
    assert_eq!(kinds["window-post"]["jobs"], 2, "{kinds}");
    assert_eq!(kinds["winning-post"]["verified"], 1, "{kinds}");
    for k in ["window-post", "winning-post"] {
        assert!(kinds[k]["latency"]["median"].as_f64().unwrap() > 0.0, "{k}");
        assert!(
            kinds[k]["stages"]["msm_h"]["median"].as_f64().unwrap() > 0.0,
            "{k}"
        );
    }
    assert_eq!(v["workload"]["mix"][1]["priority"], "critical");
    // Each kind's idle time by cause, with the devices' keys: the devices' gaps charged to the
    // kind computed after each, so together no more than the devices' idle time.
    let keys = |o: &serde_json::Value| -> Vec<String> {
        o.as_object().expect("an object").keys().cloned().collect()
    };
    let devices = v["devices"].as_array().expect("devices");
    let idle: f64 = devices
        .iter()
        .map(|d| d["idle_seconds"].as_f64().unwrap())
        .sum();
    let mut charged = 0.0;
    for k in ["window-post", "winning-post"] {
        assert_eq!(keys(&kinds[k]["gaps"]), keys(&devices[0]["gaps"]), "{k}");
        charged += kinds[k]["gaps"]
            .as_object()
            .unwrap()
            .values()
            .map(|s| s.as_f64().unwrap())
            .sum::<f64>();
    }
    assert!(
        charged > 0.0 && charged <= idle + 1e-9,
        "{charged} s of {idle} s"
    );
    // The recording carries each job's kind: its summary says the same.
    let out = run(
        home.path(),
        &["replay", rec.to_str().unwrap(), "--summary", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let replayed = &r["summary"]["kinds"];
    for k in ["window-post", "winning-post"] {
        assert_eq!(replayed[k]["jobs"], kinds[k]["jobs"], "{k}");
        assert_eq!(replayed[k]["verified"], kinds[k]["verified"], "{k}");
        assert_eq!(replayed[k]["gaps"], kinds[k]["gaps"], "{k}");
    }
    // Its text gives a short block per kind: the kind's line, then its stages and waits.
    let out = run(home.path(), &["replay", rec.to_str().unwrap(), "--summary"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for k in ["kind window-post: 2 job(s)", "kind winning-post: 1 job(s)"] {
        let line = text.lines().position(|l| l.starts_with(k));
        let next = line.and_then(|i| text.lines().nth(i + 1)).unwrap_or("");
        assert!(
            next.starts_with("  ") && next.contains(" s"),
            "{k} in\n{text}"
        );
    }
}

/// gen-vanilla's request of `kind` for miner 1000's sector 7, in `dir`.
fn request(home: &Path, dir: &Path, kind: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{kind}.json"));
    let out = run(
        home,
        &[
            "gen-vanilla",
            "--kind",
            kind,
            "--sector-size",
            "2KiB",
            "--miner-id",
            "1000",
            "--sector-id",
            "7",
            "--out",
            path.to_str().expect("a UTF-8 temporary path"),
        ],
    );
    assert!(out.status.success(), "{kind}: {}", stderr(&out));
    path
}

/// The request at `path` with `edit` applied to its JSON, written beside it as `name`.
fn edited(path: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let text = std::fs::read(path).expect("gen-vanilla wrote the request");
    let mut v: serde_json::Value = serde_json::from_slice(&text).expect("a request is JSON");
    edit(&mut v);
    let to = path.with_file_name(name);
    std::fs::write(&to, v.to_string()).expect("writing beside the request");
    to.to_str().expect("a UTF-8 temporary path").to_string()
}

/// Flips one bit of a base64 field at byte `at` (from the end when negative).
fn flip(field: &mut serde_json::Value, at: isize) {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let text = field.as_str().expect("a bytes field is a string");
    let mut bytes = b64.decode(text).expect("a bytes field is base64");
    let i = if at < 0 {
        bytes.len() - at.unsigned_abs()
    } else {
        at as usize
    };
    bytes[i] ^= 1;
    *field = b64.encode(bytes).into();
}

#[test]
fn requests_prove_verify_and_tampered_ones_never_pass() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let window = request(dir, dir, "window-post");
    let winning = request(dir, dir, "winning-post");
    let snap = request(dir, dir, "snap");
    // A WindowPoSt request through bench --request: proved, then checked by `verify`.
    let export = dir.join("export");
    let v = bench(
        dir,
        &[
            "--request",
            window.to_str().unwrap(),
            "--export-dir",
            export.to_str().unwrap(),
        ],
    );
    assert_eq!(v["filecoin"]["verified"], 1, "{}", v["filecoin"]);
    let proof = export.join("proof-0.bin");
    let verify = |req: &str| {
        run(
            dir,
            &[
                "verify",
                "--test-params",
                "--request",
                req,
                "--proof",
                proof.to_str().unwrap(),
            ],
        )
    };
    let out = verify(window.to_str().unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("verify_window_post"));
    // The proof of another statement: rejected by filecoin-proofs, exit 1.
    let other_randomness = edited(&window, "window-other.json", |v| {
        flip(&mut v["randomness"], 0)
    });
    // Refused at once: that randomness does not give the sector's challenged leaves.
    let out = verify(&other_randomness);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Another kind's request: rejected by filecoin-proofs (exit 1) where this machine holds a
    // WinningPoSt key, else the key it lacks is named (exit 2): verify never makes one. Which
    // depends on whether another test of this file has made WinningPoSt parameters yet.
    let out = verify(winning.to_str().unwrap());
    match out.status.code() {
        Some(1) => assert!(
            String::from_utf8_lossy(&out.stdout).contains("verify_winning_post rejected"),
            "{}",
            stderr(&out)
        ),
        Some(2) => assert!(
            stderr(&out).contains("winning-post-2KiB"),
            "{}",
            stderr(&out)
        ),
        code => panic!(
            "verify of a WinningPoSt request: exit {code:?}: {}",
            stderr(&out)
        ),
    }

    // Tampered vanilla proofs of each kind, a byte in the middle and near the end: refused
    // before any proving, with the reason, exit 2.
    for (path, kind) in [(&window, "window"), (&winning, "winning"), (&snap, "snap")] {
        for at in [3000, -40] {
            let bad = edited(path, &format!("{kind}-{at}.json"), |v| {
                flip(&mut v["vanillaProofs"][0], at)
            });
            let out = run(dir, &["bench", "--backend", "cpu", "--request", &bad]);
            assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("vanilla proofs do not verify"),
                "{bad}: {}",
                stderr(&out)
            );
        }
    }
    // Fields checked before the vanilla proofs: each named, exit 2.
    type Case<'a> = (&'a Path, &'a str, fn(&mut serde_json::Value), &'a str);
    let cases: [Case; 6] = [
        (
            &winning,
            "8mib",
            |v| (v["registeredProof"], v["sectorSize"]) = ("1".into(), "8388608".into()),
            "a proof of another sector size",
        ),
        (
            &snap,
            "snap-8mib",
            |v| (v["registeredProof"], v["sectorSize"]) = ("1".into(), "8388608".into()),
            "8MiB sector has 4 partitions",
        ),
        (
            &winning,
            "short-randomness",
            |v| v["randomness"] = "AAAA".into(),
            "randomness has 3 bytes",
        ),
        (
            &winning,
            "window-number",
            |v| v["registeredProof"] = "10".into(),
            "is a window-post proof",
        ),
        (
            &winning,
            "partition",
            |v| v["partitionIndex"] = 1.into(),
            "a WinningPoSt has one partition",
        ),
        (
            &snap,
            "no-partitions",
            |v| v["vanillaProofs"] = serde_json::json!([]),
            "vanilla_proofs is empty",
        ),
    ];
    for (path, name, edit, says) in cases {
        let bad = edited(path, &format!("{name}.json"), edit);
        let out = run(dir, &["bench", "--backend", "cpu", "--request", &bad]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
    }
    // Filecoin's parameters named but not there: refused before any setup.
    let empty = dir.join("no-params");
    std::fs::create_dir(&empty).unwrap();
    let out = run(
        dir,
        &[
            "bench",
            "--backend",
            "cpu",
            "--request",
            winning.to_str().unwrap(),
            "--params-dir",
            empty.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("v28-proof-of-spacetime-fallback"),
        "{}",
        stderr(&out)
    );
}
