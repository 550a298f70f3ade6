//! The dashboard's input loop: keys and mouse change the UI state (`state::ui`) and may yield
//! `Control`s for the engine; drawing is `view`'s, called from here.

pub mod input;
mod motion;
mod mouse;
mod text;

// The UI state's types, where callers have always found them.
pub use crate::state::form::{field_kind, FieldKind, Form, Row, ROWS};
pub use crate::state::ui::*;

use crate::colours::Colours;

use std::path::PathBuf;

use provetop_telemetry::control::Control;
use provetop_telemetry::SessionInfo;
use ratatui::crossterm::event::Event as TermEvent;

use crate::settings::UiSettings;
use crate::state::State;
use crate::theme::Theme;

/// What the dashboard needs besides the session to start.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    /// Partitions of a job submitted from the dashboard; 0 is taken as 1.
    pub partitions: u32,
    /// Where `[ui]` (and `[engine]` changes) are saved; `None`: nowhere, and saving says so.
    pub config_path: Option<PathBuf>,
    /// Where user themes live (`$XDG_CONFIG_HOME/provetop/themes`).
    pub theme_dir: Option<PathBuf>,
}

/// The dashboard as a whole: state from the source, UI state, the theme in use.
pub struct App {
    /// What the source has fed in: the session's events folded for the views.
    pub state: State,
    /// Focus, window, selections and the settings in effect.
    pub ui: Ui,
    /// The theme drawing uses.
    pub theme: Theme,
    /// Where user themes are looked up by name; `None`: built-in themes and paths only.
    pub theme_dir: Option<PathBuf>,
    /// What the terminal shows: every theme is fitted to it.
    colours: Colours,
}

impl App {
    /// Loads the settings' theme; a theme that fails to load is reported in the log pane and
    /// as a notice, and the default is used.
    pub fn new(session: SessionInfo, settings: UiSettings, opts: AppOptions) -> App {
        let (theme, err) =
            crate::theme::load_or_default(&settings.theme, opts.theme_dir.as_deref());
        let theme_name = if err.is_some() {
            crate::theme::DEFAULT.to_string()
        } else {
            settings.theme.clone()
        };
        let mut ui = Ui::new(settings, &theme_name);
        ui.config_path = opts.config_path;
        ui.partitions = opts.partitions.max(1);
        let mut app = App {
            state: State::new(session),
            ui,
            theme,
            theme_dir: opts.theme_dir,
            colours: Colours::Rgb,
        };
        if let Some(e) = err {
            app.report(&e);
        }
        app
    }

    /// An error the user should see: a notice and a line in the log pane.
    pub fn report(&mut self, text: &str) {
        let t = self.state.now;
        self.state.logs.log(provetop_telemetry::LogLine {
            t,
            level: "WARN".into(),
            message: text.to_string(),
        });
        self.ui.notify(t, text, true);
    }

    /// Handles one terminal event; returns what the engine should do.
    pub fn handle(&mut self, ev: &TermEvent) -> Vec<Control> {
        match ev {
            TermEvent::Key(k) => input::key(self, k),
            TermEvent::Mouse(m) => {
                mouse::mouse(self, m);
                vec![]
            }
            TermEvent::Resize(w, h) => {
                self.ui.size = (*w, *h);
                vec![]
            }
            _ => vec![],
        }
    }

    /// Draws the dashboard into `f`, first noting the terminal's size for the mouse.
    pub fn draw(&mut self, f: &mut ratatui::Frame) {
        let a = f.area();
        self.ui.size = (a.width, a.height);
        crate::view::draw(f, &self.state, &self.theme, &self.ui);
    }

    /// The session the source described at its start.
    pub fn session(&self) -> &SessionInfo {
        &self.state.session
    }

    /// Fits the theme, and every one switched to later, to what the terminal shows.
    pub fn set_colours(&mut self, colours: Colours) {
        self.colours = colours;
        self.theme = colours.theme(&self.theme);
    }

    /// Switches to the theme `spec` (a name or path); on failure keeps the current one.
    pub fn set_theme(&mut self, spec: &str) {
        match crate::theme::load(spec, self.theme_dir.as_deref()) {
            Ok(t) => {
                self.theme = self.colours.theme(&t);
                self.ui.theme_name = spec.to_string();
                self.ui.settings.theme = spec.to_string();
            }
            Err(e) => self.report(&e),
        }
    }
}
