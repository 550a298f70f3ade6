//! The answers `serve` gave lately, by proof kind: what `provetop fleet` shows as proofs per
//! hour over the last minute and ten, and the WinningPoSt latencies its alerts watch. Kept
//! beside the request table's totals ([`super::cuzk_metrics::Tally`]), bounded in time and
//! count.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How far back answers are kept: the fleet's longer window.
pub const WINDOW: Duration = Duration::from_secs(600);
/// The most answers kept, whatever the rate (a rig at 50,000 a hour holds ~8,300).
const MAX_KEPT: usize = 100_000;
/// WinningPoSt latencies kept for the median.
const LATENCIES: usize = 64;

/// The kind names the fleet and the dashboard use, from cuzk's (`winning_post` → `winning-post`).
pub fn short_kind(cuzk: &str) -> &'static str {
    match cuzk {
        "porep_seal_commit" => "porep",
        "snap_deals_update" => "snap",
        "window_post_partition" => "window-post",
        "winning_post" => "winning-post",
        _ => "other",
    }
}

/// One answer: when, of which kind, and whether it was a proof.
#[derive(Clone, Copy, Debug)]
struct Answer {
    at: Instant,
    kind: &'static str,
    ok: bool,
}

/// The recent answers.
#[derive(Default)]
pub struct Served {
    recent: VecDeque<Answer>,
    /// WinningPoSt answers' times and latencies (ms), oldest first.
    winning: VecDeque<(Instant, u64)>,
}

/// A kind's answers over the two windows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recent {
    pub kind: &'static str,
    pub done_1m: u64,
    pub done_10m: u64,
    pub failed_10m: u64,
}

impl Served {
    /// An answer of cuzk's `kind` at `at` that took `seconds`; `ok` when it carried a proof.
    pub fn answered(&mut self, kind: &str, ok: bool, seconds: f64, at: Instant) {
        let kind = short_kind(kind);
        self.recent.push_back(Answer { at, kind, ok });
        while self.recent.len() > MAX_KEPT
            || self
                .recent
                .front()
                .is_some_and(|a| at.duration_since(a.at) > WINDOW)
        {
            self.recent.pop_front();
        }
        if ok && kind == "winning-post" {
            self.winning
                .push_back((at, (seconds * 1000.0).round() as u64));
            if self.winning.len() > LATENCIES {
                self.winning.pop_front();
            }
        }
    }

    /// Each kind's answers within a minute and ten of `now`, kinds in name order.
    pub fn recent(&self, now: Instant) -> Vec<Recent> {
        let mut out: Vec<Recent> = vec![];
        for a in &self.recent {
            let age = now.saturating_duration_since(a.at);
            if age > WINDOW {
                continue;
            }
            let i = match out.iter().position(|r| r.kind == a.kind) {
                Some(i) => i,
                None => {
                    out.push(Recent {
                        kind: a.kind,
                        ..Recent::default()
                    });
                    out.len() - 1
                }
            };
            let r = &mut out[i];
            match a.ok {
                true => {
                    r.done_10m += 1;
                    r.done_1m += u64::from(age <= Duration::from_secs(60));
                }
                false => r.failed_10m += 1,
            }
        }
        out.sort_by_key(|r| r.kind);
        out
    }

    /// Within `window` of `now`: the slowest WinningPoSt answer (ms, 0 for none) and the
    /// requests answered FAILED: what the alerts judge.
    pub fn within(&self, window: Duration, now: Instant) -> (u64, u64) {
        let inside = |at: Instant| now.saturating_duration_since(at) <= window;
        let slowest = self
            .winning
            .iter()
            .filter(|w| inside(w.0))
            .map(|w| w.1)
            .max();
        let failed = self.recent.iter().filter(|a| !a.ok && inside(a.at)).count();
        (slowest.unwrap_or(0), failed as u64)
    }

    /// The last WinningPoSt answer's latency and the median of the kept ones (ms), if any.
    pub fn winning(&self) -> Option<(u64, u64)> {
        let last = self.winning.back()?.1;
        let mut v: Vec<u64> = self.winning.iter().map(|w| w.1).collect();
        v.sort_unstable();
        Some((last, v[v.len() / 2]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_count_by_kind_and_window_and_age_out() {
        let t0 = Instant::now();
        let mut s = Served::default();
        s.answered("winning_post", true, 0.2, t0);
        s.answered("winning_post", true, 0.4, t0 + Duration::from_secs(100));
        s.answered(
            "porep_seal_commit",
            false,
            9.0,
            t0 + Duration::from_secs(100),
        );
        s.answered("winning_post", true, 0.3, t0 + Duration::from_secs(130));
        let now = t0 + Duration::from_secs(150);
        let r = s.recent(now);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].kind, r[0].done_10m, r[0].failed_10m), ("porep", 0, 1));
        assert_eq!(
            (r[1].kind, r[1].done_1m, r[1].done_10m),
            ("winning-post", 2, 3)
        );
        assert_eq!(s.winning(), Some((300, 300)));
        assert_eq!(s.within(Duration::from_secs(60), now), (400, 1));
        assert_eq!(s.within(Duration::from_secs(30), now), (300, 0));
        // Ten minutes on, the first answer has left the window.
        let later = t0 + WINDOW + Duration::from_secs(1);
        assert_eq!(s.recent(later)[1].done_10m, 2);
    }
}
