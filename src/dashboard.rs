//! The dashboard: the terminal, and one loop that folds a source's events (a live engine's
//! telemetry, or a recording) into the UI, draws it, and hands the UI's `Control`s back to the
//! source. The UI never sees the engine itself, only events, so a replay takes the engine's
//! place with nothing else changed but the transport.

use anyhow::{Context, Result};
use crossbeam_channel::Receiver;
use parking_lot::Mutex;
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome};
use provetop_telemetry::control::Control;
use provetop_telemetry::record::{Recorder, Recording};
use provetop_telemetry::{Event, LogLine, Subscription};
use provetop_ui::app::{RecordingStatus, RunPhase};
use provetop_ui::replay::Replay;
use provetop_ui::{terminal, App, AppOptions, UiSettings};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::Cli;
use crate::config_file;
use crate::logging::{self, PaneLine};
use crate::run::{self, Session};

/// Events the dashboard may lag behind by before the bus starts dropping them for it.
const BUS_CAPACITY: usize = 1 << 18;

/// Where the dashboard's events come from.
pub(crate) trait Source {
    /// Folds everything that arrived since the last frame into the app.
    fn ingest(&mut self, app: &mut App);
    /// Carries out one `Control`; false on quit.
    fn control(&mut self, c: Control, app: &mut App) -> bool;
    /// Whether the source has ended the session by itself (a failed setup).
    fn ended(&self) -> bool {
        false
    }
}

/// The `[ui]` settings from the config file and `--theme`.
pub(crate) fn settings(
    config: Option<&std::path::Path>,
    theme: Option<&str>,
) -> Result<UiSettings> {
    let mut settings = run::usage(config_file::load(config))?.ui;
    if let Some(theme) = theme {
        settings.theme = theme.to_string();
    }
    Ok(settings)
}

/// The app over `session`, its theme fitted to the colours this terminal shows.
pub(crate) fn app(
    session: provetop_telemetry::SessionInfo,
    settings: UiSettings,
    opts: AppOptions,
) -> App {
    let mut app = App::new(session, settings, opts);
    app.set_colours(provetop_ui::Colours::detect());
    app
}

pub(crate) fn options(config: Option<PathBuf>, partitions: u32) -> AppOptions {
    let config_path = config.or_else(config_file::default_path);
    let theme_dir = config_file::default_path().and_then(|p| p.parent().map(|d| d.join("themes")));
    AppOptions {
        partitions,
        config_path,
        theme_dir,
    }
}

pub fn main(cli: &Cli) -> Result<i32> {
    let args = &cli.engine_args();
    let settings = settings(args.config.as_deref(), cli.theme.as_deref())?;
    let mut session = run::start(args)?;
    let events = session.engine.bus().subscribe(BUS_CAPACITY);
    let recorder = session.recorder.take();
    let session = Arc::new(session);
    let mut app = app(
        run::session_info(&session.engine, &session.plan),
        settings,
        options(args.config.clone(), session.plan.partitions),
    );
    // Parameters and the circuit's recording are made behind the dashboard, which shows them.
    let setup = Setup::start(session.clone());
    let mut live = Live {
        session: &session,
        events,
        jobs: Jobs::new(&session, args.proofs),
        setup: Some(setup),
        failed: None,
        pane: logging::pane(),
        recorder,
    };
    app.ui.run = RunPhase::Setup {
        what: "starting".into(),
        done: 0.0,
        elapsed: 0.0,
        left: None,
    };
    let mut tui = terminal::enter().context("setting up the terminal")?;
    let result = event_loop(&mut tui, &mut app, &mut live);
    drop(tui);
    if terminal::panicked() {
        anyhow::bail!("a thread panicked; see the message above and the log");
    }
    result?;
    if let Some(r) = live.recorder.take() {
        run::report_recording(r.stop());
    }
    if let Some(e) = live.failed.take() {
        return Err(e);
    }
    let engine = &session.engine;
    let p = &app.state.pipeline;
    // Jobs in flight are cancelled: a run until quit ends there; a bounded one says what it
    // left undone.
    let open: Vec<u64> = p.open_jobs().map(|j| j.job).collect();
    let unfinished = live.jobs.unfinished();
    let mut line = format!(
        "provetop: {} proof(s) verified, {} failed, in {:.1} s",
        p.verified,
        p.failed,
        engine.clock().now() as f64 / 1e9
    );
    if !open.is_empty() {
        line.push_str(&format!("; {} job(s) in flight cancelled", open.len()));
    }
    if let (Some(bound), 1..) = (live.jobs.bound, unfinished) {
        line.push_str(&format!("; {unfinished} of {bound} job(s) unfinished"));
    }
    eprintln!("{line}");
    for j in open {
        engine.cancel(j);
    }
    Ok(match (p.failed, unfinished) {
        (1.., _) => 1,
        (0, 1..) => 3,
        (0, 0) => 0,
    })
}

/// `provetop replay FILE` on a terminal: the same dashboard over the recording.
pub fn replay(
    rec: Recording,
    file: &std::path::Path,
    config: Option<PathBuf>,
    theme: Option<&str>,
    speed: f64,
) -> Result<i32> {
    let settings = settings(config.as_deref(), theme)?;
    let now = Instant::now();
    let mut replay = Replay::new(rec, &file.display().to_string(), now);
    let mut app = app(replay.session().clone(), settings, options(config, 1));
    if speed != 1.0 {
        replay.transport(
            provetop_telemetry::control::Transport::Speed(speed),
            &mut app,
            now,
        );
    }
    let mut source = Replaying {
        replay,
        pane: logging::pane(),
    };
    show(&mut app, &mut source)?;
    Ok(0)
}

/// The dashboard over `source` until quit: takes the terminal and gives it back.
pub(crate) fn show(app: &mut App, source: &mut dyn Source) -> Result<()> {
    let mut tui = terminal::enter().context("setting up the terminal")?;
    let result = event_loop(&mut tui, app, source);
    drop(tui);
    if terminal::panicked() {
        anyhow::bail!("a thread panicked; see the message above and the log");
    }
    result
}

/// The session's jobs: `--concurrency` of them in flight, each replaced as it finishes, until
/// quit or, with `--proofs N`, until N have been submitted.
struct Jobs {
    spec: JobSpec,
    /// `--proofs N`; None proves until quit.
    bound: Option<u64>,
    concurrency: u64,
    schedule: Vec<provetop_engine::pipeline::Scheduled>,
    /// The run's own jobs (not those submitted from the dashboard), and how many ended.
    ours: BTreeSet<u64>,
    submitted: u64,
    done: u64,
}

impl Jobs {
    fn new(session: &Session, bound: Option<u64>) -> Jobs {
        let plan = &session.plan;
        Jobs {
            spec: JobSpec {
                workload: plan.workload.clone(),
                partitions: plan.partitions,
                seed: plan.seed,
                priority: provetop_engine::pipeline::Priority::Normal,
                name: None,
            },
            bound,
            concurrency: plan.concurrency.max(1),
            schedule: plan.schedule.clone(),
            ours: BTreeSet::new(),
            submitted: 0,
            done: 0,
        }
    }

    /// Once setup is done: the schedule's clock starts and the first jobs go in.
    fn start(&mut self, engine: &EngineHandle, app: &mut App) {
        engine.schedule(std::mem::take(&mut self.schedule));
        for _ in 0..self.concurrency {
            self.next(engine, app);
        }
        self.show(app);
    }

    fn next(&mut self, engine: &EngineHandle, app: &mut App) {
        if self.bound.is_some_and(|b| self.submitted >= b) {
            return;
        }
        self.submitted += 1;
        match engine.submit(self.spec.clone()) {
            Ok(id) => {
                self.ours.insert(id);
            }
            Err(e) => app.report(&format!("submitting a job: {e:#}")),
        }
    }

    /// Planned jobs that did not finish: 0 for a run until quit.
    fn unfinished(&self) -> u64 {
        self.bound.map_or(0, |b| b.saturating_sub(self.done))
    }

    /// Outcomes: a finished job of the run makes room for the next.
    fn drain(&mut self, engine: &EngineHandle, app: &mut App) {
        while let Ok(o) = engine.outcomes().try_recv() {
            if let Outcome::JobDone { job, .. } = o {
                if self.ours.remove(&job) {
                    self.done += 1;
                    self.next(engine, app);
                    self.show(app);
                    if self.bound == Some(self.done) {
                        let text = format!("finished: all {} jobs done; q quits", self.done);
                        app.ui.notify(app.state.now, text, false);
                    }
                }
            }
        }
    }

    fn show(&self, app: &mut App) {
        app.ui.run = match self.bound {
            Some(b) if self.done >= b => RunPhase::Finished { jobs: b },
            bound => RunPhase::Proving {
                done: self.done,
                bound,
            },
        };
    }
}

/// A setup step as the header shows it: what, how far (0..1), seconds elapsed, and seconds left
/// of the stage when known.
type SetupStep = (String, f64, f64, Option<f64>);

/// Setup on its own thread (parameters, the circuit's recording, page-locked memory), its
/// latest step for the header, and its end.
struct Setup {
    step: Arc<Mutex<Option<SetupStep>>>,
    done: Receiver<Result<()>>,
}

impl Setup {
    fn start(session: Arc<Session>) -> Setup {
        let step = Arc::new(Mutex::new(None));
        let (tx, done) = crossbeam_channel::bounded(1);
        let latest = step.clone();
        let spawned = std::thread::Builder::new()
            .name("setup".into())
            .spawn(move || {
                let sink = |s: &crate::params::Step| {
                    let frac = match s.total {
                        0 => 0.0,
                        n => (s.done as f64 / n as f64).clamp(0.0, 1.0),
                    };
                    let left = s.left.map(|l| l.as_secs_f64());
                    *latest.lock() =
                        Some((s.what.to_string(), frac, s.elapsed.as_secs_f64(), left));
                };
                let r = crate::params::prepare_with(&session, Some(&sink)).map(|_| ());
                let _ = tx.send(r);
            });
        // Without the thread its sender is gone: the dashboard reports setup stopped.
        if let Err(e) = spawned {
            tracing::error!("starting the setup thread: {e}");
        }
        Setup { step, done }
    }

    /// The header's setup line, from the latest step.
    fn phase(&self) -> Option<RunPhase> {
        let (what, done, elapsed, left) = self.step.lock().clone()?;
        Some(RunPhase::Setup {
            what,
            done,
            elapsed,
            left,
        })
    }
}

fn event_loop(tui: &mut terminal::Tui, app: &mut App, source: &mut dyn Source) -> Result<()> {
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
                if !source.control(c, app) {
                    return Ok(());
                }
            }
        }
        let now = Instant::now();
        if input || now >= next_frame {
            source.ingest(app);
            if source.ended() {
                return Ok(());
            }
            tui.terminal.draw(|f| app.draw(f))?;
            if now >= next_frame {
                next_frame = (next_frame + frame).max(now);
            }
        }
    }
}

/// Warnings and errors from the log, into the log pane at their session time.
pub(crate) fn pane_lines(
    app: &mut App,
    pane: Option<&Receiver<PaneLine>>,
    at: impl Fn(Instant) -> u64,
) {
    if let Some(rx) = pane {
        for l in rx.try_iter() {
            app.state.apply(&Event::Log(LogLine {
                t: at(l.at),
                level: l.level,
                message: l.message,
            }));
        }
    }
}

/// The embedded engine.
struct Live<'a> {
    session: &'a Session,
    events: Subscription,
    jobs: Jobs,
    /// Until setup ends; then the jobs start.
    setup: Option<Setup>,
    /// Why setup failed: the dashboard closes and the command fails with it.
    failed: Option<anyhow::Error>,
    pane: Option<Receiver<PaneLine>>,
    recorder: Option<Recorder>,
}

impl Source for Live<'_> {
    fn ingest(&mut self, app: &mut App) {
        let engine = &self.session.engine;
        for e in self.events.rx.try_iter() {
            app.state.apply(&e);
        }
        app.state.dropped = self.events.dropped();
        let clock = engine.clock();
        pane_lines(app, self.pane.as_ref(), |t| clock.at(t));
        if let Some(setup) = &self.setup {
            if let Some(phase) = setup.phase() {
                app.ui.run = phase;
            }
            match setup.done.try_recv() {
                Ok(Ok(())) => {
                    self.setup = None;
                    self.jobs.start(engine, app);
                }
                Ok(Err(e)) => self.failed = Some(e),
                Err(crossbeam_channel::TryRecvError::Empty) => {}
                Err(crossbeam_channel::TryRecvError::Disconnected) => {
                    self.failed = Some(anyhow::anyhow!("setup stopped without a word"));
                }
            }
        }
        self.jobs.drain(engine, app);
        app.state.advance(clock.now());
        app.ui.recording = self.recorder.as_ref().map(|r| {
            let s = r.status();
            if let Some(e) = &s.error {
                tracing::warn!("recording: {e}");
            }
            RecordingStatus {
                file: s.path.map(|p| p.display().to_string()).unwrap_or_default(),
                bytes: s.bytes,
                dropped: s.dropped.total(),
            }
        });
    }

    fn ended(&self) -> bool {
        self.failed.is_some()
    }

    fn control(&mut self, c: Control, app: &mut App) -> bool {
        let engine = &self.session.engine;
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
                    ..self.jobs.spec.clone()
                };
                match engine.submit(spec) {
                    Ok(id) => app.ui.notify(now, format!("submitted job {id}"), false),
                    Err(e) => app.report(&format!("submitting a job: {e:#}")),
                }
            }
            Control::Cancel { job } => {
                if engine.cancel(job) {
                    let message = format!("job {job} cancelled (by ui)");
                    tracing::info!("{message}");
                    app.state.logs.log(LogLine {
                        t: now,
                        level: "INFO".into(),
                        message,
                    });
                } else {
                    app.ui.notify(now, format!("job {job} is not open"), true);
                }
            }
            Control::Mark { label } => engine.mark(&label),
            Control::Record { path } => self.record(path, app),
            Control::Replay(_) => {}
        }
        true
    }
}

impl Live<'_> {
    /// Starts recording to `path`, or stops with `None`.
    fn record(&mut self, path: Option<PathBuf>, app: &mut App) {
        let now = app.state.now;
        if let Some(r) = self.recorder.take() {
            let s = r.stop();
            app.ui.recording = None;
            let file = s.path.as_ref().map(|p| p.display().to_string());
            let msg = match &s.error {
                Some(e) => format!("recording stopped: {e}"),
                None => format!(
                    "recorded {} to {}",
                    provetop_ui::view::fmt::bytes(s.bytes as f64),
                    file.unwrap_or_default()
                ),
            };
            app.ui.notify(now, msg, s.error.is_some());
            if path.is_none() {
                return;
            }
        }
        let Some(path) = path else { return };
        let engine = &self.session.engine;
        let info = run::session_info(engine, &self.session.plan);
        match Recorder::start(&path, engine.bus(), info, engine.clock().now()) {
            Ok(r) => {
                let shown = std::fs::canonicalize(&path).unwrap_or(path);
                app.ui
                    .notify(now, format!("recording to {}", shown.display()), false);
                self.recorder = Some(r);
            }
            Err(e) => app.report(&format!("recording to {}: {e}", path.display())),
        }
    }
}

/// A recording.
struct Replaying {
    replay: Replay,
    pane: Option<Receiver<PaneLine>>,
}

impl Source for Replaying {
    fn ingest(&mut self, app: &mut App) {
        self.replay.ingest(app, Instant::now());
        // This process's own warnings, at the replay's current time.
        let now = app.state.now;
        pane_lines(app, self.pane.as_ref(), |_| now);
    }

    fn control(&mut self, c: Control, app: &mut App) -> bool {
        match c {
            Control::Quit => return false,
            Control::Replay(t) => self.replay.transport(t, app, Instant::now()),
            // The UI refuses the rest in a replay; nothing reaches an engine here.
            _ => {}
        }
        true
    }
}
