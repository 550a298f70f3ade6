//! Strings from a file on their way to a terminal: control characters (an escape sequence in
//! a crafted recording would otherwise move the cursor, retitle the window or worse) are
//! written as `\u{1b}` escapes; everything else passes unchanged.

use std::borrow::Cow;

use crate::record::Record;
use crate::{Event, Lane, SessionInfo};

/// `s` with every control character (C0, DEL and C1) escaped.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Escapes `s` in place (for strings kept in a state a terminal draws).
pub fn make_printable(s: &mut String) {
    if let Cow::Owned(o) = printable(s) {
        *s = o;
    }
}

/// Cuts `s` to at most `max` bytes (at a char boundary), marking the cut with `…`.
pub fn clip(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
}

/// Every string of a record from a file, escaped in place (the dashboard draws them).
pub fn record_printable(r: &mut Record) {
    let Record::Event(e) = r else { return };
    let opt = |s: &mut Option<String>| {
        if let Some(s) = s {
            make_printable(s)
        }
    };
    match e {
        Event::Span(s) => match &mut s.lane {
            Lane::Compute { device }
            | Lane::H2d { device }
            | Lane::D2h { device }
            | Lane::Worker { device, .. } => make_printable(device),
            Lane::Pool { name } => make_printable(name),
        },
        Event::Sample(s) => {
            make_printable(&mut s.metric);
            opt(&mut s.device);
        }
        Event::Config(c) => {
            for s in [&mut c.key, &mut c.from, &mut c.to, &mut c.by] {
                make_printable(s);
            }
            opt(&mut c.error);
        }
        Event::Job(j) => {
            opt(&mut j.detail);
            opt(&mut j.kind);
        }
        Event::Proof(p) => {
            make_printable(&mut p.device);
            opt(&mut p.error);
        }
        Event::Log(l) => {
            make_printable(&mut l.level);
            make_printable(&mut l.message);
        }
        Event::Mark(m) => make_printable(&mut m.label),
    }
}

/// A recording header's session, escaped in place.
pub fn session_printable(s: &mut SessionInfo) {
    let m = &mut s.machine;
    for x in [&mut m.hostname, &mut m.os, &mut m.cpu, &mut s.workload] {
        make_printable(x);
    }
    for d in &mut s.devices {
        for x in [&mut d.id, &mut d.name, &mut d.kind] {
            make_printable(x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert!(matches!(printable("gpu0 · ünïcode"), Cow::Borrowed(_)));
        assert_eq!(
            printable("a\x1b[2Jb\n\u{9b}c\x7f"),
            "a\\u{1b}[2Jb\\u{a}\\u{9b}c\\u{7f}"
        );
        let mut long = "é".repeat(10);
        clip(&mut long, 5);
        assert_eq!(long, "éé…");
        let mut s = String::from("\x07bell");
        make_printable(&mut s);
        assert_eq!(s, "\\u{7}bell");
        let mut r = Record::Event(Event::Log(crate::LogLine {
            t: 0,
            level: "WARN\x1b]0;owned\x07".into(),
            message: "\x1b[31mred".into(),
        }));
        record_printable(&mut r);
        let Record::Event(Event::Log(l)) = r else {
            unreachable!()
        };
        assert!(
            !l.level.contains('\x1b') && !l.message.contains('\x1b'),
            "{l:?}"
        );
    }
}
