//! A sampled metric over a run, for the device summaries.

use crate::Nanos;

/// A sampled series over the run. Rates and utilisations describe the interval that ends at
/// their sample (NVML reports over its past window); counters are cumulative.
#[derive(Clone, Debug, Default)]
pub(super) struct Series {
    pub(super) points: Vec<(Nanos, f64)>,
}

impl Series {
    pub(super) fn add(&mut self, t: Nanos, v: f64) {
        // Samplers publish in time order; a late one is dropped rather than reordering.
        if self.points.last().is_none_or(|&(lt, _)| t >= lt) {
            self.points.push((t, v));
        }
    }

    pub(super) fn first_t(&self) -> Option<Nanos> {
        self.points.first().map(|p| p.0)
    }

    pub(super) fn last_t(&self) -> Option<Nanos> {
        self.points.last().map(|p| p.0)
    }

    /// ∫ value dt over [a, b] in seconds, each value holding over the interval before its
    /// sample.
    pub(super) fn integral(&self, a: Nanos, b: Nanos) -> f64 {
        self.points
            .windows(2)
            .map(|w| {
                let (lo, hi) = (w[0].0.max(a), w[1].0.min(b));
                if hi > lo {
                    w[1].1 * (hi - lo) as f64 / 1e9
                } else {
                    0.0
                }
            })
            .sum()
    }

    pub(super) fn mean(&self, a: Nanos, b: Nanos) -> f64 {
        if b > a {
            self.integral(a, b) / ((b - a) as f64 / 1e9)
        } else {
            self.points.last().map_or(0.0, |p| p.1)
        }
    }

    pub(super) fn max(&self) -> f64 {
        self.points.iter().map(|p| p.1).fold(0.0, f64::max)
    }

    /// A cumulative counter at `t`, linear between samples, held outside them.
    pub(super) fn at(&self, t: Nanos) -> f64 {
        let i = self.points.partition_point(|p| p.0 <= t);
        match (i.checked_sub(1).map(|j| self.points[j]), self.points.get(i)) {
            (Some((t0, v0)), Some(&(t1, v1))) => {
                v0 + (v1 - v0) * (t - t0) as f64 / (t1 - t0).max(1) as f64
            }
            (Some((_, v)), None) | (None, Some(&(_, v))) => v,
            (None, None) => 0.0,
        }
    }

    /// The counter's increase over the whole series.
    pub(super) fn delta(&self) -> f64 {
        match (self.points.first(), self.points.last()) {
            (Some(a), Some(b)) => b.1 - a.1,
            _ => 0.0,
        }
    }
}
