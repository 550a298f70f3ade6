//! A run's parameters before its first job: loaded from the cache or generated (progress on
//! stderr), each circuit recorded for the pre-compiled path, and the prestaging memory
//! page-locked ahead.

use anyhow::{Context, Result};
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
}

/// Where setup reports its steps: the dashboard's header, or stderr when `None`.
pub type Sink<'a> = Option<&'a (dyn Fn(&Step) + Sync)>;

/// [`prepare`], reporting each step to `sink` (stderr when `None`).
pub fn prepare_with(session: &Session, sink: Sink) -> Result<Arc<Loaded>> {
    let mut first = None;
    let mut largest: Option<(Arc<Loaded>, bool)> = None;
    for part in &session.plan.parts {
        let precompiled = session.engine.precompiled_for(&part.workload);
        let loaded = load(session, &part.workload, precompiled, sink)?;
        let rows = |l: &Loaded| l.shape.num_rows();
        if largest
            .as_ref()
            .is_none_or(|(l, _)| rows(l) < rows(&loaded))
        {
            largest = Some((loaded.clone(), precompiled));
        }
        first.get_or_insert(loaded);
    }
    if let Some((loaded, precompiled)) = largest {
        reserve_prestage(session, &loaded, precompiled, sink);
    }
    first.context("a run without a workload")
}

/// One workload's parameters, and its recorded circuit when `precompiled` (the two made side by
/// side), with progress on stderr at most once a second.
fn load(
    session: &Session,
    workload: &Workload,
    precompiled: bool,
    sink: Sink,
) -> Result<Arc<Loaded>> {
    let started = Instant::now();
    // When the last line was written, and of which stage.
    let last = parking_lot::Mutex::new((Instant::now(), String::new()));
    let label = workload.label();
    let tty = std::io::stderr().is_terminal() && sink.is_none();
    let params = |stage: &str, done: usize, total: usize| {
        if let Some(sink) = sink {
            let what = format!("parameters for {label}: {stage}");
            return sink(&Step {
                what: &what,
                done,
                total,
                elapsed: started.elapsed(),
            });
        }
        let mut last = last.lock();
        // On a terminal one line redrawn in place; elsewhere a line every few seconds, and at
        // once when a stage begins (evaluating the circuit may take minutes before its next).
        let every = Duration::from_secs(if tty { 1 } else { 5 });
        if last.0.elapsed() >= every || last.1 != stage {
            *last = (Instant::now(), stage.to_string());
            let what = format!("params: generating for {label}");
            let line = progress_line(&what, stage, done, total, started.elapsed());
            match tty {
                true => eprint!("\r\x1b[2K{line}"),
                false => eprintln!("{line}"),
            }
        }
    };
    let last_recorded = parking_lot::Mutex::new(Instant::now());
    let recording = |_: &str, done: usize, total: usize| {
        if let Some(sink) = sink {
            let what = format!("recording circuit {label}");
            return sink(&Step {
                what: &what,
                done,
                total,
                elapsed: started.elapsed(),
            });
        }
        let mut last = last_recorded.lock();
        if last.elapsed() >= Duration::from_secs(5) && total > 0 {
            *last = Instant::now();
            // Its own line, above the parameters' bar when that is redrawn in place.
            let clear = if tty { "\r\x1b[2K" } else { "" };
            let what = format!("circuit: recording {label}");
            let line = progress_line(&what, "constraints", done, total, started.elapsed());
            eprintln!("{clear}{line}");
        }
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
    let loaded = loaded.map(|(l, _)| l);
    match session.params_file {
        true => usage(loaded),
        false => loaded,
    }
}

/// `params: generating for sha256-4: G1 queries [######------]  52% · 0:41 elapsed, ~0:38 left`
/// (`what` is all before the stage).
fn progress_line(what: &str, stage: &str, done: usize, total: usize, took: Duration) -> String {
    let frac = if total > 0 {
        (done as f64 / total as f64).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let filled = (frac * 20.0).round() as usize;
    let clock = |s: f64| format!("{}:{:02}", (s / 60.0) as u64, (s % 60.0) as u64);
    let secs = took.as_secs_f64();
    let left = match frac > 0.0 {
        true => format!(", ~{} left", clock(secs * (1.0 - frac) / frac)),
        false => String::new(),
    };
    format!(
        "{what}: {stage} [{}{}] {:>3.0}% · {} elapsed{left}",
        "#".repeat(filled),
        "-".repeat(20 - filled),
        frac * 100.0,
        clock(secs)
    )
}

/// Page-locks the prestaging memory before the first job, saying so when it takes a while.
/// Failing to is not an error: partitions then stage as they go.
fn reserve_prestage(session: &Session, loaded: &Loaded, precompiled: bool, sink: Sink) {
    let start = Instant::now();
    if let Some(sink) = sink {
        sink(&Step {
            what: "page-locking memory for witnesses",
            done: 0,
            total: 0,
            elapsed: Duration::ZERO,
        });
    }
    match session.engine.reserve_prestage(loaded, precompiled) {
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
            25,
            100,
            Duration::from_secs(30),
        );
        assert_eq!(
            line,
            "params: generating for k14: G1 queries [#####---------------]  25% · 0:30 elapsed, ~1:30 left"
        );
        assert!(!progress_line("k14", "tau", 0, 0, Duration::ZERO).contains("left"));
    }
}
