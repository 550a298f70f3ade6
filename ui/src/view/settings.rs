//! The settings view: every `[engine]` field with its live value, pending edits and any
//! error inline under its row; the `[ui]` settings and where they are saved; the parameter sets
//! and their tiers (hot, warm, cold); and the history of configuration changes with who made
//! them.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use provetop_telemetry::config::{EngineConfig, Liveness};
use provetop_telemetry::report::effect::Effect;
use provetop_telemetry::Nanos;

use super::widgets::{block, label};
use super::{fmt, ListGeom, Regions, WIDE};
use crate::state::form::{field_kind, FieldKind, Row, ROWS};
use crate::state::ui::{Pane, Ui};
use crate::state::State;
use crate::theme::Theme;

struct Parts {
    form: Option<Rect>,
    history: Option<Rect>,
}

fn layout(body: Rect, ui: &Ui) -> Parts {
    if body.width >= WIDE {
        let [f, h] = Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
            .areas(body);
        Parts {
            form: Some(f),
            history: Some(h),
        }
    } else if ui.focus == Pane::History {
        Parts {
            form: None,
            history: Some(body),
        }
    } else {
        Parts {
            form: Some(body),
            history: None,
        }
    }
}

/// What is wrong with a row, shown under it: the value being typed or pending fails the
/// engine's checks, the engine refused the last change of the key, or saving failed.
fn problem_for(row: Row, i: usize, state: &State, ui: &Ui) -> Option<String> {
    let cfg = &state.config.current;
    let form = &ui.form;
    match row {
        Row::Engine(key) => {
            let editing = form.editing.as_ref().filter(|_| i == form.row);
            let local = match editing {
                Some(text) if !text.is_empty() => {
                    let mut c = cfg.clone();
                    c.set(key, text).err().map(|e| e.message)
                }
                Some(_) => None,
                None => form.problem(key, cfg),
            };
            local.or_else(|| {
                state
                    .config
                    .refused
                    .get(key)
                    .map(|r| format!("refused `{}`: {}", r.to, r.error))
            })
        }
        Row::Save => match &form.saved {
            Some(Err(e)) => Some(e.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The row index of each line of the form.
fn line_rows(state: &State, ui: &Ui) -> Vec<usize> {
    let mut v = vec![];
    for (i, row) in ROWS.iter().enumerate() {
        v.push(i);
        if problem_for(*row, i, state, ui).is_some() {
            v.push(i);
        }
    }
    v
}

/// The form's lines: `(row index, line)`; an error adds a line under its row.
fn form_lines<'a>(state: &State, theme: &Theme, ui: &Ui, width: usize) -> Vec<(usize, Line<'a>)> {
    let cfg = &state.config.current;
    let form = &ui.form;
    let focused = ui.focus == Pane::Form;
    let mut out = vec![];
    let name_w = 24.min(width / 3);
    let tag_w = 9;
    let value_w = width.saturating_sub(2 + name_w + 1 + tag_w + 1);
    for (i, row) in ROWS.iter().enumerate() {
        let cursor = i == form.row.min(ROWS.len() - 1);
        let marker = if cursor && focused { "▸ " } else { "  " };
        let base = if cursor && focused {
            theme.selected().fg(theme.fg).add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(theme.fg)
        };
        let editing = form.editing.as_ref().filter(|_| cursor);
        let (name, mut value_spans, tag, problem): (String, Vec<Span>, &str, Option<String>) =
            match row {
                Row::Engine(key) => {
                    let current = cfg.get(key).unwrap_or_default();
                    let tag = EngineConfig::liveness(key).map_or("", Liveness::label);
                    let mut spans = vec![];
                    if let Some(text) = editing {
                        spans.push(Span::styled(format!("{current} → "), base));
                        spans.push(Span::styled(
                            format!("{text}▏"),
                            base.fg(theme.accent).add_modifier(Modifier::UNDERLINED),
                        ));
                    } else if let Some(p) = form.pending.get(*key) {
                        spans.push(Span::styled(format!("{current} → "), base));
                        spans.push(Span::styled(
                            format!("{p} *"),
                            base.fg(theme.accent).add_modifier(Modifier::BOLD),
                        ));
                    } else if field_kind(key) == FieldKind::Startup {
                        spans.push(Span::styled(
                            if current.is_empty() {
                                "all".to_string()
                            } else {
                                current
                            },
                            base.fg(theme.dim),
                        ));
                    } else {
                        spans.push(Span::styled(current, base));
                    }
                    (key.to_string(), spans, tag, problem_for(*row, i, state, ui))
                }
                Row::Theme => (
                    "theme".into(),
                    vec![Span::styled(ui.theme_name.clone(), base)],
                    "[ui]",
                    None,
                ),
                Row::Refresh => (
                    "refresh_hz".into(),
                    vec![Span::styled(
                        format!("{} fps", ui.settings.refresh_hz),
                        base,
                    )],
                    "[ui]",
                    None,
                ),
                Row::Save => {
                    let target = ui
                        .config_path
                        .as_ref()
                        .map_or("nowhere (no --config, no HOME)".into(), |p| {
                            p.display().to_string()
                        });
                    let problem = problem_for(*row, i, state, ui);
                    let saved = matches!(&form.saved, Some(Ok(_)));
                    let text = fmt::fit(
                        &format!("[ui] → {target}"),
                        value_w.saturating_sub(if saved { 9 } else { 0 }),
                    );
                    let mut spans = vec![Span::styled(text, base)];
                    if let Some(Ok(_)) = &form.saved {
                        spans.push(Span::styled("  ✓ saved", Style::default().fg(theme.ok)));
                    }
                    ("save".into(), spans, "enter", problem)
                }
            };
        let mut spans = vec![
            Span::styled(marker, base),
            Span::styled(format!("{:<name_w$} ", fmt::fit(&name, name_w)), base),
        ];
        let used: usize = spans.iter().map(Span::width).sum::<usize>()
            + value_spans.iter().map(Span::width).sum::<usize>();
        let pad = width.saturating_sub(used + tag_w);
        value_spans.push(Span::styled(" ".repeat(pad), base));
        spans.extend(value_spans);
        spans.push(Span::styled(format!("{tag:>tag_w$}"), base.fg(theme.dim)));
        out.push((i, Line::from(spans)));
        if let Some(p) = problem {
            out.push((
                i,
                Line::from(Span::styled(
                    fmt::fit(&format!("    ✗ {p}"), width),
                    Style::default().fg(theme.error),
                )),
            ));
        }
    }
    out
}

fn form_geom(area: Rect, lines: &[usize], cursor: usize) -> (ListGeom, usize) {
    let top = area.y + 2; // border, the hint line
    let h = area.height.saturating_sub(3) as usize;
    let cursor = cursor.min(ROWS.len() - 1);
    let last_of_cursor = lines.iter().rposition(|i| *i == cursor).unwrap_or(0);
    let first_of_cursor = lines.iter().position(|i| *i == cursor).unwrap_or(0);
    let mut offset = (last_of_cursor + 1).saturating_sub(h);
    offset = offset.min(first_of_cursor);
    let rows = lines
        .iter()
        .skip(offset)
        .take(h)
        .enumerate()
        .map(|(k, i)| (top + k as u16, *i))
        .collect();
    (ListGeom { area, rows }, offset)
}

pub fn regions(r: &mut Regions, state: &State, ui: &Ui) {
    let p = layout(r.body, ui);
    if let Some(f) = p.form {
        r.panes.push((Pane::Form, f));
        r.form = Some(form_geom(f, &line_rows(state, ui), ui.form.row).0);
    }
    if let Some(h) = p.history {
        r.panes.push((Pane::History, h));
    }
}

pub fn draw(f: &mut Frame, r: &Regions, state: &State, theme: &Theme, ui: &Ui) {
    let p = layout(r.body, ui);
    if let Some(area) = p.form {
        let width = area.width.saturating_sub(2) as usize;
        let lines = form_lines(state, theme, ui, width);
        let (_, offset) = form_geom(area, &line_rows(state, ui), ui.form.row);
        let n = ui.form.pending.len();
        let hint = if ui.form.editing.is_some() {
            Line::from(label(" type a value · enter applies · esc cancels", theme))
        } else if n > 0 {
            Line::from(Span::styled(
                format!(
                    " {n} change{} pending · enter applies {} together · esc discards",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "it" } else { "them" }
                ),
                Style::default().fg(theme.accent),
            ))
        } else {
            Line::from(label(
                " ←→ change · enter types a value · changes apply at the next safe point",
                theme,
            ))
        };
        let h = area.height.saturating_sub(3) as usize;
        let mut shown = vec![hint];
        shown.extend(lines.into_iter().skip(offset).take(h).map(|(_, l)| l));
        f.render_widget(
            Paragraph::new(shown).block(block(" Settings ", ui.focus == Pane::Form, theme)),
            area,
        );
    }
    if let Some(area) = p.history {
        let sets = param_sets(state);
        // The sets above the changes, as tall as they need (a line when there is none yet).
        let tall = (sets.len().max(1) as u16 + 2).min(area.height / 2);
        let [top, rest] =
            Layout::vertical([Constraint::Length(tall), Constraint::Min(0)]).areas(area);
        draw_params(f, top, &sets, theme);
        draw_history(f, rest, state, theme, ui);
    }
}

/// The parameter sets the engine has held, from the pipeline sampler's `params.*` samples:
/// (name, tier, bytes, users), hot ones first.
fn param_sets(state: &State) -> Vec<(String, u8, f64, f64)> {
    use provetop_telemetry::metrics as m;
    let latest = |prefix: &str, name: &str| {
        state
            .samples
            .latest(&format!("{prefix}{name}"), None)
            .unwrap_or(0.0)
    };
    let mut sets: Vec<(String, u8, f64, f64)> = state
        .samples
        .with_prefix(m::PARAMS_TIER_PREFIX, None)
        .filter_map(|(name, s)| Some((name.to_string(), s.latest()? as u8)))
        .map(|(name, tier)| {
            let bytes = latest(m::PARAMS_BYTES_PREFIX, &name);
            let users = latest(m::PARAMS_USERS_PREFIX, &name);
            (name, tier, bytes, users)
        })
        .collect();
    sets.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    sets
}

fn draw_params(f: &mut Frame, area: Rect, sets: &[(String, u8, f64, f64)], theme: &Theme) {
    let w = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = sets
        .iter()
        .map(|(name, tier, bytes, users)| {
            let (tier, colour) = match tier {
                0 => ("hot ", theme.ok),
                1 => ("warm", theme.accent),
                _ => ("cold", theme.dim),
            };
            let used = if *users > 0.0 {
                format!(" · {users:.0} using it")
            } else {
                String::new()
            };
            Line::from(vec![
                Span::styled(format!(" {tier} "), Style::default().fg(colour)),
                Span::raw(fmt::fit(
                    &format!("{name}  {}{used}", fmt::bytes(*bytes)),
                    w.saturating_sub(6),
                )),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from(label(" none loaded yet", theme)));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(" Parameter sets ", false, theme)),
        area,
    );
}

fn draw_history(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let h = area.height.saturating_sub(2) as usize;
    let w = area.width.saturating_sub(2) as usize;
    let all: Vec<Line> = state
        .config
        .history
        .iter()
        .flat_map(|c| {
            let t = fmt::clock(c.t, true);
            if c.applied {
                // The values whole; the key gives way first, then who made it.
                let values = format!(": {} → {}", c.from, c.to);
                let by = format!(" by {}", c.by);
                let t = format!(" {t} ");
                let room = w.saturating_sub(t.chars().count() + values.chars().count());
                let by = match room > by.chars().count() + 4 {
                    true => by,
                    false => String::new(),
                };
                let key = fmt::fit(&c.key, room.saturating_sub(by.chars().count()).max(4));
                let mut lines = vec![Line::from(vec![
                    label(t, theme),
                    Span::styled(format!("{key}{values}"), Style::default().fg(theme.config)),
                    label(by, theme),
                ])];
                if let Some(e) = effect_of(state, c.t) {
                    lines.push(effect_line(&e, w, theme));
                }
                lines
            } else {
                vec![Line::from(vec![
                    label(format!(" {t} "), theme),
                    Span::styled(
                        fmt::fit(
                            &format!(
                                "✗ {} → {} by {}: {}",
                                c.key,
                                c.to,
                                c.by,
                                c.error.as_deref().unwrap_or("refused")
                            ),
                            w.saturating_sub(8),
                        ),
                        Style::default().fg(theme.error),
                    ),
                ])]
            }
        })
        .collect();
    let end = all
        .len()
        .saturating_sub(ui.history_scroll.min(all.len().saturating_sub(h)));
    let start = end.saturating_sub(h);
    let mut lines: Vec<Line> = all[start..end].to_vec();
    if lines.is_empty() {
        lines.push(Line::from(label(" no change yet", theme)));
    }
    f.render_widget(
        Paragraph::new(lines).block(block(
            " Configuration changes ",
            ui.focus == Pane::History,
            theme,
        )),
        area,
    );
}

/// Proofs per hour since the change at `t` against before it, from the session's segments.
fn effect_of(state: &State, t: Nanos) -> Option<Effect> {
    let seg = state.segments.iter().find(|s| s.span.0 == t)?;
    Some(seg.change.as_ref()?.effect.clone())
}

/// `   since 3,920/h (12 proofs) vs before 3,600/h (10 proofs): +8.9 %, within noise (±12 %)`,
/// the short form where the pane is narrow; an effect beyond the noise stands out.
fn effect_line<'a>(e: &Effect, w: usize, theme: &Theme) -> Line<'a> {
    let long = format!("   {}", e.line());
    let text = match long.chars().count() <= w {
        true => long,
        false => fmt::fit(&format!("   {}", e.short()), w),
    };
    let colour = match e.within_noise {
        true => theme.dim,
        false => theme.accent,
    };
    Line::from(Span::styled(text, Style::default().fg(colour)))
}
