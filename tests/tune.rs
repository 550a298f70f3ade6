//! `provetop tune` as a user runs it: a search on the cpu backend within its budget, every
//! proof verified, the best configuration printed, recorded, and written into a config file
//! that keeps its comments.

use std::collections::BTreeMap;

mod common;
use common::provetop;

/// The `key = value` lines under `best configuration (…):`; empty for the defaults.
fn best_fields(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("best configuration ("))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            let (k, v) = l.trim().split_once(" = ")?;
            Some((k.to_string(), v.trim_matches('"').to_string()))
        })
        .collect()
}

#[test]
fn tune_searches_live_verifies_every_proof_and_writes_only_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tuned.toml");
    let before =
        "# rig notes: keep me\n[engine]\n# by hand\nmsm_double_buffer = true # stays as it is\n";
    std::fs::write(&config, before).unwrap();
    let recording = dir.path().join("tune.ptr");
    let started = std::time::Instant::now();
    let out = provetop(
        dir.path(),
        &[
            "tune",
            "--backend",
            "cpu",
            "--log2-constraints",
            "12",
            "--budget",
            "60s",
            // A start the search can improve on: one synthesis worker.
            "--synthesis-workers",
            "1",
            "--config",
            config.to_str().unwrap(),
            "--write",
            "--record",
            recording.to_str().unwrap(),
        ],
    );
    let took = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // The budget is the search's; setup and the jobs in flight at its end come on top.
    assert!(took < 120.0, "took {took:.0} s\n{stderr}");

    // The table: the start, then at least one change tried.
    let header = stdout.lines().next().unwrap_or_default();
    assert!(
        header.contains("proofs/h") && header.contains("vs start"),
        "{stdout}"
    );
    assert!(stdout.contains("(start)"), "{stdout}");
    let steps = stdout
        .lines()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert!(steps >= 2, "the start and at least one change:\n{stdout}");
    assert!(stdout.contains("best configuration"), "{stdout}");
    let proofs = stdout
        .lines()
        .find(|l| l.starts_with("proofs: "))
        .unwrap_or_else(|| panic!("a proofs line:\n{stdout}"));
    assert!(proofs.ends_with("(every proof verified)"), "{proofs}");
    let counts: Vec<u64> = proofs
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(counts[0] >= 8 && counts[0] == counts[1], "{proofs}");

    // --write: the fields that differ from the defaults, and nothing else; comments kept.
    let best = best_fields(&stdout);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.starts_with("# rig notes: keep me\n[engine]\n# by hand\nmsm_double_buffer = true # stays as it is\n"),
        "{text}"
    );
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let engine = doc["engine"].as_table().unwrap();
    let mut written: BTreeMap<String, String> = engine
        .iter()
        .map(|(k, v)| {
            let v = v.as_str().map_or(v.to_string(), String::from);
            (k.clone(), v)
        })
        .collect();
    assert_eq!(written.remove("msm_double_buffer").as_deref(), Some("true"));
    assert_eq!(written, best, "file:\n{text}\nstdout:\n{stdout}");
    assert!(
        !engine.contains_key("backend"),
        "flags of startup keys are not written"
    );

    // The recording's config log holds the search's changes, made by `tune`.
    let summary = provetop(
        dir.path(),
        &["replay", recording.to_str().unwrap(), "--summary", "--json"],
    );
    assert!(
        summary.status.success(),
        "{}",
        String::from_utf8_lossy(&summary.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&summary.stdout).unwrap();
    let events = v["config_events"].as_array().unwrap();
    assert!(events.iter().all(|e| e["by"] == "tune"), "{events:?}");
    let engine_steps = stdout
        .lines()
        .skip(2)
        .take(steps - 1)
        // precompiled from `auto` on the synthetic workload keeps its resolved value, so no event.
        .filter(|l| {
            !l.contains("concurrency") && !l.contains("refused") && !l.contains("precompiled")
        })
        .count();
    if engine_steps > 0 {
        assert!(!events.is_empty(), "{stdout}\n{v}");
    }
}

#[test]
fn a_bad_budget_exits_2_naming_the_syntax() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["60", "5x", "0s", "1.5d", "p"] {
        let out = provetop(dir.path(), &["tune", "--backend", "cpu", "--budget", bad]);
        assert_eq!(out.status.code(), Some(2), "--budget {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("200p") && err.contains("5m"), "{err}");
    }
}
