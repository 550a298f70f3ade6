//! The dashboard over the embedded engine: the terminal, and one loop that feeds the engine's
//! telemetry (and warnings from the log) into the UI, draws it, and turns the UI's `Control`s
//! into engine calls. The UI never sees the engine itself, only events, so a replay can take
//! the engine's place.

use anyhow::{Context, Result};
use crossbeam_channel::Receiver;
use provetop_engine::control::Control;
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome};
use provetop_engine::telemetry::samplers::Samplers;
use provetop_engine::telemetry::{Event, LogLine, MachineInfo, SessionInfo, Subscription};
use provetop_ui::{terminal, App, AppOptions, UiSettings};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::cli::Cli;
use crate::config_file;
use crate::logging::{self, PaneLine};
use crate::run::{self, Session};

/// Events the dashboard may lag behind by before the bus starts dropping them for it.
const BUS_CAPACITY: usize = 1 << 18;

pub fn main(cli: &Cli) -> Result<i32> {
    let args = &cli.engine;
    let file = run::usage(config_file::load(args.config.as_deref()))?;
    let mut settings = run::usage(UiSettings::from_table(&file.ui).map_err(|e| {
        let path = file.path.as_ref().map(|p| p.display().to_string());
        anyhow::anyhow!("config file {}: {e}", path.unwrap_or_default())
    }))?;
    if let Some(theme) = &cli.theme {
        settings.theme = theme.clone();
    }
    let session = run::start(args)?;
    // On the normal screen, before the dashboard takes it: parameter generation reports there.
    run::prepare_params(&session)?;
    let engine = &session.engine;
    let events = engine.bus().subscribe(BUS_CAPACITY);
    let handle = Arc::new(engine.clone());
    let _samplers = Samplers::for_engine(
        engine.bus(),
        engine.clock(),
        &session.cfg.devices,
        Arc::downgrade(&handle),
        |e: &EngineHandle| e.status(),
    );
    let config_path = args.config.clone().or_else(config_file::default_path);
    let theme_dir = config_file::default_path().and_then(|p| p.parent().map(|d| d.join("themes")));
    let mut app = App::new(
        session_info(&session),
        settings,
        AppOptions {
            partitions: session.plan.partitions,
            config_path,
            theme_dir,
        },
    );
    let mut jobs = Jobs::start(&session, &mut app);
    let mut tui = terminal::enter().context("setting up the terminal")?;
    let result = event_loop(&mut tui, &mut app, &session, &events, &mut jobs);
    drop(tui);
    if terminal::panicked() {
        anyhow::bail!("a thread panicked; see the message above and the log");
    }
    result?;
    let p = &app.state.pipeline;
    eprintln!(
        "provetop: {} proof(s) verified, {} failed, in {:.1} s",
        p.verified,
        p.failed,
        engine.clock().now() as f64 / 1e9
    );
    // Open jobs are dropped; running partitions end with the process.
    for j in app
        .state
        .pipeline
        .open_jobs()
        .map(|j| j.job)
        .collect::<Vec<_>>()
    {
        engine.cancel(j);
    }
    Ok(if p.failed > 0 { 1 } else { 0 })
}

fn session_info(session: &Session) -> SessionInfo {
    let e = &session.engine;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    SessionInfo {
        machine: MachineInfo::detect(),
        devices: e.devices(),
        config: e.config(),
        workload: session.plan.workload.label(),
        started_unix: now - e.clock().now() as f64 / 1e9,
    }
}

/// The session's plan: `--proofs` jobs, `--concurrency` of them submitted at once, plus the
/// jobs submitted from the dashboard.
struct Jobs {
    spec: JobSpec,
    planned: u64,
    submitted: u64,
}

impl Jobs {
    fn start(session: &Session, app: &mut App) -> Jobs {
        let plan = &session.plan;
        let mut jobs = Jobs {
            spec: JobSpec {
                workload: plan.workload.clone(),
                partitions: plan.partitions,
                seed: plan.seed,
            },
            planned: plan.proofs,
            submitted: 0,
        };
        session.engine.schedule(plan.schedule.clone());
        for _ in 0..plan.proofs.min(plan.concurrency) {
            jobs.next(&session.engine, app);
        }
        jobs
    }

    fn next(&mut self, engine: &EngineHandle, app: &mut App) {
        if self.submitted < self.planned {
            self.submitted += 1;
            if let Err(e) = engine.submit(self.spec.clone()) {
                app.report(&format!("submitting a job: {e:#}"));
            }
        }
    }

    /// Outcomes: a finished job makes room for the next planned one.
    fn drain(&mut self, engine: &EngineHandle, app: &mut App) {
        while let Ok(o) = engine.outcomes().try_recv() {
            if let Outcome::JobDone { .. } = o {
                self.next(engine, app);
            }
        }
    }
}

fn event_loop(
    tui: &mut terminal::Tui,
    app: &mut App,
    session: &Session,
    events: &Subscription,
    jobs: &mut Jobs,
) -> Result<()> {
    let engine = &session.engine;
    let pane = logging::pane();
    let mut next_frame = Instant::now();
    loop {
        if tui.signalled() || terminal::panicked() {
            return Ok(());
        }
        let frame = Duration::from_secs_f64(1.0 / app.ui.settings.refresh_hz);
        let timeout = next_frame.saturating_duration_since(Instant::now());
        let mut input = false;
        let mut wait = timeout;
        // A bounded batch, so signals and frames are seen even under a flood of input.
        for _ in 0..256 {
            let Some(ev) = tui.poll(wait)? else { break };
            input = true;
            wait = Duration::ZERO;
            for c in app.handle(&ev) {
                if !control(c, engine, jobs, app) {
                    return Ok(());
                }
            }
        }
        let now = Instant::now();
        if input || now >= next_frame {
            ingest(app, engine, events, pane.as_ref(), jobs);
            tui.terminal.draw(|f| app.draw(f))?;
            if now >= next_frame {
                next_frame = (next_frame + frame).max(now);
            }
        }
    }
}

/// Everything that arrived since the last frame.
fn ingest(
    app: &mut App,
    engine: &EngineHandle,
    events: &Subscription,
    pane: Option<&Receiver<PaneLine>>,
    jobs: &mut Jobs,
) {
    for e in events.rx.try_iter() {
        app.state.apply(&e);
    }
    app.state.dropped = events.dropped();
    if let Some(rx) = pane {
        let clock = engine.clock();
        for l in rx.try_iter() {
            app.state.apply(&Event::Log(LogLine {
                t: clock.at(l.at),
                level: l.level,
                message: l.message,
            }));
        }
    }
    jobs.drain(engine, app);
    app.state.advance(engine.clock().now());
}

/// Carries out one `Control`; false on quit.
fn control(c: Control, engine: &EngineHandle, jobs: &mut Jobs, app: &mut App) -> bool {
    let now = app.state.now;
    match c {
        Control::Quit => return false,
        Control::Reconfigure { changes } => match engine.reconfigure(&changes, "ui") {
            Ok(applied) if applied.is_empty() => app.ui.notify(now, "no change", false),
            Ok(applied) => {
                let what: Vec<String> = applied
                    .iter()
                    .map(|c| format!("{}: {} → {}", c.key, c.from, c.to))
                    .collect();
                app.ui
                    .notify(now, format!("applied {}", what.join(", ")), false);
            }
            // The refusal also arrives as Config events and shows under its row.
            Err(e) => app.ui.notify(now, format!("refused: {e}"), true),
        },
        Control::Submit { partitions } => {
            let spec = JobSpec {
                partitions,
                ..jobs.spec.clone()
            };
            match engine.submit(spec) {
                Ok(id) => app.ui.notify(now, format!("submitted job {id}"), false),
                Err(e) => app.report(&format!("submitting a job: {e:#}")),
            }
        }
        Control::Cancel { job } => {
            if !engine.cancel(job) {
                app.ui.notify(now, format!("job {job} is not open"), true);
            }
        }
        Control::Mark { label } => engine.mark(&label),
        // Recording and replay transport arrive with the recorder.
        Control::Record { .. } | Control::Replay(_) => {}
    }
    true
}
