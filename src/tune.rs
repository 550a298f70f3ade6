//! `provetop tune`: one engine, jobs kept flowing, and a greedy search over its live
//! `[engine]` settings (and the jobs kept in flight); a table of what was tried, the best
//! configuration, and `--write` to save it. The search itself is in `search`.

pub mod budget;
mod search;

use anyhow::{Context, Result};
use crossbeam_channel::select;
use provetop_engine::backend::BackendKind;
use provetop_engine::circuit::Workload;
use provetop_engine::pipeline::{JobSpec, Outcome};
use provetop_telemetry::config::{cores, EngineConfig, Liveness, AUTO_KEYS, KEYS};
use provetop_telemetry::report::ReportBuilder;
use provetop_telemetry::Nanos;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::cli::{TuneArgs, TuneBudget};
use crate::run::{self, Session};
use search::{Change, Search, Step, CONCURRENCY, MIN_WINDOW};

pub fn main(args: &TuneArgs) -> Result<i32> {
    let write_to = match args.write {
        false => None,
        true => Some(run::usage(write_path(args))?),
    };
    let engine_args = args.engine_args();
    let mut session = run::start(&engine_args)?;
    crate::params::prepare(&session)?;
    let engine = &session.engine;
    let plan = &session.plan;
    let cuda = engine.backend() == BackendKind::Cuda;
    eprintln!(
        "tune: {} · {} partition(s) a job · {} backend · budget {} · start: {} job(s) in flight",
        plan.workload.label(),
        plan.partitions,
        engine.backend(),
        describe(args.budget),
        plan.concurrency
    );
    let start_values = values(
        &engine.config(),
        &plan.workload,
        engine.abc_on_devices(),
        plan.concurrency,
    );
    let mut search = Search::new(search::knobs(cuda, cores() as u64), start_values.clone());
    let out = drive(&session, &mut search, args.budget)?;
    session.engine.shutdown();
    run::finish_recording(session.recorder.take(), Some((out.start, out.end)));

    let defaults = default_values(&session);
    let best = search.current.clone();
    let differing: BTreeMap<String, String> = best
        .iter()
        .filter(|(k, v)| k.as_str() != CONCURRENCY && defaults.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let written = match (&write_to, out.stopped) {
        (Some(path), false) => Some(write(path, &engine_args, &best, &differing)?),
        _ => None,
    };
    let stdout = std::io::stdout();
    let mut w = stdout.lock();
    if args.json {
        let report = json!({
            "version": 1,
            "budget": args.budget.to_string(),
            "workload": plan.workload.label(),
            "partitions": plan.partitions,
            "backend": session.engine.backend(),
            "threshold": search.threshold(),
            "steps": search.steps,
            "best": {
                "engine": differing,
                "concurrency": best.get(CONCURRENCY).and_then(|c| c.parse::<u64>().ok()),
                "proofs_per_hour": search.current_rate,
                "ratio": best_ratio(&search.steps),
            },
            "start": start_values,
            "proofs": { "finished": out.finished, "verified": out.verified, "failed": out.failed.len() },
            "ended": out.ended,
            "unfinished_jobs": out.unfinished,
            "written": written.as_ref().map(|(p, _)| p.display().to_string()),
        });
        serde_json::to_writer(&mut w, &report)?;
        writeln!(w)?;
    } else {
        write_table(&mut w, &search)?;
        write_best(&mut w, &search, &differing, &out)?;
    }
    match (&write_to, &written) {
        (Some(_), None) => eprintln!("tune: stopped early, so nothing was written (--write)"),
        (Some(_), Some((p, 0))) => eprintln!(
            "tune: nothing to write to {}: the best configuration is the defaults",
            p.display()
        ),
        (Some(_), Some((p, n))) => {
            eprintln!("tune: wrote {n} [engine] field(s) to {}", p.display())
        }
        _ => {}
    }
    for f in &out.failed {
        eprintln!("tune: {f}");
    }
    Ok(match (out.failed.is_empty(), out.unfinished) {
        (false, _) => 1,
        (true, 0) => 0,
        (true, _) => 3,
    })
}

/// `5m` or `200 proofs`.
fn describe(b: TuneBudget) -> String {
    match b {
        TuneBudget::Time(d) => clock(d.as_secs_f64()),
        TuneBudget::Proofs(n) => format!("{n} proofs"),
    }
}

fn clock(s: f64) -> String {
    format!("{}:{:02}", (s / 60.0) as u64, (s % 60.0) as u64)
}

/// The live keys (and `concurrency`) as the search compares them: `precompiled` as jobs of
/// this workload take it.
fn values(
    cfg: &EngineConfig,
    workload: &Workload,
    abc_on_devices: bool,
    concurrency: u64,
) -> BTreeMap<String, String> {
    let mut v: BTreeMap<String, String> = KEYS
        .iter()
        .filter(|k| EngineConfig::liveness(k) != Some(Liveness::Startup))
        .filter_map(|k| Some((k.to_string(), cfg.get(k)?)))
        .collect();
    let precompiled = provetop_engine::tuning::precompiled_for(cfg, workload, abc_on_devices);
    v.insert("precompiled".into(), precompiled.to_string());
    v.insert(CONCURRENCY.into(), concurrency.to_string());
    v
}

/// The defaults as this engine resolves them on this machine: what "differs" is measured by.
fn default_values(session: &Session) -> BTreeMap<String, String> {
    let engine = &session.engine;
    let gpus = match engine.backend() {
        BackendKind::Cuda => engine.devices().len(),
        _ => 0,
    };
    let mut cfg = EngineConfig::default();
    let machine = provetop_engine::tuning::Machine::here(engine.backend(), gpus);
    provetop_engine::tuning::resolve(&mut cfg, &machine);
    values(
        &cfg,
        &session.plan.workload,
        engine.abc_on_devices(),
        session.plan.concurrency,
    )
}

/// What the search loop hands back.
struct Driven {
    start: Nanos,
    end: Nanos,
    finished: u64,
    verified: u64,
    /// `job 3 partition 0: …` for each partition that failed.
    failed: Vec<String>,
    /// Jobs cancelled by a stop.
    unfinished: u64,
    /// A signal stopped the search.
    stopped: bool,
    /// Why submitting ended: `budget`, `converged`, `signal`, `failed proof`.
    ended: &'static str,
}

/// The jobs, the steps and the budget, until the budget is spent (and the jobs in flight have
/// finished), the search has nothing left to try, a proof fails or a signal comes.
fn drive(session: &Session, search: &mut Search, budget: TuneBudget) -> Result<Driven> {
    let engine = &session.engine;
    let plan = &session.plan;
    let stop = run::stop_flag()?;
    let events = engine.bus().subscribe(1 << 20);
    let mut report = ReportBuilder::default();
    let spec = JobSpec {
        workload: plan.workload.clone(),
        partitions: plan.partitions,
        seed: plan.seed,
        priority: provetop_engine::pipeline::Priority::Normal,
    };
    let p = plan.partitions as u64;
    let began = Instant::now();
    let start = engine.clock().now();
    let mut progress = Progress::new(budget);
    let mut open: BTreeSet<u64> = BTreeSet::new();
    let mut concurrency = plan.concurrency;
    let (mut submitted, mut finished, mut verified) = (0u64, 0u64, 0u64);
    let mut failed = vec![];
    let mut ended: Option<&'static str> = None;
    let mut stopped = false;
    // Finished partitions the running step's window counts; None until it can be planned.
    let mut target: Option<u64> = None;
    engine.mark("tune: start");
    search.begin_start([]);
    loop {
        let budget_open = match budget {
            TuneBudget::Proofs(n) => submitted < n,
            TuneBudget::Time(_) => true,
        };
        while ended.is_none() && budget_open && (open.len() as u64) < concurrency {
            open.insert(engine.submit(spec.clone())?);
            submitted += p;
        }
        if ended.is_none() && !budget_open {
            ended = Some("budget");
        }
        if ended.is_some() && open.is_empty() {
            break;
        }
        if stop.load(Ordering::SeqCst) {
            stopped = true;
            ended = Some("signal");
            break;
        }
        if !failed.is_empty() {
            ended = Some("failed proof");
            break;
        }
        select! {
            recv(engine.outcomes()) -> o => match o.context("the engine stopped")? {
                Outcome::Partition(r) => {
                    finished += 1;
                    let rec = &r.record;
                    match rec.verified {
                        true => verified += 1,
                        false => failed.push(format!(
                            "job {} partition {}: proof FAILED: {}",
                            rec.job,
                            rec.partition,
                            rec.error.as_deref().unwrap_or("did not verify")
                        )),
                    }
                    search.partition(rec.t, rec.job);
                    report.add_proof(rec.clone());
                }
                Outcome::JobDone { job, .. } => {
                    open.remove(&job);
                    search.job_done(job, engine.clock().now());
                }
            },
            recv(events.rx) -> e => if let Ok(e) = e { run::observe(&mut report, &e) },
            default(Duration::from_millis(100)) => {}
        }
        for e in events.rx.try_iter().take(4096) {
            run::observe(&mut report, &e);
        }
        let in_flight = concurrency * p;
        let rate = search.rate_hint();
        let elapsed = began.elapsed().as_secs_f64();
        // Partitions the budget still allows, at the rate measured so far.
        let parts_left = match (budget, rate) {
            (TuneBudget::Proofs(n), _) => Some(n.saturating_sub(finished) as f64),
            (TuneBudget::Time(d), Some(r)) => Some((d.as_secs_f64() - elapsed).max(0.0) * r),
            (TuneBudget::Time(_), None) => None,
        };
        if let (TuneBudget::Time(d), None) = (budget, ended) {
            // Stop submitting when what is in flight will take what time is left.
            let drain = rate.map_or(0.0, |r| in_flight as f64 / r.max(1e-9));
            if elapsed + drain >= d.as_secs_f64() {
                ended = Some("budget");
            }
        }
        if target.is_none() {
            target = parts_left.map(|left| {
                // The start is the reference every ratio divides by: it gets a larger share.
                search::window_target(left, 4, in_flight).unwrap_or(MIN_WINDOW)
            });
        }
        let counted = search.progress().map_or(0, |(n, _)| n);
        if target.is_some_and(|t| counted >= t) {
            if let Some(back) = search.conclude(true) {
                set_back(engine, &mut concurrency, &back);
            }
            if let Some(step) = search.steps.last() {
                progress.step(step);
            }
            target = None;
            if ended.is_none() {
                let next = next_step(
                    session,
                    search,
                    &report,
                    &mut concurrency,
                    parts_left,
                    in_flight,
                    &open,
                );
                match next {
                    Ok(t) => target = Some(t),
                    Err(why) => ended = Some(why),
                }
            }
        }
        progress.draw(search, finished, elapsed, target);
    }
    let end = engine.clock().now();
    let unfinished = open.len() as u64;
    for job in &open {
        engine.cancel(*job);
    }
    if search.progress().is_some() {
        if let Some(back) = search.conclude(false) {
            set_back(engine, &mut concurrency, &back);
        }
        if let Some(step) = search.steps.last() {
            progress.step(step);
        }
    }
    progress.done();
    Ok(Driven {
        start,
        end,
        finished,
        verified,
        failed,
        unfinished,
        stopped,
        ended: ended.unwrap_or("budget"),
    })
}

/// Picks the next change, applies it and begins its window; returns the window's target, or
/// why the search ends (`budget`: not even the shortest window fits, `converged`: nothing left).
fn next_step(
    session: &Session,
    search: &mut Search,
    report: &ReportBuilder,
    concurrency: &mut u64,
    parts_left: Option<f64>,
    in_flight: u64,
    open: &BTreeSet<u64>,
) -> std::result::Result<u64, &'static str> {
    let engine = &session.engine;
    let advice = match search.current_window {
        Some((from, to)) => {
            let v = report.verdict(from, to, &engine.config(), cores(), Some(*concurrency));
            v.advice
        }
        None => vec![],
    };
    loop {
        let change = search.next(&advice).ok_or("converged")?;
        // This step and those queued behind it share what the budget leaves.
        let left = parts_left.unwrap_or(f64::INFINITY);
        let candidates = (search.queued() + 1).min(8);
        let target = search::window_target(left, candidates, in_flight).ok_or("budget")?;
        match apply(engine, concurrency, &change) {
            Ok(()) => {
                engine.mark(&format!(
                    "tune step {}: {}",
                    search.steps.len(),
                    change.label()
                ));
                search.begin(change, open.iter().copied());
                return Ok(target);
            }
            Err(why) => search.refused(change, why),
        }
    }
}

fn apply(
    engine: &provetop_engine::pipeline::EngineHandle,
    concurrency: &mut u64,
    c: &Change,
) -> std::result::Result<(), String> {
    if c.key == CONCURRENCY {
        *concurrency = c.to.parse::<u64>().map_err(|e| e.to_string())?;
        return Ok(());
    }
    engine
        .reconfigure(&[(c.key.clone(), c.to.clone())], "tune")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Sets a change back; a refusal here (the old value was in force a moment ago) is logged.
fn set_back(engine: &provetop_engine::pipeline::EngineHandle, concurrency: &mut u64, c: &Change) {
    let back = Change {
        key: c.key.clone(),
        from: c.to.clone(),
        to: c.from.clone(),
        expected_gain: None,
    };
    if let Err(e) = apply(engine, concurrency, &back) {
        tracing::warn!("tune: setting {} back to {}: {e}", c.key, c.from);
    }
}

/// The best step's ratio to the start (1 when nothing was kept).
fn best_ratio(steps: &[Step]) -> f64 {
    steps
        .iter()
        .rfind(|s| matches!(s.verdict, search::Verdict::Kept))
        .map_or(1.0, |s| s.ratio)
}

/// A value as the config file writes it: numbers and booleans bare, the rest quoted.
fn toml_value(v: &str) -> String {
    match v.parse::<i64>().is_ok() || v == "true" || v == "false" {
        true => v.to_string(),
        false => format!("\"{v}\""),
    }
}

fn write_table(w: &mut impl Write, search: &Search) -> Result<()> {
    writeln!(
        w,
        "{:>4}  {:<44} {:>7} {:>8} {:>10} {:>8}  kept",
        "step", "change", "proofs", "seconds", "proofs/h", "vs start"
    )?;
    for s in &search.steps {
        let change = s
            .change
            .as_ref()
            .map_or("(start)".to_string(), Change::label);
        let (rate, ratio) = match s.proofs {
            0 => ("-".to_string(), "-".to_string()),
            _ => (
                format!("{:.0}", s.proofs_per_hour),
                format!("{:.2}×", s.ratio),
            ),
        };
        writeln!(
            w,
            "{:>4}  {:<44} {:>7} {:>8.1} {:>10} {:>8}  {}",
            s.step,
            change,
            s.proofs,
            s.seconds,
            rate,
            ratio,
            s.verdict.word()
        )?;
    }
    Ok(())
}

fn write_best(
    w: &mut impl Write,
    search: &Search,
    differing: &BTreeMap<String, String>,
    out: &Driven,
) -> Result<()> {
    writeln!(
        w,
        "a change was kept when it beat the configuration in force by more than {:.0} % (twice the windows' noise, at least 3 %)",
        search.threshold() * 100.0
    )?;
    let ended = match out.ended {
        "converged" => "the search converged: every single change from the best was measured",
        "budget" => "the budget was spent",
        "signal" => "stopped by a signal",
        _ => "stopped by a failed proof",
    };
    writeln!(w, "{ended}")?;
    if let Some(rate) = search.current_rate {
        writeln!(
            w,
            "best: {rate:.0} proofs/h, {:.2}× the start",
            best_ratio(&search.steps)
        )?;
    }
    match differing.is_empty() {
        true => writeln!(
            w,
            "best configuration: the defaults (no [engine] field differs from them)"
        )?,
        false => {
            writeln!(
                w,
                "best configuration ([engine] fields that differ from the defaults):"
            )?;
            for (k, v) in differing {
                writeln!(w, "  {k} = {}", toml_value(v))?;
            }
        }
    }
    if let Some(c) = search.current.get(CONCURRENCY) {
        writeln!(w, "jobs in flight: {c} (--concurrency {c})")?;
    }
    let all = out.failed.is_empty() && out.verified == out.finished;
    writeln!(
        w,
        "proofs: {} finished, {} verified{}",
        out.finished,
        out.verified,
        match all {
            true => " (every proof verified)",
            false => "",
        }
    )?;
    if out.unfinished > 0 {
        writeln!(w, "stopped with {} job(s) unfinished", out.unfinished)?;
    }
    Ok(())
}

/// `--write`'s file: `--config`, else the default path.
fn write_path(args: &TuneArgs) -> Result<PathBuf> {
    args.session
        .config
        .clone()
        .or_else(crate::config_file::default_path)
        .context("--write: nowhere to write: give --config FILE, or set HOME")
}

/// Writes the fields that differ from the defaults, and sets back to the default any field the
/// file holds with another value than the best configuration's; returns the path and the
/// number of fields written.
fn write(
    path: &std::path::Path,
    args: &crate::cli::EngineArgs,
    best: &BTreeMap<String, String>,
    differing: &BTreeMap<String, String>,
) -> Result<(PathBuf, usize)> {
    let file = crate::config_file::load(args.config.as_deref())?;
    let mut changes = differing.clone();
    for (key, value) in &file.engine {
        let Some(want) = best.get(key).filter(|_| !differing.contains_key(key)) else {
            continue;
        };
        let text = match value {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if &text != want && text != "auto" {
            let default = match AUTO_KEYS.contains(&key.as_str()) {
                true => "auto".to_string(),
                false => want.clone(),
            };
            changes.insert(key.clone(), default);
        }
    }
    if changes.is_empty() {
        return Ok((path.to_path_buf(), 0));
    }
    provetop_ui::config_edit::save_engine(path, &changes)
        .map_err(|e| anyhow::anyhow!("--write: {e}"))?;
    Ok((path.to_path_buf(), changes.len()))
}

/// Progress on stderr: a bar redrawn in place on a terminal, a line per step elsewhere.
struct Progress {
    tty: bool,
    budget: TuneBudget,
    last: Instant,
    drawn: bool,
}

impl Progress {
    fn new(budget: TuneBudget) -> Progress {
        Progress {
            tty: std::io::stderr().is_terminal(),
            budget,
            last: Instant::now(),
            drawn: false,
        }
    }

    /// A finished step, kept on screen.
    fn step(&mut self, s: &Step) {
        self.clear();
        let change = s
            .change
            .as_ref()
            .map_or("the start".to_string(), Change::label);
        eprintln!(
            "tune: step {} {change}: {} proofs in {:.1} s, {:.0} proofs/h ({:.2}× the start): {}",
            s.step,
            s.proofs,
            s.seconds,
            s.proofs_per_hour,
            s.ratio,
            s.verdict.word()
        );
    }

    fn draw(&mut self, search: &Search, finished: u64, elapsed: f64, target: Option<u64>) {
        if !self.tty || self.last.elapsed() < Duration::from_millis(250) {
            return;
        }
        self.last = Instant::now();
        let frac = match self.budget {
            TuneBudget::Time(d) => elapsed / d.as_secs_f64(),
            TuneBudget::Proofs(n) => finished as f64 / n as f64,
        }
        .clamp(0.0, 1.0);
        let filled = (frac * 20.0).round() as usize;
        let what = match search.running_change() {
            None => "finishing jobs in flight".to_string(),
            Some(c) => {
                let label = c.map_or("the start".to_string(), Change::label);
                match search.progress() {
                    Some((n, true)) => format!(
                        "step {} {label}: {n}/{} proofs",
                        search.steps.len(),
                        target.map_or("?".into(), |t| t.to_string())
                    ),
                    _ => format!(
                        "step {} {label}: waiting out earlier jobs",
                        search.steps.len()
                    ),
                }
            }
        };
        let best = search
            .current_rate
            .map_or(String::new(), |r| format!(" · best {r:.0} proofs/h"));
        eprint!(
            "\r\x1b[2Ktune [{}{}] {:>3.0}% {} · {what}{best}",
            "#".repeat(filled),
            "-".repeat(20 - filled),
            frac * 100.0,
            clock(elapsed)
        );
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }

    fn done(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_take_precompiled_as_jobs_of_the_workload_do() {
        let mut cfg = EngineConfig::default();
        let m = provetop_engine::tuning::Machine {
            cores: 2,
            gpus: 0,
            backend: BackendKind::Cpu,
        };
        provetop_engine::tuning::resolve(&mut cfg, &m);
        let synthetic = Workload::Synthetic {
            log2_constraints: 12,
        };
        let v = values(&cfg, &synthetic, false, 6);
        assert_eq!(v["precompiled"], "false");
        assert_eq!(v["synthesis_workers"], "2");
        assert_eq!(v[CONCURRENCY], "6");
        assert!(!v.contains_key("backend"), "startup keys are not searched");
        assert_eq!(toml_value("two-lock"), "\"two-lock\"");
        assert_eq!(toml_value("3"), "3");
    }
}
