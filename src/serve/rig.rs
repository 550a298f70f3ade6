//! What the rig's devices are doing, folded from the telemetry bus on a thread of its own: each
//! device's busy fraction over the last seconds (its compute spans), its VRAM in use, and the
//! advisor's sentence on the last full minute. The fleet's summary and the alerts read it; the
//! thread ends when the rig is dropped.

use parking_lot::Mutex;
use provetop_engine::pipeline::EngineHandle;
use provetop_telemetry::report::ReportBuilder;
use provetop_telemetry::{metrics, Event, Lane, Nanos};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The busy fraction's window.
const BUSY_WINDOW: Nanos = 10_000_000_000;
/// The advisor judges one minute at a time: its memory is one minute of events.
const ADVICE_WINDOW: Nanos = 60_000_000_000;

/// One device as the fleet shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Device {
    pub name: String,
    pub busy: f64,
    pub vram_used: u64,
    pub vram_total: u64,
}

#[derive(Default)]
struct Fold {
    /// Per device: compute spans (start, end) ending within the busy window.
    spans: BTreeMap<String, VecDeque<(Nanos, Nanos)>>,
    vram_used: BTreeMap<String, u64>,
    vram_total: BTreeMap<String, u64>,
    /// The current minute's report and where it began.
    report: ReportBuilder,
    report_from: Option<Nanos>,
    bottleneck: String,
    now: Nanos,
}

/// The rig's devices, kept current from the bus.
pub struct Rig {
    fold: Mutex<Fold>,
    engine: EngineHandle,
}

impl Rig {
    /// A rig fed from `engine`'s bus from now on.
    pub fn start(engine: EngineHandle) -> std::io::Result<Arc<Rig>> {
        let rig = Arc::new(Rig {
            fold: Mutex::new(Fold::default()),
            engine: engine.clone(),
        });
        let sub = engine.bus().subscribe(1 << 14);
        let weak: Weak<Rig> = Arc::downgrade(&rig);
        std::thread::Builder::new()
            .name("serve-rig".into())
            .spawn(move || loop {
                let event = sub.rx.recv_timeout(Duration::from_millis(500));
                let Some(rig) = weak.upgrade() else { return };
                match event {
                    Ok(e) => rig.observe(&e),
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
                }
            })?;
        Ok(rig)
    }

    /// Folds one event in.
    fn observe(&self, e: &Event) {
        let mut f = self.fold.lock();
        let t = e.time();
        f.now = f.now.max(t);
        match e {
            Event::Span(s) if s.stage.is_compute() => {
                if let Lane::Compute { device } = &s.lane {
                    let spans = f.spans.entry(device.clone()).or_default();
                    spans.push_back((s.start, s.end));
                    while spans.front().is_some_and(|x| x.1 + BUSY_WINDOW < s.end) {
                        spans.pop_front();
                    }
                }
            }
            Event::Sample(s) => match (&s.device, s.metric.as_str()) {
                (Some(d), metrics::VRAM_USED) => {
                    f.vram_used.insert(d.clone(), s.value as u64);
                }
                (Some(d), metrics::VRAM_TOTAL) => {
                    f.vram_total.insert(d.clone(), s.value as u64);
                }
                _ => {}
            },
            _ => {}
        }
        let from = *f.report_from.get_or_insert(t);
        f.report.observe(e);
        if t >= from + ADVICE_WINDOW {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let v = f
                .report
                .verdict(from, t, &self.engine.config(), cores, None);
            f.bottleneck = v.bottleneck;
            f.report = ReportBuilder::default();
            f.report_from = Some(t);
        }
    }

    /// Each device: busy fraction over the last ten seconds, VRAM used and total.
    pub fn devices(&self) -> Vec<Device> {
        let f = self.fold.lock();
        let now = self.engine.clock().now().max(f.now);
        let from = now.saturating_sub(BUSY_WINDOW);
        self.engine
            .devices()
            .into_iter()
            .map(|d| {
                let busy = f
                    .spans
                    .get(&d.id)
                    .map_or(0, |spans| covered(spans, from, now));
                Device {
                    busy: (busy as f64 / (now - from).max(1) as f64).min(1.0),
                    vram_used: f.vram_used.get(&d.id).copied().unwrap_or(0),
                    vram_total: f.vram_total.get(&d.id).copied().unwrap_or(d.memory_bytes),
                    name: d.id,
                }
            })
            .collect()
    }

    /// The advisor's sentence on the last full minute; empty before the first.
    pub fn bottleneck(&self) -> String {
        self.fold.lock().bottleneck.clone()
    }
}

/// How much of [from, to] the spans cover (overlaps counted once).
fn covered(spans: &VecDeque<(Nanos, Nanos)>, from: Nanos, to: Nanos) -> Nanos {
    let mut v: Vec<(Nanos, Nanos)> = spans
        .iter()
        .map(|&(a, b)| (a.max(from), b.min(to)))
        .filter(|(a, b)| a < b)
        .collect();
    v.sort_unstable();
    let (mut total, mut end) = (0, 0);
    for (a, b) in v {
        let a = a.max(end);
        if b > a {
            total += b - a;
            end = b;
        }
    }
    total
}

/// The host's memory in use and its total (bytes), from /proc/meminfo; zeros where unreadable.
pub fn host_memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    let (total, available) = (field("MemTotal:"), field("MemAvailable:"));
    (total.saturating_sub(available), total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_spans_are_busy_once_and_cut_to_the_window() {
        let spans: VecDeque<_> = [(0, 40), (20, 60), (90, 200)].into_iter().collect();
        assert_eq!(covered(&spans, 10, 100), 50 + 10);
        assert_eq!(covered(&VecDeque::new(), 0, 100), 0);
    }
}
