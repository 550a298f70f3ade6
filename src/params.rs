//! A run's parameters before its first job: loaded from the cache or generated (progress on
//! stderr), each circuit recorded for the pre-compiled path, and the prestaging memory
//! page-locked ahead.

use anyhow::{Context, Result};
use provetop_engine::circuit::precompiled::Precompiled;
use provetop_engine::circuit::Workload;
use provetop_engine::params::cache::Origin;
use provetop_engine::store::{Loaded, ParamsStore};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::run::{usage, Session};

/// Loads or generates the parameters of every part of the run (the first part's are returned),
/// records their circuits for the pre-compiled path, and page-locks the prestaging memory for
/// the largest. A mismatching `--params` file is bad input.
pub fn prepare(session: &Session) -> Result<Arc<Loaded>> {
    prepare_with(session, None)
}

/// A step of setup as it goes: what (`parameters for k14: G1 queries`, `circuit k14`), how
/// much of it is done (`done` of `total`), and how long it has taken.
pub struct Step<'a> {
    pub what: &'a str,
    pub done: usize,
    pub total: usize,
    pub elapsed: Duration,
    /// What is left of this stage at its own rate so far; None until that is known.
    pub left: Option<Duration>,
}

/// Where setup reports its steps: the dashboard's header, or stderr when `None`.
pub type Sink<'a> = Option<&'a (dyn Fn(&Step) + Sync)>;

/// [`prepare`], reporting each step to `sink` (stderr when `None`).
pub fn prepare_with(session: &Session, sink: Sink) -> Result<Arc<Loaded>> {
    let mut first = None;
    let mut largest: Option<(&Workload, Arc<Loaded>, bool)> = None;
    for part in &session.plan.parts {
        let precompiled = session.engine.precompiled_for(&part.workload);
        let (loaded, circuit) = load(session, &part.workload, precompiled, sink)?;
        session.engine.check_fits(&loaded, circuit.as_deref())?;
        let rows = |l: &Loaded| l.shape.num_rows();
        if largest
            .as_ref()
            .is_none_or(|(_, l, _)| rows(l) < rows(&loaded))
        {
            largest = Some((&part.workload, loaded.clone(), precompiled));
        }
        first.get_or_insert(loaded);
    }
    if let Some((workload, loaded, precompiled)) = largest {
        reserve_prestage(session, workload, &loaded, precompiled, sink);
    }
    first.context("a run without a workload")
}

/// One workload's parameters, and its recorded circuit when `precompiled` (the two made side by
/// side), with progress to the dashboard's sink or on stderr.
fn load(
    session: &Session,
    workload: &Workload,
    precompiled: bool,
    sink: Sink,
) -> Result<(Arc<Loaded>, Option<Arc<Precompiled>>)> {
    let started = Instant::now();
    let label = workload.label();
    let tty = std::io::stderr().is_terminal() && sink.is_none();
    // The dashboard takes every report; on a terminal one line redrawn in place; elsewhere a
    // line every few seconds.
    let every = |secs: u64| Duration::from_secs(if sink.is_some() { 0 } else { secs });
    let (params_lines, recording_lines) = (
        Throttle::new(every(if tty { 1 } else { 5 })),
        Throttle::new(every(5)),
    );
    let to = |lines, bar| Report {
        lines,
        sink,
        started,
        tty,
        bar,
    };
    let (params_to, recording_to) = (to(&params_lines, true), to(&recording_lines, false));
    let (params_what, recording_what) = (
        [
            format!("parameters for {label}"),
            format!("params: generating for {label}"),
        ],
        [
            format!("recording circuit {label}"),
            format!("circuit: recording {label}"),
        ],
    );
    let params =
        |stage: &str, done: usize, total: usize| params_to.report(&params_what, stage, done, total);
    let recording = |_: &str, done: usize, total: usize| {
        recording_to.report(&recording_what, "constraints", done, total)
    };
    let store: &ParamsStore = session.engine.store();
    let loaded = store
        .get_and_record(workload, precompiled, (&params, &recording))
        .with_context(|| format!("parameters for {label}"));
    // The bar redrawn in place is cleared, not left at its last figure above what follows.
    if tty && started.elapsed() >= Duration::from_secs(1) {
        eprint!("\r\x1b[2K");
        if loaded.is_ok() {
            let secs = started.elapsed().as_secs_f64();
            eprintln!("params: {label} ready in {secs:.1} s");
        }
    }
    if let (Ok((_, Some((pc, Some(Origin::Generated { seconds, .. }))))), None) = (&loaded, sink) {
        eprintln!(
            "circuit: recorded {label} in {seconds:.1} s ({} terms, {:.0} MB)",
            pc.nnz(),
            pc.bytes() as f64 / 1e6
        );
    }
    // Parameters the user named that do not fit are bad input; a failed setup is not.
    let loaded = loaded.map(|(l, recorded)| (l, recorded.map(|(pc, _)| pc)));
    match session.params_file {
        true => usage(loaded),
        false => loaded,
    }
}

/// Where one of setup's two threads reports: every report to the dashboard's sink, else lines
/// on stderr as `lines` lets them through. On a terminal the parameters' are one `bar` redrawn
/// in place, and the recording's lines of their own clear that bar first.
struct Report<'a> {
    lines: &'a Throttle,
    sink: Sink<'a>,
    started: Instant,
    tty: bool,
    bar: bool,
}

impl Report<'_> {
    /// `what`: the dashboard's name of the work and the line's.
    fn report(&self, what: &[String; 2], stage: &str, done: usize, total: usize) {
        let Some(left) = self.lines.due(stage, done, total) else {
            return;
        };
        let elapsed = self.started.elapsed();
        if let Some(sink) = self.sink {
            let what = format!("{}: {stage}", what[0]);
            return sink(&Step {
                what: &what,
                done,
                total,
                elapsed,
                left,
            });
        }
        let line = progress_line(&what[1], stage, (done, total), elapsed, left);
        match (self.tty, self.bar) {
            (true, true) => eprint!("\r\x1b[2K{line}"),
            (true, false) => eprintln!("\r\x1b[2K{line}"),
            (false, _) => eprintln!("{line}"),
        }
    }
}

/// A progress report's lines: at most one every `every`, but at once when a stage begins;
/// what is left reckoned from the stage's own rate since its first report (a stage's start
/// says nothing of the next's).
struct Throttle {
    every: Duration,
    seen: parking_lot::Mutex<Option<Seen>>,
}

/// The stage being reported: its name, when it was first reported and how far it was then,
/// and when a line was last written.
struct Seen {
    stage: String,
    first: (Instant, usize),
    written: Instant,
}

impl Throttle {
    fn new(every: Duration) -> Self {
        Throttle {
            every,
            seen: parking_lot::Mutex::new(None),
        }
    }

    /// Whether a report is due now, and if so what is left of its stage (None: not known yet).
    fn due(&self, stage: &str, done: usize, total: usize) -> Option<Option<Duration>> {
        let now = Instant::now();
        let mut seen = self.seen.lock();
        let s = match seen.as_mut() {
            Some(s) if s.stage == stage => {
                if now.duration_since(s.written) < self.every {
                    return None;
                }
                s.written = now;
                s
            }
            _ => seen.insert(Seen {
                stage: stage.to_string(),
                first: (now, done),
                written: now,
            }),
        };
        let (t0, done0) = s.first;
        Some((done > done0 && total > done).then(|| {
            now.duration_since(t0)
                .mul_f64((total - done) as f64 / (done - done0) as f64)
        }))
    }
}

/// `params: generating for sha256-4: G1 queries [######------]  52% · 0:41 elapsed, ~0:38 left`
/// (`what` is all before the stage).
fn progress_line(
    what: &str,
    stage: &str,
    (done, total): (usize, usize),
    took: Duration,
    left: Option<Duration>,
) -> String {
    let frac = if total > 0 {
        (done as f64 / total as f64).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = (frac * 20.0).round() as usize;
    let clock = |s: f64| format!("{}:{:02}", (s / 60.0) as u64, (s % 60.0) as u64);
    let left = match left {
        Some(l) => format!(", ~{} left", clock(l.as_secs_f64())),
        None => String::new(),
    };
    format!(
        "{what}: {stage} [{}{}] {:>3.0}% · {} elapsed{left}",
        "#".repeat(filled),
        "-".repeat(20 - filled),
        frac * 100.0,
        clock(took.as_secs_f64())
    )
}

/// Page-locks the prestaging memory before the first job, saying so when it takes a while.
/// Failing to is not an error: partitions then stage as they go.
fn reserve_prestage(
    session: &Session,
    workload: &Workload,
    loaded: &Loaded,
    precompiled: bool,
    sink: Sink,
) {
    let start = Instant::now();
    if let Some(sink) = sink {
        sink(&Step {
            what: "page-locking memory for witnesses",
            done: 0,
            total: 0,
            elapsed: Duration::ZERO,
            left: None,
        });
    }
    match session
        .engine
        .reserve_prestage(workload, loaded, precompiled)
    {
        Ok(0) => {}
        Ok(bytes) => {
            let line = format!(
                "prestage: {:.1} GB of page-locked memory for witnesses in {:.1} s",
                bytes as f64 / 1e9,
                start.elapsed().as_secs_f64()
            );
            tracing::info!("{line}");
            if sink.is_none() {
                eprintln!("{line}");
            }
        }
        Err(e) => tracing::warn!(
            "prestage: could not page-lock memory ahead ({e:#}); partitions will stage as they go"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_progress_has_a_bar_the_elapsed_time_and_what_is_left() {
        let line = progress_line(
            "params: generating for k14",
            "G1 queries",
            (25, 100),
            Duration::from_secs(30),
            Some(Duration::from_secs(90)),
        );
        assert_eq!(
            line,
            "params: generating for k14: G1 queries [#####---------------]  25% · 0:30 elapsed, ~1:30 left"
        );
        let line = progress_line("k14", "tau", (0, 0), Duration::ZERO, None);
        assert!(!line.contains("left"));
    }

    /// A stage's first report is written at once and says nothing of what is left; later ones
    /// wait their turn and reckon what is left from the stage's own rate.
    #[test]
    fn each_stage_is_shown_as_it_begins_and_timed_by_its_own_rate() {
        let t = Throttle::new(Duration::from_millis(50));
        let first = t.due("evaluating", 0, 100).expect("a stage's first report");
        assert_eq!(first, None, "nothing known yet of what is left");
        assert!(
            t.due("evaluating", 10, 100).is_none(),
            "within the throttle"
        );
        std::thread::sleep(Duration::from_millis(60));
        let left = t.due("evaluating", 50, 100).expect("due").expect("known");
        // 50 done in about 60 ms: about 60 ms left, not the whole run's time.
        assert!(left < Duration::from_secs(1), "{left:?}");
        assert_eq!(
            t.due("G1 queries", 0, 100),
            Some(None),
            "a new stage at once"
        );
    }
}
