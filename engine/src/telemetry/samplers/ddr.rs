//! Host DDR bandwidth. Two kinds of source, and the engine's own byte accounting beside them:
//!
//! - Hardware counters, where the machine exposes them: Intel uncore IMC (`uncore_imc_N`,
//!   its `cas_count_read`/`cas_count_write` events), AMD UMC (`amd_umc_N`, CAS commands for
//!   reads and writes), both through `perf_event_open` on the CPUs of the PMU's cpumask, or
//!   resctrl memory bandwidth monitoring (`mbm_total_bytes`). The source is named in
//!   `host.ddr.source.<name>`. Opening uncore events needs `perf_event_paranoid` ≤ 0 or
//!   CAP_PERFMON; without either, or in a VM (no uncore PMU), the counters are absent.
//! - A software probe, always: one thread streams a small buffer (8 MiB) once a period and
//!   measures the bandwidth it achieves, in its own CPU time (so being descheduled on a busy
//!   host does not read as memory pressure). Between bursts the buffer is flushed from the
//!   caches (x86-64), so every burst reads DRAM whatever the LLC size; elsewhere the probe
//!   walks a buffer four times the LLC. Its idle calibration (bursts at start, raised later
//!   when the median of recent bursts beats it) against the bandwidth it achieves now gives
//!   `host.ddr.pressure` (0 idle … 1 starved). Its own cost is published: the fraction of
//!   one core it uses (`host.ddr.probe.duty`) and the bytes per second it reads
//!   (`host.ddr.probe.bytes`).
//!
//! `host.ddr` is the counters' total bandwidth where they exist, else what the probe
//! achieves. `host.engine_bytes` is the host memory traffic the engine accounts for itself.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Ctx;
use crate::telemetry::accounting::Accounting;
use crate::telemetry::metrics;

const PERIOD: Duration = Duration::from_secs(1);
const BURST_BYTES: usize = 8 << 20;
const CALIBRATION_BURSTS: usize = 5;

// ---------------------------------------------------------------------------------------
// Hardware counters

/// A perf event described by sysfs: PMU type, config words, bytes per count.
#[derive(Clone, Debug, PartialEq)]
pub struct PmuEvent {
    /// The PMU's sysfs name (`uncore_imc_0`, `amd_umc_0`).
    pub pmu: String,
    /// `perf_event_attr.type`, from the PMU's `type` file.
    pub pmu_type: u32,
    /// `config`, `config1` and `config2` of `perf_event_attr`, from the event's terms and the PMU's
    /// `format/`.
    pub config: [u64; 3],
    /// Bytes of DRAM traffic one count stands for (the event's scale and unit; 64 for a CAS
    /// command).
    pub bytes_per_count: f64,
    /// The CPUs to open the event on (the PMU's cpumask; CPU 0 when it has none).
    pub cpus: Vec<i32>,
}

/// Bit ranges of one format field (`config:0-7`, `config1:0-3,32-35`): which config word and
/// which bits.
fn parse_format(spec: &str) -> Option<(usize, Vec<(u32, u32)>)> {
    let (word, bits) = spec.trim().split_once(':')?;
    let word = match word {
        "config" => 0,
        "config1" => 1,
        "config2" => 2,
        _ => return None,
    };
    let mut ranges = vec![];
    for r in bits.split(',') {
        let (lo, hi) = match r.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let b = r.trim().parse().ok()?;
                (b, b)
            }
        };
        if lo > hi || hi > 63 {
            return None;
        }
        ranges.push((lo, hi));
    }
    Some((word, ranges))
}

/// Places `value`'s low bits into `ranges`, lowest range first.
fn encode(value: u64, ranges: &[(u32, u32)]) -> u64 {
    let mut out = 0u64;
    let mut v = value;
    for &(lo, hi) in ranges {
        let width = hi - lo + 1;
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        out |= (v & mask) << lo;
        v = if width == 64 { 0 } else { v >> width };
    }
    out
}

fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The config words for event terms such as `event=0x04,umask=0x03` under a PMU's `format/`.
fn config_for(pmu_dir: &Path, terms: &[(&str, u64)]) -> Option<[u64; 3]> {
    let mut config = [0u64; 3];
    for (name, value) in terms {
        let spec = fs::read_to_string(pmu_dir.join("format").join(name)).ok()?;
        let (word, ranges) = parse_format(&spec)?;
        config[word] |= encode(*value, &ranges);
    }
    Some(config)
}

/// Terms of a sysfs event description: `event=0x04,umask=0x03`; a bare term means 1.
fn parse_terms(s: &str) -> Option<Vec<(String, u64)>> {
    s.trim()
        .split(',')
        .filter(|t| !t.is_empty())
        .map(|t| match t.split_once('=') {
            Some((k, v)) => parse_num(v).map(|v| (k.trim().to_string(), v)),
            None => Some((t.trim().to_string(), 1)),
        })
        .collect()
}

fn parse_cpus(s: &str) -> Vec<i32> {
    let mut out = vec![];
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(c) = part.parse() {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// Bytes per count of a named sysfs event, from its `.scale` and `.unit` files (Intel IMC:
/// 6.103515625e-5 MiB, i.e. one 64-byte line); 64 when they are missing.
fn bytes_per_count(events_dir: &Path, name: &str) -> f64 {
    let scale = fs::read_to_string(events_dir.join(format!("{name}.scale")))
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok());
    let unit = fs::read_to_string(events_dir.join(format!("{name}.unit")))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let mult = match unit.as_str() {
        "MiB" => 1048576.0,
        "KiB" => 1024.0,
        "GiB" => 1073741824.0,
        "MB" => 1e6,
        "Bytes" | "B" => 1.0,
        _ => 1.0,
    };
    match scale {
        Some(s) if unit.is_empty() => s * 64.0,
        Some(s) => s * mult,
        None => 64.0,
    }
}

/// The DDR read and write events the PMUs under `root` (`/sys/bus/event_source/devices`)
/// offer, with the name of their source: `intel_imc` or `amd_umc`.
pub fn find_pmu_events(root: &Path) -> Option<(&'static str, Vec<PmuEvent>)> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    let name_of = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string()
    };
    let numbered = |name: &str, prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let pmu_base = |dir: &Path| -> Option<(u32, Vec<i32>)> {
        let ty = fs::read_to_string(dir.join("type"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let cpus = fs::read_to_string(dir.join("cpumask"))
            .map(|s| parse_cpus(&s))
            .unwrap_or_default();
        Some((ty, if cpus.is_empty() { vec![0] } else { cpus }))
    };
    // Intel: named events.
    let mut intel = vec![];
    for dir in dirs.iter().filter(|d| numbered(&name_of(d), "uncore_imc_")) {
        let Some((ty, cpus)) = pmu_base(dir) else {
            continue;
        };
        let events = dir.join("events");
        for name in ["cas_count_read", "cas_count_write"] {
            let Some(terms) = fs::read_to_string(events.join(name))
                .ok()
                .and_then(|s| parse_terms(&s))
            else {
                continue;
            };
            let refs: Vec<(&str, u64)> = terms.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            if let Some(config) = config_for(dir, &refs) {
                intel.push(PmuEvent {
                    pmu: name_of(dir),
                    pmu_type: ty,
                    config,
                    bytes_per_count: bytes_per_count(&events, name),
                    cpus: cpus.clone(),
                });
            }
        }
    }
    if !intel.is_empty() {
        return Some(("intel_imc", intel));
    }
    // AMD: CAS commands (event 0x0a) for reads (rdwrmask 1) and writes (rdwrmask 2), one
    // 64-byte line each.
    let mut amd = vec![];
    for dir in dirs.iter().filter(|d| numbered(&name_of(d), "amd_umc_")) {
        let Some((ty, cpus)) = pmu_base(dir) else {
            continue;
        };
        for mask in [1, 2] {
            if let Some(config) = config_for(dir, &[("event", 0x0a), ("rdwrmask", mask)]) {
                amd.push(PmuEvent {
                    pmu: name_of(dir),
                    pmu_type: ty,
                    config,
                    bytes_per_count: 64.0,
                    cpus: cpus.clone(),
                });
            }
        }
    }
    (!amd.is_empty()).then_some(("amd_umc", amd))
}

/// `perf_event_attr` up to `config2` (PERF_ATTR_SIZE_VER1).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
}

struct PerfCounter {
    fd: std::fs::File,
    bytes_per_count: f64,
}

impl PerfCounter {
    #[cfg(target_os = "linux")]
    fn open(ev: &PmuEvent, cpu: i32) -> std::io::Result<PerfCounter> {
        use std::os::fd::FromRawFd;
        let attr = PerfEventAttr {
            type_: ev.pmu_type,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config: ev.config[0],
            config1: ev.config[1],
            config2: ev.config[2],
            ..Default::default()
        };
        const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
        // SAFETY: `attr` is a valid, fully initialised perf_event_attr of the size it
        // declares; the kernel only reads it. pid -1 with a cpu counts system-wide on it.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                -1 as libc::c_int,
                cpu as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let fd = unsafe { std::fs::File::from_raw_fd(fd as libc::c_int) };
        Ok(PerfCounter {
            fd,
            bytes_per_count: ev.bytes_per_count,
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn open(_: &PmuEvent, _: i32) -> std::io::Result<PerfCounter> {
        Err(std::io::Error::other("perf events need Linux"))
    }

    fn bytes(&mut self) -> Option<f64> {
        use std::io::Read;
        let mut b = [0u8; 8];
        self.fd.read_exact(&mut b).ok()?;
        Some(u64::from_ne_bytes(b) as f64 * self.bytes_per_count)
    }
}

/// A source of total DDR bytes moved so far.
enum Counters {
    Perf(Vec<PerfCounter>),
    Resctrl(Vec<PathBuf>),
}

impl Counters {
    fn total_bytes(&mut self) -> Option<f64> {
        match self {
            Counters::Perf(cs) => cs.iter_mut().map(|c| c.bytes()).sum(),
            Counters::Resctrl(files) => files
                .iter()
                .map(|f| {
                    fs::read_to_string(f)
                        .ok()
                        .and_then(|s| s.trim().parse::<f64>().ok())
                })
                .sum(),
        }
    }
}

/// resctrl's MBM counters of the default group, one per L3 domain.
fn resctrl_files(root: &Path) -> Vec<PathBuf> {
    let Ok(dir) = fs::read_dir(root.join("mon_data")) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = dir
        .flatten()
        .map(|e| e.path().join("mbm_total_bytes"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Opens the first hardware source that works, with its name.
fn open_counters() -> Option<(&'static str, Counters)> {
    if let Some((name, events)) = find_pmu_events(Path::new("/sys/bus/event_source/devices")) {
        let mut opened = vec![];
        let mut error = None;
        for ev in &events {
            for &cpu in &ev.cpus {
                match PerfCounter::open(ev, cpu) {
                    Ok(c) => opened.push(c),
                    Err(e) => error = Some(format!("{}: {e}", ev.pmu)),
                }
            }
        }
        match error {
            None if !opened.is_empty() => return Some((name, Counters::Perf(opened))),
            e => tracing::info!(
                "DDR counters ({name}) found but not readable ({}); using the probe",
                e.unwrap_or_default()
            ),
        }
    }
    let files = resctrl_files(Path::new("/sys/fs/resctrl"));
    if !files.is_empty() {
        let mut c = Counters::Resctrl(files);
        if c.total_bytes().is_some() {
            return Some(("resctrl_mbm", c));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// The software probe

/// CPU time of the calling thread, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sums `words` with independent accumulators, so the loop is bound by memory, not by the
/// latency of one add chain.
#[inline(never)]
fn stream(words: &[u64]) -> u64 {
    let mut acc = [0u64; 8];
    let mut chunks = words.chunks_exact(8);
    for c in &mut chunks {
        for i in 0..8 {
            acc[i] = acc[i].wrapping_add(c[i]);
        }
    }
    let tail: u64 = chunks.remainder().iter().fold(0, |a, w| a.wrapping_add(*w));
    acc.iter().fold(tail, |a, w| a.wrapping_add(*w))
}

/// What one burst did.
#[derive(Clone, Copy, Debug)]
pub struct Burst {
    /// Bytes read.
    pub bytes: u64,
    /// CPU time of the streaming read.
    pub read_ns: u64,
    /// CPU time of the whole burst, cache flush included.
    pub cost_ns: u64,
}

impl Burst {
    /// Bytes read per second of the read's CPU time.
    pub fn bytes_per_second(&self) -> f64 {
        self.bytes as f64 * 1e9 / self.read_ns.max(1) as f64
    }
}

/// The software bandwidth probe: a buffer streamed one burst at a time, flushed from the caches
/// between bursts on x86-64 (elsewhere four times the LLC, walked in turn).
pub struct Probe {
    buf: Vec<u64>,
    burst_words: usize,
    pos: usize,
    flush: bool,
    /// CLFLUSHOPT: flushes pipeline, where CLFLUSH serialises (about 10× the cost).
    flushopt: bool,
}

#[cfg(target_arch = "x86_64")]
fn has_clflushopt() -> bool {
    // cpuid is always available on x86-64; leaf 7 exists when leaf 0 says so.
    core::arch::x86_64::__cpuid(0).eax >= 7
        && core::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 23) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn has_clflushopt() -> bool {
    false
}

fn llc_bytes() -> usize {
    let read = |p: &str| fs::read_to_string(p).ok();
    (0..8)
        .filter_map(|i| read(&format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size")))
        .filter_map(|s| {
            let s = s.trim();
            let (n, mult) = match s.as_bytes().last()? {
                b'K' => (&s[..s.len() - 1], 1024),
                b'M' => (&s[..s.len() - 1], 1 << 20),
                _ => (s, 1),
            };
            n.parse::<usize>().ok().map(|n| n * mult)
        })
        .max()
        .unwrap_or(32 << 20)
}

impl Probe {
    /// A probe reading `burst_bytes` per burst.
    pub fn new(burst_bytes: usize) -> Probe {
        let flush = cfg!(target_arch = "x86_64");
        let buf_bytes = if flush {
            burst_bytes
        } else {
            (4 * llc_bytes()).clamp(64 << 20, 512 << 20)
        };
        // Written, so every page is backed by its own memory (untouched pages all map the
        // shared zero page, which would stay in cache).
        let buf: Vec<u64> = (0..buf_bytes / 8).map(|i| i as u64 ^ 0x9e37_79b9).collect();
        let p = Probe {
            burst_words: (burst_bytes / 8).min(buf.len()),
            buf,
            pos: 0,
            flush,
            flushopt: has_clflushopt(),
        };
        p.evict(0, p.buf.len());
        p
    }

    #[cfg(target_arch = "x86_64")]
    fn evict(&self, from: usize, to: usize) {
        if !self.flush {
            return;
        }
        let words = &self.buf[from..to];
        if self.flushopt {
            for line in words.chunks(8) {
                // SAFETY: the CPU has CLFLUSHOPT (checked with cpuid); the address is inside
                // `words`, which stays borrowed for the call. Flushing a line changes no data.
                unsafe {
                    core::arch::asm!("clflushopt [{0}]", in(reg) line.as_ptr(), options(nostack, preserves_flags));
                }
            }
        } else {
            for line in words.chunks(8) {
                // SAFETY: clflush is part of SSE2, baseline on x86-64; the address is inside
                // `words`, which stays borrowed for the call.
                unsafe { core::arch::x86_64::_mm_clflush(line.as_ptr() as *const u8) };
            }
        }
        // SAFETY: as above; orders the flushes before the next burst's loads.
        unsafe { core::arch::x86_64::_mm_mfence() };
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn evict(&self, _: usize, _: usize) {}

    /// Streams the next `burst_bytes` and measures it.
    pub fn burst(&mut self) -> Burst {
        if self.pos + self.burst_words > self.buf.len() {
            self.pos = 0;
        }
        let (from, to) = (self.pos, self.pos + self.burst_words);
        let c0 = thread_cpu_ns();
        std::hint::black_box(stream(&self.buf[from..to]));
        let c1 = thread_cpu_ns();
        self.evict(from, to);
        let c2 = thread_cpu_ns();
        self.pos = to;
        Burst {
            bytes: (self.burst_words * 8) as u64,
            read_ns: c1 - c0,
            cost_ns: c2 - c0,
        }
    }

    /// Idle bandwidth: the median of a few bursts in a row.
    pub fn calibrate(&mut self, bursts: usize) -> f64 {
        let mut v: Vec<f64> = (0..bursts.max(1))
            .map(|_| self.burst().bytes_per_second())
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }
}

/// Tracks the idle calibration and turns a burst into a pressure.
pub struct Pressure {
    idle: f64,
    recent: std::collections::VecDeque<f64>,
}

impl Pressure {
    /// Starts from an idle calibration of `idle` bytes per second.
    pub fn new(idle: f64) -> Self {
        Pressure {
            idle,
            recent: Default::default(),
        }
    }

    /// The idle bandwidth now, bytes per second (raised when recent bursts beat it).
    pub fn idle(&self) -> f64 {
        self.idle
    }

    /// 0 when the probe streams as fast as when idle, towards 1 as it is starved. The idle
    /// figure rises when the median of the last five bursts beats it (a busy calibration).
    pub fn observe(&mut self, achieved: f64) -> f64 {
        self.recent.push_back(achieved);
        if self.recent.len() > 5 {
            self.recent.pop_front();
        }
        if self.recent.len() == 5 {
            let mut v: Vec<f64> = self.recent.iter().copied().collect();
            v.sort_by(f64::total_cmp);
            self.idle = self.idle.max(v[2]);
        }
        if self.idle <= 0.0 {
            return 0.0;
        }
        (1.0 - achieved / self.idle).clamp(0.0, 1.0)
    }
}

pub(super) fn run(ctx: &Ctx, acc: Option<&'static Accounting>) {
    let mut counters = open_counters();
    let source = counters.as_ref().map_or("probe", |c| c.0);
    let source_metric = format!("{}{source}", metrics::HOST_DDR_SOURCE_PREFIX);
    tracing::info!("host DDR bandwidth from: {source}");
    let mut probe = Probe::new(BURST_BYTES);
    let mut pressure = Pressure::new(probe.calibrate(CALIBRATION_BURSTS));
    let mut last_counter = counters.as_mut().and_then(|c| c.1.total_bytes());
    let mut last_engine = acc.map_or(0, engine_bytes);
    let mut last_t = ctx.now();
    while ctx.sleep(PERIOD) {
        let b = probe.burst();
        let t = ctx.now();
        let dt = (t - last_t) as f64 / 1e9;
        let achieved = b.bytes_per_second();
        let p = pressure.observe(achieved);
        let counted = match (counters.as_mut(), last_counter) {
            (Some(c), Some(before)) => c.1.total_bytes().map(|now| {
                last_counter = Some(now);
                (now - before).max(0.0) / dt
            }),
            _ => None,
        };
        ctx.emit_at(t, &source_metric, None, 1.0);
        ctx.emit_at(t, metrics::HOST_DDR, None, counted.unwrap_or(achieved));
        ctx.emit_at(t, metrics::HOST_DDR_PRESSURE, None, p);
        ctx.emit_at(t, metrics::HOST_DDR_IDLE, None, pressure.idle());
        ctx.emit_at(t, metrics::HOST_DDR_PROBE_ACHIEVED, None, achieved);
        ctx.emit_at(
            t,
            metrics::HOST_DDR_PROBE_DUTY,
            None,
            b.cost_ns as f64 / 1e9 / dt,
        );
        ctx.emit_at(t, metrics::HOST_DDR_PROBE_BYTES, None, b.bytes as f64 / dt);
        let engine = acc.map_or(0, engine_bytes);
        ctx.emit_at(
            t,
            metrics::HOST_ENGINE_BYTES,
            None,
            engine.saturating_sub(last_engine) as f64 / dt,
        );
        ctx.emit_at(t, metrics::HOST_ENGINE_BYTES_TOTAL, None, engine as f64);
        (last_engine, last_t) = (engine, t);
    }
}

fn engine_bytes(acc: &Accounting) -> u64 {
    acc.snapshot().iter().map(|s| s.host_bytes()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_fields_encode_into_config_words() {
        assert_eq!(parse_format("config:0-7"), Some((0, vec![(0, 7)])));
        assert_eq!(
            parse_format("config1:0-3,32-35\n"),
            Some((1, vec![(0, 3), (32, 35)]))
        );
        assert_eq!(parse_format("config:8"), Some((0, vec![(8, 8)])));
        assert_eq!(parse_format("bogus:1"), None);
        assert_eq!(encode(0x04, &[(0, 7)]), 0x04);
        assert_eq!(encode(0x03, &[(8, 15)]), 0x0300);
        assert_eq!(encode(0xab, &[(0, 3), (32, 35)]), 0xb | (0xa << 32));
        assert_eq!(
            parse_terms("event=0x04,umask=0x03\n"),
            Some(vec![("event".into(), 4), ("umask".into(), 3)])
        );
        assert_eq!(parse_cpus("0,56\n"), vec![0, 56]);
        assert_eq!(parse_cpus("0-2"), vec![0, 1, 2]);
    }

    fn write(p: &Path, s: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, s).unwrap();
    }

    #[test]
    fn intel_imc_events_are_found_in_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let imc = dir.path().join("uncore_imc_0");
        write(&imc.join("type"), "14\n");
        write(&imc.join("cpumask"), "0,56\n");
        write(&imc.join("format/event"), "config:0-7\n");
        write(&imc.join("format/umask"), "config:8-15\n");
        write(
            &imc.join("events/cas_count_read"),
            "event=0x04,umask=0x03\n",
        );
        write(&imc.join("events/cas_count_read.scale"), "6.103515625e-5\n");
        write(&imc.join("events/cas_count_read.unit"), "MiB\n");
        write(
            &imc.join("events/cas_count_write"),
            "event=0x04,umask=0x0c\n",
        );
        write(&dir.path().join("software/type"), "1\n");
        let (name, events) = find_pmu_events(dir.path()).unwrap();
        assert_eq!(name, "intel_imc");
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].pmu_type, 14);
        assert_eq!(events[0].config[0], 0x0304);
        assert_eq!(events[1].config[0], 0x0c04);
        assert_eq!(events[0].bytes_per_count, 64.0);
        assert_eq!(events[0].cpus, vec![0, 56]);
    }

    #[test]
    fn amd_umc_events_are_built_from_the_format() {
        let dir = tempfile::tempdir().unwrap();
        let umc = dir.path().join("amd_umc_3");
        write(&umc.join("type"), "22\n");
        write(&umc.join("cpumask"), "0\n");
        write(&umc.join("format/event"), "config:0-7\n");
        write(&umc.join("format/rdwrmask"), "config:8-9\n");
        let (name, events) = find_pmu_events(dir.path()).unwrap();
        assert_eq!(name, "amd_umc");
        assert_eq!(events[0].config[0], 0x10a);
        assert_eq!(events[1].config[0], 0x20a);
    }

    #[test]
    fn no_pmu_means_no_counters() {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("software/type"), "1\n");
        write(&dir.path().join("uncore_imc_free_running_0/type"), "20\n");
        assert!(find_pmu_events(dir.path()).is_none());
        assert!(find_pmu_events(&dir.path().join("missing")).is_none());
    }

    #[test]
    fn the_probe_streams_and_pressure_follows() {
        let mut p = Probe::new(1 << 20);
        let b = p.burst();
        assert_eq!(b.bytes, 1 << 20);
        assert!(b.read_ns > 0 && b.cost_ns >= b.read_ns);
        let bw = b.bytes_per_second();
        assert!(bw > 1e8, "a streaming read of at least 100 MB/s, got {bw}");
        let mut pr = Pressure::new(10e9);
        assert_eq!(pr.observe(10e9), 0.0);
        assert!((pr.observe(5e9) - 0.5).abs() < 1e-9);
        assert_eq!(pr.observe(20e9), 0.0);
        // Five bursts faster than the calibration raise it to their median.
        for _ in 0..5 {
            pr.observe(12e9);
        }
        assert_eq!(pr.idle(), 12e9);
    }
}
