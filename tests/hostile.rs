//! A generated corpus of hostile recordings (bit flips, cuts, huge length claims, expanding
//! frames, bad strings, counters at the edge of a u64, duplicated frames, lying indexes,
//! garbage, splices) read the way `replay --summary`, `--json`, the dashboard and `export`
//! read them: in-process for every file, through the binary for a sample. Nothing panics,
//! every exit code is 0, 1 or 2, no control character from a file reaches the terminal, and
//! a file that would expand past the bound stops there with exit 0.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

mod common;

use common::provetop;
use provetop_telemetry::export::perfetto::write_trace;
use provetop_telemetry::record::hostile::{corpus, Case, KINDS};
use provetop_telemetry::record::{Hole, Player, Record, Recording};
use provetop_telemetry::report::ReportBuilder;
use std::path::Path;
use std::time::{Duration, Instant};

const SEED: u64 = 23;
const CASES: usize = 1200;
/// In-process reads use a smaller bound, so the expanding files stop early and the test stays
/// fast; the binary's default bound is checked on a few below.
const BOUND: u64 = 20 << 20;

/// What `replay --summary --json` computes, in-process.
fn summarise(path: &Path) {
    let Ok(mut rec) = Recording::open(path) else {
        return;
    };
    rec.set_max_memory(BOUND);
    let mut report = ReportBuilder::default();
    let mut lost = Hole::default();
    let read = rec.for_each(|r| match r {
        Record::Event(e) => report.observe(e),
        Record::Hole(h) => lost.add_counts(h),
        Record::Run { .. } => {}
    });
    assert!(rec.decoded_bytes() <= BOUND);
    let _ = lost.total();
    let _ = read.notes();
    let (from, to) = (rec.start(), rec.end_time());
    let summary = report.summary(from, to);
    let json = serde_json::json!({
        "summary": summary,
        "proofs": report.rows(),
        "devices": report.devices(from, to),
        "config_events": report.config_events(),
        "not_recorded": lost,
    });
    serde_json::to_string(&json).expect("the summary serialises");
}

/// What the dashboard's replay does: play the whole file, then seek back and play again.
fn play(path: &Path) {
    let Ok(mut rec) = Recording::open(path) else {
        return;
    };
    rec.set_max_memory(BOUND);
    let t0 = Instant::now();
    let mut p = Player::new(rec, t0);
    p.set_speed(64.0, t0);
    let far = t0 + Duration::from_secs(1 << 40);
    let mut n = 0u64;
    p.advance(far, |_| n += 1);
    let _ = p.notices();
    let _ = (p.next_mark(0), p.next_config(0));
    p.seek(p.start(), 0, far);
    p.advance(far, |_| n += 1);
}

fn export(path: &Path) {
    let Ok(mut rec) = Recording::open(path) else {
        return;
    };
    rec.set_max_memory(BOUND);
    let _ = write_trace(&mut rec, &mut std::io::sink());
}

fn write(dir: &Path, c: &Case) -> std::path::PathBuf {
    let p = dir.join(format!("{}.ptrec", c.name));
    std::fs::write(&p, &c.bytes).unwrap();
    p
}

#[test]
fn every_hostile_recording_is_read_without_a_panic_in_process() {
    let cases = corpus(SEED, CASES);
    assert!(cases.len() >= 1000);
    let dir = tempfile::tempdir().unwrap();
    let mut failed = vec![];
    for c in &cases {
        let p = write(dir.path(), c);
        let r = std::panic::catch_unwind(|| {
            summarise(&p);
            play(&p);
            export(&p);
        });
        if r.is_err() {
            failed.push(c.name.clone());
        }
        std::fs::remove_file(&p).unwrap();
    }
    assert!(failed.is_empty(), "panicked on {failed:?}");
}

#[test]
fn a_sample_of_hostile_recordings_through_the_binary_exits_0_1_or_2() {
    let cases = corpus(SEED, CASES);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    let t = trace.to_str().unwrap();
    // Two of every kind.
    for c in cases
        .iter()
        .step_by(KINDS.len() * 40 + 1)
        .chain(cases.iter().skip(5).step_by(97))
    {
        let p = write(dir.path(), c);
        let f = p.to_str().unwrap();
        let runs: [&[&str]; 3] = [
            &["replay", f, "--summary", "--max-memory", "16MiB"],
            &["replay", f, "--json", "--max-memory", "16MiB"],
            &["export", f, "--perfetto", t, "--max-memory", "16MiB"],
        ];
        for args in runs {
            let out = provetop(dir.path(), args);
            let code = out.status.code();
            assert!(
                matches!(code, Some(0..=2)),
                "{} {args:?}: {code:?}\n{}",
                c.name,
                String::from_utf8_lossy(&out.stderr)
            );
            for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                if args[0] == "replay" && args[2] == "--summary" || what == "stderr" {
                    assert!(
                        !bytes.iter().any(|&b| b == 0x1b || b == 0x07),
                        "{} {args:?}: a control character on {what}",
                        c.name
                    );
                }
            }
        }
        std::fs::remove_file(&p).unwrap();
    }
}

#[test]
fn a_small_file_that_expands_stops_at_the_default_bound_with_exit_0() {
    // The largest expanding file of the corpus: gigabytes once decoded.
    let case = corpus(SEED, CASES)
        .into_iter()
        .filter(|c| c.name.starts_with("expanding"))
        .max_by_key(|c| c.bytes.len())
        .unwrap();
    assert!(case.bytes.len() < 64 << 10, "{} bytes", case.bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), &case);
    let out = provetop(dir.path(), &["replay", p.to_str().unwrap(), "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("512 MiB") && err.contains("--max-memory"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["recording"]["stopped_at"].as_u64().is_some(), "{v}");
    // Raised, it reads further.
    let more = provetop(
        dir.path(),
        &[
            "replay",
            p.to_str().unwrap(),
            "--json",
            "--max-memory",
            "640MiB",
        ],
    );
    let w: serde_json::Value = serde_json::from_slice(&more.stdout).unwrap();
    assert!(
        w["recording"]["records"].as_u64() > v["recording"]["records"].as_u64(),
        "{w}"
    );
}

#[test]
fn terminal_escapes_in_a_recording_are_printed_escaped() {
    let cases: Vec<Case> = corpus(SEED, CASES)
        .into_iter()
        .filter(|c| c.name.starts_with("bad-strings") && c.bytes.contains(&0x1b))
        .take(12)
        .collect();
    assert!(cases.len() >= 4, "{} cases with escapes", cases.len());
    let dir = tempfile::tempdir().unwrap();
    for c in &cases {
        let p = write(dir.path(), c);
        let out = provetop(dir.path(), &["replay", p.to_str().unwrap(), "--summary"]);
        assert_eq!(out.status.code(), Some(0), "{}", c.name);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains('\x1b') && !text.contains('\x07'),
            "{}: {text}",
            c.name
        );
        assert!(
            text.contains("\\u{"),
            "{}: control characters are shown escaped: {text}",
            c.name
        );
    }
}

/// A summary's report holds several bytes for each decoded one: with `set_held_times` the bound
/// covers them, so an expanding file stops decoding sooner (at the default bound: an expanding
/// file's frames each take more than the small one).
#[test]
fn a_summary_charges_its_own_state_against_the_bound() {
    let bound = provetop_telemetry::record::DEFAULT_MAX_MEMORY;
    let case = corpus(SEED, CASES)
        .into_iter()
        .find(|c| c.name.starts_with("expanding"))
        .expect("an expanding case");
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &case);
    let decoded = |held: u64| {
        let mut rec = Recording::open(&path).expect("it opens");
        rec.set_max_memory(bound);
        rec.set_held_times(held);
        rec.for_each(|_| {});
        assert!(rec.stop().is_some(), "the bound stops an expanding file");
        rec.decoded_bytes()
    };
    let (plain, held) = (decoded(1), decoded(5));
    assert!(held * 5 <= bound, "{held} bytes decoded");
    assert!(
        held < plain,
        "it stops sooner: {held} against {plain} bytes"
    );
}
