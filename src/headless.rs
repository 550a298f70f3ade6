//! The main command without a terminal: prove the default workload, a status line per proof
//! on stderr, exit 0 when every proof verified (1 a failure, 3 stopped by a signal first).

use anyhow::Result;
use provetop_engine::pipeline::PartitionResult;
use provetop_telemetry::Stage;

use crate::cli::EngineArgs;
use crate::run;

pub fn main(args: &EngineArgs, note: Option<&str>) -> Result<i32> {
    let session = run::start(args)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    crate::params::prepare(&session)?;
    let plan = &session.plan;
    eprintln!(
        "provetop: proving {} job(s) of {} ({} partition(s) each) on the {} backend",
        plan.proofs,
        plan.workload.label(),
        plan.partitions,
        session.engine.backend()
    );
    let total = plan.proofs * plan.partitions as u64;
    let mut n = 0;
    let out = run::run(&session, |p| {
        n += 1;
        status_line(n, total, p);
    })?;
    session.engine.shutdown();
    let s = out.report.summary(out.start, out.end);
    eprintln!(
        "provetop: {}/{} proofs verified in {:.2} s ({:.0} proofs/hour)",
        s.verified, s.proofs, s.wall_seconds, s.proofs_per_hour
    );
    if let Some(line) = out.stopped_line(plan.proofs) {
        eprintln!("provetop: {line}");
    }
    Ok(out.exit_code(true))
}

/// `proof 2/3: job 1 partition 0 on cpu0 verified · synthesis 0.21 s · gpu 0.52 s · …`, where
/// synthesis includes `abc_eval`.
pub fn status_line(n: u64, total: u64, p: &PartitionResult) {
    let r = &p.record;
    let get = |s: Stage| r.stages.get(&s).copied().unwrap_or(0.0);
    let region: f64 = r
        .stages
        .iter()
        .filter(|(s, _)| s.is_compute() && !matches!(s, Stage::BatchAdd | Stage::AbcEval))
        .map(|(_, v)| v)
        .sum();
    let state = match &r.error {
        None => "verified".to_string(),
        Some(e) => format!("FAILED: {e}"),
    };
    eprintln!(
        "proof {n}/{total}: job {} partition {} on {} {state} · synthesis {:.2} s · queue {:.2} s · region {:.2} s · verify {:.3} s",
        r.job,
        r.partition,
        if r.device.is_empty() { "-" } else { &r.device },
        get(Stage::Synthesis) + get(Stage::AbcEval),
        get(Stage::QueueWait),
        region,
        get(Stage::Verify),
    );
}
