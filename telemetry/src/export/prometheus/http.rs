//! The exporter's HTTP side: every connection on its own short-lived thread, each request
//! under one deadline for reading and writing together, and a cap on connections served at
//! once, so a client that trickles bytes or holds a connection idle never delays a scrape.
//! What it answers comes from [`Pages`]: the metrics, and pages a server adds (`serve`'s
//! `/status`).

use parking_lot::Mutex;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::MetricsState;

/// What a server answers: for a path, its content type and body; None for 404.
pub trait Pages: Send + Sync {
    /// The page at `path` (the query string removed).
    fn page(&self, path: &str) -> Option<(&'static str, String)>;
}

/// The exporter's pages: `/metrics` (with what `extra` adds to it), and `extra`'s others.
pub(super) struct MetricsPages {
    pub state: Arc<Mutex<MetricsState>>,
    pub extra: Mutex<Option<Arc<dyn Pages>>>,
}

/// The text exposition format's content type.
pub const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

impl Pages for MetricsPages {
    fn page(&self, path: &str) -> Option<(&'static str, String)> {
        let extra = self.extra.lock().clone();
        match path {
            "/metrics" => {
                let mut text = self.state.lock().render();
                if let Some((_, more)) = extra.and_then(|e| e.page("/metrics")) {
                    text.push_str(&more);
                }
                Some((METRICS_TYPE, text))
            }
            "/" => Some((
                "text/plain; charset=utf-8",
                "provetop: metrics at /metrics\n".to_string(),
            )),
            _ => extra.and_then(|e| e.page(path)),
        }
    }
}

/// The whole of one request, from accept to the last byte written.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// Connections served at once (a thread each); more are answered 503 and closed at once.
pub const MAX_CONNECTIONS: usize = 256;
/// A request head larger than this is refused (a scrape's is a few hundred bytes).
const MAX_HEAD: usize = 8192;

/// Accepts until `stop`, handing each connection to a thread of its own.
pub fn accept(listener: TcpListener, stop: &AtomicBool, pages: Arc<dyn Pages>) {
    let active = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(c) = conn else { continue };
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::AcqRel);
            busy(c);
            continue;
        }
        let slot = Slot(active.clone());
        let pages = pages.clone();
        // Where no thread can be started, the closure (its connection and slot) is dropped:
        // that client sees the connection closed, the next one is tried afresh.
        let _ = std::thread::Builder::new()
            .name("metrics-conn".into())
            .stack_size(256 << 10)
            .spawn(move || {
                let _slot = slot;
                let _ = serve(c, &*pages, Instant::now() + REQUEST_DEADLINE);
            });
    }
}

/// A place among the connections served at once, given back on drop.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Too many connections: a 503 without waiting on the client (what does not fit the socket's
/// buffer at once is not sent).
fn busy(c: TcpStream) {
    let _ = c.set_nonblocking(true);
    let _ = (&c).write_all(
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n",
    );
}

/// The time left before `deadline`, or a timeout error when none is.
fn left(deadline: Instant) -> std::io::Result<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        return Err(std::io::Error::new(ErrorKind::TimedOut, "request deadline"));
    }
    Ok(d)
}

/// Reads the request head (up to the blank line) before `deadline`, however it is cut up.
fn read_head(c: &mut TcpStream, deadline: Instant) -> std::io::Result<Vec<u8>> {
    let mut req = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < MAX_HEAD {
        c.set_read_timeout(Some(left(deadline)?))?;
        let n = match c.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            // A socket timeout reads as WouldBlock on Unix: the deadline passed.
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Err(ErrorKind::TimedOut.into()),
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    Ok(req)
}

/// Writes all of `bytes` before `deadline`.
fn write_by(c: &mut TcpStream, bytes: &[u8], deadline: Instant) -> std::io::Result<()> {
    let mut rest = bytes;
    while !rest.is_empty() {
        c.set_write_timeout(Some(left(deadline)?))?;
        match c.write(rest) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Err(ErrorKind::TimedOut.into()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One request: a GET of a page gets it; anything else a short error.
fn serve(mut c: TcpStream, pages: &dyn Pages, deadline: Instant) -> std::io::Result<()> {
    let req = read_head(&mut c, deadline)?;
    let line = String::from_utf8_lossy(&req);
    let mut parts = line.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, ctype, body) = match method {
        "GET" | "HEAD" => match pages.page(path) {
            Some((ctype, body)) => ("200 OK", ctype, body),
            None => ("404 Not Found", "text/plain", "not found\n".to_string()),
        },
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".to_string(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    write_by(&mut c, head.as_bytes(), deadline)?;
    if method != "HEAD" {
        write_by(&mut c, body.as_bytes(), deadline)?;
    }
    c.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EngineConfig;

    /// A connection and the server's end of it, served under `deadline`.
    fn served(deadline: Duration) -> (TcpStream, std::thread::JoinHandle<std::io::Result<()>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let pages = MetricsPages {
            state: Arc::new(Mutex::new(MetricsState::new(&EngineConfig::default(), 0))),
            extra: Mutex::new(Some(Arc::new(Extra))),
        };
        let t = std::thread::spawn(move || serve(server, &pages, Instant::now() + deadline));
        (client, t)
    }

    #[test]
    fn a_request_that_trickles_past_its_deadline_is_cut_off() {
        let (mut client, server) = served(Duration::from_millis(300));
        let start = Instant::now();
        // A byte every 50 ms: each read succeeds, the whole request never arrives in time.
        for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\n" {
            if client.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            if server.is_finished() {
                break;
            }
        }
        let r = server.join().unwrap();
        assert_eq!(r.unwrap_err().kind(), ErrorKind::TimedOut);
        assert!(start.elapsed() < Duration::from_millis(900));
    }

    /// A page a server adds, and a line it adds to the metrics.
    struct Extra;

    impl Pages for Extra {
        fn page(&self, path: &str) -> Option<(&'static str, String)> {
            match path {
                "/status" => Some(("application/json", "{}".into())),
                "/metrics" => Some((METRICS_TYPE, "extra_total 1\n".into())),
                _ => None,
            }
        }
    }

    fn get(path: &str) -> String {
        let (mut client, server) = served(Duration::from_secs(5));
        client
            .write_all(format!("GET {path} HTTP/1.1\r\n\r\n").as_bytes())
            .unwrap();
        server.join().unwrap().unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn added_pages_are_served_beside_the_metrics() {
        let status = get("/status?x=1");
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert!(status.contains("application/json") && status.ends_with("{}"));
        let metrics = get("/metrics");
        assert!(metrics.ends_with("extra_total 1\n"), "{metrics}");
        assert!(metrics.contains("provetop_"), "{metrics}");
    }

    #[test]
    fn a_prompt_request_is_answered() {
        let (mut client, server) = served(Duration::from_secs(5));
        client.write_all(b"GET /nope HTTP/1.1\r\n\r\n").unwrap();
        server.join().unwrap().unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 404"), "{out}");
    }
}
