//! Gauges and history charts: per device (busy from its spans; VRAM by purpose, reserved and
//! total; PCIe rates against the link's ceiling; utilisation, clocks, power, temperature) and
//! for the host (DDR bandwidth and pressure, CPU pools, RAM, RSS, queue depths). A metric no
//! sampler reports shows as n/a.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use provetop_telemetry::metrics as m;

use super::fmt;
use super::widgets::{block, gauge_spans, label, sparkline, value};
use crate::state::ui::{Pane, Ui};
use crate::state::{DeviceTimeline, State};
use crate::theme::Theme;

const NA: &str = "n/a";

fn latest(state: &State, metric: &str, dev: Option<&str>) -> Option<f64> {
    state.samples.latest(metric, dev)
}

fn spark(
    state: &State,
    ui: &Ui,
    metric: &str,
    dev: Option<&str>,
    w: usize,
    max: Option<f64>,
) -> String {
    let (t0, t1) = ui.window(state.now);
    state
        .samples
        .get(metric, dev)
        .map(|s| sparkline(&s.buckets(t0, t1, w), max))
        .unwrap_or_default()
}

fn busy(state: &State, ui: &Ui, d: &DeviceTimeline) -> f64 {
    let (t0, t1) = ui.window(state.now);
    d.compute_busy(t0, t1.min(state.now), state.now)
}

/// Lines the side summary needs: two per device, the rig's total when there are several, one
/// for the host, the borders.
pub fn summary_height(state: &State) -> u16 {
    let n = state.timelines.devices.len() as u16;
    (n * 2 + u16::from(n > 1) + 1 + 2).max(4)
}

/// The whole rig: mean busy over its devices, VRAM and PCIe summed over its GPUs.
fn rig_line<'a>(state: &State, ui: &Ui, theme: &Theme) -> Line<'a> {
    let devices = &state.timelines.devices;
    let b = devices.iter().map(|d| busy(state, ui, d)).sum::<f64>() / devices.len().max(1) as f64;
    let gpus: Vec<Option<&str>> = devices
        .iter()
        .filter(|d| d.is_gpu())
        .map(|d| Some(d.id.as_str()))
        .collect();
    let sum = |f: &dyn Fn(Option<&str>) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = gpus.iter().filter_map(|id| f(*id)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    // Compact: the side summary is ~56 columns.
    let mut line = vec![
        Span::styled(format!("{:<6}", "rig"), Style::default().fg(theme.fg)),
        label("busy ", theme),
        value(format!("{:>4}", fmt::pct(b)), theme),
    ];
    if !gpus.is_empty() {
        let used = sum(&|id| latest(state, m::VRAM_USED, id));
        let total = sum(&|id| latest(state, m::VRAM_TOTAL, id));
        let h2d = sum(&|id| state.samples.last_second(m::PCIE_H2D, id));
        line.push(label("  VRAM ", theme));
        line.push(value(
            match (used, total) {
                (Some(u), Some(t)) => fmt::bytes_of(u, t),
                _ => NA.into(),
            },
            theme,
        ));
        line.push(label("  ↑", theme));
        line.push(value(h2d.map_or(NA.into(), fmt::rate), theme));
    }
    Line::from(line)
}

/// The compact form beside the timeline on wide terminals.
pub fn summary(f: &mut Frame, area: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let mut lines = vec![];
    for d in &state.timelines.devices {
        let id = Some(d.id.as_str());
        let b = busy(state, ui, d);
        let mut first = vec![
            Span::styled(format!("{:<6}", d.id), Style::default().fg(theme.fg)),
            label("busy ", theme),
            value(format!("{:>4} ", fmt::pct(b)), theme),
        ];
        first.extend(gauge_spans(b, 10, theme));
        if d.is_gpu() {
            first.push(label("  util ", theme));
            first.push(value(
                state
                    .samples
                    .last_second(m::GPU_UTIL, id)
                    .map_or(NA.into(), fmt::pct),
                theme,
            ));
            first.push(label("  ", theme));
            first.push(value(
                latest(state, m::GPU_TEMP, id).map_or(NA.into(), |t| format!("{t:.0} °C")),
                theme,
            ));
        }
        lines.push(Line::from(first));
        let second = if d.is_gpu() {
            let vram = match (
                latest(state, m::VRAM_USED, id),
                latest(state, m::VRAM_TOTAL, id),
            ) {
                (Some(u), Some(t)) => fmt::bytes_of(u, t),
                (Some(u), None) => fmt::bytes(u),
                _ => NA.into(),
            };
            let rate = |k| {
                state
                    .samples
                    .last_second(k, id)
                    .map_or(NA.into(), fmt::rate)
            };
            Line::from(vec![
                label("      VRAM ", theme),
                value(vram, theme),
                label("  PCIe ↑", theme),
                value(rate(m::PCIE_H2D), theme),
                label(" ↓", theme),
                value(rate(m::PCIE_D2H), theme),
            ])
        } else {
            Line::from(vec![label(format!("      {}", d.name), theme)])
        };
        lines.push(second);
    }
    if state.timelines.devices.len() > 1 {
        lines.push(rig_line(state, ui, theme));
    }
    lines.push(host_line(state, theme));
    f.render_widget(
        Paragraph::new(lines).block(block(" Devices ", false, theme)),
        area,
    );
}

fn host_line<'a>(state: &State, theme: &Theme) -> Line<'a> {
    let ram = match (
        latest(state, m::HOST_RAM_USED, None),
        latest(state, m::HOST_RAM_TOTAL, None),
    ) {
        (Some(u), Some(t)) => fmt::bytes_of(u, t),
        _ => NA.into(),
    };
    Line::from(vec![
        Span::styled(format!("{:<6}", "host"), Style::default().fg(theme.fg)),
        label("RAM ", theme),
        value(ram, theme),
        label("  RSS ", theme),
        value(
            latest(state, m::PROCESS_RSS, None).map_or(NA.into(), fmt::bytes),
            theme,
        ),
        label("  DDR ", theme),
        value(
            latest(state, m::HOST_DDR, None).map_or(NA.into(), fmt::rate),
            theme,
        ),
    ])
}

/// One card per device, the rig's total when there are several, then the host; scrolled by
/// whole cards.
pub fn draw(f: &mut Frame, body: Rect, state: &State, theme: &Theme, ui: &Ui) {
    let w = body.width.saturating_sub(2) as usize;
    let chart_w = (w.saturating_sub(40) / 2).clamp(8, 60);
    let wide = body.width >= super::WIDE;
    let mut cards: Vec<(String, Vec<Line>)> = state
        .timelines
        .devices
        .iter()
        .map(|d| {
            (
                device_title(state, d),
                device_card(state, ui, d, theme, (chart_w, w), wide),
            )
        })
        .collect();
    if state.timelines.devices.len() > 1 {
        cards.push((" rig ".into(), vec![rig_line(state, ui, theme)]));
    }
    cards.push((" host ".into(), host_card(state, ui, theme, chart_w)));
    let focused = ui.focus == Pane::Devices;
    let mut y = body.y;
    for (title, lines) in cards
        .into_iter()
        .skip(ui.device_scroll.min(state.timelines.devices.len()))
    {
        let h = lines.len() as u16 + 2;
        let left = (body.y + body.height).saturating_sub(y);
        if h > left {
            // The card's first lines in what is left (its title says it goes on), so a short
            // terminal shows values rather than blank rows.
            if left >= 3 {
                let shown: Vec<Line> = lines.into_iter().take(left as usize - 2).collect();
                f.render_widget(
                    Paragraph::new(shown).block(block(
                        format!("{title}· ↓ more below "),
                        focused,
                        theme,
                    )),
                    Rect::new(body.x, y, body.width, left),
                );
            } else if left > 0 {
                let rest = Rect::new(body.x, y, body.width, left);
                f.render_widget(
                    Paragraph::new(Line::styled(" ↓ more below", theme.dim())).style(theme.base()),
                    rest,
                );
            }
            break;
        }
        let area = Rect::new(body.x, y, body.width, h);
        f.render_widget(
            Paragraph::new(lines).block(block(title, focused, theme)),
            area,
        );
        y += h;
    }
}

fn device_title(state: &State, d: &DeviceTimeline) -> String {
    let pcie = state
        .session
        .devices
        .iter()
        .find(|i| i.id == d.id)
        .and_then(|i| i.pcie)
        .map(|(g, w)| format!(" · PCIe gen{g} ×{w}"))
        .unwrap_or_default();
    format!(" {} · {}{pcie} ", d.id, d.name)
}

fn device_card<'a>(
    state: &State,
    ui: &Ui,
    d: &DeviceTimeline,
    theme: &Theme,
    (cw, inner): (usize, usize),
    wide: bool,
) -> Vec<Line<'a>> {
    let id = Some(d.id.as_str());
    let b = busy(state, ui, d);
    let mut busy_line = vec![
        label("busy   ", theme),
        value(format!("{:>4} ", fmt::pct(b)), theme),
    ];
    busy_line.extend(gauge_spans(b, cw, theme));
    let legend = "  compute time in the window, from spans";
    if Line::from(busy_line.clone()).width() + legend.len() <= inner {
        busy_line.push(label(legend, theme));
    }
    let mut lines = vec![Line::from(busy_line)];
    if !d.is_gpu() {
        lines.push(Line::from(label(
            "VRAM, PCIe, clocks, power: n/a on a CPU executor",
            theme,
        )));
        return lines;
    }
    let used = latest(state, m::VRAM_USED, id);
    let total = latest(state, m::VRAM_TOTAL, id).or_else(|| {
        let b = state
            .session
            .devices
            .iter()
            .find(|i| i.id == d.id)?
            .memory_bytes;
        (b > 0).then_some(b as f64)
    });
    let mut vram = vec![label("VRAM   ", theme)];
    match (used, total) {
        (Some(u), Some(t)) => {
            vram.push(value(
                format!("{} / {} ", fmt::bytes(u), fmt::bytes(t)),
                theme,
            ));
            vram.extend(gauge_spans(u / t.max(1.0), cw, theme));
        }
        (Some(u), None) => vram.push(value(fmt::bytes(u), theme)),
        _ => vram.push(value(NA, theme)),
    }
    vram.push(label("  reserved ", theme));
    vram.push(value(
        latest(state, m::VRAM_RESERVED, id).map_or(NA.into(), fmt::bytes),
        theme,
    ));
    lines.push(Line::from(vram));
    let purposes: Vec<String> = state
        .samples
        .with_prefix(m::VRAM_USED_PREFIX, id)
        .filter_map(|(p, s)| s.latest().map(|v| format!("{p} {}", fmt::bytes(v))))
        .collect();
    let by = "  by purpose ";
    lines.push(Line::from(vec![
        label(by, theme),
        value(
            if purposes.is_empty() {
                NA.to_string()
            } else {
                fmt::items(&purposes, " · ", inner.saturating_sub(by.len()))
            },
            theme,
        ),
    ]));
    let ceiling = latest(state, m::PCIE_CEILING, id);
    let of = ceiling
        .map(|c| format!("  of {}", fmt::rate(c)))
        .unwrap_or_default();
    let rate = |metric| latest(state, metric, id).map_or(NA.into(), fmt::rate);
    let chart = |metric, w| {
        Span::styled(
            spark(state, ui, metric, id, w, ceiling),
            Style::default().fg(theme.chart),
        )
    };
    if wide {
        for (name, metric, arrow) in [("h2d", m::PCIE_H2D, "↑"), ("d2h", m::PCIE_D2H, "↓")] {
            lines.push(Line::from(vec![
                label(format!("PCIe {arrow} {name} "), theme),
                value(format!("{:>10} ", rate(metric)), theme),
                chart(metric, cw),
                label(of.clone(), theme),
            ]));
        }
    } else {
        lines.push(Line::from(vec![
            label("PCIe   ↑", theme),
            value(format!("{} ", rate(m::PCIE_H2D)), theme),
            chart(m::PCIE_H2D, cw / 2),
            label("  ↓", theme),
            value(format!("{} ", rate(m::PCIE_D2H)), theme),
            chart(m::PCIE_D2H, cw / 2),
            label(of, theme),
        ]));
    }
    let fmt_or = |metric: &str, f: &dyn Fn(f64) -> String| {
        latest(state, metric, id).map_or(NA.to_string(), f)
    };
    lines.push(Line::from(vec![
        label("util   ", theme),
        value(format!("{:>4} ", fmt_or(m::GPU_UTIL, &fmt::pct)), theme),
        Span::styled(
            spark(state, ui, m::GPU_UTIL, id, cw, Some(1.0)),
            Style::default().fg(theme.chart),
        ),
        label("  SM ", theme),
        value(
            fmt_or(m::GPU_SM_CLOCK, &|v| format!("{:.0} MHz", v / 1e6)),
            theme,
        ),
        label(" · mem ", theme),
        value(
            fmt_or(m::GPU_MEM_CLOCK, &|v| format!("{:.0} MHz", v / 1e6)),
            theme,
        ),
        label(" · ", theme),
        value(fmt_or(m::GPU_POWER, &|v| format!("{v:.0} W")), theme),
        label(" · ", theme),
        value(fmt_or(m::GPU_TEMP, &|v| format!("{v:.0} °C")), theme),
    ]));
    lines
}

fn host_card<'a>(state: &State, ui: &Ui, theme: &Theme, cw: usize) -> Vec<Line<'a>> {
    let fmt_or = |metric: &str, f: &dyn Fn(f64) -> String| {
        latest(state, metric, None).map_or(NA.to_string(), f)
    };
    let source = state
        .samples
        .with_prefix(m::HOST_DDR_SOURCE_PREFIX, None)
        .find(|(_, s)| s.latest() == Some(1.0))
        .map(|(name, _)| format!(" ({name})"))
        .unwrap_or_default();
    let mut lines = vec![Line::from(vec![
        label("DDR    ", theme),
        value(format!("{:>10} ", fmt_or(m::HOST_DDR, &fmt::rate)), theme),
        Span::styled(
            spark(state, ui, m::HOST_DDR, None, cw, None),
            Style::default().fg(theme.chart),
        ),
        label("  pressure ", theme),
        value(fmt_or(m::HOST_DDR_PRESSURE, &fmt::pct), theme),
        label(source, theme),
        label("  engine ", theme),
        value(fmt_or(m::HOST_ENGINE_BYTES, &fmt::rate), theme),
    ])];
    // CPU pools: the samplers' busy fractions where they report, else the pools' own spans.
    let (t0, t1) = ui.window(state.now);
    let t1 = t1.min(state.now);
    let mut pools: Vec<String> = state
        .samples
        .with_prefix(m::CPU_POOL_PREFIX, None)
        .filter_map(|(p, s)| s.latest().map(|v| format!("{p} {}", fmt::pct(v))))
        .collect();
    let sampled = !pools.is_empty();
    if !sampled && t1 > t0 {
        pools = state
            .timelines
            .pools
            .iter()
            .map(|(n, l)| format!("{n} ×{:.1}", l.covered(t0, t1) as f64 / (t1 - t0) as f64))
            .collect();
    }
    lines.push(Line::from(vec![
        label("CPU    ", theme),
        value(
            if pools.is_empty() {
                NA.to_string()
            } else {
                pools.join(" · ")
            },
            theme,
        ),
        label(
            if sampled {
                ""
            } else {
                "  (partitions at once, from spans)"
            },
            theme,
        ),
    ]));
    let mut ram = vec![label("RAM    ", theme)];
    match (
        latest(state, m::HOST_RAM_USED, None),
        latest(state, m::HOST_RAM_TOTAL, None),
    ) {
        (Some(u), Some(t)) => {
            ram.push(value(
                format!("{} / {} ", fmt::bytes(u), fmt::bytes(t)),
                theme,
            ));
            ram.extend(gauge_spans(u / t.max(1.0), cw, theme));
        }
        _ => ram.push(value(NA, theme)),
    }
    ram.push(label("  RSS ", theme));
    ram.push(value(fmt_or(m::PROCESS_RSS, &fmt::bytes), theme));
    lines.push(Line::from(ram));
    let (p, s, q) = state.pipeline.depths();
    let depth =
        |metric: &str, derived: usize| latest(state, metric, None).map_or(derived as f64, |v| v);
    lines.push(Line::from(vec![
        label("queue  ", theme),
        value(
            format!(
                "pending {:.0} · synthesizing {:.0} · queued {:.0} · proving {:.0} ",
                depth(m::PIPELINE_PENDING, p),
                depth(m::PIPELINE_SYNTHESIZING, 0),
                depth(m::PIPELINE_QUEUED, s),
                depth(m::PIPELINE_PROVING, q),
            ),
            theme,
        ),
        Span::styled(
            spark(state, ui, m::PIPELINE_QUEUED, None, cw.min(20), None),
            Style::default().fg(theme.chart),
        ),
    ]));
    lines
}
