//! The real terminal: raw mode, the alternate screen and mouse capture on entry, and all of it
//! undone on every way out: a normal return, an error, a panic on any thread, or a signal
//! (SIGINT, SIGTERM, SIGHUP, SIGQUIT). Ctrl-C itself arrives as a key in raw mode.

use std::io::{self, IsTerminal, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::crossterm::{cursor, execute};

static ACTIVE: AtomicBool = AtomicBool::new(false);
static PANICKED: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// The backend the dashboard draws through: crossterm on stdout.
pub type Backend = CrosstermBackend<Stdout>;

/// The terminal while the dashboard owns it; dropping it gives it back.
pub struct Tui {
    /// The ratatui terminal to draw frames on.
    pub terminal: ratatui::Terminal<Backend>,
    signals: Arc<AtomicBool>,
}

/// Takes over the terminal. On failure part-way, what was done is undone.
pub fn enter() -> io::Result<Tui> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICKED.store(true, Ordering::SeqCst);
            // Restore first so the message lands on the normal screen, readable.
            restore();
            previous(info);
        }));
    });
    let signals = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGQUIT,
    ] {
        signal_hook::flag::register(sig, signals.clone())?;
    }
    ACTIVE.store(true, Ordering::SeqCst);
    watchdog(signals.clone());
    let setup = || -> io::Result<ratatui::Terminal<Backend>> {
        enable_raw_mode()?;
        execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableMouseCapture,
            cursor::Hide
        )?;
        ratatui::Terminal::new(CrosstermBackend::new(io::stdout()))
    };
    match setup() {
        Ok(terminal) => Ok(Tui { terminal, signals }),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Ends the process when the terminal goes away, or when a termination signal is not acted
/// on within two seconds. Both matter because crossterm's reader spins forever on the
/// end-of-file a closed terminal gives, so the event loop may never see either.
fn watchdog(signals: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new()
        .name("tui-watchdog".into())
        .spawn(move || {
            let mut signalled = 0;
            while ACTIVE.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(200));
                let gone = !io::stdin().is_terminal();
                if signals.load(Ordering::SeqCst) {
                    signalled += 1;
                }
                if gone || signalled > 10 {
                    tracing::warn!(
                        "{}; exiting",
                        if gone {
                            "the terminal went away"
                        } else {
                            "a termination signal was not acted on"
                        }
                    );
                    restore();
                    std::process::exit(if gone { 129 } else { 143 });
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("starting the terminal watchdog: {e}");
    }
}

/// Gives the terminal back; safe to call more than once, from any thread.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            io::stdout(),
            DisableMouseCapture,
            LeaveAlternateScreen,
            cursor::Show
        );
        let _ = disable_raw_mode();
    }
}

/// Whether a thread has panicked since the dashboard started: it should stop.
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

impl Tui {
    /// Whether a termination signal arrived.
    pub fn signalled(&self) -> bool {
        self.signals.load(Ordering::SeqCst)
    }

    /// The next terminal event within `timeout`, if any.
    pub fn poll(&self, timeout: Duration) -> io::Result<Option<Event>> {
        if event::poll(timeout)? {
            event::read().map(Some)
        } else {
            Ok(None)
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        restore();
    }
}
