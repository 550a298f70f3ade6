//! The binary as a user runs it: the README's bench commands, exports, bad input and exit codes.

use std::process::Output;

mod common;
use common::provetop;

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("exactly one JSON object on stdout")
}

#[test]
fn bench_sha256_and_synthetic_partitions_verify() {
    let dir = tempfile::tempdir().unwrap();
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cpu",
            "--workload",
            "sha256",
            "--blocks",
            "2",
            "--proofs",
            "3",
            "--json",
        ],
    );
    let v = json(&out);
    assert_eq!(v["version"], 1);
    assert_eq!(v["summary"]["proofs"], 3);
    assert_eq!(v["summary"]["verified"], 3);
    let proofs = v["proofs"].as_array().unwrap();
    assert!(proofs
        .iter()
        .all(|p| p["verified"] == true && p["stages"]["synthesis"].as_f64().unwrap() > 0.0));
    for key in [
        "synthesis",
        "ntt_h",
        "msm_h",
        "msm_l",
        "msm_a",
        "msm_b_g1",
        "msm_b_g2",
        "finalize",
        "verify",
    ] {
        assert!(
            v["summary"]["stages"][key]["median"].as_f64().unwrap() > 0.0,
            "stage {key}"
        );
    }
    assert_eq!(v["devices"][0]["id"], "cpu0");
    let busy = v["devices"][0]["busy_ratio"].as_f64().unwrap();
    assert!(busy > 0.0 && busy <= 1.0, "busy {busy}");
    // Pre-compiled by default: the witness, then a, b, c from the recorded matrices.
    assert_eq!(v["config"]["precompiled"], true);
    assert!(
        v["summary"]["stages"]["abc_eval"]["median"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    // The values `auto` chose are in `config`, the reasons in `config_auto`.
    for key in [
        "synthesis_workers",
        "synthesis_threads",
        "prover_threads",
        "concurrency",
    ] {
        let why = v["config_auto"][key].as_str().unwrap_or_default();
        assert!(!why.is_empty(), "config_auto.{key}: {}", v["config_auto"]);
    }
    assert!(v["config"]["synthesis_workers"].as_u64().unwrap() >= 1);
    assert_eq!(v["config"]["b_g2_on"], "cpu", "no GPU here");
    assert!(v["workload"]["concurrency"].as_u64().unwrap() >= 1);

    let export = dir.path().join("export");
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cpu",
            "--workload",
            "synthetic",
            "--log2-constraints",
            "14",
            "--partitions",
            "4",
            "--precompiled",
            "false",
            "--json",
            "--export-dir",
            export.to_str().unwrap(),
        ],
    );
    let v = json(&out);
    assert_eq!(v["summary"]["proofs"], 12);
    assert_eq!(v["summary"]["verified"], 12);
    assert!(
        v["summary"]["stages"].get("abc_eval").is_none(),
        "the plain path"
    );
    for i in 0..12 {
        assert_eq!(
            std::fs::metadata(export.join(format!("proof-{i}.bin")))
                .unwrap()
                .len(),
            192
        );
        // Two public inputs of 32 bytes, the leading one left out.
        assert_eq!(
            std::fs::metadata(export.join(format!("inputs-{i}.bin")))
                .unwrap()
                .len(),
            64
        );
    }
    assert!(export.join("vk.bin").exists() && export.join("params.bin").exists());
    // The cached params are found on the second run.
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cpu",
            "--log2-constraints",
            "14",
            "--proofs",
            "1",
            "--json",
        ],
    );
    assert_eq!(json(&out)["workload"]["params"]["source"], "cached");
}

#[test]
fn bad_input_exits_2_with_a_message_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "[engine]\ngpu_workers = 3\n").unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["bench", "--lock", "triple"], "--lock"),
        (&["bench", "--at", "5s:lokc=none"], "lokc"),
        (&["bench", "--at", "p1:backend=cpu"], "backend"),
        (
            &["bench", "--config", config.to_str().unwrap()],
            "gpu_workers",
        ),
        (&["bench", "--log2-constraints", "40"], "log2-constraints"),
        (
            &["bench", "--params", "/nonexistent/params"],
            "/nonexistent/params",
        ),
    ];
    for (args, needle) in cases {
        let out = provetop(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Params that do not fit the circuit are bad input too.
    let params = dir.path().join("p.bin");
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--log2-constraints",
            "6",
            "--proofs",
            "1",
            "--export-dir",
            dir.path().join("e").to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    std::fs::copy(dir.path().join("e/params.bin"), &params).unwrap();
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--log2-constraints",
            "7",
            "--params",
            params.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("do not match"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn headless_main_command_proves_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    // stdout is a pipe here, so the main command runs headless.
    let out = provetop(dir.path(), &["--log2-constraints", "10", "--proofs", "2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches(" verified ·").count(), 2, "{err}");
    assert!(err.contains("2/2 proofs verified"), "{err}");
}

#[test]
fn the_msm_paths_are_flags_reported_in_the_json_config() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "bench",
        "--backend",
        "cpu",
        "--log2-constraints",
        "8",
        "--proofs",
        "1",
        "--json",
        "--msm-accumulation",
        "batch-affine",
        "--shifted-bases",
        "off",
    ];
    let v = json(&provetop(dir.path(), &args));
    assert_eq!(v["config"]["msm_accumulation"], "batch-affine");
    assert_eq!(v["config"]["shifted_bases"], "off");
    let out = provetop(dir.path(), &["bench", "--shifted-bases", "sideways"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--shifted-bases"));
}

/// One config file is good or bad alike in every mode: a bad `[ui]` key or value exits 2,
/// naming it, from `bench`, a headless run and `replay` as from the dashboard.
#[test]
fn a_bad_ui_table_exits_2_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let rec = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/h200-k22-single-to-two-lock.ptrec"
    );
    for (text, needle) in [
        ("[ui]\nthem = \"dark\"\n", "them"),
        ("[ui]\nrefresh_hz = 500\n", "refresh_hz"),
    ] {
        let config = dir.path().join("ui.toml");
        std::fs::write(&config, text).unwrap();
        let c = config.to_str().unwrap();
        let modes: [&[&str]; 3] = [
            &["bench", "--proofs", "1", "--config", c],
            &["--headless", "--proofs", "1", "--config", c],
            &["replay", rec, "--summary", "--config", c],
        ];
        for args in modes {
            let out = provetop(dir.path(), args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }
}

/// Flags before a subcommand are its own: a bad config file, a lock, a recording before
/// `bench` apply to the bench; before a command that does not take them they are refused with
/// exit 2 naming the command, as is a flag a command does not take after it.
#[test]
fn flags_before_a_subcommand_apply_to_it_or_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[engine]\ngpu_workers = 3\n").unwrap();
    let out = provetop(
        dir.path(),
        &["--config", bad.to_str().unwrap(), "bench", "--proofs", "1"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("gpu_workers"), "{err}");

    let rec = dir.path().join("r.ptrec");
    let args = [
        "--record",
        rec.to_str().unwrap(),
        "--lock",
        "two-lock",
        "bench",
        "--backend",
        "cpu",
        "--log2-constraints",
        "6",
        "--proofs",
        "1",
        "--json",
    ];
    let v = json(&provetop(dir.path(), &args));
    assert_eq!(v["config"]["lock"], "two-lock");
    assert!(std::fs::metadata(&rec).unwrap().len() > 0, "recorded");

    let refused: [(&[&str], &str); 3] = [
        (&["--lock", "none", "replay", "r.ptrec"], "`replay`"),
        (&["--proofs", "5", "serve"], "`serve`"),
        (&["serve", "--concurrency", "2"], "--concurrency"),
    ];
    for (args, needle) in refused {
        let out = provetop(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
