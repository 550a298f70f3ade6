//! The bounds of a run, checked before any work: exit 2 with the flag named, and scheduled or
//! backend-bound changes that did not happen listed in `config_events` with the reason.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

use std::process::Output;
use std::time::{Duration, Instant};

mod common;
use common::provetop;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `args` and expects exit 2, at once, with `needles` in the message.
fn refused(args: &[&str], needles: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = provetop(dir.path(), args);
    let took = start.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in: {err}");
    }
    assert!(
        !err.contains("verified"),
        "{args:?} proved before refusing: {err}"
    );
    assert!(took < Duration::from_secs(20), "{args:?} took {took:?}");
}

#[test]
fn counts_out_of_bounds_exit_2_before_any_work() {
    let cpu = ["bench", "--backend", "cpu", "--log2-constraints", "6"];
    let with = |extra: &[&'static str]| [&cpu[..], extra].concat();
    refused(&with(&["--proofs", "0"]), &["--proofs 0"]);
    refused(
        &with(&["--partitions", "4294967295"]),
        &["--partitions 4294967295", "1024"],
    );
    refused(&with(&["--partitions", "1025"]), &["--partitions 1025"]);
    refused(&with(&["--partitions", "0"]), &["--partitions 0"]);
    refused(
        &["bench", "--backend", "cpu", "--log2-constraints", "3"],
        &["--log2-constraints", "4 and 27"],
    );
    refused(
        &["bench", "--backend", "cpu", "--log2-constraints", "28"],
        &["--log2-constraints", "4 and 27"],
    );
}

#[test]
fn a_host_budget_below_one_partition_names_the_minimum() {
    // 2^10 rows: 1024 × 32 bytes × 6 held from synthesis to the proof.
    let args = [
        "bench",
        "--backend",
        "cpu",
        "--log2-constraints",
        "10",
        "--host-memory-budget",
        "1",
    ];
    refused(&args, &["host_memory_budget", "196608"]);
}

#[test]
fn an_export_dir_naming_a_file_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"kept").unwrap();
    let args = [
        "bench",
        "--backend",
        "cpu",
        "--log2-constraints",
        "6",
        "--export-dir",
        file.to_str().unwrap(),
    ];
    refused(&args, &["--export-dir", "not a folder"]);
    assert_eq!(std::fs::read(&file).unwrap(), b"kept");
}

#[test]
fn b_g2_on_gpu_needs_a_gpu() {
    refused(
        &[
            "bench",
            "--backend",
            "cpu",
            "--log2-constraints",
            "6",
            "--b-g2-on",
            "gpu",
        ],
        &["b_g2_on", "cuda backend"],
    );
}

#[test]
fn the_cuda_backend_without_a_gpu_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let devices = provetop(dir.path(), &["devices"]);
    let listing = String::from_utf8_lossy(&devices.stdout).to_string() + &stderr(&devices);
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cuda",
            "--log2-constraints",
            "6",
            "--proofs",
            "1",
        ],
    );
    if out.status.success() {
        // A machine with a usable GPU proves.
        return;
    }
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}\n{listing}");
    assert!(err.contains("--backend cuda"), "{err}");
}

fn bench_json(args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "bench",
        "--backend",
        "cpu",
        "--log2-constraints",
        "6",
        "--json",
    ];
    let out = provetop(dir.path(), &[&base[..], args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn events_of<'a>(v: &'a serde_json::Value, key: &str) -> Vec<&'a serde_json::Value> {
    v["config_events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["key"] == key)
        .collect()
}

#[test]
fn changes_that_never_happen_are_listed_as_not_applied() {
    let v = bench_json(&[
        "--proofs",
        "2",
        "--at",
        "p1:b_g2_on=gpu",
        "--at",
        "p99:lock=none",
        "--at",
        "9999s:prestage=false",
    ]);
    let g2 = events_of(&v, "b_g2_on");
    assert_eq!(g2.len(), 1, "{}", v["config_events"]);
    assert_eq!(g2[0]["applied"], false);
    assert!(
        g2[0]["error"].as_str().unwrap().contains("cuda backend"),
        "{}",
        g2[0]
    );
    assert_eq!(v["config"]["b_g2_on"], "cpu");
    for (key, when) in [("lock", "p99"), ("prestage", "9999s")] {
        let e = events_of(&v, key);
        assert_eq!(e.len(), 1, "{key}: {}", v["config_events"]);
        assert_eq!(e[0]["applied"], false, "{}", e[0]);
        let why = e[0]["error"].as_str().unwrap();
        assert!(
            why.contains(when) && why.contains("never came due"),
            "{why}"
        );
    }
}

#[test]
fn a_listener_beyond_loopback_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let run = |addr: &str| {
        let out = provetop(
            dir.path(),
            &[
                "bench",
                "--backend",
                "cpu",
                "--log2-constraints",
                "6",
                "--proofs",
                "1",
                "--metrics-addr",
                addr,
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let open = run("0.0.0.0:0");
    assert!(
        open.contains("warning") && open.contains("every network interface"),
        "{open}"
    );
    let log = std::fs::read_dir(dir.path().join("provetop"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("provetop.log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(log.contains("every network interface"), "log: {log}");
    let quiet = run("127.0.0.1:0");
    assert!(!quiet.contains("warning"), "{quiet}");
}
