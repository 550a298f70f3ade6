//! `provetop serve`: the engine behind cuzk's gRPC interface (`cuzk.v1.ProvingEngine`), so a
//! Curio rig hands it its proofs unchanged. `request` checks a request and builds its circuit,
//! `jobs` keeps every request from acceptance to its answer and feeds the engine's pipeline,
//! `params` holds the parameter sets, `service` answers the RPCs, `listen` binds the address
//! (with TLS when asked), and `viewers` offers the telemetry to `provetop attach` on the same
//! listener. SIGTERM or SIGINT stops taking requests and waits up to `--drain-timeout` for open
//! ones.

mod abandon;
mod accept;
mod admission;
pub mod alerts;
mod board;
mod cuzk_metrics;
mod identity;
mod jobs;
mod listen;
mod params;
mod record;
mod rig;
mod served;
mod service;
mod status_page;
mod summary;
pub mod viewers;

use anyhow::{Context, Result};
use provetop_proto::cuzk::v1::proving_engine_server::ProvingEngineServer;
use provetop_proto::provetop::v1::fleet_server::FleetServer;
use provetop_proto::provetop::v1::telemetry_server::TelemetryServer;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::{Concurrency, OnOff, ServeArgs};
use crate::run;
use provetop_telemetry::config::Budget;

// The wire's mapping, where other commands have found it.
pub use crate::cuzk::{curio_priority, proof_kind, prover_id_of_miner};
pub use served::short_kind;

/// The largest message either way, checked by tonic before it allocates the message: Curio's
/// client's limit.
pub(crate) const MAX_MESSAGE: usize = crate::cuzk::MAX_MESSAGE;

/// Filecoin's parameter folder when neither flag, config file nor
/// `$FIL_PROOFS_PARAMETER_CACHE` says: filecoin-proofs' own default.
const DEFAULT_PARAMS_DIR: &str = "/var/tmp/filecoin-proof-parameters";

/// Where `serve` listens when neither `--listen` nor the config file says.
const DEFAULT_LISTEN: &str = "127.0.0.1:9820";
/// Seconds of drain when neither `--drain-timeout` nor the config file says.
const DEFAULT_DRAIN_S: u64 = 60;
/// The telemetry a viewer is sent on attaching, when neither `--history` nor the file says.
const DEFAULT_HISTORY: Duration = Duration::from_secs(600);

pub fn main(args: &ServeArgs) -> Result<i32> {
    // Flags first, then the config file's [serve], then the defaults.
    let loaded = run::usage(crate::config_file::load(args.session.config.as_deref()))?;
    let (file, file_alerts) = (loaded.serve, loaded.alerts);
    let listen = match (&args.listen, &file.listen) {
        (Some(a), _) => run::usage(listen::parse(a).context("--listen")),
        (None, Some(a)) => run::usage(listen::parse(a).context("config file [serve] listen")),
        (None, None) => listen::parse(DEFAULT_LISTEN),
    }?;
    let drain_s = args
        .drain_timeout
        .or(file.drain_timeout)
        .unwrap_or(DEFAULT_DRAIN_S);
    // The viewers' token and the TLS identity, checked before the engine starts.
    let token = match args
        .control_token_file
        .as_ref()
        .or(file.control_token_file.as_ref())
    {
        Some(p) => Some(crate::token::Token::of(&run::usage(crate::token::read(
            p,
            "control_token_file",
        ))?)),
        None => None,
    };
    let tls = run::usage(listen::tls(
        args.tls_cert.as_deref().or(file.tls_cert.as_deref()),
        args.tls_key.as_deref().or(file.tls_key.as_deref()),
    ))?;
    let history = args.history.or(file.history).unwrap_or(DEFAULT_HISTORY);
    // Bound before the engine starts: a listen failure exits 2 at once.
    let bound = run::usage(listen::bind(&listen))?;
    let params_dir = params_dir(args, &file);
    // filecoin-proofs reads its settings once: pointed at the folder before any request.
    run::usage(provetop_porep::filecoin::configure(params_dir.as_deref()))?;
    let mut engine_args = args.engine_args();
    engine_args.record = engine_args.record.or(file.record);
    // Its header names the kinds served (`serving: winning-post ×3`), not the workload a
    // viewer's Submit would use; and says so when proofs are made with parameters made here.
    engine_args.label = Some(match params_dir {
        None => format!(
            "{} · TEST PARAMETERS (--test-params)",
            provetop_telemetry::SERVING
        ),
        Some(_) => provetop_telemetry::SERVING.to_string(),
    });
    run::usage(record::rotate(&engine_args))?;
    let session = run::start(&engine_args)?;
    let engine = session.engine.clone();
    let hub = match engine.bus().is_enabled() {
        true => Some(viewers::hub::Hub::start(
            engine.bus(),
            engine.clock(),
            history,
        )?),
        false => None,
    };
    let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
    let session_id = viewers::session_id();
    let viewers = viewers::Viewers {
        hub: hub.clone(),
        engine: engine.clone(),
        token,
        spec: provetop_engine::pipeline::JobSpec {
            workload: session.plan.workload.clone(),
            partitions: session.plan.partitions,
            seed: session.plan.seed,
            priority: provetop_engine::pipeline::Priority::Normal,
            name: None,
        },
        session: run::labelled(run::session_info(&engine, &session.plan), &engine_args),
        session_id: session_id.clone(),
        history,
        stopping,
        watching: Arc::new(AtomicUsize::new(0)),
    };
    let concurrency = match args.in_flight {
        Concurrency::Jobs(n) => Some(n),
        Concurrency::Auto => None,
    };
    let srs_budget = match args.srs_budget.or(file.srs_budget).unwrap_or(Budget::Auto) {
        Budget::Bytes(b) => b,
        Budget::Auto => provetop_engine::hostmem::available_memory().unwrap_or(64 << 30) / 2,
    };
    tracing::info!("serve: parameter sets kept hot within {srs_budget} bytes");
    let sets = params::ParamSets::new(
        engine.clone(),
        Some(srs_budget),
        params_dir.clone(),
        file.sets.clone(),
    );
    let source = sets.source();
    match &params_dir {
        Some(d) if !d.is_dir() => {
            tracing::warn!("serve: parameters: {source} (no such folder yet)");
            eprintln!("serve: warning: parameters: {source}: no such folder; requests are refused naming the file they need");
        }
        Some(_) => tracing::info!("serve: parameters: {source}"),
        None => tracing::warn!("serve: parameters: {source}"),
    }
    eprintln!("serve: parameters: {source}");
    let limits = admission::Limits::new(
        file.max_queued,
        file.queue_memory,
        provetop_engine::hostmem::available_memory().unwrap_or(64 << 30),
    );
    tracing::info!(
        "serve: at most {} requests, {} bytes of them, wait",
        limits.max_queued,
        limits.max_bytes
    );
    let jobs = jobs::Jobs::new(engine.clone(), sets, concurrency, params_dir, limits);
    let metrics = match args.session.telemetry {
        OnOff::On => Some(provetop_telemetry::export::prometheus::Collector::start(
            engine.bus(),
            engine.clock(),
            &engine.config(),
        )?),
        OnOff::Off => None,
    };
    let stop_outcomes = Arc::new(AtomicBool::new(false));
    let threads = [
        {
            let jobs = jobs.clone();
            std::thread::Builder::new()
                .name("serve-feed".into())
                .spawn(move || jobs.feed())?
        },
        {
            let (jobs, stop) = (jobs.clone(), stop_outcomes.clone());
            std::thread::Builder::new()
                .name("serve-outcomes".into())
                .spawn(move || outcomes(&jobs, &stop))?
        },
    ];
    let started = Instant::now();
    let cuzk = Arc::new(status_page::CuzkMetrics {
        jobs: jobs.clone(),
        started,
    });
    // cuzk's metric names at --metrics-addr too, beside provetop's.
    if let Some(exporter) = &session._metrics {
        exporter.add_pages(cuzk.clone());
    }
    let _status = match args.status_listen.as_ref().or(file.status_listen.as_ref()) {
        Some(listen) => Some(status_page::start(listen, jobs.clone(), started)?),
        None => None,
    };
    let summaries = summary::Summaries {
        jobs: jobs.clone(),
        rig: rig::Rig::start(engine.clone())?,
        firing: Arc::default(),
        session_id,
        started,
        parameters: jobs.params.source(),
        stopping: viewers.stopping.clone(),
    };
    {
        let s = summaries.clone();
        alerts::start(
            file_alerts,
            engine.clone(),
            summaries.firing.clone(),
            move |window| s.reading(window),
            stop_outcomes.clone(),
        )?;
    }
    let service = service::Service {
        jobs: jobs.clone(),
        metrics,
        cuzk,
        started,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("serve-rpc")
        .enable_all()
        .build()
        .context("starting the RPC runtime")?;
    let drain = Duration::from_secs(drain_s);
    let served = runtime.block_on(serve(
        Listener { listen, bound, tls },
        (service, viewers, summaries),
        jobs.clone(),
        drain,
        stopping_tx,
    ));
    if let Some(h) = &hub {
        h.stop();
    }
    let dropped = *served.as_ref().unwrap_or(&0);
    stop_outcomes.store(true, Ordering::SeqCst);
    // Work the drain gave up on is not waited for: a partition on the CPU takes minutes. The
    // engine's threads end with the process.
    if dropped == 0 {
        engine.shutdown();
        for t in threads {
            let _ = t.join();
        }
    }
    run::finish_recording(session.recorder, None);
    served?;
    let proof_failed = jobs.proof_failures();
    if dropped > 0 {
        eprintln!("serve: {dropped} request(s) unfinished at the end of the drain");
    }
    Ok(match (proof_failed, dropped) {
        (0, 0) => 0,
        (0, _) => 3,
        _ => 1,
    })
}

/// Filecoin's parameter folder: `--params-dir`, `[serve] params_dir`,
/// `$FIL_PROOFS_PARAMETER_CACHE`, else filecoin-proofs' default; None with `--test-params`.
fn params_dir(args: &ServeArgs, file: &crate::config_file::ServeSettings) -> Option<PathBuf> {
    if args.test_params {
        return None;
    }
    let env = std::env::var_os("FIL_PROOFS_PARAMETER_CACHE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    Some(
        args.workload
            .params_dir
            .clone()
            .or(file.params_dir.clone())
            .or(env)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_PARAMS_DIR)),
    )
}

/// Where and how the server listens.
struct Listener {
    listen: listen::Listen,
    bound: listen::Bound,
    tls: Option<tonic::transport::ServerTlsConfig>,
}

/// Serves until SIGTERM or SIGINT, then drains: no new requests, open ones get up to `drain`.
/// Returns how many were still open then (each answered FAILED with the reason). The viewers'
/// streams end with the drain (`stopping`).
async fn serve(
    listener: Listener,
    (service, viewers, summaries): (service::Service, viewers::Viewers, summary::Summaries),
    jobs: Arc<jobs::Jobs>,
    drain: Duration,
    stopping: tokio::sync::watch::Sender<bool>,
) -> Result<usize> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let svc = ProvingEngineServer::new(service)
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE);
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async {
        let _ = done_rx.await;
    };
    let Listener { listen, bound, tls } = listener;
    // Pings keep a live client sending (acks) while it waits for a proof: the accept loop
    // closes connections that send nothing for its idle time.
    let mut builder = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(20)));
    let transport = match tls {
        Some(t) => {
            builder = builder
                .tls_config(t)
                .map_err(|e| run::UsageError(anyhow::anyhow!("--tls-cert/--tls-key: {e}")))?;
            "TLS"
        }
        None => "plaintext",
    };
    let router = builder
        .add_service(svc)
        .add_service(TelemetryServer::new(viewers))
        .add_service(FleetServer::new(summaries));
    if let Some(w) = listen::exposure_warning(&listen, transport == "TLS") {
        tracing::warn!("serve: {w}");
        eprintln!("serve: warning: {w}");
    }
    let limits = accept::Limits::for_process();
    tracing::info!("serve: at most {} connections at once", limits.connections);
    let server = match bound.into_tokio()? {
        listen::Tokio::Tcp(l) => {
            let local = l.local_addr()?;
            eprintln!("serve: listening on {local} (gRPC, {transport})");
            tracing::info!("serve: listening on {local}");
            let incoming = accept::incoming(l, limits);
            tokio::spawn(router.serve_with_incoming_shutdown(incoming, shutdown))
        }
        listen::Tokio::Unix(l, path) => {
            eprintln!(
                "serve: listening on unix://{} (gRPC, {transport})",
                path.display()
            );
            tracing::info!("serve: listening on unix://{}", path.display());
            let incoming = accept::incoming(l, limits);
            tokio::spawn(router.serve_with_incoming_shutdown(incoming, shutdown))
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    jobs.stop_accepting();
    let open = jobs.open();
    eprintln!(
        "serve: stopping: no new requests; {open} open, waiting up to {} s",
        drain.as_secs()
    );
    tracing::info!("serve: stopping with {open} open request(s)");
    let deadline = tokio::time::Instant::now() + drain;
    while jobs.open() > 0 && tokio::time::Instant::now() < deadline {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            // A second signal: stop waiting.
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    // The callers still waiting hear why rather than see their connection close.
    let dropped = jobs.abandon_open(&format!(
        "the server stopped before this proof was done (--drain-timeout {} s ran out)",
        drain.as_secs()
    ));
    // The answers just made reach their callers before the connections close; the viewers'
    // streams end.
    stopping.send_replace(true);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = done_tx.send(());
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(Ok(r)) => r.context("serving")?,
        Ok(Err(e)) => return Err(anyhow::anyhow!("the server task ended: {e}")),
        Err(_) => tracing::warn!("serve: connections still open after the drain; closing"),
    }
    Ok(dropped)
}

/// The engine's outcomes, into the request table, until `stop`.
fn outcomes(jobs: &jobs::Jobs, stop: &AtomicBool) {
    use provetop_engine::pipeline::Outcome;
    while !stop.load(Ordering::SeqCst) {
        match jobs
            .engine
            .outcomes()
            .recv_timeout(Duration::from_millis(200))
        {
            Ok(Outcome::Partition(p)) => jobs.partition(&p),
            Ok(Outcome::JobDone {
                job,
                failed,
                cancelled,
                ..
            }) => jobs.job_done(job, failed, cancelled),
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
        }
    }
}
