//! `provetop export FILE --perfetto OUT.json|OUT.pftrace`: opens the recording, writes the
//! trace (`provetop_telemetry::export::{perfetto, pftrace}`) and says what it wrote.

use anyhow::{Context, Result};
use provetop_telemetry::export::perfetto::write_trace;
use provetop_telemetry::export::pftrace::write_pftrace;
use std::io::{BufWriter, Write};

use crate::cli::ExportArgs;
use crate::run;

pub fn main(args: &ExportArgs) -> Result<i32> {
    let mut rec = crate::replay::open(&args.file)?;
    let file = std::fs::File::create(&args.perfetto).map_err(|e| {
        run::UsageError(anyhow::anyhow!(
            "--perfetto {}: {e}",
            args.perfetto.display()
        ))
    })?;
    let mut out = BufWriter::new(file);
    // Perfetto's own protobuf for `.pftrace` (and `.perfetto-trace`), JSON otherwise.
    let native = args
        .perfetto
        .extension()
        .is_some_and(|e| e == "pftrace" || e == "perfetto-trace");
    let (counts, notes) = if native {
        write_pftrace(&mut rec, &mut out)
    } else {
        write_trace(&mut rec, &mut out)
    }
    .context("writing the trace")?;
    out.flush()
        .with_context(|| format!("writing {}", args.perfetto.display()))?;
    for n in notes {
        eprintln!("provetop: {}: {n}", args.file.display());
    }
    eprintln!(
        "exported {} slices, {} counter values and {} instants to {} (open it in ui.perfetto.dev)",
        counts.slices,
        counts.counters,
        counts.instants,
        args.perfetto.display()
    );
    Ok(0)
}
