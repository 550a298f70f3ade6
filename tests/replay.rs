//! Recordings end to end, through the binary: a recorded bench replays to the numbers the live
//! run reported; a cut file replays what it holds, names the byte it stops at and exits 0;
//! what is not a recording exits 2; a recorder killed with SIGKILL leaves a file that replays
//! up to its last flushed frame; the Perfetto export keeps the trace format's rules.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

use provetop_telemetry::fixture::{self, Spec};
use provetop_telemetry::record::{Header, Hole, Record, RecorderOptions, Recording, Writer};
use provetop_telemetry::Event;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::provetop;

fn ok_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_recorded_bench_replays_to_what_the_live_run_reported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bench.ptrec");
    let f = file.to_str().unwrap();
    let live = ok_json(&provetop(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cpu",
            "--log2-constraints",
            "10",
            "--proofs",
            "5",
            "--partitions",
            "2",
            "--concurrency",
            "2",
            "--at",
            "p4:lock=two-lock",
            "--record",
            f,
            "--json",
        ],
    ));
    let replayed = ok_json(&provetop(dir.path(), &["replay", f, "--summary", "--json"]));
    assert_eq!(
        replayed["summary"], live["summary"],
        "proof counts and stages"
    );
    assert_eq!(replayed["summary"]["proofs"], 10);
    assert_eq!(replayed["config_events"], live["config_events"]);
    assert_eq!(replayed["config_events"][0]["key"], "lock");
    assert_eq!(replayed["proofs"], live["proofs"]);
    let (a, b) = (
        live["devices"].as_array().unwrap(),
        replayed["devices"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    for (a, b) in a.iter().zip(b) {
        assert_eq!(a["id"], b["id"]);
        let (x, y) = (
            a["busy_ratio"].as_f64().unwrap(),
            b["busy_ratio"].as_f64().unwrap(),
        );
        assert!((x - y).abs() < 1e-9, "busy {x} live, {y} replayed");
        assert_eq!(a["gaps"], b["gaps"], "idle time by cause");
        assert_eq!(
            a["gap_detail"]["lock_held"], b["gap_detail"]["lock_held"],
            "the lock holders' stages"
        );
        assert_eq!(a["partitions"], b["partitions"]);
    }
    // The segments either side of the scheduled lock change, alike live and replayed.
    let segs = live["segments"]
        .as_array()
        .expect("bench --json has segments");
    assert_eq!(segs.len(), 2, "{segs:?}");
    assert_eq!(segs[1]["after"], "lock single → two-lock");
    assert_eq!(replayed["segments"], live["segments"]);
    assert_eq!(replayed["recording"]["complete"], true);
    assert_eq!(replayed["recording"]["stopped_at"], Value::Null);

    // The text summary says the same things.
    let text = provetop(dir.path(), &["replay", f, "--summary"]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("proofs 10/10 verified"), "{text}");
    let busy = format!("busy {:.1} %", a[0]["busy_ratio"].as_f64().unwrap() * 100.0);
    assert!(text.contains(&busy), "{busy} in {text}");
    assert!(text.contains("config at") && text.contains("lock single -> two-lock"));

    // The Perfetto export of a real recording keeps the rules.
    let out = dir.path().join("trace.json");
    let e = provetop(
        dir.path(),
        &["export", f, "--perfetto", out.to_str().unwrap()],
    );
    assert!(e.status.success(), "{}", stderr(&e));
    let trace = check_trace(&out);
    assert!(trace.slices > 20 && trace.instants.iter().any(|n| n.starts_with("lock:")));

    // Cut anywhere past the header: what it holds, where it stopped, exit 0.
    let bytes = std::fs::read(&file).unwrap();
    let header_end = Recording::open(&file).unwrap().frames()[0].offset as usize;
    let cut = dir.path().join("cut.ptrec");
    let proofs = replayed["summary"]["proofs"].as_u64().unwrap();
    let mut last_proofs = 0;
    for k in 1..=12 {
        let at = header_end + (bytes.len() - header_end) * k / 13;
        std::fs::write(&cut, &bytes[..at]).unwrap();
        let out = provetop(dir.path(), &["replay", cut.to_str().unwrap(), "--json"]);
        let v = ok_json(&out);
        let stopped = v["recording"]["stopped_at"].as_u64().expect("a stop");
        assert!(stopped as usize <= at);
        assert!(
            stderr(&out).contains(&format!("stops at byte {stopped} of {at}")),
            "{}",
            stderr(&out)
        );
        let n = v["summary"]["proofs"].as_u64().unwrap();
        assert!(n >= last_proofs && n <= proofs, "{n} proofs at {at}");
        last_proofs = n;
    }
}

/// The recording shipped in examples/ (made on an H200) stays readable, with the figures the
/// README and bench/results quote.
#[test]
fn the_shipped_h200_recording_replays() {
    let home = tempfile::tempdir().unwrap();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/h200-k22-single-to-two-lock.ptrec"
    );
    let v = ok_json(&provetop(
        home.path(),
        &["replay", file, "--summary", "--json"],
    ));
    assert_eq!(v["summary"]["proofs"], 940);
    assert_eq!(v["summary"]["verified"], 940);
    let gpu = &v["devices"][0];
    assert_eq!(gpu["id"], "gpu0");
    let busy = gpu["busy_ratio"].as_f64().unwrap();
    assert!((0.34..0.36).contains(&busy), "busy {busy}");
    // NVML's utilisation against the engine's kernels-or-copies time over the same window.
    let nvml = &gpu["nvml"];
    let gap = nvml["util_mean"].as_f64().unwrap() - nvml["engine_active_ratio"].as_f64().unwrap();
    assert!(gap.abs() < 0.05, "NVML vs engine: {gap}");
    let changes = v["config_events"].as_array().unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (&changes[0]["key"], &changes[0]["from"], &changes[0]["to"]),
        (
            &Value::from("lock"),
            &Value::from("single"),
            &Value::from("two-lock")
        )
    );
    // Split at the lock change (2:27.6), each side with its own rate and busy fraction, and
    // the change from the first to the second.
    let segs = v["segments"].as_array().expect("segments");
    assert_eq!(segs.len(), 2, "{segs:?}");
    let split = segs[1]["start"].as_f64().unwrap();
    assert!((split - 147.6).abs() < 0.05, "split at {split}");
    assert_eq!(segs[0]["end"], segs[1]["start"]);
    assert_eq!(segs[1]["after"], "lock single → two-lock");
    let verified: u64 = segs.iter().map(|s| s["verified"].as_u64().unwrap()).sum();
    assert_eq!(verified, 940);
    for s in segs {
        let rate = s["proofs_per_hour"].as_f64().unwrap();
        assert!((10_000.0..20_000.0).contains(&rate), "{s}");
        let busy = s["devices"][0]["busy_ratio"].as_f64().unwrap();
        assert!((0.2..0.5).contains(&busy), "{s}");
        assert!(
            s["devices"][0]["gaps"]["waiting_synthesis"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    let change = &segs[1]["change"];
    let pct = change["proofs_per_hour_pct"].as_f64().unwrap();
    let (a, b) = (
        segs[0]["proofs_per_hour"].as_f64().unwrap(),
        segs[1]["proofs_per_hour"].as_f64().unwrap(),
    );
    assert!((pct - (b / a - 1.0) * 100.0).abs() < 1e-6);
    let line = change["line"].as_str().unwrap();
    assert!(
        line.starts_with("lock single → two-lock: since ") && line.contains("gpu0 busy "),
        "{line}"
    );
    // The advisor's verdict: synthesis is what the GPU waits for here.
    let bottleneck = v["bottleneck"].as_str().unwrap();
    assert!(bottleneck.contains("waits for synthesis"), "{bottleneck}");
    let advice = v["advice"].as_array().expect("advice");
    assert!(advice.len() <= 3, "{advice:?}");
    for a in advice {
        assert!(a["expected_gain"].as_f64().unwrap() >= 1.03, "{a}");
        for k in ["knob", "from", "to", "reason"] {
            assert!(a[k].is_string(), "{a}");
        }
    }
    // The text summary lists both segments and the change.
    let text = provetop(home.path(), &["replay", file, "--summary"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("segments (split at each config change and mark):"),
        "{text}"
    );
    assert!(
        text.contains("  0:00.0 → 2:27.6  ") || text.contains("→ 2:27.6  "),
        "{text}"
    );
    assert!(text.contains(&format!("    after {line}")), "{text}");
    assert!(
        text.contains(&format!("bottleneck: {bottleneck}")),
        "{text}"
    );
}

/// The H200 recordings of bench/results get the advisor's verdict from any machine: a
/// bottleneck sentence and at most three recommendations, each a real `[engine]` key or the
/// jobs in flight, with the gain it predicts.
#[test]
fn the_shipped_h200_pool_recordings_get_a_bottleneck_and_advice() {
    let home = tempfile::tempdir().unwrap();
    for name in ["p8-new", "p8-nice"] {
        let file = format!(
            "{}/bench/results/2026-12-02-h200-pools/{name}.ptrec",
            env!("CARGO_MANIFEST_DIR")
        );
        let v = ok_json(&provetop(
            home.path(),
            &["replay", &file, "--summary", "--json"],
        ));
        let bottleneck = v["bottleneck"].as_str().expect("bottleneck");
        assert!(bottleneck.starts_with("the GPU "), "{name}: {bottleneck}");
        let advice = v["advice"].as_array().expect("advice");
        assert!(advice.len() <= 3, "{name}: {advice:?}");
        for a in advice {
            let knob = a["knob"].as_str().unwrap();
            assert!(
                knob == "concurrency" || provetop_telemetry::config::KEYS.contains(&knob),
                "{name}: {a}"
            );
            let gain = a["expected_gain"].as_f64().unwrap();
            assert!((1.03..10.0).contains(&gain), "{name}: {a}");
        }
    }
}

#[test]
fn what_is_not_a_replayable_recording_exits_2_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    let mut random = vec![0u8; 64 << 10];
    let mut x = 0x1234_5678_9abc_def1u64;
    for b in &mut random {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let mut w = Writer::new(vec![], &header, RecorderOptions::default()).unwrap();
    w.push(&fixture::records(&Spec::busy_gpu(1, 1))[0]).unwrap();
    let mut newer = w.finish().unwrap();
    newer[16] = 9;
    let missing = dir.path().join("missing.ptrec");
    // An output must be a regular or a new file: /dev/null would be refused for itself.
    let trace = dir.path().join("trace.json");
    let trace = trace.to_str().unwrap();
    for (file, why) in [
        (p("random.ptrec", &random), "not a provetop recording"),
        (p("empty.ptrec", b""), "empty"),
        (p("newer.ptrec", &newer), "format 9"),
        (p("text.ptrec", b"PROVETOP-REC"), "cut inside its header"),
        (missing.to_str().unwrap().to_string(), "No such file"),
    ] {
        for args in [
            vec!["replay", &file, "--summary"],
            vec!["replay", &file, "--json"],
            vec!["export", &file, "--perfetto", trace],
        ] {
            let out = provetop(dir.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(stderr(&out).contains(why), "{args:?}: {}", stderr(&out));
            assert!(!stderr(&out).contains("panicked"));
        }
    }
}

#[test]
fn a_recorder_killed_with_sigkill_replays_to_its_last_flushed_frame() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("killed.ptrec");
    let mut child = Command::new(env!("CARGO_BIN_EXE_provetop"))
        .args([
            "bench",
            "--backend",
            "cpu",
            "--log2-constraints",
            "10",
            "--proofs",
            "100000",
            "--record",
            file.to_str().unwrap(),
        ])
        .env("XDG_CACHE_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until the recorder has flushed a few frames with proofs in them.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "no frames were flushed");
        std::thread::sleep(Duration::from_millis(200));
        let Ok(mut rec) = Recording::open(&file) else {
            continue;
        };
        let mut proofs = 0;
        rec.for_each(|r| proofs += matches!(r, Record::Event(Event::Proof(_))) as u32);
        if rec.frames().len() >= 3 && proofs > 0 {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let len = std::fs::metadata(&file).unwrap().len();
    let mut rec = Recording::open(&file).unwrap();
    let mut proofs = 0u64;
    let report = rec.for_each(|r| proofs += matches!(r, Record::Event(Event::Proof(_))) as u64);
    assert!(report.damage.is_empty(), "{report:?}");
    let stop = report
        .stop
        .clone()
        .expect("a killed recording says where it stops");
    let whole: u64 = rec.frames().iter().map(|f| f.len).sum();
    let header_end = rec.frames()[0].offset;
    assert_eq!(
        header_end + whole,
        stop.at,
        "every frame before the stop is read"
    );
    assert!(
        len - stop.at < 8 << 20,
        "at most the frame being written is lost"
    );

    let out = provetop(
        dir.path(),
        &["replay", file.to_str().unwrap(), "--summary", "--json"],
    );
    let v = ok_json(&out);
    assert_eq!(v["summary"]["proofs"].as_u64(), Some(proofs));
    assert!(proofs > 0);
    assert_eq!(v["recording"]["stopped_at"].as_u64(), Some(stop.at));
    assert!(stderr(&out).contains(&format!("stops at byte {}", stop.at)));
}

#[test]
fn a_perfetto_export_has_a_process_per_device_counters_instants_and_holes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rig.ptrec");
    let header = Header {
        session: fixture::session(&Spec::busy_gpu(1, 1)),
        t0: 0,
        writer: "test".into(),
        version: 1,
    };
    let mut w = Writer::new(
        std::fs::File::create(&file).unwrap(),
        &header,
        RecorderOptions::default(),
    )
    .unwrap();
    for r in fixture::records(&Spec::busy_gpu(601, 5)) {
        w.push(&r).unwrap();
    }
    w.push(&Record::Hole(Hole {
        from: 10_000_000_000,
        to: 12_000_000_000,
        samples: 300,
        spans: 2,
        other: 0,
    }))
    .unwrap();
    w.finish().unwrap();
    let out = dir.path().join("trace.json");
    let e = provetop(
        dir.path(),
        &[
            "export",
            file.to_str().unwrap(),
            "--perfetto",
            out.to_str().unwrap(),
        ],
    );
    assert!(e.status.success(), "{}", stderr(&e));
    let t = check_trace(&out);
    assert!(
        t.processes.iter().any(|p| p.starts_with("gpu0")),
        "{:?}",
        t.processes
    );
    for lane in [
        "compute", "h2d copy", "d2h copy", "worker 0", "worker 1", "recorder",
    ] {
        assert!(t.threads.contains(lane), "{lane} in {:?}", t.threads);
    }
    for c in [
        "vram.used",
        "vram.reserved",
        "pcie.h2d",
        "nvml.pcie.rx",
        "host.ddr",
    ] {
        assert!(t.counters.contains(c), "{c} in {:?}", t.counters);
    }
    assert!(t.instants.iter().any(|n| n == "lock: single → two-lock"));
    assert!(t.instants.iter().any(|n| n == "mark at 300 s"));
    assert!(t.slice_names.contains("not recorded"));
}

#[derive(Default)]
struct TraceFacts {
    slices: usize,
    processes: Vec<String>,
    threads: BTreeSet<String>,
    counters: BTreeSet<String>,
    instants: Vec<String>,
    slice_names: BTreeSet<String>,
}

/// Parses a trace and checks the format's rules: every event has a phase, a numeric ts, a
/// pid and a tid; every `X` a `dur` of at least 0; slices on one thread nest; every thread
/// and process that holds events is named; counters carry numbers; instants have a scope.
fn check_trace(path: &Path) -> TraceFacts {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents");
    let ns = |x: &Value| (x.as_f64().expect("a number") * 1000.0).round() as i64;
    let mut f = TraceFacts::default();
    let mut lanes: BTreeMap<(u64, u64), Vec<(i64, i64)>> = BTreeMap::new();
    let (mut named_threads, mut named_procs) = (BTreeSet::new(), BTreeSet::new());
    let mut used = BTreeSet::new();
    for e in events {
        let ph = e["ph"].as_str().expect("a phase");
        let (pid, tid) = (
            e["pid"].as_u64().expect("pid"),
            e["tid"].as_u64().expect("tid"),
        );
        match ph {
            "X" => {
                let (ts, dur) = (ns(&e["ts"]), ns(&e["dur"]));
                assert!(dur >= 0, "{e}");
                lanes.entry((pid, tid)).or_default().push((ts, ts + dur));
                f.slice_names
                    .insert(e["name"].as_str().unwrap().to_string());
                used.insert((pid, tid));
                f.slices += 1;
            }
            "C" => {
                ns(&e["ts"]);
                let args = e["args"].as_object().expect("counter args");
                assert!(args.values().all(Value::is_number), "{e}");
                f.counters.insert(e["name"].as_str().unwrap().to_string());
            }
            "i" => {
                ns(&e["ts"]);
                assert!(["g", "p", "t"].contains(&e["s"].as_str().expect("a scope")));
                f.instants.push(e["name"].as_str().unwrap().to_string());
            }
            "M" => {
                let name = e["args"]["name"].as_str().map(str::to_string);
                match e["name"].as_str().unwrap() {
                    "thread_name" => {
                        named_threads.insert((pid, tid));
                        f.threads.insert(name.unwrap());
                    }
                    "process_name" => {
                        named_procs.insert(pid);
                        f.processes.push(name.unwrap());
                    }
                    _ => {}
                }
            }
            other => panic!("phase {other}"),
        }
    }
    for (lane, mut s) in lanes {
        assert!(named_threads.contains(&lane), "thread {lane:?} unnamed");
        assert!(named_procs.contains(&lane.0), "process {} unnamed", lane.0);
        s.sort_by_key(|&(a, b)| (a, std::cmp::Reverse(b)));
        let mut open: Vec<i64> = vec![];
        for (a, b) in s {
            while open.last().is_some_and(|&e| e <= a) {
                open.pop();
            }
            if let Some(&e) = open.last() {
                assert!(
                    b <= e,
                    "slices cross on {lane:?}: [{a}, {b}) inside one ending {e}"
                );
            }
            open.push(b);
        }
    }
    assert!(!used.is_empty());
    f
}

/// The native Perfetto trace of a bench recording parses with the `perfetto` package's
/// `perfetto_trace_pb2` and holds a track per engine, worker and pool, counters, flows from
/// synthesis to the device to the proof, and the config change (scripts/pftrace-check.py).
/// scripts/test.sh installs the package and sets PROVETOP_PFTRACE_CHECK=1; without either,
/// the parse is skipped and the trace is only checked to be written.
#[test]
fn a_pftrace_export_parses_with_perfettos_own_protos() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("bench.ptrec");
    let out = provetop(
        dir.path(),
        &[
            "bench",
            "--backend",
            "cpu",
            "--log2-constraints",
            "10",
            "--proofs",
            "6",
            "--partitions",
            "2",
            "--at",
            "p4:lock=two-lock",
            "--record",
            rec.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let trace = dir.path().join("trace.pftrace");
    let e = provetop(
        dir.path(),
        &[
            "export",
            rec.to_str().unwrap(),
            "--perfetto",
            trace.to_str().unwrap(),
        ],
    );
    assert!(e.status.success(), "{}", stderr(&e));
    assert!(stderr(&e).contains("slices"), "{}", stderr(&e));
    let bytes = std::fs::read(&trace).unwrap();
    // A protobuf stream of packets (field 1, length-delimited), not JSON.
    assert_eq!(bytes[0], 0x0a, "not a protobuf trace");
    let required = std::env::var("PROVETOP_PFTRACE_CHECK").is_ok_and(|v| v == "1");
    let has_module = Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if !has_module && !required {
        eprintln!("perfetto (PyPI) not installed: the trace's parse is left to scripts/test.sh");
        return;
    }
    let check = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/pftrace-check.py"
        ))
        .arg(&trace)
        .arg("--want-config")
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    let facts: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert!(facts["flows"].as_u64().unwrap() >= 12, "{facts}");
    assert!(facts["counter_values"].as_u64().unwrap() > 0, "{facts}");
}
