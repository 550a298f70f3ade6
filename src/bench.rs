//! `provetop bench`: a headless run with a per-stage table or the JSON report of docs/benchmarks.md.

use anyhow::{Context, Result};
use provetop_engine::params::io;
use provetop_engine::store::Loaded;
use provetop_telemetry::Stage;
use serde_json::json;
use std::io::Write;
use std::path::Path;

use crate::cli::BenchArgs;
use crate::report_text::{gap_detail_line, gap_line, write_kinds, write_segments, write_verdict};
use crate::run::{self, RunOutput, Session};

pub fn main(args: &BenchArgs) -> Result<i32> {
    if let (Some(server), Some(token)) = (&args.server, &args.token_file) {
        return crate::bench_control::main(args, server, token);
    }
    if let Some(server) = &args.server {
        return crate::bench_remote::main(args, server);
    }
    if let Some(dir) = &args.export_dir {
        if args.mix.is_some() {
            return run::usage(Err(anyhow::anyhow!(
                "--export-dir writes one circuit's files: not with --mix"
            )));
        }
        run::usage(export_dir(dir))?;
    }
    let mut session = run::start_mixed(&args.engine_args(), args.mix.as_ref())?;
    let loaded = crate::params::prepare(&session)?;
    let plan = &session.plan;
    eprintln!("bench: {}", header(&session));
    let total = plan.total_partitions();
    let mut n = 0;
    let out = run::run(&session, |p| {
        n += 1;
        crate::headless::status_line(n, total, p);
    })?;
    // Telemetry's own threads, measured before shutdown ends them: what collection costs.
    let telemetry_cpu = provetop_engine::telemetry::samplers::pools::threads_cpu_seconds(
        provetop_engine::telemetry::samplers::pools::is_telemetry_thread,
    );
    session.engine.shutdown();
    // The run's window goes into the recording, so its summary measures busy time alike.
    run::finish_recording(session.recorder.take(), Some((out.start, out.end)));
    if let Some(dir) = &args.export_dir {
        export(dir, &loaded, &out, plan.partitions)?;
    }
    let filecoin = crate::filecoin_check::check(&session, &out);
    let stdout = std::io::stdout();
    let mut w = stdout.lock();
    if args.json {
        let mut report = report_json(&session, &loaded, &out, telemetry_cpu);
        if let Some(f) = &filecoin {
            report["filecoin"] = json!(f);
        }
        serde_json::to_writer(&mut w, &report)?;
        writeln!(w)?;
    } else {
        write_table(&mut w, &session, &loaded, &out)?;
        if let Some(f) = &filecoin {
            writeln!(w, "{}", f.line())?;
        }
    }
    if let Some(line) = out.stopped_line(plan.proofs) {
        eprintln!("bench: {line}");
    }
    let filecoin_ok = filecoin.as_ref().is_none_or(|f| f.ok());
    Ok(out.exit_code(filecoin_ok))
}

/// `porep-2KiB · 3 job(s) × 1 partition(s) · concurrency 2 · cpu backend`.
fn header(session: &Session) -> String {
    let plan = &session.plan;
    let partitions = match plan.parts.len() {
        1 => format!(" × {} partition(s)", plan.partitions),
        _ => String::new(),
    };
    format!(
        "{} · {} job(s){partitions} · concurrency {} · {} backend",
        plan.label(),
        plan.proofs,
        plan.concurrency,
        session.engine.backend()
    )
}

fn report_json(
    session: &Session,
    loaded: &Loaded,
    out: &RunOutput,
    telemetry_cpu: f64,
) -> serde_json::Value {
    let plan = &session.plan;
    let shape = &loaded.shape;
    // Which values were chosen by `auto`, and why.
    let mut config_auto: serde_json::Map<String, serde_json::Value> = session
        .cfg
        .auto
        .iter()
        .map(|(k, why)| (k.clone(), json!(why)))
        .collect();
    if let Some(why) = &plan.concurrency_auto {
        config_auto.insert("concurrency".into(), json!(why));
    }
    let mut report = json!({
        "version": 1,
        "config": session.cfg,
        "config_auto": config_auto,
        "machine": provetop_telemetry::MachineInfo::detect(),
        "workload": {
            "name": plan.workload,
            "label": plan.workload.label(),
            "constraints": shape.num_constraints,
            "inputs": shape.num_inputs,
            "aux": shape.num_aux,
            "log2_domain": shape.log2_domain(),
            "proofs": plan.proofs,
            "partitions": plan.partitions,
            "concurrency": plan.concurrency,
            "seed": plan.seed,
            "backend": session.engine.backend(),
            "params": loaded.origin,
        },
        "proofs": out.report.rows(),
        "summary": out.report.summary(out.start, out.end),
        "config_events": out.report.config_events(),
        "unfinished_jobs": out.unfinished,
    });
    if let Some(mix) = crate::filecoin_check::mix_json(session) {
        report["workload"]["mix"] = mix;
    }
    if session.engine.bus().is_enabled() {
        report["segments"] = json!(out.report.segments(out.start, out.end));
    }
    let verdict = verdict(session, out);
    report["bottleneck"] = json!(verdict.bottleneck);
    report["advice"] = json!(verdict.advice);
    // Devices (busy time, gaps by cause) come from telemetry: absent with `--telemetry off`.
    if session.engine.bus().is_enabled() {
        report["devices"] = json!(out.report.devices(out.start, out.end));
        if let Some(host) = out.report.host(out.start, out.end) {
            report["host"] = json!(host);
        }
        // CPU time of the samplers and the exporter since the engine started (so including
        // parameter loading), against the cores over the run's wall time.
        let cores = provetop_telemetry::config::cores() as f64;
        report["telemetry"] = json!({
            "threads_cpu_seconds": telemetry_cpu,
            "cpu_ratio": telemetry_cpu / (out.wall_seconds().max(1e-9) * cores),
        });
    }
    report
}

fn write_table(
    w: &mut impl Write,
    session: &Session,
    loaded: &Loaded,
    out: &RunOutput,
) -> Result<()> {
    let summary = out.report.summary(out.start, out.end);
    writeln!(w, "{}", header(session))?;
    let parts = &session.plan.parts;
    for part in parts {
        let shape = match parts.len() {
            1 => loaded.shape.clone(),
            _ => part.workload.shape()?,
        };
        let whose = match parts.len() {
            1 => String::new(),
            _ => format!("{}: ", part.workload.label()),
        };
        writeln!(
            w,
            "{whose}per partition: {} constraints, {} public inputs, {} aux variables, domain 2^{}",
            shape.num_constraints,
            shape.num_inputs,
            shape.num_aux,
            shape.log2_domain()
        )?;
    }
    writeln!(
        w,
        "{:<12} {:>10} {:>10} {:>10}",
        "stage", "median s", "min s", "max s"
    )?;
    for stage in Stage::PROOF_STAGES {
        if let Some(s) = summary.stages.get(stage.key()) {
            writeln!(
                w,
                "{:<12} {:>10.4} {:>10.4} {:>10.4}",
                stage.key(),
                s.median,
                s.min,
                s.max
            )?;
        }
    }
    writeln!(
        w,
        "proofs {}/{} verified · wall {:.2} s · {:.0} proofs/hour",
        summary.verified, summary.proofs, summary.wall_seconds, summary.proofs_per_hour
    )?;
    write_kinds(w, &summary.kinds)?;
    if session.engine.bus().is_enabled() {
        for d in out.report.devices(out.start, out.end) {
            writeln!(
                w,
                "device {} busy {:.1} % (steady {:.1} %, {} partitions)",
                d.id,
                d.busy_ratio * 100.0,
                d.steady_busy_ratio * 100.0,
                d.partitions
            )?;
            writeln!(w, "{}", gap_line(&d))?;
            if let Some(why) = gap_detail_line(&d) {
                writeln!(w, "{why}")?;
            }
        }
    }
    write_verdict(w, &verdict(session, out))?;
    for c in out.report.config_events() {
        let what = if c.applied {
            "applied".to_string()
        } else {
            format!("refused: {}", c.error.unwrap_or_default())
        };
        writeln!(
            w,
            "config at {:.2} s: {} {} -> {} by {} ({what})",
            c.t, c.key, c.from, c.to, c.by
        )?;
    }
    if session.engine.bus().is_enabled() {
        write_segments(w, &out.report.segments(out.start, out.end))?;
    }
    Ok(())
}

/// The advisor over the run, against the configuration in force at its end.
fn verdict(session: &Session, out: &RunOutput) -> provetop_telemetry::advice::Verdict {
    let cfg = out.report.config_in_force(&session.cfg);
    let cores = provetop_telemetry::config::cores();
    out.report.verdict(
        out.start,
        out.end,
        &cfg,
        cores,
        Some(session.plan.concurrency),
    )
}

/// vk.bin, params.bin and proof-<i>.bin / inputs-<i>.bin, i = job × P + partition.
/// `--export-dir`, checked before the run: a folder, made now if missing, so a bad one costs
/// no proving.
fn export_dir(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("--export-dir {}: not a folder", dir.display());
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--export-dir {}: cannot create it", dir.display()))
}

fn export(dir: &Path, loaded: &Loaded, out: &RunOutput, partitions: u32) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut vk = vec![];
    io::write_vk(&loaded.params.vk, &mut vk)?;
    let write = provetop_telemetry::output::write_bytes;
    write(&dir.join("vk.bin"), &vk)?;
    io::save_params(&loaded.params, &dir.join("params.bin"))?;
    for r in &out.results {
        let i = r.record.job * partitions as u64 + r.record.partition as u64;
        if let Some(proof) = &r.proof {
            write(&dir.join(format!("proof-{i}.bin")), &proof.to_bytes())?;
        }
        let inputs: Vec<u8> = r.inputs.iter().flat_map(|x| x.to_bytes_le()).collect();
        write(&dir.join(format!("inputs-{i}.bin")), &inputs)?;
    }
    eprintln!(
        "exported vk.bin, params.bin and {} proof(s) to {}",
        out.results.len(),
        dir.display()
    );
    Ok(())
}
