//! Running a workload to completion on the embedded engine: shared by `bench`, the headless
//! main command and the dashboard's default session.

use anyhow::{Context, Result};
use crossbeam_channel::select;
use provetop_engine::backend::BackendKind;
use provetop_engine::circuit::Workload;
use provetop_engine::params::cache::Origin;
use provetop_engine::params::store::{Loaded, ParamsStore};
use provetop_engine::pipeline::{EngineHandle, JobSpec, Outcome, PartitionResult, Scheduled};
use provetop_telemetry::config::EngineConfig;
use provetop_telemetry::export::prometheus::{self, Exporter};
use provetop_telemetry::record::{Recorder, RecorderOptions, RecorderStatus};
use provetop_telemetry::report::ReportBuilder;
use provetop_telemetry::{Bus, Clock, Event, MachineInfo, Nanos, SessionInfo};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::cli::{Concurrency, EngineArgs, OnOff, WorkloadName};
use crate::config_file;
use provetop_porep::{Kind, PorepArgs, Prepared, SectorSize};

/// Bad usage or input: exits with code 2.
#[derive(Debug)]
pub struct UsageError(pub anyhow::Error);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for UsageError {}

pub fn usage<T>(r: Result<T>) -> Result<T> {
    r.map_err(|e| UsageError(e).into())
}

/// What a run proves.
#[derive(Clone, Debug)]
pub struct Plan {
    pub workload: Workload,
    pub proofs: u64,
    pub partitions: u32,
    pub concurrency: u64,
    /// Why `--concurrency auto` chose `concurrency`; None when it was given.
    pub concurrency_auto: Option<String>,
    pub seed: u64,
    pub schedule: Vec<Scheduled>,
}

pub struct Session {
    pub engine: EngineHandle,
    pub cfg: EngineConfig,
    pub plan: Plan,
    /// Parameters come from `--params FILE` (or Filecoin's, from `--params-dir`).
    pub params_file: bool,
    /// The Filecoin proof being proved, for filecoin-proofs' own verification.
    pub filecoin: Option<Arc<Prepared>>,
    /// The Prometheus endpoint of `--metrics-addr`, serving while the session lives.
    pub _metrics: Option<Exporter>,
    /// The recording of `--record FILE`; dropping it closes the file properly.
    pub recorder: Option<Recorder>,
}

/// Default synthetic size: proves in about a second on the CPU, fills a GPU.
fn default_log2(backend: BackendKind) -> u32 {
    match backend {
        BackendKind::Cuda => 24,
        _ => 14,
    }
}

/// Reads config and flags, validates everything, and starts the engine.
pub fn start(args: &EngineArgs) -> Result<Session> {
    let file = usage(config_file::load(args.config.as_deref()))?;
    let cfg = usage(config_file::engine_config(&file, args))?;
    let (engine_backend, why_not_cuda) = provetop_engine::backend::resolve(cfg.backend);
    if let Some(why) = why_not_cuda {
        tracing::info!("backend auto: using the cpu backend because {why}");
    }
    usage(crate::bounds::counts(args.proofs, args.partitions))?;
    usage(crate::bounds::backend(&cfg, engine_backend))?;
    // A request file holds a Filecoin proof of its own kind.
    let filecoin = match (&args.request, args.workload.filecoin()) {
        (Some(path), _) => Some(Arc::new(usage(prepare_request(path, args))?)),
        (None, Some(kind)) => Some(Arc::new(usage(prepare_filecoin(kind, args))?)),
        (None, None) => None,
    };
    let workload = match (args.workload, &filecoin) {
        (_, Some(f)) => Workload::External {
            circuit: f.circuits().name.clone(),
        },
        (WorkloadName::Sha256, None) => Workload::Sha256 {
            blocks: args.blocks,
        },
        (_, None) => Workload::Synthetic {
            log2_constraints: args
                .log2_constraints
                .unwrap_or(default_log2(engine_backend)),
        },
    };
    usage(workload.validate())?;
    usage(crate::bounds::budgets(&cfg, engine_backend, &workload))?;
    let partitions = match &filecoin {
        Some(f) if args.partitions != 1 && args.partitions != f.circuits().partitions => {
            return Err(UsageError(anyhow::anyhow!(
                "--partitions {}: a {} proof of a {} sector has {} partition(s)",
                args.partitions,
                f.kind(),
                f.size(),
                f.circuits().partitions
            ))
            .into())
        }
        Some(f) => f.circuits().partitions,
        None => args.partitions,
    };
    let params = match (
        &args.params,
        filecoin
            .as_ref()
            .and_then(|f| f.circuits().params_file.clone()),
    ) {
        (Some(_), Some(_)) => {
            return Err(UsageError(anyhow::anyhow!(
                "--params and --params-dir both name parameters: give one"
            ))
            .into())
        }
        (p, f) => p.clone().or(f),
    };
    let plan = Plan {
        workload,
        proofs: args.proofs,
        partitions,
        // `auto` is chosen once the engine knows its workers.
        concurrency: match args.concurrency {
            Concurrency::Jobs(n) => n,
            Concurrency::Auto => 1,
        },
        concurrency_auto: None,
        seed: args.seed,
        schedule: args.at.clone(),
    };
    usage(Scheduled::validate(&plan.schedule, &cfg).map_err(|e| anyhow::anyhow!("--at {e}")))?;
    if let Some(p) = &params {
        if !p.is_file() {
            return Err(
                UsageError(anyhow::anyhow!("--params {}: no such file", p.display())).into(),
            );
        }
        // Its header, now: a file that is not parameters for this circuit is refused before
        // anything (a recording included) is written.
        let fits = provetop_engine::params::io::peek_counts(p).and_then(|(ic, h, l)| {
            match plan.workload.shape() {
                Ok(shape) => provetop_engine::params::cache::check_counts(ic, h, l, &shape)
                    .with_context(|| {
                        format!("{} does not fit {}", p.display(), plan.workload.label())
                    }),
                Err(_) => Ok(()),
            }
        });
        usage(fits.map_err(|e| anyhow::anyhow!("--params {}: {e:#}", p.display())))?;
    }
    let metrics_addr = match &args.metrics_addr {
        None => None,
        Some(_) if args.telemetry == OnOff::Off => {
            return Err(UsageError(anyhow::anyhow!(
                "--metrics-addr needs telemetry: drop --telemetry off"
            ))
            .into())
        }
        Some(a) => Some(usage(
            prometheus::parse_addr(a).map_err(|e| anyhow::anyhow!("--metrics-addr {e}")),
        )?),
    };
    if args.record.is_some() && args.telemetry == OnOff::Off {
        return Err(UsageError(anyhow::anyhow!(
            "--record needs telemetry: drop --telemetry off"
        ))
        .into());
    }
    if let Some(path) = &args.record {
        // Checked now, opened once the engine is up: a refused run leaves the old file alone.
        let inputs = [
            ("the config file", args.config.as_deref()),
            ("the parameters file", params.as_deref()),
            ("the C1 output", args.c1.as_deref()),
            ("the request file", args.request.as_deref()),
        ];
        let inputs: Vec<_> = inputs
            .iter()
            .filter_map(|(w, p)| p.map(|p| (*w, p)))
            .collect();
        let checked = provetop_telemetry::output::check("--record", path, &inputs, args.force);
        usage(checked.map_err(Into::into))?;
    }
    let bus = match args.telemetry {
        OnOff::On => Bus::new(),
        OnOff::Off => Bus::disabled(),
    };
    let clock = Clock::start();
    // Subscribed before the engine starts, so the recording holds every event.
    let recording = match &args.record {
        None => None,
        Some(path) => {
            let opts = RecorderOptions {
                overwrite: args.force,
                ..RecorderOptions::default()
            };
            Some((Recorder::create(path, &bus, opts), clock.now()))
        }
    };
    // Subscribed before the engine starts, so the endpoint sees every event.
    let metrics = match metrics_addr {
        None => None,
        Some(addr) => {
            let exporter = Exporter::start(addr, &bus, clock, &cfg).map_err(|e| {
                UsageError(anyhow::anyhow!("--metrics-addr {addr}: cannot listen: {e}"))
            })?;
            eprintln!("metrics: serving http://{}/metrics", exporter.local_addr());
            if let Some(w) = prometheus::exposure_warning(exporter.local_addr()) {
                tracing::warn!("metrics: {w}");
                eprintln!("metrics: {w}");
            }
            Some(exporter)
        }
    };
    let store = Arc::new(ParamsStore::new(args.params_cache.clone(), params.clone()));
    let engine = EngineHandle::start(cfg.clone(), store, bus, clock)?;
    // The configuration with the engine's choices for `auto`.
    let cfg = engine.config();
    let mut plan = plan;
    if args.concurrency == Concurrency::Auto {
        let (jobs, why) = engine.auto_concurrency(plan.partitions);
        tracing::info!("concurrency = auto: {why}");
        plan.concurrency = jobs;
        plan.concurrency_auto = Some(why);
    }
    let recorder = match recording {
        None => None,
        Some((pending, t0)) => {
            let path = args.record.as_deref().unwrap_or(std::path::Path::new(""));
            let r = pending
                .begin(session_info(&engine, &plan), t0)
                .map_err(|e| UsageError(anyhow::anyhow!("--record {}: {e}", path.display())))?;
            eprintln!("recording to {}", path.display());
            Some(r)
        }
    };
    Ok(Session {
        engine,
        cfg,
        plan,
        params_file: params.is_some(),
        filecoin,
        _metrics: metrics,
        recorder,
    })
}

/// Reads or seals what a Filecoin workload proves and registers its circuits; every input is
/// checked here, before parameters or proofs.
fn prepare_filecoin(kind: Kind, args: &EngineArgs) -> Result<Prepared> {
    let sector_size = args
        .sector_size
        .as_deref()
        .map(|s| s.parse::<SectorSize>().context("--sector-size"))
        .transpose()?;
    let progress = |m: &str| eprintln!("{kind}: {m}");
    let prepared = match kind {
        Kind::Porep => Prepared::Porep(provetop_porep::prepare(
            &PorepArgs {
                sector_size,
                c1: args.c1.clone(),
                prover_id: args.prover_id.clone(),
                sector_id: args.sector_id,
                params_dir: args.params_dir.clone(),
                seed: args.seed,
            },
            &progress,
        )?),
        _ => {
            let given = [
                ("--c1", args.c1.is_some()),
                ("--prover-id", args.prover_id.is_some()),
                ("--sector-id", args.sector_id.is_some()),
            ];
            if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
                anyhow::bail!("{flag} is for --workload porep; --workload {kind} proves a test sector sealed here (--sector-size) or a request file (--request)");
            }
            let Some(size) = sector_size else {
                anyhow::bail!("--workload {kind} needs --sector-size 2KiB|8MiB|512MiB (a test sector sealed here), or --request FILE");
            };
            provetop_porep::prepared::prepare_sealed(
                kind,
                size,
                args.seed,
                args.params_dir.as_deref(),
                &progress,
            )?
        }
    };
    eprintln!("{}", prepared.describe());
    Ok(prepared)
}

/// What a request file proves, checked as `serve` checks a request.
fn prepare_request(path: &std::path::Path, args: &EngineArgs) -> Result<Prepared> {
    let what = || format!("--request {}", path.display());
    let r = crate::request_file::read(path).with_context(what)?;
    let (kind, size) = crate::serve::check_request(&r).with_context(what)?;
    if let Some(k) = args.workload.filecoin().filter(|k| *k != kind) {
        anyhow::bail!(
            "--request {}: a {kind} request, not --workload {k}",
            path.display()
        );
    }
    provetop_porep::filecoin::configure(args.params_dir.as_deref())?;
    // The name `bench --workload KIND` gives the circuit: the parameter cache is shared.
    let name = format!("{kind}-{size}");
    let prepared =
        crate::serve::prepare_request(&r, args.params_dir.as_deref(), &name).with_context(what)?;
    eprintln!(
        "request {:?}: miner f0{}, {}",
        r.request_id,
        r.miner_id,
        prepared.describe()
    );
    Ok(prepared)
}

/// What a session is about: the dashboard's header, and a recording's.
pub fn session_info(engine: &EngineHandle, plan: &Plan) -> SessionInfo {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    SessionInfo {
        machine: MachineInfo::detect(),
        devices: engine.devices(),
        config: engine.config(),
        workload: plan.workload.label(),
        started_unix: now - engine.clock().now() as f64 / 1e9,
    }
}

/// Closes a session's recording, if any; `window` is what the run reported on.
pub fn finish_recording(recorder: Option<Recorder>, window: Option<(Nanos, Nanos)>) {
    if let Some(r) = recorder {
        if let Some((start, end)) = window {
            r.run_window(start, end);
        }
        report_recording(r.stop());
    }
}

/// `recorded 1.2 MB to FILE (34,567 records)` on stderr, with what was lost.
pub fn report_recording(s: RecorderStatus) {
    let file = s.path.map(|p| p.display().to_string()).unwrap_or_default();
    match s.error {
        Some(e) => eprintln!("recording {file}: {e}"),
        None => eprintln!(
            "recorded {} bytes to {file} ({} records)",
            s.bytes, s.records
        ),
    }
    if s.dropped.total() > 0 {
        eprintln!(
            "recording {file}: not recorded: {} (the disk fell behind); replay marks the holes",
            s.dropped.describe()
        );
    }
}

/// Loads or generates the workload's parameters, reporting progress on stderr at most once a
/// second. A mismatching `--params` file is bad input.
pub fn prepare_params(session: &Session) -> Result<Arc<Loaded>> {
    let workload = &session.plan.workload;
    let started = Instant::now();
    let last = parking_lot::Mutex::new(Instant::now());
    let label = workload.label();
    let tty = std::io::stderr().is_terminal();
    let progress = |stage: &str, done: usize, total: usize| {
        let mut last = last.lock();
        // On a terminal one line redrawn in place; elsewhere a line every few seconds.
        let every = Duration::from_secs(if tty { 1 } else { 5 });
        if last.elapsed() >= every {
            *last = Instant::now();
            let line = progress_line(&label, stage, done, total, started.elapsed());
            match tty {
                true => eprint!("\r\x1b[2K{line}"),
                false => eprintln!("{line}"),
            }
        }
    };
    let store: &ParamsStore = session.engine.store();
    let loaded = store
        .get(workload, &progress)
        .with_context(|| format!("parameters for {label}"));
    if tty && started.elapsed() >= Duration::from_secs(1) {
        eprintln!();
    }
    // Parameters the user named that do not fit are bad input; a failed setup is not.
    let loaded = if session.params_file {
        usage(loaded)
    } else {
        loaded
    }?;
    let precompiled = session.engine.precompiled_for(&session.plan.workload);
    if precompiled {
        record_circuit(session)?;
    }
    reserve_prestage(session, &loaded, precompiled);
    Ok(loaded)
}

/// `params: generating for sha256-4: G1 queries [######------]  52% · 0:41 elapsed, ~0:38 left`.
fn progress_line(label: &str, stage: &str, done: usize, total: usize, took: Duration) -> String {
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
        "params: generating for {label}: {stage} [{}{}] {:>3.0}% · {} elapsed{left}",
        "#".repeat(filled),
        "-".repeat(20 - filled),
        frac * 100.0,
        clock(secs)
    )
}

/// Records the workload's circuit for the pre-compiled path before the first job (or reads
/// it from the cache beside the parameters), with progress on stderr.
fn record_circuit(session: &Session) -> Result<()> {
    let workload = &session.plan.workload;
    let label = workload.label();
    let last = parking_lot::Mutex::new(Instant::now());
    let progress = |_: &str, done: usize, total: usize| {
        let mut last = last.lock();
        if last.elapsed() >= Duration::from_secs(1) && total > 0 {
            *last = Instant::now();
            eprintln!(
                "circuit: recording {label}: {:.0}%",
                100.0 * done as f64 / total as f64
            );
        }
    };
    let (pc, origin) = session.engine.store().circuit(workload, &progress)?;
    if let Some(Origin::Generated { seconds, .. }) = origin {
        eprintln!(
            "circuit: recorded {label} in {seconds:.1} s ({} terms, {:.0} MB)",
            pc.nnz(),
            pc.bytes() as f64 / 1e6
        );
    }
    Ok(())
}

/// Page-locks the prestaging memory before the first job, saying so when it takes a while.
/// Failing to is not an error: partitions then stage as they go.
fn reserve_prestage(session: &Session, loaded: &Loaded, precompiled: bool) {
    let start = Instant::now();
    match session.engine.reserve_prestage(loaded, precompiled) {
        Ok(0) => {}
        Ok(bytes) => {
            let line = format!(
                "prestage: {:.1} GB of page-locked memory for witnesses in {:.1} s",
                bytes as f64 / 1e9,
                start.elapsed().as_secs_f64()
            );
            tracing::info!("{line}");
            eprintln!("{line}");
        }
        Err(e) => tracing::warn!(
            "prestage: could not page-lock memory ahead ({e:#}); partitions will stage as they go"
        ),
    }
}

/// What a finished (or stopped) run hands to its reporter.
pub struct RunOutput {
    pub results: Vec<PartitionResult>,
    pub report: ReportBuilder,
    pub start: Nanos,
    pub end: Nanos,
    /// Planned jobs that did not finish because a signal stopped the run (0 when it ran out).
    pub unfinished: u64,
}

impl RunOutput {
    pub fn wall_seconds(&self) -> f64 {
        (self.end - self.start) as f64 / 1e9
    }

    pub fn all_verified(&self) -> bool {
        self.results.iter().all(|r| r.record.verified)
    }

    /// The exit status of DESIGN.md: 1 if a proof failed, else 3 if work was left, else 0.
    pub fn exit_code(&self, checks_ok: bool) -> i32 {
        match (self.all_verified() && checks_ok, self.unfinished) {
            (false, _) => 1,
            (true, 0) => 0,
            (true, _) => 3,
        }
    }

    /// `stopped by a signal: 40 of 50 job(s) unfinished`, None when the run ran out.
    pub fn stopped_line(&self, planned: u64) -> Option<String> {
        (self.unfinished > 0).then(|| {
            format!(
                "stopped by a signal: {} of {planned} job(s) unfinished",
                self.unfinished
            )
        })
    }
}

/// Set by SIGINT or SIGTERM while a headless run proves; a second signal ends the process at
/// once with status 3 (work unfinished), for a supervisor that will not wait.
pub fn stop_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 3, stop.clone())?;
        signal_hook::flag::register(sig, stop.clone())?;
    }
    Ok(stop)
}

/// Submits the plan's jobs, `concurrency` at a time, and collects every partition's result.
/// A signal stops it: open jobs are cancelled and the output says how many were unfinished.
pub fn run(session: &Session, mut on_result: impl FnMut(&PartitionResult)) -> Result<RunOutput> {
    let engine = &session.engine;
    let plan = &session.plan;
    let stop = stop_flag()?;
    let mut open = std::collections::BTreeSet::new();
    let events = engine.bus().subscribe(1 << 20);
    let mut report = ReportBuilder::default();
    let start = engine.clock().now();
    engine.schedule(plan.schedule.clone());
    let spec = JobSpec {
        workload: plan.workload.clone(),
        partitions: plan.partitions,
        seed: plan.seed,
        priority: provetop_engine::pipeline::Priority::Normal,
    };
    let mut submitted = 0;
    while submitted < plan.proofs.min(plan.concurrency) {
        open.insert(engine.submit(spec.clone())?);
        submitted += 1;
    }
    let mut done = 0;
    let mut results = vec![];
    while done < plan.proofs {
        if stop.load(Ordering::SeqCst) {
            for job in &open {
                engine.cancel(*job);
            }
            break;
        }
        select! {
            recv(engine.outcomes()) -> o => match o.context("the engine stopped")? {
                Outcome::Partition(p) => {
                    on_result(&p);
                    report.add_proof(p.record.clone());
                    results.push(*p);
                }
                Outcome::JobDone { job, .. } => {
                    done += 1;
                    open.remove(&job);
                    if submitted < plan.proofs {
                        open.insert(engine.submit(spec.clone())?);
                        submitted += 1;
                    }
                }
            },
            recv(events.rx) -> e => if let Ok(e) = e { observe(&mut report, &e) },
            default(Duration::from_millis(100)) => {}
        }
    }
    let end = engine.clock().now();
    // What the run never reached is reported as not applied, not dropped without a trace.
    engine.end_schedule();
    for e in events.rx.try_iter() {
        observe(&mut report, &e);
    }
    for c in engine.config_log() {
        report.add_config(c);
    }
    results.sort_by_key(|r| (r.record.job, r.record.partition));
    Ok(RunOutput {
        results,
        report,
        start,
        end,
        unfinished: plan.proofs - done,
    })
}

/// Spans, job events, samples and marks from the bus (busy time, gap causes, NVML and PCIe
/// summaries); proofs and config changes come from the engine directly, so they are reported
/// with telemetry off too.
pub fn observe(report: &mut ReportBuilder, e: &Event) {
    match e {
        Event::Span(s) => report.add_span(s),
        Event::Job(_) => report.add_job_event(e),
        Event::Sample(s) => report.add_sample(s),
        Event::Mark(m) => report.add_mark(m.clone()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_progress_has_a_bar_the_elapsed_time_and_what_is_left() {
        let line = progress_line("k14", "G1 queries", 25, 100, Duration::from_secs(30));
        assert_eq!(
            line,
            "params: generating for k14: G1 queries [#####---------------]  25% · 0:30 elapsed, ~1:30 left"
        );
        assert!(!progress_line("k14", "tau", 0, 0, Duration::ZERO).contains("left"));
    }
}
