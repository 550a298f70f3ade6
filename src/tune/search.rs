//! The search of `provetop tune`, without the engine: which change to try next, how many
//! finished partitions measure it, and whether it stays. The driver feeds it finished
//! partitions and jobs and does what it decides.
//!
//! Greedy hill-climb: the configuration in force has a measured rate; a candidate is one knob
//! changed; it is kept when its window beats that rate by more than the noise, and the next
//! candidates are the advisor's for the new configuration, then single-knob steps from it.

use provetop_telemetry::advice::Advice;
use provetop_telemetry::Nanos;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The fewest finished partitions a window counts; a budget that cannot give that stops.
pub const MIN_WINDOW: u64 = 4;
/// The most: beyond this a window costs budget without sharpening the comparison much.
pub const MAX_WINDOW: u64 = 64;
/// The least gain that is kept, whatever the noise says.
pub const MIN_GAIN: f64 = 1.03;
/// The jobs-in-flight knob: the driver's own, not an `[engine]` key.
pub const CONCURRENCY: &str = provetop_telemetry::advice::CONCURRENCY;

/// A knob the search steps through, with the values it may take.
#[derive(Clone, Debug, PartialEq)]
pub enum Knob {
    /// A count: one up, one down, within `lo..=hi`.
    Count { key: &'static str, lo: u64, hi: u64 },
    /// One of a few values: each other one.
    Choice {
        key: &'static str,
        values: &'static [&'static str],
    },
}

/// The knobs for a backend, in the order a pass tries them: the counts that feed the devices
/// first, then the strategies.
pub fn knobs(cuda: bool, cores: u64) -> Vec<Knob> {
    let mut k = vec![
        Knob::Count {
            key: "synthesis_workers",
            lo: 1,
            hi: (cores * 2).clamp(2, provetop_telemetry::config::MAX_WORKERS as u64),
        },
        Knob::Count {
            key: "gpu_workers_per_device",
            lo: 1,
            hi: 16,
        },
    ];
    if !cuda {
        k.push(Knob::Count {
            key: "cpu_devices",
            lo: 1,
            hi: cores.clamp(1, 64),
        });
    }
    k.push(Knob::Count {
        key: CONCURRENCY,
        lo: 1,
        hi: 64,
    });
    k.push(Knob::Choice {
        key: "lock",
        values: &["single", "two-lock", "none"],
    });
    if cuda {
        k.push(Knob::Choice {
            key: "b_g2_on",
            values: &["cpu", "gpu"],
        });
        k.push(Knob::Choice {
            key: "prestage",
            values: &["true", "false"],
        });
    }
    k.push(Knob::Choice {
        key: "precompiled",
        values: &["true", "false"],
    });
    k
}

/// One knob's change.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub key: String,
    pub from: String,
    pub to: String,
    /// The advisor's predicted ratio, where the advisor proposed it.
    pub expected_gain: Option<f64>,
}

impl Change {
    /// `synthesis_workers 2 → 3`, with `(advice ×1.40)` where the advisor proposed it.
    pub fn label(&self) -> String {
        let mut s = format!("{} {} → {}", self.key, self.from, self.to);
        if let Some(g) = self.expected_gain {
            s.push_str(&format!(" (advice ×{g:.2})"));
        }
        s
    }
}

/// What became of a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The configuration the search started from.
    Start,
    /// Faster beyond the noise: the new configuration in force.
    Kept,
    /// Not faster enough: set back.
    NotKept,
    /// The engine refused the change (the reason).
    Refused(String),
    /// The budget ran out (or the run stopped) before its window filled: set back.
    Unfinished,
}

impl Verdict {
    pub fn word(&self) -> String {
        match self {
            Verdict::Start => "start".into(),
            Verdict::Kept => "kept".into(),
            Verdict::NotKept => "no".into(),
            Verdict::Refused(why) => format!("refused: {why}"),
            Verdict::Unfinished => "unfinished".into(),
        }
    }
}

/// A row of the table: one measured (or refused) configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub step: usize,
    /// None for the start.
    pub change: Option<Change>,
    /// Finished partitions the window counted.
    pub proofs: u64,
    pub seconds: f64,
    pub proofs_per_hour: f64,
    /// Proofs per hour over the start's.
    pub ratio: f64,
    pub verdict: Verdict,
}

/// The partitions a step is measured by. Partitions of jobs submitted before the change ran
/// (at least partly) under the old settings: the window opens when the last of those jobs
/// ends, and counts what finishes after that.
#[derive(Debug)]
struct Window {
    /// Jobs open when the step began.
    old_jobs: BTreeSet<u64>,
    /// The latest finish of an old job's partition.
    last_old: Option<Nanos>,
    /// When counting began; None while old jobs run (or, with none, until a first partition).
    opened: Option<Nanos>,
    /// Finish times of the partitions counted.
    times: Vec<Nanos>,
}

impl Window {
    fn new(open_jobs: impl IntoIterator<Item = u64>) -> Window {
        Window {
            old_jobs: open_jobs.into_iter().collect(),
            last_old: None,
            opened: None,
            times: vec![],
        }
    }

    fn partition(&mut self, t: Nanos, job: u64) {
        if self.old_jobs.contains(&job) {
            self.last_old = Some(self.last_old.map_or(t, |l| l.max(t)));
            return;
        }
        match self.opened {
            Some(o) if t > o => self.times.push(t),
            Some(_) => {}
            // No old jobs: the pipeline's fill ends with the first partition.
            None if self.old_jobs.is_empty() && self.last_old.is_none() => self.opened = Some(t),
            None => {}
        }
    }

    fn job_done(&mut self, job: u64, now: Nanos) {
        if self.old_jobs.remove(&job) && self.old_jobs.is_empty() && self.opened.is_none() {
            self.opened = Some(self.last_old.unwrap_or(now));
        }
    }

    fn count(&self) -> u64 {
        self.times.len() as u64
    }

    /// Partitions per second over [opened, last]; None before two points.
    fn rate(&self) -> Option<f64> {
        let (o, last) = (self.opened?, *self.times.last()?);
        (last > o).then(|| self.times.len() as f64 * 1e9 / (last - o) as f64)
    }

    fn seconds(&self) -> f64 {
        match (self.opened, self.times.last()) {
            (Some(o), Some(l)) => (l.saturating_sub(o)) as f64 / 1e9,
            _ => 0.0,
        }
    }

    /// The relative difference of the two halves' rates: what one window's rate may be off by
    /// (the noise model the dashboard's before/after lines share).
    fn spread(&self) -> Option<f64> {
        provetop_telemetry::report::effect::spread(self.opened?, &self.times)
    }
}

/// The whole search's state.
pub struct Search {
    knobs: Vec<Knob>,
    /// The configuration in force (kept changes only): every live key and `concurrency`.
    pub current: BTreeMap<String, String>,
    /// Its measured proofs per hour.
    pub current_rate: Option<f64>,
    /// The window that measured it, for the advisor.
    pub current_window: Option<(Nanos, Nanos)>,
    start_rate: Option<f64>,
    /// Configurations measured (or refused) already, so none is measured twice.
    tried: BTreeSet<String>,
    queue: VecDeque<Change>,
    /// The step being measured: its change (None for the start) and window.
    running: Option<(Option<Change>, Window)>,
    pub steps: Vec<Step>,
    spreads: Vec<f64>,
}

impl Search {
    pub fn new(knobs: Vec<Knob>, current: BTreeMap<String, String>) -> Search {
        let mut tried = BTreeSet::new();
        tried.insert(signature(&current));
        Search {
            knobs,
            current,
            current_rate: None,
            current_window: None,
            start_rate: None,
            tried,
            queue: VecDeque::new(),
            running: None,
            steps: vec![],
            spreads: vec![],
        }
    }

    /// Begins measuring the configuration as it is (the first step).
    pub fn begin_start(&mut self, open_jobs: impl IntoIterator<Item = u64>) {
        self.running = Some((None, Window::new(open_jobs)));
    }

    /// Begins measuring `change`, which the driver has just applied.
    pub fn begin(&mut self, change: Change, open_jobs: impl IntoIterator<Item = u64>) {
        self.running = Some((Some(change), Window::new(open_jobs)));
    }

    pub fn partition(&mut self, t: Nanos, job: u64) {
        if let Some((_, w)) = &mut self.running {
            w.partition(t, job);
        }
    }

    pub fn job_done(&mut self, job: u64, now: Nanos) {
        if let Some((_, w)) = &mut self.running {
            w.job_done(job, now);
        }
    }

    /// Partitions counted by the running step, and whether its window has opened.
    pub fn progress(&self) -> Option<(u64, bool)> {
        self.running
            .as_ref()
            .map(|(_, w)| (w.count(), w.opened.is_some()))
    }

    pub fn running_change(&self) -> Option<Option<&Change>> {
        self.running.as_ref().map(|(c, _)| c.as_ref())
    }

    /// Partitions per second to plan with: the configuration in force's, else the running
    /// window's so far.
    pub fn rate_hint(&self) -> Option<f64> {
        self.current_rate.map(|r| r / 3600.0).or_else(|| {
            let (_, w) = self.running.as_ref()?;
            w.rate().filter(|_| w.count() >= 2)
        })
    }

    /// The relative gain a change must beat: twice the windows' mean spread, at least 3 %, at
    /// most 25 %.
    pub fn threshold(&self) -> f64 {
        provetop_telemetry::report::effect::threshold(&self.spreads).max(MIN_GAIN - 1.0)
    }

    /// Ends the running step: measured over its window, compared, kept or not. Returns the
    /// change to set back when it is not kept.
    pub fn conclude(&mut self, finished: bool) -> Option<Change> {
        let (change, w) = self.running.take()?;
        let rate = w.rate().map(|r| r * 3600.0);
        let complete = finished && rate.is_some();
        if complete {
            if let Some(s) = w.spread() {
                self.spreads.push(s);
            }
        }
        let rate_or_0 = rate.unwrap_or(0.0);
        let bounds = w.opened.zip(w.times.last().copied());
        let ratio = match self.start_rate {
            Some(s) if s > 0.0 => rate_or_0 / s,
            _ => 1.0,
        };
        let (verdict, back) = match (&change, complete) {
            (None, _) => {
                self.start_rate = rate;
                self.current_rate = rate;
                self.current_window = bounds;
                (Verdict::Start, None)
            }
            (Some(c), false) => (Verdict::Unfinished, Some(c.clone())),
            (Some(c), true) => {
                let base = self.current_rate.unwrap_or(0.0);
                if rate_or_0 > base * (1.0 + self.threshold()) {
                    self.current.insert(c.key.clone(), c.to.clone());
                    self.current_rate = rate;
                    self.current_window = bounds;
                    // A new configuration: its neighbours are new candidates.
                    self.queue.clear();
                    (Verdict::Kept, None)
                } else {
                    (Verdict::NotKept, Some(c.clone()))
                }
            }
        };
        self.steps.push(Step {
            step: self.steps.len(),
            change,
            proofs: w.count(),
            seconds: w.seconds(),
            proofs_per_hour: rate_or_0,
            ratio,
            verdict,
        });
        back
    }

    /// A change the engine refused: a row, nothing measured, nothing to set back.
    pub fn refused(&mut self, change: Change, why: String) {
        self.steps.push(Step {
            step: self.steps.len(),
            change: Some(change),
            proofs: 0,
            seconds: 0.0,
            proofs_per_hour: 0.0,
            ratio: 0.0,
            verdict: Verdict::Refused(why),
        });
    }

    /// The next change to try, or None when every neighbour of the configuration in force has
    /// been measured (the search has converged). `advice` is the advisor's for the last window
    /// of the configuration in force; it goes first when the queue is refilled.
    pub fn next(&mut self, advice: &[Advice]) -> Option<Change> {
        if self.queue.is_empty() {
            self.fill(advice);
        }
        while let Some(c) = self.queue.pop_front() {
            // Re-read against the configuration in force: a step may be moot by now.
            let Some(from) = self.current.get(&c.key).cloned() else {
                continue;
            };
            if from == c.to {
                continue;
            }
            let mut next = self.current.clone();
            next.insert(c.key.clone(), c.to.clone());
            if self.tried.insert(signature(&next)) {
                return Some(Change { from, ..c });
            }
        }
        None
    }

    /// Changes left to try from the configuration in force (an estimate for budgeting).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    fn fill(&mut self, advice: &[Advice]) {
        for a in advice {
            if self.current.contains_key(&a.knob) {
                self.queue.push_back(Change {
                    key: a.knob.clone(),
                    from: String::new(),
                    to: a.to.clone(),
                    expected_gain: Some(a.expected_gain),
                });
            }
        }
        for k in &self.knobs {
            let key = match k {
                Knob::Count { key, .. } | Knob::Choice { key, .. } => *key,
            };
            let Some(now) = self.current.get(key) else {
                continue;
            };
            let tos: Vec<String> = match k {
                Knob::Count { lo, hi, .. } => match now.parse::<u64>() {
                    Ok(n) => [n.checked_add(1), n.checked_sub(1)]
                        .into_iter()
                        .flatten()
                        .filter(|v| (*lo..=*hi).contains(v))
                        .map(|v| v.to_string())
                        .collect(),
                    Err(_) => vec![],
                },
                Knob::Choice { values, .. } => values
                    .iter()
                    .filter(|v| **v != now.as_str())
                    .map(|v| v.to_string())
                    .collect(),
            };
            for to in tos {
                self.queue.push_back(Change {
                    key: key.to_string(),
                    from: String::new(),
                    to,
                    expected_gain: None,
                });
            }
        }
    }
}

/// A configuration as one comparable string.
fn signature(values: &BTreeMap<String, String>) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Finished partitions the next window should count: what the budget leaves (`parts_left`,
/// estimated from the rate for a time budget) shared among the candidates still to try,
/// less the partitions in flight that the window waits out; within the bounds. None when not
/// even the shortest window fits.
pub fn window_target(parts_left: f64, candidates: usize, in_flight: u64) -> Option<u64> {
    let share = parts_left / candidates.max(1) as f64 - in_flight as f64;
    let fits = parts_left - in_flight as f64 >= MIN_WINDOW as f64;
    fits.then(|| (share.floor().max(0.0) as u64).clamp(MIN_WINDOW, MAX_WINDOW))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// `n` partitions of fresh jobs (ids from `job`), one every `period` from `t`.
    fn feed(s: &mut Search, t: Nanos, job: u64, n: u64, period: Nanos) -> Nanos {
        for i in 0..n {
            let t = t + i * period;
            s.partition(t, job + i);
            s.job_done(job + i, t);
        }
        t + n * period
    }

    #[test]
    fn a_window_waits_out_old_jobs_then_counts_and_rates() {
        let mut w = Window::new([1, 2]);
        w.partition(S, 1);
        w.partition(2 * S, 3); // new job, but old ones still run: not counted
        w.job_done(1, S);
        w.partition(3 * S, 2);
        w.job_done(2, 3 * S);
        assert_eq!(w.opened, Some(3 * S));
        for i in 1..=4 {
            w.partition(3 * S + i * S / 2, 10 + i);
        }
        assert_eq!(w.count(), 4);
        assert!((w.rate().unwrap() - 2.0).abs() < 1e-9);
        assert!(w.spread().unwrap() < 1e-9);
    }

    #[test]
    fn a_faster_change_is_kept_a_slower_one_set_back() {
        let knobs = knobs(false, 2);
        let mut s = Search::new(
            knobs,
            values(&[
                ("synthesis_workers", "2"),
                ("gpu_workers_per_device", "2"),
                ("cpu_devices", "1"),
                ("concurrency", "6"),
                ("lock", "single"),
                ("precompiled", "false"),
            ]),
        );
        s.begin_start([]);
        let t = feed(&mut s, 0, 0, 9, S);
        assert_eq!(s.conclude(true), None);
        assert!((s.current_rate.unwrap() - 3600.0).abs() < 1e-6);
        let c = s.next(&[]).unwrap();
        assert_eq!(
            (c.key.as_str(), c.from.as_str(), c.to.as_str()),
            ("synthesis_workers", "2", "3")
        );
        s.begin(c, []);
        let t = feed(&mut s, t, 100, 9, S / 2);
        assert_eq!(s.conclude(true), None);
        assert_eq!(s.current["synthesis_workers"], "3");
        assert_eq!(s.steps[1].verdict, Verdict::Kept);
        assert!((s.steps[1].ratio - 2.0).abs() < 1e-6);
        // From 3, the step back to 2 was measured already: the next is 4.
        let c = s.next(&[]).unwrap();
        assert_eq!((c.from.as_str(), c.to.as_str()), ("3", "4"));
        s.begin(c.clone(), []);
        feed(&mut s, t, 200, 9, S);
        assert_eq!(s.conclude(true), Some(c));
        assert_eq!(s.current["synthesis_workers"], "3");
        assert_eq!(s.steps[2].verdict, Verdict::NotKept);
    }

    #[test]
    fn advice_goes_first_and_the_search_converges() {
        let mut s = Search::new(
            knobs(true, 8),
            values(&[
                ("concurrency", "1"),
                ("lock", "single"),
                ("synthesis_workers", "1"),
            ]),
        );
        let advice = Advice {
            knob: "lock".into(),
            from: "single".into(),
            to: "two-lock".into(),
            expected_gain: 1.5,
            reason: String::new(),
        };
        let first = s.next(std::slice::from_ref(&advice)).unwrap();
        assert_eq!(
            (first.to.as_str(), first.expected_gain),
            ("two-lock", Some(1.5))
        );
        let mut n = 1;
        while s.next(&[]).is_some() {
            n += 1;
        }
        // synthesis_workers 2, concurrency 2, lock none (two-lock came from the advice).
        assert_eq!(n, 4);
    }

    #[test]
    fn windows_shrink_to_fit_the_budget() {
        assert_eq!(window_target(1000.0, 10, 6), Some(MAX_WINDOW));
        assert_eq!(window_target(100.0, 10, 2), Some(8));
        assert_eq!(window_target(30.0, 10, 6), Some(MIN_WINDOW));
        assert_eq!(window_target(8.0, 10, 6), None);
    }
}
