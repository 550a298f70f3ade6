//! `provetop replay FILE`: the dashboard over a recording, or with `--summary` what `bench`
//! would have printed about it, built by the same `ReportBuilder` from the recorded events.

use anyhow::Result;
use provetop_telemetry::record::{Hole, ReadReport, Record, Recording};
use provetop_telemetry::report::ReportBuilder;
use provetop_telemetry::text::printable;
use provetop_telemetry::{Nanos, Stage};
use serde_json::json;
use std::io::{Read, Seek, Write};

use crate::cli::ReplayArgs;
use crate::run;

/// Whether the command wants the terminal (the dashboard) rather than a summary.
pub fn interactive(args: &ReplayArgs) -> bool {
    !args.summary && !args.json
}

/// Opens a recording, its decoded state bounded by `max_memory` (default 512 MiB); a file
/// that is not one, or whose header is damaged, is bad input.
pub fn open(file: &std::path::Path, max_memory: Option<u64>) -> Result<Recording> {
    let mut rec =
        run::usage(Recording::open(file).map_err(|e| anyhow::anyhow!("{}: {e}", file.display())))?;
    if let Some(m) = max_memory {
        rec.set_max_memory(m);
    }
    Ok(rec)
}

pub fn main(args: &ReplayArgs, interactive: bool, theme: Option<&str>) -> Result<i32> {
    if !(0.25..=64.0).contains(&args.speed) {
        return Err(
            run::UsageError(anyhow::anyhow!("--speed {}: from 0.25 to 64", args.speed)).into(),
        );
    }
    // The config file is checked as every mode checks it, though a summary reads none of it.
    run::usage(crate::config_file::load(args.config.as_deref()))?;
    let rec = open(&args.file, args.max_memory)?;
    if interactive {
        if let Some(s) = rec.stop() {
            let note = provetop_telemetry::record::ReadReport {
                len: rec.len(),
                stop: Some(s.clone()),
                ..Default::default()
            }
            .notes()
            .join("; ");
            eprintln!("provetop: {}: {}", args.file.display(), printable(&note));
        }
        return crate::dashboard::replay(rec, &args.file, args.config.clone(), theme, args.speed);
    }
    summary(rec, &args.file.display().to_string(), args.json)
}

/// Everything a summary needs, from one pass over the file.
pub struct Folded {
    pub report: ReportBuilder,
    pub holes: Vec<Hole>,
    /// The window the run reported on, or the recording's extent.
    pub window: (Nanos, Nanos),
    pub read: ReadReport,
}

pub fn fold<R: Read + Seek>(rec: &mut Recording<R>) -> Folded {
    let mut report = ReportBuilder::default();
    let mut holes = vec![];
    let mut run = None;
    let read = rec.for_each(|r| match r {
        Record::Event(e) => report.observe(e),
        Record::Hole(h) => holes.push(*h),
        Record::Run { start, end } => run = Some((*start, *end)),
    });
    Folded {
        report,
        holes,
        window: run.unwrap_or((rec.start(), rec.end_time())),
        read,
    }
}

/// What a summary's report keeps for each decoded byte, with margin: measured 3.9 over the
/// hostile corpus's expanding files (2.0 GB peak at 512 MiB decoded, scripts/hostile-bench.sh).
const SUMMARY_HELD_TIMES: u64 = 5;

/// Prints the summary of `rec` (`file` names it), as text or with `json` one object.
pub fn summary<R: Read + Seek>(mut rec: Recording<R>, file: &str, json: bool) -> Result<i32> {
    rec.set_held_times(SUMMARY_HELD_TIMES);
    let f = fold(&mut rec);
    let notes = f.read.notes();
    for n in &notes {
        eprintln!("provetop: {file}: {}", printable(n));
    }
    let (from, to) = f.window;
    let wall = to.saturating_sub(from) as f64 / 1e9;
    let header = &rec.header;
    let mut lost = Hole::default();
    for h in &f.holes {
        lost.add_counts(h);
    }
    let summary = f.report.summary(from, to);
    let served = provetop_telemetry::serving(&rec.header.session.workload, summary_kinds(&summary));
    let devices = f.report.devices(from, to);
    let config_events = f.report.config_events();
    let segments = f.report.segments(from, to);
    let config = f.report.config_in_force(&header.session.config);
    let cores = header.session.machine.cores.max(1);
    let verdict = f.report.verdict(from, to, &config, cores, None);
    let marks: Vec<_> = f
        .report
        .marks()
        .iter()
        .map(|m| json!({"t": m.t as f64 / 1e9, "label": m.label}))
        .collect();
    let stdout = std::io::stdout();
    let mut w = stdout.lock();
    if json {
        let v = json!({
            "version": 1,
            "recording": {
                "file": file,
                "bytes": rec.len(),
                "format": header.version,
                "writer": header.writer,
                "frames": rec.frames().len(),
                "records": f.read.records,
                "start": from as f64 / 1e9,
                "end": to as f64 / 1e9,
                // The whole file's span of session time (the window above may be a run's).
                "seconds": rec.end_time().saturating_sub(rec.start()) as f64 / 1e9,
                "complete": f.read.stop.is_none() && f.read.damage.is_empty(),
                "stopped_at": f.read.stop.as_ref().map(|s| s.at),
                "damaged": f.read.damage.iter().map(|d| json!({"at": d.at, "bytes": d.len, "why": d.why})).collect::<Vec<_>>(),
                "notes": notes,
                "not_recorded": lost,
                "holes": f.holes,
            },
            "config": header.session.config,
            "machine": header.session.machine,
            "workload": { "label": header.session.workload, "serving": served },
            "proofs": f.report.rows(),
            "summary": summary,
            "devices": devices,
            "config_events": config_events,
            "marks": marks,
            "segments": segments,
            "bottleneck": verdict.bottleneck,
            "advice": verdict.advice,
        });
        serde_json::to_writer(&mut w, &v)?;
        writeln!(w)?;
        return Ok(0);
    }
    let s = &header.session;
    let mut lines: Vec<String> = vec![];
    lines.push(format!(
        "recording {} · {} bytes · format {} ({}) · {} on {} · devices {}",
        file,
        rec.len(),
        header.version,
        header.writer,
        served,
        if s.machine.hostname.is_empty() {
            "?"
        } else {
            &s.machine.hostname
        },
        s.devices
            .iter()
            .map(|d| format!("{} ({})", d.id, d.name))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    lines.push(format!(
        "duration {:.2} s (session time {:.2} s to {:.2} s)",
        wall,
        from as f64 / 1e9,
        to as f64 / 1e9
    ));
    lines.push(format!(
        "proofs {}/{} verified · {} failed · {:.0} proofs/hour",
        summary.verified, summary.proofs, summary.failed, summary.proofs_per_hour
    ));
    for stage in Stage::PROOF_STAGES {
        if let Some(st) = summary.stages.get(stage.key()) {
            lines.push(format!(
                "  {:<12} median {:>9.4} s  min {:>9.4} s  max {:>9.4} s",
                stage.key(),
                st.median,
                st.min,
                st.max
            ));
        }
    }
    let mut kinds = vec![];
    crate::report_text::write_kinds(&mut kinds, &summary.kinds)?;
    lines.extend(String::from_utf8_lossy(&kinds).lines().map(str::to_string));
    for d in &devices {
        lines.push(format!(
            "device {} busy {:.1} % ({} partitions)",
            d.id,
            d.busy_ratio * 100.0,
            d.partitions
        ));
        lines.push(crate::report_text::gap_line(d));
        if let Some(why) = crate::report_text::gap_detail_line(d) {
            lines.push(why);
        }
    }
    for c in &config_events {
        let what = if c.applied {
            "applied".to_string()
        } else {
            format!("refused: {}", c.error.clone().unwrap_or_default())
        };
        lines.push(format!(
            "config at {:.2} s: {} {} -> {} by {} ({what})",
            c.t, c.key, c.from, c.to, c.by
        ));
    }
    for m in f.report.marks() {
        lines.push(format!("mark at {:.2} s: {}", m.t as f64 / 1e9, m.label));
    }
    let mut seg = vec![];
    crate::report_text::write_verdict(&mut seg, &verdict)?;
    crate::report_text::write_segments(&mut seg, &segments)?;
    lines.extend(String::from_utf8_lossy(&seg).lines().map(str::to_string));
    if lost.total() > 0 {
        lines.push(format!(
            "not recorded: {} in {} hole(s) (the recorder fell behind)",
            lost.describe(),
            f.holes.len()
        ));
    }
    lines.extend(notes);
    // Strings from the file reach the terminal only escaped.
    for l in &lines {
        writeln!(w, "{}", printable(l))?;
    }
    Ok(0)
}

/// Each kind's ended jobs: what a served session's header names.
fn summary_kinds(summary: &provetop_telemetry::report::Summary) -> Vec<(&str, usize)> {
    summary
        .kinds
        .iter()
        .map(|(k, s)| (k.as_str(), s.jobs))
        .collect()
}
