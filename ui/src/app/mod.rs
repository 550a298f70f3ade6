//! The dashboard's UI state and input: which view and pane has focus, the timeline's window
//! (live or paused, zoom), selections, the settings form. Keys and mouse change it and may
//! yield `Control`s for the engine; drawing reads it and never changes it.

mod form;
pub mod input;
mod mouse;

pub use form::{field_kind, FieldKind, Form, Row, ROWS};

use std::path::PathBuf;

use provetop_telemetry::control::Control;
use provetop_telemetry::{Nanos, SessionInfo};
use ratatui::crossterm::event::Event as TermEvent;

use crate::settings::UiSettings;
use crate::state::{LaneRef, State};
use crate::theme::Theme;

pub const SECOND: Nanos = 1_000_000_000;

/// Timeline windows, from 1 s to 10 min.
pub const ZOOMS: [Nanos; 9] = [
    SECOND,
    2 * SECOND,
    5 * SECOND,
    10 * SECOND,
    30 * SECOND,
    60 * SECOND,
    120 * SECOND,
    300 * SECOND,
    600 * SECOND,
];
pub const DEFAULT_ZOOM: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Timeline,
    Pipeline,
    Metrics,
    Settings,
    Log,
}

pub const VIEWS: [(View, &str); 5] = [
    (View::Timeline, "Timeline"),
    (View::Pipeline, "Pipeline"),
    (View::Metrics, "Metrics"),
    (View::Settings, "Settings"),
    (View::Log, "Log"),
];

/// What has the keyboard. Tab walks this ring in order; the view follows the pane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    Lanes,
    LogStrip,
    Jobs,
    Devices,
    Form,
    History,
    LogLines,
}

pub const PANES: [Pane; 7] = [
    Pane::Lanes,
    Pane::LogStrip,
    Pane::Jobs,
    Pane::Devices,
    Pane::Form,
    Pane::History,
    Pane::LogLines,
];

impl Pane {
    pub fn view(self) -> View {
        match self {
            Pane::Lanes | Pane::LogStrip => View::Timeline,
            Pane::Jobs => View::Pipeline,
            Pane::Devices => View::Metrics,
            Pane::Form | Pane::History => View::Settings,
            Pane::LogLines => View::Log,
        }
    }
}

impl View {
    pub fn first_pane(self) -> Pane {
        PANES
            .iter()
            .copied()
            .find(|p| p.view() == self)
            .unwrap_or(Pane::Lanes)
    }
}

/// The selected idle gap: the device and the gap's start, which stays put while it grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapSel {
    pub device: usize,
    pub start: Nanos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub text: String,
    pub error: bool,
    pub until: Nanos,
}

/// What a prompt's text is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PromptKind {
    /// A mark's label.
    #[default]
    Mark,
    /// A replay's time to go to.
    Seek,
}

/// Text being typed at the bottom line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prompt {
    pub text: String,
    pub kind: PromptKind,
}

/// A replay's transport, as its source reports it each frame.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayStatus {
    pub file: String,
    pub playing: bool,
    pub speed: f64,
    pub start: Nanos,
    pub end: Nanos,
}

/// A recording in progress, as the live source reports it each frame.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordingStatus {
    pub file: String,
    pub bytes: u64,
    /// Events the recorder could not write (the disk fell behind).
    pub dropped: u64,
}

pub struct Ui {
    pub focus: Pane,
    pub help: bool,
    /// The end of the timeline's window while paused; `None` follows the clock.
    pub paused_at: Option<Nanos>,
    pub zoom: usize,
    /// Index into `State::timelines.lanes()`.
    pub lane: usize,
    pub gap: Option<GapSel>,
    pub job: Option<u64>,
    /// Lines scrolled up from the newest, in the log strip and the log view.
    pub log_scroll: usize,
    pub history_scroll: usize,
    pub device_scroll: usize,
    pub form: Form,
    pub prompt: Option<Prompt>,
    pub notice: Option<Notice>,
    pub settings: UiSettings,
    pub theme_name: String,
    /// Where `[ui]` is saved; `None` when there is nowhere (no HOME, no --config).
    pub config_path: Option<PathBuf>,
    /// Partitions of a job submitted from the dashboard.
    pub partitions: u32,
    /// The terminal's size at the last draw, for mapping mouse positions.
    pub size: (u16, u16),
    /// Set when the source is a recording: its transport.
    pub replay: Option<ReplayStatus>,
    /// Set while the live session is being recorded.
    pub recording: Option<RecordingStatus>,
    /// Until when a second quit key quits although jobs are in flight.
    pub confirm_quit: Option<Nanos>,
    /// The session time under the mouse on the lanes (the last click or hover): the cell
    /// whose exact figures the timeline shows.
    pub cell: Option<Nanos>,
}

impl Ui {
    pub fn new(settings: UiSettings, theme_name: &str) -> Ui {
        Ui {
            focus: Pane::Lanes,
            help: false,
            paused_at: None,
            zoom: DEFAULT_ZOOM,
            lane: 0,
            gap: None,
            job: None,
            log_scroll: 0,
            history_scroll: 0,
            device_scroll: 0,
            form: Form::default(),
            prompt: None,
            notice: None,
            settings,
            theme_name: theme_name.to_string(),
            config_path: None,
            partitions: 1,
            size: (0, 0),
            replay: None,
            recording: None,
            confirm_quit: None,
            cell: None,
        }
    }

    pub fn view(&self) -> View {
        self.focus.view()
    }

    pub fn zoom_len(&self) -> Nanos {
        ZOOMS[self.zoom.min(ZOOMS.len() - 1)]
    }

    /// Where the timeline was paused, never after `now`; `None` when live. In the first
    /// window of a session it lies before the window's end, which cannot be earlier than a
    /// whole zoom.
    pub fn paused_point(&self, now: Nanos) -> Option<Nanos> {
        self.paused_at.map(|p| p.min(now))
    }

    /// The timeline's window `[t0, t1)`: always a whole zoom long, ending now when live.
    pub fn window(&self, now: Nanos) -> (Nanos, Nanos) {
        let len = self.zoom_len();
        let end = self.paused_at.unwrap_or(now).min(now).max(len);
        (end - len, end)
    }

    pub fn selected_lane(&self, state: &State) -> Option<LaneRef> {
        let lanes = state.timelines.lanes();
        lanes
            .get(self.lane.min(lanes.len().saturating_sub(1)))
            .copied()
    }

    /// The device under the lane cursor (a pool lane means the first device).
    pub fn selected_device(&self, state: &State) -> Option<usize> {
        match self.selected_lane(state) {
            Some(LaneRef::Device(d, _)) => Some(d),
            _ => (!state.timelines.devices.is_empty()).then_some(0),
        }
    }

    pub fn notify(&mut self, now: Nanos, text: impl Into<String>, error: bool) {
        self.notice = Some(Notice {
            text: text.into(),
            error,
            until: now + 6 * SECOND,
        });
    }
}

/// What the dashboard needs besides the session to start.
#[derive(Clone, Debug, Default)]
pub struct AppOptions {
    pub partitions: u32,
    pub config_path: Option<PathBuf>,
    /// Where user themes live (`$XDG_CONFIG_HOME/provetop/themes`).
    pub theme_dir: Option<PathBuf>,
}

/// The dashboard as a whole: state from the source, UI state, the theme in use.
pub struct App {
    pub state: State,
    pub ui: Ui,
    pub theme: Theme,
    pub theme_dir: Option<PathBuf>,
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

    pub fn draw(&mut self, f: &mut ratatui::Frame) {
        let a = f.area();
        self.ui.size = (a.width, a.height);
        crate::view::draw(f, &self.state, &self.theme, &self.ui);
    }

    pub fn session(&self) -> &SessionInfo {
        &self.state.session
    }

    /// Switches to the theme `spec` (a name or path); on failure keeps the current one.
    pub fn set_theme(&mut self, spec: &str) {
        match crate::theme::load(spec, self.theme_dir.as_deref()) {
            Ok(t) => {
                self.theme = t;
                self.ui.theme_name = spec.to_string();
                self.ui.settings.theme = spec.to_string();
            }
            Err(e) => self.report(&e),
        }
    }
}
