//! `provetop fleet ADDR…`: every rig on one screen, from each rig's summary stream
//! (`provetop.v1.Fleet`) rather than its full history. `config` reads the `[fleet]` table,
//! `client` keeps one row a rig (reconnecting with backoff), `simulate` serves made-up rigs for
//! measuring the view; the view itself is `provetop_ui::fleet`. Enter opens a rig's full
//! dashboard (`attach`'s), and quitting it comes back here.

mod client;
pub mod config;
mod simulate;

use anyhow::{anyhow, Context, Result};
use parking_lot::Mutex;
use provetop_ui::fleet::{self as view, FleetRow, FleetView};
use provetop_ui::ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, KeyModifiers};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::{AttachArgs, FleetArgs};
use crate::run::{self, UsageError};
use client::Rows;
use config::Rig;

pub fn main(args: &FleetArgs, interactive: bool) -> Result<i32> {
    if let Some(n) = args.simulate {
        return simulate::main(n, args.simulate_port);
    }
    let file = run::usage(crate::config_file::load(args.config.as_deref()))?;
    let rigs = rigs(args, file.fleet)?;
    if !interactive && args.print.is_none() {
        return Err(UsageError(anyhow!("without a terminal, fleet needs --print SECS")).into());
    }
    let mut targets = vec![];
    for r in &rigs {
        let t = crate::attach::client::target(&r.addr, r.ca.as_deref())
            .map_err(|e| UsageError(anyhow!("rig {}: {e:#}", r.name)))?;
        targets.push(t);
    }
    let rows: Rows = Arc::new(Mutex::new(
        rigs.iter()
            .map(|r| FleetRow::new(&r.name, &r.addr))
            .collect(),
    ));
    // One worker: the fleet view stays within a core however many rigs it watches.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("fleet")
        .enable_all()
        .build()
        .context("starting the fleet's runtime")?;
    for (i, t) in targets.into_iter().enumerate() {
        runtime.spawn(client::watch(rows.clone(), i, t));
    }
    let result = match args.print {
        Some(secs) => print(&rows, Duration::from_secs(secs)),
        None => show(&rows, &rigs, args),
    };
    runtime.shutdown_background();
    result
}

/// The rigs: ADDR arguments (NAME=ADDR names one), else the config file's `[fleet]`.
fn rigs(args: &FleetArgs, from_file: Vec<Rig>) -> Result<Vec<Rig>> {
    let given: Vec<Rig> = args
        .addrs
        .iter()
        .map(|a| {
            let (name, addr) = match a.split_once('=') {
                Some((n, addr)) if !n.is_empty() && !n.contains(':') => (n, addr),
                _ => (a.as_str(), a.as_str()),
            };
            Rig {
                name: name.to_string(),
                addr: addr.to_string(),
                ca: args.tls_ca.clone(),
                token: args.token_file.clone(),
            }
        })
        .collect();
    let rigs = if given.is_empty() { from_file } else { given };
    if rigs.is_empty() {
        return Err(UsageError(anyhow!(
            "no rig to watch: give ADDR… or a [fleet] table of rigs in the config file"
        ))
        .into());
    }
    Ok(rigs)
}

/// `--print SECS`: waits, then one line a rig and the viewer's own peak memory and CPU time.
fn print(rows: &Rows, secs: Duration) -> Result<i32> {
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    std::thread::sleep(secs);
    let now = client::unix_now();
    for r in rows.lock().iter() {
        println!("{}", line(r, now));
    }
    let cpu = cpu_seconds() - cpu0;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "fleet: {} rigs · peak RSS {} MiB · CPU {:.2} s in {:.1} s ({:.1} % of a core)",
        rows.lock().len(),
        peak_rss_kib() / 1024,
        cpu,
        wall,
        100.0 * cpu / wall.max(1e-9)
    );
    Ok(0)
}

/// A row as one line of text.
fn line(r: &FleetRow, now: f64) -> String {
    use view::Reach;
    let reach = match &r.reach {
        Reach::Connecting => "connecting".to_string(),
        Reach::Live if !r.limited.is_empty() => r.limited.clone(),
        Reach::Live => "live".to_string(),
        Reach::Unreachable { since, why } => {
            format!("unreachable for {:.0} s ({why})", (now - since).max(0.0))
        }
    };
    let rates: Vec<String> = r
        .rates
        .iter()
        .map(|(k, a, b)| format!("{k} {a:.0}/{b:.0} per h"))
        .collect();
    format!(
        "{} · {reach} · {} · {} · failures {} · alerts [{}]",
        r.name,
        r.serving,
        rates.join(", "),
        r.failures,
        r.shown_alerts().join(", ")
    )
}

/// This process's peak resident memory (KiB), from /proc.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// This process's user and system CPU time so far (seconds).
fn cpu_seconds() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes the struct it is given; it is read only on success.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) } == 0;
    if !ok {
        return 0.0;
    }
    // SAFETY: initialised by the successful call above.
    let u = unsafe { u.assume_init() };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The terminal view until q; Enter hands the terminal to the selected rig's dashboard.
fn show(rows: &Rows, rigs: &[Rig], args: &FleetArgs) -> Result<i32> {
    let settings = crate::dashboard::settings(args.config.as_deref(), args.theme.as_deref())?;
    let theme = provetop_ui::theme::load(&settings.theme, None)
        .map_err(|e| UsageError(anyhow!("--theme: {e}")))?;
    let mut v = FleetView::default();
    let mut tui = provetop_ui::terminal::enter().context("setting up the terminal")?;
    loop {
        if tui.signalled() {
            return Ok(0);
        }
        let snapshot = rows.lock().clone();
        let shown = view::visible(&snapshot, &v);
        v.selected = v.selected.min(shown.len().saturating_sub(1));
        tui.terminal.draw(|f| {
            view::draw(f, f.area(), &snapshot, &v, client::unix_now(), &theme);
        })?;
        let Some(Event::Key(k)) = tui.poll(Duration::from_millis(250))? else {
            continue;
        };
        if k.kind != KeyEventKind::Press {
            continue;
        }
        if v.editing {
            match k.code {
                KeyCode::Enter => v.editing = false,
                KeyCode::Esc => (v.editing, v.filter) = (false, String::new()),
                KeyCode::Backspace => drop(v.filter.pop()),
                KeyCode::Char(c) => v.filter.push(c),
                _ => {}
            }
            continue;
        }
        match k.code {
            KeyCode::Char('q') => return Ok(0),
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => return Ok(0),
            KeyCode::Down | KeyCode::Char('j') => v.selected += 1,
            KeyCode::Up | KeyCode::Char('k') => v.selected = v.selected.saturating_sub(1),
            KeyCode::Char('s') => v.sort = v.sort.next(),
            KeyCode::Char('/') => v.editing = true,
            KeyCode::Esc => v.filter.clear(),
            KeyCode::Enter => {
                let Some(&i) = shown.get(v.selected) else {
                    continue;
                };
                drop(tui);
                let r = &rigs[i];
                let attach = AttachArgs {
                    addr: r.addr.clone(),
                    token_file: r.token.clone(),
                    name: None,
                    record: None,
                    force: false,
                    summary: false,
                    json: false,
                    tls_ca: r.ca.clone(),
                    config: args.config.clone(),
                    theme: args.theme.clone(),
                    max_memory: None,
                };
                if let Err(e) = crate::attach::main(&attach, true, args.theme.as_deref(), true) {
                    tracing::warn!("fleet: the dashboard of {}: {e:#}", r.name);
                }
                tui = provetop_ui::terminal::enter().context("setting up the terminal")?;
                tui.terminal.clear()?;
            }
            _ => {}
        }
    }
}
