//! Outputs never destroy inputs or old files: an export onto its recording is refused before
//! any work, an existing recording needs --force, a refused run leaves the old recording
//! whole, and no output goes through a symbolic link.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

mod common;

use common::provetop;
use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::record::{Header, RecorderOptions, Recording, Writer};
use std::path::Path;
use std::process::Output;

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A small recording of a made-up second.
fn recording(path: &Path) -> Vec<u8> {
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let mut w = Writer::new(vec![], &header, RecorderOptions::default()).unwrap();
    for r in fixture::records(&Spec::busy_gpu(1, 3)) {
        w.push(&r).unwrap();
    }
    let bytes = w.finish().unwrap();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

const BENCH: &[&str] = &[
    "bench",
    "--backend",
    "cpu",
    "--log2-constraints",
    "8",
    "--proofs",
    "1",
];

fn bench_recording(home: &Path, file: &Path, more: &[&str]) -> Output {
    let mut args = BENCH.to_vec();
    args.extend(["--record", file.to_str().unwrap()]);
    args.extend(more);
    provetop(home, &args)
}

#[test]
fn an_export_onto_its_recording_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.ptrec");
    let bytes = recording(&file);
    // The same file, spelled three ways: as given, through `./`, and by a hard link.
    let dotted = dir.path().join(".").join("x.ptrec");
    let linked = dir.path().join("hard.json");
    std::fs::hard_link(&file, &linked).unwrap();
    for out_path in [&file, &dotted, &linked] {
        let out = provetop(
            dir.path(),
            &[
                "export",
                file.to_str().unwrap(),
                "--perfetto",
                out_path.to_str().unwrap(),
            ],
        );
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains("the recording"), "{}", stderr(&out));
        assert_eq!(
            std::fs::read(&file).unwrap(),
            bytes,
            "the recording is intact"
        );
    }
}

#[test]
fn an_export_is_renamed_into_place_and_never_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.ptrec");
    recording(&file);
    let trace = dir.path().join("trace.json");
    std::fs::write(&trace, "old").unwrap();
    let args = |to: &Path| {
        vec![
            "export".to_string(),
            file.to_str().unwrap().into(),
            "--perfetto".into(),
            to.to_str().unwrap().into(),
        ]
    };
    let run = |to: &Path| {
        let a = args(to);
        provetop(
            dir.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    let out = run(&trace);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("{\"traceEvents\""), "{text:.40}");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("tmp")), "{names:?}");

    let target = dir.path().join("precious");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = run(&link);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");

    let out = run(&dir.path().join("missing").join("t.json"));
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn an_existing_recording_is_kept_without_force_and_replaced_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.ptrec");
    let bytes = recording(&file);
    let out = bench_recording(dir.path(), &file, &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("old.ptrec") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    let out = bench_recording(dir.path(), &file, &["--force"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_ne!(std::fs::read(&file).unwrap(), bytes);
    Recording::open(&file).expect("the new recording");
}

#[test]
fn a_run_refused_for_bad_input_leaves_the_old_recording_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.ptrec");
    let bytes = recording(&file);
    let params = dir.path().join("bad.params");
    std::fs::write(&params, vec![7u8; 917]).unwrap();
    let p = params.to_str().unwrap();
    let out = bench_recording(dir.path(), &file, &["--force", "--params", p]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--params"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        bytes,
        "the old recording is whole"
    );
}

#[test]
fn a_recording_never_lands_on_an_input_or_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[engine]\n").unwrap();
    let c = config.to_str().unwrap();
    let out = bench_recording(dir.path(), &config, &["--force", "--config", c]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("the config file"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[engine]\n");

    let target = dir.path().join("precious");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.path().join("link.ptrec");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for more in [&[][..], &["--force"][..]] {
        let out = bench_recording(dir.path(), &link, more);
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
