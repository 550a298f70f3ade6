//! cuzk's own metric names (`cuzk_proofs_completed_total`, `cuzk_proof_duration_seconds`, …),
//! exported beside provetop's in `GetMetrics` and at `--metrics-addr`, so a dashboard or alert
//! written for cuzk reads provetop unchanged. The answers are counted here as the request
//! table gives them out ([`Tally`]); the gauges are read when the text is made.

use std::collections::BTreeMap;
use std::fmt::Write;

/// The upper bounds of `cuzk_proof_duration_seconds`' buckets: a WinningPoSt's seconds to a
/// 32 GiB PoRep's minutes on a slow machine.
const BUCKETS: [f64; 12] = [
    0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0,
];

/// One proof kind's answered requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindTally {
    pub completed: u64,
    pub failed: u64,
    /// Completed proofs' durations (acceptance to answer), per bucket of [`BUCKETS`], then the
    /// count over the last bound.
    pub buckets: [u64; BUCKETS.len() + 1],
    pub seconds: f64,
}

/// Answers by cuzk's proof kind name (`porep_seal_commit`, …).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally(pub BTreeMap<&'static str, KindTally>);

impl Tally {
    /// A completed proof of `kind` that took `seconds`.
    pub fn completed(&mut self, kind: &'static str, seconds: f64) {
        let k = self.0.entry(kind).or_default();
        k.completed += 1;
        k.seconds += seconds;
        let at = BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(BUCKETS.len());
        k.buckets[at] += 1;
    }

    /// A request of `kind` answered FAILED.
    pub fn failed(&mut self, kind: &'static str) {
        self.0.entry(kind).or_default().failed += 1;
    }
}

/// What the gauges read now.
pub struct Gauges {
    /// Requests waiting (checked or queued, not yet in the engine).
    pub queue_depth: u64,
    /// Requests in the engine.
    pub running_jobs: u64,
    /// Device workers (GPU workers; CPU executors' on the cpu backend).
    pub gpu_workers: u64,
    pub uptime_seconds: u64,
}

/// The text exposition of cuzk's series. Every kind listed in `kinds` has its counters, at 0
/// before its first answer, so a rate over them starts at once.
pub fn render(tally: &Tally, kinds: &[&'static str], g: &Gauges) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# HELP cuzk_proofs_completed_total Proofs completed, by proof kind (as cuzk names them).\n\
         # TYPE cuzk_proofs_completed_total counter"
    );
    let zero = KindTally::default();
    let each = |k: &&str| tally.0.get(*k).unwrap_or(&zero).clone();
    for k in kinds {
        let _ = writeln!(
            text,
            "cuzk_proofs_completed_total{{proof_kind=\"{k}\"}} {}",
            each(k).completed
        );
    }
    let _ = writeln!(
        text,
        "# HELP cuzk_proofs_failed_total Requests answered FAILED, by proof kind.\n\
         # TYPE cuzk_proofs_failed_total counter"
    );
    for k in kinds {
        let _ = writeln!(
            text,
            "cuzk_proofs_failed_total{{proof_kind=\"{k}\"}} {}",
            each(k).failed
        );
    }
    let _ = writeln!(
        text,
        "# HELP cuzk_proof_duration_seconds Completed proofs, from acceptance to answer.\n\
         # TYPE cuzk_proof_duration_seconds histogram"
    );
    for k in kinds {
        let t = each(k);
        let mut cumulative = 0;
        for (b, n) in BUCKETS.iter().zip(t.buckets.iter()) {
            cumulative += n;
            let _ = writeln!(
                text,
                "cuzk_proof_duration_seconds_bucket{{proof_kind=\"{k}\",le=\"{b}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            text,
            "cuzk_proof_duration_seconds_bucket{{proof_kind=\"{k}\",le=\"+Inf\"}} {}\n\
             cuzk_proof_duration_seconds_sum{{proof_kind=\"{k}\"}} {}\n\
             cuzk_proof_duration_seconds_count{{proof_kind=\"{k}\"}} {}",
            t.completed, t.seconds, t.completed
        );
    }
    for (name, help, v) in [
        (
            "cuzk_queue_depth",
            "Requests waiting for the engine.",
            g.queue_depth,
        ),
        (
            "cuzk_running_jobs",
            "Requests in the engine.",
            g.running_jobs,
        ),
        (
            "cuzk_gpu_workers",
            "Device workers (the cpu backend's executors where there is no GPU).",
            g.gpu_workers,
        ),
        (
            "cuzk_uptime_seconds",
            "Seconds since the server started.",
            g.uptime_seconds,
        ),
    ] {
        let _ = writeln!(
            text,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}"
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_is_there_and_buckets_add_up() {
        let mut t = Tally::default();
        t.completed("porep_seal_commit", 0.7);
        t.completed("porep_seal_commit", 45.0);
        t.failed("winning_post");
        let g = Gauges {
            queue_depth: 3,
            running_jobs: 1,
            gpu_workers: 2,
            uptime_seconds: 9,
        };
        let text = render(&t, &["porep_seal_commit", "winning_post"], &g);
        for line in [
            "cuzk_proofs_completed_total{proof_kind=\"porep_seal_commit\"} 2",
            "cuzk_proofs_completed_total{proof_kind=\"winning_post\"} 0",
            "cuzk_proofs_failed_total{proof_kind=\"winning_post\"} 1",
            "cuzk_proof_duration_seconds_bucket{proof_kind=\"porep_seal_commit\",le=\"0.5\"} 0",
            "cuzk_proof_duration_seconds_bucket{proof_kind=\"porep_seal_commit\",le=\"1\"} 1",
            "cuzk_proof_duration_seconds_bucket{proof_kind=\"porep_seal_commit\",le=\"60\"} 2",
            "cuzk_proof_duration_seconds_count{proof_kind=\"porep_seal_commit\"} 2",
            "cuzk_queue_depth 3",
            "cuzk_running_jobs 1",
            "cuzk_gpu_workers 2",
            "cuzk_uptime_seconds 9",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
    }
}
