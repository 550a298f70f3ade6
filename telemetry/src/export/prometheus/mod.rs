//! The Prometheus exporter: a bus subscriber that keeps counters, histograms and the latest
//! samples, and a small HTTP server that renders them in the text exposition format (0.0.4)
//! at `/metrics`. Off unless `--metrics-addr` is given; a bare port listens on loopback.
//!
//! Idle-gap and busy counters are settled: a stretch of time is attributed once every span
//! that can cover it has arrived. Spans are published when a partition's device region ends,
//! so the exporter stays behind any region a worker has started and not reported, behind a
//! job with nothing synthesised yet, and at least twice the longest span seen (2 s minimum)
//! behind now. Counters never go back; `provetop_device_busy_ratio` is over the last 30 s of
//! settled time.
//!
//! `families` maps sample metrics to the exposition's families and labels, `state` folds the
//! events into counters and settles the gap counters, `render` writes the text format,
//! `server` runs the collector and the HTTP threads, and `http` answers each connection on its
//! own thread under a deadline.

mod families;
mod http;
mod render;
mod server;
mod state;
#[cfg(test)]
mod tests;

pub use http::{Pages, METRICS_TYPE};
pub use server::{Collector, Exporter, PageServer};
pub use state::MetricsState;

use std::net::{SocketAddr, ToSocketAddrs};

/// The listening address of `--metrics-addr`: `HOST:PORT`, `[V6]:PORT`, or a bare `PORT`
/// (loopback).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let t = s.trim();
    let bad = || format!("`{s}`: expected PORT or HOST:PORT, e.g. 127.0.0.1:9464");
    let port_only = t.strip_prefix(':').unwrap_or(t);
    if !port_only.is_empty() && port_only.bytes().all(|b| b.is_ascii_digit()) {
        let port: u16 = port_only.parse().map_err(|_| bad())?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    // A host name (`localhost:9464`): it must have a port and resolve.
    match t.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => t
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// A warning for a listener other hosts can reach: the endpoint has no authentication, and
/// its labels name the machine's devices and configuration. None on loopback.
pub fn exposure_warning(addr: SocketAddr) -> Option<String> {
    let ip = addr.ip();
    if ip.is_loopback() {
        return None;
    }
    let reach = if ip.is_unspecified() {
        "every network interface".to_string()
    } else {
        format!("the network of {ip}")
    };
    Some(format!(
        "warning: the metrics endpoint {addr} is reachable on {reach}, without authentication; \
         give 127.0.0.1:{} (or a bare port) to keep it on this machine",
        addr.port()
    ))
}
