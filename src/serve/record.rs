//! serve's recording across restarts: a daemon is started again with the same `record = FILE`
//! (its config file, or `--record`), so an existing FILE is the last run's recording and is
//! moved aside (`FILE` → `serve.1.ptrec`, …, the last `KEEP` runs kept) rather than refused,
//! which made `Restart=on-failure` a crash loop. `--force` still overwrites it instead.

use anyhow::{Context, Result};
use provetop_telemetry::output;

use crate::cli::EngineArgs;

/// Earlier runs' recordings kept beside the current one.
pub const KEEP: u32 = 4;

/// Moves the last run's recording aside, when there is one, after the same checks a new
/// recording gets (not an input, not a link, a folder or a FIFO).
pub fn rotate(args: &EngineArgs) -> Result<()> {
    let Some(path) = args.record.as_deref().filter(|_| !args.force) else {
        return Ok(());
    };
    let inputs = crate::run::inputs(args, args.params.as_deref());
    output::check("--record", path, &inputs, true)?;
    if let Some(to) = output::rotate(path, KEEP)
        .with_context(|| format!("--record {}: moving the last run's aside", path.display()))?
    {
        eprintln!(
            "serve: the last run's recording moved to {} (the last {KEEP} runs are kept)",
            to.display()
        );
        tracing::info!("serve: {} moved to {}", path.display(), to.display());
    }
    Ok(())
}
