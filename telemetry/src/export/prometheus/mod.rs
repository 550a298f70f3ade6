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

use crossbeam_channel::RecvTimeoutError;
use parking_lot::Mutex;
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::gaps::{GapAnalyzer, GapCause};
use super::{metrics, Bus, Clock, Event, Nanos, Stage};
use crate::config::EngineConfig;

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

const STAGE_BUCKETS: [f64; 18] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0,
    100.0, 250.0, 500.0,
];

#[derive(Clone, Debug, Default)]
struct Histogram {
    buckets: [u64; STAGE_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, v: f64) {
        for (i, le) in STAGE_BUCKETS.iter().enumerate() {
            if v <= *le {
                self.buckets[i] += 1;
            }
        }
        self.count += 1;
        self.sum += v;
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
}

/// Families fed by samples: name, type, help.
const FAMILIES: &[(&str, Kind, &str)] = &[
    ("provetop_vram_used_bytes", Kind::Gauge, "VRAM the engine's allocator holds, by purpose."),
    ("provetop_pcie_bytes_total", Kind::Counter, "Bytes the engine copied over PCIe, by direction."),
    ("provetop_pcie_throughput_bytes_per_second", Kind::Gauge, "PCIe throughput by direction: source engine (copy accounting), nvml, nvml_gpm."),
    ("provetop_pcie_ceiling_bytes_per_second", Kind::Gauge, "The PCIe link's ceiling per direction for its generation and width."),
    ("provetop_pcie_link_generation", Kind::Gauge, "PCIe generation of the link in use."),
    ("provetop_pcie_link_width_lanes", Kind::Gauge, "PCIe lanes of the link in use."),
    ("provetop_gpu_memory_used_bytes", Kind::Gauge, "Device memory in use by all processes, as NVML reports it."),
    ("provetop_gpu_memory_total_bytes", Kind::Gauge, "Device memory installed, as NVML reports it."),
    ("provetop_gpu_utilization_ratio", Kind::Gauge, "Fraction of time a kernel ran, as NVML reports it."),
    ("provetop_gpu_memory_controller_utilization_ratio", Kind::Gauge, "Fraction of time device memory was read or written, as NVML reports it."),
    ("provetop_gpu_dram_bandwidth_utilization_ratio", Kind::Gauge, "DRAM bandwidth utilisation (GPM)."),
    ("provetop_gpu_sm_utilization_ratio", Kind::Gauge, "SM utilisation (GPM)."),
    ("provetop_gpu_sm_occupancy_ratio", Kind::Gauge, "SM occupancy (GPM)."),
    ("provetop_gpu_clock_hertz", Kind::Gauge, "GPU clocks: sm and memory."),
    ("provetop_gpu_power_watts", Kind::Gauge, "GPU power draw."),
    ("provetop_gpu_temperature_celsius", Kind::Gauge, "GPU temperature."),
    ("provetop_host_memory_bandwidth_bytes_per_second", Kind::Gauge, "Host DDR bandwidth: from counters (intel_imc, amd_umc, resctrl_mbm) or what the probe achieves (probe); engine is the traffic the engine accounts for."),
    ("provetop_host_memory_engine_bytes_total", Kind::Counter, "Host memory traffic the engine accounts for."),
    ("provetop_host_memory_pressure_ratio", Kind::Gauge, "Host DDR pressure from the probe: 0 streams as fast as idle, 1 starved."),
    ("provetop_host_memory_probe_idle_bytes_per_second", Kind::Gauge, "The probe's idle calibration."),
    ("provetop_host_memory_probe_achieved_bytes_per_second", Kind::Gauge, "What the probe's last burst achieved."),
    ("provetop_host_memory_probe_duty_ratio", Kind::Gauge, "The probe's own cost: fraction of one core."),
    ("provetop_host_memory_probe_read_bytes_per_second", Kind::Gauge, "The probe's own cost: bytes it reads per second."),
    ("provetop_cpu_pool_busy_ratio", Kind::Gauge, "Busy fraction of a CPU pool (its threads' CPU time over its size)."),
    ("provetop_cpu_core_busy_ratio", Kind::Gauge, "Busy fraction of one core."),
    ("provetop_host_memory_used_bytes", Kind::Gauge, "Host RAM in use."),
    ("provetop_host_memory_total_bytes", Kind::Gauge, "Host RAM installed."),
    ("provetop_process_resident_memory_bytes", Kind::Gauge, "Resident memory of the provetop process."),
    ("provetop_pipeline_partitions", Kind::Gauge, "Partitions by pipeline state: pending, synthesizing, queued, proving."),
];

fn family(name: &str) -> usize {
    FAMILIES
        .iter()
        .position(|f| f.0 == name)
        .expect("a family in the table")
}

type Labels = Vec<(&'static str, String)>;

/// Which family a sample feeds, with its labels beyond `device`.
fn classify(metric: &str, ddr_source: &str) -> Option<(usize, Labels)> {
    use metrics as m;
    let l = |k: &'static str, v: &str| vec![(k, v.to_string())];
    let (name, labels) = match metric {
        m::VRAM_RESERVED => ("provetop_gpu_memory_used_bytes", vec![]),
        m::VRAM_TOTAL => ("provetop_gpu_memory_total_bytes", vec![]),
        m::PCIE_H2D_TOTAL => ("provetop_pcie_bytes_total", l("direction", "h2d")),
        m::PCIE_D2H_TOTAL => ("provetop_pcie_bytes_total", l("direction", "d2h")),
        m::PCIE_H2D
        | m::PCIE_D2H
        | m::NVML_PCIE_RX
        | m::NVML_PCIE_TX
        | m::NVML_GPM_PCIE_RX
        | m::NVML_GPM_PCIE_TX => {
            let direction = match metric {
                m::PCIE_H2D | m::NVML_PCIE_RX | m::NVML_GPM_PCIE_RX => "h2d",
                _ => "d2h",
            };
            let source = match metric {
                m::PCIE_H2D | m::PCIE_D2H => "engine",
                m::NVML_PCIE_RX | m::NVML_PCIE_TX => "nvml",
                _ => "nvml_gpm",
            };
            (
                "provetop_pcie_throughput_bytes_per_second",
                vec![
                    ("direction", direction.to_string()),
                    ("source", source.to_string()),
                ],
            )
        }
        m::PCIE_CEILING => ("provetop_pcie_ceiling_bytes_per_second", vec![]),
        m::PCIE_LINK_GEN => ("provetop_pcie_link_generation", vec![]),
        m::PCIE_LINK_WIDTH => ("provetop_pcie_link_width_lanes", vec![]),
        m::GPU_UTIL => ("provetop_gpu_utilization_ratio", vec![]),
        m::GPU_MEM_UTIL => ("provetop_gpu_memory_controller_utilization_ratio", vec![]),
        m::GPU_DRAM_UTIL => ("provetop_gpu_dram_bandwidth_utilization_ratio", vec![]),
        m::GPU_SM_UTIL => ("provetop_gpu_sm_utilization_ratio", vec![]),
        m::GPU_SM_OCCUPANCY => ("provetop_gpu_sm_occupancy_ratio", vec![]),
        m::GPU_SM_CLOCK => ("provetop_gpu_clock_hertz", l("clock", "sm")),
        m::GPU_MEM_CLOCK => ("provetop_gpu_clock_hertz", l("clock", "memory")),
        m::GPU_POWER => ("provetop_gpu_power_watts", vec![]),
        m::GPU_TEMP => ("provetop_gpu_temperature_celsius", vec![]),
        m::HOST_DDR => (
            "provetop_host_memory_bandwidth_bytes_per_second",
            l("source", ddr_source),
        ),
        m::HOST_ENGINE_BYTES => (
            "provetop_host_memory_bandwidth_bytes_per_second",
            l("source", "engine"),
        ),
        m::HOST_ENGINE_BYTES_TOTAL => ("provetop_host_memory_engine_bytes_total", vec![]),
        m::HOST_DDR_PRESSURE => ("provetop_host_memory_pressure_ratio", vec![]),
        m::HOST_DDR_IDLE => ("provetop_host_memory_probe_idle_bytes_per_second", vec![]),
        m::HOST_DDR_PROBE_ACHIEVED => (
            "provetop_host_memory_probe_achieved_bytes_per_second",
            vec![],
        ),
        m::HOST_DDR_PROBE_DUTY => ("provetop_host_memory_probe_duty_ratio", vec![]),
        m::HOST_DDR_PROBE_BYTES => ("provetop_host_memory_probe_read_bytes_per_second", vec![]),
        m::HOST_RAM_USED => ("provetop_host_memory_used_bytes", vec![]),
        m::HOST_RAM_TOTAL => ("provetop_host_memory_total_bytes", vec![]),
        m::PROCESS_RSS => ("provetop_process_resident_memory_bytes", vec![]),
        m::PIPELINE_PENDING => ("provetop_pipeline_partitions", l("state", "pending")),
        m::PIPELINE_SYNTHESIZING => ("provetop_pipeline_partitions", l("state", "synthesizing")),
        m::PIPELINE_QUEUED => ("provetop_pipeline_partitions", l("state", "queued")),
        m::PIPELINE_PROVING => ("provetop_pipeline_partitions", l("state", "proving")),
        _ => {
            if let Some(p) = metric.strip_prefix(m::VRAM_USED_PREFIX) {
                ("provetop_vram_used_bytes", l("purpose", p))
            } else if let Some(p) = metric.strip_prefix(m::CPU_POOL_PREFIX) {
                ("provetop_cpu_pool_busy_ratio", l("pool", p))
            } else if let Some(c) = metric.strip_prefix(m::CPU_CORE_PREFIX) {
                ("provetop_cpu_core_busy_ratio", l("core", c))
            } else {
                return None;
            }
        }
    };
    Some((family(name), labels))
}

#[derive(Clone, Debug, Default)]
struct DeviceTotals {
    busy: Nanos,
    idle: [Nanos; GapCause::KEYS.len()],
    /// Settled steps of the last 30 s: (busy, wall).
    recent: VecDeque<(Nanos, Nanos)>,
}

/// Everything the exporter knows, updated from the bus.
pub struct MetricsState {
    verified: u64,
    failed: u64,
    stages: BTreeMap<&'static str, Histogram>,
    samples: BTreeMap<(usize, Option<String>, Labels), f64>,
    ddr_source: String,
    config: BTreeMap<String, String>,
    gaps: GapAnalyzer,
    horizon: Nanos,
    devices: BTreeMap<String, DeviceTotals>,
    dropped: u64,
}

const BUSY_WINDOW: Nanos = 30_000_000_000;
const MIN_SETTLE_LAG: Nanos = 2_000_000_000;

fn config_labels(cfg: &EngineConfig) -> BTreeMap<String, String> {
    crate::config::KEYS
        .iter()
        .map(|k| {
            let v = cfg.get(k).unwrap_or_default();
            let v = if *k == "devices" && v.is_empty() {
                "all".to_string()
            } else {
                v
            };
            (k.to_string(), v)
        })
        .collect()
}

impl MetricsState {
    /// State for a session that starts at `start` with `config`.
    pub fn new(config: &EngineConfig, start: Nanos) -> Self {
        MetricsState {
            verified: 0,
            failed: 0,
            stages: BTreeMap::new(),
            samples: BTreeMap::new(),
            ddr_source: "probe".into(),
            config: config_labels(config),
            gaps: GapAnalyzer::new(),
            horizon: start,
            devices: BTreeMap::new(),
            dropped: 0,
        }
    }

    pub fn observe(&mut self, ev: &Event) {
        match ev {
            Event::Proof(p) => {
                self.gaps.observe(ev);
                if p.verified {
                    self.verified += 1;
                } else {
                    self.failed += 1;
                }
                for (stage, secs) in &p.stages {
                    self.stages.entry(stage.key()).or_default().observe(*secs);
                }
            }
            Event::Sample(s) => {
                if let Some(src) = s.metric.strip_prefix(metrics::HOST_DDR_SOURCE_PREFIX) {
                    if src != self.ddr_source {
                        self.ddr_source = src.to_string();
                    }
                    return;
                }
                if let Some((f, labels)) = classify(&s.metric, &self.ddr_source) {
                    self.samples.insert((f, s.device.clone(), labels), s.value);
                }
            }
            Event::Config(c) if c.applied => {
                let v = if c.key == "devices" && c.to.is_empty() {
                    "all".to_string()
                } else {
                    c.to.clone()
                };
                self.config.insert(c.key.clone(), v);
            }
            Event::Span(_) | Event::Job(_) => self.gaps.observe(ev),
            _ => {}
        }
    }

    /// Attributes the time up to `now` less the settling lag, once, and never past a
    /// region or a first synthesis whose spans are still to come.
    pub fn settle(&mut self, now: Nanos) {
        let lag = MIN_SETTLE_LAG.max(2 * self.gaps.longest_span());
        let mut to = now.saturating_sub(lag);
        if let Some(t) = self.gaps.incomplete_since() {
            to = to.min(t);
        }
        self.settle_until(to);
    }

    /// Attributes [horizon, to] and moves the horizon there.
    pub fn settle_until(&mut self, to: Nanos) {
        if to <= self.horizon {
            return;
        }
        for d in self.gaps.attribute(self.horizon, to) {
            let t = self.devices.entry(d.device.clone()).or_default();
            t.busy += d.busy;
            for (i, k) in GapCause::KEYS.iter().enumerate() {
                t.idle[i] += d.by_cause[k];
            }
            t.recent.push_back((d.busy, to - self.horizon));
            while t.recent.len() > 1
                && t.recent.iter().skip(1).map(|r| r.1).sum::<Nanos>() >= BUSY_WINDOW
            {
                t.recent.pop_front();
            }
        }
        self.gaps.prune(to);
        self.horizon = to;
    }

    pub fn set_dropped(&mut self, n: u64) {
        self.dropped = n;
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut o = String::with_capacity(16 << 10);
        let head = |o: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(o, "# HELP {name} {help}");
            let _ = writeln!(o, "# TYPE {name} {kind}");
        };

        head(
            &mut o,
            "provetop_proofs_total",
            "counter",
            "Partition proofs finished, by result.",
        );
        let _ = writeln!(
            o,
            "provetop_proofs_total{{result=\"verified\"}} {}",
            self.verified
        );
        let _ = writeln!(
            o,
            "provetop_proofs_total{{result=\"failed\"}} {}",
            self.failed
        );

        head(
            &mut o,
            "provetop_partition_stage_seconds",
            "histogram",
            "Time a partition spent in each stage.",
        );
        for stage in Stage::PROOF_STAGES {
            let Some(h) = self.stages.get(stage.key()) else {
                continue;
            };
            let s = stage.key();
            for (i, le) in STAGE_BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "provetop_partition_stage_seconds_bucket{{stage=\"{s}\",le=\"{}\"}} {}",
                    num(*le),
                    h.buckets[i]
                );
            }
            let _ = writeln!(
                o,
                "provetop_partition_stage_seconds_bucket{{stage=\"{s}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                o,
                "provetop_partition_stage_seconds_sum{{stage=\"{s}\"}} {}",
                num(h.sum)
            );
            let _ = writeln!(
                o,
                "provetop_partition_stage_seconds_count{{stage=\"{s}\"}} {}",
                h.count
            );
        }

        head(
            &mut o,
            "provetop_device_busy_ratio",
            "gauge",
            "Fraction of the last 30 s of settled time with a compute span on the device.",
        );
        for (d, t) in &self.devices {
            let (busy, wall) = t.recent.iter().fold((0, 0), |(b, w), r| (b + r.0, w + r.1));
            let ratio = if wall > 0 {
                busy as f64 / wall as f64
            } else {
                0.0
            };
            let _ = writeln!(
                o,
                "provetop_device_busy_ratio{{device=\"{}\"}} {}",
                esc(d),
                num(ratio)
            );
        }
        head(
            &mut o,
            "provetop_device_busy_seconds_total",
            "counter",
            "Settled time with a compute span on the device.",
        );
        for (d, t) in &self.devices {
            let _ = writeln!(
                o,
                "provetop_device_busy_seconds_total{{device=\"{}\"}} {}",
                esc(d),
                num(t.busy as f64 / 1e9)
            );
        }
        head(
            &mut o,
            "provetop_gpu_idle_seconds_total",
            "counter",
            "Settled time with no compute span on the device, by the cause the spans show.",
        );
        for (d, t) in &self.devices {
            for (i, k) in GapCause::KEYS.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "provetop_gpu_idle_seconds_total{{device=\"{}\",cause=\"{k}\"}} {}",
                    esc(d),
                    num(t.idle[i] as f64 / 1e9)
                );
            }
        }

        for (i, (name, kind, help)) in FAMILIES.iter().enumerate() {
            head(
                &mut o,
                name,
                match kind {
                    Kind::Counter => "counter",
                    Kind::Gauge => "gauge",
                },
                help,
            );
            for ((f, device, labels), v) in self.samples.range((i, None, vec![])..) {
                if *f != i {
                    break;
                }
                let mut ls: Vec<String> = vec![];
                if let Some(d) = device {
                    ls.push(format!("device=\"{}\"", esc(d)));
                }
                ls.extend(labels.iter().map(|(k, v)| format!("{k}=\"{}\"", esc(v))));
                let _ = if ls.is_empty() {
                    writeln!(o, "{name} {}", num(*v))
                } else {
                    writeln!(o, "{name}{{{}}} {}", ls.join(","), num(*v))
                };
            }
        }

        head(
            &mut o,
            "provetop_telemetry_dropped_events_total",
            "counter",
            "Events the exporter missed because it fell behind the bus.",
        );
        let _ = writeln!(
            o,
            "provetop_telemetry_dropped_events_total {}",
            self.dropped
        );

        head(
            &mut o,
            "provetop_config_info",
            "gauge",
            "The engine configuration now: every [engine] field as a label.",
        );
        let labels: Vec<String> = self
            .config
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", esc(v)))
            .collect();
        let _ = writeln!(o, "provetop_config_info{{{}}} 1", labels.join(","));
        o
    }
}

/// A float as the exposition format writes it.
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == f64::INFINITY {
        "+Inf".into()
    } else if v == f64::NEG_INFINITY {
        "-Inf".into()
    } else {
        format!("{v}")
    }
}

/// A label value escaped: backslash, double quote and newline.
fn esc(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{JobEvent, JobState, Lane, ProofRecord, Sample, Span};

    #[test]
    fn addresses() {
        assert_eq!(
            parse_addr("9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_addr(":9464").unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert_eq!(
            parse_addr("0.0.0.0:9464").unwrap(),
            "0.0.0.0:9464".parse().unwrap()
        );
        assert_eq!(parse_addr("[::1]:80").unwrap(), "[::1]:80".parse().unwrap());
        assert!(parse_addr("localhost:9464").unwrap().ip().is_loopback());
        for bad in [
            "",
            "abc",
            "127.0.0.1",
            "127.0.0.1:99999",
            "70000",
            "host:",
            ":x",
        ] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
    }

    fn sample(metric: &str, device: Option<&str>, value: f64) -> Event {
        Event::Sample(Sample {
            t: 0,
            metric: metric.into(),
            device: device.map(Into::into),
            value,
        })
    }

    #[test]
    fn state_renders_counters_histograms_samples_and_config() {
        let mut st = MetricsState::new(&EngineConfig::default(), 0);
        let mut stages = BTreeMap::new();
        stages.insert(Stage::MsmH, 0.3);
        stages.insert(Stage::Synthesis, 2.0);
        for verified in [true, true, false] {
            st.observe(&Event::Proof(ProofRecord {
                t: 0,
                job: 0,
                partition: 0,
                device: "cpu0".into(),
                verified,
                error: None,
                stages: stages.clone(),
            }));
        }
        st.observe(&sample("vram.used.srs", Some("gpu0"), 1024.0));
        st.observe(&sample("pcie.h2d.total", Some("gpu0"), 77.0));
        st.observe(&sample("host.ddr.source.probe", None, 1.0));
        st.observe(&sample("host.ddr", None, 9e9));
        st.observe(&sample("host.engine_bytes", None, 0.0));
        st.observe(&sample("cpu.pool.synthesis", None, 0.5));
        st.observe(&sample("no.such.metric", None, 0.5));
        st.observe(&Event::Span(Span {
            lane: Lane::Compute {
                device: "cpu0".into(),
            },
            stage: Stage::MsmH,
            start: 1_000_000_000,
            end: 3_000_000_000,
            job: Some(0),
            partition: Some(0),
            bytes: 0,
        }));
        st.observe(&Event::Job(JobEvent {
            t: 0,
            job: 0,
            partition: None,
            state: JobState::Submitted,
            detail: None,
        }));
        st.settle_until(4_000_000_000);
        let text = st.render();
        for line in [
            "provetop_proofs_total{result=\"verified\"} 2",
            "provetop_proofs_total{result=\"failed\"} 1",
            "provetop_partition_stage_seconds_bucket{stage=\"msm_h\",le=\"0.25\"} 0",
            "provetop_partition_stage_seconds_bucket{stage=\"msm_h\",le=\"0.5\"} 3",
            "provetop_partition_stage_seconds_bucket{stage=\"msm_h\",le=\"+Inf\"} 3",
            "provetop_partition_stage_seconds_count{stage=\"synthesis\"} 3",
            "provetop_vram_used_bytes{device=\"gpu0\",purpose=\"srs\"} 1024",
            "provetop_pcie_bytes_total{device=\"gpu0\",direction=\"h2d\"} 77",
            "provetop_host_memory_bandwidth_bytes_per_second{source=\"probe\"} 9000000000",
            "provetop_host_memory_bandwidth_bytes_per_second{source=\"engine\"} 0",
            "provetop_cpu_pool_busy_ratio{pool=\"synthesis\"} 0.5",
            "provetop_device_busy_ratio{device=\"cpu0\"} 0.5",
            "provetop_device_busy_seconds_total{device=\"cpu0\"} 2",
            "provetop_gpu_idle_seconds_total{device=\"cpu0\",cause=\"no_work\"} 2",
            "# TYPE provetop_pcie_bytes_total counter",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing `{line}` in\n{text}"
            );
        }
        let info = text
            .lines()
            .find(|l| l.starts_with("provetop_config_info{"))
            .unwrap();
        for k in crate::config::KEYS {
            assert!(info.contains(&format!("{k}=\"")), "{k} in {info}");
        }
        assert!(info.contains("lock=\"single\"") && info.contains("devices=\"all\""));
    }

    #[test]
    fn settling_never_counts_twice_and_never_goes_back() {
        let mut st = MetricsState::new(&EngineConfig::default(), 0);
        st.observe(&Event::Span(Span {
            lane: Lane::Compute {
                device: "gpu0".into(),
            },
            stage: Stage::NttH,
            start: 0,
            end: 1_000_000_000,
            job: None,
            partition: None,
            bytes: 0,
        }));
        st.settle(4_000_000_000); // lag 2 s: settles [0, 2 s]
        st.settle(4_000_000_000);
        st.settle(3_000_000_000);
        let t = &st.devices["gpu0"];
        assert_eq!(t.busy, 1_000_000_000);
        assert_eq!(t.idle.iter().sum::<Nanos>(), 1_000_000_000);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(esc("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(num(f64::INFINITY), "+Inf");
        assert_eq!(num(0.25), "0.25");
    }
}
