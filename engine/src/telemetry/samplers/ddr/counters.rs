//! Host DDR bandwidth from hardware counters: Intel uncore IMC and AMD UMC events found in
//! sysfs and read through `perf_event_open`, or resctrl's memory bandwidth monitoring.

use super::*;

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
pub(super) fn parse_format(spec: &str) -> Option<(usize, Vec<(u32, u32)>)> {
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
pub(super) fn encode(value: u64, ranges: &[(u32, u32)]) -> u64 {
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

pub(super) fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The config words for event terms such as `event=0x04,umask=0x03` under a PMU's `format/`.
pub(super) fn config_for(pmu_dir: &Path, terms: &[(&str, u64)]) -> Option<[u64; 3]> {
    let mut config = [0u64; 3];
    for (name, value) in terms {
        let spec = fs::read_to_string(pmu_dir.join("format").join(name)).ok()?;
        let (word, ranges) = parse_format(&spec)?;
        config[word] |= encode(*value, &ranges);
    }
    Some(config)
}

/// Terms of a sysfs event description: `event=0x04,umask=0x03`; a bare term means 1.
pub(super) fn parse_terms(s: &str) -> Option<Vec<(String, u64)>> {
    s.trim()
        .split(',')
        .filter(|t| !t.is_empty())
        .map(|t| match t.split_once('=') {
            Some((k, v)) => parse_num(v).map(|v| (k.trim().to_string(), v)),
            None => Some((t.trim().to_string(), 1)),
        })
        .collect()
}

pub(super) fn parse_cpus(s: &str) -> Vec<i32> {
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
pub(super) fn bytes_per_count(events_dir: &Path, name: &str) -> f64 {
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
pub(super) struct PerfEventAttr {
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

pub(super) struct PerfCounter {
    fd: std::fs::File,
    bytes_per_count: f64,
}

impl PerfCounter {
    #[cfg(target_os = "linux")]
    pub(super) fn open(ev: &PmuEvent, cpu: i32) -> std::io::Result<PerfCounter> {
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
    pub(super) fn open(_: &PmuEvent, _: i32) -> std::io::Result<PerfCounter> {
        Err(std::io::Error::other("perf events need Linux"))
    }

    pub(super) fn bytes(&mut self) -> Option<f64> {
        use std::io::Read;
        let mut b = [0u8; 8];
        self.fd.read_exact(&mut b).ok()?;
        Some(u64::from_ne_bytes(b) as f64 * self.bytes_per_count)
    }
}

/// A source of total DDR bytes moved so far.
pub(super) enum Counters {
    Perf(Vec<PerfCounter>),
    Resctrl(Vec<PathBuf>),
}

impl Counters {
    pub(super) fn total_bytes(&mut self) -> Option<f64> {
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
pub(super) fn resctrl_files(root: &Path) -> Vec<PathBuf> {
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
pub(super) fn open_counters() -> Option<(&'static str, Counters)> {
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
