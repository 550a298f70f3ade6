//! The fleet view: one row a rig (its name, reachable or since when not, its devices, proofs
//! per hour by kind over a minute and ten, queues, failures, WinningPoSt's latency, alerts and
//! the advisor's sentence), sorted and filtered; a pure function of the rows, the view's state
//! and the theme. The rows are filled by `provetop fleet` from each rig's summary stream.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use crate::theme::Theme;

/// Whether a rig answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Reach {
    /// Not yet heard from.
    Connecting,
    /// Sending its summaries (or answering GetStatus).
    Live,
    /// Lost at `since` (seconds since the Unix epoch); `why` in words.
    Unreachable {
        /// When it was lost.
        since: f64,
        /// Why, in words.
        why: String,
    },
}

/// One rig's row.
#[derive(Clone, Debug, PartialEq)]
pub struct FleetRow {
    /// Its name, else its address.
    pub name: String,
    /// Where it is watched.
    pub addr: String,
    /// Whether it answers.
    pub reach: Reach,
    /// Empty for a full provetop summary; else what the rig could give (`GetStatus only: …`).
    pub limited: String,
    /// What it serves (`serving: winning-post ×3`).
    pub serving: String,
    /// (device, busy 0–1, VRAM used, VRAM total).
    pub gpus: Vec<(String, f64, u64, u64)>,
    /// (kind, proofs per hour over the last minute, over the last ten).
    pub rates: Vec<(String, f64, f64)>,
    /// (kind, priority, waiting, running).
    pub queues: Vec<(String, String, u32, u32)>,
    /// Requests answered FAILED since the rig started.
    pub failures: u64,
    /// WinningPoSt's (last, median) ms.
    pub winning: Option<(u64, u64)>,
    /// The rig's alerts firing.
    pub alerts: Vec<String>,
    /// The advisor's sentence on the rig's last minute.
    pub bottleneck: String,
}

impl FleetRow {
    /// A row for a rig not yet heard from.
    pub fn new(name: &str, addr: &str) -> FleetRow {
        FleetRow {
            name: name.into(),
            addr: addr.into(),
            reach: Reach::Connecting,
            limited: String::new(),
            serving: String::new(),
            gpus: vec![],
            rates: vec![],
            queues: vec![],
            failures: 0,
            winning: None,
            alerts: vec![],
            bottleneck: String::new(),
        }
    }

    /// Proofs per hour over the last ten minutes, all kinds.
    pub fn rate(&self) -> f64 {
        // An empty float sum is -0.0: printed "-0" without the + 0.0.
        self.rates.iter().map(|r| r.2).sum::<f64>() + 0.0
    }

    /// Requests waiting, all kinds.
    pub fn waiting(&self) -> u32 {
        self.queues.iter().map(|q| q.2).sum()
    }

    /// The alerts shown: the rig's, and `rig unreachable` while it is.
    pub fn shown_alerts(&self) -> Vec<String> {
        let mut a = self.alerts.clone();
        if matches!(self.reach, Reach::Unreachable { .. }) {
            a.insert(0, "rig unreachable".into());
        }
        a
    }
}

/// What the rows are sorted by (`s` cycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By name.
    #[default]
    Name,
    /// Most alerts first.
    Alerts,
    /// Most proofs per hour first.
    Rate,
    /// Most requests waiting first.
    Waiting,
    /// Most failures first.
    Failures,
    /// Slowest WinningPoSt first.
    Winning,
}

impl SortBy {
    /// The order after this one.
    pub fn next(self) -> SortBy {
        match self {
            SortBy::Name => SortBy::Alerts,
            SortBy::Alerts => SortBy::Rate,
            SortBy::Rate => SortBy::Waiting,
            SortBy::Waiting => SortBy::Failures,
            SortBy::Failures => SortBy::Winning,
            SortBy::Winning => SortBy::Name,
        }
    }

    /// The order in words.
    pub fn name(self) -> &'static str {
        match self {
            SortBy::Name => "name",
            SortBy::Alerts => "alerts",
            SortBy::Rate => "proofs/h",
            SortBy::Waiting => "queue",
            SortBy::Failures => "failures",
            SortBy::Winning => "winning-post latency",
        }
    }
}

/// The view's own state: the selection, the order and the filter.
#[derive(Clone, Debug, Default)]
pub struct FleetView {
    /// The selected row among those shown.
    pub selected: usize,
    /// The rows' order.
    pub sort: SortBy,
    /// Rows whose name, address, serving or alerts contain it (case-insensitive).
    pub filter: String,
    /// `/` was pressed: keys go to the filter until Enter or Esc.
    pub editing: bool,
}

/// The rows shown, as indices into `rows`, in order.
pub fn visible(rows: &[FleetRow], view: &FleetView) -> Vec<usize> {
    let needle = view.filter.to_lowercase();
    let mut idx: Vec<usize> = (0..rows.len())
        .filter(|&i| {
            let r = &rows[i];
            needle.is_empty()
                || [&r.name, &r.addr, &r.serving]
                    .iter()
                    .any(|s| s.to_lowercase().contains(&needle))
                || r.shown_alerts()
                    .iter()
                    .any(|a| a.to_lowercase().contains(&needle))
        })
        .collect();
    let key = |i: &usize| -> (i64, String) {
        let r = &rows[*i];
        let n = match view.sort {
            SortBy::Name => 0,
            SortBy::Alerts => -(r.shown_alerts().len() as i64),
            SortBy::Rate => -(r.rate() as i64),
            SortBy::Waiting => -i64::from(r.waiting()),
            SortBy::Failures => -(r.failures as i64),
            SortBy::Winning => -(r.winning.map_or(0, |w| w.0) as i64),
        };
        (n, r.name.clone())
    };
    idx.sort_by_key(key);
    idx
}

/// `08:12:03` (UTC) of `unix` seconds.
fn clock(unix: f64) -> String {
    let s = unix.max(0.0) as u64 % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn gib(b: u64) -> String {
    format!("{:.1}", b as f64 / (1u64 << 30) as f64)
}

/// One device as `gpu0 91% 65.0/80.0G`; more than two as their count, mean busy fraction and
/// VRAM summed (`8× 91% 520.0/640.0G`), so the column stays readable.
fn devices(gpus: &[(String, f64, u64, u64)]) -> String {
    let one = |n: &str, busy: f64, used: u64, total: u64| match total {
        0 => format!("{n} {:.0}%", busy * 100.0),
        t => format!("{n} {:.0}% {}/{}G", busy * 100.0, gib(used), gib(t)),
    };
    if gpus.len() > 2 {
        let busy = gpus.iter().map(|g| g.1).sum::<f64>() / gpus.len() as f64;
        let used = gpus.iter().map(|g| g.2).sum();
        let total = gpus.iter().map(|g| g.3).sum();
        return one(&format!("{}×", gpus.len()), busy, used, total);
    }
    gpus.iter()
        .map(|(n, busy, used, total)| one(n, *busy, *used, *total))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One row's cells; `now` in Unix seconds.
fn cells(r: &FleetRow, now: f64, theme: &Theme) -> Vec<Cell<'static>> {
    let reach = match &r.reach {
        Reach::Connecting => Span::styled("connecting", theme.dim()),
        Reach::Live if !r.limited.is_empty() => {
            Span::styled(r.limited.clone(), Style::default().fg(theme.warn))
        }
        Reach::Live => Span::styled("live", Style::default().fg(theme.ok)),
        Reach::Unreachable { since, .. } => Span::styled(
            format!(
                "unreachable {} ({:.0} s)",
                clock(*since),
                (now - since).max(0.0)
            ),
            Style::default()
                .fg(theme.error)
                .add_modifier(Modifier::BOLD),
        ),
    };
    let gpus = devices(&r.gpus);
    let rates = r
        .rates
        .iter()
        .map(|(k, m1, m10)| format!("{k} {m1:.0}/{m10:.0}"))
        .collect::<Vec<_>>()
        .join(" ");
    let queues = r
        .queues
        .iter()
        .filter(|q| q.2 + q.3 > 0)
        .map(|(k, p, w, run)| format!("{k}·{p} {w}+{run}"))
        .collect::<Vec<_>>()
        .join(" ");
    let winning = r
        .winning
        .map_or("—".into(), |(last, med)| format!("{last}/{med} ms"));
    let alerts = r.shown_alerts();
    let alert_style = match alerts.is_empty() {
        true => theme.dim(),
        false => Style::default().fg(theme.error),
    };
    let fail_style = match r.failures {
        0 => theme.dim(),
        _ => Style::default().fg(theme.error),
    };
    vec![
        Cell::from(r.name.clone()),
        Cell::from(Line::from(reach)),
        Cell::from(gpus),
        Cell::from(if rates.is_empty() {
            r.serving.clone()
        } else {
            rates
        }),
        Cell::from(queues),
        Cell::from(Span::styled(r.failures.to_string(), fail_style)),
        Cell::from(winning),
        Cell::from(Span::styled(
            if alerts.is_empty() {
                "—".into()
            } else {
                alerts.join(", ")
            },
            alert_style,
        )),
        Cell::from(Span::styled(r.bottleneck.clone(), theme.dim())),
    ]
}

/// Draws the fleet into `area`; `now` in Unix seconds.
pub fn draw(
    f: &mut Frame,
    area: Rect,
    rows: &[FleetRow],
    view: &FleetView,
    now: f64,
    theme: &Theme,
) {
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    let shown = visible(rows, view);
    let live = rows.iter().filter(|r| r.reach == Reach::Live).count();
    let alerts: usize = rows.iter().map(|r| r.shown_alerts().len()).sum();
    let total: f64 = rows.iter().map(FleetRow::rate).sum::<f64>() + 0.0;
    let title = Line::from(vec![
        Span::styled(" provetop fleet", theme.title()),
        Span::raw(format!(
            " · {} rigs, {live} live · {total:.0} proofs/h · {alerts} alerts · sorted by {}",
            rows.len(),
            view.sort.name()
        )),
        Span::styled(
            match view.filter.is_empty() {
                true => String::new(),
                false => format!(" · filter \"{}\" ({} shown)", view.filter, shown.len()),
            },
            Style::default().fg(theme.warn),
        ),
    ]);
    f.render_widget(Paragraph::new(title).style(theme.base()), top);
    let header = Row::new([
        "RIG",
        "STATE",
        "DEVICES busy VRAM",
        "PROOFS/H 1m/10m",
        "QUEUE wait+run",
        "FAIL",
        "WINNING last/med",
        "ALERTS",
        "BOTTLENECK",
    ])
    .style(theme.title());
    let table_rows: Vec<Row> = shown
        .iter()
        .map(|&i| Row::new(cells(&rows[i], now, theme)))
        .collect();
    let widths = [
        Constraint::Length(16),
        Constraint::Length(24),
        Constraint::Length(22),
        Constraint::Length(38),
        Constraint::Length(18),
        Constraint::Length(5),
        Constraint::Length(16),
        Constraint::Length(24),
        Constraint::Min(10),
    ];
    let table = Table::new(table_rows, widths)
        .header(header)
        .row_highlight_style(theme.selected())
        .block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(theme.border(true)),
        )
        .style(theme.base());
    let mut state = TableState::default();
    state.select((!shown.is_empty()).then(|| view.selected.min(shown.len() - 1)));
    f.render_stateful_widget(table, body, &mut state);
    let keys = match view.editing {
        true => format!(" filter: {}▏  Enter keep · Esc clear", view.filter),
        false => " ↑↓ select · Enter the rig's dashboard (Esc or q comes back) · s sort · / filter · q quit"
            .to_string(),
    };
    f.render_widget(Paragraph::new(keys).style(theme.dim()), bottom);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, rate: f64, alerts: &[&str]) -> FleetRow {
        FleetRow {
            rates: vec![("winning-post".into(), rate, rate)],
            alerts: alerts.iter().map(|a| a.to_string()).collect(),
            reach: Reach::Live,
            ..FleetRow::new(name, "127.0.0.1:1")
        }
    }

    #[test]
    fn rows_sort_and_filter_and_a_lost_rig_is_an_alert() {
        let mut rows = vec![
            row("b", 10.0, &[]),
            row("a", 5.0, &[]),
            row("c", 50.0, &["X"]),
        ];
        let mut v = FleetView::default();
        assert_eq!(visible(&rows, &v), [1, 0, 2]);
        v.sort = SortBy::Rate;
        assert_eq!(visible(&rows, &v), [2, 0, 1]);
        rows[1].reach = Reach::Unreachable {
            since: 0.0,
            why: "gone".into(),
        };
        v.filter = "UNREACH".into();
        assert_eq!(visible(&rows, &v), [1]);
        assert_eq!(clock(3723.0), "01:02:03");
        assert_eq!(format!("{:.0}", FleetRow::new("x", "y").rate()), "0");
        let g = |n: &str| (n.to_string(), 0.5, 1u64 << 30, 2u64 << 30);
        assert_eq!(devices(&[g("gpu0")]), "gpu0 50% 1.0/2.0G");
        assert_eq!(devices(&[g("a"), g("b"), g("c")]), "3× 50% 3.0/6.0G");
    }
}
