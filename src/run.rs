//! Running a workload to completion on the embedded engine: shared by `bench`, the headless
//! main command and the dashboard's default session.

use anyhow::{Context, Result};
use crossbeam_channel::select;
use provetop_engine::backend::BackendKind;
use provetop_engine::circuit::Workload;
use provetop_engine::pipeline::{
    EngineHandle, JobId, JobSpec, Outcome, PartitionResult, Priority, Scheduled,
};
use provetop_engine::store::ParamsStore;
use provetop_telemetry::config::EngineConfig;
use provetop_telemetry::export::prometheus::{self, Exporter};
use provetop_telemetry::record::{Recorder, RecorderOptions, RecorderStatus};
use provetop_telemetry::report::ReportBuilder;
use provetop_telemetry::{Bus, Clock, Event, MachineInfo, Nanos, SessionInfo};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::cli::{Concurrency, EngineArgs, OnOff, WorkloadName};
use crate::config_file;
use crate::mix::{Mix, Sequence};
use provetop_porep::Prepared;

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

/// One kind of job a run submits.
#[derive(Clone)]
pub struct Part {
    pub workload: Workload,
    pub partitions: u32,
    /// Its share of the jobs (`--mix` weights; 1 alone).
    pub weight: u32,
    pub priority: Priority,
    /// The Filecoin proof it is, for filecoin-proofs' own verification.
    pub filecoin: Option<Arc<Prepared>>,
}

/// What a run proves.
#[derive(Clone)]
pub struct Plan {
    /// The first part's workload and partitions: every job's unless `--mix` gives more parts.
    pub workload: Workload,
    pub proofs: u64,
    pub partitions: u32,
    /// Every kind of job, in `--mix`'s order (one without it).
    pub parts: Vec<Part>,
    pub concurrency: u64,
    /// Why `--concurrency auto` chose `concurrency`; None when it was given.
    pub concurrency_auto: Option<String>,
    pub seed: u64,
    pub schedule: Vec<Scheduled>,
}

impl Plan {
    /// What the run proves, for its header: the workload's label, or each kind of the mix
    /// with its weight (`porep-8MiB:8 window-post-8MiB:1`).
    pub fn label(&self) -> String {
        match self.parts.len() {
            1 => self.workload.label(),
            _ => {
                let each: Vec<String> = self
                    .parts
                    .iter()
                    .map(|p| format!("{}:{}", p.workload.label(), p.weight))
                    .collect();
                format!("mix {}", each.join(" "))
            }
        }
    }

    /// The partitions of the run's jobs, in all.
    pub fn total_partitions(&self) -> u64 {
        let weights: Vec<u32> = self.parts.iter().map(|p| p.weight).collect();
        Sequence::first(&weights, self.proofs)
            .into_iter()
            .map(|i| u64::from(self.parts[i].partitions))
            .sum()
    }
}

pub struct Session {
    pub engine: EngineHandle,
    pub cfg: EngineConfig,
    pub plan: Plan,
    /// Parameters come from `--params FILE` (or Filecoin's, from `--params-dir`).
    pub params_file: bool,
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
    start_mixed(args, None)
}

/// [`start`] for a run of several kinds of Filecoin proofs (`bench --mix`).
pub fn start_mixed(args: &EngineArgs, mix: Option<&Mix>) -> Result<Session> {
    let file = usage(config_file::load(args.config.as_deref()))?;
    let cfg = usage(config_file::engine_config(&file, args))?;
    let (engine_backend, why_not_cuda) = provetop_engine::backend::resolve(cfg.backend);
    if let Some(why) = why_not_cuda {
        tracing::info!("backend auto: using the cpu backend because {why}");
    }
    usage(crate::bounds::counts(args.proofs(), args.partitions))?;
    usage(crate::bounds::backend(&cfg, engine_backend))?;
    let parts = usage(parts(args, mix, engine_backend))?;
    for part in &parts {
        usage(part.workload.validate())?;
        usage(crate::bounds::budgets(&cfg, engine_backend, &part.workload))?;
    }
    let first = parts[0].clone();
    let filecoin_params = first
        .filecoin
        .as_ref()
        .and_then(|f| f.circuits().params_file.clone());
    let params = match (&args.params, filecoin_params) {
        (Some(_), Some(_)) => {
            return Err(UsageError(anyhow::anyhow!(
                "--params and --params-dir both name parameters: give one"
            ))
            .into())
        }
        (p, f) => p.clone().or(f),
    };
    if params.is_some() && parts.len() > 1 {
        return Err(UsageError(anyhow::anyhow!(
            "--mix proves with parameters made here: --params and --params-dir name one circuit's"
        ))
        .into());
    }
    let plan = Plan {
        workload: first.workload,
        proofs: args.proofs(),
        partitions: first.partitions,
        parts,
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
        let inputs = inputs(args, params.as_deref());
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
        let serial = plan.parts.iter().any(|p| !p.workload.parallel_witness());
        let (jobs, why) = engine.auto_concurrency(plan.partitions, serial);
        tracing::info!("concurrency = auto: {why}");
        plan.concurrency = jobs;
        plan.concurrency_auto = Some(why);
    }
    let recorder = match recording {
        None => None,
        Some((pending, t0)) => {
            let path = args.record.as_deref().unwrap_or(std::path::Path::new(""));
            let r = pending
                .begin(labelled(session_info(&engine, &plan), args), t0)
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
        _metrics: metrics,
        recorder,
    })
}

/// The files a run reads, which no output may overwrite: `(what, path)`.
pub fn inputs<'a>(args: &'a EngineArgs, params: Option<&'a Path>) -> Vec<(&'static str, &'a Path)> {
    let inputs = [
        ("the config file", args.config.as_deref()),
        ("the parameters file", params),
        ("the C1 output", args.c1.as_deref()),
        ("the request file", args.request.as_deref()),
    ];
    inputs
        .into_iter()
        .filter_map(|(w, p)| p.map(|p| (w, p)))
        .collect()
}

/// The kinds of job a run submits: the workload of the flags, a request file's proof, or each
/// kind of `--mix`, every input checked before parameters or proofs.
fn parts(args: &EngineArgs, mix: Option<&Mix>, backend: BackendKind) -> Result<Vec<Part>> {
    let normal = Priority::Normal;
    let part = |filecoin: Option<Prepared>, weight, priority| -> Result<Part> {
        let workload = match (&filecoin, args.workload) {
            (Some(f), _) => f.circuits().workload(),
            (None, WorkloadName::Sha256) => Workload::Sha256 {
                blocks: args.blocks,
            },
            (None, _) => Workload::Synthetic {
                log2_constraints: args.log2_constraints.unwrap_or(default_log2(backend)),
            },
        };
        let partitions = match &filecoin {
            Some(f) => crate::filecoin::partitions(f, args.partitions)?,
            None => args.partitions,
        };
        Ok(Part {
            workload,
            partitions,
            weight,
            priority,
            filecoin: filecoin.map(Arc::new),
        })
    };
    match (mix, &args.request, args.workload.filecoin()) {
        (Some(_), Some(_), _) => anyhow::bail!("--mix and --request: a request file is one proof"),
        (Some(mix), None, _) => mix
            .0
            .iter()
            .map(|(kind, weight)| {
                let f = crate::filecoin::prepare(*kind, args)?;
                // As Curio sends them: a WinningPoSt critical, a WindowPoSt high.
                let wire = crate::cuzk::proof_kind(*kind);
                let priority = crate::cuzk::priority(0, wire);
                part(Some(f), *weight, priority)
            })
            .collect(),
        // A request file holds a Filecoin proof of its own kind.
        (None, Some(path), _) => Ok(vec![part(
            Some(crate::filecoin::prepare_request(path, args)?),
            1,
            normal,
        )?]),
        (None, None, Some(kind)) => Ok(vec![part(
            Some(crate::filecoin::prepare(kind, args)?),
            1,
            normal,
        )?]),
        (None, None, None) => Ok(vec![part(None, 1, normal)?]),
    }
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

/// `info` with the header's label the command gave (`serve`'s), if any.
pub fn labelled(mut info: SessionInfo, args: &EngineArgs) -> SessionInfo {
    if let Some(l) = &args.label {
        info.workload.clone_from(l);
    }
    info
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

/// What a finished (or stopped) run hands to its reporter.
pub struct RunOutput {
    pub results: Vec<PartitionResult>,
    /// Each submitted job's part of the plan (its index in `Plan::parts`).
    pub job_parts: BTreeMap<JobId, usize>,
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

    /// The exit status of docs/architecture.md (Contracts): 1 if a proof failed, else 3 if work was left, else 0.
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
    let mut open = BTreeSet::new();
    let events = engine.bus().subscribe(1 << 20);
    let mut report = ReportBuilder::default();
    let start = engine.clock().now();
    engine.schedule(plan.schedule.clone());
    let weights: Vec<u32> = plan.parts.iter().map(|p| p.weight).collect();
    let mut sequence = Sequence::new(&weights);
    let mut job_parts = BTreeMap::new();
    let mut submit = |open: &mut BTreeSet<JobId>| -> Result<()> {
        let i = sequence.next_part();
        let part = &plan.parts[i];
        let job = engine.submit(JobSpec {
            workload: part.workload.clone(),
            partitions: part.partitions,
            seed: plan.seed,
            priority: part.priority,
            name: None,
        })?;
        job_parts.insert(job, i);
        open.insert(job);
        Ok(())
    };
    let mut submitted = 0;
    while submitted < plan.proofs.min(plan.concurrency) {
        submit(&mut open)?;
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
                        submit(&mut open)?;
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
        job_parts,
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
