//! The pipeline view: throughput and proof counts, queue depths with their history, the
//! jobs with each partition's stage, and per-stage medians of recent proofs.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use provetop_telemetry::metrics as m;
use provetop_telemetry::JobState;

use super::widgets::{block, label, sparkline, value};
use super::{fmt, ListGeom, Regions, WIDE};
use crate::state::ui::{Pane, Ui, SECOND};
use crate::state::{JobRow, State, MEDIAN_OVER};
use crate::theme::Theme;

struct Parts {
    top: Rect,
    jobs: Rect,
    stages: Rect,
}

fn layout(body: Rect) -> Parts {
    let top_h = if body.height >= 30 { 8 } else { 5 };
    let [top, rest] = Layout::vertical([Constraint::Length(top_h), Constraint::Min(4)]).areas(body);
    let pct = if body.width >= WIDE { 60 } else { 52 };
    let [jobs, stages] = Layout::horizontal([
        Constraint::Percentage(pct),
        Constraint::Percentage(100 - pct),
    ])
    .areas(rest);
    Parts { top, jobs, stages }
}

fn job_rows(area: Rect, state: &State, ui: &Ui) -> ListGeom {
    let inner_y = area.y + 2; // border, header row
    let h = area.height.saturating_sub(3) as usize;
    let table = state.pipeline.table();
    let cursor = ui
        .job
        .and_then(|j| table.iter().position(|r| r.job == j))
        .unwrap_or(0);
    let offset = (cursor + 1).saturating_sub(h);
    ListGeom {
        area,
        rows: (offset..table.len().min(offset + h))
            .enumerate()
            .map(|(i, idx)| (inner_y + i as u16, idx))
            .collect(),
    }
}

pub fn regions(r: &mut Regions, state: &State, ui: &Ui) {
    let p = layout(r.body);
    r.panes.push((Pane::Jobs, p.jobs));
    r.jobs = Some(job_rows(p.jobs, state, ui));
}

fn depths(state: &State) -> [(&'static str, &'static str, f64); 4] {
    let (p, s, q) = state.pipeline.depths();
    let get = |k: &str, d: usize| state.samples.latest(k, None).unwrap_or(d as f64);
    [
        ("pending", m::PIPELINE_PENDING, get(m::PIPELINE_PENDING, p)),
        (
            "synthesizing",
            m::PIPELINE_SYNTHESIZING,
            get(m::PIPELINE_SYNTHESIZING, 0),
        ),
        ("queued", m::PIPELINE_QUEUED, get(m::PIPELINE_QUEUED, s)),
        ("proving", m::PIPELINE_PROVING, get(m::PIPELINE_PROVING, q)),
    ]
}

fn counts<'a>(state: &State, theme: &Theme) -> Line<'a> {
    let p = &state.pipeline;
    Line::from(vec![
        Span::styled(
            format!("✓ {} verified", p.verified),
            Style::default().fg(theme.ok),
        ),
        Span::raw("  "),
        Span::styled(
            format!("✗ {} failed", p.failed),
            Style::default().fg(if p.failed > 0 { theme.error } else { theme.dim }),
        ),
        Span::raw("  "),
        label(format!("⊘ {} cancelled", p.cancelled_jobs), theme),
    ])
}

fn rates<'a>(state: &State, theme: &Theme) -> Line<'a> {
    let p = &state.pipeline;
    Line::from(vec![
        value(
            p.proofs_per_hour(state.now)
                .map_or("— proofs/h".into(), |r| {
                    format!("{} proofs/h", fmt::count(r))
                }),
            theme,
        ),
        label(" overall · ", theme),
        value(
            format!(
                "{}/h",
                fmt::count(p.recent_per_hour(state.now, 60 * SECOND))
            ),
            theme,
        ),
        label(" last minute", theme),
    ])
}

/// The compact form: counts, rates, queue, a few medians.
pub fn summary(f: &mut Frame, area: Rect, state: &State, theme: &Theme, wide: bool) {
    let p = &state.pipeline;
    let d = depths(state);
    let mut lines = if wide {
        vec![
            counts(state, theme),
            rates(state, theme),
            Line::from(vec![
                label("queue ", theme),
                value(
                    format!(
                        "{:.0} pending · {:.0} synth · {:.0} queued · {:.0} proving",
                        d[0].2, d[1].2, d[2].2, d[3].2
                    ),
                    theme,
                ),
            ]),
        ]
    } else {
        // Narrow: whole values with their units, the last minute's rate only where it fits.
        let inner = area.width.saturating_sub(2) as usize;
        let mut first = vec![
            Span::styled(format!("✓{} ", p.verified), Style::default().fg(theme.ok)),
            Span::styled(
                format!("✗{} ", p.failed),
                Style::default().fg(if p.failed > 0 { theme.error } else { theme.dim }),
            ),
            label(format!("⊘{}  ", p.cancelled_jobs), theme),
            value(
                p.proofs_per_hour(state.now)
                    .map_or("—/h".into(), |r| format!("{}/h", fmt::count(r))),
                theme,
            ),
        ];
        let recent = format!(
            " · {}/h last min",
            fmt::count(p.recent_per_hour(state.now, 60 * SECOND))
        );
        if Line::from(first.clone()).width() + recent.chars().count() <= inner {
            first.push(label(recent, theme));
        }
        let queue: Vec<String> = ["pending", "synth", "queued", "proving"]
            .iter()
            .zip(&d)
            .map(|(name, d)| format!("{name} {:.0}", d.2))
            .collect();
        std::iter::once(Line::from(first))
            .chain(
                fmt::pack(&queue, " · ", inner)
                    .into_iter()
                    .map(|l| Line::from(value(l, theme))),
            )
            .collect()
    };
    let stats = state.pipeline.stage_stats();
    if wide {
        lines.push(Line::from(label(
            format!("medians of the last {MEDIAN_OVER} proofs:"),
            theme,
        )));
        let top = stats.iter().map(|s| s.median).fold(0.0, f64::max).max(1e-9);
        for s in stats {
            let w = ((s.median / top) * 20.0).round() as usize;
            lines.push(Line::from(vec![
                label(format!("  {:<11}", s.stage.key()), theme),
                value(format!("{:>8} ", fmt::secs(s.median)), theme),
                Span::styled(
                    "▇".repeat(w.max(1)),
                    Style::default().fg(theme.stage(s.stage)),
                ),
            ]));
        }
        if stats.is_empty() {
            lines.push(Line::from(label("  no proof yet", theme)));
        }
    } else {
        let mut spans = vec![label("median ", theme)];
        for s in stats.iter().filter(|s| s.median >= 1e-3) {
            spans.push(Span::styled(
                format!("{} ", s.stage.key()),
                Style::default().fg(theme.stage(s.stage)),
            ));
            spans.push(value(format!("{}  ", fmt::secs(s.median)), theme));
        }
        if stats.is_empty() {
            spans.push(label("no proof yet", theme));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(block(" Pipeline ", false, theme)),
        area,
    );
}

/// Rows the stage medians keep under the segments, and under the kinds' block (which says more
/// than medians over every kind at once, so it may press them further).
const STAGES_KEEP: u16 = 6;
const STAGES_KEEP_FOR_KINDS: u16 = 4;

pub fn draw(f: &mut Frame, r: &Regions, state: &State, theme: &Theme, ui: &Ui) {
    let p = layout(r.body);
    draw_top(f, p.top, state, theme, ui);
    draw_jobs(f, p.jobs, state, theme, ui);
    // Under the stage medians: each kind's figures where jobs of several kinds (or a kind
    // other than the default) ran, as many kinds whole as fit; then the segments between
    // changes once a change split the session, where they fit whole.
    let inner = p.stages.width.saturating_sub(2).max(1) as usize;
    let rows = |lines: &[Line]| -> u16 {
        lines
            .iter()
            .map(|l| l.width().div_ceil(inner).max(1))
            .sum::<usize>() as u16
    };
    let mut under: Vec<(String, Vec<Line>, u16)> = vec![];
    let mut left = p.stages.height.saturating_sub(STAGES_KEEP_FOR_KINDS);
    let groups = super::kinds::groups(state, theme, inner);
    let (n, mut shown, mut kinds, mut want) = (groups.len(), 0, vec![], 2);
    for g in groups {
        if want + rows(&g) > left {
            break;
        }
        want += rows(&g);
        shown += 1;
        kinds.extend(g);
    }
    if shown > 0 {
        let title = match shown < n {
            true => format!(" Per kind · session · {shown} of {n} "),
            false => " Per kind · session ".to_string(),
        };
        left -= want;
        under.push((title, kinds, want));
    }
    left = left.saturating_sub(STAGES_KEEP - STAGES_KEEP_FOR_KINDS);
    if state.segments.len() >= 2 {
        let lines = segment_lines(state, theme);
        let want = rows(&lines) + 2;
        if want <= left {
            under.push((" Segments: did the change help? ".into(), lines, want));
        }
    }
    let mut heights = vec![Constraint::Min(STAGES_KEEP_FOR_KINDS)];
    heights.extend(under.iter().map(|(_, _, h)| Constraint::Length(*h)));
    let areas = Layout::vertical(heights).split(p.stages);
    draw_stages(f, areas[0], state, theme);
    for ((title, lines, _), area) in under.into_iter().zip(areas.iter().skip(1)) {
        f.render_widget(
            Paragraph::new(lines)
                .wrap(ratatui::widgets::Wrap { trim: false })
                .block(block(title, false, theme)),
            *area,
        );
    }
}

/// Segments the pipeline view lists, the newest.
const SEGMENTS_SHOWN: usize = 3;

/// Each of the last segments: its span, rate and busy fraction, then what changed from the
/// one before (`lock single → two-lock: proofs/h −3.9 %, gpu0 busy −3.0 points; …`).
fn segment_lines<'a>(state: &State, theme: &Theme) -> Vec<Line<'a>> {
    let segs = &state.segments;
    let mut lines = vec![];
    for s in &segs[segs.len().saturating_sub(SEGMENTS_SHOWN)..] {
        lines.push(Line::from(value(format!(" {}", s.line()), theme)));
        if let Some(c) = &s.change {
            lines.push(Line::from(Span::styled(
                format!("   after {}", c.line),
                Style::default().fg(theme.accent),
            )));
        }
    }
    lines
}

fn draw_top(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let mut lines = vec![counts(state, theme), rates(state, theme)];
    let (t0, t1) = ui.window(state.now);
    let chart_w = (area.width as usize).saturating_sub(30).min(80);
    let d = depths(state);
    if area.height >= 8 {
        for (name, metric, v) in d {
            let spark = state
                .samples
                .get(metric, None)
                .map(|s| sparkline(&s.buckets(t0, t1, chart_w), None))
                .unwrap_or_default();
            lines.push(Line::from(vec![
                label(format!("{name:<13}"), theme),
                value(format!("{v:>4.0}  "), theme),
                Span::styled(spark, Style::default().fg(theme.chart)),
            ]));
        }
    } else {
        lines.push(Line::from(vec![
            label("queue ", theme),
            value(
                format!(
                    "{:.0} pending · {:.0} synthesizing · {:.0} queued · {:.0} proving",
                    d[0].2, d[1].2, d[2].2, d[3].2
                ),
                theme,
            ),
        ]));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(" Throughput ", false, theme)),
        area,
    );
}

fn parts_summary(j: &JobRow) -> String {
    let mut c = [0usize; 5];
    for p in j.partitions.values() {
        let i = match p.state {
            JobState::Verified => 0,
            JobState::Proving => 1,
            JobState::Synthesized => 2,
            JobState::Failed => 3,
            _ => 4,
        };
        c[i] += 1;
    }
    let mut s = format!("✓{}", c[0]);
    for (n, g) in [(c[1], "▶"), (c[2], "◦"), (c[3], "✗"), (c[4], "·")] {
        if n > 0 {
            s.push_str(&format!(" {g}{n}"));
        }
    }
    s
}

fn state_name(s: JobState) -> &'static str {
    match s {
        JobState::Submitted => "submitted",
        JobState::Synthesized => "synthesized",
        JobState::Proving => "proving",
        JobState::Verified => "verified",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
    }
}

fn draw_jobs(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let focused = ui.focus == Pane::Jobs;
    let table = state.pipeline.table();
    let geom = job_rows(area, state, ui);
    let open = state.pipeline.open_jobs().count();
    f.render_widget(block(format!(" Jobs · {open} open "), focused, theme), area);
    let inner = area.inner(ratatui::layout::Margin::new(1, 1));
    if inner.height == 0 {
        return;
    }
    // The kind and priority only where they fit beside the rest; a kind column where jobs
    // name their kinds and there is room.
    let wide = inner.width >= 56;
    let kinds = inner.width >= 72 && table.iter().any(|j| j.kind.is_some());
    // Narrower still, the device and then the parts give way, so the time keeps its unit.
    let with_device = inner.width >= 40;
    let with_parts = inner.width >= 33;
    // Served jobs go by their request ids: the column as wide as the longest shown, within a
    // third of the pane (longer ids are cut with an ellipsis).
    let id_w = table
        .iter()
        .map(|j| j.label().chars().count())
        .max()
        .unwrap_or(0)
        .clamp(5, (inner.width as usize / 3).max(5));
    let heading = format!(
        " {:<id_w$} state       {}{}time{}",
        "job",
        if with_parts { "parts  " } else { "" },
        if with_device { "device  " } else { "" },
        match (wide, kinds) {
            (true, true) => "    kind          what",
            (true, false) => "    what",
            (false, _) => "",
        }
    );
    let buf = f.buffer_mut();
    buf.set_string(
        inner.x,
        inner.y,
        fmt::fit(&heading, inner.width as usize),
        theme.dim().add_modifier(Modifier::UNDERLINED),
    );
    let cursor = ui.job.or_else(|| table.first().map(|j| j.job));
    for &(y, idx) in &geom.rows {
        let j = table[idx];
        let devices: Vec<&str> = {
            let mut d: Vec<&str> = j
                .partitions
                .values()
                .filter_map(|p| p.device.as_deref())
                .collect();
            d.sort();
            d.dedup();
            d
        };
        let time = match j.ended {
            Some(e) => fmt::nanos(e.saturating_sub(j.submitted)),
            None => fmt::nanos(state.now.saturating_sub(j.submitted)),
        };
        let colour = match j.state {
            JobState::Verified => theme.ok,
            JobState::Failed => theme.error,
            JobState::Cancelled => theme.dim,
            _ => theme.fg,
        };
        let kind = match kinds {
            true => format!("{:<13} ", fmt::fit(j.kind.as_deref().unwrap_or("-"), 13)),
            false => String::new(),
        };
        let parts = match with_parts {
            true => format!("{:<6} ", parts_summary(j)),
            false => String::new(),
        };
        let device = match with_device {
            true => format!("{:<7} ", fmt::fit(&devices.join(","), 7)),
            false => String::new(),
        };
        let text = format!(
            " {:<id_w$} {:<11} {parts}{device}{:<7} {kind}{}",
            fmt::fit(&j.label(), id_w),
            state_name(j.state),
            time,
            j.what.as_deref().filter(|_| wide).unwrap_or("")
        );
        let text = text.trim_end();
        let mut style = Style::default().fg(colour);
        if Some(j.job) == cursor && focused {
            style = style.bg(theme.selection_bg).add_modifier(Modifier::BOLD);
        }
        buf.set_string(inner.x, y, fmt::fit(text, inner.width as usize), style);
    }
    if table.is_empty() {
        buf.set_string(inner.x, inner.y + 1, " no jobs yet", theme.dim());
    }
}

fn draw_stages(f: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let stats = state.pipeline.stage_stats();
    let inner_w = area.width.saturating_sub(2) as usize;
    let wide = inner_w >= 50;
    let bar_w = inner_w.saturating_sub(if wide { 42 } else { 22 }).max(1);
    let top = stats.iter().map(|s| s.median).fold(0.0, f64::max).max(1e-9);
    let mut lines: Vec<Line> = stats
        .iter()
        .map(|s| {
            let w = ((s.median / top) * bar_w as f64).round() as usize;
            let mut l = vec![
                label(format!(" {:<11}", s.stage.key()), theme),
                value(format!("{:>8} ", fmt::secs(s.median)), theme),
                Span::styled(
                    format!("{:<bar_w$}", "▇".repeat(w.max(1))),
                    Style::default().fg(theme.stage(s.stage)),
                ),
            ];
            if wide {
                l.push(label(
                    format!(" {} – {}", fmt::secs(s.min), fmt::secs(s.max)),
                    theme,
                ));
            }
            Line::from(l)
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from(label(" no proof yet", theme)));
    }
    if let Some(e) = &state.pipeline.last_error {
        lines.push(Line::from(Span::styled(
            format!(" last failure: {e}"),
            Style::default().fg(theme.error),
        )));
    }
    let n = stats.first().map_or(0, |s| s.n);
    f.render_widget(
        Paragraph::new(lines).block(block(
            format!(" Per-stage medians · last {n} proofs "),
            false,
            theme,
        )),
        area,
    );
}
