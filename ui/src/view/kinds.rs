//! The per-kind block of the pipeline view: for each kind of job (`porep`, `winning-post`, …)
//! its jobs, median latency, largest stage medians and what the devices waited for before its
//! partitions, so an operator mixing proofs sees what each kind costs and suffers.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use provetop_telemetry::report::kinds_tell;

use super::fmt;
use super::widgets::{label, value};
use crate::state::State;
use crate::theme::{stage_of, Theme};

/// Stage medians and gap causes offered per kind, the largest first: as many as fit are shown.
const STAGES_SHOWN: usize = 3;
const CAUSES_SHOWN: usize = 2;

/// The block's lines for a block `inner` cells wide, three for each kind, each line as much
/// as fits (no wrapping: a cut figure reads wrong); none when the session's kinds tell nothing
/// the rest of the view does not (one kind, the default one).
pub fn groups<'a>(state: &State, theme: &Theme, inner: usize) -> Vec<[Line<'a>; 3]> {
    if !kinds_tell(&state.kinds) {
        return vec![];
    }
    let waited = if inner >= 56 {
        "waited before: "
    } else {
        "waited: "
    };
    let named = |name: String, colour, secs: f64| {
        vec![
            Span::styled(format!("{name} "), Style::default().fg(colour)),
            value(fmt::secs(secs), theme),
        ]
    };
    let mut groups = vec![];
    for (kind, k) in &state.kinds {
        let latency = k
            .latency
            .as_ref()
            .map_or("—".to_string(), |l| fmt::secs(l.median));
        let head = fitted(
            Span::styled(
                format!(" {}", fmt::fit(kind, inner.saturating_sub(2))),
                theme.title(),
            ),
            vec![
                vec![label("latency ", theme), value(latency, theme)],
                vec![label(format!("{} jobs", k.jobs), theme)],
            ],
            (" · ", " · "),
            inner,
        );
        let stages = k
            .main_stages(STAGES_SHOWN)
            .into_iter()
            .map(|(key, secs)| {
                let colour = stage_of(key).map_or(theme.fg, |s| theme.stage(s));
                named(key.to_string(), colour, secs)
            })
            .collect();
        let mut causes: Vec<Vec<Span>> = k
            .main_gaps(CAUSES_SHOWN)
            .into_iter()
            .map(|(cause, secs)| named(cause.to_string(), theme.gap, secs))
            .collect();
        if causes.is_empty() {
            causes.push(vec![label("nothing", theme)]);
        }
        groups.push([
            head,
            fitted(label("   ", theme), stages, ("", "  "), inner),
            fitted(
                label(format!("   {waited}"), theme),
                causes,
                ("", ", "),
                inner,
            ),
        ]);
    }
    groups
}

/// `first`, then as many of `items` (in order) as fit in `width` cells: the first after
/// `lead`, the others after `sep`.
fn fitted<'a>(
    first: Span<'a>,
    items: Vec<Vec<Span<'a>>>,
    (lead, sep): (&str, &str),
    width: usize,
) -> Line<'a> {
    let mut used = first.width();
    let mut spans = vec![first];
    for (i, item) in items.into_iter().enumerate() {
        let gap = if i > 0 { sep } else { lead };
        let w = gap.chars().count() + item.iter().map(Span::width).sum::<usize>();
        if used + w > width {
            break;
        }
        used += w;
        spans.push(Span::raw(gap.to_string()));
        spans.extend(item);
    }
    Line::from(spans)
}
