//! Sample history: one ring per (metric, device), oldest first.

use std::collections::BTreeMap;

use provetop_telemetry::{Nanos, Sample};

use super::Ring;

/// Points kept per series: 20 minutes at 10 Hz, with room.
const SERIES_CAP: usize = 16_384;

/// One metric's points over time, (session time in nanoseconds, value), oldest first; 16384 kept.
#[derive(Clone, Debug)]
pub struct Series {
    points: Ring<(Nanos, f64)>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            points: Ring::new(SERIES_CAP),
        }
    }
}

impl Series {
    /// The newest value; `None` before any point.
    pub fn latest(&self) -> Option<f64> {
        self.points.back().map(|p| p.1)
    }

    /// The mean of the points in the `window` that ends at the newest one: utilisation and
    /// rates arrive several times a second, each over a short interval, and one alone jumps.
    pub fn recent_mean(&self, window: Nanos) -> Option<f64> {
        let last = self.points.back()?.0;
        let from = self.points.partition_point(|p| p.0 + window <= last);
        let (n, sum) = self
            .points
            .range(from)
            .fold((0usize, 0.0), |(n, s), p| (n + 1, s + p.1));
        Some(sum / n.max(1) as f64)
    }

    /// Points held.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether no point is held.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The series over `[t0, t1)` in `n` buckets, each the largest value that fell in it
    /// (peaks matter more than averages on a dashboard); `None` where nothing fell.
    pub fn buckets(&self, t0: Nanos, t1: Nanos, n: usize) -> Vec<Option<f64>> {
        let mut out = vec![None; n];
        if n == 0 || t1 <= t0 {
            return out;
        }
        let from = self.points.partition_point(|p| p.0 < t0);
        let span = (t1 - t0) as u128;
        for &(t, v) in self.points.range(from).take_while(|p| p.0 < t1) {
            let i = ((t - t0) as u128 * n as u128 / span) as usize;
            let slot = &mut out[i.min(n - 1)];
            *slot = Some(slot.map_or(v, |o: f64| o.max(v)));
        }
        out
    }

    /// The value at or just before `t`.
    pub fn at(&self, t: Nanos) -> Option<f64> {
        let i = self.points.partition_point(|p| p.0 <= t);
        i.checked_sub(1)
            .and_then(|i| self.points.get(i))
            .map(|p| p.1)
    }
}

/// Sample history: one [`Series`] per (metric, device), a `None` device for a host-wide metric.
#[derive(Default)]
pub struct Samples {
    series: BTreeMap<(String, Option<String>), Series>,
}

impl Samples {
    /// Keeps a sample in time order in its series, made on its first sample.
    pub fn add(&mut self, s: &Sample) {
        let series = match self.series.get_mut(&(s.metric.clone(), s.device.clone())) {
            Some(x) => x,
            None => self
                .series
                .entry((s.metric.clone(), s.device.clone()))
                .or_default(),
        };
        series.points.insert_sorted((s.t, s.value), |p| p.0);
    }

    /// The series of `metric` on `device` (`None`: host-wide); `None` before its first sample.
    pub fn get(&self, metric: &str, device: Option<&str>) -> Option<&Series> {
        self.series
            .get(&(metric.to_string(), device.map(str::to_string)))
    }

    /// The newest value of `metric` on `device`; `None` before its first sample.
    pub fn latest(&self, metric: &str, device: Option<&str>) -> Option<f64> {
        self.get(metric, device).and_then(Series::latest)
    }

    /// `Series::recent_mean` over the last second.
    pub fn last_second(&self, metric: &str, device: Option<&str>) -> Option<f64> {
        self.get(metric, device)
            .and_then(|s| s.recent_mean(1_000_000_000))
    }

    /// Series whose metric starts with `prefix`, for `device`: `(suffix, series)`.
    pub fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
        device: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a str, &'a Series)> + 'a {
        self.series.iter().filter_map(move |((m, d), s)| {
            let rest = m.strip_prefix(prefix)?;
            (d.as_deref() == device && !rest.is_empty()).then_some((rest, s))
        })
    }

    /// Drops points before `cutoff` (session nanoseconds), keeping each series' newest.
    pub fn evict(&mut self, cutoff: Nanos) {
        for s in self.series.values_mut() {
            // Keep the newest point however old: a gauge shows the last value it knows.
            let last = s.points.len().saturating_sub(1);
            let mut i = 0;
            s.points.pop_front_while(|p| {
                i += 1;
                i <= last && p.0 < cutoff
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_peaks() {
        let mut s = Samples::default();
        for (t, v) in [(0, 1.0), (5, 3.0), (10, 2.0), (35, 7.0)] {
            s.add(&Sample {
                t,
                metric: "m".into(),
                device: None,
                value: v,
            });
        }
        let b = s.get("m", None).unwrap().buckets(0, 40, 4);
        assert_eq!(b, vec![Some(3.0), Some(2.0), None, Some(7.0)]);
        assert_eq!(s.get("m", None).unwrap().at(20), Some(2.0));
        s.evict(100);
        assert_eq!(s.latest("m", None), Some(7.0));
    }

    #[test]
    fn recent_mean_smooths_the_last_window() {
        let mut s = Samples::default();
        const MS: Nanos = 1_000_000;
        // Utilisation every 200 ms: 0.9, 0.0, 0.6, 0.1, 0.4, 0.0 (the newest).
        for (i, v) in [0.9, 0.0, 0.6, 0.1, 0.4, 0.0].into_iter().enumerate() {
            s.add(&Sample {
                t: i as Nanos * 200 * MS,
                metric: "gpu.util".into(),
                device: Some("gpu0".into()),
                value: v,
            });
        }
        assert_eq!(s.latest("gpu.util", Some("gpu0")), Some(0.0));
        // The last second holds the five newest points (200 ms to 1000 ms).
        let m = s.last_second("gpu.util", Some("gpu0")).unwrap();
        assert!((m - 0.22).abs() < 1e-12, "{m}");
        assert_eq!(s.last_second("gpu.util", None), None);
    }
}
