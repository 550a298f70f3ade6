//! Drawing: a pure function of (state, theme, UI state). `regions` gives the same layout to
//! the mouse handler, so a click lands on what was drawn there.

mod cells;
mod detail;
mod header;
mod help;
mod kinds;
mod log;
mod metrics;
mod pipeline;
mod settings;
pub mod timeline;
pub mod widgets;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Wrap};
use ratatui::Frame;

// Formatting has always been found here too.
pub use crate::fmt;

use crate::state::ui::{Pane, Ui, View};
use crate::state::State;
use crate::theme::Theme;

/// Below this the dashboard shows a message instead of a layout.
pub const MIN_SIZE: (u16, u16) = (60, 15);
/// From this width the views add side panels.
pub const WIDE: u16 = 120;

/// Rows of a list as drawn: `(y, index)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListGeom {
    /// The list's whole area, border included.
    pub area: Rect,
    /// Each drawn row: (screen row, index into the list).
    pub rows: Vec<(u16, usize)>,
}

/// Where each part of the screen was laid out, for the mouse handler.
#[derive(Clone, Debug, Default)]
pub struct Regions {
    /// The header line at the top.
    pub header: Rect,
    /// The line of view tabs.
    pub tabs: Rect,
    /// The view's area between the tabs and the footer.
    pub body: Rect,
    /// The bottom line: notice, prompt or the pane's keys.
    pub footer: Rect,
    /// `(view, x0, x1)` of each tab's label.
    pub tab_hits: Vec<(View, u16, u16)>,
    /// Where each visible pane is, for click-to-focus.
    pub panes: Vec<(Pane, Rect)>,
    /// The timeline's lanes; `None` outside the timeline view.
    pub lanes: Option<timeline::LanesGeom>,
    /// The pipeline's jobs table; `None` outside the pipeline view.
    pub jobs: Option<ListGeom>,
    /// The settings form's rows; `None` outside the settings view.
    pub form: Option<ListGeom>,
}

/// Whether `area` is below [`MIN_SIZE`], so only a message is drawn.
pub fn too_small(area: Rect) -> bool {
    area.width < MIN_SIZE.0 || area.height < MIN_SIZE.1
}

/// The layout `draw` uses for `area`, worked out without drawing.
pub fn regions(area: Rect, state: &State, ui: &Ui) -> Regions {
    let [header, tabs, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let mut r = Regions {
        header,
        tabs,
        body,
        footer,
        tab_hits: header::tab_hits(tabs),
        ..Regions::default()
    };
    match ui.view() {
        View::Timeline => timeline::regions(&mut r, state, ui),
        View::Pipeline => pipeline::regions(&mut r, state, ui),
        View::Metrics => r.panes.push((Pane::Devices, body)),
        View::Settings => settings::regions(&mut r, state, ui),
        View::Log => r.panes.push((Pane::LogLines, body)),
    }
    r
}

/// Draws the whole dashboard: header, tabs, the current view, footer and any overlay.
pub fn draw(f: &mut Frame, state: &State, theme: &Theme, ui: &Ui) {
    let area = f.area();
    f.buffer_mut().set_style(area, theme.base());
    if too_small(area) {
        draw_too_small(f, area, theme);
        return;
    }
    let r = regions(area, state, ui);
    header::header(f, r.header, state, theme, ui);
    header::tabs(f, &r, theme, ui);
    match ui.view() {
        View::Timeline => timeline::draw(f, &r, state, theme, ui),
        View::Pipeline => pipeline::draw(f, &r, state, theme, ui),
        View::Metrics => metrics::draw(f, r.body, state, theme, ui),
        View::Settings => settings::draw(f, &r, state, theme, ui),
        View::Log => log::draw(f, r.body, state, theme, ui, true),
    }
    header::footer(f, r.footer, state, theme, ui);
    if ui.help {
        help::draw(f, area, theme, ui);
    }
}

fn draw_too_small(f: &mut Frame, area: Rect, theme: &Theme) {
    let text = format!(
        "provetop needs a terminal of at least {}×{}; this one is {}×{}. Enlarge it, or press q to quit.",
        MIN_SIZE.0, MIN_SIZE.1, area.width, area.height
    );
    let lines = (text.chars().count() as u16).div_ceil(area.width.max(1)) + 1;
    let rect = widgets::centered(area, area.width, lines.min(area.height));
    f.render_widget(Clear, rect);
    f.render_widget(
        Paragraph::new(Line::styled(text, theme.title()))
            .style(theme.base())
            .centered()
            .wrap(Wrap { trim: true }),
        rect,
    );
}
