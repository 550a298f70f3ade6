//! Host DDR pressure from a software probe: a small buffer streamed once a period, flushed
//! from the caches between bursts, against its idle calibration.

use super::*;

/// CPU time of the calling thread, in nanoseconds.
pub(super) fn thread_cpu_ns() -> u64 {
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
pub(super) fn stream(words: &[u64]) -> u64 {
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
pub(super) fn has_clflushopt() -> bool {
    // cpuid is always available on x86-64; leaf 7 exists when leaf 0 says so.
    core::arch::x86_64::__cpuid(0).eax >= 7
        && core::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 23) != 0
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn has_clflushopt() -> bool {
    false
}

pub(super) fn llc_bytes() -> usize {
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
    pub(super) fn evict(&self, from: usize, to: usize) {
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
    pub(super) fn evict(&self, _: usize, _: usize) {}

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
