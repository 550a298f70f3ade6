//! What tune prints and saves: the table of steps, the best configuration, `--write`, and
//! the progress line on stderr.

use super::*;

/// A value as the config file writes it: numbers and booleans bare, the rest quoted.
pub(super) fn toml_value(v: &str) -> String {
    match v.parse::<i64>().is_ok() || v == "true" || v == "false" {
        true => v.to_string(),
        false => format!("\"{v}\""),
    }
}

pub(super) fn write_table(w: &mut impl Write, search: &Search) -> Result<()> {
    writeln!(
        w,
        "{:>4}  {:<44} {:>7} {:>8} {:>10} {:>8}  kept",
        "step", "change", "proofs", "seconds", "proofs/h", "vs start"
    )?;
    for s in &search.steps {
        let change = s
            .change
            .as_ref()
            .map_or("(start)".to_string(), Change::label);
        let (rate, ratio) = match s.proofs {
            0 => ("-".to_string(), "-".to_string()),
            _ => (
                format!("{:.0}", s.proofs_per_hour),
                format!("{:.2}×", s.ratio),
            ),
        };
        writeln!(
            w,
            "{:>4}  {:<44} {:>7} {:>8.1} {:>10} {:>8}  {}",
            s.step,
            change,
            s.proofs,
            s.seconds,
            rate,
            ratio,
            s.verdict.word()
        )?;
    }
    Ok(())
}

pub(super) fn write_best(
    w: &mut impl Write,
    search: &Search,
    differing: &BTreeMap<String, String>,
    out: &Driven,
) -> Result<()> {
    writeln!(
        w,
        "a change was kept when it beat the configuration in force by more than {:.0} % (twice the windows' noise, at least 3 %)",
        search.threshold() * 100.0
    )?;
    let ended = match out.ended {
        "converged" => "the search converged: every single change from the best was measured",
        "budget" => "the budget was spent",
        "signal" => "stopped by a signal",
        _ => "stopped by a failed proof",
    };
    writeln!(w, "{ended}")?;
    if let Some(rate) = search.current_rate {
        writeln!(
            w,
            "best: {rate:.0} proofs/h, {:.2}× the start",
            best_ratio(&search.steps)
        )?;
    }
    match differing.is_empty() {
        true => writeln!(
            w,
            "best configuration: the defaults (no [engine] field differs from them)"
        )?,
        false => {
            writeln!(
                w,
                "best configuration ([engine] fields that differ from the defaults):"
            )?;
            for (k, v) in differing {
                writeln!(w, "  {k} = {}", toml_value(v))?;
            }
        }
    }
    if let Some(c) = search.current.get(CONCURRENCY) {
        writeln!(w, "jobs in flight: {c} (--concurrency {c})")?;
    }
    let all = out.failed.is_empty() && out.verified == out.finished;
    writeln!(
        w,
        "proofs: {} finished, {} verified{}",
        out.finished,
        out.verified,
        match all {
            true => " (every proof verified)",
            false => "",
        }
    )?;
    if out.unfinished > 0 {
        writeln!(w, "stopped with {} job(s) unfinished", out.unfinished)?;
    }
    Ok(())
}

/// `--write`'s file: `--config`, else the default path.
pub(super) fn write_path(args: &TuneArgs) -> Result<PathBuf> {
    args.session
        .config
        .clone()
        .or_else(crate::config_file::default_path)
        .context("--write: nowhere to write: give --config FILE, or set HOME")
}

/// Writes the fields that differ from the defaults, and sets back to the default any field the
/// file holds with another value than the best configuration's; returns the path and the
/// number of fields written.
pub(super) fn write(
    path: &std::path::Path,
    args: &crate::cli::EngineArgs,
    best: &BTreeMap<String, String>,
    differing: &BTreeMap<String, String>,
) -> Result<(PathBuf, usize)> {
    let file = crate::config_file::load(args.config.as_deref())?;
    let mut changes = differing.clone();
    for (key, value) in &file.engine {
        let Some(want) = best.get(key).filter(|_| !differing.contains_key(key)) else {
            continue;
        };
        let text = match value {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if &text != want && text != "auto" {
            let default = match AUTO_KEYS.contains(&key.as_str()) {
                true => "auto".to_string(),
                false => want.clone(),
            };
            changes.insert(key.clone(), default);
        }
    }
    if changes.is_empty() {
        return Ok((path.to_path_buf(), 0));
    }
    provetop_ui::config_edit::save_engine(path, &changes)
        .map_err(|e| anyhow::anyhow!("--write: {e}"))?;
    Ok((path.to_path_buf(), changes.len()))
}

/// Progress on stderr: a bar redrawn in place on a terminal, a line per step elsewhere.
pub(super) struct Progress {
    pub(super) tty: bool,
    pub(super) budget: TuneBudget,
    pub(super) last: Instant,
    pub(super) drawn: bool,
}

impl Progress {
    pub(super) fn new(budget: TuneBudget) -> Progress {
        Progress {
            tty: std::io::stderr().is_terminal(),
            budget,
            last: Instant::now(),
            drawn: false,
        }
    }

    /// A finished step, kept on screen.
    pub(super) fn step(&mut self, s: &Step) {
        self.clear();
        let change = s
            .change
            .as_ref()
            .map_or("the start".to_string(), Change::label);
        eprintln!(
            "tune: step {} {change}: {} proofs in {:.1} s, {:.0} proofs/h ({:.2}× the start): {}",
            s.step,
            s.proofs,
            s.seconds,
            s.proofs_per_hour,
            s.ratio,
            s.verdict.word()
        );
    }

    pub(super) fn draw(
        &mut self,
        search: &Search,
        finished: u64,
        elapsed: f64,
        target: Option<u64>,
    ) {
        if !self.tty || self.last.elapsed() < Duration::from_millis(250) {
            return;
        }
        self.last = Instant::now();
        let frac = match self.budget {
            TuneBudget::Time(d) => elapsed / d.as_secs_f64(),
            TuneBudget::Proofs(n) => finished as f64 / n as f64,
        }
        .clamp(0.0, 1.0);
        let filled = (frac * 20.0).round() as usize;
        let what = match search.running_change() {
            None => "finishing jobs in flight".to_string(),
            Some(c) => {
                let label = c.map_or("the start".to_string(), Change::label);
                match search.progress() {
                    Some((n, true)) => format!(
                        "step {} {label}: {n}/{} proofs",
                        search.steps.len(),
                        target.map_or("?".into(), |t| t.to_string())
                    ),
                    _ => format!(
                        "step {} {label}: waiting out earlier jobs",
                        search.steps.len()
                    ),
                }
            }
        };
        let best = search
            .current_rate
            .map_or(String::new(), |r| format!(" · best {r:.0} proofs/h"));
        eprint!(
            "\r\x1b[2Ktune [{}{}] {:>3.0}% {} · {what}{best}",
            "#".repeat(filled),
            "-".repeat(20 - filled),
            frac * 100.0,
            clock(elapsed)
        );
        self.drawn = true;
    }

    pub(super) fn clear(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }

    pub(super) fn done(&mut self) {
        self.clear();
    }
}
