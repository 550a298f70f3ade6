//! The part of a window that had work in it: what the advisor judges. Setup before the first
//! job (parameters, circuit recording), the time before a recording began, and a run that has
//! drained (no job left to start) are no idle time a knob could remove.

use crate::Nanos;

/// The fewest finished proofs the advisor judges a window on (as `tune`'s shortest window):
/// below it, one slow partition decides the verdict.
pub const MIN_PROOFS: usize = 4;

/// When work was seen: the first event of any work, and each job's start and end.
#[derive(Default)]
pub(super) struct WorkLog {
    first: Option<Nanos>,
    /// (time, +1 submitted, −1 ended), in arrival order.
    jobs: Vec<(Nanos, i8)>,
}

impl WorkLog {
    /// Something worked at `t` (a span began, a job or partition moved).
    pub(super) fn saw(&mut self, t: Nanos) {
        self.first = Some(self.first.map_or(t, |f| f.min(t)));
    }

    /// A job was submitted (`true`) or ended at `t`.
    pub(super) fn job(&mut self, t: Nanos, submitted: bool) {
        self.saw(t);
        self.jobs.push((t, if submitted { 1 } else { -1 }));
    }

    /// `[from, to]` cut to its work: from the first work seen (not before), to the last job's
    /// end when no job is open at `to` (the run ran out there). None when no work falls inside (an
    /// empty window at a moment of work is kept: it has too few proofs, not no work).
    pub(super) fn trim(&self, from: Nanos, to: Nanos) -> Option<(Nanos, Nanos)> {
        let start = from.max(self.first?);
        let mut jobs: Vec<(Nanos, i8)> = self.jobs.iter().copied().filter(|j| j.0 <= to).collect();
        jobs.sort_unstable();
        let open: i64 = jobs.iter().map(|j| i64::from(j.1)).sum();
        let last_end = jobs.iter().rev().find(|j| j.1 < 0).map(|j| j.0);
        let end = match (open <= 0, last_end) {
            (true, Some(e)) => e,
            _ => to,
        };
        (end >= start).then_some((start, end))
    }
}

/// `0:41`, `12:03`: minutes and seconds of the session clock.
pub(super) fn clock(t: Nanos) -> String {
    let s = t / 1_000_000_000;
    format!("{}:{:02}", s / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    #[test]
    fn setup_before_the_first_job_and_a_drained_tail_are_cut() {
        let mut w = WorkLog::default();
        // Setup until 30 s; jobs submitted at 30..33, ending at 34..37.
        for t in [30, 31, 32, 33] {
            w.job(t * S, true);
        }
        for t in [34, 35, 36, 37] {
            w.job(t * S, false);
        }
        assert_eq!(w.trim(0, 100 * S), Some((30 * S, 37 * S)));
        // While jobs are open the window runs to its end.
        assert_eq!(w.trim(0, 35 * S), Some((30 * S, 35 * S)));
        // Nothing before the first work.
        assert_eq!(w.trim(0, 20 * S), None);
        assert_eq!(WorkLog::default().trim(0, S), None);
    }
}
