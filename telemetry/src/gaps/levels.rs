//! The sampled levels a gap's reasons read: the synthesis pool's busy fraction, DDR pressure,
//! partitions pending, and per device the memory NVML and the engine's accounting report.
//! A rate or fraction describes the period that ends at its sample's time, so its level at `t`
//! is the first sample after `t` (the last one past the end); a gauge is its last reading.

use std::collections::BTreeMap;

use crate::{metrics, Nanos, Sample};

/// The synthesis pool's busy fraction.
pub(super) const SYNTHESIS_POOL: &str = "cpu.pool.synthesis";

const GLOBAL: [&str; 3] = [
    SYNTHESIS_POOL,
    metrics::HOST_DDR_PRESSURE,
    metrics::PIPELINE_PENDING,
];

/// (time, value) of a metric's samples.
type Points = Vec<(Nanos, f64)>;

#[derive(Clone, Debug, Default)]
pub(super) struct Levels {
    /// (metric, device) → samples sorted by time.
    series: BTreeMap<(String, Option<String>), Points>,
}

impl Levels {
    pub(super) fn add(&mut self, s: &Sample) {
        let watched = match &s.device {
            None => GLOBAL.contains(&s.metric.as_str()),
            Some(_) => {
                s.metric == metrics::VRAM_TOTAL
                    || s.metric == metrics::VRAM_RESERVED
                    || s.metric.starts_with(metrics::VRAM_USED_PREFIX)
            }
        };
        if !watched {
            return;
        }
        let v = self
            .series
            .entry((s.metric.clone(), s.device.clone()))
            .or_default();
        let i = v.partition_point(|p| p.0 <= s.t);
        v.insert(i, (s.t, s.value));
    }

    fn at_in(v: &[(Nanos, f64)], t: Nanos) -> Option<f64> {
        let i = v.partition_point(|p| p.0 <= t);
        v.get(i).or(v.last()).map(|p| p.1)
    }

    /// A host-wide level at `t`, None where it was never sampled.
    pub(super) fn global(&self, metric: &str, t: Nanos) -> Option<f64> {
        self.device(metric, None, t)
    }

    /// A gauge read at an instant (pipeline depths): its last reading at or before `t`.
    pub(super) fn gauge(&self, metric: &str, t: Nanos) -> Option<f64> {
        let v = self.series.get(&(metric.to_string(), None))?;
        let i = v.partition_point(|p| p.0 <= t);
        i.checked_sub(1).map(|i| v[i].1)
    }

    fn device(&self, metric: &str, device: Option<&str>, t: Nanos) -> Option<f64> {
        let key = (metric.to_string(), device.map(str::to_string));
        self.series.get(&key).and_then(|v| Self::at_in(v, t))
    }

    /// Free device memory at `t` as NVML reports it.
    pub(super) fn free(&self, device: &str, t: Nanos) -> Option<f64> {
        let total = self.device(metrics::VRAM_TOTAL, Some(device), t)?;
        let reserved = self.device(metrics::VRAM_RESERVED, Some(device), t)?;
        Some((total - reserved).max(0.0))
    }

    /// Device memory the engine holds at `t`, by purpose.
    pub(super) fn held(&self, device: &str, t: Nanos) -> Vec<(String, f64)> {
        self.series
            .iter()
            .filter(|((_, d), _)| d.as_deref() == Some(device))
            .filter_map(|((m, _), v)| {
                let purpose = m.strip_prefix(metrics::VRAM_USED_PREFIX)?;
                Some((purpose.to_string(), Self::at_in(v, t)?))
            })
            .collect()
    }

    /// Times at which a level the device's gaps read changes.
    pub(super) fn changes<'a>(&'a self, device: &'a str) -> impl Iterator<Item = Nanos> + 'a {
        self.series
            .iter()
            .filter(move |((_, d), _)| d.as_deref().is_none_or(|d| d == device))
            .flat_map(|(_, v)| v.iter().map(|p| p.0))
    }

    /// Forgets samples no window from `before` on reads: the last one before it stays (a
    /// gauge's reading then), and every later one.
    pub(super) fn prune(&mut self, before: Nanos) {
        for v in self.series.values_mut() {
            let i = v.partition_point(|p| p.0 < before);
            v.drain(..i.saturating_sub(1));
        }
    }
}
