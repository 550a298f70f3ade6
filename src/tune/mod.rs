//! `provetop tune`: one engine, jobs kept flowing, and a greedy search over its live
//! `[engine]` settings (and the jobs kept in flight); a table of what was tried, the best
//! configuration, and `--write` to save it. The search itself is in `search`.

mod output;
mod run_loop;
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
use output::*;
use run_loop::*;
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
    let precompiled =
        provetop_engine::pipeline::auto::precompiled_for(cfg, workload, abc_on_devices);
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
    let machine = provetop_engine::pipeline::auto::Machine::here(engine.backend(), gpus);
    provetop_engine::pipeline::auto::resolve(&mut cfg, &machine);
    values(
        &cfg,
        &session.plan.workload,
        engine.abc_on_devices(),
        session.plan.concurrency,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_take_precompiled_as_jobs_of_the_workload_do() {
        let mut cfg = EngineConfig::default();
        let m = provetop_engine::pipeline::auto::Machine {
            cores: 2,
            gpus: 0,
            backend: BackendKind::Cpu,
        };
        provetop_engine::pipeline::auto::resolve(&mut cfg, &m);
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
