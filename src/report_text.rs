//! A report as the text lines `bench` prints and `replay --summary` prints the same way: per
//! kind, the advisor's verdict, the segments between changes, each device's idle gaps.

use anyhow::Result;
use std::io::Write;

/// A short block per kind of job when the kinds tell more than the run's figures
/// (`report::kinds_tell`): `kind winning-post: 2 job(s), 2/2 verified · 720 proofs/hour ·
/// latency 4.10 s (3.90–4.30)`, then `  msm_h 1.90 s, synthesis 0.21 s, … · waited before it:
/// waiting_synthesis 0.40 s, queued 0.10 s` (its largest stage medians, largest first;
/// the two largest idle-gap causes charged to it).
pub fn write_kinds(
    w: &mut impl Write,
    kinds: &std::collections::BTreeMap<String, provetop_telemetry::report::KindSummary>,
) -> Result<()> {
    if !provetop_telemetry::report::kinds_tell(kinds) {
        return Ok(());
    }
    let list = |v: Vec<(&str, f64)>| -> Vec<String> {
        v.into_iter()
            .map(|(k, s)| format!("{k} {s:.2} s"))
            .collect()
    };
    for (kind, k) in kinds {
        let mut line = format!(
            "kind {kind}: {} job(s), {}/{} verified · {:.0} proofs/hour",
            k.jobs, k.verified, k.proofs, k.proofs_per_hour
        );
        if let Some(l) = &k.latency {
            line.push_str(&format!(
                " · latency {:.2} s ({:.2}–{:.2})",
                l.median, l.min, l.max
            ));
        }
        writeln!(w, "{}", provetop_telemetry::text::printable(&line))?;
        let stages = list(k.main_stages(4));
        let gaps = match list(k.main_gaps(2)) {
            g if g.is_empty() => "nothing".to_string(),
            g => g.join(", "),
        };
        match stages.is_empty() {
            true => writeln!(w, "  waited before it: {gaps}")?,
            false => writeln!(w, "  {} · waited before it: {gaps}", stages.join(", "))?,
        }
    }
    Ok(())
}

/// `bottleneck: …` and one `advice: …` line per recommendation (`advice: none` for none).
pub fn write_verdict(w: &mut impl Write, v: &provetop_telemetry::advice::Verdict) -> Result<()> {
    writeln!(w, "bottleneck: {}", v.bottleneck)?;
    if v.advice.is_empty() {
        writeln!(w, "advice: none (no change is expected to help)")?;
    }
    for a in &v.advice {
        writeln!(w, "advice: {}", a.line())?;
    }
    Ok(())
}

/// The run between its changes and marks, each stretch and how it differs from the one
/// before; nothing when nothing split the run.
pub fn write_segments(
    w: &mut impl Write,
    segments: &[provetop_telemetry::report::Segment],
) -> Result<()> {
    if segments.len() < 2 {
        return Ok(());
    }
    writeln!(w, "segments (split at each config change and mark):")?;
    for s in segments {
        writeln!(w, "  {}", s.line())?;
        if let Some(c) = &s.change {
            writeln!(w, "    after {}", c.line)?;
        }
    }
    Ok(())
}

/// `gaps cpu0: idle 0.52 s · waiting_synthesis 0.41 s · no_work 0.11 s` (causes with time,
/// largest first).
pub fn gap_line(d: &provetop_telemetry::report::DeviceReport) -> String {
    let mut causes: Vec<(&str, f64)> = d
        .gaps
        .iter()
        .filter(|(_, s)| **s >= 0.0005)
        .map(|(k, s)| (*k, *s))
        .collect();
    causes.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut line = format!("gaps {}: idle {:.2} s", d.id, d.idle_seconds);
    for (k, s) in causes {
        line.push_str(&format!(" · {k} {s:.2} s"));
    }
    line
}

/// `  why: lock_held after_msm_h 3.10 s, msm_b_g2 0.40 s · no_work too_few_jobs 1.00 s` (each
/// cause's reasons with time, largest first; alloc with the memory at stake), None without any.
pub fn gap_detail_line(d: &provetop_telemetry::report::DeviceReport) -> Option<String> {
    fn reasons<'a>(m: impl IntoIterator<Item = (&'a str, f64)>) -> Option<String> {
        let mut v: Vec<_> = m.into_iter().filter(|(_, s)| *s >= 0.0005).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        let parts: Vec<_> = v.iter().map(|(k, s)| format!("{k} {s:.2} s")).collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
    let g = &d.gap_detail;
    let gib = |b: f64| format!("{:.1} GiB", b / (1u64 << 30) as f64);
    let mut parts = vec![];
    if let Some(r) = reasons(g.lock_held.iter().map(|(k, s)| (k.as_str(), *s))) {
        parts.push(format!("lock_held {r}"));
    }
    if let Some(a) = &g.alloc {
        if let Some(r) = reasons(a.reasons.iter().map(|(k, s)| (*k, *s))) {
            // 0 wanted: the worker kept its buffers (or the recording predates the count).
            let mut memory: Vec<String> = (a.wanted_bytes > 0)
                .then(|| format!("wants {}", gib(a.wanted_bytes as f64)))
                .into_iter()
                .collect();
            memory.extend(a.free_bytes.map(|f| format!("{} free", gib(f))));
            let holders: Vec<&str> = a.held_by.keys().map(String::as_str).collect();
            if !holders.is_empty() {
                memory.push(format!("held by {}", holders.join(", ")));
            }
            match memory.is_empty() {
                true => parts.push(format!("alloc {r}")),
                false => parts.push(format!("alloc {r} ({})", memory.join(", "))),
            }
        }
    }
    for (cause, m) in [
        ("waiting_synthesis", &g.waiting_synthesis),
        ("no_work", &g.no_work),
    ] {
        if let Some(r) = reasons(m.iter().map(|(k, s)| (*k, *s))) {
            parts.push(format!("{cause} {r}"));
        }
    }
    (!parts.is_empty()).then(|| format!("  why: {}", parts.join(" · ")))
}
