//! The running exporter: a collector thread that folds the bus into the state and settles it
//! once a second, and an HTTP thread that answers `GET /metrics`.

use crossbeam_channel::RecvTimeoutError;
use parking_lot::Mutex;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::MetricsState;
use crate::config::EngineConfig;
use crate::{Bus, Clock};

/// The running exporter: a collector thread on the bus and an HTTP thread.
pub struct Exporter {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Exporter {
    /// Binds `addr` and starts serving; the collector subscribes to `bus` now.
    pub fn start(
        addr: SocketAddr,
        bus: &Bus,
        clock: Clock,
        config: &EngineConfig,
    ) -> std::io::Result<Exporter> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(MetricsState::new(config, clock.now())));
        let stop = Arc::new(AtomicBool::new(false));
        let sub = bus.subscribe(1 << 16);
        let collector = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::Builder::new()
                .name("metrics-collect".into())
                .spawn(move || {
                    let mut last_settle = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        let first = match sub.rx.recv_timeout(Duration::from_millis(200)) {
                            Ok(e) => Some(e),
                            Err(RecvTimeoutError::Timeout) => None,
                            Err(RecvTimeoutError::Disconnected) => return,
                        };
                        let mut st = state.lock();
                        if let Some(e) = first {
                            st.observe(&e);
                            // Whatever else is waiting, under the same lock.
                            for e in sub.rx.try_iter().take(4096) {
                                st.observe(&e);
                            }
                        }
                        if last_settle.elapsed() >= Duration::from_secs(1) {
                            last_settle = Instant::now();
                            st.settle(clock.now());
                            st.set_dropped(sub.dropped());
                        }
                    }
                })?
        };
        let server = {
            let (state, stop) = (state, stop.clone());
            std::thread::Builder::new()
                .name("metrics-http".into())
                .spawn(move || {
                    for conn in listener.incoming() {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        if let Ok(c) = conn {
                            let _ = serve(c, &state);
                        }
                    }
                })?
        };
        Ok(Exporter {
            addr,
            stop,
            threads: vec![collector, server],
        })
    }

    /// Where it listens (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving and joins the threads.
    pub fn stop(&mut self) {
        if self.stop.swap(true, Ordering::Relaxed) {
            return;
        }
        // Wake the blocking accept.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(if wake.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One request: `GET /metrics` gets the exposition; anything else a short error.
fn serve(mut c: TcpStream, state: &Mutex<MetricsState>) -> std::io::Result<()> {
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    c.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 8192 {
        let n = c.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&req);
    let mut parts = line.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, ctype, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            state.lock().render(),
        ),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "provetop: metrics at /metrics\n".to_string(),
        ),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain", "not found\n".to_string()),
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
    c.write_all(head.as_bytes())?;
    if method != "HEAD" {
        c.write_all(body.as_bytes())?;
    }
    c.flush()
}
