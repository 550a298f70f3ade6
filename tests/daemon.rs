//! serve as a daemon among hostile or careless neighbours (issue 46): every listen failure is a
//! message and exit 2 at once, a live unix socket is never taken over, the example config
//! starts again after a stop (its recording moved aside), and running out of descriptors never
//! closes the listener. Loopback only; each server is a small cpu engine.

// Helpers unwrap too: a failed unwrap fails the test that called it, where it happened.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `provetop serve` and the lines of its stderr.
struct Serve {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

const ENGINE: &[&str] = &["--backend", "cpu", "--log2-constraints", "8"];

/// Starts `sh -c PREFIX provetop serve ARGS` (PREFIX: e.g. `ulimit -n 64 &&`).
fn spawn(home: &Path, prefix: &str, args: &[&str]) -> Serve {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let line = format!(
        "{prefix} exec '{}' serve {} {}",
        env!("CARGO_BIN_EXE_provetop"),
        ENGINE.join(" "),
        quoted.join(" ")
    );
    let mut child = Command::new("sh")
        .args(["-c", &line])
        .env("XDG_CACHE_HOME", home)
        .env("XDG_STATE_HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    Serve {
        child,
        lines,
        seen: vec![],
    }
}

impl Serve {
    /// The first line holding `needle` within `limit`.
    fn wait_for(&mut self, needle: &str, limit: Duration) -> Option<String> {
        let end = Instant::now() + limit;
        if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
            return Some(l.clone());
        }
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(needle) {
                        return Some(l);
                    }
                }
                Err(_) => return None,
            }
        }
        None
    }

    /// The TCP port it listens on.
    fn port(&mut self) -> u16 {
        let l = self
            .wait_for("serve: listening on", Duration::from_secs(60))
            .unwrap_or_else(|| panic!("serve never listened: {:?}", self.seen));
        let addr = l.split_whitespace().nth(3).unwrap();
        addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Its exit code within `limit`, killed (and `None`) past it.
    fn exit_within(&mut self, limit: Duration) -> Option<i32> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }

    /// SIGTERM, then its exit code.
    fn stop(&mut self) -> Option<i32> {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.exit_within(Duration::from_secs(30))
    }

    /// Every stderr line so far.
    fn stderr(&mut self) -> String {
        // Once the child has exited its pipe ends: wait for the reader's last lines.
        let exited = matches!(self.child.try_wait(), Ok(Some(_)));
        loop {
            let next = match exited {
                true => self.lines.recv_timeout(Duration::from_secs(5)).ok(),
                false => self.lines.try_recv().ok(),
            };
            match next {
                Some(l) => self.seen.push(l),
                None => break,
            }
        }
        self.seen.join("\n")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_listen_failure_exits_2_at_once_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    std::fs::write(d.join("file"), "x").unwrap();
    std::os::unix::fs::symlink(d.join("file"), d.join("link")).unwrap();
    let long = format!("unix://{}/{}", d.display(), "s".repeat(120));
    let cases = [
        (format!("127.0.0.1:{port}"), "another process listens there"),
        (
            format!("unix://{}", d.join("file").display()),
            "not a socket",
        ),
        (
            format!("unix://{}", d.join("link").display()),
            "symbolic link",
        ),
        (format!("unix://{}", d.display()), "not a socket (a folder)"),
        (long, "at most 107 bytes"),
        (format!("unix://{}/none/s.sock", d.display()), "no folder"),
    ];
    for (addr, why) in cases {
        let t = Instant::now();
        let mut s = spawn(d, "", &["--listen", &addr]);
        let code = s.exit_within(Duration::from_secs(20));
        let err = s.stderr();
        assert_eq!(code, Some(2), "--listen {addr}: {err}");
        assert!(err.contains("--listen") && err.contains(why), "{err}");
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{addr}: {:?}",
            t.elapsed()
        );
    }
    assert_eq!(std::fs::read(d.join("file")).unwrap(), b"x");
}

#[test]
fn a_second_server_never_takes_over_a_live_socket() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("serve.sock");
    let addr = format!("unix://{}", sock.display());
    let mut first = spawn(dir.path(), "", &["--listen", &addr]);
    assert!(first
        .wait_for("serve: listening on unix://", Duration::from_secs(60))
        .is_some());
    let mut second = spawn(dir.path(), "", &["--listen", &addr]);
    let code = second.exit_within(Duration::from_secs(20));
    let err = second.stderr();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("listening on this socket already"), "{err}");
    // The first still answers on its path.
    std::os::unix::net::UnixStream::connect(&sock).unwrap();
    assert_eq!(first.stop(), Some(0), "{}", first.stderr());
}

#[test]
fn the_example_config_starts_again_after_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("serve.ptrec");
    let config = dir.path().join("config.toml");
    let toml = format!(
        "[serve]\nlisten = \"127.0.0.1:0\"\ndrain_timeout = 5\nrecord = \"{}\"\n",
        rec.display()
    );
    std::fs::write(&config, toml).unwrap();
    let cfg = config.to_str().unwrap();
    for run in 0..3 {
        let mut s = spawn(dir.path(), "", &["--config", cfg]);
        s.port();
        assert_eq!(s.stop(), Some(0), "run {run}: {}", s.stderr());
        if run > 0 {
            assert!(s.stderr().contains("recording moved to"), "{}", s.stderr());
        }
    }
    // This run's file, and the two before it beside it, each a whole recording.
    for p in [
        rec.clone(),
        dir.path().join("serve.1.ptrec"),
        dir.path().join("serve.2.ptrec"),
    ] {
        let r = provetop_telemetry::record::Recording::open(&p);
        assert!(r.is_ok(), "{}", p.display());
    }
}

/// Whether an HTTP/2 server answers on `port`: the client preface gets its SETTINGS frame.
fn answers(port: u16) -> bool {
    let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
    if c.write_all(preface).is_err() {
        return false;
    }
    let mut frame = [0u8; 9];
    c.read_exact(&mut frame).is_ok() && frame[3] == 4
}

#[test]
fn running_out_of_descriptors_never_closes_the_listener() {
    let dir = tempfile::tempdir().unwrap();
    // 64 descriptors: idle clients would take the last ones.
    let mut s = spawn(dir.path(), "ulimit -n 64 &&", &["--listen", "127.0.0.1:0"]);
    let port = s.port();
    assert!(answers(port));
    let idle: Vec<_> = (0..80)
        .filter_map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    assert!(idle.len() >= 40, "{} connections", idle.len());
    std::thread::sleep(Duration::from_millis(500));
    drop(idle);
    // Once they left, a new client is served.
    let end = Instant::now() + Duration::from_secs(20);
    while !answers(port) {
        assert!(Instant::now() < end, "the listener is gone: {}", s.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(s.stop(), Some(0), "{}", s.stderr());
    let err = s.stderr();
    assert!(
        err.matches("accepting a connection failed").count() <= 1,
        "{err}"
    );
}

/// A message whose field 2 is text where `SubmitProofRequest` has its proof_kind (a varint):
/// bytes no protobuf decoder takes as that request.
#[derive(Clone, PartialEq, prost::Message)]
struct Malformed {
    #[prost(string, tag = "2")]
    kind: String,
}

/// The gRPC code and message of `call`'s refusal.
fn refused<T: std::fmt::Debug>(
    call: Result<tonic::Response<T>, tonic::Status>,
) -> (tonic::Code, String) {
    let s = call.expect_err("refused");
    (s.code(), s.message().to_string())
}

#[test]
fn refusals_carry_the_code_a_client_acts_on() {
    use provetop_proto::cuzk::v1::proving_engine_client::ProvingEngineClient;
    use provetop_proto::cuzk::v1::*;
    use tonic::Code;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[serve]\nlisten = \"127.0.0.1:0\"\nmax_queued = 4\nqueue_memory = \"4KiB\"\n",
    )
    .unwrap();
    let mut s = spawn(
        dir.path(),
        "",
        &["--test-params", "--config", config.to_str().unwrap()],
    );
    let url = format!("http://127.0.0.1:{}", s.port());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = ProvingEngineClient::connect(url.clone()).await.unwrap();
        // Row 16: bytes that are no SubmitProofRequest are the sender's error.
        let mut grpc = tonic::client::Grpc::new(
            tonic::transport::Endpoint::from_shared(url)
                .unwrap()
                .connect()
                .await
                .unwrap(),
        );
        grpc.ready().await.unwrap();
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(
            "/cuzk.v1.ProvingEngine/SubmitProof",
        );
        let codec = tonic::codec::ProstCodec::<Malformed, SubmitProofResponse>::default();
        let bad = tonic::Request::new(Malformed { kind: "x".into() });
        let (code, msg) = refused(grpc.unary(bad, path, codec).await);
        assert_eq!(code, Code::InvalidArgument, "{msg}");
        assert!(msg.contains("SubmitProofRequest"), "{msg}");
        // Row 6: the bounds are in GetStatus before anything is refused.
        let st = c
            .get_status(GetStatusRequest {})
            .await
            .unwrap()
            .into_inner();
        assert_eq!((st.max_queued_requests, st.max_queued_bytes), (4, 4096));
        assert_eq!((st.queued_requests, st.queued_bytes), (0, 0));
        // A request larger than the queue's memory is refused, saying which bound.
        let kind = provetop_porep::Kind::WinningPost;
        let size = provetop_porep::SectorSize::S2KiB;
        let big = SubmitProofRequest {
            request_id: "big-1".into(),
            proof_kind: ProofKind::WinningPost as i32,
            registered_proof: provetop_porep::post::registered_id(kind, size),
            vanilla_proofs: vec![vec![7; 8 << 10]],
            randomness: vec![0; 32],
            ..Default::default()
        };
        let (code, msg) = refused(c.submit_proof(big.clone()).await);
        assert_eq!(code, Code::ResourceExhausted, "{msg}");
        assert!(msg.contains("queue_memory 4096"), "{msg}");
        let (code, _) = refused(c.prove(ProveRequest { submit: Some(big) }).await);
        assert_eq!(code, Code::ResourceExhausted);
        // Row 11: a set that would seal a 512MiB test sector is not this server's to make.
        let t = Instant::now();
        let (code, msg) = refused(
            c.preload_srs(PreloadSrsRequest {
                circuit_id: "porep-512m".into(),
            })
            .await,
        );
        assert_eq!(code, Code::FailedPrecondition, "{msg}");
        assert!(msg.contains("[serve] sets"), "{msg}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    });
    assert_eq!(s.stop(), Some(0), "{}", s.stderr());
}
