//! The top line (what runs, live or paused, proofs), the view tabs, and the bottom line
//! (a notice, the mark prompt, or the keys that matter in the focused pane).

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{fmt, Regions};
use crate::keys::Action;
use crate::state::ui::{Link, Pane, PromptKind, RemoteStatus, RunPhase, Ui, View, VIEWS};
use crate::state::State;
use crate::theme::Theme;
use provetop_telemetry::Nanos;

/// The workload's label, or for a session made by `serve` the kinds of the jobs it holds
/// (`serving: winning-post ×3`).
fn served(workload: &str, p: &crate::state::Pipeline) -> String {
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for k in p.jobs.values().filter_map(|j| j.kind.as_deref()) {
        *kinds.entry(k).or_default() += 1;
    }
    provetop_telemetry::serving(workload, kinds)
}

/// The alerts `serve` says are firing: its log's `alert firing: NAME` lines not followed by
/// `alert cleared: NAME`.
fn firing(logs: &crate::state::Logs) -> Vec<&str> {
    let mut on: Vec<&str> = vec![];
    for l in logs.lines.iter() {
        let name = |rest: &'static str| {
            l.message
                .strip_prefix(rest)
                .and_then(|r| r.split_whitespace().next())
        };
        if let Some(n) = name("alert firing: ") {
            if !on.contains(&n) {
                on.push(n);
            }
        } else if let Some(n) = name("alert cleared: ") {
            on.retain(|x| *x != n);
        }
    }
    on
}

pub fn header(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let s = &state.session;
    let p = &state.pipeline;
    let devices = state
        .timelines
        .devices
        .iter()
        .map(|d| d.id.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let mode = match (&ui.replay, ui.paused_at) {
        (Some(r), view) => {
            let glyph = if r.playing { "▶" } else { "⏸" };
            let mut text = format!(
                "{glyph} replay {} / {} ×{}",
                fmt::clock(state.now, false),
                fmt::clock(r.end, false),
                speed(r.speed)
            );
            if let Some(t) = view {
                text.push_str(&format!(" · view {}", fmt::clock(t.min(state.now), true)));
            }
            let colour = if r.playing { theme.accent } else { theme.warn };
            Span::styled(
                text,
                Style::default().fg(colour).add_modifier(Modifier::BOLD),
            )
        }
        (None, paused) => match paused {
            None => Span::styled(
                format!("▶ live {}", fmt::clock(state.now, false)),
                Style::default().fg(theme.ok),
            ),
            Some(t) => Span::styled(
                format!("⏸ paused {}", fmt::clock(t.min(state.now), true)),
                Style::default().fg(theme.warn).add_modifier(Modifier::BOLD),
            ),
        },
    };
    let cfg = &state.config.current;
    // Segments by priority: the first always, the rest while they fit.
    let mut segments: Vec<(u8, Vec<Span>)> = vec![
        (0, vec![Span::styled(" provetop", theme.title())]),
        (0, vec![mode]),
        (
            1,
            vec![
                Span::styled(format!("✓{}", p.verified), Style::default().fg(theme.ok)),
                Span::raw(" "),
                Span::styled(
                    format!("✗{}", p.failed),
                    Style::default().fg(if p.failed > 0 { theme.error } else { theme.dim }),
                ),
            ],
        ),
        (
            2,
            vec![Span::styled(
                served(&s.workload, p),
                Style::default().fg(theme.fg),
            )],
        ),
        (
            3,
            vec![Span::styled(
                format!(
                    "{} ×{}",
                    cfg.get("lock").unwrap_or_default(),
                    cfg.gpu_workers_per_device
                ),
                Style::default().fg(theme.config),
            )],
        ),
        (4, vec![Span::styled(devices, theme.dim())]),
    ];
    if let Some(r) = p.proofs_per_hour(state.now) {
        segments.insert(
            3,
            (
                1,
                vec![Span::styled(
                    format!("{}/h", fmt::count(r)),
                    Style::default().fg(theme.fg),
                )],
            ),
        );
    }
    if let Some(run) = run_phase(&ui.run, theme) {
        segments.insert(2, (0, vec![run]));
    }
    if let Some(r) = &ui.recording {
        let mut text = format!("● REC {}", fmt::bytes(r.bytes as f64));
        if r.dropped > 0 {
            text.push_str(&format!(" ⚠{} dropped", fmt::count(r.dropped as f64)));
        }
        segments.insert(
            2,
            (
                0,
                vec![Span::styled(text, Style::default().fg(theme.error))],
            ),
        );
    }
    let lost = state.not_recorded.total();
    if lost > 0 {
        // Over the network, what is missing was dropped on the way to this viewer.
        let what = if ui.remote.is_some() {
            "not received"
        } else {
            "not recorded"
        };
        segments.insert(
            2,
            (
                0,
                vec![Span::styled(
                    format!("⚠ {} {what}", fmt::count(lost as f64)),
                    Style::default().fg(theme.warn),
                )],
            ),
        );
    }
    let alerts = firing(&state.logs);
    if !alerts.is_empty() {
        let text = format!("⚠ alert {}", alerts.join(", "));
        let style = Style::default()
            .fg(theme.error)
            .add_modifier(Modifier::BOLD);
        segments.insert(2, (0, vec![Span::styled(text, style)]));
    }
    if let Some(r) = &ui.remote {
        segments.insert(2, (0, vec![remote(r, theme)]));
    }
    if state.dropped > 0 {
        segments.insert(
            2,
            (
                0,
                vec![Span::styled(
                    format!("⚠ {} events dropped", state.dropped),
                    Style::default().fg(theme.warn),
                )],
            ),
        );
    }
    let width = |v: &[Span]| v.iter().map(Span::width).sum::<usize>();
    let total = area.width as usize;
    let mut keep = 5u8;
    while keep > 0
        && segments
            .iter()
            .filter(|(p, _)| *p < keep)
            .map(|(_, v)| width(v) + 3)
            .sum::<usize>()
            > total
    {
        keep -= 1;
    }
    let mut spans = vec![];
    for (_, seg) in segments.into_iter().filter(|(p, _)| *p < keep.max(1)) {
        if !spans.is_empty() {
            spans.push(Span::styled(" │ ", theme.dim()));
        }
        spans.extend(seg);
    }
    let host = format!("host {}", s.machine.hostname);
    let used = width(&spans);
    let n = host.chars().count();
    if !s.machine.hostname.is_empty() && used + n + 2 < total {
        spans.push(Span::raw(" ".repeat(total - used - n - 1)));
        spans.push(Span::styled(host, theme.dim()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)).style(theme.base()), area);
}

/// `setup: parameters for k14 52 % ~0:38 left`, `job 4 of 10`, `finished: 10 jobs`; nothing
/// for a run until quit or a source that does not say.
fn run_phase<'a>(run: &RunPhase, theme: &Theme) -> Option<Span<'a>> {
    let secs = |s: f64| fmt::clock((s.max(0.0) * 1e9) as Nanos, false);
    match run {
        RunPhase::Unknown | RunPhase::Proving { bound: None, .. } => None,
        RunPhase::Setup {
            what,
            done,
            elapsed,
            left,
        } => Some(Span::styled(
            format!(
                "setup: {what} {:.0} % · {}{}",
                done * 100.0,
                secs(*elapsed),
                left.map(|l| format!(" ~{} left", secs(l)))
                    .unwrap_or_default()
            ),
            Style::default().fg(theme.accent),
        )),
        RunPhase::Proving {
            done,
            bound: Some(n),
        } => Some(Span::styled(
            format!("{done} of {n} jobs done"),
            Style::default().fg(theme.fg),
        )),
        RunPhase::Finished { jobs } => Some(Span::styled(
            format!("finished: {jobs} jobs · q quits"),
            Style::default().fg(theme.warn).add_modifier(Modifier::BOLD),
        )),
    }
}

/// The watched server: its address and whether this viewer may change it, or that it is lost.
fn remote<'a>(r: &RemoteStatus, theme: &Theme) -> Span<'a> {
    let access = if r.control { "control" } else { "read-only" };
    match &r.link {
        Link::Live => Span::styled(format!("⇄ {} · {access}", r.addr), theme.dim()),
        Link::CatchingUp => Span::styled(
            format!("⇣ {} · catching up", r.addr),
            Style::default().fg(theme.accent),
        ),
        Link::Lost {
            for_s, retry_in_s, ..
        } => Span::styled(
            format!("⚠ server lost {for_s} s ago · retrying in {retry_in_s} s"),
            Style::default()
                .fg(theme.error)
                .add_modifier(Modifier::BOLD),
        ),
    }
}

/// `1`, `0.25`, `64`.
fn speed(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

const TAB_START: u16 = 1;

fn tab_label(i: usize, name: &str) -> String {
    format!(" {} {name} ", i + 1)
}

pub fn tab_hits(area: Rect) -> Vec<(View, u16, u16)> {
    let mut x = area.x + TAB_START;
    VIEWS
        .iter()
        .enumerate()
        .map(|(i, (v, name))| {
            let w = tab_label(i, name).chars().count() as u16;
            let hit = (*v, x, x + w);
            x += w + 1;
            hit
        })
        .collect()
}

pub fn tabs(f: &mut Frame, r: &Regions, theme: &Theme, ui: &Ui) {
    let mut spans = vec![Span::raw(" ".repeat(TAB_START as usize))];
    for (i, (v, name)) in VIEWS.iter().enumerate() {
        let style = if *v == ui.view() {
            Style::default()
                .fg(theme.bg_or_black())
                .bg(theme.accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(theme.fg)
        };
        spans.push(Span::styled(tab_label(i, name), style));
        spans.push(Span::raw(" "));
    }
    let help = format!("{} help ", ui.settings.keymap.key(Action::Help));
    let used: usize = spans.iter().map(|s| s.width()).sum();
    if used + help.len() < r.tabs.width as usize {
        spans.push(Span::raw(
            " ".repeat(r.tabs.width as usize - used - help.len()),
        ));
        spans.push(Span::styled(help, theme.dim()));
    }
    f.render_widget(
        Paragraph::new(Line::from(spans)).style(theme.base()),
        r.tabs,
    );
}

/// Key hints for the focused pane, as `(key, what)`.
fn hints(ui: &Ui) -> Vec<(String, &'static str)> {
    let k = |a| ui.settings.keymap.key(a);
    let mut h = vec![(k(Action::Quit), "quit"), (k(Action::FocusNext), "focus")];
    match ui.focus {
        Pane::Lanes if ui.replay.is_some() => {
            let playing = ui.replay.as_ref().is_some_and(|r| r.playing);
            h.push((k(Action::Pause), if playing { "pause" } else { "play" }));
            h.push((
                format!("{}{}", k(Action::Slower), k(Action::Faster)),
                "speed",
            ));
            h.push((k(Action::Seek), "go to"));
            h.push((
                format!("{}{}", k(Action::NextMark), k(Action::NextConfig)),
                "next mark/config",
            ));
            h.push((format!("{}{}", k(Action::Left), k(Action::Right)), "scroll"));
            h.push((
                format!("{}{}", k(Action::ZoomIn), k(Action::ZoomOut)),
                "zoom",
            ));
            h.push((
                format!("{}{}", k(Action::PrevGap), k(Action::NextGap)),
                "gaps",
            ));
        }
        Pane::Lanes => {
            h.push((
                k(Action::Pause),
                if ui.paused_at.is_some() {
                    "resume"
                } else {
                    "pause"
                },
            ));
            h.push((format!("{}{}", k(Action::Left), k(Action::Right)), "scroll"));
            h.push((
                format!("{}{}", k(Action::ZoomIn), k(Action::ZoomOut)),
                "zoom",
            ));
            h.push((
                format!("{}{}", k(Action::PrevGap), k(Action::NextGap)),
                "gaps",
            ));
            h.push((k(Action::Mark), "mark"));
        }
        Pane::Jobs => {
            h.push((format!("{}{}", k(Action::Up), k(Action::Down)), "select"));
            h.push((k(Action::Submit), "submit"));
            h.push((k(Action::CancelJob), "cancel job"));
        }
        Pane::Form => {
            if ui.form.editing.is_some() {
                return vec![
                    ("enter".into(), "apply"),
                    ("esc".into(), "cancel"),
                    ("backspace".into(), "erase"),
                ];
            }
            h.push((format!("{}{}", k(Action::Up), k(Action::Down)), "select"));
            h.push((format!("{}{}", k(Action::Left), k(Action::Right)), "change"));
            h.push((
                k(Action::Enter),
                if ui.form.pending.is_empty() {
                    "edit"
                } else {
                    "apply"
                },
            ));
            if !ui.form.pending.is_empty() {
                h.push((k(Action::Back), "discard"));
            }
            h.push((k(Action::Save), "save [ui]"));
            h.push((k(Action::SaveEngine), "save [engine]"));
        }
        Pane::LogStrip | Pane::LogLines | Pane::History | Pane::Devices => {
            h.push((format!("{}{}", k(Action::Up), k(Action::Down)), "scroll"));
            h.push((k(Action::Submit), "submit"));
            h.push((k(Action::Mark), "mark"));
        }
    }
    h.push((k(Action::Help), "help"));
    h
}

pub fn footer(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let line = if let Some(p) = &ui.prompt {
        let (title, help) = match p.kind {
            PromptKind::Mark => (" mark label: ", "  enter adds it, esc cancels"),
            PromptKind::Seek => (
                " go to (1:30, 90s, 2.5m): ",
                "  enter goes there, esc cancels",
            ),
        };
        Line::from(vec![
            Span::styled(title, theme.title()),
            Span::styled(format!("{}▏", p.text), Style::default().fg(theme.fg)),
            Span::styled(help, theme.dim()),
        ])
    } else if let Some(n) = ui.notice.as_ref().filter(|n| n.until > state.now) {
        Line::from(Span::styled(
            format!(" {}", n.text),
            Style::default().fg(if n.error { theme.error } else { theme.ok }),
        ))
    } else {
        // Whole hints only, as many as the width holds; help, the last, is always kept.
        let mut hints = hints(ui);
        let help = hints.pop();
        let cost = |(key, what): &(String, &str)| key.chars().count() + what.chars().count() + 3;
        let mut room = (area.width as usize).saturating_sub(1 + help.as_ref().map_or(0, cost));
        hints.retain(|h| {
            let fits = cost(h) <= room;
            room = if fits { room - cost(h) } else { 0 };
            fits
        });
        let mut spans = vec![Span::raw(" ")];
        for (key, what) in hints.into_iter().chain(help) {
            spans.push(Span::styled(key, Style::default().fg(theme.accent)));
            spans.push(Span::styled(format!(" {what}  "), theme.dim()));
        }
        Line::from(spans)
    };
    f.render_widget(Paragraph::new(line).style(theme.base()), area);
}
