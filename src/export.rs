//! `provetop export FILE --perfetto OUT.json|OUT.pftrace`: opens the recording, writes the
//! trace (`provetop_telemetry::export::{perfetto, pftrace}`) and says what it wrote.

use anyhow::{Context, Result};
use provetop_telemetry::export::perfetto::write_trace;
use provetop_telemetry::export::pftrace::write_pftrace;
use provetop_telemetry::output;
use provetop_telemetry::text::printable;

use crate::cli::ExportArgs;
use crate::run;

/// What the exporter keeps for each decoded byte, with margin: about 2 (issue 46: 0.94 to
/// 1.04 GB at 512 MiB decoded, before the bound covered the slices).
const EXPORT_HELD_TIMES: u64 = 3;

pub fn main(args: &ExportArgs) -> Result<i32> {
    // Before any work: the trace must not land on the recording, or through a link.
    let input = [("the recording", args.file.as_path())];
    run::usage(output::check("--perfetto", &args.perfetto, &input, true).map_err(Into::into))?;
    let mut rec = crate::replay::open(&args.file, args.max_memory)?;
    // The exporter keeps each slice until the end (to lay out overlapping ones): the bound
    // covers that too.
    rec.set_held_times(EXPORT_HELD_TIMES);
    // Perfetto's own protobuf for `.pftrace` (and `.perfetto-trace`), JSON otherwise.
    let native = args
        .perfetto
        .extension()
        .is_some_and(|e| e == "pftrace" || e == "perfetto-trace");
    // A temporary file renamed into place: an old trace stays whole until the new one is.
    let (counts, notes) = output::write_whole(&args.perfetto, |out| {
        if native {
            write_pftrace(&mut rec, out)
        } else {
            write_trace(&mut rec, out)
        }
        .context("writing the trace")
    })
    .with_context(|| format!("writing {}", args.perfetto.display()))?;
    for n in notes {
        eprintln!("provetop: {}: {}", args.file.display(), printable(&n));
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
