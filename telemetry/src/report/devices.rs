//! The device and host summaries of a report: busy fractions and gaps per device, NVML against
//! the engine over one window, the engine's PCIe counts, timeline checks, the host's cores,
//! pools and memory pressure.

use std::collections::BTreeMap;

use super::builder::ReportBuilder;
use super::series::Series;
use super::{merged_length, DeviceReport, HostReport, NvmlSummary, PcieSummary, TimelineCheck};
use crate::gaps::DeviceGaps;
use crate::{metrics, Nanos};

impl ReportBuilder {
    /// NVML and the engine over the part of [from, to] that NVML's utilisation samples cover.
    pub(super) fn nvml_summary(&self, device: &str, from: Nanos, to: Nanos) -> Option<NvmlSummary> {
        let get = |m: &'static str| self.series.get(&(m, device.to_string()));
        let util = get(metrics::GPU_UTIL)?;
        let (a, b) = (util.first_t()?.max(from), util.last_t()?.min(to).max(from));
        let bytes = |m| get(m).map(|s: &Series| s.integral(a, b));
        let counted = |m| get(m).map_or(0.0, |s: &Series| s.at(b) - s.at(a));
        let compute = self.compute.get(device).cloned().unwrap_or_default();
        let mut active = compute.clone();
        if let Some(c) = self.copies.get(device) {
            active.extend(c.engine_busy());
        }
        let ratio = |spans: &[(Nanos, Nanos)]| {
            merged_length(spans, a, b) as f64 / b.saturating_sub(a).max(1) as f64
        };
        Some(NvmlSummary {
            window_seconds: b.saturating_sub(a) as f64 / 1e9,
            util_mean: util.mean(a, b),
            samples: util.points.len(),
            engine_busy_ratio: ratio(&compute),
            engine_active_ratio: ratio(&active),
            engine_h2d_bytes: counted(metrics::PCIE_H2D_TOTAL),
            engine_d2h_bytes: counted(metrics::PCIE_D2H_TOTAL),
            pcie_tx_bytes: bytes(metrics::NVML_PCIE_TX).unwrap_or(0.0),
            pcie_rx_bytes: bytes(metrics::NVML_PCIE_RX).unwrap_or(0.0),
            gpm_pcie_tx_bytes: bytes(metrics::NVML_GPM_PCIE_TX),
            gpm_pcie_rx_bytes: bytes(metrics::NVML_GPM_PCIE_RX),
            power_mean_watts: get(metrics::GPU_POWER).map_or(0.0, |s| s.mean(a, b)),
            memory_used_max_bytes: get(metrics::VRAM_RESERVED).map_or(0.0, Series::max),
        })
    }

    pub(super) fn pcie_summary(&self, device: &str) -> Option<PcieSummary> {
        let get = |m: &'static str| self.series.get(&(m, device.to_string()));
        let (h2d, d2h) = (get(metrics::PCIE_H2D_TOTAL), get(metrics::PCIE_D2H_TOTAL));
        if h2d.is_none() && d2h.is_none() {
            return None;
        }
        let spans = self.span_bytes.get(device).copied().unwrap_or_default();
        Some(PcieSummary {
            h2d_bytes: h2d.map_or(0.0, Series::delta),
            d2h_bytes: d2h.map_or(0.0, Series::delta),
            h2d_span_bytes: spans.0,
            d2h_span_bytes: spans.1,
        })
    }

    pub(super) fn timeline(&self, device: &str) -> TimelineCheck {
        let mut spans = self.compute.get(device).cloned().unwrap_or_default();
        spans.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        // Sweep with a stack of open spans: a span must end inside every span it starts in.
        let mut open: Vec<Nanos> = vec![];
        let mut overlaps = 0;
        for (s, e) in spans {
            while open.last().is_some_and(|&end| end <= s) {
                open.pop();
            }
            if open.last().is_some_and(|&end| e > end) {
                overlaps += 1;
            }
            open.push(e);
        }
        TimelineCheck {
            compute_overlaps: overlaps,
            copies_on_compute_lane: self.copies_on_compute.get(device).copied().unwrap_or(0),
        }
    }

    /// Busy fraction and idle time per cause, per device, over the window [from, to].
    pub fn devices(&self, from: Nanos, to: Nanos) -> Vec<DeviceReport> {
        self.device_reports(self.gap_details(from, to), from, to)
    }

    /// `devices` from the gaps already worked out for [from, to].
    pub(super) fn device_reports(
        &self,
        gaps: Vec<DeviceGaps>,
        from: Nanos,
        to: Nanos,
    ) -> Vec<DeviceReport> {
        let wall = to.saturating_sub(from).max(1) as f64;
        gaps.into_iter()
            .map(|g| DeviceReport {
                busy_ratio: g.busy as f64 / wall,
                steady_busy_ratio: self.steady_busy(&g.device, from, to),
                busy_seconds: g.busy as f64 / 1e9,
                idle_seconds: g.idle as f64 / 1e9,
                partitions: self.proofs.iter().filter(|p| p.device == g.device).count(),
                gaps: g.seconds_by_cause(),
                gap_detail: g.detail.seconds(),
                nvml: self.nvml_summary(&g.device, from, to),
                pcie: self.pcie_summary(&g.device),
                timeline: self.timeline(&g.device),
                id: g.device,
            })
            .collect()
    }

    /// The host's samples inside [from, to], summarised; None without any.
    pub fn host(&self, from: Nanos, to: Nanos) -> Option<HostReport> {
        let inside: Vec<_> = self
            .host
            .iter()
            .filter(|(_, t, _)| *t > from && *t <= to)
            .collect();
        if inside.is_empty() {
            return None;
        }
        let values = |want: &dyn Fn(&str) -> bool| -> Vec<f64> {
            inside
                .iter()
                .filter(|(m, _, _)| want(m))
                .map(|(_, _, v)| *v)
                .collect()
        };
        let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let pressure = values(&|m| m == metrics::HOST_DDR_PRESSURE);
        let mut pools = BTreeMap::new();
        for (m, _, _) in &inside {
            if let Some(pool) = m.strip_prefix(metrics::CPU_POOL_PREFIX) {
                pools
                    .entry(pool.to_string())
                    .or_insert_with(|| mean(values(&|x| x == m.as_str())));
            }
        }
        Some(HostReport {
            cpu_busy_mean: mean(values(&|m| m.starts_with(metrics::CPU_CORE_PREFIX))),
            pools_busy_mean: pools,
            ddr_pressure_max: pressure.iter().copied().fold(0.0, f64::max),
            ddr_pressure_mean: mean(pressure),
            ddr_bytes_per_second_mean: mean(values(&|m| m == metrics::HOST_DDR)),
            engine_bytes_per_second_mean: mean(values(&|m| m == metrics::HOST_ENGINE_BYTES)),
            process_rss_max_bytes: values(&|m| m == metrics::PROCESS_RSS)
                .into_iter()
                .fold(0.0, f64::max),
            samples: inside.len(),
        })
    }

    pub(super) fn steady_busy(&self, device: &str, from: Nanos, to: Nanos) -> f64 {
        let spans = self.compute.get(device).map_or(&[][..], Vec::as_slice);
        let first = spans.iter().map(|s| s.0).min().unwrap_or(from).max(from);
        let last = spans.iter().map(|s| s.1).max().unwrap_or(to).min(to);
        if last <= first {
            return 0.0;
        }
        merged_length(spans, first, last) as f64 / (last - first) as f64
    }
}
