//! The text exposition format (0.0.4) of what the exporter knows.

use std::fmt::Write as _;

use super::families::{Kind, FAMILIES};
use super::state::{MetricsState, STAGE_BUCKETS};
use crate::gaps::GapCause;
use crate::Stage;

impl MetricsState {
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
        head(
            &mut o,
            "provetop_gpu_idle_reason_seconds_total",
            "counter",
            "Settled idle time of lock_held, alloc and waiting_synthesis by reason (bench --json's gap_detail).",
        );
        for (d, t) in &self.devices {
            for ((cause, reason), n) in &t.reasons {
                let _ = writeln!(
                    o,
                    "provetop_gpu_idle_reason_seconds_total{{device=\"{}\",cause=\"{cause}\",reason=\"{}\"}} {}",
                    esc(d),
                    esc(reason),
                    num(*n as f64 / 1e9)
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
pub(super) fn num(v: f64) -> String {
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
pub(super) fn esc(v: &str) -> String {
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
