//! Hostile files and flags (issue 46): inputs only from regular files and within a bound (a
//! device that never ends, a FIFO with no writer), outputs only onto regular or new files (a
//! FIFO or a device is never replaced, `--force` onto a hard link leaves the other name whole),
//! every count and duration bounded before anything is allocated (exit 2 naming the flag), and
//! a reader that closes the pipe early ends the command without a panic.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

mod common;

use common::provetop;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    p
}

/// `args` exits 2 within a few seconds, saying `needles` on stderr.
fn refused(home: &Path, args: &[&str], needles: &[&str]) {
    let t = Instant::now();
    let out = provetop(home, args);
    let err = stderr(&out);
    assert_eq!(code(&out), 2, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: no {n:?} in {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "{args:?}: {:?}",
        t.elapsed()
    );
}

#[test]
fn inputs_that_never_end_or_block_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let f = fifo(home, "fifo");
    let f = f.to_str().unwrap();
    let ok = home.join("proof.bin");
    std::fs::write(&ok, [0u8; 192]).unwrap();
    let ok = ok.to_str().unwrap();
    for (src, what) in [("/dev/zero", "a character device"), (f, "a FIFO")] {
        refused(
            home,
            &["verify", "--request", src, "--proof", ok],
            &["--request", what],
        );
        refused(home, &["bench", "--config", src], &["config file", what]);
        refused(
            home,
            &[
                "bench",
                "--backend",
                "cpu",
                "--workload",
                "porep",
                "--c1",
                src,
            ],
            &["--c1", what],
        );
        refused(home, &["replay", src, "--summary"], &[what]);
        refused(
            home,
            &["export", src, "--perfetto", "/tmp/never.json"],
            &[what],
        );
    }
}

#[test]
fn outputs_never_replace_a_fifo_or_a_device_nor_truncate_a_hard_link() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let f = fifo(home, "out.fifo");
    let fs = f.to_str().unwrap();
    refused(
        home,
        &["gen-vanilla", "--miner-id", "1000", "--out", fs, "--force"],
        &["--out", "is a FIFO"],
    );
    let rec = home.join("r.ptrec");
    let bench = [
        "bench",
        "--backend",
        "cpu",
        "--log2-constraints",
        "8",
        "--proofs",
        "1",
    ];
    let mut args = bench.to_vec();
    args.extend(["--record", rec.to_str().unwrap()]);
    assert_eq!(code(&provetop(home, &args)), 0);
    refused(
        home,
        &["export", rec.to_str().unwrap(), "--perfetto", fs],
        &["--perfetto", "is a FIFO"],
    );
    assert!(std::fs::metadata(&f).unwrap().file_type().is_fifo());
    // --force onto one name of a hard-linked file: the other name keeps its bytes.
    let other = home.join("other.ptrec");
    std::fs::hard_link(&rec, &other).unwrap();
    let before = std::fs::read(&other).unwrap();
    args.push("--force");
    assert_eq!(code(&provetop(home, &args)), 0);
    assert_eq!(std::fs::read(&other).unwrap(), before);
    let mut to_null = bench.to_vec();
    to_null.extend(["--record", "/dev/null", "--force"]);
    refused(home, &to_null, &["--record", "a character device"]);
}

#[test]
fn counts_and_durations_past_their_bounds_exit_2_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    for n in ["1000000000", "4294967296", "18446744073709551615"] {
        refused(
            home,
            &["bench", "--backend", "cpu", "--proofs", n],
            &["--proofs"],
        );
    }
    refused(
        home,
        &["bench", "--backend", "cpu", "--at", "1e300s:lock=single"],
        &["--at", "at most"],
    );
    refused(
        home,
        &[
            "bench",
            "--backend",
            "cpu",
            "--concurrency",
            "18446744073709551615",
        ],
        &["--concurrency"],
    );
    refused(
        home,
        &[
            "serve",
            "--backend",
            "cpu",
            "--drain-timeout",
            "18446744073709551615",
        ],
        &["--drain-timeout"],
    );
    refused(
        home,
        &["check", "--max-log2", "4000000000"],
        &["--max-log2"],
    );
}

#[test]
fn a_reader_that_leaves_early_ends_the_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_provetop"))
        .args([
            "bench",
            "--backend",
            "cpu",
            "--log2-constraints",
            "8",
            "--proofs",
            "2",
        ])
        .env("XDG_CACHE_HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -0`: the reader is gone before the table is printed.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

/// `provetop ARGS` run to its end: its exit code and its peak resident memory in bytes, as the
/// kernel counts it (`wait4`'s maximum RSS).
// wait4 reaps the child itself: std's wait would find nothing left.
#[allow(clippy::zombie_processes)]
fn peak_rss(home: &Path, args: &[&str]) -> (i32, u64) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_provetop"))
        .args(args)
        .env("XDG_CACHE_HOME", home)
        .env("XDG_STATE_HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    (libc::WEXITSTATUS(status), usage.ru_maxrss as u64 * 1024)
}

#[test]
fn exporting_an_expanding_recording_stays_within_max_memory() {
    use provetop_telemetry::record::hostile::corpus;
    let dir = tempfile::tempdir().unwrap();
    // Small files whose frames expand far past any bound: the export stops at it.
    let case = corpus(46, 64)
        .into_iter()
        .find(|c| c.name.starts_with("expanding"))
        .unwrap();
    let file = dir.path().join("expanding.ptrec");
    std::fs::write(&file, &case.bytes).unwrap();
    let f = file.to_str().unwrap();
    let out = dir.path().join("trace.json");
    let o = out.to_str().unwrap();
    let run = |bound: &str| {
        let _ = std::fs::remove_file(&out);
        let (rc, rss) = peak_rss(
            dir.path(),
            &["export", f, "--perfetto", o, "--max-memory", bound],
        );
        assert!(rc <= 2, "export --max-memory {bound}: exit {rc}");
        rss
    };
    // The file expands past both bounds, so each run stops at its bound: with 16 MiB more
    // allowed, the peak grows by at most those 16 MiB (it grew about three times the bound
    // before the exporter's slices counted against it, issue 46 row 14).
    let (small, large) = (run("8MiB"), run("24MiB"));
    eprintln!(
        "export of {} ({} bytes): peak RSS {} MiB at 8MiB, {} MiB at 24MiB",
        case.name,
        case.bytes.len(),
        small >> 20,
        large >> 20
    );
    assert!(
        large <= small + (16 << 20),
        "peak RSS grew {} MiB for a bound 16 MiB larger",
        (large.saturating_sub(small)) >> 20
    );
}

/// A Telemetry server that answers every Watch with a recording's header, then its events
/// frames over and over until `total` bytes have gone, then CaughtUp: a history as large as a
/// server may send, made of real frames.
mod huge_history {
    use provetop_proto::provetop::v1::telemetry_server::{Telemetry, TelemetryServer};
    use provetop_proto::provetop::v1::watch_message::Body;
    use provetop_proto::provetop::v1::{
        CaughtUp, ControlRequest, ControlResponse, Frame, Hello, WatchMessage, WatchRequest,
    };
    use std::sync::Arc;
    use tonic::{Request, Response, Status};

    struct History {
        header: Vec<u8>,
        frames: Vec<Vec<u8>>,
        total: usize,
    }

    /// The history every Watch is sent (a type of this file's own, for the service's trait).
    struct Shared(Arc<History>);

    /// A file's header and its events frames, split by the layout's lengths.
    fn split(file: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
        let u32_at = |i: usize| u32::from_le_bytes(file[i..i + 4].try_into().unwrap()) as usize;
        let header_end = 28 + u32_at(20);
        let (mut frames, mut i) = (vec![], header_end);
        while i + 44 <= file.len() && &file[i..i + 4] == b"PTRF" {
            let end = i + 44 + u32_at(i + 8);
            if file[i + 4] == 1 {
                frames.push(file[i..end].to_vec());
            }
            i = end;
        }
        (file[..header_end].to_vec(), frames)
    }

    #[tonic::async_trait]
    impl Telemetry for Shared {
        type WatchStream = tokio_stream::wrappers::ReceiverStream<Result<WatchMessage, Status>>;

        async fn watch(
            &self,
            _: Request<WatchRequest>,
        ) -> Result<Response<Self::WatchStream>, Status> {
            let (tx, rx) = tokio::sync::mpsc::channel(16);
            let h = self.0.clone();
            tokio::spawn(async move {
                let hello = Body::Hello(Hello {
                    header: h.header.clone(),
                    session_id: "huge".into(),
                    now: 1,
                    ..Default::default()
                });
                let mut sent = 0;
                let bodies = std::iter::once(hello)
                    .chain(h.frames.iter().cycle().enumerate().map_while(|(i, f)| {
                        sent += f.len();
                        (sent <= h.total).then(|| {
                            Body::Frame(Frame {
                                data: f.clone().into(),
                                seq: i as u64 + 1,
                            })
                        })
                    }))
                    .chain(std::iter::once(Body::CaughtUp(CaughtUp {})));
                for b in bodies {
                    if tx.send(Ok(WatchMessage { body: Some(b) })).await.is_err() {
                        return;
                    }
                }
                // Live from here: the stream stays open until the viewer leaves.
                tx.closed().await;
            });
            Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(
                rx,
            )))
        }

        async fn control(
            &self,
            _: Request<ControlRequest>,
        ) -> Result<Response<ControlResponse>, Status> {
            Err(Status::permission_denied("read-only"))
        }
    }

    /// Serves `total` bytes of `file`'s frames on a loopback port, on a runtime of its own.
    pub fn start(file: &[u8], total: usize) -> (tokio::runtime::Runtime, u16) {
        let (header, frames) = split(file);
        assert!(!frames.is_empty());
        let rt = tokio::runtime::Runtime::new().unwrap();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let svc = TelemetryServer::new(Shared(Arc::new(History {
            header,
            frames,
            total,
        })));
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        rt.spawn(
            tonic::transport::Server::builder()
                .add_service(svc)
                .serve_with_incoming(incoming),
        );
        (rt, port)
    }
}

#[test]
fn attach_summary_of_a_huge_history_stays_within_max_memory() {
    let file = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/h200-k22-single-to-two-lock.ptrec"
    ))
    .unwrap();
    // 40 MB of history: past what either bound keeps as received (a quarter of it).
    let (_rt, port) = huge_history::start(&file, 40 << 20);
    let addr = port.to_string();
    let dir = tempfile::tempdir().unwrap();
    let run = |bound: &str| {
        let (rc, rss) = peak_rss(
            dir.path(),
            &["attach", &addr, "--summary", "--max-memory", bound],
        );
        assert_eq!(rc, 0, "attach --summary --max-memory {bound}: exit {rc}");
        rss
    };
    let (small, large) = (run("16MiB"), run("48MiB"));
    eprintln!(
        "attach --summary of 40 MiB: peak RSS {} KiB at 16MiB, {} KiB at 48MiB",
        small >> 10,
        large >> 10
    );
    // Each run keeps a part of the history and decodes it within its bound: with 32 MiB more
    // allowed, the peak grows by those 32 MiB (measured: 31 to 33 MiB), and 4 MiB for the
    // allocator's and the transport's buffers.
    assert!(
        large <= small + (36 << 20),
        "peak RSS grew {} MiB for a bound 32 MiB larger",
        (large.saturating_sub(small)) >> 20
    );
    let out = provetop(
        dir.path(),
        &["attach", &addr, "--summary", "--max-memory", "16MiB"],
    );
    let err = stderr(&out);
    assert!(
        err.contains("is left out of the summary") && err.contains("--max-memory"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("proofs"));
}
